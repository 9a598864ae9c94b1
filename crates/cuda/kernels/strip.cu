// The strips of cuda-texture (cuda-shared uses the first row's and the segment's helpers, and
// lays its segments out its own way, see shared.cu): byte cells, each thread walking down one
// column of a strip of rows, its row neighbours met in shared memory.
//
// Each row of a block is cut into segments of SEG = min(blockDim.x, 32) threads (blockDim.x is
// a power of two up to 32 or a multiple of 32, so a segment lies in one warp, and the block has
// whole warps). A segment covers
// SEG - 2 columns and one halo column each side, so neighbouring segments overlap by two
// columns. Thread row ty of block (bx, by) walks down strip number by * blockDim.y + ty, rows
// [strip * that, strip * (that + 1)) of the grid, updating one cell per row (every thread runs
// `strip` rounds, those past the last row updating nothing, so that whole warps meet at each
// __syncwarp). On the way it keeps
// three rows' worth in registers: its column's cells and, for rows above, at and below the
// current one, the sums of three neighbouring cells in the row (its own and the two beside
// it), which the segment's threads exchange through shared memory. Each of these row sums
// is written once and read by three rows' updates, so a cell costs one load, one shared store,
// two shared loads and one store.

__device__ __forceinline__ int segment_width()
{
    return blockDim.x < 32 ? blockDim.x : 32;
}

// The torus column (before wrapping) of this thread: -1 for the first block's left halo.
__device__ __forceinline__ long long strip_column()
{
    int seg = segment_width(), tx = threadIdx.x;
    long long across = (long long)(blockDim.x / seg) * (seg - 2);
    return blockIdx.x * across + tx / seg * (seg - 2) + tx % seg - 1;
}

// The first row of this thread's strip.
__device__ __forceinline__ long long strip_first_row(int strip)
{
    return ((long long)blockIdx.y * blockDim.y + threadIdx.y) * strip;
}

// Whether this thread's column is one it updates (not a segment's halo column); the caller
// also checks that the column lies on the grid.
__device__ __forceinline__ bool strip_interior()
{
    int lane = threadIdx.x % segment_width();
    return lane >= 1 && lane < segment_width() - 1;
}

// Row neighbours in shared memory: two slots per thread (the dynamic shared memory holds
// 2 * blockDim.x * blockDim.y + 2 bytes: the slots, and a byte before and after them that the
// first and last threads' neighbour reads may touch), used in turn so that one __syncwarp per
// row suffices.
struct RowSums {
    unsigned char *slot, *other;
    bool interior;

    __device__ __forceinline__ RowSums(unsigned char *shared)
    {
        int threads = blockDim.x * blockDim.y, i = threadIdx.y * blockDim.x + threadIdx.x;
        slot = shared + 1 + i;
        other = shared + 1 + threads + i;
        interior = strip_interior();
    }

    // The sum of this thread's cell `c` and the cells beside it in the same row (meaningful
    // for interior lanes only: the others read their neighbour segment's or the padding's
    // bytes, and store nothing). Every lane of the warp must call it, row after row.
    __device__ __forceinline__ int of(int c)
    {
        unsigned char *s = slot;
        slot = other;
        other = s;
        *s = (unsigned char)c;
        __syncwarp();
        return s[-1] + c + s[1];
    }

    // The same where the cell to the right, `right`, is known already (cuda-texture's gathers
    // bring it): one shared load instead of two.
    __device__ __forceinline__ int of(int c, int right)
    {
        unsigned char *s = slot;
        slot = other;
        other = s;
        *s = (unsigned char)c;
        __syncwarp();
        return s[-1] + c + right;
    }
};
