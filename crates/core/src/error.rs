//! The error type of the core crate.

use std::path::PathBuf;

/// Everything that can go wrong in the core crate.
///
/// Every variant renders as one line that names the problem (and the file and line where there
/// is one), so the command-line tool can print it as it is.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A rule string that is not valid B/S notation, or a count the dimension cannot have.
    #[error("invalid rule {}: {reason}", quoted(rule))]
    Rule {
        /// The rule as given.
        rule: String,
        /// Why it was refused.
        reason: String,
    },
    /// A malformed pattern file.
    #[error("{}:{line}: {message}", path.display())]
    Parse {
        /// The file (or `<input>` for in-memory text).
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What is wrong there.
        message: String,
    },
    /// A grid size that is zero, too large to address, or larger than the memory available.
    #[error("{0}")]
    Size(String),
    /// A world or buffer larger than the memory available, or than can be addressed: refused
    /// before allocating.
    #[error("{0}")]
    Memory(String),
    /// A problem with the requested run (a pattern larger than the grid, a missing grid size…).
    #[error("{0}")]
    Invalid(String),
    /// An engine that cannot run here or refused the problem.
    #[error("{0}")]
    Engine(String),
    /// An engine name that no registry has.
    #[error("unknown engine {}; engines: auto, {}", quoted(name), known.join(", "))]
    UnknownEngine {
        /// The name as given.
        name: String,
        /// Every engine's name.
        known: Vec<&'static str>,
    },
    /// A GPU engine's failure, with the device's own error (the driver's, NVRTC's) as its
    /// source; it reads as that error.
    #[error(transparent)]
    Device(Box<dyn std::error::Error + Send + Sync + 'static>),
    /// Reading or writing a file failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
}

/// The most characters of input a message quotes ([`quoted`]).
pub const MOST_QUOTED: usize = 80;

/// `text`, input quoted in a message: in double quotes with escapes, cut to [`MOST_QUOTED`]
/// characters and marked as cut, with its whole length, where longer (a 4 GB line of a
/// decompressed file must not become a 4 GB message).
pub fn quoted(text: &str) -> String {
    if text.chars().nth(MOST_QUOTED).is_none() {
        return format!("{text:?}");
    }
    let cut: String = text.chars().take(MOST_QUOTED).collect();
    format!("{cut:?}… (cut; {} bytes in all)", text.len())
}

/// Result with the core [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// A failure of the system to read or write `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}
