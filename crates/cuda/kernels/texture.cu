// cuda-texture: cells are bytes in a CUDA array read through a texture object with wrap
// addressing on normalised coordinates, so the texture unit does the torus (border addressing
// on a bounded plane: zero past the edges); the next state is
// written through a surface object into a second array (the two swap roles each generation).
// Threads walk down strips of rows, exchanging row neighbours through shared memory (strip.cu
// has the layout), two rows at a time: one 2x2 gather brings a thread's cell and the one to its
// right in two rows, so a cell costs half a fetch. A gather at (x + 1, y + 1) in texel units
// (midway between texel centres, so rounding cannot pick another footprint) returns cells
// (x, y) in .w, (x + 1, y) in .z, (x, y + 1) in .x and (x + 1, y + 1) in .y.
__device__ __forceinline__ uchar4 two_rows(unsigned long long tex, float u, int y, float dy)
{
    return tex2Dgather<uchar4>(tex, u, (y + 1) * dy, 0);
}

extern "C" __global__ void update_cells_texture(unsigned long long tex, unsigned long long surf, int w, int h, int strip)
{
    extern __shared__ unsigned char shared[];
    int first = (int)strip_first_row(strip);
    int x = (int)strip_column();
    RowSums sums(shared);
    bool interior = sums.interior && x < w;
    float u = (x + 1.0f) / w, dy = 1.0f / h;
    // The rows above the strip and its first (a, b), then the next two (c, d). Strips past the
    // last row fetch wrapped rows and store nothing.
    uchar4 ab = two_rows(tex, u, first - 1, dy), cd = two_rows(tex, u, first + 1, dy);
    int sum_above = sums.of(ab.w, ab.z), sum_here = sums.of(ab.x, ab.y);
    int here = ab.x;
    int end = first + strip < h ? first + strip : h;
    for (int y = first; y < first + strip; y += 2) {
        // Rows y + 3 and y + 4, fetched while rows y and y + 1 are updated.
        uchar4 ef = y + 2 < end ? two_rows(tex, u, y + 3, dy) : make_uchar4(0, 0, 0, 0);
        int sum_below = sums.of(cd.w, cd.z);
        if (interior && y < end)
            surf2Dwrite((unsigned char)NEXT_STATE(here, sum_above + sum_here + sum_below - here), surf, x, y);
        sum_above = sum_here;
        sum_here = sum_below;
        here = cd.w;
        sum_below = sums.of(cd.x, cd.y);
        if (interior && y + 1 < end)
            surf2Dwrite((unsigned char)NEXT_STATE(here, sum_above + sum_here + sum_below - here), surf, x, y + 1);
        sum_above = sum_here;
        sum_here = sum_below;
        here = cd.x;
        cd = ef;
    }
}

// Where the width is a multiple of four, the arrays hold 32-bit texels of four cells each (cell
// x in byte x % 4 of texel x / 4, the bytes of the host's rows unchanged), so one fetch and one
// surface store move four cells: a quarter of the texture unit's work per cell of the kernel
// above, which that work bounds. A thread walks down one texel column of its strip (strip.cu's
// layout, counted in texels: segments of a warp overlap by one texel each side), its row's
// neighbour cells brought from the lanes beside it by shuffles. Sums are kept four to a word,
// one per byte (a row's three cells at most 3, a 3x3 total at most 9: no carries).

__device__ __forceinline__ unsigned quad_at(unsigned long long tex, float u, int y, float dy)
{
    return tex2D<unsigned>(tex, u, (y + 0.5f) * dy);
}

// Each byte: its cell and the cells beside it in the row. Every lane of the warp calls it.
__device__ __forceinline__ unsigned quad_row_sums(unsigned cells)
{
    int seg = segment_width();
    unsigned left = __shfl_up_sync(0xffffffffu, cells, 1, seg);
    unsigned right = __shfl_down_sync(0xffffffffu, cells, 1, seg);
    // (cells << 8 | left >> 24) puts each cell's left neighbour in its byte, and
    // (cells >> 8 | right << 24) its right one.
    return cells + __funnelshift_l(left, cells, 8) + __funnelshift_r(cells, right, 8);
}

// The next states of four cells from their 3x3 totals, a byte each.
__device__ __forceinline__ unsigned quad_next(unsigned cells, unsigned totals)
{
    // Per byte: total + 8 * state (at most 17), the bit of NEXT_STATE_OF_TOTAL's table.
    unsigned index = totals + (cells << 3), next = 0;
#pragma unroll
    for (int k = 0; k < 4; k++)
        next |= (((BIRTH | SURVIVE << 9) >> ((index >> 8 * k) & 0xffu)) & 1u) << 8 * k;
    return next;
}

// Rows a thread fetches ahead of the one it updates. With one row in flight a 16384² grid
// streamed at 1.1 TB/s, held by the fetches' latency, not by the texture unit; on the H100,
// 2 / 4 / 8 / 12 / 16 / 24 rows ahead made 6.5 / 6.8 / 7.8 / 7.8 / 8.3 / 8.2e11 cell updates/s
// there (and 16 costs 6% at 1024², where the strips are short).
#define QUAD_AHEAD 16

extern "C" __global__ void update_cells_texture_quad(unsigned long long tex, unsigned long long surf, int n, int h, int strip)
{
    int first = (int)strip_first_row(strip);
    int t = (int)strip_column();
    bool interior = strip_interior() && t < n;
    float u = (t + 0.5f) / n, dy = 1.0f / h;
    int end = first + strip < h ? first + strip : h;
    // Rows y (here), y + 1 (below) and y + 2 .. y + 1 + QUAD_AHEAD (ahead), fetched where a
    // row of the strip needs them. Strips past the last row fetch wrapped rows and store
    // nothing.
    unsigned here = quad_at(tex, u, first, dy), below = quad_at(tex, u, first + 1, dy);
    unsigned ahead[QUAD_AHEAD];
#pragma unroll
    for (int k = 0; k < QUAD_AHEAD; k++)
        ahead[k] = first + 2 + k <= end ? quad_at(tex, u, first + 2 + k, dy) : 0u;
    unsigned sums_above = quad_row_sums(quad_at(tex, u, first - 1, dy));
    unsigned sums_here = quad_row_sums(here);
#pragma unroll 4
    for (int y = first; y < first + strip; y++) {
        unsigned sums_below = quad_row_sums(below);
        if (interior && y < end)
            surf2Dwrite(quad_next(here, sums_above + sums_here + sums_below), surf, t * 4, y);
        sums_above = sums_here;
        sums_here = sums_below;
        here = below;
        below = ahead[0];
#pragma unroll
        for (int k = 0; k + 1 < QUAD_AHEAD; k++)
            ahead[k] = ahead[k + 1];
        int row = y + 2 + QUAD_AHEAD;
        ahead[QUAD_AHEAD - 1] = row <= end ? quad_at(tex, u, row, dy) : 0u;
    }
}
