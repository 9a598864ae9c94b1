// The census's soups on the GPU (crates/cuda/src/soups.rs is the host side, gol-census's
// gpu module the census): each soup on a box of SIDE x SIDE cells under B3/S23, stepped until it
// settles, dies, comes near the box's edge or runs out of generations; the census runs boxes
// of 256 cells a side, 512 for soups that the smaller cannot hold, and 1024 for the few that
// 512 cannot.
//
// Layout. A box is SIDE rows of WORDS = SIDE / 32 32-bit words, row after row; bit b of word w
// of row y is the cell (32 w + b, y). A block of WARPS warps steps a soup, its box in shared
// memory for a launch, in place, a generation at a time, as tiles of one word and TILE rows:
// only the tiles with cells and those beside them, listed every EVERY generations and taken by
// the threads in turn. A soup's state (struct Soup, mirrored by soups.rs's SoupState) says
// which rows hold cells.
//
// The band: cells fewer than BAND from an edge. A soup stops (PAUSED) as soon as a cell is
// there, so that the box's edge, beyond which everything is taken as dead, is never near a
// cell: the host takes the escaping ships away, or gives the soup to a larger box or the CPU.
// One case the kernel settles itself, as the host would (take_glider): the band's cells are
// one glider, flying out, with no other cell within ISOLATION of it and cells left elsewhere.
// It is cleared, logged for the host (its generation, place and phase: LOGGED a soup between
// two looks, after which the soup stops as before), and the soup runs on from a new shot.
//
// Settling. Each generation's cells are hashed: each word of the box times a multiplier of its
// own (odd, one for each place in the box), the 64-bit products XORed over the block, so that
// no product waits for another and empty words add nothing. The hash of the generation shot_at
// is kept for shot_every(shot_at) generations and the soup has SETTLED when it comes back: its
// period is the generations since, the least period of a pattern that was already repeating at
// shot_at. The host checks the period on its own copy, so a false match of hashes is caught
// there (the soup then goes on in a larger box or on the CPU).
//
// Naming. Most ash is a few kinds of small object, each standing apart from the others.
// soups_live, gathering a stopped soup's live words for the host, names the ash of one settled
// with period 1 or 2 where every object is of a kind the host listed (in each orientation and
// phase) and apart: it checks the period itself, exactly, and counts each kind, so that the
// host needs only add the counts, which it gathers in place of the words (name_ash).

// The host defines SIDE (256, 512 or 1024), BAND, ISOLATION (cells round a glider taken away within
// which there is nothing else), LOGGED (gliders a soup's log holds), TILE (the rows of a tile
// soups_run steps), MOST_KINDS (the kinds of object soups_live may name), WARPS (the warps of a
// block of soups_run) and EVERY (the generations one listing of the tiles to step serves) in front
// of this, and Life's circuit, rule_next (circuit.rs's source; source.rs's soups::source).
#if !defined(SIDE) || !defined(BAND) || !defined(ISOLATION) || !defined(LOGGED) || \
    !defined(TILE) || !defined(MOST_KINDS) || !defined(WARPS) || !defined(EVERY)
#error "source.rs's soups::source() defines SIDE, BAND, ISOLATION, LOGGED, TILE, MOST_KINDS, WARPS, EVERY"
#endif
#if EVERY < 1 || EVERY > TILE
#error "a listing serves 1 to TILE generations"
#endif
#define WORDS (SIDE / 32)
// Words from one row of soups_run's box in shared memory to the next: one more than a row
// holds, so that the same word of rows a tile apart falls in another bank (tiles stepped at once
// by the lanes are one above another as often as side by side).
#define STRIDE (WORDS + 1)

#define RUNNING 0u
#define SETTLED 1u
#define PAUSED 2u
#define DIED 3u
#define GIVEN_UP 4u

// No shot taken yet: the next generation's is.
#define NO_SHOT 0xffffffffu

struct Soup {
    unsigned int generation;
    // First and last rows with live cells (within a launch of soups_run, the first row of the
    // first tile with cells and the last row of the last).
    unsigned int top, bottom;
    unsigned int status;
    unsigned int shot_at;
    unsigned int period;
    // Gliders taken away since the host last looked, in the soup's log.
    unsigned int taken;
    unsigned long long shot;
};

// A value of every lane of the warp combined (every lane calls these): one redux instruction
// each from sm_80 on, five shuffles before.
#if __CUDA_ARCH__ >= 800
__device__ __forceinline__ unsigned int warp_xor(unsigned int v) {
    return __reduce_xor_sync(~0u, v);
}
__device__ __forceinline__ unsigned int warp_or(unsigned int v) { return __reduce_or_sync(~0u, v); }
__device__ __forceinline__ int warp_min(int v) { return __reduce_min_sync(~0u, v); }
__device__ __forceinline__ int warp_max(int v) { return __reduce_max_sync(~0u, v); }
#else
template <typename T, typename Op> __device__ __forceinline__ T shuffled(T v, Op op) {
    for (int o = 16; o > 0; o /= 2) v = op(v, __shfl_xor_sync(~0u, v, o));
    return v;
}
__device__ __forceinline__ unsigned int warp_xor(unsigned int v) {
    return shuffled(v, [](unsigned int a, unsigned int b) { return a ^ b; });
}
__device__ __forceinline__ unsigned int warp_or(unsigned int v) {
    return shuffled(v, [](unsigned int a, unsigned int b) { return a | b; });
}
__device__ __forceinline__ int warp_min(int v) {
    return shuffled(v, [](int a, int b) { return min(a, b); });
}
__device__ __forceinline__ int warp_max(int v) {
    return shuffled(v, [](int a, int b) { return max(a, b); });
}
#endif

// Generations a shot taken at generation `at` is kept (census.rs's shot_every).
__device__ __forceinline__ unsigned int shot_every(unsigned int at) {
    unsigned int n = at / 16u;
    unsigned int p = n <= 1u ? 1u : 1u << (32 - __clz(n - 1u));
    return p < 32u ? 32u : p;
}

