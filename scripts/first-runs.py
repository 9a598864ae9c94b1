#!/usr/bin/env python3
"""Times whole first runs of rules that the kernel cache has never seen, on cuda-bitsliced.

Makes --rules random rules from --seed, in the families cuda-bitsliced runs: outer-totalistic
(B/S), isotropic non-totalistic, hexagonal and von Neumann 2D rules, Generations rules of 3 to
--max-states states, and 3D B/S rules. Each is run once as a whole process,

    gol run --engine cuda-bitsliced --size 1024 --rule R --gens 1024 --seed 1 --json
    (3D: --dim 3 --size 256)

with an empty kernel cache of its own (GOL_CACHE_DIR), and its wall time (a monotonic clock
around the process) is set against the median of --baseline runs of the default rule of its
dimension (B3/S23, B6/S567), whose kernel is built into gol. --own N also times the first N
rules of each family with GOL_RULE_KERNEL=own: what a run cost before the generic kernels,
waiting for NVRTC. Prints one line per run and a summary; --json writes every run.

Used for the first-run figures in BENCHMARKS.md (the exact command is there).
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

LETTERS = ["", "ce", "cekain", "cekainyqjr", "cekainyqjrtwz", "cekainyqjr", "cekain", "ce", ""]


def counts(rng, low, high):
    return [n for n in range(low, high + 1) if rng.random() < 0.4]


def outer(rng, low, size, suffix=""):
    birth = "".join(str(n) for n in counts(rng, low, size))
    survive = "".join(str(n) for n in counts(rng, 0, size))
    return f"B{birth}/S{survive}{suffix}"


def isotropic_side(rng, low):
    text = ""
    for n in range(low, 9):
        if rng.random() >= 0.4:
            continue
        letters = [c for c in LETTERS[n] if rng.random() < 0.5]
        if not LETTERS[n] or len(letters) == len(LETTERS[n]):
            text += str(n)
        elif letters:
            text += str(n) + "".join(letters)
    return text


def rules(count, seed, max_states):
    rng = random.Random(seed)
    families = ["outer", "isotropic", "hexagonal", "von-neumann", "generations", "3d"]
    made = []
    for i in range(count):
        family = families[i % len(families)]
        if family == "outer":
            rule = outer(rng, 1, 8)
        elif family == "isotropic":
            rule = f"B{isotropic_side(rng, 1)}/S{isotropic_side(rng, 0)}"
        elif family == "hexagonal":
            rule = outer(rng, 1, 6, "H")
        elif family == "von-neumann":
            rule = outer(rng, 1, 4, "V")
        elif family == "generations":
            rule = outer(rng, 1, 8, f"/C{rng.randint(3, max_states)}")
        else:
            birth = ",".join(str(n) for n in counts(rng, 1, 26)) or "5"
            survive = ",".join(str(n) for n in counts(rng, 0, 26))
            rule = f"B{birth}/S{survive}"
        made.append((family, rule))
    return made


def run(gol, rule, dims, env_extra):
    size = "256" if dims == 3 else "1024"
    command = [gol, "run", "--engine", "cuda-bitsliced", "--size", size, "--rule", rule,
               "--gens", "1024", "--seed", "1", "--json"]
    if dims == 3:
        command[2:2] = ["--dim", "3"]
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, GOL_CACHE_DIR=cache, **env_extra)
        start = time.monotonic()
        done = subprocess.run(command, env=env, capture_output=True, text=True)
        seconds = time.monotonic() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)}: {done.stderr.strip()}")
    report = json.loads(done.stdout)
    return seconds, report


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gol", default="gol")
    parser.add_argument("--rules", type=int, default=100)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--max-states", type=int, default=17)
    parser.add_argument("--baseline", type=int, default=5)
    parser.add_argument("--own", type=int, default=0)
    parser.add_argument("--json")
    args = parser.parse_args()

    records = []
    base = {}
    for dims, rule in [(2, "B3/S23"), (3, "B6/S567")]:
        times = [run(args.gol, rule, dims, {})[0] for _ in range(args.baseline)]
        base[dims] = statistics.median(times)
        print(f"baseline {rule}: median {base[dims]:.3f} s of {times}")
        records.append({"rule": rule, "baseline": True, "seconds": times})
    extra = []
    own_seen = {}
    for family, rule in rules(args.rules, args.seed, args.max_states):
        dims = 3 if family == "3d" else 2
        seconds, report = run(args.gol, rule, dims, {})
        more = seconds - base[dims]
        extra.append(more)
        record = {"family": family, "rule": rule, "seconds": seconds, "extra": more,
                  "alive": report.get("alive")}
        line = f"{family:12} {rule:40} {seconds:.3f} s (+{more:.3f})"
        if own_seen.get(family, 0) < args.own:
            own_seen[family] = own_seen.get(family, 0) + 1
            own, own_report = run(args.gol, rule, dims, {"GOL_RULE_KERNEL": "own"})
            if own_report.get("alive") != report.get("alive"):
                sys.exit(f"{rule}: {report.get('alive')} live cells, own kernel {own_report.get('alive')}")
            record["own_seconds"] = own
            line += f"   own kernel: {own:.3f} s (+{own - base[dims]:.3f})"
        print(line, flush=True)
        records.append(record)
    extra.sort()
    print(f"{len(extra)} rules: extra time median {statistics.median(extra):.3f} s, "
          f"max {extra[-1]:.3f} s, over 0.3 s: {sum(e > 0.3 for e in extra)}, "
          f"over 0.6 s: {sum(e > 0.6 for e in extra)}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(records, f, indent=1)


if __name__ == "__main__":
    main()
