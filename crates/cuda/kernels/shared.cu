// cuda-shared: cells are bytes, W x H row-major with no ghost cells. Threads walk down strips
// of rows, exchanging row neighbours through shared memory (strip.cu has the layout), so one
// launch makes one generation. The rule comes from rule.cu.

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

// Stores `state` at `at` where `store` holds, as a predicated store: written as a branch, the
// compiler moves the rule's arithmetic under it, and the branch costs more than the arithmetic.
__device__ __forceinline__ void store_if(bool store, unsigned char *at, unsigned state)
{
    asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.u32 p, %2, 0;\n\t@p st.global.u8 [%0], %1;\n\t}" ::"l"(at),
                 "r"(state), "r"((unsigned)store)
                 : "memory");
}

// A strip whose rows first-1 .. first+strip all lie on the grid: no row wraps, and each row
// costs one load, the exchange, the rule on the 3x3 total and one store, with the load and store
// addresses walked by w. The last row, which loads nothing, is peeled off the loop.
__device__ __forceinline__ void inner_strip(const unsigned char *grid, unsigned char *next, int w, long long first,
                                            long long x, long long column, int strip, bool interior, RowSums &sums)
{
    const unsigned char *load = grid + (first - 1) * w + column;
    unsigned char *out = next + first * w + x;
    int above = load[0], here = load[w], below = load[2 * w];
    load += 3 * w;
    int sum_above = sums.of(above), sum_here = sums.of(here);
    for (int i = 0; i + 1 < strip; ++i) {
        int after = *load;
        load += w;
        int sum_below = sums.of(below);
        store_if(interior, out, NEXT_STATE_OF_TOTAL(here, sum_above + sum_here + sum_below));
        out += w;
        sum_above = sum_here;
        sum_here = sum_below;
        here = below;
        below = after;
    }
    int sum_below = sums.of(below);
    store_if(interior, out, NEXT_STATE_OF_TOTAL(here, sum_above + sum_here + sum_below));
}

extern "C" __global__ void update_cells_shared(const unsigned char *grid, unsigned char *next, int w, int h, int strip)
{
    extern __shared__ unsigned char shared[];
    long long first = strip_first_row(strip);
    long long x = strip_column();
    RowSums sums(shared);
    bool interior = sums.interior && x < w;
    long long column = wrap(x, w);
    // Whole warps take one path or the other: the row exchange needs every lane.
    if (__all_sync(0xffffffffu, first >= 1 && first + strip < h)) {
        inner_strip(grid, next, w, first, x, column, strip, interior, sums);
        return;
    }
    const unsigned char *col = grid + column;
    // The cell above the strip, the first row's, and the one below it; then one row ahead
    // (`ahead`, wrapped, at `load`). Strips past the last row load from wrapped rows and store
    // nothing.
    int ahead = (int)wrap(first + 1, h);
    const unsigned char *load = col + (long long)ahead * w;
    int above = col[wrap(first - 1, h) * w], here = col[wrap(first, h) * w], below = *load;
    int sum_above = sums.of(above), sum_here = sums.of(here);
    unsigned char *out = next + first * w + x;
    int rows = first < h ? (int)min((long long)strip, h - first) : 0;
    for (int i = 0; i < strip; ++i) {
        // Load the row after `below` while this row is updated.
        load += w;
        if (++ahead == h) {
            ahead = 0;
            load = col;
        }
        int after = i + 1 < rows ? *load : 0;
        int sum_below = sums.of(below);
        if (interior && i < rows)
            *out = NEXT_STATE(here, sum_above + sum_here + sum_below - here);
        out += w;
        sum_above = sum_here;
        sum_here = sum_below;
        here = below;
        below = after;
    }
}
