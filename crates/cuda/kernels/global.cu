// cuda-global and cuda-constant: byte cells with ghost cells.
//
// Ghost cells for byte grids of (W+2) x (H+2) bytes, row stride W+2 (the layout of the seeds'
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
// reading its eight neighbours from global memory.
extern "C" __global__ void update_cells(const unsigned char *grid, unsigned char *next, int w, int h)
{
    long long stride = w + 2;
    int x = blockIdx.x * blockDim.x + threadIdx.x + 1;
    if (x > w)
        return;
    for (long long y = blockIdx.y * (long long)blockDim.y + threadIdx.y + 1; y <= h;
         y += (long long)gridDim.y * blockDim.y) {
        // Three row pointers, then small offsets: one 64-bit multiply per cell.
        const unsigned char *mid = grid + y * stride + x;
        const unsigned char *up = mid - stride, *down = mid + stride;
        int n = up[-1] + up[0] + up[1] + mid[-1] + mid[1] + down[-1] + down[0] + down[1];
        next[mid - grid] = NEXT_STATE(mid[0], n);
    }
}
