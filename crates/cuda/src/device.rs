//! The GPU: probing for the driver, the context and stream, facts about the device, and
//! compiled kernel modules (cached per process and on disk, or built into `gol`).
//!
//! cudarc loads `libcuda` by name on first use and panics when it is missing, so nothing here
//! touches cudarc's driver calls before [`gpu`] has probed for it. A kernel's CUBIN comes from
//! those built into `gol` ([`crate::source::shipped`]), else from the disk cache, else from
//! NVRTC ([`crate::nvrtc`]), which only the last case loads: a first run of the default engine
//! under the default rule on a fresh machine reads no compiler from disk.

use std::collections::HashMap;
use std::io::Read;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::sys::CUdevice_attribute as Attr;
use cudarc::driver::{CudaContext, CudaModule};
use cudarc::nvrtc::Ptx;

use crate::error::{CudaError, Result};
use crate::nvrtc::{self, fnv1a};

/// What `gol info` and the engines need to know about the device.
#[derive(Clone, Debug)]
pub struct DeviceInfo {
    /// Marketing name, e.g. "NVIDIA H100 80GB HBM3".
    pub name: String,
    /// Compute capability (major, minor).
    pub capability: (i32, i32),
    /// Streaming multiprocessors.
    pub multiprocessors: i32,
    /// Device memory in bytes.
    pub memory: usize,
    /// Driver version as the driver reports it (e.g. 13000 for 13.0).
    pub driver: i32,
    /// Most threads in one block.
    pub max_threads_per_block: i32,
    /// Peak SM clock in hertz.
    pub clock_hz: f64,
    /// Most resident threads per multiprocessor.
    pub max_threads_per_multiprocessor: i32,
    /// Largest 2D CUDA array usable both as a texture and as a surface (width, height).
    pub max_array_2d: (usize, usize),
}

/// One GPU, ready to run kernels.
pub struct Gpu {
    /// The primary context of the device.
    pub ctx: Arc<CudaContext>,
    /// Facts about the device.
    pub info: DeviceInfo,
    modules: Mutex<HashMap<u64, Arc<CudaModule>>>,
}

/// The GPUs opened so far (or why they could not be), by device ordinal.
type Opened = HashMap<usize, std::result::Result<Arc<Gpu>, String>>;

static GPUS: OnceLock<Mutex<Opened>> = OnceLock::new();

/// The first GPU, opened on first use; an error (never a panic) where there is no driver or no
/// device.
pub fn gpu() -> Result<Arc<Gpu>> {
    gpu_on(0)
}

/// GPU `ordinal`, opened on first use (errors as [`gpu`], and for an ordinal the machine does
/// not have).
pub fn gpu_on(ordinal: usize) -> Result<Arc<Gpu>> {
    let mut opened = GPUS
        .get_or_init(Default::default)
        .lock()
        .expect("opening a GPU does not panic");
    opened
        .entry(ordinal)
        .or_insert_with(|| open(ordinal).map(Arc::new).map_err(|e| e.to_string()))
        .clone()
        .map_err(CudaError::Unavailable)
}

/// How many GPUs this machine has (an error where there is no driver). Opens none of them.
pub fn device_count() -> Result<usize> {
    probe_driver()?;
    let count = CudaContext::device_count()
        .map_err(|e| CudaError::Unavailable(format!("no CUDA device/driver found ({e})")))?;
    Ok(count as usize)
}

/// How many GPUs this process may use, found without starting the driver (which costs a tenth
/// of a second or more): the NVIDIA kernel driver's list of GPUs, narrowed by
/// `CUDA_VISIBLE_DEVICES` where it is set, and none where libcuda cannot be loaded. For
/// choosing an engine; [`device_count`] asks the driver itself.
pub fn gpus_present() -> usize {
    let listed = std::fs::read_dir("/proc/driver/nvidia/gpus")
        .map(|entries| entries.count())
        .unwrap_or(0);
    let visible = match std::env::var("CUDA_VISIBLE_DEVICES") {
        Ok(list) => list
            .split(',')
            .map(str::trim)
            // The driver stops at the first entry that names no device.
            .take_while(|d| !d.is_empty() && !d.starts_with('-'))
            .count(),
        Err(_) => listed,
    };
    if listed == 0 || visible == 0 || probe_driver().is_err() {
        return 0;
    }
    listed.min(visible)
}

