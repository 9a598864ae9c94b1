//! The fuzz corpora as regression tests: the minimised corpora of the rule parser's and the
//! pattern readers' targets (grown by `cargo fuzz run`, see docs/reliability.md), packed into
//! fuzz/regression/<target>.gz by fuzz/pack_regression.py, each input put through the same
//! checks as in its fuzz target, so that a fixed crash stays fixed without a fuzzer.

use std::io::Read;

#[path = "../../../fuzz/fuzz_targets/common.rs"]
mod common;

use std::path::PathBuf;

use gol_core::Rule;

/// The inputs of one target's packed corpus: each a little-endian u32 length and its bytes,
/// gzip-compressed. The folder is found from the crate (under cargo) or the working directory
/// (the project root, where test binaries run elsewhere); missing, it is skipped with a notice.
fn corpus(target: &str) -> Vec<Vec<u8>> {
    let root = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(|dir| PathBuf::from(dir).join("../.."))
        .unwrap_or_else(|| PathBuf::from("."));
    let path = root.join("fuzz/regression").join(format!("{target}.gz"));
    let Ok(file) = std::fs::File::open(&path) else {
        eprintln!("notice: no corpus at {}; skipping", path.display());
        return Vec::new();
    };
    let mut packed = Vec::new();
    flate2::read::GzDecoder::new(file)
        .read_to_end(&mut packed)
        .unwrap();
    let mut inputs = Vec::new();
    let mut rest = &packed[..];
    while let Some((len, tail)) = rest.split_first_chunk::<4>() {
        let len = u32::from_le_bytes(*len) as usize;
        inputs.push(tail[..len].to_vec());
        rest = &tail[len..];
    }
    assert!(
        inputs.len() > 100,
        "{}: {} inputs",
        path.display(),
        inputs.len()
    );
    inputs
}

#[test]
fn rule_corpus_parses_and_reads_back() {
    for data in corpus("rule") {
        let Ok(text) = std::str::from_utf8(&data) else {
            continue;
        };
        if let Ok(rule) = Rule::parse(text) {
            assert_eq!(Rule::parse(&rule.to_string()).ok(), Some(rule), "{text:?}");
        }
    }
}

#[test]
fn pattern_corpora_parse_and_place_without_panics() {
    for data in corpus("rle") {
        common::exercise("fuzz.rle", &data);
    }
    for data in corpus("life") {
        if let Some(text) = common::life_text(&data) {
            common::exercise("fuzz.lif", &text);
        }
    }
    for data in corpus("macrocell") {
        common::exercise("fuzz.mc", &common::macrocell_text(&data));
    }
}
