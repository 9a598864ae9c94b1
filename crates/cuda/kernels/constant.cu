// cuda-constant: Kurnosov's seminar's states[2][9] (docs/lineage.md) rule table in constant memory, filled by the host at
// run time through the module's global; pasted before global.cu, whose update kernel reads it.

__constant__ unsigned char states[2][9];

#define NEXT_STATE(state, n) (states[(state)][(n)])
