//! Host memory for copies from GPUs: page-locked rows for rows copied to and from GPUs again
//! and again (halos through host memory), where the copies go straight between the device and
//! these pages; and ordinary buffers, touched first, for one-off copies of a whole state (which
//! pass through the driver's own staging buffers).

use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use cudarc::driver::{result, sys, CudaContext, CudaSlice, CudaStream, DeviceRepr};

use crate::error::Result;

/// `len` words of page-locked host memory, usable by every context in the process.
pub struct Pinned {
    ctx: Arc<CudaContext>,
    words: *mut u64,
    len: usize,
}

// SAFETY: the allocation is plain host memory owned by this value alone; the context handle is
// shared safely by cudarc.
unsafe impl Send for Pinned {}
// SAFETY: as above; shared access only reads through `&[u64]`.
unsafe impl Sync for Pinned {}

impl Pinned {
    /// `len` zeroed words.
    pub fn zeroed(ctx: &Arc<CudaContext>, len: usize) -> Result<Pinned> {
        ctx.bind_to_thread()?;
        let bytes = len.max(1) * std::mem::size_of::<u64>();
        // SAFETY: a request for `bytes` bytes of page-locked memory, portable to every context.
        let words =
            unsafe { result::malloc_host(bytes, sys::CU_MEMHOSTALLOC_PORTABLE) }? as *mut u64;
        // SAFETY: `words` points at `bytes` writable bytes, at least `len` u64s, just allocated
        // (cuMemHostAlloc aligns far beyond u64).
        unsafe { std::ptr::write_bytes(words, 0, len) };
        Ok(Pinned {
            ctx: ctx.clone(),
            words,
            len,
        })
    }
}

impl Deref for Pinned {
    type Target = [u64];
    fn deref(&self) -> &[u64] {
        // SAFETY: `words` holds `len` initialised u64s for as long as `self` lives.
        unsafe { std::slice::from_raw_parts(self.words, self.len) }
    }
}

impl DerefMut for Pinned {
    fn deref_mut(&mut self) -> &mut [u64] {
        // SAFETY: as in `deref`, and `&mut self` makes this the only reference.
        unsafe { std::slice::from_raw_parts_mut(self.words, self.len) }
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        // Errors cannot be reported from drop; the memory goes with the process anyway.
        let _ = self.ctx.bind_to_thread();
        // SAFETY: `words` came from cuMemHostAlloc and is freed once; no copy into it is pending
        // (every copy through it is synchronised before its caller returns).
        let _ = unsafe { result::free_host(self.words as *mut _) };
    }
}

/// A copy of `src` in a new host vector, made once the work queued on `stream` so far has run
/// (see [`copy_into_fresh`]).
pub fn copy_to_host<T: DeviceRepr + Default + Copy + Send>(
    stream: &Arc<CudaStream>,
    src: &CudaSlice<T>,
) -> Result<Vec<T>> {
    let mut host = vec![T::default(); src.len()];
    copy_into_fresh(stream, src, &mut host)?;
    Ok(host)
}

/// Copies `src` into `host`, freshly zeroed memory of the same length, once the work queued on
/// `stream` so far has run, and waits for the copy. The pages of `host` are mapped from all
/// cores first ([`gol_core::memory::prefault_zeroed`]).
pub fn copy_into_fresh<T: DeviceRepr + Default + Copy + Send>(
    stream: &Arc<CudaStream>,
    src: &CudaSlice<T>,
    host: &mut [T],
) -> Result<()> {
    gol_core::memory::prefault_zeroed(host);
    stream.memcpy_dtoh(src, host)?;
    stream.synchronize()?;
    Ok(())
}
