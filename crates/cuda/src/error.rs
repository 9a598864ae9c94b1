//! Errors of the CUDA backend, mapped into the core error so that the core never names cudarc.

/// What can go wrong on the GPU side.
#[derive(Debug, thiserror::Error)]
pub enum CudaError {
    /// No driver, no device, or no NVRTC for a kernel not yet cached.
    #[error("{0}")]
    Unavailable(String),
    /// A request the device cannot meet (memory, block size, array size).
    #[error("{0}")]
    Refused(String),
    /// NVRTC rejected a kernel; carries the compiler's log.
    #[error("kernel compilation failed: {0}")]
    Compile(String),
    /// A core error (a grid that cannot be built, say).
    #[error(transparent)]
    Core(#[from] gol_core::Error),
    /// A driver call failed.
    #[error("CUDA driver error: {0}")]
    Driver(#[from] cudarc::driver::DriverError),
}

/// Result with [`CudaError`].
pub type Result<T, E = CudaError> = std::result::Result<T, E>;

impl From<crate::nvrtc::NvrtcError> for CudaError {
    fn from(e: crate::nvrtc::NvrtcError) -> Self {
        match e {
            crate::nvrtc::NvrtcError::Missing => CudaError::Unavailable(e.to_string()),
            crate::nvrtc::NvrtcError::Rejected(log) => CudaError::Compile(log),
        }
    }
}

impl From<CudaError> for gol_core::Error {
    fn from(e: CudaError) -> Self {
        match e {
            CudaError::Core(core) => core,
            other => gol_core::Error::Device(Box::new(other)),
        }
    }
}
