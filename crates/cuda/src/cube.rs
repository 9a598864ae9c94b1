//! The 3D backends: the blog's three kernels and a bit-sliced one, on an M³ torus or on a slab
//! of X planes of one (X×M×M, x wrapping at X; [`gol_core::cube`]).
//!
//! - `cuda-global`: byte cells in the `.bin` order, one thread per cell (the blog's v0).
//! - `cuda-shared`: the same bytes, (z, y) tiles with a halo in shared memory streaming along
//!   x (v1, 2.5D blocking).
//! - `cuda-swar`: four byte cells per 32-bit word, lines padded to whole words, counts added
//!   four at a time (v2).
//! - `cuda-bitsliced`: the host cube's own bit-packed words, 32 cells per 32-bit word,
//!   bit-sliced 27-cell sums.
//!
//! Each kernel file documents its layout and scheme. Every kernel makes one generation per
//! launch; the engine replays launches through CUDA graphs. cuda-bitsliced keeps the host's
//! rows (the cube's lines) as they are, so it gives row access for slabs
//! ([`gol_core::Engine::read_rows`]).

use std::sync::Arc;

use cudarc::driver::{
    CudaFunction, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, LaunchConfig, PushKernelArg,
};
use gol_core::{Cube, Grid, Rule};

use crate::device::Gpu;
use crate::engine::Backend;
use crate::error::{CudaError, Result};
use crate::kernels::{self, KernelSpec, Tiling};
use crate::launch::{self, param};

/// Planes of constant x each thread of the streaming kernels (shared, swar, bitsliced) walks
/// through per launch; `GOL_CUBE_DEPTH` overrides it for experiments.
const DEPTH: usize = 16;

/// Lines each thread of cuda-bitsliced owns (`ROWS` in the kernel).
const BITSLICED_ROWS: usize = 4;

/// cuda-bitsliced's shared memory per block: `STAGES` planes of 2 · (ROWS + 2) words for each
/// of its 128 threads (the kernel's ring of asynchronous copies).
const BITSLICED_SHARED_BYTES: u32 = 3 * 2 * (BITSLICED_ROWS as u32 + 2) * 128 * 4;

/// How the cells lie in the device buffers.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Layout {
    /// One byte per cell, the `.bin` order.
    Bytes,
    /// One byte per cell, each line padded to whole 32-bit words.
    Swar,
    /// One bit per cell, the host cube's words.
    Bits,
}

/// A 3D torus on the device.
pub struct CubeCells {
    spec: &'static KernelSpec,
    layout: Layout,
    side: usize,
    /// Planes of constant x: the side, or a slab's own count.
    planes: usize,
    cells: CudaSlice<u8>,
    next: CudaSlice<u8>,
    update: CudaFunction,
    /// cuda-bitsliced's population count (the byte layouts count on the host).
    count: Option<CudaFunction>,
    sms: u32,
    depth: usize,
    /// Whether launches may start before the previous one ends (cuda-bitsliced only,
    /// [`launch::starts_early`]).
    early: bool,
}

impl CubeCells {
    /// Bytes per line in the device buffers.
    fn stride_bytes(&self) -> usize {
        stride_bytes(self.layout, self.side)
    }

    /// Live cells in the bytes `range` of the current buffer (whole 32-bit words, padding bits
    /// zero), counted by `count` (cube_population).
    fn count_bytes(
        &self,
        stream: &Arc<CudaStream>,
        count: &CudaFunction,
        range: std::ops::Range<usize>,
    ) -> Result<u64> {
        let mut total = stream.alloc_zeros::<u64>(1)?;
        let words = (range.len() / 4) as i64;
        let cfg = crate::engine::count_launch(words as u64, self.sms);
        let cells = self.cells.slice(range);
        // SAFETY: cube_population takes (const unsigned* cells, long long words, unsigned long
        // long* total); `cells` holds `words` 32-bit words (padding bits zero) and `total` one
        // 64-bit counter.
        unsafe {
            stream
                .launch_builder(count)
                .arg(&cells)
                .arg(&words)
                .arg(&mut total)
                .launch(cfg)?;
        }
        Ok(stream.clone_dtoh(&total)?[0])
    }