/// Fails where libcuda is missing, before anything touches cudarc (which would panic).
fn probe_driver() -> Result<()> {
    // SAFETY: loading libcuda runs its initialisers, which are sound to run at any time.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Err(CudaError::Unavailable(
            "no CUDA device/driver found (libcuda is not installed)".into(),
        ));
    }
    Ok(())
}

fn open(ordinal: usize) -> Result<Gpu> {
    probe_driver()?;
    if ordinal > 0 {
        let count = device_count()?;
        if ordinal >= count {
            return Err(CudaError::Unavailable(format!(
                "GPU {ordinal} asked for, but this machine has {count} (numbered from 0)"
            )));
        }
    }
    let ctx = CudaContext::new(ordinal)
        .map_err(|e| CudaError::Unavailable(format!("no CUDA device/driver found ({e})")))?;
    let attr = |a: Attr| ctx.attribute(a);
    let mut driver = 0;
    // SAFETY: cuDriverGetVersion writes one int through a valid pointer.
    unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut driver) }.result()?;
    let info = DeviceInfo {
        name: ctx.name()?,
        capability: ctx.compute_capability()?,
        multiprocessors: attr(Attr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
        memory: ctx.total_mem()?,
        driver,
        max_threads_per_block: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
        clock_hz: attr(Attr::CU_DEVICE_ATTRIBUTE_CLOCK_RATE)? as f64 * 1e3,
        max_threads_per_multiprocessor: attr(
            Attr::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
        )?,
        max_array_2d: (
            attr(Attr::CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH)?
                .min(attr(Attr::CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_WIDTH)?) as usize,
            attr(Attr::CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT)?
                .min(attr(Attr::CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_HEIGHT)?)
                as usize,
        ),
    };
    // SAFETY: each engine keeps all its buffers on its one stream, so cudarc's cross-stream
    // event tracking (an event per buffer per launch) is not needed; turning it off cuts
    // launch overhead.
    unsafe { ctx.disable_event_tracking() };
    Ok(Gpu {
        ctx,
        info,
        modules: Mutex::new(HashMap::new()),
    })
}

impl Gpu {
    /// The NVRTC architecture of this device, e.g. `sm_90`.
    pub fn arch(&self) -> String {
        format!("sm_{}{}", self.info.capability.0, self.info.capability.1)
    }

    /// The module compiled from `source` for this device, shared by every engine that asks
    /// for the same source: from this process's cache, else loaded from the disk cache or NVRTC.
    pub fn module(&self, source: &str) -> Result<Arc<CudaModule>> {
        let key = nvrtc::key(source, &self.arch());
        if let Some(module) = self.modules.lock().expect("module cache lock").get(&key) {
            return Ok(module.clone());
        }
        let module = self.private_module(source)?;
        self.modules
            .lock()
            .expect("module cache lock")
            .insert(key, module.clone());
        Ok(module)
    }

    /// The module of `source` where it can be had without compiling: from this process's
    /// cache, the CUBINs built into `gol` or the disk cache ([`Gpu::module`] without NVRTC).
    pub fn ready_module(&self, source: &str) -> Option<Arc<CudaModule>> {
        let key = nvrtc::key(source, &self.arch());
        let mut modules = self.modules.lock().expect("module cache lock");
        if let Some(module) = modules.get(&key) {
            return Some(module.clone());
        }
        let module = self.ready_private_module(source)?;
        modules.insert(key, module.clone());
        Some(module)
    }

    /// A module of its own for `source` ([`Gpu::private_module`]) where it can be had without
    /// compiling: from the CUBINs built into `gol` or the disk cache.
    pub fn ready_private_module(&self, source: &str) -> Option<Arc<CudaModule>> {
        let key = nvrtc::key(source, &self.arch());
        if let Some(cubin) = shipped(key) {
            if let Ok(module) = self.ctx.load_module(Ptx::from_binary(cubin)) {
                return Some(module);
            }
        }
        let cubin = cache_path(key, &self.arch())
            .as_deref()
            .and_then(load_cached)?;
        self.ctx.load_module(Ptx::from_binary(cubin)).ok()
    }