// 16 cells of row y of `box` from column x on, bit i the cell of column x + i; cells beyond
// the box are dead.
__device__ __forceinline__ unsigned int row16(const unsigned int *box, int y, int x) {
    if (y < 0 || y >= SIDE) return 0u;
    int w = x >= 0 ? x / 32 : -((31 - x) / 32);
    unsigned long long lo = w >= 0 && w < WORDS ? box[y * STRIDE + w] : 0u;
    unsigned long long hi = w + 1 >= 0 && w + 1 < WORDS ? box[y * STRIDE + w + 1] : 0u;
    return (unsigned int)((lo | hi << 32) >> (x - 32 * w)) & 0xffffu;
}

// The bits of lane `lane`'s word that row bits `bits` (bit i the cell of column x + i) cover.
__device__ __forceinline__ unsigned int lane_bits(unsigned int bits, int x, int lane) {
    int shift = x - 32 * lane;
    if (shift >= 32 || shift <= -32) return 0u;
    return shift >= 0 ? bits << shift : bits >> -shift;
}

// The band's cells, all within columns bx0..=bx1 and rows by0..=by1, taken away where they are
// one glider flying out of the box with nothing else within ISOLATION cells of it, and cells
// left elsewhere: as the host's take_ships would take it. `gliders[k]` is glider phase k: its
// 3 x 3 cells as bits 3 y + x, bit 9 set where it flies east, bit 10 where south. Returns the
// log entry (1 | phase << 1 | left << 5 | top << 16), 0 where nothing was taken; `top` and
// `bottom` are then the rows with cells left. Every lane of the group calls it.
__device__ unsigned int take_glider(unsigned int *box, int lane, unsigned int mask,
                                    const unsigned int *gliders, int &top, int &bottom, int bx0,
                                    int bx1, int by0, int by1) {
    if (bx1 - bx0 > 2 || by1 - by0 > 2) return 0u;
    // The cells other lanes wrote this generation, seen by lane 0.
    __syncwarp(mask);
    unsigned int found = 0u;
    if (lane == 0) {
        // A window of 16 x 16 cells from (wx, wy); the band's cells' cluster grown from those
        // in their box (all within two cells of one another), joined within two cells as the
        // host's cluster_of joins them. A glider's lies within rows and columns 4 to 10; one
        // that comes within two of the window's edge, or has more than five cells, is not one.
        int wx = bx0 - 6, wy = by0 - 6;
        unsigned int live[16], cluster[16];
        unsigned int seed = ((1u << (bx1 - bx0 + 1)) - 1u) << 6;
        for (int i = 0; i < 16; i++) {
            live[i] = row16(box, wy + i, wx);
            cluster[i] = i >= 6 && i <= 6 + by1 - by0 ? live[i] & seed : 0u;
        }
        bool grown = true;
        int cells = 0;
        for (int round = 0; grown && cells <= 5; round++) {
            unsigned int wide[16];
            for (int i = 0; i < 16; i++) {
                unsigned int c = cluster[i];
                wide[i] = (c | c << 1 | c << 2 | c >> 1 | c >> 2) & 0xffffu;
            }
            grown = false;
            cells = 0;
            for (int i = 0; i < 16; i++) {
                unsigned int near = 0u;
                for (int j = i - 2; j <= i + 2; j++) near |= j >= 0 && j < 16 ? wide[j] : 0u;
                unsigned int c = near & live[i];
                grown |= c != cluster[i];
                cluster[i] = c;
                cells += __popc(c);
            }
        }
        unsigned int rows = 0u, columns = 0u;
        for (int i = 0; i < 16; i++) {
            columns |= cluster[i];
            if (cluster[i]) rows |= 1u << i;
        }
        int t = __ffs(rows) - 1, l = __ffs(columns) - 1;
        bool three = cells == 5 && rows == 7u << t && columns == 7u << l && t >= 2 && l >= 2 &&
                     t + 2 <= 13 && l + 2 <= 13;
        if (three) {
            unsigned int shape = 0u;
            for (int r = 0; r < 3; r++) shape |= (cluster[t + r] >> l & 7u) << (3 * r);
            for (int k = 0; k < 16; k++) {
                if ((gliders[k] & 0x1ffu) != shape) continue;
                int x = wx + l, y = wy + t, last = SIDE - 1;
                bool east = gliders[k] >> 9 & 1u, south = gliders[k] >> 10 & 1u;
                // Out of the box across every edge whose band it is in.
                bool out = (x >= BAND || !east) && (x + 2 <= last - BAND || east) &&
                           (y >= BAND || !south) && (y + 2 <= last - BAND || south);
                if (out) found = 1u | (unsigned int)k << 1 | (unsigned int)x << 5 |
                                 (unsigned int)y << 16;
                break;
            }
        }
    }
    found = __shfl_sync(mask, found, 0, WORDS);
    if (!found) return 0u;
    unsigned int shape = gliders[found >> 1 & 15u] & 0x1ffu;
    int x = found >> 5 & 0x7ff, y = found >> 16 & 0x7ff;
    for (int r = 0; r < 3; r++) {
        unsigned int bits = lane_bits(shape >> (3 * r) & 7u, x, lane);
        if (bits) box[(y + r) * STRIDE + lane] &= ~bits;
    }
    __syncwarp(mask);
    // Nothing else within ISOLATION cells of it.
    int from = max(x - ISOLATION, 0), to = min(x + 2 + ISOLATION, SIDE - 1);
    int low = max(from, 32 * lane), high = min(to, 32 * lane + 31);
    unsigned int near = low > high ? 0u : ~0u >> (31 - (high - low)) << (low - 32 * lane);
    unsigned int other = 0u;
    for (int r = max(y - ISOLATION, 0); r <= min(y + 2 + ISOLATION, SIDE - 1); r++)
        other |= box[r * STRIDE + lane] & near;
    bool alone = !__any_sync(mask, other != 0u);
    // The rows with cells left.
    int first = SIDE, last = -1;
    if (alone) {
        for (int r = top; r <= bottom; r++) {
            if (__any_sync(mask, box[r * STRIDE + lane] != 0u)) {
                if (first == SIDE) first = r;
                last = r;
            }
        }
    }
    if (!alone || last < 0) {
        // Left to the host: the glider back.
        for (int r = 0; r < 3; r++) {
            unsigned int bits = lane_bits(shape >> (3 * r) & 7u, x, lane);
            if (bits) box[(y + r) * STRIDE + lane] |= bits;
        }
        __syncwarp(mask);
        return 0u;
    }
    top = first;
    bottom = last;
    return found;
}

