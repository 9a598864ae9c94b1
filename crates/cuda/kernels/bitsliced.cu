// cuda-bitsliced: 32 cells per 32-bit word, bit-sliced neighbour counts, several generations per
// launch.
//
// Layout: rows of `stride` words (stride = 2 * ceil(W/64): the host grid's 64-bit words read as
// pairs of 32-bit words, little end first); cell x of a row at bit x % 32 of word x / 32; the
// nw = ceil(W/32) words of a row hold the cells, padding bits and words stay zero.
//
// Work: one warp per (column group, row tile). Lane l of column group j holds the 32 cells of
// each row from cell 32 * i - 16 on, where i = 31 * j + l: the high half of word i - 1 and the
// low half of word i. Lanes 0..30 write the 31 words 31j .. 31j + 30, each made of the lane's
// high half and the next lane's low half; the 16 cells at each end of the warp are its halo,
// enough for K <= 16 generations. Cells outside the row (left of cell 0, right of cell W-1) are
// gathered around the torus when loaded, so no ghost cells are stored; on a bounded plane (PLANE
// defined) they are dead instead, see Edge. The warp streams down its
// tile: at each step it loads one row and advances each of its K levels (generations) by one
// row, so the tile's rows come out K generations on with one read and one write of each word.
//
// Counting: a row's horizontal 3-sum of each cell (left + self + right, 0..3) is two bit planes
// s0, s1 (computed once per row and level and shared by the three rows that use it). Three rows'
// sums make the 3x3 sum (centre included, 0..9) as t0 + 2*(u0 + k0) + 4*u1, where t0, k0 are the
// sum and carry of the three s0 and u0, u1 the sum and carry of the three s1. The next state is
// a function of the three rows' s0 and s1 and the centre for outer-totalistic rules:
// `rule_next`, which the host pastes in front of this source as a small circuit of LOP3s found
// for the rule (src/circuit.rs; for most rules it makes u0 and u1 from t0 and k0 first, and
// Life's reads t0 and the planes, not k0). Isotropic non-totalistic rules add
// predicates over the nine cells for the counts whose arrangements matter; hexagonal and von
// Neumann rules, and isotropic rules of many such counts, take a circuit over the nine cells
// alone (see Row). Under a Generations rule, the dying cells' ages are further bit planes of
// each row, loaded, carried through the levels and stored with the live cells (see Cells).
//
// Skew: the levels form chains of C (see `step`; the host defines CHAIN_<K>, the C of depth K,
// in src/bitsliced.rs). Within a chain, a level takes the row that the level below made in the
// same step; the chains run top-down, so the lowest level of a chain takes the row that the
// chain below made at the step before. The levels of a chain wait for each other, the chains do
// not: longer chains stream fewer rows past the tile, shorter ones leave more independent work
// in a step. Each level's window is a ring of two slots and the loads a ring of D, with the step
// loop unrolled D times, so that no register is moved from step to step (see Levels and Rows).

#define GROUP_WORDS 31

__device__ __forceinline__ unsigned int majority(unsigned int a, unsigned int b, unsigned int c)
{
    return (a & b) | (a & c) | (b & c);
}

// What the counting keeps of each row: from its cells shifted west (l: cell x-1 at bit x), not
// (c) and east (r), `row_of` makes a Row, the cells and their horizontal 3-sum as two bit
// planes, and `evolve` the next states of the middle row's cells x from three Rows (a above, b
// middle, c below): the three rows' low planes make t0 and k0, and `rule_next`, which the host
// writes for the rule (src/circuit.rs), the rest from them, the planes and the cells. A
// rule reads what it needs: outer-totalistic Moore rules only the sums, so NVCC keeps two words
// a row and drops the cells; hexagonal and von Neumann rules only the cells; isotropic rules of
// a few arrangement predicates both (five words a row, hence at most 8 levels).
struct Row {
    unsigned int l, c, r, s0, s1;
};

__device__ __forceinline__ Row row_of(unsigned int l, unsigned int c, unsigned int r)
{
    return {l, c, r, l ^ c ^ r, majority(l, c, r)};
}

