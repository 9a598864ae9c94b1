#!/usr/bin/env python3
"""Times HashLife programs side by side on a list of patterns, as whole processes.

Each line of --set is `FILE K`: run FILE (under --patterns) to generation 2^K. Each --tool is
`NAME=COMMAND`, a command line with {file}, {k}, {gens} (2^K written out) and {threads} in
it. The tools take turns on each pattern (tool A, tool B, ... then the next pattern), so that
a drift of the machine's speed touches them alike. Prints one line per run, and with --json
writes every run: wall seconds (a monotonic clock around the process), peak resident memory
(the kernel's accounting of the finished child), exit status and the population the tool
printed (`Total alive cells`, gol's JSON `alive`, or bgolly's last line `GEN: POP`).

Used for the HashLife figures in BENCHMARKS.md (the exact commands are there).
"""
import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import time


def population(output):
    m = re.search(r'"alive":\s*(\d+)', output)
    if m:
        return int(m.group(1))
    lines = [line for line in output.strip().splitlines() if line.strip()]
    if lines:
        m = re.fullmatch(r"\s*[\d,]+:\s*([\d,]+)\s*", lines[-1])
        if m:
            return int(m.group(1).replace(",", ""))
    return None


# Runs the command as the only child of a fresh Python, which then prints the child's peak
# resident memory: the kernel's running maximum over reaped children is per process.
WRAPPER = (
    "import resource, subprocess, sys; code = subprocess.call(sys.argv[1:]); "
    "print('@@peak', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024, code)"
)


def run(command, timeout):
    start = time.monotonic()
    child = subprocess.Popen(
        [sys.executable, "-c", WRAPPER, *command],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        output, _ = child.communicate(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, 9)
        output, _ = child.communicate()
        timed_out = True
    wall = time.monotonic() - start
    text = output.decode(errors="replace")
    peak, code = None, child.returncode
    m = re.search(r"@@peak (\d+) (-?\d+)\s*$", text)
    if m:
        peak, code = int(m.group(1)), int(m.group(2))
        text = text[: m.start()]
    return {
        "seconds": round(wall, 3),
        "timed_out": timed_out,
        "exit": code,
        "population": population(text),
        "peak_bytes": peak,
        "tail": text[-300:],
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--patterns", required=True)
    parser.add_argument("--set", required=True)
    parser.add_argument("--tool", action="append", required=True, metavar="NAME=COMMAND")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=120)
    parser.add_argument("--only", help="run only the lines of --set whose file contains this")
    parser.add_argument("--json", help="write every run here")
    args = parser.parse_args()
    tools = [tool.split("=", 1) for tool in args.tool]
    results = []
    with open(args.set) as lines:
        entries = [line.split() for line in lines if line.strip() and not line.startswith("#")]
    for file, k in entries:
        if args.only and args.only not in file:
            continue
        for name, template in tools:
            command = template.format(
                file=os.path.join(args.patterns, file),
                k=k,
                gens=2 ** int(k),
                threads=args.threads,
            )
            result = run(shlex.split(command), args.timeout)
            result.update({"tool": name, "file": file, "k": int(k), "command": command})
            results.append(result)
            peak = result["peak_bytes"]
            print(
                f"{name:>10} {file:<40} 2^{k:<3} {result['seconds']:>8.2f} s "
                f"{(peak or 0) / 2**20:>8.0f} MiB exit {result['exit']}"
                f"{' TIMEOUT' if result['timed_out'] else ''} pop {result['population']}",
                flush=True,
            )
            if args.json:
                with open(args.json, "w") as out:
                    json.dump(results, out, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
