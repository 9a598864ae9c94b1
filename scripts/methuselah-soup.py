#!/usr/bin/env python3
"""Writes a methuselah embedded in a random soup as an RLE on the plane (no grid suffix), for
the tiles' benchmarks against QuickLife (docs/benchmarks/plane.md).

    python3 scripts/methuselah-soup.py --pattern acorn --size 1024 --density 0.3 --hole 32 \
        --seed 1 > acorn-soup.rle

The soup is SIZE x SIZE cells, each alive with probability DENSITY (Python's random.Random(SEED)
row by row), with an empty HOLE x HOLE square at its centre and the pattern at the square's
centre.
"""

import argparse
import random

PATTERNS = {
    "acorn": [".o.....", "...o...", "oo..ooo"],
    "r-pentomino": [".oo", "oo.", ".o."],
}


def rle(rows, width):
    """The rows' cells as RLE tokens (runs, row ends), in lines of at most 70 characters."""
    tokens = []
    for y, row in enumerate(rows):
        runs, x = [], 0
        while x < width:
            n = 1
            while x + n < width and row[x + n] == row[x]:
                n += 1
            runs.append((n, "o" if row[x] else "b"))
            x += n
        if runs and runs[-1][1] == "b":
            runs.pop()
        tokens += [(str(n) if n > 1 else "") + c for n, c in runs]
        tokens.append("$" if y + 1 < len(rows) else "!")
    lines, line = [], ""
    for t in tokens:
        if len(line) + len(t) > 70:
            lines.append(line)
            line = ""
        line += t
    lines.append(line)
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pattern", choices=sorted(PATTERNS), required=True)
    p.add_argument("--size", type=int, default=1024)
    p.add_argument("--density", type=float, default=0.3)
    p.add_argument("--hole", type=int, default=32)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    rng = random.Random(a.seed)
    n = a.size
    rows = [[rng.random() < a.density for _ in range(n)] for _ in range(n)]
    h0 = (n - a.hole) // 2
    for y in range(h0, h0 + a.hole):
        for x in range(h0, h0 + a.hole):
            rows[y][x] = False
    pat = PATTERNS[a.pattern]
    py, px = n // 2 - len(pat) // 2, n // 2 - len(pat[0]) // 2
    for dy, line in enumerate(pat):
        for dx, c in enumerate(line):
            rows[py + dy][px + dx] = c == "o"
    print(f"x = {n}, y = {n}, rule = B3/S23")
    print(rle(rows, n))


if __name__ == "__main__":
    main()