// DEEP: in the deepest kernel (K = 16), which takes the rule's circuit for it where the host
// has one (see `source` in src/circuit.rs).
template <bool DEEP>
__device__ __forceinline__ unsigned int evolve(Row a, Row b, Row c, unsigned int x)
{
    return rule_next<DEEP>(a.s0 ^ b.s0 ^ c.s0, majority(a.s0, b.s0, c.s0), a.s0, a.s1, b.s0,
                           b.s1, c.s0, c.s1, a.l, a.c, a.r, b.l, x, b.r, c.l, c.c, c.r);
}

// On a bounded plane (PLANE defined) the cells past the grid's edges are dead at every
// generation, so a warp that could see them keeps of every row it loads or makes only the cells
// on the grid (Mask): a warp whose lanes hold cells past the left or right edge keeps the
// lane's `cols` (bit b: cell 32i - 16 + b, where 0 <= it < w), and one whose tile is within K
// rows of the top or bottom edge also clears rows y outside 0 <= y < h. Other warps never see a
// cell past an edge within the K generations (the stored rows' cone of dependence stays on the
// grid) and run the torus's code unchanged.
enum Mask { NONE, COLS, ROWS };

struct Edge {
    unsigned int cols;
    int h;

    template <Mask M>
    __device__ __forceinline__ unsigned int keep(unsigned int v, int y) const
    {
        if (M == NONE)
            return v;
        if (M == COLS)
            return v & cols;
        return (unsigned int)y < (unsigned int)h ? v & cols : 0u;
    }
};

__device__ __forceinline__ Edge edge_of(long long i, int w, int h)
{
    long long x0 = 32 * i - 16;
    long long lo = max(0LL, -x0), hi = min(32LL, (long long)w - x0);
    unsigned int cols = 0u;
    if (hi > lo)
        cols = (hi - lo == 32 ? FULL_MASK : (1u << (hi - lo)) - 1u) << lo;
    return {cols, h};
}

#ifdef PLANE
#define PLANE_EDGES true
#else
#define PLANE_EDGES false
#endif

// Where a lane's 32 cells of each row come from, worked out once per thread so that a row's
// load costs no division. Inside the row (cells 32i - 16 .. 32i + 15 all in it): the high half of
// word q = i - 1 and the low half of word q1 = i. Otherwise, the 32 cells from cell `start`
// ((32i - 16) mod w) on, round the torus: for rows of 32 cells or more, words q and q1 (q + 1, or
// q where there is none) shifted right by `shift` (start % 32), with the cells from `valid`
// (w - start, at most 32) on taken from the row's first word; for shorter rows, the row repeated
// and shifted by `shift` (start). Lanes right of word nw only feed halo cells that the result
// never uses: they load word 0. `plain`: whether the lane's cells are inside the row.
struct Source {
    int q, q1;
    unsigned int shift, valid;
    bool plain;
};

__device__ Source source(long long i, int w, int nw)
{
    if (i >= 1 && 32 * i + 16 <= w)
        return {(int)i - 1, (int)i, 16u, 32u, true};
    if (i > nw)
        return {0, 0, 0u, 32u, true};
    long long start = (32 * i - 16) % w;
    if (start < 0)
        start += w;
    int q = (int)(start >> 5);
    unsigned int valid = (unsigned int)min(32LL, w - start);
    unsigned int shift = (unsigned int)(w < 32 ? start : start & 31);
    return {q, q + 1 < nw ? q + 1 : q, shift, valid, false};
}

// Generations rules (AGE_PLANES > 0, AGE_LAST the age of the last dying state, C - 2): each
// buffer holds, after its h rows of live cells, AGE_PLANES planes of h rows of the dying cells'
// ages (bit p of a cell's age in plane p; see gol_core::grid, "Dying states"), so that a row is
// PLANES words a lane, one per plane. The ages ride through the levels with the live cells of
// each level's middle row: a cell's fate reads its neighbours' live cells only, and its own age.
#ifndef AGE_PLANES
#define AGE_PLANES 0
#define AGE_LAST 0
#endif
#define PLANES (1 + AGE_PLANES)

