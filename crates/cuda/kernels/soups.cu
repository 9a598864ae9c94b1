// The census's soups on the GPU (crates/cuda/src/soups.rs is the host side, gol-census's
// gpu module the census): each soup on a box of SIDE x SIDE cells under B3/S23, stepped until it
// settles, dies, comes near the box's edge or runs out of generations; the census runs boxes
// of 256 cells a side, and 512 for soups that the smaller cannot hold.
//
// Layout. A box is SIDE rows of WORDS = SIDE / 32 32-bit words, row after row; bit b of word w
// of row y is the cell (32 w + b, y). WORDS threads (lanes of one warp) step a soup, lane w
// holding word w of each row; a row's cells beside the word's ends come from the next lanes by
// shuffles. A soup's state (struct Soup, mirrored by soups.rs's SoupState) says which rows hold
// cells, so that only those and the two beside them are stepped, in place: a lane reads row
// y + 1 before it writes row y, and keeps the old rows y - 1 and y in registers.
//
// The band: cells fewer than BAND from an edge. A soup stops (PAUSED) as soon as a cell is
// there, so that the box's edge, beyond which everything is taken as dead, is never near a
// cell: the host takes the escaping ships away, or gives the soup to a larger box or the CPU.
//
// Settling. Each generation's cells are hashed (a sum over live words of a mix of word and
// place); the hash of the generation shot_at is kept for shot_every(shot_at) generations and
// the soup has SETTLED when it comes back: its period is the generations since, the least
// period of a pattern that was already repeating at shot_at. The host checks the period on
// its own copy, so a false match of hashes is caught there.

// The host defines SIDE (256, 512 or 1024) in front of this.
#ifndef SIDE
#define SIDE 256
#endif
#define WORDS (SIDE / 32)
#define BAND 12

#define RUNNING 0u
#define SETTLED 1u
#define PAUSED 2u
#define DIED 3u
#define GIVEN_UP 4u

// No shot taken yet: the next generation's is.
#define NO_SHOT 0xffffffffu

struct Soup {
    unsigned int generation;
    // First and last rows with live cells.
    unsigned int top, bottom;
    unsigned int status;
    unsigned int shot_at;
    unsigned int period;
    unsigned long long shot;
};

