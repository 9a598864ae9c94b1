#!/usr/bin/env python3
"""Exact search for the smallest LOP3 circuit of a rule, for `EXACT` in src/circuit.rs.

Usage: pip install python-sat; python3 exact_circuit.py B3/S23 [MAX_GATES] [--k0] [--depth=D]
       [--enumerate=N]

The function searched for is the kernel's `rule_next`: the next state from the three rows'
sum planes and the centre. Its signals are `SIGNALS` in src/circuit.rs, in that order: t0 (the
sum of the three low planes, which every circuit may read), x (the centre), k0 (their carry,
read only with --k0, since it costs an operation more), and a0, a1, b0, b1 (middle row), c0,
c1. Entries where the centre contradicts the middle row's sum (a live centre in a row of sum 0,
a dead one in a row of sum 3) are don't-cares. Gates take three earlier signals and any function
of them; gate n is signal 9 + n, the last gate is the result. For n = 1, 2, ... gates, a SAT
solver decides whether such a circuit exists (one-hot choice of each gate's inputs, its 8-entry
table, and its value on each of the 128 entries; every gate but the last is 0 where all inputs
are, which loses nothing since its readers can take its complement) and prints the first found,
as (inputs, table) with the table in PTX's order (first input weighing 4). With --depth=D, only
circuits at most D operations deep from the planes (t0 and k0 one deep) are allowed. With
--enumerate=N, up to N circuits of the smallest size are printed, each differing from those
before in some gate's inputs (ptxas schedules circuits of equal size differently, so they are
worth measuring).

Life: 5 gates, reading t0 and not k0; no circuit of 4 exists, with k0 or without (each answer
took a CPU minute or two). `EXACT` gives the kernels of up to 8 generations the first circuit
an earlier form of this search found. The deepest kernel takes the first this one prints (a
few minutes; python-sat 1.9.dev24), with its first two gates swapped: on an H100 it ran 3-5%
faster than the others measured (BENCHMARKS.md, "Circuits of equal size, measured").
"""
import itertools
import sys

from pysat.solvers import Cadical153

SIGNALS = ["t0", "x", "k0", "a0", "a1", "b0", "b1", "c0", "c1"]


def rule_sets(text):
    birth, survive = text.upper().split("/")
    return {int(c) for c in birth.lstrip("B")}, {int(c) for c in survive.lstrip("S")}


def entries(text):
    """(signal values, next state) for each entry that cells produce."""
    birth, survive = rule_sets(text)
    found = []
    for e in range(128):
        a0, a1, b0, b1, c0, c1, x = [e >> i & 1 for i in range(7)]
        middle = b0 + 2 * b1
        if (x and middle == 0) or (not x and middle == 3):
            continue
        n = a0 + 2 * a1 + middle + c0 + 2 * c1 - x
        t0, k0 = a0 ^ b0 ^ c0, int(a0 + b0 + c0 >= 2)
        found.append(([t0, x, k0, a0, a1, b0, b1, c0, c1], int(n in (survive if x else birth))))
    return found


def search(found, gates, readable, depth):
    count = [0]

    def var():
        count[0] += 1
        return count[0]

    # values[s][e]: a constant for the signals, a variable for the gates.
    values = [[bool(signals[s]) for signals, _ in found] for s in range(len(SIGNALS))]
    clauses, choices, luts = [], [], []
    for g in range(gates):
        lut = [var() for _ in range(8)]
        value = [var() for _ in found]
        sources = readable + list(range(len(SIGNALS), len(SIGNALS) + g))
        choice = {t: var() for t in itertools.combinations(sources, 3)}
        clauses.append(list(choice.values()))
        clauses += [[-a, -b] for a, b in itertools.combinations(choice.values(), 2)]
        for inputs, chosen in choice.items():
            for e in range(len(found)):
                for m in range(8):
                    want = [m >> 2 & 1, m >> 1 & 1, m & 1]
                    clause, possible = [-chosen], True
                    for s, bit in zip(inputs, want):
                        v = values[s][e]
                        if isinstance(v, bool):
                            possible &= v == bool(bit)
                        else:
                            clause.append(-v if bit else v)
                    if possible:
                        clauses += [clause + [-value[e], lut[m]], clause + [value[e], -lut[m]]]
        if g < gates - 1:
            clauses.append([-value[0]])  # entry 0: every signal 0
        values.append(value)
        choices.append(choice)
        luts.append(lut)
    for e, (_, next_state) in enumerate(found):
        clauses.append([values[-1][e]] if next_state else [-values[-1][e]])
    if depth is not None:
        # deep[g][k]: gate g is at most k operations deep.
        deep = [[var() for _ in range(depth + 1)] for _ in range(gates)]
        for g in range(gates):
            clauses.append([-deep[g][0]])
            for inputs, chosen in choices[g].items():
                for k in range(depth + 1):
                    for s in inputs:
                        if s >= len(SIGNALS):
                            below = [deep[s - len(SIGNALS)][k - 1]] if k else []
                            clauses.append([-chosen, -deep[g][k]] + below)
                        elif SIGNALS[s] in ("t0", "k0") and k < 2:
                            clauses.append([-chosen, -deep[g][k]])
        clauses.append([deep[-1][depth]])
    solver = Cadical153(bootstrap_with=clauses)
    while solver.solve():
        model = {v for v in solver.get_model() if v > 0}
        inputs = [next(t for t, c in choices[g].items() if c in model) for g in range(gates)]
        yield [(inputs[g], sum(1 << m for m in range(8) if luts[g][m] in model))
               for g in range(gates)]
        # The next circuit differs in some gate's inputs.
        solver.add_clause([-choices[g][inputs[g]] for g in range(gates)])


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    depth = next((int(a.split("=")[1]) for a in sys.argv if a.startswith("--depth=")), None)
    rule = args[0]
    most = int(args[1]) if len(args) > 1 else 6
    readable = [s for s in range(len(SIGNALS)) if "--k0" in sys.argv or SIGNALS[s] != "k0"]
    assert entries(rule)[0][0] == [0] * len(SIGNALS), "entry 0 has every signal 0"
    circuits = next((int(a.split("=")[1]) for a in sys.argv if a.startswith("--enumerate=")), 1)
    for gates in range(1, most + 1):
        found = itertools.islice(search(entries(rule), gates, readable, depth), circuits)
        first = True
        for circuit in found:
            print(f"{gates} gates:" if first else "or:", flush=True)
            for inputs, lut in circuit:
                print(f"        ({list(inputs)}, 0x{lut:02x}),", flush=True)
            first = False
        if not first:
            return
        print(f"{gates} gates: none", flush=True)


if __name__ == "__main__":
    main()
