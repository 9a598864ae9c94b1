// cuda-bitsliced on small grids: the whole grid stays in the shared memory of one thread-block
// cluster (compute capability 9.0) for all the generations of a launch, so that a generation
// costs one pass over shared memory and one cluster barrier instead of a kernel launch.
// Pasted after bitsliced.cu, whose `Row`, `row_of` and `evolve` it uses.
//
// Layout: the grid's rows (nw = ceil(W/32) words each, cell x at bit x % 32 of word x / 32,
// padding bits zero; rows `stride` words apart in global memory, as in bitsliced.cu) are cut
// into bands of `band` rows. Block r of the cluster holds rows [r * band, (r + 1) * band) of
// [0, h) in two buffers of band * nw words, packed without padding words: generation g is read
// from buffer g % 2 and written to the other. The rows just above and below a band are read
// from the blocks that hold them, through distributed shared memory.
//
// Work: a band is cut into segments of `length` rows, and the threads of a block share out the
// (segment, word column) pairs, consecutive threads on consecutive words. A thread walks down
// its column of the segment keeping three Rows (bitsliced.cu's counting), so each row's
// Row is made once per segment, and twice more at the segment's two edges.

// Clusters need compute capability 9.0, the only GPUs the host launches this kernel on; below
// it these helpers compile to the case of one block, so that the module still builds.
__device__ __forceinline__ unsigned int cluster_rank()
{
#if __CUDA_ARCH__ >= 900
    unsigned int rank;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    return rank;
#else
    return 0;
#endif
}

// A cluster barrier in two halves, for warps that need not arrive together: a warp's
// shared-memory accesses before its arrival are ordered before every block's accesses after
// their wait.
__device__ __forceinline__ void cluster_arrive()
{
#if __CUDA_ARCH__ >= 900
    asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
#endif
}

__device__ __forceinline__ void cluster_wait()
{
#if __CUDA_ARCH__ >= 900
    asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
#else
    __syncthreads();
#endif
}

// Every thread of the cluster waits here; the shared-memory writes before it are visible to
// every block's reads after it.
__device__ __forceinline__ void cluster_barrier()
{
    cluster_arrive();
    cluster_wait();
}

// Blocks in the cluster.
__device__ __forceinline__ unsigned int cluster_blocks()
{
#if __CUDA_ARCH__ >= 900
    unsigned int blocks;
    asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(blocks));
    return blocks;
#else
    return 1;
#endif
}

// The generic address of `local` (an address in this block's shared memory) in the shared
// memory of block `rank` of the cluster.
__device__ __forceinline__ const unsigned int *in_block(const unsigned int *local, unsigned int rank)
{
#if __CUDA_ARCH__ >= 900
    unsigned long long remote;
    asm("mapa.u64 %0, %1, %2;" : "=l"(remote) : "l"(local), "r"(rank));
    return (const unsigned int *)remote;
#else
    return local;
#endif
}

// Where a word's horizontal neighbours come from: words `left` and `right` of the row (round
// the torus), shifted by `from_left` and `to_right`. Inside a row those are the previous and
// next words' edge bits (31); word 0's left cell is cell W-1, bit (W-1) % 32 of the last word,
// and the last word's right cell, cell 0, goes to bit (W-1) % 32. Bits past the row's end then
// hold cells of no use, which the masked store clears. On a bounded plane (PLANE defined) the
// cells past the row's ends are dead: `wraps_left` and `wraps_right` clear what word 0 and the
// last word would take from the other end.
struct Column {
    int i, left, right;
    unsigned int from_left, to_right;
    unsigned int wraps_left, wraps_right;
};

__device__ __forceinline__ Column column(int i, int nw, int w)
{
    unsigned int edge = (unsigned int)(w - 1) & 31u;
    unsigned int ends = PLANE_EDGES ? 0u : FULL_MASK;
    return {i, i == 0 ? nw - 1 : i - 1, i == nw - 1 ? 0 : i + 1, i == 0 ? edge : 31u,
            i == nw - 1 ? edge : 31u, i == 0 ? ends : FULL_MASK, i == nw - 1 ? ends : FULL_MASK};
}

// The Row (bitsliced.cu) of `col`'s word of `row`, and the word's cells.
__device__ __forceinline__ Row row_sums(const unsigned int *row, Column col, unsigned int &cells)
{
    unsigned int c = row[col.i];
    unsigned int from_left = row[col.left] >> col.from_left;
    unsigned int from_right = row[col.right] << col.to_right;
    if (PLANE_EDGES) {
        from_left &= col.wraps_left;
        from_right &= col.wraps_right;
    }
    unsigned int l = (c << 1) | from_left;
    unsigned int r = (c >> 1) | from_right;
    cells = c;
    return row_of(l, c, r);
}

// Row y of the torus (-1 <= y <= h) in the buffer whose address in this block is `buffer`,
// wherever in the cluster it is held.
__device__ __forceinline__ const unsigned int *any_row(const unsigned int *buffer, int y, int h,
                                                       int band, int nw)
{
    y = y < 0 ? y + h : (y >= h ? y - h : y);
    int owner = y / band;
    return in_block(buffer + (y - owner * band) * nw, (unsigned int)owner);
}

