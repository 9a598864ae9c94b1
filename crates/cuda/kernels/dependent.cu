// Programmatic dependent launch (compute capability 9.0 and later). A kernel launched with the
// programmatic-serialisation attribute may start while the kernel before it in the stream is
// still running, once every block of that one has called start_next_grid() or exited; it must
// call wait_for_previous_grid() before touching any memory the previous kernel reads or writes
// (the two swap buffers). Launched without the attribute, or on older GPUs, both do nothing.
__device__ __forceinline__ void start_next_grid()
{
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;");
#endif
}

__device__ __forceinline__ void wait_for_previous_grid()
{
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