// A lane's 32 cells of one row: plane 0 the live cells, planes 1.. the ages' bits.
struct Cells {
    unsigned int plane[PLANES];
};

// The next generation of cells `was`, whose live cells a two-state rule would make `made`:
// dying cells are not born, live cells that do not stay alive start dying at age 1, dying ones
// age by one (a ripple-carry add over the planes) and those in the last state end.
__device__ __forceinline__ Cells settle(const Cells &was, unsigned int made)
{
    Cells next;
    unsigned int dying = 0u;
#pragma unroll
    for (int p = 1; p < PLANES; p++)
        dying |= was.plane[p];
    unsigned int lives = made & ~dying;
    unsigned int starts = was.plane[0] & ~lives;
    unsigned int last = dying;
#pragma unroll
    for (int p = 1; p < PLANES; p++)
        last &= (AGE_LAST >> (p - 1)) & 1 ? was.plane[p] : ~was.plane[p];
    unsigned int carry = dying;
#pragma unroll
    for (int p = 1; p < PLANES; p++) {
        unsigned int sum = was.plane[p] ^ carry;
        carry &= was.plane[p];
        next.plane[p] = (sum & ~last) | (p == 1 ? starts : 0u);
    }
    next.plane[0] = lives;
    return next;
}

// The windows of K levels, in a ring of two slots. At a step of parity P, level g holds in slot
// 1 - P the Row (the horizontal sums) and the cells (x, every plane) of its middle row, in rows
// slot P the Row of the row above it, and in x slot P the row just made for it (by level g - 1
// at the step before; level 0's is the row loaded). The step replaces the oldest sums with the
// new row's, so the next step, of the other parity, finds its rows in the slots it expects and
// nothing moves.
template <int K>
struct Levels {
    Row rows[2][K];
    Cells x[2][K];
};

// Rows between the row level 0 takes at a step and the row level g makes at it: one for level
// 0's middle row, then one more per level within a chain of c and two across chains.
__host__ __device__ constexpr int lag(int g, int c)
{
    return 1 + g + g / c;
}

// One step of every level, at parity P. Level g takes its new row (x slot P), makes the next
// generation of its middle row (x slot 1 - P) and hands it on. Within a chain, levels run
// bottom-up and level g + 1 takes the row as its new row in this step (x slot P); the chains run
// top-down, and the lowest level of the chain above takes the row at the next step (slot 1 - P,
// read by that level as its middle row earlier in this step). Returns the top level's row
// (generation K). The loaded row (row y) and each level's row (row y - lag) keep of their live
// cells what the Mask M keeps; the ages of cells past an edge are never read (those cells are
// never alive, and only a cell's own fate reads its age) nor stored.
template <int K, int C, int P, Mask M>
__device__ __forceinline__ Cells step(Levels<K> &v, Cells loaded, const Edge &e, int y)
{
    loaded.plane[0] = e.keep<M>(loaded.plane[0], y);
    v.x[P][0] = loaded;
    Cells top;
#pragma unroll
    for (int base = (K - 1) / C * C; base >= 0; base -= C) {
#pragma unroll
        for (int g = base; g < base + C && g < K; g++) {
            unsigned int c = v.x[P][g].plane[0];
            unsigned int left = __shfl_up_sync(FULL_MASK, c, 1);
            unsigned int right = __shfl_down_sync(FULL_MASK, c, 1);
            unsigned int l = __funnelshift_l(left, c, 1);  // cell x-1 at bit x
            unsigned int r = __funnelshift_r(c, right, 1); // cell x+1 at bit x
            Row below = row_of(l, c, r);
            const Cells &middle = v.x[1 - P][g];
            unsigned int live =
                evolve<K == 16>(v.rows[P][g], v.rows[1 - P][g], below, middle.plane[0]);
            live = e.keep<M>(live, y - lag(g, C));
            Cells made = settle(middle, live);
            v.rows[P][g] = below;
            if (g + 1 == K)
                top = made;
            else if ((g + 1) % C)
                v.x[P][g + 1] = made;
            else
                v.x[1 - P][g + 1] = made;
        }
    }
    return top;
}

