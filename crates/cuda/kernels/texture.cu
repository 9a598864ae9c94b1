// cuda-texture: cells are bytes in a CUDA array read through a texture object with wrap
// addressing on normalised coordinates, so the texture unit does the torus; the next state is
// written through a surface object into a second array (the two swap roles each generation).
// The rule comes from rule.cu.

extern "C" __global__ void update_cells_texture(unsigned long long tex, unsigned long long surf, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= w)
        return;
    float dx = 1.0f / w, dy = 1.0f / h;
    float u = (x + 0.5f) * dx;
    for (int y = blockIdx.y * blockDim.y + threadIdx.y; y < h; y += gridDim.y * blockDim.y) {
        float v = (y + 0.5f) * dy;
        int n = tex2D<unsigned char>(tex, u - dx, v - dy) + tex2D<unsigned char>(tex, u, v - dy) +
                tex2D<unsigned char>(tex, u + dx, v - dy) + tex2D<unsigned char>(tex, u - dx, v) +
                tex2D<unsigned char>(tex, u + dx, v) + tex2D<unsigned char>(tex, u - dx, v + dy) +
                tex2D<unsigned char>(tex, u, v + dy) + tex2D<unsigned char>(tex, u + dx, v + dy);
        surf2Dwrite((unsigned char)NEXT_STATE(tex2D<unsigned char>(tex, u, v), n), surf, x, y);
    }
}
