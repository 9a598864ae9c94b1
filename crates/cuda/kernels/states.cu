// cuda-states: byte cells of up to 256 states (W×H bytes, row-major, no ghosts) under rule
// tables and Larger than Life rules. Nothing of the rule is compiled in: one module serves
// every rule, which the host passes as arguments and tables.
//
// Rule tables (flat lookup): a thread updates four consecutive cells of a row (a word where
// the width is a multiple of four) down a band of rows, the three rows it reads kept in
// registers; a cell's index
// is the sum over its 3x3 neighbourhood of state x weight (weights[9], row-major; 0 for the
// cells the table never reads), and its next state is entry `index` of the lookup, packed
// `bits` (1, 2, 4 or 8) to an entry, 32 / bits entries a word, lowest bits first. The
// lookup is copied into shared memory where it fits (table_shared), else read through the
// read-only cache (table_global). Tables too large for a flat lookup walk their tree
// (table_tree): `states` words a node, children's offsets, the centre's level giving states.
//
// Larger than Life: ltl_rows8 (ltl_rows) writes each row's sums of live cells (state 1) over
// the 2r + 1 cells centred on each column (wrapped on a torus, empty past a bounded plane's
// edges) as u8 up to range 127 (u16 above), from a prefix sum of a segment of the row in
// shared memory; ltl_square8 (ltl_square, and ltl_square4_8 and ltl_square4 four columns a
// thread) then walks strips of rows down each column, keeping the running sum of 2r + 1 row sums (the square's
// count, O(1) a cell at any range). The diamond and the disc: ltl_prefix writes each row's
// prefix sums (u32, the row extended by r each side), one block a row, and ltl_shaped adds
// 2r + 1 differences of them per cell, one for each row of the neighbourhood (O(r) a cell).

#define WRAP_ROW(y, h) ((y) < 0 ? (y) + (h) : ((y) >= (h) ? (y) - (h) : (y)))

__device__ __forceinline__ int wrapped(long long v, long long n) {
    long long m = v % n;
    return (int)(m < 0 ? m + n : m);
}

// The state at (x, y) for x, y at most one step outside the grid.
__device__ __forceinline__ unsigned int cell_at(const unsigned char* __restrict__ cells,
                                                int x, int y, int w, int h, int wrap) {
    if (x < 0 || x >= w || y < 0 || y >= h) {
        if (!wrap) return 0;
        x = WRAP_ROW(x, w);
        y = WRAP_ROW(y, h);
    }
    return __ldg(&cells[(size_t)y * w + x]);
}

struct Weights { int w[9]; };

// Columns x0 - 1 .. x0 + 4 of row y (any row one step outside the grid): wrapped, or empty
// past a bounded plane's edges; the columns past column w, which only cells past the row's
// end would read, left empty. `words`: the width is a multiple of four, so that the middle
// four are one aligned word.
__device__ __forceinline__ void load_columns(unsigned int* s, const unsigned char* __restrict__ cells,
                                             int x0, int y, int w, int h, int wrap, bool words) {
    if ((y < 0 || y >= h) && !wrap) {
#pragma unroll
        for (int c = 0; c < 6; c++) s[c] = 0;
        return;
    }
    const unsigned char* row = cells + (size_t)WRAP_ROW(y, h) * w;
    if (words) {
        const unsigned int middle = __ldg((const unsigned int*)(row + x0));
#pragma unroll
        for (int c = 0; c < 4; c++) s[c + 1] = (middle >> (8 * c)) & 0xffu;
    } else {
#pragma unroll
        for (int c = 1; c < 5; c++) {
            s[c] = x0 + c - 1 < w ? __ldg(&row[x0 + c - 1])
                 : (x0 + c - 1 == w && wrap ? __ldg(&row[0]) : 0);
        }
    }
    s[0] = x0 > 0 ? __ldg(&row[x0 - 1]) : (wrap ? __ldg(&row[w - 1]) : 0);
    s[5] = x0 + 4 < w ? __ldg(&row[x0 + 4]) : (x0 + 4 == w && wrap ? __ldg(&row[0]) : 0);
}