// Whether row y of a box is in the band.
__device__ __forceinline__ bool band_row(int y) { return y < BAND || y >= SIDE - BAND; }

// The cells of word w of a row that are in the band's columns.
__device__ __forceinline__ unsigned int band_columns(int w) {
    return (w == 0 ? (1u << BAND) - 1u : 0u) | (w == WORDS - 1 ? ~0u << (32 - BAND) : 0u);
}

// The box of the band's cells of rows top..=bottom (those with cells), columns bx0..=bx1
// and rows by0..=by1; `edge` is this lane's columns in the band. Every lane of the group
// calls it, `box` at its own word of row 0.
__device__ void band_box(const unsigned int *box, int lane, unsigned int mask,
                         unsigned int edge, int top, int bottom, int &bx0, int &bx1, int &by0,
                         int &by1) {
    bx0 = SIDE, bx1 = -1, by0 = SIDE, by1 = -1;
    for (int y = top; y <= bottom; y++) {
        unsigned int word = box[y * STRIDE];
        unsigned int in_band = band_row(y) ? word : word & edge;
        if (in_band) {
            if (by0 == SIDE) by0 = y;
            by1 = y;
            bx0 = min(bx0, 32 * lane + __ffs(in_band) - 1);
            bx1 = max(bx1, 32 * lane + 31 - __clz(in_band));
        }
    }
    for (int o = WORDS / 2; o > 0; o /= 2) {
        bx0 = min(bx0, __shfl_xor_sync(mask, bx0, o, WORDS));
        bx1 = max(bx1, __shfl_xor_sync(mask, bx1, o, WORDS));
        by0 = min(by0, __shfl_xor_sync(mask, by0, o, WORDS));
        by1 = max(by1, __shfl_xor_sync(mask, by1, o, WORDS));
    }
}

// Tiles: a box's cells are stepped as tiles of one word and TILE rows, only those with cells
// or beside a tile with cells, so that a soup's empty room (between its ash and the ships
// flying out of it) costs nothing. The marks say which tiles may hold cells, and where in them:
// mark k of tile row r, at k * TILE_ROWS + r, has bit c set where the tile of word c and rows
// TILE r.. may have a cell as kind k says (never fewer than it has). A tile is stepped where it
// has cells, or where a tile beside it has cells near it.
#define TILE_ROWS (SIDE / TILE)
#define ALL_WORDS (WORDS == 32 ? ~0u : (1u << (WORDS & 31)) - 1u)
// The marks: anywhere; in its first EVERY rows, its last EVERY; in its first EVERY columns (bits
// 0..), its last EVERY (bits ..31); and in the EVERY x EVERY cells of each of its four
// corners. A tile with no cells may come to have some within EVERY generations only where a
// tile beside it has cells that near it, so that one listing of the tiles to step serves EVERY
// generations.
#define ANY 0
#define FIRST_ROW 1
#define LAST_ROW 2
#define FIRST_COLUMN 3
#define LAST_COLUMN 4
#define TOP_LEFT 5
#define TOP_RIGHT 6
#define BOTTOM_LEFT 7
#define BOTTOM_RIGHT 8
#define MARKS 9

// Marks tile (r, c) of `marks` as holding the cells `any` (its rows ORed), `first` in its
// first EVERY rows and `last` in its last EVERY (likewise ORed).
#define WEST_COLUMNS ((1u << EVERY) - 1u)
#define EAST_COLUMNS (~0u << (32 - EVERY))
__device__ __forceinline__ void mark(unsigned int *marks, int r, int c, unsigned int any,
                                     unsigned int first, unsigned int last) {
    if (!any) return;
    unsigned int bit = 1u << c;
    unsigned int *m = marks + r;
    atomicOr(m + ANY * TILE_ROWS, bit);
    if (first) atomicOr(m + FIRST_ROW * TILE_ROWS, bit);
    if (last) atomicOr(m + LAST_ROW * TILE_ROWS, bit);
    if (any & WEST_COLUMNS) atomicOr(m + FIRST_COLUMN * TILE_ROWS, bit);
    if (any & EAST_COLUMNS) atomicOr(m + LAST_COLUMN * TILE_ROWS, bit);
    if (first & WEST_COLUMNS) atomicOr(m + TOP_LEFT * TILE_ROWS, bit);
    if (first & EAST_COLUMNS) atomicOr(m + TOP_RIGHT * TILE_ROWS, bit);
    if (last & WEST_COLUMNS) atomicOr(m + BOTTOM_LEFT * TILE_ROWS, bit);
    if (last & EAST_COLUMNS) atomicOr(m + BOTTOM_RIGHT * TILE_ROWS, bit);
}

// The tiles of tile row r to step, from the marks `here` of the cells stepped: those with cells
// and those with a cell of a tile beside them within EVERY cells of them (bit c tile column c).
__device__ __forceinline__ unsigned int to_step(const unsigned int *here, int r) {
    unsigned int near = here[ANY * TILE_ROWS + r] | here[LAST_COLUMN * TILE_ROWS + r] << 1 |
                        here[FIRST_COLUMN * TILE_ROWS + r] >> 1;
    if (r > 0) {
        const unsigned int *above = here + r - 1;
        near |= above[LAST_ROW * TILE_ROWS] | above[BOTTOM_RIGHT * TILE_ROWS] << 1 |
                above[BOTTOM_LEFT * TILE_ROWS] >> 1;
    }
    if (r + 1 < TILE_ROWS) {
        const unsigned int *below = here + r + 1;
        near |= below[FIRST_ROW * TILE_ROWS] | below[TOP_RIGHT * TILE_ROWS] << 1 |
                below[TOP_LEFT * TILE_ROWS] >> 1;
    }
    return near & ALL_WORDS;
}

