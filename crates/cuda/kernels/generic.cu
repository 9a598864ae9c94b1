// The rule of cuda-bitsliced's generic kernels, read at run time: one compiled kernel runs every
// two-state 2D rule (outer-totalistic, isotropic, hexagonal, von Neumann) and a Generations
// rule's live cells, so that a rule never seen before runs at once while its own kernel compiles
// (src/generic.rs). Pasted after the LOP3 preamble (src/circuit.rs) in place of a rule's circuit.
//
// Any rule: rule_leaves[i] is all ones where a cell whose neighbourhood is i lives on,
// else 0: bit 3r + c of i is the cell in row r, column c of the 3x3 neighbourhood, the centre bit
// 4 (gol_core's `Rule::next_cells`). rule_next splits i into its five high bits (cells 4 to 8)
// and its four low ones (cells 0 to 3): for each of the 32 values h of the high bits, in a loop
// that is not unrolled, it matches the five cells against h (a minterm of 7 operations) and
// evaluates the entries 16h .. 16h + 15 over the four low cells as a tree of 15 multiplexers, one
// LOP3 each, whose leaves are read from constant memory (the same address in every thread). 23
// operations for each h, about 740 a word: 3.4e11 cell updates/s on an H200 at 16384², 55 times
// slower than the rule's own circuit (docs/benchmarks/gpu-2d.md), but a kernel NVRTC builds in
// seconds (a fully unrolled tree of 511 multiplexers at every level took it minutes and
// gigabytes).
__constant__ unsigned int rule_leaves[512];

// Where the rule's next state is a function of the 3x3 sum and the centre alone (rule_by_sums
// not 0: outer-totalistic Moore rules, Generations rules over them), rule_sums[e] is the same
// for the entries e of the sums the kernel hands rule_next (src/circuit.rs): bit 0 t0, bit 1
// u0, bit 2 k0, bit 3 u1 (u0 and u1 the sum and carry of the rows' high planes), bit 4 the
// centre. A tree of 31 multiplexers then takes the place of the loop: 4.05e12 cell updates/s
// (B36/S23), 5.6 times slower than its own circuit. The branch is the same in every thread.
__constant__ unsigned int rule_sums[32];
__constant__ unsigned int rule_by_sums;

// A Generations rule's last dying state, as kernels/bitsliced.cu's AGE_LAST (C - 2).
__constant__ unsigned int rule_age_last;

// One level of a multiplexer tree: v[k] = sel ? v[2k + 1] : v[2k] for k < N.
template <int N>
__device__ __forceinline__ void halve(unsigned int sel, unsigned int *v)
{
#pragma unroll
    for (int k = 0; k < N; k++)
        v[k] = lop3<0xac>(sel, v[2 * k], v[2 * k + 1]);
}

template <bool DEEP>
__device__ __forceinline__ unsigned int rule_next(unsigned int t0, unsigned int k0, unsigned int a0,
    unsigned int a1, unsigned int b0, unsigned int b1, unsigned int c0, unsigned int c1,
    unsigned int cell0, unsigned int cell1, unsigned int cell2, unsigned int cell3,
    unsigned int cell4, unsigned int cell5, unsigned int cell6, unsigned int cell7,
    unsigned int cell8)
{
    if (rule_by_sums) {
        unsigned int u0 = lop3<0x96>(a1, b1, c1), u1 = lop3<0xe8>(a1, b1, c1);
        unsigned int v[16];
#pragma unroll
        for (int k = 0; k < 16; k++)
            v[k] = lop3<0xac>(t0, rule_sums[2 * k], rule_sums[2 * k + 1]);
        halve<8>(u0, v);
        halve<4>(k0, v);
        halve<2>(u1, v);
        return lop3<0xac>(cell4, v[0], v[1]);
    }
    unsigned int next = 0u;
#pragma unroll 1
    for (int h = 0; h < 32; h++) {
        // All ones where cell 4 + j is bit j of h, for j = 0 .. 4.
        unsigned int m = lop3<0x80>(cell4 ^ ((h & 1) ? 0u : FULL_MASK),
                                    cell5 ^ ((h & 2) ? 0u : FULL_MASK),
                                    cell6 ^ ((h & 4) ? 0u : FULL_MASK));
        m = lop3<0x80>(m, cell7 ^ ((h & 8) ? 0u : FULL_MASK), cell8 ^ ((h & 16) ? 0u : FULL_MASK));
        const unsigned int *leaf = rule_leaves + 16 * h;
        unsigned int v[8];
#pragma unroll
        for (int k = 0; k < 8; k++)
            v[k] = lop3<0xac>(cell0, leaf[2 * k], leaf[2 * k + 1]); // cell0 ? one : zero
        halve<4>(cell1, v);
        halve<2>(cell2, v);
        next = lop3<0xf8>(next, m, lop3<0xac>(cell3, v[0], v[1])); // next | (m & tree)
    }
    return next;
}
