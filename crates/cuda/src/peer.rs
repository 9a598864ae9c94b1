//! Copies from GPU to GPU for the halo exchange of split runs (`gol run --gpus`): the
//! [`PeerCopy`] of [`gol_core::slab::Decomposed`].
//!
//! Each copy goes straight from the sending GPU's memory to the receiving GPU's
//! (`cuMemcpyPeerAsync`). Where two GPUs can reach each other's memory (NVLink or PCIe peer
//! access), access is enabled both ways when the GPUs are opened and the copy is one transfer;
//! otherwise the driver stages it through the host. The engines' buffers come from each GPU's
//! stream-ordered memory pool (cudarc allocates with `cuMemAllocAsync`), which context peer
//! access does not cover: the other GPUs are granted access to each pool as well. NCCL is not used: a halo exchange is a
//! handful of copies between neighbours, which the driver does directly.

use std::sync::Arc;

use cudarc::driver::sys::{self, CUresult};
use cudarc::driver::CudaStream;
use gol_core::engine::DeviceRows;
use gol_core::slab::PeerCopy;

use crate::device::{gpu_on, Gpu};
use crate::error::{CudaError, Result};

/// The GPUs of a split run, ready to copy between each other.
pub struct Peers {
    /// By ordinal: GPU `i` is `gpus[i]`.
    gpus: Vec<Arc<Gpu>>,
    /// A stream of each GPU for the copies it receives.
    streams: Vec<Arc<CudaStream>>,
    /// Whether every pair of GPUs has peer access (else some copies are staged by the driver).
    direct: bool,
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
        let streams = gpus
            .iter()
            .map(|gpu| gpu.ctx.new_stream())
            .collect::<std::result::Result<_, _>>()?;
        Ok(Peers {
            gpus,
            streams,
            direct,
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

    fn copy_all(&self, pairs: &[(DeviceRows, DeviceRows)]) -> Result<()> {
        for (from, to) in pairs {
            assert_eq!(from.bytes, to.bytes, "a peer copy moves equal lengths");
            let (source, target) = (self.gpu(from)?, self.gpu(to)?);
            target.ctx.bind_to_thread()?;
            // SAFETY: by the contract of `PeerCopy::copy`, both ranges lie in live allocations
            // of their GPUs (whose contexts these are), have the same length, and the target
            // overlaps nothing else copied now; the engines that own them have finished their
            // work (`Engine::device_rows` waits for it) and queue none until the copy streams
            // are synchronised below.
            unsafe {
                cudarc::driver::result::memcpy_peer_async(
                    target.ctx.cu_ctx(),
                    to.address,
                    source.ctx.cu_ctx(),
                    from.address,
                    from.bytes,
                    self.streams[to.device].cu_stream(),
                )
            }?;
        }
        for stream in &self.streams {
            stream.synchronize()?;
        }
        Ok(())
    }
}

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
        Ok(self.copy_all(pairs)?)
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
