//! One [`Engine`] implementation for every CUDA engine: [`GpuEngine`] owns the GPU handle, the
//! block size and the timings, and drives a [`Backend`] that knows one kernel's data layout.

use std::cell::Cell;
use std::sync::Arc;

use cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};
use cudarc::driver::{CudaGraph, CudaStream};
use gol_core::{Engine, EngineOptions, Grid, Rule};

use crate::clock::{time_on_device, time_on_host, Timings};
use crate::device::{gpu, Gpu};
use crate::error::{CudaError, Result};
use crate::kernels;

/// The most blocks launched along y; kernels loop over the rest (grid-stride).
pub const MAX_GRID_Y: u32 = 65_535;

/// Generations captured in one CUDA graph. Even, so that buffers which swap roles every
/// generation are back in place after each replay.
pub const GRAPH_GENERATIONS: u64 = 32;

/// A captured run of [`GRAPH_GENERATIONS`] generations, replayed to save launch overhead.
struct Graph(CudaGraph);

// SAFETY: a graph is a driver object of the context; cudarc binds the context to the calling
// thread before each launch, so it may be used from any thread (one at a time: `&mut` access).
unsafe impl Send for Graph {}

/// A kernel's data on the device and how to advance it.
pub trait Backend: Sized {
    /// Checks the problem against the device, compiles the module and allocates buffers.
    /// Everything happens on `stream`, the engine's own.
    fn prepare(
        gpu: &Gpu,
        stream: &Arc<CudaStream>,
        engine: &'static str,
        grid: &Grid,
        rule: Rule,
    ) -> Result<Self>;
    /// Copies `grid` to the device and waits for the copy.
    fn upload(&mut self, stream: &Arc<CudaStream>, grid: &Grid) -> Result<()>;
    /// Queues one generation on `stream`.
    fn generation(&mut self, stream: &Arc<CudaStream>, block: (u32, u32)) -> Result<()>;
    /// Copies the state back.
    fn download(&self, stream: &Arc<CudaStream>) -> Result<Grid>;
}

/// A CUDA engine: one [`Backend`] on the GPU.
pub struct GpuEngine<B> {
    name: &'static str,
    gpu: Arc<Gpu>,
    /// The engine's own stream: engines (and test threads) never share one, so a graph capture
    /// on one cannot catch another's work.
    stream: Arc<CudaStream>,
    block: (u32, u32),
    backend: Option<B>,
    /// Graphs of [`GRAPH_GENERATIONS`] generations of the loaded backend, one per buffer
    /// parity: a graph holds the buffer addresses of the generation it was captured at, so a
    /// replay must start from the same buffer. Replays keep the parity (the count is even);
    /// each direct generation flips it.
    graphs: [Option<Graph>; 2],
    /// Direct generations since load, modulo 2.
    parity: usize,
    timings: Cell<Timings>,
}

impl<B: Backend> GpuEngine<B> {
    /// The engine `name`; fails where there is no GPU or the block is too large.
    pub fn new(name: &'static str, options: &EngineOptions) -> Result<GpuEngine<B>> {
        let gpu = gpu()?;
        let spec = kernels::spec(name);
        let block = options.block.unwrap_or(spec.default_block);
        gpu.check_block(block)?;
        spec.check_block(block).map_err(CudaError::Refused)?;
        // A stream of our own: CUDA graphs cannot be captured on the legacy default stream.
        let stream = gpu.ctx.new_stream()?;
        Ok(GpuEngine {
            name,
            gpu,
            stream,
            block,
            backend: None,
            graphs: [None, None],
            parity: 0,
            timings: Cell::new(Timings::default()),
        })
    }

    fn backend(&self) -> Result<&B> {
        self.backend
            .as_ref()
            .ok_or_else(|| CudaError::Refused(format!("{}: no grid loaded", self.name)))
    }

    fn add(&self, update: impl FnOnce(&mut Timings)) {
        let mut t = self.timings.get();
        update(&mut t);
        self.timings.set(t);
    }
}