// A row's cells summed with their left and right neighbours, as two bit planes h0 and h1 (0 to
// 3): (c << 1) | (left >> 31) and (c >> 1) | (right << 31), a funnel shift each.
__device__ __forceinline__ void across(unsigned int left, unsigned int c, unsigned int right,
                                       unsigned int &h0, unsigned int &h1) {
    unsigned int we = __funnelshift_l(left, c, 1);
    unsigned int ea = __funnelshift_r(c, right, 1);
    h0 = we ^ c ^ ea;
    h1 = (we & c) | (we & ea) | (c & ea);
}

// The next generation under B3/S23 of a word `middle` whose row's sums (across) are b0, b1,
// those of the row above a0, a1 and below d0, d1: Life's circuit (rule_next, which source.rs
// puts in front of this from circuit.rs; NVCC drops the inputs it does not read).
__device__ __forceinline__ unsigned int life(unsigned int a0, unsigned int a1, unsigned int b0,
                                             unsigned int b1, unsigned int d0, unsigned int d1,
                                             unsigned int middle) {
    unsigned int k0 = (a0 & b0) | (a0 & d0) | (b0 & d0);
    return rule_next<false>(a0 ^ b0 ^ d0, k0, a0, a1, b0, b1, d0, d1, 0u, 0u, 0u, 0u, middle, 0u,
                            0u, 0u, 0u);
}

// Steps tile `k` (word k % WORDS, rows TILE (k / WORDS)..) of `box` into `kept` (row i of the
// tile its row i), for put_tile to store later; folds in what soups_run keeps of a generation:
// the tiles with cells (`top` the first row of the first, `bottom` the last of the last), the
// cells in the band (`out`), and the hash's products (see its loop); and marks the tile in
// `marks` where `marking`.
__device__ __forceinline__ void step_tile(const unsigned int *box, int k,
                                          unsigned int (&kept)[TILE], unsigned int *marks,
                                          bool marking, int &top, int &bottom,
                                          unsigned int &out, unsigned long long &products) {
    int c = k % WORDS, r = k / WORDS, y0 = r * TILE;
    // The tile's rows, with the row above and the row below: v[i][1] row i's word, v[i][0] and
    // v[i][2] those left and right of it (the box's margin beyond its edges: dead).
    unsigned int v[TILE + 2][3];
    const unsigned int *above = box + ((y0 - 1) * STRIDE + c);
#pragma unroll
    for (int i = 0; i < TILE + 2; i++) {
        v[i][0] = above[i * STRIDE - 1];
        v[i][1] = above[i * STRIDE];
        v[i][2] = above[i * STRIDE + 1];
    }
    unsigned int h0[TILE + 2], h1[TILE + 2];
#pragma unroll
    for (int i = 0; i < TILE + 2; i++) across(v[i][0], v[i][1], v[i][2], h0[i], h1[i]);
    unsigned int any, first, last;
    // The place's multiplier: odd, places 2 x 0x9e3779b9 apart (a Weyl sequence).
    unsigned int m = (unsigned int)(y0 * WORDS + c) * 0x3c6ef372u + 0x85ebca6bu;
#pragma unroll
    for (int i = 1; i <= TILE; i++) {
        unsigned int next =
            life(h0[i - 1], h1[i - 1], h0[i], h1[i], h0[i + 1], h1[i + 1], v[i][1]);
        any = i == 1 ? next : any | next;
        if (i <= EVERY) first = i == 1 ? next : first | next;
        if (i == TILE - EVERY + 1) last = next;
        if (i > TILE - EVERY + 1) last |= next;
        products ^= (unsigned long long)next * m;
        m += WORDS * 0x3c6ef372u;
        kept[i - 1] = next;
    }
    if (any) {
        top = min(top, y0);
        bottom = max(bottom, y0 + TILE - 1);
    }
    out |= any & band_columns(c);
    // The band's rows: in the first and last tile rows that reach them only.
    if (y0 < BAND || y0 + TILE > SIDE - BAND) {
#pragma unroll
        for (int i = 0; i < TILE; i++) {
            out |= band_row(y0 + i) ? kept[i] : 0u;
        }
    }
    if (marking) mark(marks, r, c, any, first, last);
}

// Stores the rows step_tile kept of tile `k` into `box`.
__device__ __forceinline__ void put_tile(unsigned int *box, int k,
                                         const unsigned int (&kept)[TILE]) {
    unsigned int *row = box + k / WORDS * TILE * STRIDE + k % WORDS;
#pragma unroll
    for (int i = 0; i < TILE; i++, row += STRIDE) row[0] = kept[i];
}

// Steps the soups in `soups[0..count]` that are RUNNING by up to `generations` generations
// each, stopping each where it settles, dies, reaches the band, or reaches generation `most`.
// A block of WARPS warps a soup: every EVERY generations the first warp lists the tiles to
// step, and the block's threads take them in turn. The box is in shared memory ((SIDE + 2) *
// STRIDE words with its margin, the launch's dynamic shared memory), copied in for the launch
// and its rows that held cells at any time in it copied back at its end, and stepped in place:
// each thread keeps what it made of its tiles until every thread has read them (its first two
// tiles in registers, any more in the box's second copy, box count + index of `cells`).
// Gliders in the band are taken away where take_glider can (phases `gliders`), each logged in
// the soup's LOGGED entries of `log` as (generation << 32 | take_glider's entry).
#define RUN_THREADS (32 * WARPS)
// Every thread of a block of soups_run waits for the others here.
#if WARPS == 1
#define SYNC() __syncwarp()
#else
#define SYNC() __syncthreads()
#endif

// Thread 0's `v`, for every thread of a block of soups_run (each calls it, and waits for the
// others as at SYNC), through `room` in shared memory where the block has more than a warp.
template <typename T> __device__ __forceinline__ T from_first(T v, T &room) {
#if WARPS == 1
    __syncwarp();
    return __shfl_sync(~0u, v, 0);
#else
    if (threadIdx.x == 0) room = v;
    __syncthreads();
    return room;
#endif
}

