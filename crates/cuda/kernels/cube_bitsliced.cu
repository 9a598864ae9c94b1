// cuda-bitsliced in 3D: 32 cells per 32-bit word, bit-sliced 27-cell sums.
//
// Layout: the host cube's own words. Line (x, y) (every z) starts at 32-bit word
// (x*M + y) * stride; cell z is bit z % 32 of the line's word z / 32; nw = ceil(M/32) words hold
// cells and the bits past z = M-1 are zero. A slab of a cube has `planes` planes of constant x
// instead of M, and x wraps at `planes`. A launch makes the planes [first, first + count) of
// the next state (wrapping at `planes`) and leaves the others as they were: the halo exchange
// of split runs advances the planes that need no halo while the halos travel.
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
// plane sum (the 3x3 sum in y and z, four bit planes in carry-save form: two full adders), and
// adds three planes' sums into the 27-cell sum, from which the rule gives the next state: for
// the default rule, logic that needs only part of the sum; for others, a multiplexer tree on
// its five bit planes whose constant leaves the compiler folds. The three planes in play live in a ring of three
// slots, and the loop over x is unrolled three times round the ring, so that no sums are moved
// between registers.
//
// cube_bitsliced_pair makes two generations in one pass, on the sides whose lines fill their
// segments with whole words (M = 32 * 2^k up to 1024): a thread loads ROWS + 4 lines, makes
// the first generation's ROWS + 2 lines one plane behind the loads and keeps them in registers
// as the input of the second, whose ROWS lines alone are stored. It reads and writes the cube
// once for two generations, at the price of the first generation's two extra lines and two
// extra planes per walk.
//
// Addresses: every offset within a plane fits in 32 bits (a plane of M lines of stride words),
// so each thread works out its lines' offsets once and each plane's first word once.

#define ROWS 4
#define STAGES 3
#define THREADS 128            // a block: 32 x 4 threads

// One three-input logic operation (LOP3): bit i of LUT is the result for the inputs' bits
// (a, b, c) = bits (2, 1, 0) of i, so that LUT is the function applied to a = 0xf0, b = 0xcc and
// c = 0xaa. Written out in PTX where the compiler, given C expressions, spends more operations
// (SASS of cube_bitsliced's loop: 388 LOP3 from C full adders, 360 from these).
template <unsigned LUT>
__device__ __forceinline__ unsigned lop3(unsigned a, unsigned b, unsigned c)
{
    unsigned d;
    asm("lop3.b32 %0, %1, %2, %3, %4;" : "=r"(d) : "r"(a), "r"(b), "r"(c), "n"(LUT));
    return d;
}

