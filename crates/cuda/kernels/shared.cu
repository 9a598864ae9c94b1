// cuda-shared: each block loads its tile plus a one-cell halo into shared memory, then each
// thread updates one cell from the tile. Cells are bytes, W x H row-major with no ghost cells:
// the halo is read with wrap-around indices, so one launch makes one generation. The tile is
// (blockDim.x + 2) x (blockDim.y + 2) bytes of dynamic shared memory. The rule comes from rule.cu.

__device__ __forceinline__ int wrap(long long v, int n)
{
    long long r = v % n;
    return (int)(r < 0 ? r + n : r);
}

extern "C" __global__ void update_cells_shared(const unsigned char *grid, unsigned char *next, int w, int h)
{
    extern __shared__ unsigned char tile[];
    int bw = blockDim.x, bh = blockDim.y;
    int tw = bw + 2, th = bh + 2;
    int x0 = blockIdx.x * bw;
    int threads = bw * bh;
    int me = threadIdx.y * bw + threadIdx.x;
    for (long long y0 = blockIdx.y * (long long)bh; y0 < h; y0 += (long long)gridDim.y * bh) {
        for (int k = me; k < tw * th; k += threads) {
            int tx = k % tw, ty = k / tw;
            int gx = wrap(x0 + tx - 1, w);
            int gy = wrap(y0 + ty - 1, h);
            tile[k] = grid[(long long)gy * w + gx];
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