extern "C" __global__ void soups_run(unsigned int *cells, Soup *soups, int count,
                                     unsigned int generations, unsigned int most,
                                     const unsigned int *gliders, unsigned long long *log) {
    int index = blockIdx.x;
    if (index >= count) return;
    Soup s = soups[index];
    if (s.status != RUNNING) return;
    int t = threadIdx.x, warp = WARPS == 1 ? 0 : t / 32, lane = t & (WORDS - 1);
    int strip = (t & 31) / WORDS;
    // The lanes of this lane's group of WORDS (the first warp's first group looks at the band).
    unsigned int mask =
        WORDS == 32 ? ~0u : ((1u << (WORDS & 31)) - 1u) << (t & (32 - WORDS));
    unsigned int *global = cells + (size_t)index * SIDE * WORDS;
    __shared__ unsigned int marks[2][MARKS * TILE_ROWS];
    __shared__ unsigned short list[TILE_ROWS * WORDS];
    // What the first warp hands the block (from_first): the tiles listed, the tile rows that
    // held cells, a glider taken away (take_glider's entry, and the rows with cells then), the
    // rows with cells at the end.
    __shared__ int listed, held[2], taken[3], ends[2];
    // Each warp's part of a generation's hash, rows of the tiles with cells and cells in the
    // band.
    __shared__ unsigned long long part_hash[WARPS];
    __shared__ int part_top[WARPS], part_bottom[WARPS];
    __shared__ unsigned int part_out[WARPS];
    // The box's second copy in global memory, this block's own, where a generation's tiles
    // after each thread's first two wait to be stored (TILE words for each place in the list).
    unsigned int *own = cells + ((size_t)count + index) * SIDE * WORDS;
    // The box in shared memory with a margin of dead cells round it, which step_tile reads
    // beyond the box's edges: a row above and a row below it, and the word that ends each row
    // (STRIDE), which is also the word before the next row's first.
    extern __shared__ unsigned int margined[];
    unsigned int *whole = margined + STRIDE;
    // The rows with cells (top..bottom), the others empty.
    for (int i = t; i < (SIDE + 2) * STRIDE; i += RUN_THREADS) margined[i] = 0u;
    SYNC();
    for (int i = (int)s.top * WORDS + t; i < ((int)s.bottom + 1) * WORDS; i += RUN_THREADS)
        whole[i / WORDS * STRIDE + i % WORDS] = global[i];
    for (int i = t; i < MARKS * TILE_ROWS; i += RUN_THREADS) marks[0][i] = marks[1][i] = 0u;
    SYNC();
    for (int i = (int)s.top * WORDS + t; i < ((int)s.bottom + 1) * WORDS; i += RUN_THREADS) {
        int y = i / WORDS, w = i % WORDS;
        unsigned int word = whole[y * STRIDE + w];
        mark(marks[0], y / TILE, w, word, y % TILE < EVERY ? word : 0u,
             y % TILE >= TILE - EVERY ? word : 0u);
    }
    SYNC();
    // The marks of the cells the tiles were last listed from, the tiles listed, and (in the
    // first warp) the tile rows that held cells at some time in this launch (those copied
    // back).
    int marked = 0, tiles = 0;
    int held_top = (int)s.top / TILE, held_bottom = (int)s.bottom / TILE;
    unsigned int edge = band_columns(lane);
    for (unsigned int g = 0; g < generations && s.status == RUNNING; g++) {
        const unsigned int *here = marks[marked];
        unsigned int *there = marks[marked ^ 1];
        // The tiles are listed every EVERY generations, and marked in the last generation
        // before each listing.
        bool listing = g % EVERY == 0, marking = g % EVERY == EVERY - 1;
        if (listing) tiles = 0;
        if (listing && warp == 0) {
            // The tile rows that either set of marks says may hold cells (the other's are
            // cleared here), and one more each way.
            int low = TILE_ROWS, high = -1;
            for (int r = t; r < TILE_ROWS; r += 32) {
                if (here[r] | there[r]) {
                    low = min(low, r);
                    high = r;
                }
            }
            low = max(warp_min(low) - 1, 0);
            high = min(warp_max(high) + 1, TILE_ROWS - 1);
            held_top = min(held_top, low);
            held_bottom = max(held_bottom, high);
            // The tiles to step, listed: those with cells or beside a tile with cells near
            // them (a tile with none near it is empty and stays so). A lane a tile row at a
            // time.
            for (int base = low; base <= high; base += 32) {
                int r = base + t;
                unsigned int step = 0u;
                if (r <= high) {
                    step = to_step(here, r);
                    for (int k = 0; k < MARKS; k++) there[k * TILE_ROWS + r] = 0u;
                }
                int n = __popc(step), before = n;
                for (int o = 1; o < 32; o *= 2) {
                    int v = __shfl_up_sync(~0u, before, o);
                    if (t >= o) before += v;
                }
                int at = tiles + before - n;
                tiles += __shfl_sync(~0u, before, 31);
                for (; step; step &= step - 1u)
                    list[at++] = (unsigned short)(r * WORDS + __ffs(step) - 1);
            }
        }
        if (listing) tiles = from_first(tiles, listed);
        int top = SIDE, bottom = -1;
        unsigned int out = 0u;
        // This thread's words' products with their places' multipliers, XORed: each word of
        // the box times a multiplier of its place, so that the order of the tiles does not
        // matter.
        unsigned long long products = 0ull;
        // Every thread steps its tiles (the first two into registers, the others into
        // `own`), and stores them once every thread has read the cells it needs.
        unsigned int a[TILE], b[TILE];
        int ka = t < tiles ? list[t] : -1;
        int kb = t + RUN_THREADS < tiles ? list[t + RUN_THREADS] : -1;
        if (ka >= 0) step_tile(whole, ka, a, there, marking, top, bottom, out, products);
        if (kb >= 0) step_tile(whole, kb, b, there, marking, top, bottom, out, products);
        for (int i = t + 2 * RUN_THREADS; i < tiles; i += RUN_THREADS) {
            unsigned int c[TILE];
            step_tile(whole, list[i], c, there, marking, top, bottom, out, products);
#pragma unroll
            for (int j = 0; j < TILE; j++) own[i * TILE + j] = c[j];
        }
        SYNC();
        if (ka >= 0) put_tile(whole, ka, a);
        if (kb >= 0) put_tile(whole, kb, b);
        for (int i = t + 2 * RUN_THREADS; i < tiles; i += RUN_THREADS) {
            unsigned int c[TILE];
#pragma unroll
            for (int j = 0; j < TILE; j++) c[j] = own[i * TILE + j];
            put_tile(whole, list[i], c);
        }
        unsigned int high_half = warp_xor((unsigned int)(products >> 32));
        unsigned long long hash =
            (unsigned long long)high_half << 32 | warp_xor((unsigned int)products);
        top = warp_min(top);
        bottom = warp_max(bottom);
        out = warp_or(out);
#if WARPS > 1
        if ((t & 31) == 0) {
            part_hash[warp] = hash;
            part_top[warp] = top;
            part_bottom[warp] = bottom;
            part_out[warp] = out;
        }
        __syncthreads();
        for (int w = 0; w < WARPS; w++) {
            if (w == warp) continue;
            hash ^= part_hash[w];
            top = min(top, part_top[w]);
            bottom = max(bottom, part_bottom[w]);
            out |= part_out[w];
        }
#else
        __syncwarp();
#endif
        if (marking) marked ^= 1;
        unsigned int *box = whole + lane;
        // `out` holds the band's cells; `top` and `bottom` are the first row of the first tile
        // with cells and the last of the last (exact again where a glider is taken away, and
        // at the launch's end).
        bool band = out != 0u;
        s.generation += 1u;
        if (bottom < 0) {
            s.status = DIED;
        } else {
            unsigned int entry = 0u;
            if (band && s.taken < LOGGED) {
                // The first warp's first group alone looks, and takes a glider away.
                if (warp == 0) {
                    if (strip == 0) {
                        int bx0, bx1, by0, by1;
                        band_box(box, lane, mask, edge, top, bottom, bx0, bx1, by0, by1);
                        entry = take_glider(whole, lane, mask, gliders, top, bottom, bx0, bx1,
                                            by0, by1);
                    }
                }
                entry = (unsigned int)from_first((int)entry, taken[0]);
                top = from_first(top, taken[1]);
                bottom = from_first(bottom, taken[2]);
            }
            s.top = top;
            s.bottom = bottom;
            if (entry) {
                if (t == 0)
                    log[(size_t)index * LOGGED + s.taken] =
                        (unsigned long long)s.generation << 32 | entry;
                s.taken += 1u;
                s.shot_at = NO_SHOT;
            } else if (band) {
                s.status = PAUSED;
            } else if (s.shot_at != NO_SHOT && hash == s.shot) {
                s.status = SETTLED;
                s.period = s.generation - s.shot_at;
            } else if (s.shot_at == NO_SHOT || s.generation - s.shot_at >= shot_every(s.shot_at)) {
                s.shot = hash;
                s.shot_at = s.generation;
            }
        }
        if (s.status == RUNNING && s.generation >= most) s.status = GIVEN_UP;
    }
    // The rows with cells exactly, for the host (and the next launch): within the first and the
    // last tile rows of those kept.
    if (s.status != DIED) {
        int first = SIDE, last = -1;
        if (warp == 0) {
            for (int i = t & 31; i < TILE * WORDS; i += 32) {
                int y = (int)s.top + i / WORDS, w = i % WORDS;
                if (y <= (int)s.bottom && whole[y * STRIDE + w] != 0u) first = min(first, y);
                y = (int)s.bottom - i / WORDS;
                if (y >= (int)s.top && whole[y * STRIDE + w] != 0u) last = max(last, y);
            }
            first = warp_min(first);
            last = warp_max(last);
        }
        s.top = (unsigned int)from_first(first, ends[0]);
        s.bottom = (unsigned int)from_first(last, ends[1]);
    }
    held_top = from_first(held_top, held[0]);
    held_bottom = from_first(held_bottom, held[1]);
    // The rows that held cells back in the box.
    int from_row = held_top * TILE, to_row = (held_bottom + 1) * TILE;
    for (int i = from_row * WORDS + t; i < to_row * WORDS; i += RUN_THREADS)
        global[i] = whole[i / WORDS * STRIDE + i % WORDS];
    if (t == 0) soups[index] = s;
}