// A thread takes four cells of a row (blocks along x cover the row) down a band of
// consecutive rows (one band for each block along y), keeping the three rows it reads in
// registers: each row below is loaded once.
template <bool SHARED>
__device__ __forceinline__ void table_cells(const unsigned char* __restrict__ cells,
                                            unsigned char* __restrict__ next,
                                            const unsigned int* __restrict__ lookup,
                                            const unsigned int* table, Weights weights,
                                            int bits, int w, int h, int wrap) {
    const int quads_per_row = (w + 3) / 4;
    const unsigned int mask = (1u << bits) - 1u;
    const int per_word_log = 5 - (31 - __clz(bits));
    const int quad = blockIdx.x * blockDim.x + threadIdx.x;
    if (quad >= quads_per_row) return;
    const int x0 = quad * 4;
    const bool words = (w & 3) == 0;
    const int band = (h + gridDim.y - 1) / gridDim.y;
    const int top = blockIdx.y * band, bottom = min(h, top + band);
    if (top >= bottom) return;
    unsigned int s[3][6];
    load_columns(s[0], cells, x0, top - 1, w, h, wrap, words);
    load_columns(s[1], cells, x0, top, w, h, wrap, words);
    for (int y = top; y < bottom; y++) {
        load_columns(s[2], cells, x0, y + 1, w, h, wrap, words);
        unsigned int out = 0;
#pragma unroll
        for (int k = 0; k < 4; k++) {
            unsigned int index = 0;
#pragma unroll
            for (int r = 0; r < 3; r++) {
#pragma unroll
                for (int c = 0; c < 3; c++) {
                    index += s[r][k + c] * (unsigned int)weights.w[3 * r + c];
                }
            }
            const unsigned int word = SHARED ? table[index >> per_word_log]
                                             : __ldg(&lookup[index >> per_word_log]);
            const unsigned int shift = (index & ((1u << per_word_log) - 1u)) * bits;
            out |= ((word >> shift) & mask) << (8 * k);
        }
        unsigned char* line = next + (size_t)y * w;
        if (words) {
            *(unsigned int*)(line + x0) = out;
        } else {
#pragma unroll
            for (int k = 0; k < 4; k++) {
                if (x0 + k < w) line[x0 + k] = (unsigned char)(out >> (8 * k));
            }
        }
#pragma unroll
        for (int c = 0; c < 6; c++) {
            s[0][c] = s[1][c];
            s[1][c] = s[2][c];
        }
    }
}

extern "C" __global__ void table_shared(const unsigned char* __restrict__ cells,
                                        unsigned char* __restrict__ next,
                                        const unsigned int* __restrict__ lookup, int words,
                                        Weights weights, int bits, int w, int h, int wrap) {
    extern __shared__ unsigned int table[];
    for (int i = threadIdx.x; i < words; i += blockDim.x) table[i] = __ldg(&lookup[i]);
    __syncthreads();
    table_cells<true>(cells, next, lookup, table, weights, bits, w, h, wrap);
}

extern "C" __global__ void table_global(const unsigned char* __restrict__ cells,
                                        unsigned char* __restrict__ next,
                                        const unsigned int* __restrict__ lookup, int words,
                                        Weights weights, int bits, int w, int h, int wrap) {
    table_cells<false>(cells, next, lookup, lookup, weights, bits, w, h, wrap);
}

// Golly's tree order: NW, NE, SW, SE, N, W, E, S, centre (eight), or N, W, E, S, centre.
extern "C" __global__ void table_tree(const unsigned char* __restrict__ cells,
                                      unsigned char* __restrict__ next,
                                      const unsigned int* __restrict__ nodes, unsigned int root,
                                      int eight, int w, int h, int wrap) {
    const long long total = (long long)w * h;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        const int y = (int)(i / w), x = (int)(i % w);
        unsigned int node = root;
        if (eight) {
            node = __ldg(&nodes[node + cell_at(cells, x - 1, y - 1, w, h, wrap)]);
            node = __ldg(&nodes[node + cell_at(cells, x + 1, y - 1, w, h, wrap)]);
            node = __ldg(&nodes[node + cell_at(cells, x - 1, y + 1, w, h, wrap)]);
            node = __ldg(&nodes[node + cell_at(cells, x + 1, y + 1, w, h, wrap)]);
        }
        node = __ldg(&nodes[node + cell_at(cells, x, y - 1, w, h, wrap)]);
        node = __ldg(&nodes[node + cell_at(cells, x - 1, y, w, h, wrap)]);
        node = __ldg(&nodes[node + cell_at(cells, x + 1, y, w, h, wrap)]);
        node = __ldg(&nodes[node + cell_at(cells, x, y + 1, w, h, wrap)]);
        next[i] = (unsigned char)__ldg(&nodes[node + cell_at(cells, x, y, w, h, wrap)]);
    }
}

