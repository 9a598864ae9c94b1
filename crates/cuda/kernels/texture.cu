// cuda-texture: cells are bytes in a CUDA array read through a texture object with wrap
// addressing on normalised coordinates, so the texture unit does the torus; the next state is
// written through a surface object into a second array (the two swap roles each generation).
// Threads walk down strips of rows, exchanging row neighbours through shared memory (strip.cu
// has the layout). The rule comes from rule.cu.
extern "C" __global__ void update_cells_texture(unsigned long long tex, unsigned long long surf, int w, int h, int strip)
{
    extern __shared__ unsigned char shared[];
    int first = (int)strip_first_row(strip);
    int x = (int)strip_column();
    bool interior = strip_interior() && x < w;
    RowSums sums(shared);
    float u = (x + 0.5f) / w, dy = 1.0f / h;
    // The cell above the strip, the first row's, and the one below it; then one row ahead.
    // Strips past the last row fetch wrapped rows and store nothing.
    int above = tex2D<unsigned char>(tex, u, (first - 0.5f) * dy);
    int here = tex2D<unsigned char>(tex, u, (first + 0.5f) * dy);
    int below = tex2D<unsigned char>(tex, u, (first + 1.5f) * dy);
    int sum_above = sums.of(above), sum_here = sums.of(here);
    int end = first + strip < h ? first + strip : h;
    for (int y = first; y < first + strip; ++y) {
        int after = y + 1 < end ? tex2D<unsigned char>(tex, u, (y + 2.5f) * dy) : 0;
        int sum_below = sums.of(below);
        if (interior && y < end)
            surf2Dwrite((unsigned char)NEXT_STATE(here, sum_above + sum_here + sum_below - here), surf, x, y);
        sum_above = sum_here;
        sum_here = sum_below;
        here = below;
        below = after;
    }
}
