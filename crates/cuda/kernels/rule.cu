// The rule compiled in: BIRTH and SURVIVE are bit masks of neighbour counts, defined by the host
// in front of this source. NEXT_STATE(state, n) is a cell's next state (0 or 1).

#define NEXT_STATE(state, n) ((((state) ? SURVIVE : BIRTH) >> (n)) & 1u)

// NEXT_STATE_OF_TOTAL(state, total), 2D only (counts 0..8): the same from the cell's 3x3 total,
// itself included (total = n + state): bit total + 8 * state of BIRTH | SURVIVE << 9, which is
// bit n of BIRTH for a dead cell and bit n + 9 for a live one.
#define NEXT_STATE_OF_TOTAL(state, total) (((BIRTH | SURVIVE << 9) >> ((total) + 8 * (state))) & 1u)
