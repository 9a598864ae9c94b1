"""How much Python adds to gol: step() against `gol run`'s loop, and numpy in and out against a
plain numpy copy of the same array.

    python bench.py [--gol PATH] [--engine cpu-bitsliced] [--size 4096] [--gens 1024]
                    [--cells-size 16384] [--reps 3]

Prints a Markdown table (best of --reps for each figure).
"""

import argparse
import json
import subprocess
import time

import numpy as np

import gol


def best(reps, work):
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gol", default="gol", help="the gol binary, for `gol run`'s loop time")
    parser.add_argument("--engine", default="cpu-bitsliced")
    parser.add_argument("--size", type=int, default=4096)
    parser.add_argument("--gens", type=int, default=1024)
    parser.add_argument("--cells-size", type=int, default=16384)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()

    n, g = args.size, args.gens
    rows = []

    def python_step():
        sim = gol.Life.soup(n, n, density=0.5, seed=1, engine=args.engine)
        sim.step(16)  # warm: kernels compiled, threads started
        start = time.perf_counter()
        sim.step(g)
        return time.perf_counter() - start

    def cli_loop():
        out = subprocess.run(
            [args.gol, "run", "--size", str(n), "--gens", str(g + 16), "--density", "0.5", "--seed", "1", "--engine", args.engine, "--json"],
            check=True, capture_output=True, text=True,
        ).stdout
        report = json.loads(out)
        return report["seconds"] * g / (g + 16)

    py = min(python_step() for _ in range(args.reps))
    cli = min(cli_loop() for _ in range(args.reps))
    rows.append((f"step({g}) on {n}² {args.engine}", py, f"`gol run` loop, same run: {cli:.4f} s", f"{(py / cli - 1) * 100:+.1f}%"))

    m = args.cells_size
    a = (np.random.default_rng(1).random((m, m), dtype=np.float32) < 0.5).astype(np.uint8)
    copy = best(args.reps, lambda: a.copy())
    sim = gol.Life.from_cells(a, engine="cpu-bitsliced")
    out = best(args.reps, lambda: sim.cells())
    into = best(args.reps, lambda: gol.Life.from_cells(a, engine="cpu-bitsliced"))
    rows.append((f"cells() of {m}²", out, f"numpy copy of the array: {copy:.4f} s", f"{out / copy:.1f}× the copy"))
    rows.append((f"from_cells() of {m}²", into, f"numpy copy of the array: {copy:.4f} s", f"{into / copy:.1f}× the copy"))

    print("| what | seconds | against | difference |")
    print("| --- | ---: | --- | --- |")
    for what, seconds, against, diff in rows:
        print(f"| {what} | {seconds:.4f} | {against} | {diff} |")


if __name__ == "__main__":
    main()
