//! One [`Engine`] implementation for every CUDA engine: [`GpuEngine`] owns the GPU handle, the
//! block size and the timings, and drives a [`Backend`] that knows one kernel's data layout.

use std::cell::Cell;
use std::sync::Arc;

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};
use cudarc::driver::{CudaEvent, CudaGraph, CudaStream};
use gol_core::engine::{DeviceRows, EngineId, HostRows, RowAccess};
use gol_core::picture::{Frame, Look, View};
use gol_core::{Cube, Engine, EngineOptions, Grid, Rule, World};

use crate::clock::{time_on_device, time_on_host, Timings};
use crate::device::{gpu_on, Gpu};
use crate::error::{CudaError, Result};
use crate::kernels::KernelSpec;
use crate::pinned::Pinned;

/// The most blocks launched along y; kernels loop over the rest (grid-stride).
pub const MAX_GRID_Y: u32 = 65_535;

/// A captured run of [`Backend::GRAPH_GENERATIONS`] generations, replayed to save launch
/// overhead.
struct Graph(CudaGraph);

// SAFETY: a graph is a driver object of the context; cudarc binds the context to the calling
// thread before each launch, so it may be used from any thread (one at a time: `&mut` access).
unsafe impl Send for Graph {}

/// A world the CUDA kernels can hold: its sides must fit the kernels' index types.
pub trait DeviceWorld: World {
    /// Refuses sides the kernels cannot index.
    fn check_sides(&self) -> Result<()>;
}

impl DeviceWorld for Grid {
    /// Kernels index with `int` sides.
    fn check_sides(&self) -> Result<()> {
        let (width, height) = (self.width(), self.height());
        let limit = i32::MAX as usize - 2;
        if width > limit || height > limit {
            return Err(CudaError::Refused(format!(
                "a {width}x{height} grid is too large for the CUDA engines (at most {limit} a side)"
            )));
        }
        Ok(())
    }
}

impl DeviceWorld for Cube {
    /// Any cube side fits: the 3D kernels take `int` sides (at most 2¹⁵) and index planes with
    /// 64-bit offsets.
    fn check_sides(&self) -> Result<()> {
        Ok(())
    }
}

