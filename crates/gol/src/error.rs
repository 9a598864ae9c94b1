//! The error type of the library.

/// Everything that can go wrong in setting up or running a [`crate::Simulation`].
///
/// Each variant renders as one line; the causes stay reachable through
/// [`std::error::Error::source`] (a GPU engine's failure carries the driver's or NVRTC's own
/// error).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A description of a run that contradicts itself or lacks something it needs (a pattern
    /// file with no grid size, a `.bin` file with a size…).
    #[error("{0}")]
    Invalid(String),
    /// An engine that disagrees with the oracle ([`crate::verify`]): the first differing case.
    #[error("{0}")]
    Mismatch(String),
    /// An error of the core crate or of an engine: a bad rule or file, a size that does not
    /// fit, an engine that cannot run here.
    #[error(transparent)]
    Core(#[from] gol_core::Error),
}

impl From<gol_cuda::CudaError> for Error {
    fn from(e: gol_cuda::CudaError) -> Self {
        Error::Core(e.into())
    }
}

/// Result with the library's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Fails with [`Error::Invalid`] made from a format string.
macro_rules! invalid {
    ($($arg:tt)*) => {
        return Err($crate::error::Error::Invalid(format!($($arg)*)))
    };
}
pub(crate) use invalid;