// Threads a block of soups_place and soups_live; soups_live's each does SIDE / THREADS rows of
// a box.
#define THREADS 256
#define ROWS (SIDE / THREADS)

// Puts soup i in the box of slot slots[i], the box emptied first; one block a soup. The first
// `fresh` start at generation 0: soup i is rows[16 i..16 i + 16] (bit x of a row the cell of
// column x), its top-left cell placed at (LEFT, LEFT). Each other goes on from where it was:
// soup fresh + j has state states[j] and the live words words[spans[j]..spans[j + 1]] (each
// (y * WORDS + w) << 32 | word, as soups_live gathers them; each word of the box at most once).
#define LEFT (SIDE / 2 - 8)
extern "C" __global__ void soups_place(unsigned int *cells, Soup *soups, const int *slots,
                                       int fresh, const unsigned short *rows,
                                       const unsigned long long *words,
                                       const unsigned int *spans, const Soup *states) {
    int i = blockIdx.x;
    int slot = slots[i];
    unsigned int *box = cells + (size_t)slot * SIDE * WORDS;
    for (int j = threadIdx.x; j < SIDE * WORDS; j += THREADS) box[j] = 0u;
    __syncthreads();
    if (i < fresh) {
        if (threadIdx.x < 16) {
            unsigned int r = rows[i * 16 + threadIdx.x];
            // LEFT is 24 past a word's start: the row's 16 cells straddle two words.
            unsigned int *row = box + (LEFT + threadIdx.x) * WORDS + LEFT / 32;
            row[0] = r << (LEFT % 32);
            row[1] = r >> (32 - LEFT % 32);
        }
        if (threadIdx.x == 0) {
            Soup s;
            s.generation = 0u;
            s.top = LEFT;
            s.bottom = LEFT + 15;
            s.status = RUNNING;
            s.shot_at = NO_SHOT;
            s.period = 0u;
            s.taken = 0u;
            s.shot = 0ull;
            soups[slot] = s;
        }
        return;
    }
    int j = i - fresh;
    for (unsigned int k = spans[j] + threadIdx.x; k < spans[j + 1]; k += THREADS) {
        unsigned long long word = words[k];
        box[word >> 32] = (unsigned int)word;
    }
    if (threadIdx.x == 0) soups[slot] = states[j];
}