// Live cells (state 1) of the row at column x (any integer): wrapped, or none outside.
__device__ __forceinline__ unsigned int live_at(const unsigned char* __restrict__ row,
                                                long long x, int w, int wrap) {
    if (x < 0 || x >= w) {
        if (!wrap) return 0;
        x = wrapped(x, w);
    }
    return __ldg(&row[x]) == 1;
}

// Block-wide exclusive scan of one value per thread (blockDim.x a multiple of 32, at most 1024).
__device__ __forceinline__ unsigned int block_exclusive_scan(unsigned int value,
                                                             unsigned int* warp_sums,
                                                             unsigned int* total) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    unsigned int inclusive = value;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        unsigned int other = __shfl_up_sync(0xffffffffu, inclusive, d);
        if (lane >= d) inclusive += other;
    }
    if (lane == 31) warp_sums[warp] = inclusive;
    __syncthreads();
    if (warp == 0) {
        const int warps = blockDim.x >> 5;
        unsigned int sum = lane < warps ? warp_sums[lane] : 0;
#pragma unroll
        for (int d = 1; d < 32; d <<= 1) {
            unsigned int other = __shfl_up_sync(0xffffffffu, sum, d);
            if (lane >= d) sum += other;
        }
        if (lane < warps) warp_sums[lane] = sum;
        if (lane == warps - 1) *total = sum;
    }
    __syncthreads();
    const unsigned int before = warp == 0 ? 0 : warp_sums[warp - 1];
    const unsigned int result = before + inclusive - value;
    __syncthreads();
    return result;
}

// Blocks along x take segments of `segment` columns, blocks along y rows (grid-stride): the
// sums of the 2r + 1 live cells centred on each column, as S (u8 up to range 127, else u16).
// The segment's live cells are loaded side by side (coalesced) into shared memory, each
// thread then scans its own run of them, and one block-wide scan joins the runs.
template <typename S>
__device__ __forceinline__ void row_sums_of(const unsigned char* __restrict__ cells,
                                            S* __restrict__ sums, int w, int h, int r, int wrap,
                                            int segment) {
    extern __shared__ unsigned int prefix[];
    __shared__ unsigned int warp_sums[32];
    __shared__ unsigned int total;
    const int span = segment + 2 * r;
    const int per = (span + blockDim.x - 1) / blockDim.x;
    for (int y = blockIdx.y; y < h; y += gridDim.y) {
        const unsigned char* row = cells + (size_t)y * w;
        for (long long first = (long long)blockIdx.x * segment; first < w;
             first += (long long)gridDim.x * segment) {
            // prefix[i]: first the live cell at column first - r + i, then the live cells of
            // columns first - r .. first - r + i - 1.
            for (int i = threadIdx.x; i < span; i += blockDim.x) {
                prefix[i] = live_at(row, first - r + i, w, wrap);
            }
            __syncthreads();
            const int begin = threadIdx.x * per;
            unsigned int own = 0;
            for (int k = 0; k < per; k++) {
                if (begin + k < span) own += prefix[begin + k];
            }
            unsigned int running = block_exclusive_scan(own, warp_sums, &total);
            for (int k = 0; k < per; k++) {
                const int i = begin + k;
                if (i < span) {
                    const unsigned int live = prefix[i];
                    prefix[i] = running;
                    running += live;
                }
            }
            if (threadIdx.x == 0) prefix[span] = total;
            __syncthreads();
            for (int i = threadIdx.x; i < segment && first + i < w; i += blockDim.x) {
                sums[(size_t)y * w + first + i] = (S)(prefix[i + 2 * r + 1] - prefix[i]);
            }
            __syncthreads();
        }
    }
}