    /// A module of its own, for an engine that writes the module's globals (its `__constant__`
    /// memory would otherwise be shared with every other engine of the same source).
    ///
    /// The module comes from the CUBINs built into `gol` ([`shipped_cubins`]) or from the disk
    /// cache where either holds this source's CUBIN for this device, so that a run needs neither
    /// NVRTC nor the driver's PTX compiler; else NVRTC compiles it and the cache keeps it. A
    /// cached file whose checksum fails (truncated or damaged, see `load_cached`) or that the
    /// driver refuses is compiled and saved again; a cache that cannot be written only makes
    /// the next start slower.
    pub fn private_module(&self, source: &str) -> Result<Arc<CudaModule>> {
        if let Some(module) = self.ready_private_module(source) {
            return Ok(module);
        }
        let arch = self.arch();
        let cubin = nvrtc::compile(source, &arch)?;
        self.keep(nvrtc::key(source, &arch), cubin)
    }

    /// Starts compiling `source` for this device in a child process of its own; the module is
    /// [`Compiling::module`]'s once it is done. A process that exits first does not wait for it
    /// (see [`Compiling`]).
    pub fn compile_in_background(&self, source: String) -> Compiling {
        let arch = self.arch();
        let key = nvrtc::key(&source, &arch);
        let child = match nvrtc::present() {
            true => compile_in_child(&source, &arch),
            false => Err(nvrtc::NvrtcError::Missing.into()),
        };
        match child {
            Ok((pid, reader)) => Compiling {
                key,
                pid,
                reader: Some(reader),
                failed: None,
            },
            Err(e) => Compiling {
                key,
                pid: 0,
                reader: None,
                failed: Some(e),
            },
        }
    }

    /// Saves a compiled CUBIN in the disk cache and loads it as a module of its own.
    fn keep(&self, key: u64, cubin: Vec<u8>) -> Result<Arc<CudaModule>> {
        if let Some(path) = cache_path(key, &self.arch()) {
            save(&path, &cubin);
        }
        Ok(self.ctx.load_module(Ptx::from_binary(cubin))?)
    }

    /// Refuses `bytes` of device memory for `what` if more than is free now.
    pub fn check_memory(&self, bytes: u64, what: &str) -> Result<()> {
        let (free, _) = self.ctx.mem_get_info()?;
        if bytes > free as u64 {
            return Err(CudaError::Refused(format!(
                "{what} needs {} of GPU memory, but only {} is free on the {}",
                gol_core::memory::human_bytes(bytes),
                gol_core::memory::human_bytes(free as u64),
                self.info.name
            )));
        }
        Ok(())
    }

    /// Refuses `bytes` of shared memory per block for `what` if the device cannot give a block
    /// that much (even when asked to).
    pub fn check_shared(&self, bytes: usize, what: &str) -> Result<()> {
        let most = self.max_shared_per_block()?;
        if bytes > most {
            return Err(CudaError::Refused(format!(
                "{what} needs {} of shared memory per block; the {} gives at most {}",
                gol_core::memory::human_bytes(bytes as u64),
                self.info.name,
                gol_core::memory::human_bytes(most as u64)
            )));
        }
        Ok(())
    }