impl<B: Backend + Send> Engine for GpuEngine<B> {
    fn name(&self) -> &'static str {
        self.name
    }

    fn load(&mut self, grid: &Grid, rule: Rule) -> gol_core::Result<()> {
        self.backend = None;
        self.graphs = [None, None];
        self.parity = 0;
        rule.check_neighbours(8)?;
        check_dims(grid.width(), grid.height())?;
        let mut backend = B::prepare(&self.gpu, &self.stream, self.name, grid, rule)?;
        let ((), upload) = time_on_host(|| backend.upload(&self.stream, grid))?;
        self.timings.set(Timings {
            upload,
            ..Timings::default()
        });
        self.backend = Some(backend);
        Ok(())
    }

    fn step(&mut self, generations: u64) -> gol_core::Result<()> {
        let (stream, block) = (self.stream.clone(), self.block);
        let backend = self
            .backend
            .as_mut()
            .ok_or_else(|| CudaError::Refused(format!("{}: no grid loaded", self.name)))?;
        let replays = generations / GRAPH_GENERATIONS;
        let slot = &mut self.graphs[self.parity];
        if replays >= 2 && slot.is_none() {
            *slot = capture(&stream, backend, block)?;
        }
        let graph = slot.as_ref().filter(|_| replays > 0);
        let direct = if graph.is_some() {
            generations % GRAPH_GENERATIONS
        } else {
            generations
        };
        let seconds = time_on_device(&stream, || {
            if let Some(graph) = graph {
                (0..replays).try_for_each(|_| graph.0.launch())?;
            }
            (0..direct).try_for_each(|_| backend.generation(&stream, block))
        })?;
        self.parity ^= (direct % 2) as usize;
        self.add(|t| t.generations += seconds);
        Ok(())
    }

    fn snapshot(&self) -> gol_core::Result<Grid> {
        let (grid, seconds) = time_on_host(|| self.backend()?.download(&self.stream))?;
        self.add(|t| t.download += seconds);
        Ok(grid)
    }

    fn population(&self) -> gol_core::Result<u64> {
        Ok(self.snapshot()?.population())
    }

    fn details(&self) -> String {
        format!(
            "block {}x{}, {}",
            self.block.0, self.block.1, self.gpu.info.name
        )
    }

    fn timings(&self) -> Vec<(&'static str, f64)> {
        self.timings.get().report()
    }
}

/// Captures [`GRAPH_GENERATIONS`] generations of `backend` into a graph (nothing runs yet).
fn capture<B: Backend>(
    stream: &Arc<CudaStream>,
    backend: &mut B,
    block: (u32, u32),
) -> Result<Option<Graph>> {
    stream.begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)?;
    let queued = (0..GRAPH_GENERATIONS).try_for_each(|_| backend.generation(stream, block));
    // End the capture even if queuing failed, so that the stream is usable again.
    let graph = stream.end_capture(CUgraphInstantiate_flags(0))?;
    queued?;
    Ok(graph.map(Graph))
}

/// Kernels index with `int` sides.
fn check_dims(width: usize, height: usize) -> Result<()> {
    let limit = i32::MAX as usize - 2;
    if width > limit || height > limit {
        return Err(CudaError::Refused(format!(
            "a {width}x{height} grid is too large for the CUDA engines (at most {limit} a side)"
        )));
    }
    Ok(())
}

/// A 2D launch over `columns` × `rows` cells, each block covering `cells` of them (rows capped
/// by [`MAX_GRID_Y`] blocks).
pub fn launch_2d(
    columns: usize,
    rows: usize,
    block: (u32, u32),
    cells: (u32, u32),
    shared: u32,
) -> cudarc::driver::LaunchConfig {
    cudarc::driver::LaunchConfig {
        grid_dim: (
            (columns as u32).div_ceil(cells.0),
            (rows as u32).div_ceil(cells.1).min(MAX_GRID_Y),
            1,
        ),
        block_dim: (block.0, block.1, 1),
        shared_mem_bytes: shared,
    }
}
