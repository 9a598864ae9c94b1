// cuda-shared: cells are bytes, W x H row-major with no ghost cells. Threads walk down strips
// of rows, exchanging row neighbours through shared memory, so one launch makes one
// generation. The rule comes from rule.cu; segment_width from strip.cu.
//
// Unlike cuda-texture's overlapping segments (strip.cu), cuda-shared's segments of
// SEG = min(blockDim.x, 32) threads lie side by side, and all threads of a block walk down one
// strip: thread t = ty * blockDim.x + tx of block (bx, by) updates column
// x = bx * blockDim.x * blockDim.y + t of strip by, rows [by * strip, (by + 1) * strip). So a
// warp reads and writes 32 consecutive bytes of a row (whole 32-byte sectors when W is a
// multiple of 32: partly written sectors, shared with a warp on another SM, cost the memory a
// read before each write-back), and a block's warps work on neighbouring bytes of the same rows
// (blocks whose warps walked different strips ran 20-40% slower at 16384²).
// A segment's first and last threads also load the cell beside the segment (left of it, right
// of it) each row. In shared memory each segment has SEG + 2 slots per row: the left outer
// cell, the segment's cells, the right outer cell; two such rows are used in turn, so one
// __syncwarp per row suffices. A thread's row sum (its cell and the two beside it) is written
// once and read by three rows' updates.

// v is within one cell of [0, n) except on tiny grids (n smaller than a strip's halo), which
// need the modulo.
__device__ __forceinline__ long long wrap(long long v, long long n)
{
    if (v < 0)
        v += n;
    else if (v >= n)
        v -= n;
    return v >= 0 && v < n ? v : ((v % n) + n) % n;
}

// The cell of `column` (a pointer to its cell in row 0) in row y (-1 <= y <= h + 1, wrapped round
// the torus; on a bounded plane, PLANE defined, dead past the edges, as it is where `on_grid`,
// the column's own place, is not).
__device__ __forceinline__ int cell_at(const unsigned char *column, bool on_grid, long long y,
                                       int w, long long h)
{
#ifdef PLANE
    if (!on_grid || y < 0 || y >= h)
        return 0;
#endif
    return column[wrap(y, h) * w];
}

// Rows a thread of a strip that does not wrap loads ahead of the one it updates, so that that
// many loads are in flight per thread.
#define AHEAD 2

// Stores `state` at `at` where `store` holds, as a predicated store: written as a branch, the
// compiler moves the rule's arithmetic under it, and the branch costs more than the arithmetic.
__device__ __forceinline__ void store_if(bool store, unsigned char *at, unsigned state)
{
    asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.u32 p, %2, 0;\n\t@p st.global.u8 [%0], %1;\n\t}" ::"l"(at),
                 "r"(state), "r"((unsigned)store)
                 : "memory");
}

// A thread's place: its column, the outer column it loads (a segment's first thread: the one to
// the left; its last: the one to the right), both wrapped round the torus, whether each lies on
// the grid before wrapping, and its slots.
struct Place {
    long long x, column, outer;
    bool edge, writes, column_on_grid, outer_on_grid;
    unsigned char *slot, *other;   // its slot in each of the two shared rows
    unsigned char *pad, *other_pad; // an edge thread's outer slot in each

    __device__ __forceinline__ Place(unsigned char *shared, int w)
    {
        int seg = segment_width();
        int t = threadIdx.y * blockDim.x + threadIdx.x, j = threadIdx.x % seg;
        int segments = blockDim.x * blockDim.y / seg;
        x = (long long)blockIdx.x * blockDim.x * blockDim.y + t;
        column = wrap(x, w);
        edge = j == 0 || j == seg - 1;
        long long unwrapped = j == 0 ? x - 1 : x + 1;
        outer = wrap(unwrapped, w);
        writes = x < w;
        column_on_grid = x < w;
        outer_on_grid = unwrapped >= 0 && unwrapped < w;
        slot = shared + t / seg * (seg + 2) + 1 + j;
        other = slot + segments * (seg + 2);
        int side = j == 0 ? -1 : 1;
        pad = slot + side;
        other_pad = other + side;
    }

    // The sum of this thread's cell `c` and the two beside it in the same row; `o`, for an
    // edge thread, is its outer cell. Every lane of the warp must call it, row after row.
    __device__ __forceinline__ int sum(int c, int o)
    {
        unsigned char *s = slot, *p = pad;
        slot = other;
        other = s;
        pad = other_pad;
        other_pad = p;
        *s = (unsigned char)c;
        if (edge)
            *p = (unsigned char)o;
        __syncwarp();
        return s[-1] + c + s[1];
    }
};