__device__ __forceinline__ unsigned long long mix(unsigned long long z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

// Generations a shot taken at generation `at` is kept (census.rs's shot_every).
__device__ __forceinline__ unsigned int shot_every(unsigned int at) {
    unsigned int n = at / 16u;
    unsigned int p = n <= 1u ? 1u : 1u << (32 - __clz(n - 1u));
    return p < 32u ? 32u : p;
}

// The sums across of a row's cells, each cell with its left and right neighbours, as two bit
// planes (0 to 3): lane 0's left end and lane 7's right end see dead cells.
__device__ __forceinline__ void across(unsigned int c, unsigned int mask, int lane,
                                       unsigned int &h0, unsigned int &h1) {
    unsigned int before = __shfl_up_sync(mask, c, 1, WORDS);
    unsigned int after = __shfl_down_sync(mask, c, 1, WORDS);
    if (lane == 0) before = 0u;
    if (lane == WORDS - 1) after = 0u;
    unsigned int w = (c << 1) | (before >> 31);
    unsigned int e = (c >> 1) | (after << 31);
    h0 = w ^ c ^ e;
    h1 = (w & c) | (w & e) | (c & e);
}

// Steps the soups in `soups[0..count]` that are RUNNING by up to `generations` generations
// each, stopping each where it settles, dies, reaches the band, or reaches generation `most`.
// Blocks of whole groups of eight lanes; one group a soup.
extern "C" __global__ void soups_run(unsigned int *cells, Soup *soups, int count,
                                     unsigned int generations, unsigned int most) {
    int lane = threadIdx.x & (WORDS - 1);
    int index = (blockIdx.x * blockDim.x + threadIdx.x) / WORDS;
    if (index >= count) return;
    Soup s = soups[index];
    if (s.status != RUNNING) return;
    // The group's lanes in the warp.
    unsigned int mask =
        WORDS == 32 ? ~0u : ((1u << (WORDS & 31)) - 1u) << (threadIdx.x & (32 - WORDS));
    unsigned int *box = cells + (size_t)index * SIDE * WORDS + lane;
    unsigned int edge = 0u;
    if (lane == 0) edge = (1u << BAND) - 1u;
    if (lane == WORDS - 1) edge = ~0u << (32 - BAND);
    for (unsigned int g = 0; g < generations && s.status == RUNNING; g++) {
        int first = (int)s.top - 1, last = (int)s.bottom + 1;
        // Rows first - 1 and first are empty (top is the first row with cells).
        unsigned int a0 = 0u, a1 = 0u, b0 = 0u, b1 = 0u, c = 0u;
        int top = SIDE, bottom = -1;
        bool band = false;
        unsigned long long hash = 0ull;
        for (int y = first; y <= last; y++) {
            unsigned int below = box[(y + 1) * WORDS];
            unsigned int d0, d1;
            across(below, mask, lane, d0, d1);
            // The sum of the nine cells, the cell itself included, as bits t0, t1, t2 of
            // weights 1, 2 and 4 (and 8, where it is 8 or 9, which the rule needs not).
            unsigned int t0 = a0 ^ b0 ^ d0;
            unsigned int k = (a0 & b0) | (a0 & d0) | (b0 & d0);
            unsigned int x = a1 ^ b1, z = d1 ^ k;
            unsigned int t1 = x ^ z;
            unsigned int t2 = (a1 & b1) ^ (d1 & k) ^ (x & z);
            // Three with the cell, or four with the cell alive: B3/S23.
            unsigned int next = (t0 & t1 & ~t2) | (~t0 & ~t1 & t2 & c);
            box[y * WORDS] = next;
            if (__any_sync(mask, next != 0u)) {
                if (top == SIDE) top = y;
                bottom = y;
            }
            if (next != 0u) {
                if (y < BAND || y >= SIDE - BAND || (next & edge)) band = true;
                hash += mix(((unsigned long long)(y * WORDS + lane) << 32) | next);
            }
            a0 = b0;
            a1 = b1;
            b0 = d0;
            b1 = d1;
            c = below;
        }
        for (int o = WORDS / 2; o > 0; o /= 2) hash += __shfl_xor_sync(mask, hash, o, WORDS);
        band = __any_sync(mask, band);
        s.generation += 1u;
        if (bottom < 0) {
            s.status = DIED;
        } else {
            s.top = top;
            s.bottom = bottom;
            if (band) {
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
    if (lane == 0) soups[index] = s;
}

// Threads a block of soups_place and soups_live: each does SIDE / THREADS rows of a box.
#define THREADS 256
#define ROWS (SIDE / THREADS)

// Places soup i of `rows` (16 rows of 16 cells, bit x of a row the cell of column x) in the
// box of slot slots[i], its top-left cell at (LEFT, LEFT), the rest of the box emptied, its
// state that of generation 0. One block a soup.
#define LEFT (SIDE / 2 - 8)
extern "C" __global__ void soups_place(unsigned int *cells, Soup *soups, const int *slots,
                                       const unsigned short *rows) {
    int i = blockIdx.x;
    int slot = slots[i];
    for (int y = threadIdx.x * ROWS; y < (threadIdx.x + 1) * ROWS; y++) {
        unsigned int *row = cells + ((size_t)slot * SIDE + y) * WORDS;
        for (int w = 0; w < WORDS; w++) row[w] = 0u;
        if (y >= LEFT && y < LEFT + 16) {
            unsigned int r = rows[i * 16 + (y - LEFT)];
            // LEFT is 24 past a word's start: the row's 16 cells straddle two words.
            row[LEFT / 32] = r << (LEFT % 32);
            row[LEFT / 32 + 1] = r >> (32 - LEFT % 32);
        }
    }
    if (threadIdx.x == 0) {
        Soup s;
        s.generation = 0u;
        s.top = LEFT;
        s.bottom = LEFT + 15;
        s.status = RUNNING;
        s.shot_at = NO_SHOT;
        s.period = 0u;
        s.shot = 0ull;
        soups[slot] = s;
    }
}

// The words with live cells of each box whose soup has stopped (neither RUNNING nor DIED),
// written to `out` as (y * WORDS + w) << 32 | word, in order: box b's from spans[2 b] on,
// spans[2 b + 1] of them, where an atomic add on *used placed them; spans[2 b + 1] is 0 for the
// others. Where they would go past out[capacity - 1] nothing is written (the host sees *used
// past `capacity` and asks again with more room). One block a box, queued after soups_run, so
// that the host finds the words gathered when it looks.
extern "C" __global__ void soups_live(const unsigned int *cells, const Soup *soups,
                                      unsigned long long *out, unsigned int *spans,
                                      unsigned int *used, unsigned int capacity) {
    __shared__ unsigned int sums[THREADS];
    __shared__ unsigned int base;
    int b = blockIdx.x;
    int t = threadIdx.x;
    unsigned int status = soups[b].status;
    if (status == RUNNING || status == DIED) {
        if (t == 0) {
            spans[2 * b] = 0u;
            spans[2 * b + 1] = 0u;
        }
        return;
    }
    const unsigned int *rows = cells + ((size_t)b * SIDE + t * ROWS) * WORDS;
    unsigned int n = 0u;
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
        base = atomicAdd(used, sums[t]);
        spans[2 * b] = base;
        spans[2 * b + 1] = sums[t];
    }
    __syncthreads();
    if (base + sums[THREADS - 1] > capacity) return;
    unsigned int at = base + sums[t] - n;
    for (int i = 0; i < ROWS * WORDS; i++) {
        unsigned int word = rows[i];
        if (word != 0u) out[at++] = ((unsigned long long)(t * ROWS * WORDS + i) << 32) | word;
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
