#!/usr/bin/env python3
"""Packs the minimised fuzz corpora of the rule parser and the pattern readers into
fuzz/regression/<target>.gz, which crates/core/tests/fuzz_corpus.rs replays in CI.

Run from the project root after `cargo fuzz cmin -O <target>`: each input becomes a
little-endian u32 length and its bytes, the whole gzip-compressed (no time stamp, so that
the same corpus packs to the same bytes)."""

import gzip
import io
import os
import struct

for target in ["rule", "rle", "life", "macrocell"]:
    folder = os.path.join("fuzz", "corpus", target)
    packed = io.BytesIO()
    for name in sorted(os.listdir(folder)):
        with open(os.path.join(folder, name), "rb") as f:
            data = f.read()
        packed.write(struct.pack("<I", len(data)))
        packed.write(data)
    with open(os.path.join("fuzz", "regression", target + ".gz"), "wb") as raw:
        with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9, mtime=0) as out:
            out.write(packed.getvalue())
