//! Copies from GPU to GPU for the halo exchange of split runs (`gol run --gpus`): the
//! [`PeerCopy`] of [`gol_core::slab::Decomposed`].
//!
//! Each copy goes straight from the sending GPU's memory to the receiving GPU's
//! (`cuMemcpyPeerAsync`), on a copy stream of the receiving GPU of its own, behind events of
//! the sender's and the receiver's engine streams (both rounds done); when the engines are
//! ready for it ([`PeerCopy::join`], after the work of the next round that needs no halo), both
//! engine streams wait for an event after the copy. The GPUs order the exchange among
//! themselves and the host never waits for it; and since each copy waits only for the two GPUs
//! it joins, a GPU's next round waits only for its neighbours' rounds, not for theirs'
//! neighbours. Where two GPUs can reach each other's memory (NVLink or PCIe peer
//! access), access is enabled both ways when the GPUs are opened and the copy is one transfer;
//! otherwise the driver stages it through the host. The engines' buffers come from each GPU's
//! stream-ordered memory pool (cudarc allocates with `cuMemAllocAsync`), which context peer
//! access does not cover: the other GPUs are granted access to each pool as well. NCCL is not used: a halo exchange is a
//! handful of copies between neighbours, which the driver does directly.

use std::sync::{Arc, Mutex};