// A full adder as two LOP3: a ^ b ^ c, and the majority.
__device__ __forceinline__ void full_add(unsigned a, unsigned b, unsigned c, unsigned &sum, unsigned &carry)
{
    sum = lop3<0x96>(a, b, c);
    carry = lop3<0xe8>(a, b, c);
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

// The 27-cell sum of a word's cells, part added: t0 + 2 * t1 + 4 * (s3 + s4 + 2 * (g1 + g2)),
// each term a bit plane (see next_words).
struct Sum27 {
    unsigned t0, t1, s3, s4, g1, g2;
};

// B6/S567's own circuit, where the rule is compiled in (GENERIC_RULE, see src/source.rs, reads
// BIRTH and SURVIVE from constant memory instead).
#if !defined(GENERIC_RULE)
#if BIRTH == 64u && SURVIVE == 224u
#define B6_S567
#endif
#endif

// The next states from the 27-cell sums and the cells.
__device__ __forceinline__ unsigned next_state(const Sum27 &s, unsigned alive)
{
#ifdef B6_S567
    // B6/S567, the default, written out: a sum (centre included) of 6 for any cell, 7 or 8 for a
    // live one. With c4 = s3 + s4 + 2 * (g1 + g2), the sum is 6 or 7 where t1 and c4 = 1, that
    // is s3 != s4 and no g; and 8 where t0 = t1 = 0 and c4 = 2, that is s3 = s4 and exactly one
    // of g1, g2, s3. Eight LOP3 (the compiler makes ten or more of such logic in C), checked
    // against the rule on all 2^13 inputs when written.
    unsigned no_g = lop3<0x03>(s.g1, s.g2, 0);                 // ~a & ~b
    unsigned c4_is_1 = lop3<0x28>(s.s3, s.s4, no_g);           // (a ^ b) & c
    unsigned gated = lop3<0xb0>(s.t1, s.t0, alive);            // a & (~b | c)
    unsigned one_of = lop3<0x16>(s.g1, s.g2, s.s3);            // exactly one of the three
    unsigned c4_is_2 = lop3<0x90>(one_of, s.s3, s.s4);         // a & (b == c)
    unsigned low_zero = lop3<0x02>(s.t1, s.t0, alive);         // ~a & ~b & c
    unsigned eight = lop3<0xc0>(c4_is_2, low_zero, 0);         // a & b
    return lop3<0xea>(gated, c4_is_1, eight);                  // (a & b) | c
#else
    // Other rules: the sum's five bit planes t, then a tree, one level per bit plane, each loop
    // of a constant length so that it unrolls and the leaves stay in registers.
    unsigned t[5], g3;
    t[0] = s.t0;
    t[1] = s.t1;
    t[2] = s.s3 ^ s.s4;
    g3 = s.s3 & s.s4;
    full_add(s.g1, s.g2, g3, t[3], t[4]);
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

// What a thread works out once about its z neighbours.
struct Lane {
    int left, right;     // the lanes of its neighbour words, within the segment
    bool first, last;    // (EDGES) whether it is its segment's first or last lane
    bool loads_edge;     // (EDGES) whether it loads an outer neighbour word
    unsigned west_shift; // (PARTIAL) the bit of the left word that is the cell before bit 0
    unsigned east_scale; // (PARTIAL) 2^b, b the bit where the right word's bit 0 goes
};

// One plane's worth of N + 2 lines: the words (kept one step past their sums, as the centre
// plane's cells) and the plane sums of the N inner ones, each in carry-save form: sum[0] +
// 2 * (sum[1] + sum[2]) + 4 * sum[3].
template <int N>
struct Slot {
    unsigned c[N + 2];
    unsigned e[N + 2];
    unsigned sum[N][4];
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

// The plane sums of a slot whose words are in place.
template <int N, bool EDGES, bool PARTIAL>
__device__ __forceinline__ void plane_sums(Slot<N> &s, const Lane &l, int seg)
{
    const unsigned all = 0xffffffffu;
    unsigned s0[N + 2], s1[N + 2];
#pragma unroll
    for (int i = 0; i < N + 2; ++i) {
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
    for (int i = 0; i < N; ++i) {
        full_add(s0[i], s0[i + 1], s0[i + 2], s.sum[i][0], s.sum[i][1]);
        full_add(s1[i], s1[i + 1], s1[i + 2], s.sum[i][2], s.sum[i][3]);
    }
}

// The next states of plane x's N inner lines from the sums of planes x-1 (a), x (b) and x+1
// (c), b's words the cells, into out.
template <int N>
__device__ __forceinline__ void next_words(const Slot<N> &a, const Slot<N> &b, const Slot<N> &c, unsigned out[N])
{
#pragma unroll
    for (int i = 0; i < N; ++i) {
        // Ones: three, giving t0 and a two. Twos: seven, giving t1 and three fours. Fours: six,
        // left as two bits and two eights (the sum is at most 27).
        const unsigned *p = a.sum[i], *q = b.sum[i], *n = c.sum[i];
        Sum27 sum;
        unsigned two, s1, s2, f1, f2, f3;
        full_add(p[0], q[0], n[0], sum.t0, two);
        full_add(p[1], p[2], q[1], s1, f1);
        full_add(q[2], n[1], n[2], s2, f2);
        full_add(s1, s2, two, sum.t1, f3);
        full_add(p[3], q[3], n[3], sum.s3, sum.g1);
        full_add(f1, f2, f3, sum.s4, sum.g2);
        out[i] = next_state(sum, b.c[i + 1]);
    }
}

// Where a thread works, L lines per plane: what its walk reads and never changes.
template <int L>
struct Where {
    const unsigned *__restrict__ cells;
    unsigned *__restrict__ next;
    Lane lane;
    unsigned off[L];  // word offsets of the lines' word within a plane, its first owned line's
                      // (L - ROWS) / 2 lines before the first
    unsigned edge[L]; // (EDGES) the same for the outer neighbour word
    // This thread's first word of the ring; its word (stage, k) lies at
    // ring + (stage * words per stage + k) * THREADS.
    unsigned *ring;
    int seg, planes, x0, x1;  // the segment's lanes; planes in x; the walk's first and end plane,
                              // counted on past the last plane where the launch's run wraps
    unsigned long long plane; // words per plane
    unsigned writes, keep;    // which owned lines are written; the mask of valid cells
};

// A thread's walk along x through planes [x0, x1), GENS (1 or 2) generations at once. It loads
// L = ROWS + 2 * GENS lines per plane: for two generations, the first one's next states of
// ROWS + 2 lines, made one plane behind the loads, feed the second one's sums directly, and
// only the second one's ROWS lines are stored. Two generations need whole lines in each
// segment (no EDGES, no PARTIAL): the host asks for them only on such sides.
//
// The words it needs of planes x0-GENS .. x1-1+GENS come through a ring of STAGES stages in
// shared memory, filled by asynchronous copies (cp.async) STAGES - 1 planes ahead of their use,
// so that many loads are in flight without holding registers. Each thread copies and reads back
// only its own words, so it waits for its own copies alone. A stage is refilled one plane after
// it was read, once its words have long been used, so that the copy cannot overtake the read.
template <int GENS, bool EDGES, bool PARTIAL>
struct Walk {
    static_assert(GENS == 1 || (GENS == 2 && !EDGES && !PARTIAL), "two generations need whole lines");
    static constexpr int L = ROWS + 2 * GENS;        // lines per plane
    static constexpr int WORDS = EDGES ? 2 * L : L; // words per stage: the lines', then the edges
    const Where<L> &at;
    int x;           // the plane stored next
    int ahead, left; // the next plane to copy, and how many remain
    int put, get;    // the stages to fill and to read next

    // Copies the next plane into stage `put`, as one group of copies (empty past the last plane).
    __device__ __forceinline__ void copy_next()
    {
        if (left > 0) {
            const unsigned *p = plane_at(at.cells, ahead, at.plane);
            unsigned *stage = at.ring + put * WORDS * THREADS;
#pragma unroll
            for (int i = 0; i < L; ++i) {
                copy_async(stage + i * THREADS, p + at.off[i]);
                if (EDGES && at.lane.loads_edge)
                    copy_async(stage + (L + i) * THREADS, p + at.edge[i]);
            }
            ahead = after(ahead, at.planes);
            --left;
        }
        asm volatile("cp.async.commit_group;" ::: "memory");
        put = (put + 1) % STAGES;
    }

    // Refills the stage read last time, then reads the oldest copied plane into s and computes
    // its sums.
    __device__ __forceinline__ void take(Slot<L - 2> &s)
    {
        copy_next();
        asm volatile("cp.async.wait_group %0;" ::"n"(STAGES - 1) : "memory");
        const unsigned *stage = at.ring + get * WORDS * THREADS;
#pragma unroll
        for (int i = 0; i < L; ++i) {
            s.c[i] = stage[i * THREADS];
            if (EDGES)
                s.e[i] = stage[(L + i) * THREADS];
        }
        get = (get + 1) % STAGES;
        plane_sums<L - 2, EDGES, PARTIAL>(s, at.lane, at.seg);
    }

    // The first generation's plane from the sums of the planes before, at and after it, into
    // the second generation's slot s, whose sums it then computes.
    __device__ __forceinline__ void first(const Slot<L - 2> &p, const Slot<L - 2> &q, const Slot<L - 2> &r,
                                          Slot<ROWS> &s)
    {
        next_words<L - 2>(p, q, r, s.c);
        plane_sums<ROWS, false, false>(s, at.lane, at.seg);
    }

    // Stores plane x's next states from the sums of planes x-1 .. x+1; returns whether planes
    // remain.
    __device__ __forceinline__ bool store(const Slot<ROWS> &p, const Slot<ROWS> &q, const Slot<ROWS> &r)
    {
        return store_at(p, q, r, plane_at(at.next, x < at.planes ? x : x - at.planes, at.plane));
    }

    // store() into plane x's first word `to`. Given as a restricted parameter, it keeps the
    // address arithmetic in uniform registers (9 registers and 38 operations a loop fewer).
    __device__ __forceinline__ bool store_at(const Slot<ROWS> &p, const Slot<ROWS> &q, const Slot<ROWS> &r,
                                             unsigned *__restrict__ to)
    {
        unsigned out[ROWS];
        next_words<ROWS>(p, q, r, out);
#pragma unroll
        for (int i = 0; i < ROWS; ++i)
            if ((at.writes >> i) & 1u)
                __stcg(to + at.off[i + GENS], PARTIAL ? out[i] & at.keep : out[i]);
        return ++x < at.x1;
    }

    // One generation: plane x from the ring (p, q, r) = (x-1, x, x+1); r is taken now.
    __device__ __forceinline__ bool step(Slot<ROWS> &p, Slot<ROWS> &q, Slot<ROWS> &r)
    {
        take(r);
        return store(p, q, r);
    }

    // Two generations: the loads' ring (p, q, r) holds planes (x, x+1, x+2), r taken now, from
    // which the first generation's plane x+1 goes into w; (u, v, w) = (x-1, x, x+1) then give
    // plane x of the second.
    __device__ __forceinline__ bool step(Slot<L - 2> &p, Slot<L - 2> &q, Slot<L - 2> &r, Slot<ROWS> &u,
                                         Slot<ROWS> &v, Slot<ROWS> &w)
    {
        take(r);
        first(p, q, r, w);
        return store(u, v, w);
    }

    __device__ __forceinline__ void run()
    {
        x = at.x0;
        ahead = before(x < at.planes ? x : x - at.planes, at.planes);
        if (GENS == 2)
            ahead = before(ahead, at.planes);
        left = at.x1 - at.x0 + 2 * GENS;
        put = get = 0;
#pragma unroll
        for (int k = 0; k < STAGES - 1; ++k)
            copy_next();
        if constexpr (GENS == 1) {
            Slot<ROWS> a, b, c;
            take(a);
            take(b);
            while (step(a, b, c) && step(b, c, a) && step(c, a, b)) {
            }
        } else {
            // Planes x-2 .. x+1 make the first generation's planes x-1 (d) and x (e).
            Slot<L - 2> a, b, c;
            Slot<ROWS> d, e, f;
            take(a);
            take(b);
            take(c);
            first(a, b, c, d);
            take(a);
            first(b, c, a, e);
            while (step(c, a, b, d, e, f) && step(a, b, c, e, f, d) && step(b, c, a, f, d, e)) {
            }
        }
    }
};

// Lanes per segment for lines of nw words. Lines of fewer than 32 words: the warp splits into
// segments of seg lanes (the smallest power of two >= nw), each on its own run of ROWS lines, so
// that few lanes idle.
__device__ __forceinline__ int segment(int nw)
{
    int seg = 32;
    while (seg > 1 && seg / 2 >= nw)
        seg /= 2;
    return seg;
}

// GENS generations of planes first + [blockIdx.z * depth, + depth) of the launch's
// [first, first + count), 0 <= first < planes, count <= planes (see Walk).
template <int GENS>
__device__ __forceinline__ void advance(const unsigned *__restrict__ cells, unsigned *__restrict__ next, int m,
                                        int planes, int stride, int depth, int first, int count)
{
    start_next_grid(); // see dependent.cu
    int nw = (m + 31) / 32, seg = segment(nw);
    int lane = threadIdx.x, j = lane & (seg - 1);
    int w = blockIdx.x * 32 + j;
    int y0 = ((blockIdx.y * blockDim.y + threadIdx.y) * (32 / seg) + lane / seg) * ROWS;
    int x0 = blockIdx.z * depth;
    // A warp shares x0; lanes past the last line compute on line 0 without writing, so that the
    // shuffles stay full, unless the whole warp is past it.
    bool active = y0 < m;
    if (x0 >= count || !__any_sync(0xffffffffu, active))
        return;
    if (!active)
        y0 = 0;
    int gw = w % nw;
    int r = (m - 1) & 31; // the bit of the line's last cell in its last word
    // The segment is a whole number of lines when nw is a power of two up to 32; else its end
    // lanes load their outer neighbours.
    bool edges = nw > 32 || (nw & (nw - 1)) != 0;
    bool partial = r != 31;
    if (GENS == 2 && (edges || partial))
        __trap(); // the host launches two generations only on sides that need neither
    Where<ROWS + 2 * GENS> at;
    at.cells = cells;
    at.next = next;
    Lane &l = at.lane;
    l.left = (j + seg - 1) & (seg - 1);
    l.right = (j + 1) & (seg - 1);
    l.first = j == 0;
    l.last = j == seg - 1;
    l.loads_edge = seg > 1 && (l.first || l.last);
    int outer = l.first ? (gw == 0 ? nw - 1 : gw - 1) : (gw == nw - 1 ? 0 : gw + 1);
    l.west_shift = gw == 0 ? r : 31;
    l.east_scale = 1u << (gw == nw - 1 ? r : 31);
    at.writes = 0;
#pragma unroll
    for (int i = 0; i < ROWS + 2 * GENS; ++i) {
        int y = (y0 + i - GENS + m) % m; // y0 + i - GENS >= -GENS >= -m
        at.off[i] = (unsigned)y * stride + gw;
        at.edge[i] = (unsigned)y * stride + outer;
        if (i >= GENS && i < GENS + ROWS && active && w < nw && y0 + i - GENS < m)
            at.writes |= 1u << (i - GENS);
    }
    at.keep = gw == nw - 1 && r != 31 ? (1u << (r + 1)) - 1 : 0xffffffffu;
    at.seg = seg;
    at.planes = planes;
    at.x0 = first + x0;
    at.x1 = first + min(x0 + depth, count);
    at.plane = (unsigned long long)m * stride;
    extern __shared__ unsigned shared[];
    at.ring = shared + threadIdx.y * 32 + lane;
    wait_for_previous_grid(); // the previous generation has ended: its output is our input
    if constexpr (GENS == 2)
        Walk<2, false, false>{at}.run();
    else if (edges && partial)
        Walk<1, true, true>{at}.run();
    else if (edges)
        Walk<1, true, false>{at}.run();
    else if (partial)
        Walk<1, false, true>{at}.run();
    else
        Walk<1, false, false>{at}.run();
}

// One generation, on any side.
extern "C" __global__ void cube_bitsliced(const unsigned *__restrict__ cells, unsigned *__restrict__ next, int m,
                                          int planes, int stride, int depth, int first, int count)
{
    advance<1>(cells, next, m, planes, stride, depth, first, count);
}

// Two generations, on sides M = 32 * 2^k up to 1024 (lines of a power of two of whole words,
// at most a warp's).
extern "C" __global__ void cube_bitsliced_pair(const unsigned *__restrict__ cells, unsigned *__restrict__ next,
                                               int m, int planes, int stride, int depth, int first,
                                               int count)
{
    advance<2>(cells, next, m, planes, stride, depth, first, count);
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

// The live cells of an m^3 cube (lines of `stride` 32-bit words, line (x, y) at x * m + y)
// along one axis (0 x, 1 y, 2 z), or in the one slice across it at index `slice` (-1: every
// slice), as gol_core::picture::cube_counts counts them: counts[row * m + column], rows y and
// columns z along x, rows x and columns z along y, rows x and columns y along z. One thread a
// count.
extern "C" __global__ void cube_projection(const unsigned *cells, int m, int stride, int axis,
                                           int slice, unsigned *counts)
{
    int column = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y * blockDim.y + threadIdx.y;
    if (column >= m || row >= m)
        return;
    unsigned count = 0;
    if (axis == 2) {
        const unsigned *line = cells + ((long long)row * m + column) * stride;
        if (slice >= 0)
            count = line[slice >> 5] >> (slice & 31) & 1u;
        else
            for (int i = 0; i < (m + 31) / 32; i++)
                count += __popc(line[i]); // padding bits are zero
    } else {
        int from = slice >= 0 ? slice : 0, to = slice >= 0 ? slice + 1 : m;
        for (int k = from; k < to; k++) {
            long long line = axis == 0 ? (long long)k * m + row : (long long)row * m + k;
            count += cells[line * stride + (column >> 5)] >> (column & 31) & 1u;
        }
    }
    counts[(long long)row * m + column] = count;
}