// How the lanes of a warp load their words: all plainly (every column group but the two at a
// row's ends), some gathered from rows of 32 cells or more, or from shorter rows.
enum Loads { PLAIN, GATHERED, SHORT_ROWS };

// The rows of a tile, each loaded D steps ahead of its use: row y0 - K + s (mod h) enters at
// step s, from slot s % D of a ring, which the row D steps on then takes (D is the loop's unroll
// factor, so slots are registers and nothing moves: moving a register whose load is in flight
// would wait for it). The words a lane needs are loaded ahead (words q and q1, and for gathered
// lanes the row's first word, of every plane, `plane` words apart) and put together only when
// the row is used. Lanes that load plainly in a warp that gathers have valid 32, which takes
// nothing from the first word.
template <int D, Loads L>
struct Rows {
    const unsigned int *in;
    Source src;
    int w, h, stride;
    long long plane;         // words from a row's live cells to its ages' first plane
    const unsigned int *row; // the next row to load
    int left;                // rows from it to the grid's last, that one included
    unsigned int lo[D][PLANES], hi[D][PLANES], first[D][PLANES];
    static_assert(D % 2 == 0, "steps alternate between the two parities of Levels");

    __device__ __forceinline__ void fetch(int p)
    {
#pragma unroll
        for (int k = 0; k < PLANES; k++) {
            if (L != SHORT_ROWS) {
                lo[p][k] = row[k * plane + src.q];
                hi[p][k] = row[k * plane + src.q1];
            }
            if (L != PLAIN)
                first[p][k] = row[k * plane];
        }
        row += stride;
        if (--left == 0) {
            row = in;
            left = h;
        }
    }

    __device__ __forceinline__ void start(long long y)
    {
        row = in + y * stride;
        left = h - (int)y;
#pragma unroll
        for (int p = 0; p < D; p++)
            fetch(p);
    }

    // The cells of the row in slot p, whose place the next row to load then takes.
    __device__ __forceinline__ Cells next(int p)
    {
        Cells v;
#pragma unroll
        for (int k = 0; k < PLANES; k++) {
            if (L == PLAIN) {
                v.plane[k] = __funnelshift_r(lo[p][k], hi[p][k], 16);
            } else if (L == GATHERED) {
                unsigned int low = src.valid < 32u ? (1u << src.valid) - 1u : FULL_MASK;
                v.plane[k] = (__funnelshift_r(lo[p][k], hi[p][k], src.shift) & low) |
                             __funnelshift_lc(0u, first[p][k], src.valid);
            } else {
                unsigned long long cells = first[p][k];
                for (int len = w; len < 64; len *= 2)
                    cells |= cells << len;
                v.plane[k] = (unsigned int)(cells >> src.shift);
            }
        }
        fetch(p);
        return v;
    }
};

// K generations of rows [y0, y0 + rows) of one column group, whose lanes 0..30 write word i
// (their high half and the next lane's low half). The top level's row (generation K) at step s is
// row y0 + s - K - lag(K - 1, C): level 0's row enters K rows above the tile. The steps run D at a time, so up to D - 1 steps past the tile's last row make
// nothing that is stored. M: what the warp keeps of its rows on a bounded plane (Mask).
template <int K, int C, Mask M, int D, Loads L>
__device__ __forceinline__ void stream(Rows<D, L> rows_in, unsigned int *__restrict__ out,
                                       long long y0, int rows, int stride, long long i,
                                       bool writes, unsigned int keep, Edge e)
{
    Levels<K> v;
#pragma unroll
    for (int p = 0; p < 2; p++)
#pragma unroll
        for (int g = 0; g < K; g++) {
            v.rows[p][g] = row_of(0u, 0u, 0u);
#pragma unroll
            for (int k = 0; k < PLANES; k++)
                v.x[p][g].plane[k] = 0u;
        }
    long long first = (y0 - K) % rows_in.h;
    rows_in.start(first < 0 ? first + rows_in.h : first);
    // The row coming out at the step (negative: rows above the tile), D steps at a time, and
    // where it goes.
    int row = -K - lag(K - 1, C);
    long long at = (y0 + row) * stride + i;
    for (; row < rows; row += D) {
#pragma unroll
        for (int p = 0; p < D; p++) {
            Cells loaded = rows_in.next(p);
            int y = (int)y0 + row + p + lag(K - 1, C); // the row loaded
            Cells top = p % 2 ? step<K, C, 1, M>(v, loaded, e, y)
                              : step<K, C, 0, M>(v, loaded, e, y);
#pragma unroll
            for (int k = 0; k < PLANES; k++) {
                unsigned int next = __shfl_down_sync(FULL_MASK, top.plane[k], 1);
                if (row + p >= 0 && row + p < rows && writes)
                    out[k * rows_in.plane + at] = __funnelshift_r(top.plane[k], next, 16) & keep;
            }
            at += stride;
        }
    }
}

