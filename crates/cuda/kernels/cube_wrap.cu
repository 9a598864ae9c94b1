// The 3D kernels' neighbours along one axis of the torus (n = M, or a slab's planes along x),
// pasted in front of each of them.

__device__ __forceinline__ int before(int i, int n) { return i == 0 ? n - 1 : i - 1; }
__device__ __forceinline__ int after(int i, int n) { return i == n - 1 ? 0 : i + 1; }
