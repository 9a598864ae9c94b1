//! The 3D byte-cell backends: the three kernels of the 3D Life article (docs/lineage.md), on an
//! M³ torus or on a slab of X planes of one (X×M×M, x wrapping at X; [`gol_core::cube`]). The
//! bit-sliced 3D engine is [`crate::cube_bits`].
//!
//! - `cuda-global`: byte cells in the `.bin` order, one thread per cell (the article's v0).
//! - `cuda-shared`: the same bytes, (z, y) tiles with a halo in shared memory streaming along
//!   x (v1, 2.5D blocking).
//! - `cuda-swar`: four byte cells per 32-bit word, lines padded to whole words, counts added
//!   four at a time (v2).
//!
//! Each kernel file documents its layout and scheme. Every kernel makes one generation per
//! launch; the engine replays launches through CUDA graphs. These engines count live cells on
//! the host, after a download, and give no row access.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, LaunchConfig};
use gol_core::{Cube, EngineId, Rule};

use crate::device::Gpu;
use crate::engine::Backend;
use crate::error::{CudaError, Result};
use crate::kernels::{self, KernelSpec, Tiling};
use crate::launch::{self, param};
use crate::pinned::copy_to_host;
use crate::source;

/// Planes of constant x each thread of the streaming kernels (shared, swar, and the bit-sliced
/// one's fewest, [`crate::cube_bits`]) walks through per launch; `GOL_CUBE_DEPTH` sets it
/// outright for experiments.
pub(crate) const DEPTH: usize = 16;

/// cube_bytes.cu, which holds both byte-cell kernels (cube_global and cube_shared).
fn cube_bytes_source(rule: Rule) -> String {
    source::with_rule(rule, &[source::RULE, source::CUBE_WRAP, source::CUBE_BYTES])
}

/// The byte-cell 3D engines' kernels; the 27-cell wrap helpers go in front of each.
pub const KERNELS: [KernelSpec; 3] = [
    KernelSpec {
        engine: EngineId::CudaSwar,
        build_source: |rule| source::with_rule(rule, &[source::CUBE_WRAP, source::CUBE_SWAR]),
        function: "cube_swar",
        small_function: None,
        default_block: (32, 8),
        tiling: Tiling::Plain,
        fixed_block: true,
        shared_table: 0,
    },
    KernelSpec {
        engine: EngineId::CudaShared,
        build_source: cube_bytes_source,
        function: "cube_shared",
        small_function: None,
        default_block: (32, 16),
        tiling: Tiling::Overlap,
        fixed_block: false,
        shared_table: 0,
    },
    KernelSpec {
        engine: EngineId::CudaGlobal,
        build_source: cube_bytes_source,
        function: "cube_global",
        small_function: None,
        default_block: (32, 8),
        tiling: Tiling::Plain,
        fixed_block: false,
        shared_table: 0,
    },
];

/// How the cells lie in the device buffers.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Layout {
    /// One byte per cell, the `.bin` order.
    Bytes,
    /// One byte per cell, each line padded to whole 32-bit words.
    Swar,
}

/// A 3D torus of byte cells on the device.
pub struct CubeCells {
    spec: &'static KernelSpec,
    layout: Layout,
    side: usize,
    /// Planes of constant x: the side, or a slab's own count.
    planes: usize,
    cells: CudaSlice<u8>,
    next: CudaSlice<u8>,
    update: CudaFunction,
    /// `GOL_CUBE_DEPTH`, where set.
    depth: Option<usize>,
}

impl CubeCells {
    /// Bytes per line in the device buffers.
    fn stride_bytes(&self) -> usize {
        stride_bytes(self.layout, self.side)
    }
}

fn stride_bytes(layout: Layout, side: usize) -> usize {
    match layout {
        Layout::Bytes => side,
        Layout::Swar => side.div_ceil(4) * 4,
    }
}

/// `GOL_CUBE_DEPTH`: the planes each thread walks per launch, for experiments.
pub(crate) fn depth_from_env() -> Result<Option<usize>> {
    match std::env::var("GOL_CUBE_DEPTH") {
        Err(_) => Ok(None),
        Ok(text) => text
            .parse::<usize>()
            .ok()
            .filter(|&d| d >= 1)
            .map(Some)
            .ok_or_else(|| {
                CudaError::Refused(format!("GOL_CUBE_DEPTH={text:?}: expected a count ≥ 1"))
            }),
    }
}

