//! Every engine this build has, by [`EngineId`], for each dimension: made one at a time or as
//! slabs of one world over several GPUs.

use gol_core::engine::{self, Engine, EngineId, EngineOptions};
use gol_core::slab::Decomposed;

use crate::dimension::Dimension;
use crate::error::{invalid, Result};
use crate::setup::Split;

/// The ids of dimension `W`'s engines, fastest first.
pub fn ids<W: Dimension>() -> Vec<EngineId> {
    W::registry().iter().map(|spec| spec.id).collect()
}

/// Makes the engine `id` of dimension `W`; fails with a clear message where it cannot run here
/// or does not exist in that dimension.
pub fn create<W: Dimension>(id: EngineId, options: &EngineOptions) -> Result<Box<dyn Engine<W>>> {
    let specs = W::registry();
    Ok((engine::find(&specs, id)?.create)(options)?)
}

/// The engine `id` advancing `parts` slabs with halos `halo` layers deep, the slabs going round
/// `gpus` GPUs (one each where `parts` = `gpus`), halos exchanged GPU to GPU where the engine
/// keeps its state there.
pub fn split<W: Dimension>(
    id: EngineId,
    options: &EngineOptions,
    parts: usize,
    gpus: usize,
    halo: usize,
) -> Result<Box<dyn Engine<W>>> {
    let engines = (0..parts)
        .map(|p| {
            let options = EngineOptions {
                device: p % gpus.max(1),
                ..*options
            };
            create::<W>(id, &options)
        })
        .collect::<Result<Vec<_>>>()?;
    let decomposed = Decomposed::new(engines, halo)?;
    Ok(Box::new(if id.on_gpu() {
        decomposed.with_peer_copy(Box::new(gol_cuda::peer::Peers::open(gpus)?))
    } else {
        decomposed
    }))
}

/// The number of GPUs a split asks for, checked against the machine; `None` for no split.
pub fn gpu_count(split: Split) -> Result<Option<usize>> {
    let present = || -> Result<usize> { Ok(gol_cuda::device::device_count()?) };
    match split {
        Split::None => Ok(None),
        Split::AllGpus => Ok(Some(present()?)),
        Split::Gpus(0) => invalid!("a split over GPUs needs at least one GPU"),
        Split::Gpus(n) => {
            let present = present()?;
            if n > present {
                invalid!("--gpus {n}: this machine has {present} GPU(s)");
            }
            Ok(Some(n))
        }
    }
}
