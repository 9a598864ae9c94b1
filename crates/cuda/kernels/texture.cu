// cuda-texture: cells are bytes in a CUDA array read through a texture object with wrap
// addressing on normalised coordinates, so the texture unit does the torus; the next state is
// written through a surface object into a second array (the two swap roles each generation).
// The rule comes from rule.cu.

// The eight neighbours come from five fetches instead of nine: two gathers (each the 2x2
// footprint of a bilinear fetch: cells x-1..x by y-1..y, and x..x+1 by y..y+1, sampled midway
// between texel centres so that rounding cannot pick the wrong footprint), the two cells those
// miss, and the cell itself, which both gathers hold and is subtracted twice.
extern "C" __global__ void update_cells_texture(unsigned long long tex, unsigned long long surf, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= w)
        return;
    float dx = 1.0f / w, dy = 1.0f / h;
    float u = (x + 0.5f) * dx;
    for (int y = blockIdx.y * blockDim.y + threadIdx.y; y < h; y += gridDim.y * blockDim.y) {
        float v = (y + 0.5f) * dy;
        uchar4 above_left = tex2Dgather<uchar4>(tex, x * dx, y * dy, 0);
        uchar4 below_right = tex2Dgather<uchar4>(tex, (x + 1) * dx, (y + 1) * dy, 0);
        unsigned char self = tex2D<unsigned char>(tex, u, v);
        int n = above_left.x + above_left.y + above_left.z + above_left.w + below_right.x +
                below_right.y + below_right.z + below_right.w - 2 * self +
                tex2D<unsigned char>(tex, u + dx, v - dy) + tex2D<unsigned char>(tex, u - dx, v + dy);
        surf2Dwrite((unsigned char)NEXT_STATE(self, n), surf, x, y);
    }
}