    /// The bytes of rows `first..` (lines of the host layout) that `words` words cover; only
    /// for [`Layout::Bits`], whose lines are the host's.
    fn row_bytes(&self, first: usize, words: usize) -> Result<std::ops::Range<usize>> {
        let word = std::mem::size_of::<u64>();
        let rows = crate::engine::row_range(self.side, self.planes * self.side, first, words)?;
        Ok(rows.start * word..rows.end * word)
    }
}

fn stride_bytes(layout: Layout, side: usize) -> usize {
    match layout {
        Layout::Bytes => side,
        Layout::Swar => side.div_ceil(4) * 4,
        Layout::Bits => gol_core::grid::words_per_row(side) * 8,
    }
}

fn depth_from_env() -> Result<usize> {
    match std::env::var("GOL_CUBE_DEPTH") {
        Err(_) => Ok(DEPTH),
        Ok(text) => text
            .parse::<usize>()
            .ok()
            .filter(|&d| d >= 1)
            .ok_or_else(|| {
                CudaError::Refused(format!("GOL_CUBE_DEPTH={text:?}: expected a count ≥ 1"))
            }),
    }
}

impl Backend for CubeCells {
    type World = Cube;

    fn spec(engine: &'static str) -> &'static KernelSpec {
        kernels::spec_3d(engine)
    }

    fn prepare(
        gpu: &Gpu,
        stream: &Arc<CudaStream>,
        engine: &'static str,
        cube: &Cube,
        rule: Rule,
    ) -> Result<Self> {
        let spec = kernels::spec_3d(engine);
        let layout = match engine {
            "cuda-swar" => Layout::Swar,
            "cuda-bitsliced" => Layout::Bits,
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
            count: match layout {
                Layout::Bits => Some(module.load_function("cube_population")?),
                _ => None,
            },
            sms: gpu.info.multiprocessors as u32,
            depth: depth_from_env()?.min(planes),
            early: layout == Layout::Bits && launch::starts_early(gpu)?,
        })
    }

    fn upload(&mut self, stream: &Arc<CudaStream>, cube: &Cube) -> Result<()> {
        match self.layout {
            Layout::Bits => stream.memcpy_htod(as_bytes(cube.lines().words()), &mut self.cells)?,
            _ => stream.memcpy_htod(&cube.to_bytes(self.stride_bytes()), &mut self.cells)?,
        }
        stream.synchronize()?;
        Ok(())
    }

