//! NVRTC: finding the library, compiling a kernel's source to a CUBIN for an architecture (no
//! GPU needed), and the key a CUBIN is filed under.
//!
//! cudarc loads `libnvrtc` by name on first use and panics when it is missing, so nothing here
//! calls it before [`present`] has probed for it. It is looked for under its usual names first,
//! then in the usual CUDA folders (`$CUDA_HOME/lib64`, `/usr/local/cuda/lib64`, …): a library
//! found there is loaded by path, after which cudarc's load by name finds it already in the
//! process.
//!
//! The build script compiles this module too (`build.rs`), so it depends on cudarc's NVRTC
//! bindings and `libloading` alone.

use std::ffi::CString;
use std::path::PathBuf;
use std::sync::OnceLock;

use cudarc::nvrtc as lib;

/// Why NVRTC gave no CUBIN.
#[derive(Debug)]
pub enum NvrtcError {
    /// No `libnvrtc.so.13` could be loaded.
    Missing,
    /// NVRTC refused the source; carries the compiler's log.
    Rejected(String),
}

impl std::fmt::Display for NvrtcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NvrtcError::Missing => f.write_str("no NVRTC found (libnvrtc.so.13) to compile the kernels: install the CUDA 13 toolkit or the nvidia-cuda-nvrtc package and put its lib folder on LD_LIBRARY_PATH"),
            NvrtcError::Rejected(log) => write!(f, "kernel compilation failed: {log}"),
        }
    }
}

impl std::error::Error for NvrtcError {}

/// Whether the NVRTC library can be loaded (no GPU is needed to compile kernels).
pub fn present() -> bool {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    *PRESENT.get_or_init(|| {
        // SAFETY: loading a shared library runs its initialisers; libnvrtc's are sound.
        if unsafe { lib::sys::is_culib_present() } {
            return true;
        }
        for dir in library_dirs() {
            let path = dir.join("libnvrtc.so.13");
            // SAFETY: as above; the handle is leaked so that the library stays loaded for
            // cudarc's later load by name.
            if let Ok(lib) = unsafe { libloading::Library::new(&path) } {
                std::mem::forget(lib);
                // SAFETY: as above.
                return unsafe { lib::sys::is_culib_present() };
            }
        }
        false
    })
}

/// Folders where CUDA libraries usually live.
fn library_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(home) = std::env::var_os(var) {
            dirs.push(PathBuf::from(home).join("lib64"));
        }
    }
    dirs.push("/usr/local/cuda/lib64".into());
    dirs.push("/usr/local/cuda/targets/x86_64-linux/lib".into());
    dirs
}

/// Compiles `source` to a CUBIN (an ELF image of the device's own code) for `arch`, e.g.
/// `sm_90`, with NVRTC; no GPU is needed. On failure the error carries NVRTC's log.
pub fn compile(source: &str, arch: &str) -> Result<Vec<u8>, NvrtcError> {
    if !present() {
        return Err(NvrtcError::Missing);
    }
    let program = Program::new(source)?;
    program.compile(&[format!("--gpu-architecture={arch}"), "-std=c++17".into()])?;
    program.cubin()
}

/// An NVRTC program, destroyed on drop.
struct Program {
    handle: lib::sys::nvrtcProgram,
    /// The source, kept alive as long as the program that may point into it.
    _source: CString,
}

impl Program {
    fn new(source: &str) -> Result<Self, NvrtcError> {
        let source = CString::new(source)
            .map_err(|_| NvrtcError::Rejected("the kernel source holds a NUL byte".into()))?;
        let handle = lib::result::create_program(&source, None)
            .map_err(|e| NvrtcError::Rejected(format!("{e:?}")))?;
        Ok(Self {
            handle,
            _source: source,
        })
    }

    fn compile(&self, options: &[String]) -> Result<(), NvrtcError> {
        // SAFETY: `handle` is a live program: created in `new`, destroyed only in `drop`.
        let Err(e) = (unsafe { lib::result::compile_program(self.handle, options) }) else {
            return Ok(());
        };
        // SAFETY: as above.
        let log = unsafe { lib::result::get_program_log(self.handle) }.unwrap_or_default();
        let log: Vec<u8> = log
            .iter()
            .map(|&c| c as u8)
            .take_while(|&c| c != 0)
            .collect();
        let log = String::from_utf8_lossy(&log);
        Err(NvrtcError::Rejected(format!("{e:?}\n{log}")))
    }

    fn cubin(&self) -> Result<Vec<u8>, NvrtcError> {
        let fail = |e: lib::result::NvrtcError| NvrtcError::Rejected(format!("{e:?}"));
        let mut size = 0usize;
        // SAFETY: `handle` is a live, compiled program; NVRTC writes one usize.
        unsafe { lib::sys::nvrtcGetCUBINSize(self.handle, &mut size) }
            .result()
            .map_err(fail)?;
        let mut cubin = vec![0u8; size];
        // SAFETY: as above; `cubin` has the `size` bytes NVRTC writes.
        unsafe { lib::sys::nvrtcGetCUBIN(self.handle, cubin.as_mut_ptr().cast()) }
            .result()
            .map_err(fail)?;
        Ok(cubin)
    }
}

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: `handle` is live and nothing uses it after this.
        let _ = unsafe { lib::result::destroy_program(self.handle) };
    }
}

/// The key a CUBIN of `source` for `arch` is filed under, in the disk cache and among the
/// CUBINs built into `gol`: FNV-1a over the source, the architecture and this crate's version.
pub fn key(source: &str, arch: &str) -> u64 {
    fnv1a(
        [source, arch, env!("CARGO_PKG_VERSION")]
            .iter()
            .flat_map(|part| part.bytes().chain([0])),
    )
}

/// The 64-bit FNV-1a hash of `bytes`.
pub fn fnv1a(bytes: impl IntoIterator<Item = u8>) -> u64 {
    bytes
        .into_iter()
        .fold(0xcbf2_9ce4_8422_2325u64, |hash, byte| {
            (hash ^ byte as u64).wrapping_mul(0x0100_0000_01b3)
        })
}
