// cuda-shared: each block loads its tile plus a one-cell halo into shared memory, then each
// thread updates one cell from the tile. Cells are bytes, W x H row-major with no ghost cells:
// the halo is read with wrap-around indices, so one launch makes one generation. The tile is
// (blockDim.x + 2) x (blockDim.y + 2) bytes of dynamic shared memory. The rule comes from rule.cu.

// v is within one tile of [0, n); tiny grids (n smaller than a tile) need the modulo.
__device__ __forceinline__ int wrap(long long v, int n)
{
    if (v < 0)
        v += n;
    else if (v >= n)
        v -= n;
    return v >= 0 && v < n ? (int)v : (int)(((v % n) + n) % n);
}

extern "C" __global__ void update_cells_shared(const unsigned char *grid, unsigned char *next, int w, int h)
{
    extern __shared__ unsigned char tile[];
    int bw = blockDim.x, bh = blockDim.y;
    int tw = bw + 2, th = bh + 2;
    int x0 = blockIdx.x * bw;
    for (long long y0 = blockIdx.y * (long long)bh; y0 < h; y0 += (long long)gridDim.y * bh) {
        for (int ty = threadIdx.y; ty < th; ty += bh) {
            const unsigned char *row = grid + (long long)wrap(y0 + ty - 1, h) * w;
            for (int tx = threadIdx.x; tx < tw; tx += bw)
                tile[ty * tw + tx] = row[wrap(x0 + tx - 1, w)];
        }
        __syncthreads();
        int x = x0 + threadIdx.x;
        long long y = y0 + threadIdx.y;
        if (x < w && y < h) {
            const unsigned char *c = tile + (threadIdx.y + 1) * tw + threadIdx.x + 1;
            int n = c[-tw - 1] + c[-tw] + c[-tw + 1] + c[-1] + c[1] + c[tw - 1] + c[tw] + c[tw + 1];
            next[y * w + x] = NEXT_STATE(c[0], n);
        }
        __syncthreads();
    }
}
