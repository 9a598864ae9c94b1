// cuda-bitsliced: 32 cells per 32-bit word, bit-sliced neighbour counts, several generations per
// launch.
//
// Layout: rows of `stride` words (stride = 2 * ceil(W/64): the host grid's 64-bit words read as
// pairs of 32-bit words, little end first); cell x of a row at bit x % 32 of word x / 32; the
// nw = ceil(W/32) words of a row hold the cells, padding bits and words stay zero.
//
// Work: one warp per (column group, row tile). Lane l of column group j holds word
// 30*j - 1 + l of each row, so lanes 1..30 own 30 words and lanes 0 and 31 are a one-word halo
// (32 cells each side, enough for K <= 32 generations). Words outside the row (the halo left of
// word 0, the cells right of cell W-1) are gathered around the torus when loaded, so no ghost
// cells are stored. The warp streams down its tile: at each step it loads one row and advances
// each of its K levels (generations) by one row, so the tile's rows come out K generations on
// with one read and one write of each word.
//
// Counting: a row's horizontal 3-sum of each cell (left + self + right, 0..3) is two bit planes
// s0, s1 (computed once per row and level and shared by the three rows that use it). Three rows'
// sums make the 3x3 sum (centre included, 0..9) as t0 + 2*(u0 + k0) + 4*u1, where t0, k0 are the
// sum and carry of the three s0 and u0, u1 the sum and carry of the three s1. The rule is a
// function of (t0, u0, k0, u1, centre): `rule_circuit`, which the host pastes in front of this
// source as a small circuit of LOP3s found for the rule (src/circuit.rs).
//
// Skew: level g consumes the rows level g-1 made at earlier steps (row r of level g is made two
// steps after row r of level g-1), so the K updates of a step are independent of each other.

#define GROUP_WORDS 30

__device__ __forceinline__ unsigned int majority(unsigned int a, unsigned int b, unsigned int c)
{
    return (a & b) | (a & c) | (b & c);
}

// The next states of the middle row from the sums of three rows (a above, b middle, c below)
// and the middle row's cells x. rule_circuit is the rule as LOP3s, written by the host.
__device__ __forceinline__ unsigned int evolve(unsigned int a0, unsigned int a1, unsigned int b0,
                                               unsigned int b1, unsigned int c0, unsigned int c1,
                                               unsigned int x)
{
    unsigned int t0 = a0 ^ b0 ^ c0;
    unsigned int k0 = majority(a0, b0, c0);
    unsigned int u0 = a1 ^ b1 ^ c1;
    unsigned int u1 = majority(a1, b1, c1);
    return rule_circuit(t0, u0, k0, u1, x);
}

// Where a lane's word of each row comes from. Inside the row: a plain load of word q. Left of
// word 0 (the halo word -1), the last word of a width that is not a multiple of 32, and the
// halo word right of it: 32 cells from cell `start` on, wrapping round the torus, gathered from
// words q and q+1 shifted by b, with the cells from `valid` on taken from the row's start.
// Further right: nothing (those lanes only feed halo cells that the result never uses). Worked
// out once per thread, so that a row's load costs no division, and packed into two registers:
// q, and in `how` the mode (bits 0-1: 0 plain, 1 gathered, 2 gathered bit by bit for rows under
// 32 cells, 3 zero), b (bits 2-6), valid (bits 7-12), whether word q+1 exists (bit 13) and,
// for mode 2, start (bits 14-18).
struct Source {
    int q;
    unsigned int how;
};

__device__ Source source(long long i, int w, int nw)
{
    if (i >= 0 && 32 * (i + 1) <= w)
        return {(int)i, 0u};
    if (i > nw)
        return {0, 3u};
    long long start = (32 * i) % w;
    if (start < 0)
        start += w;
    int q = (int)(start >> 5);
    unsigned int valid = (unsigned int)min(32LL, w - start);
    unsigned int how = (w < 32 ? 2u : 1u) | (unsigned int)(start & 31) << 2 | valid << 7 |
                       (q + 1 < nw ? 1u : 0u) << 13 | (w < 32 ? (unsigned int)start : 0u) << 14;
    return {q, how};
}

__device__ __forceinline__ unsigned int load(const unsigned int *row, Source src, int w)
{
    unsigned int mode = src.how & 3u;
    if (mode == 0u)
        return row[src.q];
    if (mode == 1u) {
        unsigned int b = (src.how >> 2) & 31u, valid = (src.how >> 7) & 63u;
        unsigned int hi = (src.how >> 13) & 1u ? row[src.q + 1] : 0u;
        unsigned int v = __funnelshift_r(row[src.q], hi, b);
        if (valid < 32u)
            v = (v & ((1u << valid) - 1u)) | (row[0] << valid);
        return v;
    }
    if (mode == 2u) {
        unsigned int cells = row[0], v = 0;
        int x = (int)(src.how >> 14);
        for (int b = 0; b < 32; b++) {
            v |= ((cells >> x) & 1u) << b;
            if (++x == w)
                x = 0;
        }
        return v;
    }
    return 0u;
}

