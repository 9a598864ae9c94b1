//! Copies from GPU to GPU for the halo exchange of split runs (`gol run --gpus`): the
//! [`PeerCopy`] of [`gol_core::slab::Decomposed`].
//!
//! Each copy goes straight from the sending GPU's memory to the receiving GPU's
//! (`cuMemcpyPeerAsync`), queued on the receiving engine's stream behind an event of the
//! sender's, and the sender's stream waits for an event after the copy: the GPUs order the
//! exchange among themselves and the host never waits for it. Where two GPUs can reach each other's memory (NVLink or PCIe peer
//! access), access is enabled both ways when the GPUs are opened and the copy is one transfer;
//! otherwise the driver stages it through the host. The engines' buffers come from each GPU's
//! stream-ordered memory pool (cudarc allocates with `cuMemAllocAsync`), which context peer
//! access does not cover: the other GPUs are granted access to each pool as well. NCCL is not used: a halo exchange is a
//! handful of copies between neighbours, which the driver does directly.

use std::sync::{Arc, Mutex};

use cudarc::driver::result;
use cudarc::driver::sys::{self, CUevent_flags, CUresult};
use cudarc::driver::CudaEvent;
use gol_core::engine::DeviceRows;
use gol_core::slab::PeerCopy;

use crate::device::{gpu_on, Gpu};
use crate::error::{CudaError, Result};

/// The GPUs of a split run, ready to copy between each other.
pub struct Peers {
    /// By ordinal: GPU `i` is `gpus[i]`.
    gpus: Vec<Arc<Gpu>>,
    /// Whether every pair of GPUs has peer access (else some copies are staged by the driver).
    direct: bool,
    /// Events around each queued copy, by receiving GPU, until [`PeerCopy::take_seconds`].
    timed: Mutex<Vec<(usize, CudaEvent, CudaEvent)>>,
}

impl Peers {
    /// GPUs `0..count`, with peer access enabled between every pair that supports it.
    pub fn open(count: usize) -> Result<Peers> {
        let gpus = (0..count).map(gpu_on).collect::<Result<Vec<_>>>()?;
        let mut direct = true;
        for a in &gpus {
            for b in gpus.iter().filter(|b| !Arc::ptr_eq(a, b)) {
                let mut can = 0;
                // SAFETY: both devices are valid ordinals of opened GPUs; `can` is a live int.
                unsafe {
                    sys::cuDeviceCanAccessPeer(&mut can, a.ctx.cu_device(), b.ctx.cu_device())
                }
                .result()?;
                if can == 0 {
                    direct = false;
                    continue;
                }
                a.ctx.bind_to_thread()?;
                // SAFETY: `b`'s context is a live primary context; enabling access from the
                // current context (`a`'s) to it changes no memory.
                match unsafe { sys::cuCtxEnablePeerAccess(b.ctx.cu_ctx(), 0) } {
                    CUresult::CUDA_SUCCESS | CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED => {}
                    error => error.result()?,
                }
                grant_pool_access(b, a)?;
            }
        }
        Ok(Peers {
            gpus,
            direct,
            timed: Mutex::new(Vec::new()),
        })
    }

    fn gpu(&self, rows: &DeviceRows) -> Result<&Arc<Gpu>> {
        self.gpus.get(rows.device).ok_or_else(|| {
            CudaError::Refused(format!(
                "GPU {} is not among the {} GPUs of this run",
                rows.device,
                self.gpus.len()
            ))
        })
    }

    /// See [`PeerCopy::copy`]; the same safety contract.
    unsafe fn queue_all(&self, pairs: &[(DeviceRows, DeviceRows)]) -> Result<()> {
        let mut timed = self.timed.lock().expect("no panic while held");
        for (from, to) in pairs {
            assert_eq!(from.bytes, to.bytes, "a peer copy moves equal lengths");
            let (source, target) = (self.gpu(from)?, self.gpu(to)?);
            let (sender, receiver) = (from.queue as sys::CUstream, to.queue as sys::CUstream);
            let sent = source.ctx.new_event(None)?;
            let start = target
                .ctx
                .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
            let done = target
                .ctx
                .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
            // SAFETY: the queues are live streams of their GPUs (the contract of
            // `PeerCopy::copy`), each event belongs to the context of the stream it is recorded
            // on, and a stream may wait for an event of any context. By the contract, both
            // ranges lie in live allocations of their GPUs, have the same length, and the target
            // overlaps nothing else copied now. The copy runs on the receiver's stream after
            // the sender's work so far (`sent`) and its own, so it reads final rows into a halo
            // no kernel is reading; the sender's later work waits for `done`, so it cannot
            // overwrite the rows before they are read.
            unsafe {
                source.ctx.bind_to_thread()?;
                result::event::record(sent.cu_event(), sender)?;
                target.ctx.bind_to_thread()?;
                result::stream::wait_event(receiver, sent.cu_event(), WAIT)?;
                result::event::record(start.cu_event(), receiver)?;
                result::memcpy_peer_async(
                    target.ctx.cu_ctx(),
                    to.address,
                    source.ctx.cu_ctx(),
                    from.address,
                    from.bytes,
                    receiver,
                )?;
                result::event::record(done.cu_event(), receiver)?;
                source.ctx.bind_to_thread()?;
                result::stream::wait_event(sender, done.cu_event(), WAIT)?;
            }
            timed.push((to.device, start, done));
        }
        Ok(())
    }

    /// See [`PeerCopy::take_seconds`].
    fn settle(&self) -> Result<f64> {
        let timed = std::mem::take(&mut *self.timed.lock().expect("no panic while held"));
        let mut per_gpu = vec![0.0f64; self.gpus.len()];
        for (device, start, done) in &timed {
            per_gpu[*device] += start.elapsed_ms(done)? as f64 / 1e3;
        }
        Ok(per_gpu.into_iter().fold(0.0, f64::max))
    }
}

/// Flags of the streams' waits for events: none.
const WAIT: sys::CUevent_wait_flags = sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT;

/// Lets `reader` access the memory that `owner`'s current memory pool hands out.
fn grant_pool_access(owner: &Gpu, reader: &Gpu) -> Result<()> {
    let mut pool: sys::CUmemoryPool = std::ptr::null_mut();
    // SAFETY: `owner`'s device is a valid ordinal; `pool` is a live handle slot.
    unsafe { sys::cuDeviceGetMemPool(&mut pool, owner.ctx.cu_device()) }.result()?;
    let access = sys::CUmemAccessDesc {
        location: sys::CUmemLocation {
            type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
            id: reader.ctx.ordinal() as i32,
        },
        flags: sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
    };
    // SAFETY: `pool` is the owner's live pool; the descriptor array holds one valid entry.
    unsafe { sys::cuMemPoolSetAccess(pool, &access, 1) }.result()?;
    Ok(())
}

impl PeerCopy for Peers {
    unsafe fn copy(&self, pairs: &[(DeviceRows, DeviceRows)]) -> gol_core::Result<()> {
        // SAFETY: the caller keeps the contract of `PeerCopy::copy`, which `queue_all` shares.
        Ok(unsafe { self.queue_all(pairs) }?)
    }

    fn take_seconds(&self) -> gol_core::Result<f64> {
        Ok(self.settle()?)
    }

    fn describe(&self) -> String {
        let how = match (self.gpus.len(), self.direct) {
            (1, _) => "within the GPU",
            (_, true) => "with peer access",
            (_, false) => "staged by the driver (no peer access)",
        };
        format!("GPU to GPU ({how})")
    }
}
