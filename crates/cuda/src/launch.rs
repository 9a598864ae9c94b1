//! Kernel launches through `cuLaunchKernelEx`, which can let a kernel start before the one
//! before it in the stream has ended (programmatic dependent launch; `kernels/dependent.cu` is
//! the kernel side) and make the blocks of a grid one thread-block cluster (both from compute
//! capability 9.0). cudarc's launch builder has no way to pass launch attributes, so the
//! engines that use this hand over their arguments raw.

use std::ffi::c_void;

use cudarc::driver::sys::{self, CUfunction_attribute, CUlaunchAttributeID};
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
    // SAFETY: as the caller promised.
    unsafe { launch(stream, function, cfg, params, early, false) }
}

/// Queues `function` on `stream` with `cfg` as one thread-block cluster: every block of the
/// grid (along x) in the same cluster, so that they can read each other's shared memory
/// (compute capability 9.0 and later). With `early`, as for [`kernel`].
///
/// # Safety
/// As for [`kernel`]; and the function must allow a cluster of `cfg.grid_dim.0` blocks (see
/// [`allow_large_clusters`]).
pub unsafe fn cluster(
    stream: &CudaStream,
    function: &CudaFunction,
    cfg: LaunchConfig,
    params: &mut [*mut c_void],
    early: bool,
) -> Result<()> {
    // SAFETY: as the caller promised.
    unsafe { launch(stream, function, cfg, params, early, true) }
}

/// Lets `function` run in clusters of more than 8 blocks (the portable limit), where the GPU
/// can, and take up to `shared` bytes of dynamic shared memory per block.
pub fn allow_large_clusters(function: &CudaFunction, shared: u32) -> Result<()> {
    function.set_attribute(
        CUfunction_attribute::CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED,
        1,
    )?;
    function.set_attribute(
        CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
        shared as i32,
    )?;
    Ok(())
}

/// How many clusters of `cfg` (the whole grid one cluster, as [`cluster`] launches it) the GPU
/// can hold at once: 0 where it cannot run one.
pub fn clusters_that_fit(
    stream: &CudaStream,
    function: &CudaFunction,
    cfg: LaunchConfig,
) -> Result<u32> {
    stream.context().bind_to_thread()?;
    let mut attribute = cluster_of(cfg.grid_dim.0);
    let config = config(stream, cfg, std::slice::from_mut(&mut attribute));
    let mut count: std::ffi::c_int = 0;
    // SAFETY: `config` and its attribute live across the call, which only reads them.
    let status =
        unsafe { sys::cuOccupancyMaxActiveClusters(&mut count, function.cu_function(), &config) };
    match status {
        // A cluster larger than the GPU allows is refused with "invalid value".
        sys::CUresult::CUDA_ERROR_INVALID_VALUE
        | sys::CUresult::CUDA_ERROR_INVALID_CLUSTER_SIZE => Ok(0),
        other => {
            other.result()?;
            Ok(count.max(0) as u32)
        }
    }
}

/// The attribute that lets a launch start before the previous kernel ends.
fn early_start() -> sys::CUlaunchAttribute {
    // SAFETY: the attribute is plain data; every field the driver reads for this id is set.
    let mut attribute: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
    attribute.id = CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attribute.value.programmaticStreamSerializationAllowed = 1;
    attribute
}

/// The attribute that makes clusters of `blocks` blocks along x.
fn cluster_of(blocks: u32) -> sys::CUlaunchAttribute {
    // SAFETY: as in `early_start`.
    let mut attribute: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
    attribute.id = CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attribute.value.clusterDim.x = blocks;
    attribute.value.clusterDim.y = 1;
    attribute.value.clusterDim.z = 1;
    attribute
}

fn config(
    stream: &CudaStream,
    cfg: LaunchConfig,
    attributes: &mut [sys::CUlaunchAttribute],
) -> sys::CUlaunchConfig {
    sys::CUlaunchConfig {
        gridDimX: cfg.grid_dim.0,
        gridDimY: cfg.grid_dim.1,
        gridDimZ: cfg.grid_dim.2,
        blockDimX: cfg.block_dim.0,
        blockDimY: cfg.block_dim.1,
        blockDimZ: cfg.block_dim.2,
        sharedMemBytes: cfg.shared_mem_bytes,
        hStream: stream.cu_stream(),
        attrs: attributes.as_mut_ptr(),
        numAttrs: attributes.len() as u32,
    }
}

/// `cuLaunchKernelEx`, the blocks one cluster where `cluster` says, starting early where
/// `early` says.
///
/// # Safety
/// As for [`kernel`] and, with `cluster`, [`cluster`].
unsafe fn launch(
    stream: &CudaStream,
    function: &CudaFunction,
    cfg: LaunchConfig,
    params: &mut [*mut c_void],
    early: bool,
    cluster: bool,
) -> Result<()> {
    stream.context().bind_to_thread()?;
    let mut attributes = Vec::with_capacity(2);
    if cluster {
        attributes.push(cluster_of(cfg.grid_dim.0));
    }
    if early {
        attributes.push(early_start());
    }
    let config = config(stream, cfg, &mut attributes);
    // SAFETY: `config` and the attributes live across the call; the parameters are as the
    // caller promised.
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
