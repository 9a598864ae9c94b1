// cuda-bitsliced in 3D: 32 cells per 32-bit word, bit-sliced 27-cell sums.
//
// Layout: the host cube's own words. Line (x, y) (every z) starts at 32-bit word
// (x*M + y) * stride; cell z is bit z % 32 of the line's word z / 32; nw = ceil(M/32) words hold
// cells and the bits past z = M-1 are zero. A slab of a cube has `planes` planes of constant x
// instead of M, and x wraps at `planes`.
//
// A warp covers 32 consecutive words of a line, or for lines of fewer words, segments of the
// smallest power of two of lanes >= the line's words, one line each (lanes past the line's end
// hold its first words again, wrapping around). A rotating shuffle within the segment gives
// each lane its neighbour words; where the segment is not a whole number of lines (a line of
// more than 32 words, or of a number of words that is not a power of two) the segment's first
// and last lanes load their outer neighbour word themselves (EDGES). Each thread owns ROWS
// consecutive lines y0..y0+ROWS-1 and streams along x through `depth` planes: per plane it
// copies ROWS + 2 lines into shared memory (STAGES - 1 planes ahead of the one it computes, see
// Walk), forms their z 3-sums (two bit planes), adds three of them into each owned line's
// plane sum (the 3x3 sum in y and z, four bit planes), and adds three planes' sums into the
// 27-cell sum (five bit planes), from which the rule, a multiplexer tree whose constant leaves
// the compiler folds, gives the next state. The three planes in play live in a ring of three
// slots, and the loop over x is unrolled three times round the ring, so that no sums are moved
// between registers.
//
// Addresses: every offset within a plane fits in 32 bits (a plane of M lines of stride words),
// so each thread works out its lines' offsets once and each plane's first word once.

#define ROWS 4
#define STAGES 3
#define THREADS 128            // a block: 32 x 4 threads
#define LINES (2 * (ROWS + 2)) // words per thread and stage: its lines', then the edge words

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

// The next states from the 27-cell sums t (five bit planes) and the cells. Rules other than the
// default take a tree, one level per sum plane, each loop of a constant length so that it
// unrolls and the leaves stay in registers.
__device__ __forceinline__ unsigned next_state(const unsigned t[5], unsigned alive)
{
#if BIRTH == 64u && SURVIVE == 224u
    // B6/S567, the default, written out: a sum (centre included) of 6 for any cell, 7 or 8 for
    // a live one, never 16 or more; two operations a word fewer than the compiler makes of the
    // tree.
    unsigned six_or_seven = ~t[3] & t[2] & t[1] & (~t[0] | alive);
    unsigned eight = t[3] & ~t[2] & ~t[1] & ~t[0] & alive;
    return (six_or_seven | eight) & ~t[4];
#else
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
#endif
}

// What a thread works out once: where its words lie and how its z neighbours are formed.
struct Lane {
    unsigned off[ROWS + 2];  // word offsets of its lines' word within a plane
    unsigned edge[ROWS + 2]; // (EDGES) the same for its outer neighbour word
    int left, right;         // the lanes of its neighbour words, within the segment
    bool first, last;        // (EDGES) whether it is its segment's first or last lane
    bool loads_edge;         // (EDGES) whether it loads an outer neighbour word
    unsigned west_shift;     // (PARTIAL) the bit of the left word that is the cell before bit 0
    unsigned east_scale;     // (PARTIAL) 2^b, b the bit where the right word's bit 0 goes
};

// One plane's worth of a thread's lines: the words (kept one step past their sums, as the
// centre plane's cells) and the owned lines' plane sums.
struct Slot {
    unsigned c[ROWS + 2];
    unsigned e[ROWS + 2];
    unsigned sum[ROWS][4];
};

// Plane x's first word. The pointer is passed through an empty asm so that the compiler keeps it
// and adds each line's 32-bit offset to it, instead of redoing the 64-bit arithmetic of
// x * plane + offset per line; that hides the pointer's address space, so the copies and stores
// that use it name the global space themselves (cp.async.ca.shared.global, __stcg).
template <typename Word>
__device__ __forceinline__ Word *plane_at(Word *cells, int x, unsigned long long plane)
{
    Word *p = cells + x * plane;
    asm("" : "+l"(p));
    return p;
}

// An asynchronous copy of one word from global to shared memory (cp.async, compute capability
// 8.0 and later).
__device__ __forceinline__ void copy_async(unsigned *to, const unsigned *from)
{
    unsigned shared = (unsigned)__cvta_generic_to_shared(to);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(shared), "l"(from) : "memory");
}

