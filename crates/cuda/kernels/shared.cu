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

extern "C" __global__ void update_cells_shared(const unsigned char *grid, unsigned char *next, int w, int h, int strip)
{
    extern __shared__ unsigned char shared[];
    long long first = strip_first_row(strip);
    long long x = strip_column();
    RowSums sums(shared);
    bool interior = sums.interior && x < w;
    const unsigned char *column = grid + wrap(x, w);
    // The cell above the strip, the first row's, and the one below it; then one row ahead
    // (`ahead`, wrapped, at `load`). Strips past the last row load from wrapped rows and store
    // nothing.
    int ahead = (int)wrap(first + 1, h);
    const unsigned char *load = column + (long long)ahead * w;
    int above = column[wrap(first - 1, h) * w], here = column[wrap(first, h) * w], below = *load;
    int sum_above = sums.of(above), sum_here = sums.of(here);
    unsigned char *out = next + first * w + x;
    int rows = first < h ? (int)min((long long)strip, h - first) : 0;
    for (int i = 0; i < strip; ++i) {
        // Load the row after `below` while this row is updated.
        load += w;
        if (++ahead == h) {
            ahead = 0;
            load = column;
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
