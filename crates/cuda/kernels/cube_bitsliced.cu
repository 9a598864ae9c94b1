// cuda-bitsliced in 3D: 32 cells per 32-bit word, bit-sliced 27-cell sums.
//
// Layout: the host cube's own words. Line (x, y) (every z) starts at 32-bit word
// (x*M + y) * stride; cell z is bit z % 32 of the line's word z / 32; nw = ceil(M/32) words hold
// cells and the bits past z = M-1 are zero. A slab of a cube has `planes` planes of constant x
// instead of M, and x wraps at `planes`.
//
// A warp covers 32 consecutive words of a line, or for lines of fewer words, segments of the
// smallest power of two of lanes >= the line's words, one line each (lanes past the line's end
// hold its first words again, wrapping around): a shuffle within the segment and a shift give
// every cell's z neighbours, and a segment's first and last lanes load their outer neighbour
// word themselves. Each thread owns ROWS consecutive lines
// y0..y0+ROWS-1 and streams along x through `depth` planes: per plane it loads ROWS + 2 lines
// (one plane ahead of the one it computes, so that the loads overlap the arithmetic), forms
// their z 3-sums (two bit planes), adds three of them into each owned line's plane sum (the
// 3x3 sum in y and z, four bit planes), keeps the last two planes' sums, and adds three plane
// sums into the 27-cell sum (five bit planes), from which the rule, a multiplexer tree whose
// constant leaves the compiler folds, gives the next state.

#define ROWS 4


__device__ __forceinline__ void full_add(unsigned a, unsigned b, unsigned c, unsigned &sum, unsigned &carry)
{
    unsigned t = a ^ b;
    sum = t ^ c;
    carry = (a & b) | (t & c);
}

// Leaf c of the rule's tree: the birth bit for a dead cell with sum c, the survival bit for c-1
// for a live one (its sum counts itself). Sums above 27 cannot occur.
__device__ __forceinline__ unsigned leaf(int c, unsigned alive)
{
    bool born = c <= 26 && ((BIRTH >> c) & 1u);
    bool stays = c >= 1 && c <= 27 && ((SURVIVE >> (c - 1)) & 1u);
    return born ? (stays ? 0xffffffffu : ~alive) : (stays ? alive : 0u);
}

__device__ __forceinline__ unsigned mux(unsigned select, unsigned one, unsigned zero)
{
    return (select & one) | (~select & zero);
}

// The tree, one level per sum plane, each loop of a constant length so that it unrolls and the
// leaves stay in registers.
__device__ __forceinline__ unsigned next_state(const unsigned t[5], unsigned alive)
{
    unsigned v[32];
#pragma unroll
    for (int c = 0; c < 32; ++c)
        v[c] = leaf(c, alive);
#pragma unroll
    for (int i = 0; i < 16; ++i)
        v[i] = mux(t[0], v[2 * i + 1], v[2 * i]);
#pragma unroll
    for (int i = 0; i < 8; ++i)
        v[i] = mux(t[1], v[2 * i + 1], v[2 * i]);
#pragma unroll
    for (int i = 0; i < 4; ++i)
        v[i] = mux(t[2], v[2 * i + 1], v[2 * i]);
#pragma unroll
    for (int i = 0; i < 2; ++i)
        v[i] = mux(t[3], v[2 * i + 1], v[2 * i]);
    return mux(t[4], v[1], v[0]);
}

// The words of one plane a thread needs: its ROWS + 2 lines' word at gw, and for lanes 0 and 31
// the neighbour word outside the warp (left for lane 0, right for lane 31).
struct Raw {
    unsigned c[ROWS + 2];
    unsigned edge[ROWS + 2];
};

// Issues the loads of one plane (`plane` points at its first word). Lane j of a segment of
// `seg` lanes loads its outer neighbour word when it is the segment's first or last (a segment of
// one lane needs none: its line is one word, its own neighbour).
__device__ __forceinline__ void fetch(Raw &raw, const unsigned *plane, const long long line[ROWS + 2], int j,
                                      int seg, int gw, int gw_left, int gw_right)
{
    int outer = j == 0 ? gw_left : gw_right;
    bool edge = seg > 1 && (j == 0 || j == seg - 1);
#pragma unroll
    for (int i = 0; i < ROWS + 2; ++i) {
        const unsigned *words = plane + line[i];
        raw.c[i] = words[gw];
        raw.edge[i] = edge ? words[outer] : 0u;
    }
}

// The plane sums of the owned lines of a fetched plane into `out`, their words into `state`.
__device__ __forceinline__ void plane_sums(const Raw &raw, int j, int seg, int gw, int nw, int r,
                                           unsigned below_r, unsigned out[ROWS][4], unsigned state[ROWS])
{
    const unsigned all = 0xffffffffu;
    unsigned s0[ROWS + 2], s1[ROWS + 2];
#pragma unroll
    for (int i = 0; i < ROWS + 2; ++i) {
        unsigned c = raw.c[i];
        unsigned lw = __shfl_up_sync(all, c, 1, seg);
        unsigned rw = __shfl_down_sync(all, c, 1, seg);
        if (seg == 1)
            lw = rw = c;
        else if (j == 0)
            lw = raw.edge[i];
        else if (j == seg - 1)
            rw = raw.edge[i];
        // The word left of word 0 is the line's last word, whose last cell is bit r.
        unsigned west = (c << 1) | (gw == 0 ? (lw >> r) & 1u : lw >> 31);
        unsigned east = gw == nw - 1 ? ((c >> 1) & below_r) | ((rw & 1u) << r) : __funnelshift_r(c, rw, 1);
        full_add(west, c, east, s0[i], s1[i]);
        if (i >= 1 && i <= ROWS)
            state[i - 1] = c;
    }
#pragma unroll
    for (int i = 0; i < ROWS; ++i) {
        unsigned k2, twos, fours;
        full_add(s0[i], s0[i + 1], s0[i + 2], out[i][0], k2);
        full_add(s1[i], s1[i + 1], s1[i + 2], twos, fours);
        out[i][1] = twos ^ k2;
        unsigned k4 = twos & k2;
        out[i][2] = fours ^ k4;
        out[i][3] = fours & k4;
    }
}