// K generations of rows [tile * tile_h, +tile_h) of column group j, from `in` to `out`, with
// loads D steps ahead of their use. Nothing is read or written before the previous launch has
// ended (see dependent.cu). The next launch may start as each block here exits: triggering it
// at the start instead measured slower for small grids (1024² x 1024: 2.03 -> 2.15 ms), whose
// early blocks then wait on the SMs beside the running ones.
template <int K, int D, int C>
__device__ __forceinline__ void advance(const unsigned int *__restrict__ in,
                                        unsigned int *__restrict__ out, int w, int h, int stride,
                                        int nw, int tile_h, int groups)
{
    int lane = threadIdx.x;
    long long warp = (long long)blockIdx.x * blockDim.y + threadIdx.y;
    long long group = warp % groups, tile = warp / groups;
    // Rows [y0, y0 + rows) of the tile. On a bounded plane taller than 2K rows, the K rows at the
    // top and the K at the bottom are tiles of their own, the first two, whatever tile_h is
    // (their warps mask rows, a few operations more a level, and being short they end early
    // instead of holding back the last wave); tiles 2.. split rows K .. h - K into tiles of
    // tile_h. The host counts
    // the tiles the same way (`tiles` in src/bitsliced.rs).
    long long y0, end = h;
    int tall = tile_h;
    if (PLANE_EDGES && h > 2 * K) {
        y0 = tile == 0 ? 0 : tile == 1 ? h - K : K + (tile - 2) * tile_h;
        end = tile < 2 ? y0 + K : h - K;
        tall = tile < 2 ? K : tile_h;
    } else {
        y0 = tile * tile_h;
    }
    if (y0 >= end)
        return;
    int rows = (int)min((long long)tall, end - y0);
    long long i = group * GROUP_WORDS + lane;
    bool writes = lane < GROUP_WORDS && i < nw;
    unsigned int keep = (i == nw - 1 && (w & 31)) ? (1u << (w & 31)) - 1u : FULL_MASK;
    Source src = source(i, w, nw);
    bool plain = __all_sync(FULL_MASK, src.plain);
    // On a bounded plane, gathering warps hold cells past the row's ends (plain ones do not),
    // and tiles within K rows of the top or bottom see rows past the edges (Mask).
    Edge e = edge_of(i, w, h);
    long long plane = (long long)h * stride;
    bool rows_edge = PLANE_EDGES && (y0 < K || y0 + rows + K > h);
    wait_for_previous_grid();
    if (w < 32) {
        Rows<D, SHORT_ROWS> rows_in{in, src, w, h, stride, plane};
        stream<K, C, PLANE_EDGES ? ROWS : NONE>(rows_in, out, y0, rows, stride, i, writes, keep,
                                                 e);
    } else if (plain) {
        Rows<D, PLAIN> rows_in{in, src, w, h, stride, plane};
        if (rows_edge)
            stream<K, C, ROWS>(rows_in, out, y0, rows, stride, i, writes, keep, e);
        else
            stream<K, C, NONE>(rows_in, out, y0, rows, stride, i, writes, keep, e);
    } else {
        Rows<D, GATHERED> rows_in{in, src, w, h, stride, plane};
        if (rows_edge)
            stream<K, C, ROWS>(rows_in, out, y0, rows, stride, i, writes, keep, e);
        else
            stream<K, C, PLANE_EDGES ? COLS : NONE>(rows_in, out, y0, rows, stride, i, writes,
                                                    keep, e);
    }
}