// The plane sums of a fetched slot's owned lines.
template <bool EDGES, bool PARTIAL>
__device__ __forceinline__ void plane_sums(Slot &s, const Lane &l, int seg)
{
    const unsigned all = 0xffffffffu;
    unsigned s0[ROWS + 2], s1[ROWS + 2];
#pragma unroll
    for (int i = 0; i < ROWS + 2; ++i) {
        unsigned c = s.c[i];
        unsigned lw = __shfl_sync(all, c, l.left, seg);
        unsigned rw = __shfl_sync(all, c, l.right, seg);
        if (EDGES) {
            lw = l.first ? s.e[i] : lw;
            rw = l.last ? s.e[i] : rw;
        }
        unsigned west, east;
        if (PARTIAL) {
            // The line's last word holds r + 1 < 32 cells: its left neighbour's cell before
            // bit 0 is bit r of that word (west_shift = r on a line's first word, else 31),
            // and the right neighbour's bit 0 goes to bit r (east_scale = 2^r on a line's
            // last word, else 2^31). Bits past r come out as junk, and the result is masked.
            west = (c << 1) + (lw >> l.west_shift);
            east = (c >> 1) + rw * l.east_scale;
        } else {
            west = __funnelshift_l(lw, c, 1);
            east = __funnelshift_r(c, rw, 1);
        }
        full_add(west, c, east, s0[i], s1[i]);
    }
#pragma unroll
    for (int i = 0; i < ROWS; ++i) {
        unsigned k2, twos, fours;
        full_add(s0[i], s0[i + 1], s0[i + 2], s.sum[i][0], k2);
        full_add(s1[i], s1[i + 1], s1[i + 2], twos, fours);
        s.sum[i][1] = twos ^ k2;
        unsigned k4 = twos & k2;
        s.sum[i][2] = fours ^ k4;
        s.sum[i][3] = fours & k4;
    }
}

// Plane x's next states from the sums of planes x-1 (a), x (b) and x+1 (c), b's words the
// cells.
template <bool PARTIAL>
__device__ __forceinline__ void emit(const Slot &a, const Slot &b, const Slot &c, unsigned *__restrict__ plane,
                                     const Lane &l, unsigned writes, unsigned keep)
{
#pragma unroll
    for (int i = 0; i < ROWS; ++i) {
        const unsigned *p = a.sum[i], *q = b.sum[i], *n = c.sum[i];
        unsigned t[5], k1, k2, k2b, k3, k3b, k4, k4b, u1, u2, u3;
        full_add(p[0], q[0], n[0], t[0], k1);
        full_add(p[1], q[1], n[1], u1, k2);
        t[1] = u1 ^ k1;
        k2b = u1 & k1;
        full_add(p[2], q[2], n[2], u2, k3);
        full_add(u2, k2, k2b, t[2], k3b);
        full_add(p[3], q[3], n[3], u3, k4);
        full_add(u3, k3, k3b, t[3], k4b);
        t[4] = k4 | k4b; // the sum is at most 27: never both
        unsigned out = next_state(t, b.c[i + 1]);
        if (PARTIAL)
            out &= keep;
        if ((writes >> i) & 1u)
            __stcg(plane + l.off[i + 1], out);
    }
}

// A thread's walk along x through planes [x, x1). The words it needs of planes x-1 .. x1 come
// through a ring of STAGES stages in shared memory, filled by asynchronous copies (cp.async)
// STAGES - 1 planes ahead of their use, so that many loads are in flight without holding
// registers. Each thread copies and reads back only its own words, so it waits for its own
// copies alone. A stage is refilled one plane after it was read, once its words have long been
// used, so that the copy cannot overtake the read.
template <bool EDGES, bool PARTIAL>
struct Walk {
    const unsigned *__restrict__ cells;
    unsigned *__restrict__ next;
    const Lane &lane;
    // This thread's first word of the ring; its word (stage, line) lies at
    // ring + (stage * LINES + line) * THREADS.
    unsigned *ring;
    int seg, planes, x, x1;
    unsigned long long plane; // words per plane
    unsigned writes, keep;    // which owned lines are written; the mask of valid cells
    int ahead, left;          // the next plane to copy, and how many remain
    int put, get;             // the stages to fill and to read next