// K generations of rows [tile * tile_h, +tile_h) of column group j, from `in` to `out`, with
// loads D steps ahead of their use. Nothing is read or written before the previous launch has
// ended (see dependent.cu). The next launch may start as each block here exits: triggering it
// at the start instead measured slower for small grids (1024² x 1024: 2.03 -> 2.15 ms), whose
// early blocks then wait on the SMs beside the running ones.
template <int K, int D>
__device__ __forceinline__ void advance(const unsigned int *__restrict__ in,
                                        unsigned int *__restrict__ out, int w, int h, int stride,
                                        int nw, int tile_h, int groups)
{
    int lane = threadIdx.x;
    long long warp = (long long)blockIdx.x * blockDim.y + threadIdx.y;
    long long group = warp % groups;
    long long y0 = (warp / groups) * tile_h;
    if (y0 >= h)
        return;
    int rows = (int)min((long long)tile_h, h - y0);
    long long i = group * GROUP_WORDS - 1 + lane;
    bool writes = lane >= 1 && lane <= GROUP_WORDS && i < nw;
    unsigned int keep = (i == nw - 1 && (w & 31)) ? (1u << (w & 31)) - 1u : FULL_MASK;
    Source src = source(i, w, nw);

    // Window of level g: sums of its last three rows (index 2 newest) and the cells of the
    // middle and newest rows.
    unsigned int s0[K][3], s1[K][3], mid[K], newest[K];
#pragma unroll
    for (int g = 0; g < K; g++) {
        s0[g][0] = s0[g][1] = s0[g][2] = 0u;
        s1[g][0] = s1[g][1] = s1[g][2] = 0u;
        mid[g] = newest[g] = 0u;
    }

    wait_for_previous_grid();
    // Row loaded for step s: y0 - K + s (mod h); row stored at step s: y0 + s - 3K.
    long long r = (y0 - K) % h;
    if (r < 0)
        r += h;
    unsigned int pending[D];
#pragma unroll
    for (int p = 0; p < D; p++) {
        pending[p] = load(in + r * stride, src, w);
        if (++r == h)
            r = 0;
    }
    for (int s = 0; s < rows + 3 * K; s++) {
        // Every level's new row from its window: K independent updates.
        unsigned int made[K + 1];
#pragma unroll
        for (int g = 0; g < K; g++)
            made[g + 1] = evolve(s0[g][0], s1[g][0], s0[g][1], s1[g][1], s0[g][2], s1[g][2], mid[g]);
        made[0] = pending[0];
#pragma unroll
        for (int p = 0; p + 1 < D; p++)
            pending[p] = pending[p + 1];
        pending[D - 1] = load(in + r * stride, src, w);
        if (++r == h)
            r = 0;
        // Each new row enters the window of the level above, with its horizontal sums.
#pragma unroll
        for (int g = 0; g < K; g++) {
            unsigned int c = made[g];
            unsigned int left = __shfl_up_sync(FULL_MASK, c, 1);
            unsigned int right = __shfl_down_sync(FULL_MASK, c, 1);
            unsigned int l = __funnelshift_l(left, c, 1);  // cell x-1 at bit x
            unsigned int rr = __funnelshift_r(c, right, 1); // cell x+1 at bit x
            s0[g][0] = s0[g][1];
            s0[g][1] = s0[g][2];
            s0[g][2] = l ^ c ^ rr;
            s1[g][0] = s1[g][1];
            s1[g][1] = s1[g][2];
            s1[g][2] = majority(l, c, rr);
            mid[g] = newest[g];
            newest[g] = c;
        }
        if (s >= 3 * K && writes)
            out[(y0 + s - 3 * K) * stride + i] = made[K] & keep;
    }
}

// The kernel of depth K, loading D steps ahead, with at least B blocks resident per SM (the
// deepest must fit 168 registers for three blocks). Shallow kernels serve small grids, whose
// short steps cannot hide a load's latency: they load further ahead.
#define ADVANCE(K, D, B)                                                                          \
    extern "C" __global__ void __launch_bounds__(128, B) advance_##K(                            \
        const unsigned int *__restrict__ in, unsigned int *__restrict__ out, int w, int h,        \
        int stride, int nw, int tile_h, int groups)                                               \
    {                                                                                             \
        advance<K, D>(in, out, w, h, stride, nw, tile_h, groups);                                 \
    }

ADVANCE(1, 8, 1)
ADVANCE(2, 8, 1)
ADVANCE(4, 8, 1)
ADVANCE(8, 6, 1)
ADVANCE(16, 2, 3)

// Live cells of the grid, added to *total (zeroed by the host).
extern "C" __global__ void population(const unsigned int *cells, int w, int h, int stride, int nw,
                                      unsigned long long *total)
{
    unsigned long long count = 0;
    long long words = (long long)nw * h;
    unsigned int keep = (w & 31) ? (1u << (w & 31)) - 1u : FULL_MASK;
    for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < words;
         k += (long long)gridDim.x * blockDim.x) {
        long long y = k / nw, i = k - y * nw;
        unsigned int v = cells[y * stride + i];
        count += __popc(i == nw - 1 ? v & keep : v);
    }
    for (int offset = 16; offset > 0; offset /= 2)
        count += __shfl_down_sync(FULL_MASK, count, offset);
    if ((threadIdx.x & 31) == 0 && count)
        atomicAdd(total, count);
}
