// cuda-global and cuda-constant: byte cells with ghost cells.
//
// Ghost cells for byte grids of (W+2) x (H+2) bytes, row stride W+2 (the layout of the C programs in docs/lineage.md:
// programs): before each generation the ghost columns get copies of the opposite edge columns,
// then the ghost rows (corners included) copies of the opposite edge rows. Launch
// copy_ghost_cols before copy_ghost_rows, on the same stream.

extern "C" __global__ void copy_ghost_cols(unsigned char *grid, int w, int h)
{
    for (long long y = blockIdx.x * (long long)blockDim.x + threadIdx.x + 1; y <= h;
         y += (long long)gridDim.x * blockDim.x) {
        unsigned char *row = grid + y * (w + 2);
        row[0] = row[w];
        row[w + 1] = row[1];
    }
}

extern "C" __global__ void copy_ghost_rows(unsigned char *grid, int w, int h)
{
    long long stride = w + 2;
    for (long long x = blockIdx.x * (long long)blockDim.x + threadIdx.x; x <= w + 1;
         x += (long long)gridDim.x * blockDim.x) {
        grid[x] = grid[h * stride + x];
        grid[(h + 1) * stride + x] = grid[stride + x];
    }
}

// cuda-global's update (and cuda-constant's, with another NEXT_STATE): one thread per cell
// reading its eight neighbours from global memory. Index is int when the host knows that the
// grid has fewer than 2^31 bytes and that the launch covers every row (no loop); else long long
// with a grid-stride loop over rows.
template <typename Index, bool Loop>
__device__ __forceinline__ void update(const unsigned char *grid, unsigned char *next, int w, int h)
{
    Index stride = w + 2;
    int x = blockIdx.x * blockDim.x + threadIdx.x + 1;
    Index y = blockIdx.y * (Index)blockDim.y + threadIdx.y + 1;
    if (x > w)
        return;
    do {
        if (y > h)
            return;
        Index i = y * stride + x;
        int n = grid[i - stride - 1] + grid[i - stride] + grid[i - stride + 1] + grid[i - 1] +
                grid[i + 1] + grid[i + stride - 1] + grid[i + stride] + grid[i + stride + 1];
        next[i] = NEXT_STATE(grid[i], n);
        y += (Index)gridDim.y * blockDim.y;
    } while (Loop);
}

extern "C" __global__ void update_cells(const unsigned char *grid, unsigned char *next, int w, int h)
{
    update<long long, true>(grid, next, w, h);
}

extern "C" __global__ void update_cells_small(const unsigned char *grid, unsigned char *next, int w, int h)
{
    update<int, false>(grid, next, w, h);
}