// A strip whose rows first-1 .. first+strip+AHEAD+1 all lie on the grid: no row wraps, and each
// row costs two loads (its cell, and an edge thread's outer cell; AHEAD + 1 rows ahead), the
// exchange, the rule on the 3x3 total and one store, with the addresses walked by w.
__device__ __forceinline__ void inner_strip(const unsigned char *grid, unsigned char *next, int w, long long first,
                                            int strip, Place &me)
{
    const unsigned char *load = grid + (first - 1) * w + me.column;
    long long outer = me.outer - me.column;
    unsigned char *out = next + first * w + me.x;
    int above = load[0], here = load[w], below = load[2 * w];
    int above_o = me.edge ? load[outer] : 0, here_o = me.edge ? load[w + outer] : 0;
    int below_o = me.edge ? load[2 * w + outer] : 0;
    load += 3 * w;
    int ahead[AHEAD], ahead_o[AHEAD];
#pragma unroll
    for (int k = 0; k < AHEAD; ++k) {
        ahead[k] = *load;
        ahead_o[k] = me.edge ? load[outer] : 0;
        load += w;
    }
    int sum_above = me.sum(above, above_o), sum_here = me.sum(here, here_o);
#pragma unroll 4
    for (int i = 0; i < strip; ++i) {
        int after = ahead[0], after_o = ahead_o[0];
#pragma unroll
        for (int k = 0; k + 1 < AHEAD; ++k) {
            ahead[k] = ahead[k + 1];
            ahead_o[k] = ahead_o[k + 1];
        }
        ahead[AHEAD - 1] = *load;
        ahead_o[AHEAD - 1] = me.edge ? load[outer] : 0;
        load += w;
        int sum_below = me.sum(below, below_o);
        store_if(me.writes, out, NEXT_STATE_OF_TOTAL(here, sum_above + sum_here + sum_below));
        out += w;
        sum_above = sum_here;
        sum_here = sum_below;
        here = below;
        below = after;
        below_o = after_o;
    }
}

extern "C" __global__ void __launch_bounds__(1024, 2) update_cells_shared(const unsigned char *grid, unsigned char *next, int w, int h, int strip)
{
    extern __shared__ unsigned char shared[];
    long long first = (long long)blockIdx.y * strip;
    Place me(shared, w);
    // Whole warps take one path or the other: the row exchange needs every lane. On a bounded
    // plane, warps with cells past the left or right edge take the second.
    bool inside = first >= 1 && first + strip + AHEAD + 2 <= h;
#ifdef PLANE
    inside = inside && me.column_on_grid && (!me.edge || me.outer_on_grid);
#endif
    if (__all_sync(0xffffffffu, inside)) {
        inner_strip(grid, next, w, first, strip, me);
        return;
    }
    const unsigned char *col = grid + me.column, *out_col = grid + me.outer;
    bool on = me.column_on_grid, out_on = me.outer_on_grid;
    // The cell above the strip, the first row's, and the one below it; then one row ahead.
    // Strips past the last row load from wrapped rows and store nothing.
    int above = cell_at(col, on, first - 1, w, h), here = cell_at(col, on, first, w, h);
    int below = cell_at(col, on, first + 1, w, h);
    int above_o = cell_at(out_col, out_on, first - 1, w, h);
    int here_o = cell_at(out_col, out_on, first, w, h);
    int below_o = cell_at(out_col, out_on, first + 1, w, h);
    int sum_above = me.sum(above, above_o), sum_here = me.sum(here, here_o);
    unsigned char *out = next + first * w + me.x;
    int rows = first < h ? (int)min((long long)strip, h - first) : 0;
    for (int i = 0; i < strip; ++i) {
        // Load the row after `below` while this row is updated.
        long long ahead = first + 2 + i;
        int after = i + 1 < rows ? cell_at(col, on, ahead, w, h) : 0;
        int after_o = i + 1 < rows ? cell_at(out_col, out_on, ahead, w, h) : 0;
        int sum_below = me.sum(below, below_o);
        store_if(me.writes && i < rows, out, NEXT_STATE_OF_TOTAL(here, sum_above + sum_here + sum_below));
        out += w;
        sum_above = sum_here;
        sum_here = sum_below;
        here = below;
        below = after;
        below_o = after_o;
    }
}