// Objects soups_live names where they stand apart (soups.rs's Lone): a window of 8 x 8 cells,
// row by row, bit i of a row its column i, whose corner is two rows and columns before the
// corner of the object's envelope (its cells in both phases): its live cells in one phase, its
// envelope, and its envelope with the cells next to it (as a king moves).
struct Lone {
    unsigned char live[8], envelope[8], around[8];
};

// Room in shared memory for each of the two copies of an ash's rows that name_ash keeps
// (32-bit words), the rows that fit in it, and the objects an ash it names may have.
#define NAME_WORDS 4096
#define NAME_ROWS (NAME_WORDS / WORDS < SIDE ? NAME_WORDS / WORDS : SIDE)
#define MOST_FOUND 512

// Word w of row r of `rows` (WORDS words a row) stepped a generation, rows r - 1 and r + 1
// read (the caller's rows have them), dead beyond the row's ends.
__device__ __forceinline__ unsigned int step_word(const unsigned int *rows, int r, int w) {
    unsigned int h0[3], h1[3];
#pragma unroll
    for (int i = 0; i < 3; i++) {
        const unsigned int *row = rows + (r - 1 + i) * WORDS + w;
        across(w > 0 ? row[-1] : 0u, row[0], w < WORDS - 1 ? row[1] : 0u, h0[i], h1[i]);
    }
    return life(h0[0], h1[0], h0[1], h1[1], h0[2], h1[2], rows[r * WORDS + w]);
}

// A word of `rows` (WORDS words a row) with the row's next word above it: columns 32 w.. of row r.
__device__ __forceinline__ unsigned long long two_words(const unsigned int *rows, int r, int w) {
    const unsigned int *row = rows + r * WORDS + w;
    return row[0] | (w + 1 < WORDS ? (unsigned long long)row[1] << 32 : 0ull);
}

// Names the ash of a soup settled with period 1 or 2 (state s, box `box`) where every object
// of it is one of kinds[0..n_kinds) standing apart: no cell of the envelope next to the
// object's envelope but its own. counts[k] is then how many of kind k there are, and it returns
// true. It returns false where the ash's rows do not fit, where its period does not hold (its
// hashes matched falsely), or where a cell is in no such object: the host names it then.
// `live` and `envelope` are NAME_WORDS words of shared memory, counts MOST_KINDS and found
// MOST_FOUND; every thread of the block calls it.
//
// The host names such ash the same: objects within sqrt 5 of each other are one cluster, cut
// into islands (cells touching in one generation or in two in a row), which are its parts where
// each runs alone as it does in the cluster. Each object here is an island, and runs alone as
// in the ash: a cell with live neighbours of two objects A and B is next to both, so in neither
// envelope (the other's cells would be next to it): it is dead, stays dead in the ash (a cell
// born there is in the ash's envelope, next to A's, so A's) and would beside A alone (a cell A
// alone brings to life is in A's envelope).
__device__ bool name_ash(const unsigned int *box, const Soup &s, const Lone *kinds, int n_kinds,
                         unsigned int *live, unsigned int *envelope, unsigned int *counts,
                         unsigned int *found, unsigned int &n_found) {
    int t = threadIdx.x;
    // The ash's rows from four above its first to five below its last, which hold its next
    // generation and every window (below) of an object in it: envelopes are at most four
    // cells a side, and cells lie BAND or more inside the box.
    int y0 = (int)s.top - 4, rows = (int)s.bottom - (int)s.top + 10;
    if (rows > NAME_ROWS) return false;
    for (int i = t; i < rows * WORDS; i += THREADS) live[i] = box[y0 * WORDS + i];
    for (int i = t; i < MOST_KINDS; i += THREADS) counts[i] = 0u;
    if (t == 0) n_found = 0u;
    __syncthreads();
    // The next generation (the first and last rows have no cells in it), then the period: the
    // next generation is the ash, or the one after it is.
    for (int i = t; i < rows * WORDS; i += THREADS) {
        int r = i / WORDS;
        envelope[i] = r == 0 || r == rows - 1 ? 0u : step_word(live, r, i % WORDS);
    }
    __syncthreads();
    bool wrong = false;
    for (int i = t; i < rows * WORDS; i += THREADS) {
        int r = i / WORDS;
        unsigned int back = envelope[i];
        if (s.period == 2) back = r == 0 || r == rows - 1 ? 0u : step_word(envelope, r, i % WORDS);
        wrong |= back != live[i];
    }
    if (__syncthreads_or(wrong)) return false;
    for (int i = t; i < rows * WORDS; i += THREADS) envelope[i] |= live[i];
    __syncthreads();
    // Each thread a window row r and word w at a time: the windows whose corners are in row r,
    // columns 32 w..32 w + 31, whose objects' live cells are in rows r + 2..r + 5 and columns
    // 32 w + 2..32 w + 36. An object's envelope is in rows 3..rows - 6, so its window in rows
    // 1..rows - 8.
    for (int i = t; i < (rows - 8) * WORDS; i += THREADS) {
        int r = 1 + i / WORDS, w = i % WORDS;
        unsigned long long l[8], e[8], any = 0ull;
#pragma unroll
        for (int k = 0; k < 8; k++) {
            l[k] = two_words(live, r + k, w);
            e[k] = two_words(envelope, r + k, w);
            if (k >= 2 && k < 6) any |= l[k];
        }
        if ((any >> 2 & 0x7ffffffffull) == 0ull) continue;
        for (int k = 0; k < n_kinds; k++) {
            const Lone &kind = kinds[k];
            // The corners at which the kind's live cells are all alive.
            unsigned long long at = 0xffffffffull;
#pragma unroll
            for (int y = 2; y < 6; y++)
                for (unsigned int c = kind.live[y]; c != 0u; c &= c - 1u)
                    at &= l[y] >> (__ffs(c) - 1);
            for (; at != 0ull; at &= at - 1ull) {
                int x = __ffsll(at) - 1;
                // Apart: what the window has next to the envelope is the kind's, in both
                // copies.
                bool apart = true;
#pragma unroll
                for (int y = 0; y < 8; y++) {
                    unsigned int around = kind.around[y];
                    apart = apart && ((unsigned int)(e[y] >> x) & around) == kind.envelope[y] &&
                            ((unsigned int)(l[y] >> x) & around) == kind.live[y];
                }
                if (apart) {
                    atomicAdd(&counts[k], 1u);
                    unsigned int f = atomicAdd(&n_found, 1u);
                    if (f < MOST_FOUND) found[f] = (unsigned int)k << 20 | r << 10 | (32 * w + x);
                }
            }
        }
    }
    __syncthreads();
    if (n_found > MOST_FOUND) return false;
    // The objects' live cells taken out: the ash is named where no cell is left.
    for (unsigned int f = t; f < n_found; f += THREADS) {
        const Lone &kind = kinds[found[f] >> 20];
        int r = found[f] >> 10 & 0x3ff, x = found[f] & 0x3ff;
        for (int y = 2; y < 6; y++) {
            unsigned long long cells = (unsigned long long)kind.live[y] << (x % 32);
            unsigned int *word = live + (r + y) * WORDS + x / 32;
            atomicAnd(word, ~(unsigned int)cells);
            if (cells >> 32 != 0ull) atomicAnd(word + 1, ~(unsigned int)(cells >> 32));
        }
    }
    __syncthreads();
    bool left = false;
    for (int i = t; i < rows * WORDS; i += THREADS) left |= live[i] != 0u;
    return !__syncthreads_or(left);
}

