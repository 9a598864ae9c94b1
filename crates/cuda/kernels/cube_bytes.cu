// The 3D byte-cell engines: cell (x, y, z) of the M^3 torus is byte x*M*M + y*M + z (the .bin
// order), 1 alive, 0 dead; a slab of a cube has `planes` planes of constant x instead of M, and
// x wraps at `planes`. The torus wraps by index arithmetic, without ghost cells. The rule comes
// from rule.cu; a live cell's count excludes itself.

// v is at most a block away from [0, m); tiny cubes need the full modulo.
__device__ __forceinline__ int wrap(int v, int m) { return ((v % m) + m) % m; }

// cuda-global (v0 of the 3D Life article, docs/lineage.md): one thread per cell, threads along z (the fastest axis), blocks
// over (z, y) tiles, the grid's z dimension striding over the planes of constant x.
extern "C" __global__ void cube_global(const unsigned char *cells, unsigned char *next, int m,
                                       int planes)
{
    int z = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (z >= m || y >= m)
        return;
    long long plane = (long long)m * m;
    long long ys[3] = {(long long)before(y, m) * m, (long long)y * m, (long long)after(y, m) * m};
    int zs[3] = {before(z, m), z, after(z, m)};
    for (int x = blockIdx.z; x < planes; x += gridDim.z) {
        long long xs[3] = {before(x, planes) * plane, x * plane, after(x, planes) * plane};
        int n = 0;
#pragma unroll
        for (int i = 0; i < 3; ++i)
#pragma unroll
            for (int j = 0; j < 3; ++j)
#pragma unroll
                for (int k = 0; k < 3; ++k)
                    n += cells[xs[i] + ys[j] + zs[k]];
        long long at = xs[1] + ys[1] + z;
        unsigned char self = cells[at];
        next[at] = NEXT_STATE(self, n - self);
    }
}

// cuda-shared (v1 of the 3D Life article, 2.5D blocking): a block loads a (z, y) tile plus a one-cell halo,
// blockDim.x * blockDim.y cells, of three consecutive planes of constant x into shared memory,
// then streams along x through `depth` planes, loading one new plane per step (the three plane
// buffers rotate instead of being copied). The interior (blockDim.x - 2) * (blockDim.y - 2)
// threads write their cells. Dynamic shared memory: 3 * blockDim.x * blockDim.y bytes.
extern "C" __global__ void cube_shared(const unsigned char *cells, unsigned char *next, int m,
                                       int planes, int depth)
{
    extern __shared__ unsigned char tiles[];
    int bw = blockDim.x, bh = blockDim.y, tx = threadIdx.x, ty = threadIdx.y;
    int z = blockIdx.x * (bw - 2) + tx - 1;
    int y = blockIdx.y * (bh - 2) + ty - 1;
    int x0 = blockIdx.z * depth;
    if (x0 >= planes)
        return;
    int x1 = min(x0 + depth, planes);
    bool interior = tx >= 1 && tx < bw - 1 && ty >= 1 && ty < bh - 1 && z < m && y < m;
    long long plane = (long long)m * m;
    long long at = (long long)wrap(y, m) * m + wrap(z, m);
    int t = ty * bw + tx, area = bw * bh;
    unsigned char *prev = tiles, *mid = tiles + area, *last = tiles + 2 * area;
    prev[t] = cells[before(x0, planes) * plane + at];
    mid[t] = cells[x0 * plane + at];
    for (int x = x0; x < x1; ++x) {
        last[t] = cells[after(x, planes) * plane + at];
        __syncthreads();
        if (interior) {
            int n = 0;
#pragma unroll
            for (int dy = -1; dy <= 1; ++dy)
#pragma unroll
                for (int dz = -1; dz <= 1; ++dz) {
                    int u = t + dy * bw + dz;
                    n += prev[u] + mid[u] + last[u];
                }
            unsigned char self = mid[t];
            next[x * plane + (long long)y * m + z] = NEXT_STATE(self, n - self);
        }
        __syncthreads();
        unsigned char *spare = prev;
        prev = mid;
        mid = last;
        last = spare;
    }
}
