// cuda-shared (the OLCF scheme): blocks overlap by two cells. Each thread loads one cell of the
// block's tile into shared memory, the tile being the block's interior plus a one-cell halo; after
// one barrier the interior threads, (blockDim.x - 2) x (blockDim.y - 2) of them, update their
// cells from the tile. Cells are bytes, W x H row-major with no ghost cells: halo cells are read
// with wrap-around indices, so one launch makes one generation. The tile takes
// blockDim.x * blockDim.y bytes of dynamic shared memory. The rule comes from rule.cu.

// v is within one cell of [0, n) except on tiny grids (n smaller than a tile), which need the
// modulo.
__device__ __forceinline__ long long wrap(long long v, int n)
{
    if (v < 0)
        v += n;
    else if (v >= n)
        v -= n;
    return v >= 0 && v < n ? v : ((v % n) + n) % n;
}

// Index is int when the host knows that the grid has fewer than 2^31 cells and that the launch
// covers every row (no loop); else long long with a grid-stride loop over rows of tiles.
template <typename Index, bool Loop>
__device__ __forceinline__ void update(const unsigned char *grid, unsigned char *next, int w, int h)
{
    extern __shared__ unsigned char tile[];
    int bw = blockDim.x, bh = blockDim.y;
    int tx = threadIdx.x, ty = threadIdx.y;
    Index x = blockIdx.x * (Index)(bw - 2) + tx - 1;
    Index gx = (Index)wrap(x, w);
    bool interior = tx >= 1 && tx < bw - 1 && ty >= 1 && ty < bh - 1 && x < w;
    Index top = blockIdx.y * (Index)(bh - 2);
    do {
        if (top >= h)
            return;
        Index y = top + ty - 1;
        tile[ty * bw + tx] = grid[(Index)wrap(y, h) * w + gx];
        __syncthreads();
        if (interior && y < h) {
            const unsigned char *c = tile + ty * bw + tx;
            int n = c[-bw - 1] + c[-bw] + c[-bw + 1] + c[-1] + c[1] + c[bw - 1] + c[bw] + c[bw + 1];
            next[y * w + x] = NEXT_STATE(c[0], n);
        }
        if (Loop)
            __syncthreads();
        top += (Index)gridDim.y * (bh - 2);
    } while (Loop);
}

extern "C" __global__ void update_cells_shared(const unsigned char *grid, unsigned char *next, int w, int h)
{
    update<long long, true>(grid, next, w, h);
}

extern "C" __global__ void update_cells_shared_small(const unsigned char *grid, unsigned char *next, int w, int h)
{
    update<int, false>(grid, next, w, h);
}