    /// The most shared memory a block can have, in bytes (when it asks for more than the
    /// default).
    pub fn max_shared_per_block(&self) -> Result<usize> {
        Ok(self
            .ctx
            .attribute(Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?
            as usize)
    }

    /// Threads the whole GPU holds at once.
    pub fn resident_threads(&self) -> u32 {
        (self.info.multiprocessors * self.info.max_threads_per_multiprocessor) as u32
    }

    /// Checks a block size against the device's limit.
    pub fn check_block(&self, block: (u32, u32)) -> Result<()> {
        let threads = block.0 as u64 * block.1 as u64;
        if threads > self.info.max_threads_per_block as u64 {
            return Err(CudaError::Refused(format!(
                "block {}x{} has {threads} threads; the {} allows at most {} per block",
                block.0, block.1, self.info.name, self.info.max_threads_per_block
            )));
        }
        Ok(())
    }
}

/// A kernel being compiled in a child process ([`Gpu::compile_in_background`]).
///
/// A process, not a thread: a thread inside NVRTC when the process exits meets NVRTC's static
/// objects being destroyed by `exit` and crashes the process (measured: the tests' processes
/// ended in SIGSEGV after passing). The child is forked with NVRTC already loaded, compiles,
/// writes the outcome to a pipe and leaves with `_exit`, running no exit handlers; a thread of
/// the parent reads the pipe and reaps the child. Dropping a compile kills its child.
pub struct Compiling {
    key: u64,
    /// The child's process id (0 where none was started).
    pid: libc::pid_t,
    /// The thread reading the child's outcome; `None` once joined, or where no child was
    /// started.
    reader: Option<std::thread::JoinHandle<Result<Vec<u8>>>>,
    /// Why no child could be started.
    failed: Option<CudaError>,
}

impl Compiling {
    /// The compiled module once the compile is done (saved in the disk cache and this
    /// process's, as [`Gpu::module`] keeps it), its error if it failed; `None` while it runs
    /// or once taken.
    pub fn module(&mut self, gpu: &Gpu) -> Option<Result<Arc<CudaModule>>> {
        if let Some(e) = self.failed.take() {
            return Some(Err(e));
        }
        if !self.reader.as_ref()?.is_finished() {
            return None;
        }
        let compiled = self.reader.take()?.join().unwrap_or_else(|_| {
            Err(CudaError::Refused(
                "reading the background kernel compile panicked".into(),
            ))
        });
        self.pid = 0;
        Some(compiled.and_then(|cubin| {
            let module = gpu.keep(self.key, cubin)?;
            (gpu.modules.lock().expect("module cache lock")).insert(self.key, module.clone());
            Ok(module)
        }))
    }
}

impl Drop for Compiling {
    fn drop(&mut self) {
        if self.pid > 0 && self.reader.as_ref().is_some_and(|r| !r.is_finished()) {
            // SAFETY: kill(2) on our own child, not yet reaped (its reader reaps it after the
            // pipe closes, which the kill makes happen), so the pid cannot have been reused.
            unsafe { libc::kill(self.pid, libc::SIGKILL) };
        }
    }
}

/// Forks a child that compiles `source` for `arch` with NVRTC (already loaded) and writes to a
/// pipe a status byte (0 for a CUBIN, 1 for NVRTC's error) and the CUBIN or the error's text;
/// returns its pid and the thread that reads its outcome and then reaps it.
fn compile_in_child(
    source: &str,
    arch: &str,
) -> Result<(libc::pid_t, std::thread::JoinHandle<Result<Vec<u8>>>)> {
    use std::io::Read;
    use std::os::fd::FromRawFd;

    let failed = |what: &str| {
        CudaError::Refused(format!(
            "starting a background kernel compile: {what}: {}",
            std::io::Error::last_os_error()
        ))
    };
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two descriptors into the array it is given.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(failed("pipe"));
    }
    let (read_end, write_end) = (fds[0], fds[1]);
    // SAFETY: the child runs only NVRTC's compile (loaded before the fork, see `present`),
    // writes to its pipe and leaves with `_exit`, running no exit handlers and touching neither
    // the CUDA driver nor any lock another thread of the parent may have held.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        // SAFETY: closing the descriptors pipe2 made, used by nobody else.
        unsafe {
            libc::close(read_end);
            libc::close(write_end);
        }
        return Err(failed("fork"));
    }
    if pid == 0 {
        let outcome = std::panic::catch_unwind(|| nvrtc::compile(source, arch));
        let (status, bytes) = match outcome {
            Ok(Ok(cubin)) => (0u8, cubin),
            Ok(Err(e)) => (1u8, e.to_string().into_bytes()),
            Err(_) => (1u8, b"NVRTC panicked in the compiling process".to_vec()),
        };
        let message = [&[status][..], &bytes].concat();
        let mut written = 0;
        while written < message.len() {
            // SAFETY: writes from a live buffer to the pipe's write end.
            let n = unsafe {
                libc::write(
                    write_end,
                    message[written..].as_ptr().cast(),
                    message.len() - written,
                )
            };
            if n <= 0 {
                break;
            }
            written += n as usize;
        }
        // SAFETY: leaves the child at once, running no exit handlers (see above).
        unsafe { libc::_exit(0) };
    }
    // SAFETY: the parent's copy of the write end, used by nobody else.
    unsafe { libc::close(write_end) };
    // SAFETY: the read end is ours alone from here on; the File closes it.
    let mut pipe = unsafe { std::fs::File::from_raw_fd(read_end) };
    let reader = std::thread::Builder::new()
        .name("gol-nvrtc".into())
        .spawn(move || {
            let mut message = Vec::new();
            let read = pipe.read_to_end(&mut message);
            let mut status = 0;
            // SAFETY: reaps our own child, which has closed its end of the pipe.
            unsafe { libc::waitpid(pid, &mut status, 0) };
            read.map_err(|e| CudaError::Refused(format!("reading the kernel compile: {e}")))?;
            match message.split_first() {
                Some((0, cubin)) => Ok(cubin.to_vec()),
                Some((_, log)) => Err(CudaError::Compile(String::from_utf8_lossy(log).into())),
                None => Err(CudaError::Refused(
                    "the background kernel compile ended without a word (killed?)".into(),
                )),
            }
        })
        .map_err(|e| CudaError::Refused(format!("starting the compile's reader: {e}")))?;
    Ok((pid, reader))
}

