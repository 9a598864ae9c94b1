// The 3D kernels' neighbours along one axis of the M^3 torus, pasted in front of each of them.

__device__ __forceinline__ int before(int i, int m) { return i == 0 ? m - 1 : i - 1; }
__device__ __forceinline__ int after(int i, int m) { return i == m - 1 ? 0 : i + 1; }