    // Copies the next plane into stage `put`, as one group of copies (empty past the last plane).
    __device__ __forceinline__ void copy_next()
    {
        if (left > 0) {
            const unsigned *p = plane_at(cells, ahead, plane);
            unsigned *stage = ring + put * LINES * THREADS;
#pragma unroll
            for (int i = 0; i < ROWS + 2; ++i) {
                copy_async(stage + i * THREADS, p + lane.off[i]);
                if (EDGES && lane.loads_edge)
                    copy_async(stage + (ROWS + 2 + i) * THREADS, p + lane.edge[i]);
            }
            ahead = after(ahead, planes);
            --left;
        }
        asm volatile("cp.async.commit_group;" ::: "memory");
        put = (put + 1) % STAGES;
    }

    // Refills the stage read last time, then reads the oldest copied plane into s and computes
    // its sums.
    __device__ __forceinline__ void take(Slot &s)
    {
        copy_next();
        asm volatile("cp.async.wait_group %0;" ::"n"(STAGES - 1) : "memory");
        const unsigned *stage = ring + get * LINES * THREADS;
#pragma unroll
        for (int i = 0; i < ROWS + 2; ++i) {
            s.c[i] = stage[i * THREADS];
            if (EDGES)
                s.e[i] = stage[(ROWS + 2 + i) * THREADS];
        }
        get = (get + 1) % STAGES;
        plane_sums<EDGES, PARTIAL>(s, lane, seg);
    }

    // Plane x from the ring (p, q, r) = (x-1, x, x+1); r is taken now. Returns whether planes
    // remain.
    __device__ __forceinline__ bool step(Slot &p, Slot &q, Slot &r)
    {
        take(r);
        emit<PARTIAL>(p, q, r, plane_at(next, x, plane), lane, writes, keep);
        return ++x < x1;
    }

    __device__ __forceinline__ void run()
    {
        ahead = before(x, planes);
        left = x1 - x + 2;
        put = get = 0;
#pragma unroll
        for (int k = 0; k < STAGES - 1; ++k)
            copy_next();
        Slot a, b, c;
        take(a);
        take(b);
        while (step(a, b, c) && step(b, c, a) && step(c, a, b)) {
        }
    }
};

extern "C" __global__ void cube_bitsliced(const unsigned *__restrict__ cells, unsigned *__restrict__ next, int m,
                                          int planes, int stride, int depth)
{
    start_next_grid(); // see dependent.cu
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
    if (x0 >= planes || !__any_sync(0xffffffffu, active))
        return;
    if (!active)
        y0 = 0;
    int gw = w % nw;
    int r = (m - 1) & 31; // the bit of the line's last cell in its last word
    Lane l;
    l.left = (j + seg - 1) & (seg - 1);
    l.right = (j + 1) & (seg - 1);
    l.first = j == 0;
    l.last = j == seg - 1;
    l.loads_edge = seg > 1 && (l.first || l.last);
    int outer = l.first ? (gw == 0 ? nw - 1 : gw - 1) : (gw == nw - 1 ? 0 : gw + 1);
    l.west_shift = gw == 0 ? r : 31;
    l.east_scale = 1u << (gw == nw - 1 ? r : 31);
    unsigned writes = 0;
#pragma unroll
    for (int i = 0; i < ROWS + 2; ++i) {
        int y = y0 + i - 1;
        y = y < 0 ? m - 1 : y % m;
        l.off[i] = (unsigned)y * stride + gw;
        l.edge[i] = (unsigned)y * stride + outer;
        if (i >= 1 && i <= ROWS && active && w < nw && y0 + i - 1 < m)
            writes |= 1u << (i - 1);
    }
    unsigned keep = gw == nw - 1 && r != 31 ? (1u << (r + 1)) - 1 : 0xffffffffu;
    // The segment is a whole number of lines when nw is a power of two up to 32; else its end
    // lanes load their outer neighbours.
    bool edges = nw > 32 || (nw & (nw - 1)) != 0;
    bool partial = r != 31;
    int x1 = min(x0 + depth, planes);
    unsigned long long plane = (unsigned long long)m * stride;
    extern __shared__ unsigned shared[];
    unsigned *ring = shared + threadIdx.y * 32 + lane;
    wait_for_previous_grid(); // the previous generation has ended: its output is our input
    if (edges && partial)
        Walk<true, true>{cells, next, l, ring, seg, planes, x0, x1, plane, writes, keep}.run();
    else if (edges)
        Walk<true, false>{cells, next, l, ring, seg, planes, x0, x1, plane, writes, keep}.run();
    else if (partial)
        Walk<false, true>{cells, next, l, ring, seg, planes, x0, x1, plane, writes, keep}.run();
    else
        Walk<false, false>{cells, next, l, ring, seg, planes, x0, x1, plane, writes, keep}.run();
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