/// The CUBINs compiled by the build script (`build.rs`): entries of a little-endian `u64` key
/// ([`nvrtc::key`]), a `u64` length and that many bytes of deflated CUBIN; none where NVRTC
/// was missing when `gol` was built.
static SHIPPED: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/shipped.bin"));

/// Each CUBIN built into `gol` (by `build.rs`): its key and its deflated CUBIN ([`inflate`] gives the CUBIN).
pub fn shipped_cubins() -> impl Iterator<Item = (u64, &'static [u8])> {
    let mut rest = SHIPPED;
    std::iter::from_fn(move || {
        let (key, after) = rest.split_first_chunk::<8>()?;
        let (len, after) = after.split_first_chunk::<8>()?;
        let (cubin, after) =
            after.split_at_checked(usize::try_from(u64::from_le_bytes(*len)).ok()?)?;
        rest = after;
        Some((u64::from_le_bytes(*key), cubin))
    })
}

/// Whether the CUBIN of `source` is built into `gol` or in the disk cache for one of the
/// architectures `gol` ships ([`crate::source::SHIPPED_ARCHES`]): found without a GPU, so
/// without knowing which of them this machine's is.
pub fn is_ready_anywhere(source: &str) -> bool {
    crate::source::SHIPPED_ARCHES.iter().any(|arch| {
        let key = nvrtc::key(source, arch);
        shipped_cubins().any(|(k, _)| k == key)
            || cache_path(key, arch).is_some_and(|path| path.is_file())
    })
}

/// The CUBIN built into `gol` under `key`, if any.
fn shipped(key: u64) -> Option<Vec<u8>> {
    let (_, packed) = shipped_cubins().find(|&(k, _)| k == key)?;
    inflate(packed).ok()
}

/// A shipped CUBIN from its deflated bytes ([`shipped_cubins`]).
pub fn inflate(packed: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut cubin = Vec::with_capacity(4 * packed.len());
    flate2::read::DeflateDecoder::new(packed).read_to_end(&mut cubin)?;
    Ok(cubin)
}

/// The first bytes of a cache file: a tag, then the FNV-1a hash of the CUBIN after them.
const CACHE_TAG: &[u8; 8] = b"golcubin";

/// The CUBIN of a cache file, where its checksum holds: a file cut short or damaged is taken
/// as absent (and then compiled and written again).
fn load_cached(path: &std::path::Path) -> Option<Vec<u8>> {
    let bytes = std::fs::read(path).ok()?;
    let (head, cubin) = bytes.split_at_checked(CACHE_TAG.len() + 8)?;
    let (tag, sum) = head.split_at(CACHE_TAG.len());
    let sum = u64::from_le_bytes(sum.try_into().ok()?);
    (tag == CACHE_TAG && sum == fnv1a(cubin.iter().copied())).then(|| cubin.to_vec())
}