// Steps a ring of loads of PLANES planes runs ahead where one of a single plane would run d:
// fewer, so that the ring's registers (up to three words a plane and slot) grow by less than the
// planes do, but at least 2.
__host__ __device__ constexpr int ring(int d)
{
    return PLANES == 1 ? d : 2 * d / (PLANES + 1) < 2 ? 2 : 2 * d / (PLANES + 1) / 2 * 2;
}

// The kernel of depth K, loading D steps ahead (D even: the unroll factor of the step loop; fewer
// under Generations rules, see `ring`), with at least B blocks resident per SM (the deepest must
// fit 168 registers for three blocks: depth 16, or depth 8 where the host makes it the deepest of
// rows of five words, DEPTH_8_BLOCKS). Shallow kernels serve small grids, whose short steps
// cannot hide a load's latency: they load further ahead.
#define ADVANCE(K, D, B, C)                                                                        \
    extern "C" __global__ void __launch_bounds__(128, B) advance_##K(                            \
        const unsigned int *__restrict__ in, unsigned int *__restrict__ out, int w, int h,        \
        int stride, int nw, int tile_h, int groups)                                               \
    {                                                                                             \
        advance<K, ring(D), C>(in, out, w, h, stride, nw, tile_h, groups);                        \
    }

// MAX_DEPTH (the host's `max_depth`): the deepest kernel whose levels' planes fit the registers;
// under a Generations rule each level holds its middle row's ages too, so deep kernels would
// spill, and they are not built.
ADVANCE(1, 8, 1, CHAIN_1)
#if MAX_DEPTH >= 2
ADVANCE(2, 8, 1, CHAIN_2)
#endif
#if MAX_DEPTH >= 4
ADVANCE(4, 8, 1, CHAIN_4)
#endif
#if MAX_DEPTH >= 8
ADVANCE(8, 4, DEPTH_8_BLOCKS, CHAIN_8)
#endif
#if MAX_DEPTH >= 16
ADVANCE(16, 2, 3, CHAIN_16)
#endif

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

// Live cells among columns from..to (from <= to <= the width) of a row of 32-bit words, cell x
// at bit x % 32 of word x / 32.
__device__ unsigned int count_span(const unsigned int *row, int from, int to)
{
    unsigned int count = 0;
    for (int x = from; x < to;) {
        int bit = x & 31, take = min(32 - bit, to - x);
        unsigned int mask = take == 32 ? FULL_MASK : ((1u << take) - 1u) << bit;
        count += __popc(row[x >> 5] & mask);
        x += take;
    }
    return count;
}

// The picture of a view of the w x h torus (top-left cell (vx, vy) with vx < w and vy < h, vw x
// vh cells, wrapping), one pixel for each block x block cells: the share of live cells among
// them, 0 to 255 rounded, as gol_core::picture::blocks makes it. One thread a pixel of the
// pw x ph picture.
extern "C" __global__ void block_shares(const unsigned int *cells, int w, int h, int stride,
                                        int vx, int vy, int vw, int vh, int block, int pw, int ph,
                                        unsigned char *pixels)
{
    int px = blockIdx.x * blockDim.x + threadIdx.x, py = blockIdx.y * blockDim.y + threadIdx.y;
    if (px >= pw || py >= ph)
        return;
    int across = min(block, vw - px * block), tall = min(block, vh - py * block);
    int x0 = (int)(((long long)vx + (long long)px * block) % w);
    unsigned long long count = 0;
    for (int dy = 0; dy < tall; dy++) {
        long long y = ((long long)vy + (long long)py * block + dy) % h;
        const unsigned int *row = cells + y * stride;
        for (int x = x0, left = across; left > 0; x = 0) {
            int take = min(left, w - x);
            count += count_span(row, x, x + take);
            left -= take;
        }
    }
    unsigned long long n = (unsigned long long)across * tall;
    pixels[(long long)py * pw + px] = (unsigned char)((count * 255 + n / 2) / n);
}
