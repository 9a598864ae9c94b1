// The rule compiled in: BIRTH and SURVIVE are bit masks of neighbour counts, defined by the host
// in front of this source. NEXT_STATE(state, n) is a cell's next state (0 or 1).

#define NEXT_STATE(state, n) ((((state) ? SURVIVE : BIRTH) >> (n)) & 1u)