/// The disk cache's file for the CUBIN of `key` on `arch`.
fn cache_path(key: u64, arch: &str) -> Option<PathBuf> {
    cache_dir().map(|d| d.join(format!("{key:016x}-{arch}.cubin")))
}

/// `$GOL_CACHE_DIR`, else `$XDG_CACHE_HOME/gol/kernels`, else `~/.cache/gol/kernels`.
fn cache_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("GOL_CACHE_DIR") {
        return Some(PathBuf::from(dir));
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("gol").join("kernels"))
}

/// Writes a cache file atomically (temporary file, then rename), the CUBIN behind its tag and
/// checksum ([`load_cached`]); a cache that cannot be written is not an error, only a slower
/// next start.
fn save(path: &std::path::Path, bytes: &[u8]) {
    let Some(dir) = path.parent() else { return };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let sum = fnv1a(bytes.iter().copied()).to_le_bytes();
    let file = [&CACHE_TAG[..], &sum, bytes].concat();
    if std::fs::write(&tmp, file).is_ok() && std::fs::rename(&tmp, path).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn a_child_process_compiles_a_kernel_or_reports_the_log() {
        if !nvrtc::present() {
            assert!(
                std::env::var_os("GOL_REQUIRE_NVRTC").is_none(),
                "GOL_REQUIRE_NVRTC is set but NVRTC cannot be loaded"
            );
            eprintln!("notice: NVRTC not found; skipping");
            return;
        }
        let good = "extern \"C\" __global__ void k(int *x) { *x = 1; }";
        let (_, reader) = compile_in_child(good, "sm_90").unwrap();
        let cubin = reader.join().unwrap().unwrap();
        assert_eq!(cubin, nvrtc::compile(good, "sm_90").unwrap());
        let bad = "extern \"C\" __global__ void k() { undefined_thing(); }";
        let (_, reader) = compile_in_child(bad, "sm_90").unwrap();
        let err = reader.join().unwrap().unwrap_err().to_string();
        assert!(err.contains("undefined_thing"), "{err}");
        // A child killed (as a dropped compile kills it) ends its reader: with an error, or
        // with the whole CUBIN where the compile was quicker than the kill.
        let (pid, reader) = compile_in_child(good, "sm_90").unwrap();
        // SAFETY: our own child, not yet reaped (its reader waits for the pipe to close).
        unsafe { libc::kill(pid, libc::SIGKILL) };
        match reader.join().unwrap() {
            Ok(whole) => assert_eq!(whole, cubin),
            Err(e) => assert!(e.to_string().contains("killed"), "{e}"),
        }
    }

    #[test]
    fn cached_kernels_are_checked_before_use() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k.cubin");
        let cubin: Vec<u8> = (0..1000u32).map(|i| (i * 7) as u8).collect();
        save(&path, &cubin);
        assert_eq!(load_cached(&path).as_deref(), Some(&cubin[..]));
        // Cut short, damaged in one byte, or of the old layout (a bare CUBIN): absent.
        let whole = std::fs::read(&path).unwrap();
        std::fs::write(&path, &whole[..whole.len() / 2]).unwrap();
        assert_eq!(load_cached(&path), None);
        let mut damaged = whole.clone();
        damaged[500] ^= 1;
        std::fs::write(&path, &damaged).unwrap();
        assert_eq!(load_cached(&path), None);
        std::fs::write(&path, &cubin).unwrap();
        assert_eq!(load_cached(&path), None);
        std::fs::write(&path, b"").unwrap();
        assert_eq!(load_cached(&path), None);
        // A folder that cannot be made (under a plain file): nothing written, no error.
        let plain = dir.path().join("plain");
        std::fs::write(&plain, "a file").unwrap();
        save(&plain.join("kernels/k.cubin"), &cubin);
        assert_eq!(std::fs::read_to_string(&plain).unwrap(), "a file");
    }
}