extern "C" __global__ void ltl_rows(const unsigned char* __restrict__ cells,
                                    unsigned short* __restrict__ sums, int w, int h, int r,
                                    int wrap, int segment) {
    row_sums_of(cells, sums, w, h, r, wrap, segment);
}

extern "C" __global__ void ltl_rows8(const unsigned char* __restrict__ cells,
                                     unsigned char* __restrict__ sums, int w, int h, int r,
                                     int wrap, int segment) {
    row_sums_of(cells, sums, w, h, r, wrap, segment);
}

struct Larger {
    int r, middle, states;
    unsigned int birth_low, birth_high, survive_low, survive_high;
};

__device__ __forceinline__ unsigned char larger_next(Larger rule, unsigned char state,
                                                     unsigned int count) {
    const bool live = state == 1;
    count -= (!rule.middle && live) ? 1u : 0u;
    if (state == 0) return rule.birth_low <= count && count <= rule.birth_high;
    if (live && rule.survive_low <= count && count <= rule.survive_high) return 1;
    return (int)state + 1 < rule.states ? state + 1 : 0;
}

// A thread per column, walking a strip of `strip` rows (blockIdx.y the strip).
template <typename S>
__device__ __forceinline__ void square_of(const unsigned char* __restrict__ cells,
                                          const S* __restrict__ sums,
                                          unsigned char* __restrict__ next, int w, int h,
                                          int wrap, Larger rule, int strip) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= w) return;
    const int top = blockIdx.y * strip;
    const int bottom = min(h, top + strip);
    const int r = rule.r;
    auto row_sum = [&](long long y) -> unsigned int {
        if (y < 0 || y >= h) {
            if (!wrap) return 0;
            y = wrapped(y, h);
        }
        return __ldg(&sums[(size_t)y * w + x]);
    };
    unsigned int count = 0;
    for (long long y = (long long)top - r; y <= (long long)top + r; y++) count += row_sum(y);
    for (int y = top; y < bottom; y++) {
        const size_t at = (size_t)y * w + x;
        next[at] = larger_next(rule, __ldg(&cells[at]), count);
        count += row_sum((long long)y + r + 1);
        count -= row_sum((long long)y - r);
    }
}

extern "C" __global__ void ltl_square(const unsigned char* __restrict__ cells,
                                      const unsigned short* __restrict__ sums,
                                      unsigned char* __restrict__ next, int w, int h, int wrap,
                                      Larger rule, int strip) {
    square_of(cells, sums, next, w, h, wrap, rule, strip);
}

extern "C" __global__ void ltl_square8(const unsigned char* __restrict__ cells,
                                       const unsigned char* __restrict__ sums,
                                       unsigned char* __restrict__ next, int w, int h, int wrap,
                                       Larger rule, int strip) {
    square_of(cells, sums, next, w, h, wrap, rule, strip);
}

// Four row sums of S at `at`, aligned: two words of u16, one of u8.
__device__ __forceinline__ void four_sums(const unsigned short* sums, unsigned int* out) {
    const uint2 pair = __ldg((const uint2*)sums);
    out[0] = pair.x & 0xffffu;
    out[1] = pair.x >> 16;
    out[2] = pair.y & 0xffffu;
    out[3] = pair.y >> 16;
}

__device__ __forceinline__ void four_sums(const unsigned char* sums, unsigned int* out) {
    const unsigned int word = __ldg((const unsigned int*)sums);
#pragma unroll
    for (int k = 0; k < 4; k++) out[k] = (word >> (8 * k)) & 0xffu;
}