// The words with live cells of each box whose soup has stopped (neither RUNNING nor DIED),
// written to `out` as (y * WORDS + w) << 32 | word, in order; or, where the soup settled with
// period 1 or 2 and name_ash named its ash (kinds[0..n_kinds)), in their place the count of
// each kind it has as k << 32 | count, for each kind with some, in order of k (the host needs
// no more of it). Box b's entries from
// spans[3 b] on, spans[3 b + 1] words then spans[3 b + 2] kinds, where an atomic add on *used
// placed them; spans[3 b + 1] and spans[3 b + 2] are 0 for the others. Where they would go past
// out[capacity - 1] nothing is written (the host sees *used past `capacity` and asks again with
// more room). One block a box, queued after soups_run, so that the host finds the words
// gathered when it looks.
extern "C" __global__ void soups_live(const unsigned int *cells, const Soup *soups,
                                      unsigned long long *out, unsigned int *spans,
                                      unsigned int *used, unsigned int capacity,
                                      const Lone *kinds, int n_kinds) {
    __shared__ unsigned int sums[THREADS];
    __shared__ unsigned int base;
    __shared__ unsigned int live[NAME_WORDS], envelope[NAME_WORDS];
    __shared__ unsigned int counts[MOST_KINDS], found[MOST_FOUND];
    __shared__ unsigned int n_found;
    int b = blockIdx.x;
    int t = threadIdx.x;
    Soup s = soups[b];
    if (s.status == RUNNING || s.status == DIED) {
        if (t == 0) {
            spans[3 * b] = 0u;
            spans[3 * b + 1] = 0u;
            spans[3 * b + 2] = 0u;
        }
        return;
    }
    const unsigned int *box = cells + (size_t)b * SIDE * WORDS;
    bool is_named = s.status == SETTLED && s.period <= 2u &&
                    name_ash(box, s, kinds, n_kinds, live, envelope, counts, found, n_found);
    unsigned int named = 0u;
    if (is_named)
        for (int k = 0; k < n_kinds; k++) named += counts[k] != 0u;
    const unsigned int *rows = box + t * ROWS * WORDS;
    unsigned int n = 0u;
    if (!is_named)
        for (int i = 0; i < ROWS * WORDS; i++) n += rows[i] != 0u;
    // The words of threads 0..=t, summed in place.
    sums[t] = n;
    __syncthreads();
    for (int o = 1; o < THREADS; o <<= 1) {
        unsigned int before = t >= o ? sums[t - o] : 0u;
        __syncthreads();
        sums[t] += before;
        __syncthreads();
    }
    if (t == THREADS - 1) {
        base = atomicAdd(used, sums[t] + named);
        spans[3 * b] = base;
        spans[3 * b + 1] = sums[t];
        spans[3 * b + 2] = named;
    }
    __syncthreads();
    if (base + sums[THREADS - 1] + named > capacity) return;
    unsigned int at = base + sums[t] - n;
    for (int i = 0; i < ROWS * WORDS && !is_named; i++) {
        unsigned int word = rows[i];
        if (word != 0u) out[at++] = ((unsigned long long)(t * ROWS * WORDS + i) << 32) | word;
    }
    if (t == 0 && named != 0u) {
        at = base + sums[THREADS - 1];
        for (int k = 0; k < n_kinds; k++)
            if (counts[k] != 0u) out[at++] = (unsigned long long)k << 32 | counts[k];
    }
}

// Clears cells: edit i, edits[3 i..3 i + 3] = (slot, word, mask), clears the bits `mask` of
// word `word` of the box of `slot`.
extern "C" __global__ void soups_clear(unsigned int *cells, const unsigned int *edits, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const unsigned int *e = edits + 3 * i;
    atomicAnd(cells + (size_t)e[0] * SIDE * WORDS + e[1], ~e[2]);
}