    fn generation(&mut self, stream: &Arc<CudaStream>, block: (u32, u32)) -> Result<()> {
        let m = self.side as u32;
        let depth = self.depth as u32;
        let runs = (self.planes as u32).div_ceil(depth);
        let (mut side, mut planes, mut depth_arg) = (m as i32, self.planes as i32, depth as i32);
        let mut stride = (self.stride_bytes() / 4) as i32;
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
            Layout::Bits => {
                // Lines under 32 words share a warp, one segment of lanes per line (see the
                // kernel).
                let words = m.div_ceil(32);
                let segment = words.next_power_of_two().min(32);
                let lines_per_block = block.1 * BITSLICED_ROWS as u32 * (32 / segment);
                params.extend([param(&mut stride), param(&mut depth_arg)]);
                LaunchConfig {
                    grid_dim: (
                        m.div_ceil(32).div_ceil(32),
                        m.div_ceil(lines_per_block),
                        runs,
                    ),
                    block_dim: (32, block.1, 1),
                    shared_mem_bytes: BITSLICED_SHARED_BYTES,
                }
            }
        };
        // SAFETY: the kernels take (const cells*, cells*, int m, int planes) followed by the
        // arguments pushed above for their layout (cube_shared: int depth; cube_swar: int wl,
        // int depth; cube_bitsliced: int stride in 32-bit words, int depth), which `params`
        // points to in order; both buffers hold planes·M lines of stride_bytes() bytes, and the
        // launch shapes match what each kernel indexes. Only cube_bitsliced starts early, and it touches
        // neither buffer before `wait_for_previous_grid()`.
        unsafe { launch::kernel(stream, &self.update, cfg, &mut params, self.early) }?;
        drop((read, written));
        std::mem::swap(&mut self.cells, &mut self.next);
        Ok(())
    }

    fn download(&self, stream: &Arc<CudaStream>) -> Result<Cube> {
        let side = self.side;
        match self.layout {
            Layout::Bits => {
                let mut lines = Grid::new(side, self.planes * side)?;
                stream.memcpy_dtoh(&self.cells, as_bytes_mut(lines.words_mut()))?;
                stream.synchronize()?;
                Ok(Cube::slab(lines)?)
            }
            _ => {
                let bytes = stream.clone_dtoh(&self.cells)?;
                Ok(Cube::from_bytes(side, &bytes, self.stride_bytes())?)
            }
        }
    }

    fn read_rows(
        &self,
        stream: &Arc<CudaStream>,
        first: usize,
        words: &mut [u64],
    ) -> Option<Result<()>> {
        (self.layout == Layout::Bits).then(|| {
            let range = self.row_bytes(first, words.len())?;
            stream.memcpy_dtoh(&self.cells.slice(range), as_bytes_mut(words))?;
            stream.synchronize()?;
            Ok(())
        })
    }

    fn write_rows(
        &mut self,
        stream: &Arc<CudaStream>,
        first: usize,
        words: &[u64],
    ) -> Option<Result<()>> {
        (self.layout == Layout::Bits).then(|| {
            let range = self.row_bytes(first, words.len())?;
            stream.memcpy_htod(as_bytes(words), &mut self.cells.slice_mut(range))?;
            stream.synchronize()?;
            Ok(())
        })
    }

    fn device_rows(
        &self,
        stream: &Arc<CudaStream>,
        first: usize,
        rows: usize,
    ) -> Option<Result<(u64, usize)>> {
        let wpr = gol_core::grid::words_per_row(self.side);
        (self.layout == Layout::Bits).then(|| {
            let range = self.row_bytes(first, rows * wpr)?;
            let (base, _record) = self.cells.device_ptr(stream);
            Ok((base + range.start as u64, range.len()))
        })
    }

    fn population(&self, stream: &Arc<CudaStream>) -> Result<u64> {
        match &self.count {
            Some(count) => self.count_bytes(stream, count, 0..self.cells.len()),
            None => Ok(self.download(stream)?.population()),
        }
    }

    fn population_of_rows(
        &self,
        stream: &Arc<CudaStream>,
        first: usize,
        rows: usize,
    ) -> Option<Result<u64>> {
        let count = self.count.as_ref()?;
        let wpr = gol_core::grid::words_per_row(self.side);
        Some(
            self.row_bytes(first, rows * wpr)
                .and_then(|range| self.count_bytes(stream, count, range)),
        )
    }

    fn starts_early(&self) -> bool {
        self.early
    }

    fn describe(&self) -> Option<String> {
        match self.layout {
            Layout::Bytes if self.spec.tiling == Tiling::Plain => None,
            Layout::Bits => Some(format!(
                "warps of 32 words x {BITSLICED_ROWS} lines, {} planes per thread",
                self.depth
            )),
            _ => Some(format!("{} planes per thread", self.depth)),
        }
    }
}

/// The bytes of `words`. The kernels read the host's little-endian `u64` words as pairs of
/// 32-bit words, which needs a little-endian host.
fn as_bytes(words: &[u64]) -> &[u8] {
    // SAFETY: any initialised u64 is 8 initialised bytes; u8 has alignment 1; the length covers
    // exactly the same memory, borrowed for the same lifetime.
    unsafe { std::slice::from_raw_parts(words.as_ptr().cast::<u8>(), words.len() * 8) }
}

/// The bytes of `words`, writable.
fn as_bytes_mut(words: &mut [u64]) -> &mut [u8] {
    // SAFETY: as in `as_bytes`; every byte pattern is a valid u64, so any bytes written through
    // the view leave valid words.
    unsafe { std::slice::from_raw_parts_mut(words.as_mut_ptr().cast::<u8>(), words.len() * 8) }
}

#[cfg(target_endian = "big")]
compile_error!("the bit-packed CUDA engines read the host's words as little-endian 32-bit pairs");