/// A kernel's data on the device and how to advance it.
pub trait Backend: Sized {
    /// What the backend advances: a 2D [`Grid`] or a 3D [`Cube`].
    type World: DeviceWorld;
    /// The kernel of `engine`, one of this backend's engines: each backend describes its own.
    fn spec(engine: EngineId) -> &'static KernelSpec;
    /// Checks the problem against the device, compiles the module and allocates buffers.
    /// Everything happens on `stream`, the engine's own.
    fn prepare(
        gpu: &Gpu,
        stream: &Arc<CudaStream>,
        engine: EngineId,
        world: &Self::World,
        rule: Rule,
    ) -> Result<Self>;
    /// Generations captured in one CUDA graph: a count after which the buffers, which swap
    /// roles at each launch, are back in place.
    const GRAPH_GENERATIONS: u64 = 32;
    /// Copies `world` to the device and waits for the copy.
    fn upload(&mut self, stream: &Arc<CudaStream>, world: &Self::World) -> Result<()>;
    /// Queues one generation on `stream`, swapping the buffers once.
    fn generation(&mut self, stream: &Arc<CudaStream>, block: (u32, u32)) -> Result<()>;
    /// Queues `generations` generations on `stream`; returns how many times the buffers
    /// swapped roles. By default one [`Backend::generation`] each.
    fn queue(
        &mut self,
        stream: &Arc<CudaStream>,
        block: (u32, u32),
        generations: u64,
    ) -> Result<u64> {
        (0..generations).try_for_each(|_| self.generation(stream, block))?;
        Ok(generations)
    }
    /// [`Engine::queue_round`]: the buffer swaps, as for [`Backend::queue`]; `None` where the
    /// backend makes every layer of every generation anyway (the engine then waits for the
    /// halos and queues the generations).
    fn queue_round(
        &mut self,
        stream: &Arc<CudaStream>,
        block: (u32, u32),
        generations: u64,
        halos: (usize, usize),
        refreshed: &mut dyn FnMut(Option<u64>) -> gol_core::Result<()>,
    ) -> Option<Result<u64>> {
        let _ = (stream, block, generations, halos, refreshed);
        None
    }
    /// Copies the state back.
    fn download(&self, stream: &Arc<CudaStream>) -> Result<Self::World>;
    /// Copies rows `first..` of the state (the host layout's rows) into `words`; `None` where
    /// the backend keeps another layout (see [`RowAccess::read_rows`]).
    fn read_rows(
        &self,
        stream: &Arc<CudaStream>,
        first: usize,
        words: &mut [u64],
    ) -> Option<Result<()>> {
        let _ = (stream, first, words);
        None
    }
    /// Overwrites rows `first..` of the state with `words`; `None` as for
    /// [`Backend::read_rows`].
    fn write_rows(
        &mut self,
        stream: &Arc<CudaStream>,
        first: usize,
        words: &[u64],
    ) -> Option<Result<()>> {
        let _ = (stream, first, words);
        None
    }
    /// The device address and length in bytes of rows `first..first + rows` of the state (the
    /// host layout's rows); `None` as for [`Backend::read_rows`].
    fn device_rows(
        &self,
        stream: &Arc<CudaStream>,
        first: usize,
        rows: usize,
    ) -> Option<Result<(u64, usize)>> {
        let _ = (stream, first, rows);
        None
    }
    /// Live cells in rows `first..first + rows` of the state (the host layout's rows); `None`
    /// as for [`Backend::read_rows`].
    fn population_of_rows(
        &self,
        stream: &Arc<CudaStream>,
        first: usize,
        rows: usize,
    ) -> Option<Result<u64>> {
        let _ = (stream, first, rows);
        None
    }
    /// The picture of `view` of the state, one pixel for each `block` × `block` cells
    /// ([`RowAccess::blocks`]), made on the device; `None` as for [`Backend::read_rows`].
    fn blocks(&self, stream: &Arc<CudaStream>, view: &View, block: usize) -> Option<Result<Frame>> {
        let _ = (stream, view, block);
        None
    }
    /// What `look` shows of the cube ([`RowAccess::projection`]), counted on the device;
    /// `None` as for [`Backend::read_rows`].
    fn projection(&self, stream: &Arc<CudaStream>, look: Look) -> Option<Result<Vec<u32>>> {
        let _ = (stream, look);
        None
    }
    /// Whether each launch may start before the previous one ends ([`crate::launch`]); such
    /// backends launch directly rather than through graphs, which measured no faster with it.
    fn starts_early(&self) -> bool {
        false
    }
    /// How the backend launches its kernels, where the block size does not say it.
    fn describe(&self) -> Option<String> {
        None
    }
    /// Whether the backend's state is the host's rows alone, so that row access
    /// ([`RowAccess`]) gives all of it: not where it keeps more (a Generations rule's dying
    /// states). By default it is.
    fn rows_are_the_state(&self) -> bool {
        true
    }
    /// Live cells; by default counted on the host after a download.
    fn population(&self, stream: &Arc<CudaStream>) -> Result<u64> {
        Ok(World::population(&self.download(stream)?))
    }
}

/// A CUDA engine: one [`Backend`] on the GPU.
pub struct GpuEngine<B> {
    id: EngineId,
    gpu: Arc<Gpu>,
    /// The engine's own stream: engines (and test threads) never share one, so a graph capture
    /// on one cannot catch another's work.
    stream: Arc<CudaStream>,
    block: (u32, u32),
    backend: Option<B>,
    /// Graphs of [`Backend::GRAPH_GENERATIONS`] generations of the loaded backend, one per
    /// buffer parity: a graph holds the buffer addresses of the launch it was captured at, so a
    /// replay must start from the same buffer. Replays keep the parity; direct launches flip it
    /// at each swap.
    graphs: [Option<Graph>; 2],
    /// Buffer swaps of direct launches since load, modulo 2.
    parity: usize,
    /// Whether long runs replay graphs: `GOL_CUDA_GRAPHS=1` or `0` (to measure what the graphs
    /// save); by default, unless the backend's launches start early.
    use_graphs: Option<bool>,
    timings: Cell<Timings>,
    /// Recorded before the first generations [`Engine::queue`] left running, until
    /// [`Engine::wait`] times them.
    queued_since: Option<CudaEvent>,
}

