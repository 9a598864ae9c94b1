#!/usr/bin/env python3
"""Exact search for the smallest LOP3 circuit of a rule, for `EXACT` in src/circuit.rs.

Usage: pip install python-sat; python3 exact_circuit.py B3/S23 [MAX_GATES]

The function searched for is the kernel's `rule_circuit`: the next state from t0 and k0 (sum
and carry of the three rows' low bits), the high bits a1, b1 (middle row) and c1, and the
centre x: signals 0 to 5 in that order (t0, x, k0, a1, b1, c1). Entries that no neighbourhood
produces are don't-cares (see `EXACT`). Gates take three earlier signals and any function of
them; gate n is signal 6 + n, the last gate is the result. For n = 1, 2, ... gates, a SAT
solver decides whether such a circuit exists (one-hot choice of each gate's inputs, its 8-entry
table, and its value on each of the 64 entries) and prints the first found, as (inputs, table)
with the table in PTX's order (first input weighing 4).
"""
import itertools
import sys

from pysat.solvers import Cadical153


def rule_sets(text):
    birth, survive = text.upper().split("/")
    return {int(c) for c in birth.lstrip("B")}, {int(c) for c in survive.lstrip("S")}


def target(text):
    """The next state and whether it matters, for each of the 64 entries."""
    birth, survive = rule_sets(text)
    table, care = [], []
    for e in range(64):
        t0, x, k0, a1, b1, c1 = [e >> i & 1 for i in range(6)]
        # With b1 fixed, x decides the middle row's low bit where the sum allows only one.
        if (x and not b1 and not t0 and not k0) or (not x and b1 and t0 and k0):
            table.append(0)
            care.append(False)
            continue
        total = t0 + 2 * (k0 + a1 + b1 + c1)  # 3x3 sum, centre included
        n = total - x
        table.append(int(n in (survive if x else birth)))
        care.append(True)
    return table, care


def search(table, care, gates):
    count = [0]

    def var():
        count[0] += 1
        return count[0]

    clauses, choices, luts, values = [], [], [], []
    for g in range(gates):
        luts.append([var() for _ in range(8)])
        values.append([var() for _ in range(64)])
        choice = {t: var() for t in itertools.combinations(range(6 + g), 3)}
        choices.append(choice)
        clauses.append(list(choice.values()))
        clauses += [[-a, -b] for a, b in itertools.combinations(choice.values(), 2)]
        for inputs, chosen in choice.items():
            for e in range(64):
                for m in range(8):
                    want = [m >> 2 & 1, m >> 1 & 1, m & 1]
                    clause, possible = [-chosen], True
                    for s, bit in zip(inputs, want):
                        if s < 6:
                            possible &= (e >> s & 1) == bit
                        else:
                            v = values[s - 6][e]
                            clause.append(-v if bit else v)
                    if possible:
                        out, lut = values[g][e], luts[g][m]
                        clauses += [clause + [-out, lut], clause + [out, -lut]]
    for e in range(64):
        if care[e]:
            v = values[gates - 1][e]
            clauses.append([v] if table[e] else [-v])
    for g in range(gates - 1):  # every gate feeds a later one
        clauses.append([c for h in range(g + 1, gates) for t, c in choices[h].items() if 6 + g in t])
    solver = Cadical153(bootstrap_with=clauses)
    if not solver.solve():
        return None
    model = {v for v in solver.get_model() if v > 0}
    return [
        (next(t for t, c in choices[g].items() if c in model),
         sum(1 << m for m in range(8) if luts[g][m] in model))
        for g in range(gates)
    ]


def main():
    rule = sys.argv[1]
    most = int(sys.argv[2]) if len(sys.argv) > 2 else 6
    table, care = target(rule)
    for gates in range(1, most + 1):
        found = search(table, care, gates)
        print(f"{gates} gates: {'none' if found is None else ''}", flush=True)
        if found:
            for inputs, lut in found:
                print(f"    Gate {{ inputs: {list(inputs)}, lut: 0x{lut:02x} }},")
            return


if __name__ == "__main__":
    main()