// One thread's share of a generation: a word column of a segment of its block's band, rows
// y0..=last, and where the rows just above and below it are held (in buffer 0; buffer 1 is
// `words` further in every block).
struct Work {
    Column col;
    int y0, last;
    const unsigned int *above, *below;
    // On a bounded plane: whether the row above (below) the segment is past the grid's edge.
    bool dead_above, dead_below;
};

__device__ __forceinline__ Work work(int item, const unsigned int *buffer, int w, int h, int nw,
                                     int band, int first, int mine, int length)
{
    int segment = item / nw;
    Work k;
    k.col = column(item - segment * nw, nw, w);
    k.y0 = segment * length;
    k.last = min(k.y0 + length, mine) - 1;
    k.above = any_row(buffer, first + k.y0 - 1, h, band, nw);
    k.below = any_row(buffer, first + k.last + 1, h, band, nw);
    k.dead_above = PLANE_EDGES && first + k.y0 == 0;
    k.dead_below = PLANE_EDGES && first + k.last + 1 == h;
    return k;
}

// One generation of `k`'s column, from the buffer `from` (`shift` words into every block's
// shared memory) to `to`. The rows above and below the segment are loaded first, so that a
// remote block's latency overlaps the segment's own rows; the two buffers do not overlap
// (__restrict__), so the loads of later rows need not wait for the stores of earlier ones.
__device__ __forceinline__ void update(Work k, const unsigned int *__restrict__ from,
                                       unsigned int *__restrict__ to, int shift, int nw,
                                       unsigned int keep)
{
    unsigned int mask = k.col.i == nw - 1 ? keep : FULL_MASK;
    unsigned int middle, unused;
    Row a = row_sums(k.above + shift, k.col, unused);
    Row e = row_sums(k.below + shift, k.col, unused);
    if (k.dead_above)
        a = row_of(0u, 0u, 0u);
    if (k.dead_below)
        e = row_of(0u, 0u, 0u);
    Row b = row_sums(from + k.y0 * nw, k.col, middle);
    for (int y = k.y0; y < k.last; y++) {
        unsigned int below;
        Row c = row_sums(from + (y + 1) * nw, k.col, below);
        to[y * nw + k.col.i] = evolve<false>(a, b, c, middle) & mask;
        a = b, b = c, middle = below;
    }
    to[k.last * nw + k.col.i] = evolve<false>(a, b, e, middle) & mask;
}

// `generations` generations of the h rows of `cells`, in place. The cluster is the whole grid
// of blocks; each block takes 2 * band * nw words of dynamic shared memory. Global memory is
// read before the first cluster barrier and written after the last, so the one buffer serves as
// input and output. A thread's first item is worked out once; threads have more only where
// rows have more words than a block has threads (and update those before arriving).
extern "C" __global__ void __launch_bounds__(1024, 1)
    resident(unsigned int *cells, int w, int h, int stride, int nw, int band, int generations)
{
    extern __shared__ unsigned int rows[];
    int first = (int)cluster_rank() * band;
    int mine = max(0, min(band, h - first));
    int words = band * nw;
    int segments = max(1, min(mine, (int)blockDim.x / nw));
    int length = max(1, (mine + segments - 1) / segments);
    int items = (mine + length - 1) / length * nw;
    unsigned int keep = (w & 31) ? (1u << (w & 31)) - 1u : FULL_MASK;

    wait_for_previous_grid();
    for (int k = threadIdx.x; k < mine * nw; k += blockDim.x) {
        int y = k / nw, i = k - y * nw;
        unsigned int c = cells[(long long)(first + y) * stride + i];
        rows[k] = i == nw - 1 ? c & keep : c;
    }
    bool busy = (int)threadIdx.x < items;
    Work own = {};
    if (busy)
        own = work(threadIdx.x, rows, w, h, nw, band, first, mine, length);
    cluster_barrier();

    // Only a band's first and last rows are read by other blocks. So a warp arrives at the
    // cluster barrier once it has updated its share of those rows (and has read other blocks'
    // rows: a block writes the buffer they were read from after the barrier), then updates
    // interior rows while the barrier completes; the block's own barrier orders those. A
    // cluster of one block needs only that.
    bool edge = __any_sync(FULL_MASK, busy && (own.y0 == 0 || own.last == mine - 1));
    bool alone = cluster_blocks() == 1;
    for (int g = 0; g < generations; g++) {
        int shift = (g & 1) * words;
        const unsigned int *from = rows + shift;
        unsigned int *to = rows + (words - shift);
        if (busy && edge)
            update(own, from, to, shift, nw, keep);
        for (int item = threadIdx.x + blockDim.x; item < items; item += blockDim.x)
            update(work(item, rows, w, h, nw, band, first, mine, length), from, to, shift, nw,
                   keep);
        if (!alone)
            cluster_arrive();
        if (busy && !edge)
            update(own, from, to, shift, nw, keep);
        __syncthreads();
        if (!alone)
            cluster_wait();
    }

    const unsigned int *result = rows + (generations & 1) * words;
    for (int k = threadIdx.x; k < mine * nw; k += blockDim.x) {
        int y = k / nw, i = k - y * nw;
        cells[(long long)(first + y) * stride + i] = result[k];
    }
}