impl<B: Backend> GpuEngine<B> {
    /// Whether the engine hands out row access ([`EngineId::gives_rows`]) to the state loaded,
    /// which its rows hold whole.
    fn gives_rows(&self) -> bool {
        self.id.gives_rows()
            && self
                .backend
                .as_ref()
                .is_none_or(Backend::rows_are_the_state)
    }

    /// Queues `generations` generations on the engine's stream (replaying graphs where they
    /// pay) without waiting for them.
    fn enqueue(&mut self, generations: u64) -> Result<()> {
        let (stream, block) = (self.stream.clone(), self.block);
        let backend = self
            .backend
            .as_mut()
            .ok_or_else(|| CudaError::Refused(format!("{}: no grid loaded", self.id)))?;
        let replays = if self.use_graphs.unwrap_or(!backend.starts_early()) {
            generations / B::GRAPH_GENERATIONS
        } else {
            0
        };
        let slot = &mut self.graphs[self.parity];
        if replays >= 2 && slot.is_none() {
            *slot = capture(&stream, backend, block)?;
        }
        let graph = slot.as_ref().filter(|_| replays > 0);
        let direct = if graph.is_some() {
            generations % B::GRAPH_GENERATIONS
        } else {
            generations
        };
        if let Some(graph) = graph {
            (0..replays).try_for_each(|_| graph.0.launch())?;
        }
        let swaps = backend.queue(&stream, block, direct)?;
        self.parity ^= (swaps % 2) as usize;
        Ok(())
    }

    /// [`Engine::queue`]: marks where the queued generations start, then queues them.
    fn queue_timed(&mut self, generations: u64) -> Result<()> {
        self.mark_queued()?;
        self.enqueue(generations)
    }

    /// Records where the generations that [`GpuEngine::settle`] times start, unless queued
    /// ones are already running.
    fn mark_queued(&mut self) -> Result<()> {
        if self.queued_since.is_none() {
            let start = (self.gpu.ctx).new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
            start.record(&self.stream)?;
            self.queued_since = Some(start);
        }
        Ok(())
    }

    /// [`Engine::queue_round`], timed as [`GpuEngine::queue_timed`].
    fn queue_round_timed(
        &mut self,
        generations: u64,
        halos: (usize, usize),
        refreshed: &mut dyn FnMut(Option<u64>) -> gol_core::Result<()>,
    ) -> Result<()> {
        self.mark_queued()?;
        let (stream, block) = (self.stream.clone(), self.block);
        let backend = self
            .backend
            .as_mut()
            .ok_or_else(|| CudaError::Refused(format!("{}: no grid loaded", self.id)))?;
        match backend.queue_round(&stream, block, generations, halos, refreshed) {
            Some(swaps) => self.parity ^= (swaps? % 2) as usize,
            None => {
                refreshed(None)?;
                self.enqueue(generations)?;
            }
        }
        Ok(())
    }

    /// [`Engine::wait`]: waits for what [`GpuEngine::queue_timed`] left running and adds its
    /// time to the generation loop's.
    fn settle(&mut self) -> Result<()> {
        let Some(start) = self.queued_since.take() else {
            return Ok(());
        };
        let stop = (self.gpu.ctx).new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
        stop.record(&self.stream)?;
        let ms = start.elapsed_ms(&stop)?;
        self.add(|t| t.generations += ms as f64 / 1e3);
        Ok(())
    }

    /// The engine `id`; fails where there is no GPU or the block is too large.
    pub fn new(id: EngineId, options: &EngineOptions) -> Result<GpuEngine<B>> {
        let gpu = gpu_on(options.device)?;
        let spec = B::spec(id);
        if let (true, Some((x, y))) = (spec.fixed_block, options.block) {
            return Err(CudaError::Refused(format!(
                "{id} chooses its own launch shape; --block {x}x{y} does not apply to it"
            )));
        }
        let block = options.block.unwrap_or(spec.default_block);
        gpu.check_block(block)?;
        spec.check_block(block).map_err(CudaError::Refused)?;
        let use_graphs = match std::env::var("GOL_CUDA_GRAPHS").as_deref() {
            Err(_) => None,
            Ok("1") => Some(true),
            Ok("0") => Some(false),
            Ok(other) => {
                return Err(CudaError::Refused(format!(
                    "GOL_CUDA_GRAPHS={other:?}: expected 0 (direct launches) or 1 (graphs)"
                )))
            }
        };
        // A stream of our own: CUDA graphs cannot be captured on the legacy default stream.
        let stream = gpu.ctx.new_stream()?;
        Ok(GpuEngine {
            id,
            gpu,
            stream,
            block,
            backend: None,
            graphs: [None, None],
            parity: 0,
            use_graphs,
            timings: Cell::new(Timings::default()),
            queued_since: None,
        })
    }

