// cuda-lut and cuda-lut6: cells packed 32 per 32-bit word (cell x of a row at bit x % 32 of word
// x / 32, rows of nw = ceil(W/32) words, padding bits zero). One thread computes one word.
// cuda-lut: for each pair of cells (x, x+1) the 4x3 window of cells x-1 .. x+2 on the rows
// above, at and below indexes a 4096-entry table whose bits 0 and 1 are the pair's next states.
// cuda-lut6: for each four cells x .. x+3 the 6x3 window of cells x-1 .. x+4 indexes a 2^18-entry
// table of 4-bit entries, two per byte (128 KiB). The host builds the tables for the rule; each
// block copies its table into shared memory.

__device__ __forceinline__ unsigned int cell(const unsigned int *row, int x)
{
    return (row[x >> 5] >> (x & 31)) & 1u;
}

#ifdef PLANE
#define WRAPS 0u
#else
#define WRAPS 1u
#endif

// Bits 0..33 of the result are cells 32*i - 1 .. 32*i + 32 of the row, wrapping around the torus,
// or dead past the row's ends on a bounded plane (PLANE defined; bits past the row's last cell
// are only exact as far as the last cell's neighbours need).
__device__ __forceinline__ unsigned long long window(const unsigned int *row, int i, int nw, int w)
{
    unsigned int left = i > 0 ? row[i - 1] >> 31 : cell(row, w - 1) & WRAPS;
    unsigned int right = i + 1 < nw ? row[i + 1] : row[0] * WRAPS;
    unsigned long long bits = ((unsigned long long)right << 33) | ((unsigned long long)row[i] << 1) | left;
    int valid = w - 32 * i;
    if (valid < 32) {
        // The last word of a row whose width is not a multiple of 32: window bits valid + 1
        // and valid + 2 are cells W and W + 1, which wrap to cells 0 and 1 (mod W).
        bits &= (2ull << valid) - 1;
        bits |= (unsigned long long)(cell(row, 0) & WRAPS) << (valid + 1);
        bits |= (unsigned long long)(cell(row, 1 % w) & WRAPS) << (valid + 2);
    }
    return bits;
}

// The window of row y (round the torus; dead past a bounded plane's top and bottom).
__device__ __forceinline__ unsigned long long row_window(const unsigned int *grid, long long y,
                                                         int i, int nw, int w, int h)
{
    if (!WRAPS && (y < 0 || y >= h))
        return 0;
    y = y < 0 ? h - 1 : (y >= h ? 0 : y);
    return window(grid + y * nw, i, nw, w);
}

// Next states of the C = WIN - 2 cells that window bits 1 .. C of `index` hold (bits 0 .. WIN-1
// the row above, WIN .. 2WIN-1 the row, 2WIN .. 3WIN-1 the row below): one byte per entry for the
// 4-wide window, one nibble (low for even entries) for the 6-wide one.
template <int WIN>
__device__ __forceinline__ unsigned int lookup(const unsigned char *table, unsigned int index)
{
    if (WIN == 4)
        return table[index];
    return (table[index >> 1] >> ((index & 1) * 4)) & 15u;
}

// The thread's word of every row it covers (grid-stride over rows), from a table in shared
// memory: 32 / (WIN - 2) lookups per word.
template <int WIN>
__device__ __forceinline__ void update_words(const unsigned int *grid, unsigned int *next,
                                             const unsigned char *table, int w, int h, int nw)
{
    const int cells = WIN - 2;
    const unsigned int mask = (1u << WIN) - 1u;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nw)
        return;
    unsigned int last_mask = (w & 31) ? (1u << (w & 31)) - 1u : 0xffffffffu;
    for (long long y = blockIdx.y * (long long)blockDim.y + threadIdx.y; y < h;
         y += (long long)gridDim.y * blockDim.y) {
        unsigned long long a = row_window(grid, y - 1, i, nw, w, h);
        unsigned long long m = window(grid + y * nw, i, nw, w);
        unsigned long long b = row_window(grid, y + 1, i, nw, w, h);
        unsigned int out = 0;
#pragma unroll
        for (int k = 0; k < 32 / cells; k++) {
            unsigned int index = (unsigned int)((a >> (cells * k)) & mask) |
                                 (unsigned int)(((m >> (cells * k)) & mask) << WIN) |
                                 (unsigned int)(((b >> (cells * k)) & mask) << (2 * WIN));
            out |= lookup<WIN>(table, index) << (cells * k);
        }
        next[y * nw + i] = i == nw - 1 ? out & last_mask : out;
    }
}

extern "C" __global__ void update_cells_lut(const unsigned int *grid, unsigned int *next,
                                            const unsigned char *lut, int w, int h, int nw)
{
    __shared__ unsigned char table[4096];
    int threads = blockDim.x * blockDim.y;
    for (int k = threadIdx.y * blockDim.x + threadIdx.x; k < 4096; k += threads)
        table[k] = lut[k];
    __syncthreads();
    update_words<4>(grid, next, table, w, h, nw);
}

// The 6x3 table's 2^18 four-bit entries, two per byte.
#define LUT6_BYTES (1 << 17)

extern "C" __global__ void update_cells_lut6(const unsigned int *grid, unsigned int *next,
                                             const uint4 *lut, int w, int h, int nw)
{
    extern __shared__ uint4 table6[];
    int threads = blockDim.x * blockDim.y;
    for (int k = threadIdx.y * blockDim.x + threadIdx.x; k < LUT6_BYTES / 16; k += threads)
        table6[k] = lut[k];
    __syncthreads();
    update_words<6>(grid, next, (const unsigned char *)table6, w, h, nw);
}