impl Backend for CubeCells {
    type World = Cube;

    fn spec(engine: EngineId) -> &'static KernelSpec {
        kernels::find(KERNELS.iter(), engine)
    }

    fn prepare(
        gpu: &Gpu,
        stream: &Arc<CudaStream>,
        engine: EngineId,
        cube: &Cube,
        rule: Rule,
    ) -> Result<Self> {
        let spec = Self::spec(engine);
        let layout = match engine {
            EngineId::CudaSwar => Layout::Swar,
            _ => Layout::Bytes,
        };
        let (side, planes) = (cube.side(), cube.planes());
        let len = planes * side * stride_bytes(layout, side);
        gpu.check_memory(
            2 * len as u64,
            &format!("a {planes}x{side}x{side} torus on {engine}"),
        )?;
        let module = gpu.module(&spec.source(rule))?;
        Ok(CubeCells {
            spec,
            layout,
            side,
            planes,
            cells: stream.alloc_zeros::<u8>(len)?,
            next: stream.alloc_zeros::<u8>(len)?,
            update: module.load_function(spec.function)?,
            depth: depth_from_env()?,
        })
    }

    fn upload(&mut self, stream: &Arc<CudaStream>, cube: &Cube) -> Result<()> {
        stream.memcpy_htod(&cube.to_bytes(self.stride_bytes()), &mut self.cells)?;
        stream.synchronize()?;
        Ok(())
    }

    /// Queues one generation, swapping the buffers once.
    fn generation(&mut self, stream: &Arc<CudaStream>, block: (u32, u32)) -> Result<()> {
        let m = self.side as u32;
        let depth = self.depth.unwrap_or(DEPTH).min(self.planes) as u32;
        let runs = (self.planes as u32).div_ceil(depth);
        let (mut side, mut planes, mut depth_arg) = (m as i32, self.planes as i32, depth as i32);
        let wl = m.div_ceil(4);
        let mut wl_arg = wl as i32;
        // The guards, dropped once the launch is queued, record the buffers' use.
        let (mut input, read) = self.cells.device_ptr(stream);
        let (mut output, written) = self.next.device_ptr_mut(stream);
        let mut params = vec![
            param(&mut input),
            param(&mut output),
            param(&mut side),
            param(&mut planes),
        ];
        let cfg = match self.layout {
            Layout::Bytes if self.spec.tiling == Tiling::Overlap => {
                params.push(param(&mut depth_arg));
                LaunchConfig {
                    grid_dim: (m.div_ceil(block.0 - 2), m.div_ceil(block.1 - 2), runs),
                    block_dim: (block.0, block.1, 1),
                    shared_mem_bytes: 3 * block.0 * block.1,
                }
            }
            Layout::Bytes => LaunchConfig {
                grid_dim: (
                    m.div_ceil(block.0),
                    m.div_ceil(block.1),
                    (self.planes as u32).min(65_535),
                ),
                block_dim: (block.0, block.1, 1),
                shared_mem_bytes: 0,
            },
            Layout::Swar => {
                params.extend([param(&mut wl_arg), param(&mut depth_arg)]);
                LaunchConfig {
                    grid_dim: (wl.div_ceil(30), m.div_ceil(block.1), runs),
                    block_dim: (32, block.1, 1),
                    shared_mem_bytes: 0,
                }
            }
        };
        // SAFETY: the kernels take (const cells*, cells*, int m, int planes) followed by the
        // arguments pushed above for their layout (cube_shared: int depth; cube_swar: int wl,
        // int depth), which `params` points to in order; both buffers hold planes·M lines of
        // stride_bytes() bytes, and the launch shapes match what each kernel indexes. None of
        // them starts early.
        unsafe { launch::kernel(stream, &self.update, cfg, &mut params, false) }?;
        drop((read, written));
        std::mem::swap(&mut self.cells, &mut self.next);
        Ok(())
    }

    fn download(&self, stream: &Arc<CudaStream>) -> Result<Cube> {
        let bytes = copy_to_host(stream, &self.cells)?;
        Ok(Cube::from_bytes(self.side, &bytes, self.stride_bytes())?)
    }

    fn describe(&self) -> Option<String> {
        match self.layout {
            Layout::Bytes if self.spec.tiling == Tiling::Plain => None,
            _ => Some(format!(
                "{} planes per thread",
                self.depth.unwrap_or(DEPTH).min(self.planes)
            )),
        }
    }
}