    fn backend(&self) -> Result<&B> {
        self.backend
            .as_ref()
            .ok_or_else(|| CudaError::Refused(format!("{}: no grid loaded", self.id)))
    }

    fn add(&self, update: impl FnOnce(&mut Timings)) {
        let mut t = self.timings.get();
        update(&mut t);
        self.timings.set(t);
    }
}

impl<B: Backend + Send> Engine<B::World> for GpuEngine<B> {
    fn id(&self) -> EngineId {
        self.id
    }

    fn load(&mut self, world: &B::World, rule: Rule) -> gol_core::Result<()> {
        self.backend = None;
        self.graphs = [None, None];
        self.parity = 0;
        rule.check_engine(self.id, B::World::NEIGHBOURS)?;
        rule.check_states(world.rows().states())?;
        world.check_sides()?;
        let mut backend = B::prepare(&self.gpu, &self.stream, self.id, world, rule)?;
        let ((), upload) = time_on_host(|| backend.upload(&self.stream, world))?;
        self.timings.set(Timings {
            upload,
            ..Timings::default()
        });
        self.backend = Some(backend);
        Ok(())
    }

    fn step(&mut self, generations: u64) -> gol_core::Result<()> {
        self.wait()?;
        let stream = self.stream.clone();
        let seconds = time_on_device(&stream, || self.enqueue(generations))?;
        self.add(|t| t.generations += seconds);
        Ok(())
    }

    fn queue(&mut self, generations: u64) -> gol_core::Result<()> {
        Ok(self.queue_timed(generations)?)
    }

    fn queue_round(
        &mut self,
        generations: u64,
        halos: (usize, usize),
        refreshed: &mut dyn FnMut(Option<u64>) -> gol_core::Result<()>,
    ) -> gol_core::Result<()> {
        Ok(self.queue_round_timed(generations, halos, refreshed)?)
    }

    fn wait(&mut self) -> gol_core::Result<()> {
        Ok(self.settle()?)
    }

    fn snapshot(&self) -> gol_core::Result<B::World> {
        let (world, seconds) = time_on_host(|| self.backend()?.download(&self.stream))?;
        self.add(|t| t.download += seconds);
        Ok(world)
    }

    fn population(&self) -> gol_core::Result<u64> {
        Ok(self.backend()?.population(&self.stream)?)
    }

    fn rows(&self) -> Option<&dyn RowAccess> {
        self.gives_rows().then_some(self as &dyn RowAccess)
    }

    fn rows_mut(&mut self) -> Option<&mut dyn RowAccess> {
        self.gives_rows().then_some(self as &mut dyn RowAccess)
    }

    fn details(&self) -> String {
        let backend = self.backend.as_ref();
        let launch = backend
            .and_then(Backend::describe)
            .unwrap_or_else(|| format!("block {}x{}", self.block.0, self.block.1));
        let early = if backend.is_some_and(Backend::starts_early) {
            ", launches start early"
        } else {
            ""
        };
        format!("{launch}{early}, {}", self.gpu.info.name)
    }

    fn timings(&self) -> Vec<(&'static str, f64)> {
        self.timings.get().report()
    }
}

/// Row access of the engines whose backends keep the host's bit-packed rows
/// ([`EngineId::gives_rows`]).
impl<B: Backend + Send> RowAccess for GpuEngine<B> {
    fn read_rows(&self, first: usize, words: &mut [u64]) -> gol_core::Result<()> {
        match self.backend()?.read_rows(&self.stream, first, words) {
            Some(read) => Ok(read?),
            None => Err(gol_core::engine::no_slabs(self.id)),
        }
    }

