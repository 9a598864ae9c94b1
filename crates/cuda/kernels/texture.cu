// cuda-texture: cells are bytes in a CUDA array read through a texture object with wrap
// addressing on normalised coordinates, so the texture unit does the torus; the next state is
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
