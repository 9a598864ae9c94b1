//! Kernel launches through `cuLaunchKernelEx`, which can let a kernel start before the one
//! before it in the stream has ended (programmatic dependent launch, compute capability 9.0
//! and later; `kernels/dependent.cu` is the kernel side). cudarc's launch builder has no way to
//! pass launch attributes, so the engines that use this hand over their arguments raw.

use std::ffi::c_void;

use cudarc::driver::sys::{self, CUlaunchAttributeID};
use cudarc::driver::{CudaFunction, CudaStream, LaunchConfig};

use crate::device::Gpu;
use crate::error::{CudaError, Result};

/// Whether kernels that support it start early on `gpu`: `GOL_CUDA_PDL=0` turns it off (to
/// measure what it saves), `1` asks for it; by default it is on from compute capability 9.0,
/// the first to have it.
pub fn starts_early(gpu: &Gpu) -> Result<bool> {
    let capable = gpu.info.capability.0 >= 9;
    match std::env::var("GOL_CUDA_PDL").as_deref() {
        Err(_) => Ok(capable),
        Ok("0") => Ok(false),
        Ok("1") if capable => Ok(true),
        Ok("1") => Err(CudaError::Refused(format!(
            "GOL_CUDA_PDL=1: {} (compute capability {}.{}) has no programmatic dependent launch; it needs 9.0",
            gpu.info.name, gpu.info.capability.0, gpu.info.capability.1
        ))),
        Ok(other) => Err(CudaError::Refused(format!(
            "GOL_CUDA_PDL={other:?}: expected 0 (plain launches) or 1 (kernels start early)"
        ))),
    }
}

/// A kernel parameter for [`kernel`]: a pointer to its value.
pub fn param<T>(value: &mut T) -> *mut c_void {
    (value as *mut T).cast()
}

/// Queues `function` on `stream` with `cfg`; with `early`, it may start before the previous
/// kernel in the stream has ended.
///
/// # Safety
/// `params` holds one pointer per kernel parameter, in order, each to a value of the
/// parameter's exact type (a `CUdeviceptr` for a pointer parameter) that lives until this
/// returns; the memory the kernel reaches through them must stay valid until it has run. With
/// `early`, the kernel must call `wait_for_previous_grid()` before it touches memory that the
/// previous kernel in the stream reads or writes.
pub unsafe fn kernel(
    stream: &CudaStream,
    function: &CudaFunction,
    cfg: LaunchConfig,
    params: &mut [*mut c_void],
    early: bool,
) -> Result<()> {
    stream.context().bind_to_thread()?;
    // SAFETY: the attribute is plain data; every field the driver reads for this id is set.
    let mut attribute: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
    attribute.id = CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attribute.value.programmaticStreamSerializationAllowed = 1;
    let config = sys::CUlaunchConfig {
        gridDimX: cfg.grid_dim.0,
        gridDimY: cfg.grid_dim.1,
        gridDimZ: cfg.grid_dim.2,
        blockDimX: cfg.block_dim.0,
        blockDimY: cfg.block_dim.1,
        blockDimZ: cfg.block_dim.2,
        sharedMemBytes: cfg.shared_mem_bytes,
        hStream: stream.cu_stream(),
        attrs: &mut attribute,
        numAttrs: early as u32,
    };
    // SAFETY: `config` and `attribute` live across the call; the parameters are as the caller
    // promised.
    unsafe {
        sys::cuLaunchKernelEx(
            &config,
            function.cu_function(),
            params.as_mut_ptr(),
            std::ptr::null_mut(),
        )
    }
    .result()?;
    Ok(())
}