    fn population_of_rows(&self, first: usize, rows: usize) -> Option<gol_core::Result<u64>> {
        let backend = match self.backend() {
            Ok(backend) => backend,
            Err(e) => return Some(Err(e.into())),
        };
        let counted = backend.population_of_rows(&self.stream, first, rows)?;
        Some(counted.map_err(Into::into))
    }

    fn blocks(&self, view: &View, block: usize) -> Option<gol_core::Result<Frame>> {
        let backend = match self.backend() {
            Ok(backend) => backend,
            Err(e) => return Some(Err(e.into())),
        };
        Some(
            backend
                .blocks(&self.stream, view, block)?
                .map_err(Into::into),
        )
    }

    fn projection(&self, look: Look) -> Option<gol_core::Result<Vec<u32>>> {
        let backend = match self.backend() {
            Ok(backend) => backend,
            Err(e) => return Some(Err(e.into())),
        };
        Some(backend.projection(&self.stream, look)?.map_err(Into::into))
    }

    fn host_rows(&self, words: usize) -> gol_core::Result<HostRows> {
        Ok(HostRows::new(Pinned::zeroed(&self.gpu.ctx, words)?))
    }

    fn write_rows(&mut self, first: usize, words: &[u64]) -> gol_core::Result<()> {
        let id = self.id;
        let backend = self
            .backend
            .as_mut()
            .ok_or_else(|| CudaError::Refused(format!("{id}: no grid loaded")))?;
        match backend.write_rows(&self.stream, first, words) {
            Some(written) => Ok(written?),
            None => Err(gol_core::engine::no_slabs(id)),
        }
    }

    fn device_rows(&self, first: usize, rows: usize) -> Option<gol_core::Result<DeviceRows>> {
        let backend = match self.backend() {
            Ok(backend) => backend,
            Err(e) => return Some(Err(e.into())),
        };
        let found = backend.device_rows(&self.stream, first, rows)?;
        Some(
            found
                .map_err(Into::into)
                .map(|(address, bytes)| DeviceRows {
                    device: self.gpu.ctx.ordinal(),
                    address,
                    bytes,
                    queue: self.stream.cu_stream() as u64,
                }),
        )
    }
}

/// Captures [`Backend::GRAPH_GENERATIONS`] generations of `backend` into a graph (nothing runs
/// yet).
fn capture<B: Backend>(
    stream: &Arc<CudaStream>,
    backend: &mut B,
    block: (u32, u32),
) -> Result<Option<Graph>> {
    stream.begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)?;
    let queued = backend.queue(stream, block, B::GRAPH_GENERATIONS);
    // End the capture even if queuing failed, so that the stream is usable again.
    let graph = stream.end_capture(CUgraphInstantiate_flags(0))?;
    // Queuing swapped the backend's buffers as if the graph had run; an odd count would leave
    // them out of step with the device.
    assert_eq!(
        queued? % 2,
        0,
        "a graph must swap the buffers an even number of times"
    );
    Ok(graph.map(Graph))
}

/// The words of rows `first..` of a `width` × `height` state of the host's bit-packed rows that
/// `words` words cover; refused unless they are whole rows inside the state.
pub fn row_range(
    width: usize,
    height: usize,
    first: usize,
    words: usize,
) -> Result<std::ops::Range<usize>> {
    let wpr = gol_core::grid::words_per_row(width);
    let start = first * wpr;
    if !words.is_multiple_of(wpr) || start + words > wpr * height {
        return Err(CudaError::Refused(format!(
            "rows {first}.. ({words} words) are not whole rows of a {width}x{height} state"
        )));
    }
    Ok(start..start + words)
}

/// The launch of a population-count kernel over `words` words: blocks of 256 threads striding
/// over them, at most 8 per SM.
pub fn count_launch(words: u64, sms: u32) -> cudarc::driver::LaunchConfig {
    let threads = 256u32;
    cudarc::driver::LaunchConfig {
        grid_dim: (
            words.div_ceil(threads as u64).clamp(1, 8 * sms as u64) as u32,
            1,
            1,
        ),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// 32-bit words per row of cells packed one per bit (the layout of cuda-lut and cuda-bitsliced).
pub fn words32(width: usize) -> usize {
    width.div_ceil(32)
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
