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

    /// Starts compiling `source` for this device on a thread of its own; the module is
    /// [`Compiling::module`]'s once it is done. A process that exits first does not wait for it.
    pub fn compile_in_background(&self, source: String) -> Compiling {
        let arch = self.arch();
        let key = nvrtc::key(&source, &arch);
        let thread = std::thread::Builder::new()
            .name("gol-nvrtc".into())
            .spawn(move || nvrtc::compile(&source, &arch).map_err(CudaError::from))
            .ok();
        Compiling { key, thread }
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

/// A kernel being compiled on a thread of its own ([`Gpu::compile_in_background`]).
pub struct Compiling {
    key: u64,
    /// The compiling thread; `None` once joined, or where no thread could be started.
    thread: Option<std::thread::JoinHandle<Result<Vec<u8>>>>,
}

impl Compiling {
    /// The compiled module once the compile is done (saved in the disk cache and this
    /// process's, as [`Gpu::module`] keeps it), its error if it failed; `None` while it runs
    /// or once taken.
    pub fn module(&mut self, gpu: &Gpu) -> Option<Result<Arc<CudaModule>>> {
        if !self.thread.as_ref()?.is_finished() {
            return None;
        }
        let compiled = self.thread.take()?.join().unwrap_or_else(|_| {
            Err(CudaError::Refused(
                "the background kernel compile panicked".into(),
            ))
        });
        Some(compiled.and_then(|cubin| {
            let module = gpu.keep(self.key, cubin)?;
            (gpu.modules.lock().expect("module cache lock")).insert(self.key, module.clone());
            Ok(module)
        }))
    }
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
