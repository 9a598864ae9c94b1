// cuda-swar (v2 of the 3D Life article, docs/lineage.md): four byte cells per 32-bit word, neighbour counts added four at a
// time (SIMD within a register: every byte stays below 28, so no carry crosses into the next).
//
// Layout: cell (x, y, z) is byte z % 4 of word (x*M + y)*wl + z/4, wl = ceil(M/4) words per
// line; the bytes past z = M-1 in a line's last word are zero. A slab has `planes` planes of
// constant x, where x wraps.
//
// A warp covers 30 consecutive words of a line (lanes 1..30) and their neighbours (lanes 0 and
// 31, wrapping around the line); threadIdx.y picks the line's y, blockIdx.z a run of `depth`
// planes of constant x that the thread streams through. Per plane the thread adds the words of
// lines y-1, y, y+1 (a column sum); three column sums give the 3x3 sum in the (x, y) directions
// and shuffles bring the neighbouring words' bytes for the z direction.


// Bytes 0..k-1 of a word set (k in 0..4).
__device__ __forceinline__ unsigned low_bytes(int k) { return k == 4 ? 0xffffffffu : (1u << (8 * k)) - 1; }

extern "C" __global__ void cube_swar(const unsigned *cells, unsigned *next, int m, int planes, int wl,
                                     int depth)
{
    const unsigned all = 0xffffffffu;
    int lane = threadIdx.x;
    int w = blockIdx.x * 30 + lane - 1;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int x0 = blockIdx.z * depth;
    // A warp shares y and x0, so it leaves (or stays) as a whole and the shuffles stay full.
    if (y >= m || x0 >= planes)
        return;
    int x1 = min(x0 + depth, planes);
    int gw = ((w % wl) + wl) % wl;
    int r = (m - 1) & 3; // the byte of the line's last cell in its last word
    bool writes = lane >= 1 && lane <= 30 && w < wl;
    long long plane = (long long)m * wl;
    long long up = (long long)before(y, m) * wl + gw, here = (long long)y * wl + gw,
              down = (long long)after(y, m) * wl + gw;
    const unsigned birth = BIRTH, survive = SURVIVE << 1; // a live cell's sum counts itself

    int xp = before(x0, planes);
    unsigned c_prev = cells[xp * plane + up] + cells[xp * plane + here] + cells[xp * plane + down];
    unsigned self = cells[x0 * plane + here];
    unsigned c_mid = cells[x0 * plane + up] + self + cells[x0 * plane + down];
    for (int x = x0; x < x1; ++x) {
        int xn = after(x, planes);
        unsigned self_next = cells[xn * plane + here];
        unsigned c_next = cells[xn * plane + up] + self_next + cells[xn * plane + down];
        unsigned p = c_prev + c_mid + c_next; // bytes 0..9
        unsigned left_p = __shfl_up_sync(all, p, 1);
        unsigned right_p = __shfl_down_sync(all, p, 1);
        // The word left of word 0 is the line's last word, whose last cell is byte r.
        unsigned left_in = gw == 0 ? (left_p >> (8 * r)) & 0xffu : left_p >> 24;
        unsigned left = (p << 8) | left_in;
        unsigned right = gw == wl - 1 ? ((p >> 8) & low_bytes(r)) | ((right_p & 0xffu) << (8 * r))
                                      : (p >> 8) | (right_p << 24);
        unsigned total = p + left + right; // bytes 0..27, the cell itself included
        unsigned out = 0;
#pragma unroll
        for (int b = 0; b < 4; ++b) {
            unsigned t = (total >> (8 * b)) & 0xffu;
            unsigned mask = (self >> (8 * b)) & 1u ? survive : birth;
            out |= ((mask >> t) & 1u) << (8 * b);
        }
        if (gw == wl - 1)
            out &= low_bytes(r + 1);
        if (writes)
            next[x * plane + here] = out;
        c_prev = c_mid;
        c_mid = c_next;
        self = self_next;
    }
}