extern "C" __global__ void cube_bitsliced(const unsigned *cells, unsigned *next, int m, int planes,
                                          int stride, int depth)
{
    start_next_grid(); // see dependent.cu
    const unsigned all = 0xffffffffu;
    int nw = (m + 31) / 32;
    // Lines of fewer than 32 words: the warp splits into segments of seg lanes (the smallest
    // power of two >= nw), each on its own run of ROWS lines, so that few lanes idle.
    int seg = 32;
    while (seg > 1 && seg / 2 >= nw)
        seg /= 2;
    int lane = threadIdx.x, j = lane & (seg - 1);
    int w = blockIdx.x * 32 + j;
    int y0 = ((blockIdx.y * blockDim.y + threadIdx.y) * (32 / seg) + lane / seg) * ROWS;
    int x0 = blockIdx.z * depth;
    // A warp shares x0; lanes past the last line compute on line 0 without writing, so that the
    // shuffles stay full, unless the whole warp is past it.
    bool active = y0 < m;
    if (x0 >= planes || !__any_sync(all, active))
        return;
    if (!active)
        y0 = 0;
    int x1 = min(x0 + depth, planes);
    int gw = w % nw;
    int gw_left = gw == 0 ? nw - 1 : gw - 1, gw_right = gw == nw - 1 ? 0 : gw + 1;
    int r = (m - 1) & 31; // the bit of the line's last cell in its last word
    unsigned below_r = r == 0 ? 0u : 0xffffffffu >> (32 - r);
    unsigned valid = r == 31 ? 0xffffffffu : (1u << (r + 1)) - 1;
    bool writes = active && w < nw;
    long long plane = (long long)m * stride;
    long long line[ROWS + 2];
#pragma unroll
    for (int i = 0; i < ROWS + 2; ++i) {
        int y = y0 + i - 1;
        y = y < 0 ? m - 1 : y % m;
        line[i] = (long long)y * stride;
    }

    unsigned older[ROWS][4], middle[ROWS][4]; // plane sums of planes x-1 and x
    unsigned alive[ROWS], ignored[ROWS];
    Raw raw;
    wait_for_previous_grid(); // the previous generation has ended: its output is our input
    fetch(raw, cells + before(x0, planes) * plane, line, j, seg, gw, gw_left, gw_right);
    plane_sums(raw, j, seg, gw, nw, r, below_r, older, ignored);
    fetch(raw, cells + x0 * plane, line, j, seg, gw, gw_left, gw_right);
    plane_sums(raw, j, seg, gw, nw, r, below_r, middle, alive);
    // Software pipelining: the loads of plane x+2 are in flight while plane x is computed.
    fetch(raw, cells + after(x0, planes) * plane, line, j, seg, gw, gw_left, gw_right);
    for (int x = x0; x < x1; ++x) {
        unsigned newest[ROWS][4], alive_next[ROWS];
        Raw ahead;
        if (x + 1 < x1)
            fetch(ahead, cells + after(after(x, planes), planes) * plane, line, j, seg, gw, gw_left,
                  gw_right);
        plane_sums(raw, j, seg, gw, nw, r, below_r, newest, alive_next);
        raw = ahead;
#pragma unroll
        for (int i = 0; i < ROWS; ++i) {
            const unsigned *a = older[i], *b = middle[i], *c = newest[i];
            unsigned t[5], k1, k2, k2b, k3, k3b, k4, k4b, u1, u2, u3;
            full_add(a[0], b[0], c[0], t[0], k1);
            full_add(a[1], b[1], c[1], u1, k2);
            t[1] = u1 ^ k1;
            k2b = u1 & k1;
            full_add(a[2], b[2], c[2], u2, k3);
            full_add(u2, k2, k2b, t[2], k3b);
            full_add(a[3], b[3], c[3], u3, k4);
            full_add(u3, k3, k3b, t[3], k4b);
            t[4] = k4 | k4b; // the sum is at most 27: never both
            unsigned out = next_state(t, alive[i]);
            if (gw == nw - 1)
                out &= valid;
            if (writes && y0 + i < m)
                next[x * plane + line[i + 1] + gw] = out;
        }
#pragma unroll
        for (int i = 0; i < ROWS; ++i) {
#pragma unroll
            for (int b = 0; b < 4; ++b) {
                older[i][b] = middle[i][b];
                middle[i][b] = newest[i][b];
            }
            alive[i] = alive_next[i];
        }
    }
}

// Live cells of the whole cube (padding bits are zero), added into *total.
extern "C" __global__ void cube_population(const unsigned *cells, long long words, unsigned long long *total)
{
    unsigned long long count = 0;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < words;
         i += (long long)gridDim.x * blockDim.x)
        count += __popc(cells[i]);
#pragma unroll
    for (int d = 16; d >= 1; d >>= 1)
        count += __shfl_down_sync(0xffffffffu, count, d);
    if ((threadIdx.x & 31) == 0 && count != 0)
        atomicAdd(total, count);
}