use cudarc::driver::result;
use cudarc::driver::sys::{self, CUevent_flags, CUresult};
use cudarc::driver::{CudaEvent, CudaStream, DriverError};
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
    /// Events around each queued copy, by receiving GPU, until [`PeerCopy::take_seconds`]
    /// finds that it has run.
    timed: Mutex<Vec<(usize, CudaEvent, CudaEvent)>>,
    /// The waits for copies that engine streams still owe ([`PeerCopy::join`]): the stream, its
    /// GPU, and the copy's index in `timed`.
    owed: Mutex<Vec<(u64, usize, usize)>>,
    /// Copy streams of each GPU, by ordinal: a call's k-th copy into a GPU runs on its k-th.
    streams: Mutex<Vec<Vec<Arc<CudaStream>>>>,
    /// Events of each GPU, by ordinal, kept for the next exchanges: making and destroying
    /// them at every exchange cost about 10 µs a copy.
    spare: Mutex<Vec<Vec<CudaEvent>>>,
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
            streams: Mutex::new(vec![Vec::new(); gpus.len()]),
            spare: Mutex::new((0..gpus.len()).map(|_| Vec::new()).collect()),
            gpus,
            direct,
            timed: Mutex::new(Vec::new()),
            owed: Mutex::new(Vec::new()),
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

    /// An event of GPU `device` (timing enabled), a spare one where there is one.
    fn event(&self, device: usize) -> Result<CudaEvent> {
        let spare = self.spare.lock().expect("no panic while held")[device].pop();
        match spare {
            Some(event) => Ok(event),
            None => Ok((self.gpus[device].ctx).new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?),
        }
    }

    /// Keeps `events` of GPU `device` for later exchanges.
    fn keep(&self, device: usize, events: impl IntoIterator<Item = CudaEvent>) {
        self.spare.lock().expect("no panic while held")[device].extend(events);
    }

    /// See [`PeerCopy::copy`]; the same safety contract.
    ///
    /// In two passes, so that no copy waits for more than the two rounds it joins: an event
    /// after the work so far on every engine stream involved; then each copy on a copy stream
    /// of its receiving GPU after the events of its two streams. Both engine streams of each
    /// copy then owe it a wait ([`Peers::join_queue`]).
    unsafe fn queue_all(&self, pairs: &[(DeviceRows, DeviceRows)]) -> Result<()> {
        let mut timed = self.timed.lock().expect("no panic while held");
        let mut owed = self.owed.lock().expect("no panic while held");
        let mut streams = self.streams.lock().expect("no panic while held");
        let mut rounds_done: Vec<(u64, usize, CudaEvent)> = Vec::new();
        for rows in pairs.iter().flat_map(|(from, to)| [from, to]) {
            if rounds_done.iter().all(|(queue, _, _)| *queue != rows.queue) {
                let gpu = self.gpu(rows)?;
                let event = self.event(rows.device)?;
                gpu.ctx.bind_to_thread()?;
                // SAFETY: the queue is a live stream of this GPU (the contract of
                // `PeerCopy::copy`), whose context the event belongs to.
                unsafe { result::event::record(event.cu_event(), rows.queue as sys::CUstream) }?;
                rounds_done.push((rows.queue, rows.device, event));
            }
        }
        let done_of = |queue: u64| {
            let found = rounds_done.iter().find(|(q, _, _)| *q == queue);
            found.expect("recorded").2.cu_event()
        };
        let mut used = vec![0usize; self.gpus.len()];
        for (from, to) in pairs {
            assert_eq!(from.bytes, to.bytes, "a peer copy moves equal lengths");
            let (source, target) = (self.gpu(from)?, self.gpu(to)?);
            let mine = &mut streams[to.device];
            if mine.len() == used[to.device] {
                mine.push(target.ctx.new_stream()?);
            }
            let copier = mine[used[to.device]].cu_stream();
            used[to.device] += 1;
            let (start, done) = (self.event(to.device)?, self.event(to.device)?);
            target.ctx.bind_to_thread()?;
            // SAFETY: `copier` is a live stream of the receiving GPU, whose context `start` and
            // `done` belong to, and a stream may wait for an event of any context. By the
            // contract, both ranges lie in live allocations of their GPUs, have the same length,
            // and the target overlaps nothing else copied now. The copy runs after the sender's
            // work so far (its rows are final) and the receiver's (no kernel reads the halo any
            // more); neither queue changes the ranges before it joins the copy.
            unsafe {
                result::stream::wait_event(copier, done_of(from.queue), WAIT)?;
                result::stream::wait_event(copier, done_of(to.queue), WAIT)?;
                result::event::record(start.cu_event(), copier)?;
                result::memcpy_peer_async(
                    target.ctx.cu_ctx(),
                    to.address,
                    source.ctx.cu_ctx(),
                    from.address,
                    from.bytes,
                    copier,
                )?;
                result::event::record(done.cu_event(), copier)?;
            }
            owed.push((to.queue, to.device, timed.len()));
            owed.push((from.queue, from.device, timed.len()));
            timed.push((to.device, start, done));
        }
        // The copy streams' waits hold the records of now: the events may be recorded again.
        for (_, device, event) in rounds_done {
            self.keep(device, [event]);
        }
        Ok(())
    }

    /// See [`PeerCopy::join`]: `waiter` waits for each copy `queue` owes a wait, so that
    /// `queue` can neither overwrite rows before they are sent nor read a halo before it is
    /// written.
    fn join_queue(&self, queue: u64, waiter: u64) -> Result<()> {
        let timed = self.timed.lock().expect("no panic while held");
        let mut owed = self.owed.lock().expect("no panic while held");
        for &(_, device, copy) in owed.iter().filter(|(q, _, _)| *q == queue) {
            self.gpus[device].ctx.bind_to_thread()?;
            // SAFETY: `waiter` is a live stream of GPU `device` (the contract of
            // `PeerCopy::join`), which may wait for an event of any context; the event lives in
            // `timed` until `take_seconds` finds that its copy has run.
            unsafe {
                result::stream::wait_event(waiter as sys::CUstream, timed[copy].2.cu_event(), WAIT)
            }?;
        }
        owed.retain(|(q, _, _)| *q != queue);
        Ok(())
    }

    /// See [`PeerCopy::take_seconds`] (`forget`) and [`PeerCopy::pending_seconds`].
    fn settle(&self, forget: bool) -> Result<f64> {
        // Locked in the order the other methods lock them.
        let mut timed = self.timed.lock().expect("no panic while held");
        let owed = self.owed.lock().expect("no panic while held");
        if forget && !owed.is_empty() {
            return Err(CudaError::Refused(format!(
                "{} waits for halo copies were never queued",
                owed.len()
            )));
        }
        drop(owed);
        let mut per_gpu = vec![0.0f64; self.gpus.len()];
        let mut ran = vec![false; timed.len()];
        let mut bound = None;
        for ((device, start, done), ran) in timed.iter().zip(&mut ran) {
            if bound != Some(*device) {
                self.gpus[*device].ctx.bind_to_thread()?;
                bound = Some(*device);
            }
            // SAFETY: both are live events of this GPU's context (now bound), recorded around
            // a copy; where the copy has not run yet the driver says so and changes nothing.
            match unsafe { result::event::elapsed(start.cu_event(), done.cu_event()) } {
                Err(DriverError(CUresult::CUDA_ERROR_NOT_READY)) => {}
                ms => {
                    per_gpu[*device] += ms? as f64 / 1e3;
                    *ran = true;
                }
            }
        }
        if forget {
            // No wait is owed (checked above), so no index into `timed` is held.
            let mut ran = ran.into_iter();
            let (done, left) = std::mem::take(&mut *timed)
                .into_iter()
                .partition(|_| ran.next().expect("one a copy"));
            *timed = left;
            let done: Vec<(usize, CudaEvent, CudaEvent)> = done;
            for (device, start, done) in done {
                self.keep(device, [start, done]);
            }
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

    fn join(&self, queue: u64, waiter: u64) -> gol_core::Result<()> {
        Ok(self.join_queue(queue, waiter)?)
    }

    fn take_seconds(&self) -> gol_core::Result<f64> {
        Ok(self.settle(true)?)
    }

    fn pending_seconds(&self) -> gol_core::Result<f64> {
        Ok(self.settle(false)?)
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