// As ltl_square for widths that are multiples of four: a thread per four columns, their
// cells read and written as one word and their row sums as one or two.
template <typename S>
__device__ __forceinline__ void square4_of(const unsigned char* __restrict__ cells,
                                           const S* __restrict__ sums,
                                           unsigned char* __restrict__ next, int w, int h,
                                           int wrap, Larger rule, int strip) {
    const int x = 4 * (blockIdx.x * blockDim.x + threadIdx.x);
    if (x >= w) return;
    const int top = blockIdx.y * strip;
    const int bottom = min(h, top + strip);
    const int r = rule.r;
    auto row_sums = [&](long long y, unsigned int* out) {
        if (y < 0 || y >= h) {
            if (!wrap) {
                out[0] = out[1] = out[2] = out[3] = 0;
                return;
            }
            y = wrapped(y, h);
        }
        four_sums(sums + (size_t)y * w + x, out);
    };
    unsigned int count[4] = {0, 0, 0, 0}, in[4], out[4];
    for (long long y = (long long)top - r; y <= (long long)top + r; y++) {
        row_sums(y, in);
#pragma unroll
        for (int k = 0; k < 4; k++) count[k] += in[k];
    }
    for (int y = top; y < bottom; y++) {
        const size_t at = (size_t)y * w + x;
        const unsigned int states = __ldg((const unsigned int*)(cells + at));
        unsigned int result = 0;
#pragma unroll
        for (int k = 0; k < 4; k++) {
            result |= (unsigned int)larger_next(rule, (states >> (8 * k)) & 0xffu, count[k]) << (8 * k);
        }
        *(unsigned int*)(next + at) = result;
        row_sums((long long)y + r + 1, in);
        row_sums((long long)y - r, out);
#pragma unroll
        for (int k = 0; k < 4; k++) count[k] += in[k] - out[k];
    }
}

extern "C" __global__ void ltl_square4(const unsigned char* __restrict__ cells,
                                       const unsigned short* __restrict__ sums,
                                       unsigned char* __restrict__ next, int w, int h, int wrap,
                                       Larger rule, int strip) {
    square4_of(cells, sums, next, w, h, wrap, rule, strip);
}

extern "C" __global__ void ltl_square4_8(const unsigned char* __restrict__ cells,
                                         const unsigned char* __restrict__ sums,
                                         unsigned char* __restrict__ next, int w, int h,
                                         int wrap, Larger rule, int strip) {
    square4_of(cells, sums, next, w, h, wrap, rule, strip);
}

// One block per row (blockIdx.x): prefix[i] over the row extended by r each side (span
// w + 2r + 1 words a row), in chunks of blockDim.x cells carried from one to the next.
extern "C" __global__ void ltl_prefix(const unsigned char* __restrict__ cells,
                                      unsigned int* __restrict__ prefix, int w, int h, int r,
                                      int wrap) {
    __shared__ unsigned int warp_sums[32];
    __shared__ unsigned int total;
    const long long span = (long long)w + 2 * r;
    for (int y = blockIdx.x; y < h; y += gridDim.x) {
        const unsigned char* row = cells + (size_t)y * w;
        unsigned int* out = prefix + (size_t)y * (span + 1);
        unsigned int carry = 0;
        if (threadIdx.x == 0) out[0] = 0;
        for (long long base = 0; base < span; base += blockDim.x) {
            const long long i = base + threadIdx.x;
            const unsigned int own = i < span ? live_at(row, i - r, w, wrap) : 0;
            const unsigned int before = block_exclusive_scan(own, warp_sums, &total);
            if (i < span) out[i + 1] = carry + before + own;
            carry += total;
            __syncthreads();
        }
    }
}

// A thread per cell: the sum over the neighbourhood's rows of each row's cells within
// reach[|dy|] of the column.
extern "C" __global__ void ltl_shaped(const unsigned char* __restrict__ cells,
                                      const unsigned int* __restrict__ prefix,
                                      const int* __restrict__ reach,
                                      unsigned char* __restrict__ next, int w, int h, int wrap,
                                      Larger rule) {
    const long long total = (long long)w * h;
    const int r = rule.r;
    const size_t stride = (size_t)w + 2 * r + 1;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        const int y = (int)(i / w), x = (int)(i % w);
        unsigned int count = 0;
        for (int dy = -r; dy <= r; dy++) {
            long long yy = (long long)y + dy;
            if (yy < 0 || yy >= h) {
                if (!wrap) continue;
                yy = wrapped(yy, h);
            }
            const int half = __ldg(&reach[dy < 0 ? -dy : dy]);
            const unsigned int* sums = prefix + (size_t)yy * stride;
            count += __ldg(&sums[x + r + half + 1]) - __ldg(&sums[x + r - half]);
        }
        next[i] = larger_next(rule, __ldg(&cells[i]), count);
    }
}
