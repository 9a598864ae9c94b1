//! The 3D `cuda-bitsliced` backend: the host cube's own bit-packed words on the device, 32
//! cells per 32-bit word, bit-sliced 27-cell sums (layout and scheme in
//! `kernels/cube_bitsliced.cu`), on an M³ torus or on a slab of X planes of one (X×M×M, x
//! wrapping at X; [`gol_core::cube`]).
//!
//! One generation a launch, or two where the side allows it (`pairs_fit`) and the cube fills
//! the GPU; launches start early where the GPU can ([`launch::starts_early`]). It keeps the
//! host's rows (the cube's lines) as they are, so it gives row access for slabs
//! ([`gol_core::RowAccess::read_rows`]) and counts live cells where they lie. A launch may make
//! a run of planes only: a slab's round makes the planes that need no halo while the halos
//! travel, and then no more planes than can still be exact ([`Backend::queue_round`]).

use std::sync::Arc;

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{
    result, CudaEvent, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr, DevicePtrMut,
    LaunchConfig, PushKernelArg,
};
use gol_core::picture::{Axis, Look};
use gol_core::{Cube, EngineId, Grid, Rule};

use crate::cube::{depth_from_env, DEPTH};
use crate::device::Gpu;
use crate::engine::Backend;
use crate::error::{CudaError, Result};
use crate::generic::{self, Choice, RuleKernels};
use crate::kernels::{self, KernelSpec, Tiling};
use crate::launch::{self, param};
use crate::pinned::copy_into_fresh;
use crate::source::{self, Generic};

/// The most planes a walk takes where the GPU would hold fewer, longer ones: on the H100 at
/// 1024³, walks of 64 planes beat walks of 171 (one wave) by 2% (docs/benchmarks/3d.md).
const MAX_WALK: u32 = 64;

/// The fewest planes a walk takes in the launch that makes a slab round's first generations
/// round its halos (see [`CubeBits`]'s `queue_round`): that launch is short and the rest of the
/// round waits for it, so it is spread over as many blocks as fill the GPU.
const SHORTEST_RING_WALK: u32 = 4;

/// The kernel of two generations a launch.
const PAIR_FUNCTION: &str = "cube_bitsliced_pair";

/// Lines each thread owns (`ROWS` in the kernel).
const ROWS: usize = 4;

/// The kernel; the 27-cell wrap helpers and programmatic dependent launch go in front of it.
pub const KERNELS: [KernelSpec; 1] = [KernelSpec {
    engine: EngineId::CudaBitsliced,
    build_source: source::cube_bitsliced,
    function: "cube_bitsliced",
    small_function: None,
    default_block: (32, 4),
    tiling: Tiling::Plain,
    fixed_block: true,
    shared_table: 0,
}];

/// Shared memory per block, for `gens` (1 or 2) generations a launch: `STAGES` planes of ROWS
/// + 2 · gens lines for each of its 128 threads (the kernel's ring of asynchronous copies),
///   with room for one outer word per line in one generation.
fn shared_bytes(gens: u32) -> u32 {
    let lines = ROWS as u32 + 2 * gens;
    let words = if gens == 1 { 2 * lines } else { lines };
    3 * words * 128 * 4
}

/// Whether two generations a launch fit sides of `side` cells: lines of a power of two of whole
/// 32-bit words, at most 32, so that a warp's segments hold whole lines (M = 32 · 2^k up to
/// 1024; see cube_bitsliced.cu).
fn pairs_fit(side: usize) -> bool {
    side.is_multiple_of(32) && (side / 32).is_power_of_two() && side / 32 <= 32
}

/// `GOL_CUBE_PAIRS`: `always` makes the engine launch two generations at once wherever
/// [`pairs_fit`], `never` nowhere; unset, where the cube is large enough to fill the GPU twice
/// over (see [`CubeBits`]'s `prepare`): on smaller cubes a launch has too few blocks to hide
/// the longer chain of work in each.
fn pairs_from_env() -> Result<Option<bool>> {
    match std::env::var("GOL_CUBE_PAIRS") {
        Err(_) => Ok(None),
        Ok(text) => match text.as_str() {
            "always" => Ok(Some(true)),
            "never" => Ok(Some(false)),
            _ => Err(CudaError::Refused(format!(
                "GOL_CUBE_PAIRS={text:?}: expected always or never"
            ))),
        },
    }
}

/// A 3D torus on the device, one bit a cell in the host's words.
pub struct CubeBits {
    side: usize,
    /// Planes of constant x: the side, or a slab's own count.
    planes: usize,
    cells: CudaSlice<u8>,
    next: CudaSlice<u8>,
    /// The kernels of the rule's own module or, while that compiles, the generic one's.
    kernels: RuleKernels<CubeKernels>,
    /// `GOL_CUBE_PAIRS`, where set.
    pairs: Option<bool>,
    sms: u32,
    /// `GOL_CUBE_DEPTH`, where set.
    depth: Option<usize>,
    /// Whether launches may start before the previous one ends ([`launch::starts_early`]).
    early: bool,
    /// The queue of slab rounds' ring launches, made at the first round.
    beside: Option<Beside>,
}

/// A second queue of the GPU, of the highest priority, on which a slab round's ring launch
/// runs beside the launch of the planes that read no halo ([`CubeBits::round`]), and the two
/// events that order it against the engine's own queue.
struct Beside {
    queue: Arc<CudaStream>,
    /// Recorded on the engine's queue before the round.
    before: CudaEvent,
    /// Recorded on this queue after the ring.
    done: CudaEvent,
}

impl Beside {
    fn new(stream: &Arc<CudaStream>) -> Result<Beside> {
        let ctx = stream.context();
        ctx.bind_to_thread()?;
        let (_, highest) = result::stream::get_priority_range()?;
        let event = || ctx.new_event(Some(CUevent_flags::CU_EVENT_DISABLE_TIMING));
        Ok(Beside {
            queue: ctx.new_stream_with_priority(highest)?,
            before: event()?,
            done: event()?,
        })
    }
}

/// What CubeBits launches, all from one module: the rule's own, or the generic kernel's.
struct CubeKernels {
    update: CudaFunction,
    /// The kernel of two generations a launch, where [`pairs_fit`] and it pays
    /// ([`CubeBits::choose_pairs`]).
    pair: Option<CudaFunction>,
    /// The blocks of one launch of `update` and of `pair` that the GPU holds at once.
    slots: (u32, u32),
    /// The population count (cube_population).
    count: CudaFunction,
    /// The projection of the cube along an axis, or a slice (cube_projection).
    project: CudaFunction,
}

impl CubeKernels {
    /// The kernels of `module` for a cube of `side`.
    fn new(gpu: &Gpu, module: &Arc<CudaModule>, side: usize) -> Result<CubeKernels> {
        let spec = &KERNELS[0];
        let update = module.load_function(spec.function)?;
        let pair = match pairs_fit(side) {
            true => Some(module.load_function(PAIR_FUNCTION)?),
            false => None,
        };
        let sms = gpu.info.multiprocessors as u32;
        let resident = |function: &CudaFunction, gens: u32| -> Result<u32> {
            let threads = 32 * spec.default_block.1;
            let shared = shared_bytes(gens) as usize;
            Ok(sms
                * function.occupancy_max_active_blocks_per_multiprocessor(threads, shared, None)?)
        };
        let slots = match &pair {
            Some(pair) => (resident(&update, 1)?, resident(pair, 2)?),
            None => (resident(&update, 1)?, 0),
        };
        Ok(CubeKernels {
            update,
            pair,
            slots,
            count: module.load_function("cube_population")?,
            project: module.load_function("cube_projection")?,
        })
    }
}

impl CubeBits {
    /// Bytes per line: the host's words.
    fn stride_bytes(&self) -> usize {
        gol_core::grid::words_per_row(self.side) * 8
    }

    /// Live cells in the bytes `range` of the current buffer (whole 32-bit words, padding bits
    /// zero).
    fn count_bytes(&self, stream: &Arc<CudaStream>, range: std::ops::Range<usize>) -> Result<u64> {
        let mut total = stream.alloc_zeros::<u64>(1)?;
        let words = (range.len() / 4) as i64;
        let cfg = crate::engine::count_launch(words as u64, self.sms);
        let cells = self.cells.slice(range);
        // SAFETY: cube_population takes (const unsigned* cells, long long words, unsigned long
        // long* total); `cells` holds `words` 32-bit words (padding bits zero) and `total` one
        // 64-bit counter.
        unsafe {
            stream
                .launch_builder(&self.kernels.kernels.count)
                .arg(&cells)
                .arg(&words)
                .arg(&mut total)
                .launch(cfg)?;
        }
        Ok(stream.clone_dtoh(&total)?[0])
    }

    /// What `look` shows of the whole cube, counted on the device (cube_projection).
    fn project(&self, stream: &Arc<CudaStream>, look: Look) -> Result<Vec<u32>> {
        if self.planes != self.side {
            return Err(CudaError::Refused(
                "a slab of a cube has no projection of its own".into(),
            ));
        }
        let m = self.side;
        let mut counts = stream.alloc_zeros::<u32>(m * m)?;
        let side = m as i32;
        let stride = (self.stride_bytes() / 4) as i32;
        let axis: i32 = match look.axis {
            Axis::X => 0,
            Axis::Y => 1,
            Axis::Z => 2,
        };
        let slice = look.slice.map_or(-1, |k| k as i32);
        let cfg = LaunchConfig {
            grid_dim: ((m as u32).div_ceil(32), (m as u32).div_ceil(8), 1),
            block_dim: (32, 8, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: cube_projection takes (const unsigned* cells, int m, int stride, int axis,
        // int slice, unsigned* counts); `cells` holds m² lines of `stride` 32-bit words,
        // `counts` m² counters, and `slice` is below m (checked by the caller) or -1.
        unsafe {
            stream
                .launch_builder(&self.kernels.kernels.project)
                .arg(&self.cells)
                .arg(&side)
                .arg(&stride)
                .arg(&axis)
                .arg(&slice)
                .arg(&mut counts)
                .launch(cfg)?;
        }
        Ok(stream.clone_dtoh(&counts)?)
    }

    /// The bytes of rows `first..` (lines of the host layout) that `words` words cover.
    fn row_bytes(&self, first: usize, words: usize) -> Result<std::ops::Range<usize>> {
        let word = std::mem::size_of::<u64>();
        let rows = crate::engine::row_range(self.side, self.planes * self.side, first, words)?;
        Ok(rows.start * word..rows.end * word)
    }

    /// The grid, and the planes each thread walks, for a launch that makes the planes of `run`
    /// with blocks of 32 × `block_y` threads of a kernel of which `slots` blocks fit on the GPU
    /// at once. A run of planes takes a block per column of 32 words and row group; the runs
    /// split the planes so that all of them fill those slots in one wave as nearly as they
    /// can, in walks of [`DEPTH`] planes at least (each walk first reads the planes before and
    /// after it; [`SHORTEST_RING_WALK`] in a ring) and [`MAX_WALK`] at most. Where even walks
    /// of MAX_WALK take more than a wave, every walk but the last takes MAX_WALK: on two
    /// H200s, a slab's launches of 508 to 544 planes ran 7% faster so (53.8 against 57.4 ms
    /// for 1024 generations) than in nine walks of 57 to 61. `GOL_CUBE_DEPTH` sets the walks'
    /// planes outright, but in rings.
    fn grid(&self, block_y: u32, slots: u32, run: Run) -> ((u32, u32, u32), u32) {
        let (m, planes) = (self.side as u32, run.count as u32);
        let (shortest, fixed) = match run.ring {
            true => (SHORTEST_RING_WALK, None),
            false => (DEPTH as u32, self.depth),
        };
        // Lines under 32 words share a warp, one segment of lanes per line (see the kernel).
        let words = m.div_ceil(32);
        let segment = words.next_power_of_two().min(32);
        let lines_per_block = block_y * ROWS as u32 * (32 / segment);
        let (columns, groups) = (words.div_ceil(32), m.div_ceil(lines_per_block));
        let walk = match fixed {
            Some(depth) => (depth as u32).min(planes),
            None => {
                let (fewest, most) = (planes.div_ceil(MAX_WALK), planes.div_ceil(shortest));
                match (slots / (columns * groups)).clamp(fewest, most) {
                    runs if runs == fewest => MAX_WALK.min(planes),
                    runs => planes.div_ceil(runs),
                }
            }
        };
        ((columns, groups, planes.div_ceil(walk)), walk)
    }

    /// [`CubeBits::grid`] of a launch that makes every plane.
    fn whole_grid(&self, block_y: u32, slots: u32) -> ((u32, u32, u32), u32) {
        self.grid(block_y, slots, Run::whole(self.planes))
    }

    /// Drops the kernel of two generations a launch unless it is asked for (`GOL_CUBE_PAIRS`)
    /// or walks of DEPTH planes would fill the GPU twice over: measured on the H100, two
    /// generations a launch win at 1024³ (99 against 114 ms for 1024 generations) and lose at
    /// 512³ (14.9 against 14.4 ms), where such walks fill it 1.3 times.
    fn choose_pairs(&mut self) {
        let slots = self.kernels.kernels.slots.1;
        let fills = || {
            let ((columns, groups, _), _) = self.whole_grid(KERNELS[0].default_block.1, slots);
            columns * groups * (self.planes as u32).div_ceil(DEPTH as u32) >= 2 * slots
        };
        if !self.pairs.unwrap_or_else(fills) {
            self.kernels.kernels.pair = None;
        }
    }

    /// Moves from the generic kernel to the rule's own once its compile is done.
    fn own_kernels_when_ready(&mut self, stream: &Arc<CudaStream>) -> Result<()> {
        let side = self.side;
        let was_generic = self.kernels.is_generic();
        self.kernels
            .poll(stream, |gpu, module| CubeKernels::new(gpu, module, side))?;
        if was_generic && !self.kernels.is_generic() {
            self.choose_pairs();
        }
        Ok(())
    }

    /// Queues one launch of `gens` generations (2 only where [`pairs_fit`]) of every plane,
    /// swapping the buffers once.
    fn launch(&mut self, stream: &Arc<CudaStream>, block: (u32, u32), gens: u32) -> Result<()> {
        let run = Run::whole(self.planes);
        self.launch_run(stream, block, gens, run)?;
        std::mem::swap(&mut self.cells, &mut self.next);
        Ok(())
    }

    /// Queues one launch of `gens` generations (2 only where [`pairs_fit`]) that makes the
    /// planes of `run` of the next buffer and leaves its others as they are; swaps nothing.
    fn launch_run(
        &mut self,
        stream: &Arc<CudaStream>,
        block: (u32, u32),
        gens: u32,
        run: Run,
    ) -> Result<()> {
        let kernels = &self.kernels.kernels;
        let (function, slots) = match (gens, &kernels.pair) {
            (1, _) => (&kernels.update, kernels.slots.0),
            (2, Some(pair)) => (pair, kernels.slots.1),
            _ => unreachable!("{gens} generations a launch on side {}", self.side),
        };
        assert!(run.first < self.planes && run.count <= self.planes && run.count > 0);
        let (grid_dim, walk) = self.grid(block.1, slots, run);
        let (mut side, mut planes) = (self.side as i32, self.planes as i32);
        let mut stride = (self.stride_bytes() / 4) as i32;
        let mut walk = walk as i32;
        let (mut first, mut count) = (run.first as i32, run.count as i32);
        let cfg = LaunchConfig {
            grid_dim,
            block_dim: (32, block.1, 1),
            shared_mem_bytes: shared_bytes(gens),
        };
        // The guards, dropped once the launch is queued, record the buffers' use.
        let (mut input, read) = self.cells.device_ptr(stream);
        let (mut output, written) = self.next.device_ptr_mut(stream);
        let mut params = vec![
            param(&mut input),
            param(&mut output),
            param(&mut side),
            param(&mut planes),
            param(&mut stride),
            param(&mut walk),
            param(&mut first),
            param(&mut count),
        ];
        // SAFETY: cube_bitsliced and cube_bitsliced_pair take (const unsigned* cells, unsigned*
        // next, int m, int planes, int stride in 32-bit words, int depth, int first, int
        // count), which `params` points to in order; both buffers hold planes·M lines of
        // stride_bytes() bytes, 0 <= first < planes and 0 < count <= planes (asserted), and the
        // grid is the one `grid` computed for this kernel and count (the pair kernel is loaded
        // only where `pairs_fit`). The kernels touch neither buffer before
        // `wait_for_previous_grid()`, so they may start early.
        unsafe { launch::kernel(stream, function, cfg, &mut params, self.early) }?;
        drop((read, written));
        Ok(())
    }

    /// The generations of the next launch of a step of `left` more: two where the pair kernel
    /// is in use.
    fn next_launch(&self, left: u64) -> u32 {
        match self.kernels.kernels.pair {
            Some(_) if left >= 2 => 2,
            _ => 1,
        }
    }

    /// See [`Backend::queue_round`]. The round's first launch comes in two: the planes that
    /// read no halo, at once; and the ring of planes round the slab's wrap that does, on the
    /// queue [`Beside`] once the halos are in (`refreshed`), so that it runs while the first
    /// part does and fills the GPU as that part's last blocks end. Each later launch makes
    /// only the planes that can still be exact (one fewer at each end per generation), as halos
    /// of d planes leave 2d of every launch's planes to be thrown away.
    fn round(
        &mut self,
        stream: &Arc<CudaStream>,
        block: (u32, u32),
        generations: u64,
        (before, after): (usize, usize),
        refreshed: &mut dyn FnMut(Option<u64>) -> gol_core::Result<()>,
    ) -> Result<u64> {
        self.own_kernels_when_ready(stream)?;
        let planes = self.planes;
        let gens = self.next_launch(generations);
        let g = gens as usize;
        match planes
            .checked_sub(before + after + 2 * g)
            .filter(|&n| n > 0)
        {
            Some(inner) => {
                let beside = match self.beside.take() {
                    Some(beside) => beside,
                    None => Beside::new(stream)?,
                };
                // The ring reads what the rounds so far made and writes planes they read.
                beside.before.record(stream)?;
                beside.queue.wait(&beside.before)?;
                let inside = Run::new(before + g, inner);
                self.launch_run(stream, block, gens, inside)?;
                refreshed(Some(beside.queue.cu_stream() as u64))?;
                let ring = Run {
                    ring: true,
                    ..Run::new(planes - after - g, planes - inner)
                };
                self.launch_run(&beside.queue, block, gens, ring)?;
                // The rest of the round reads the ring; and the copies, joined by the ring's
                // queue, must be done before this queue changes the rows they send.
                beside.done.record(&beside.queue)?;
                stream.wait(&beside.done)?;
                self.beside = Some(beside);
            }
            None => {
                refreshed(None)?;
                self.launch_run(stream, block, gens, Run::whole(planes))?;
            }
        }
        std::mem::swap(&mut self.cells, &mut self.next);
        let mut done = g;
        let mut swaps = 1;
        while (done as u64) < generations {
            let gens = self.next_launch(generations - done as u64);
            // Planes at least `done + gens` from each end: exact after this launch.
            let end = done + gens as usize;
            let run = match planes.checked_sub(2 * end).filter(|&n| n > 0) {
                Some(count) => Run::new(end, count),
                None => Run::whole(planes),
            };
            self.launch_run(stream, block, gens, run)?;
            std::mem::swap(&mut self.cells, &mut self.next);
            done = end;
            swaps += 1;
        }
        Ok(swaps)
    }
}

impl Backend for CubeBits {
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
        let (side, planes) = (cube.side(), cube.planes());
        let len = planes * side * gol_core::grid::words_per_row(side) * 8;
        gpu.check_memory(
            2 * len as u64,
            &format!("a {planes}x{side}x{side} torus on {engine}"),
        )?;
        let kernels = RuleKernels::start(
            gpu,
            Choice::from_env()?,
            spec.source(rule),
            Generic::Solid,
            |module| generic::fill_solid(module, stream, rule),
            |module, _| CubeKernels::new(gpu, module, side),
        )?;
        let mut cells = CubeBits {
            side,
            planes,
            cells: stream.alloc_zeros::<u8>(len)?,
            next: stream.alloc_zeros::<u8>(len)?,
            kernels,
            pairs: pairs_from_env()?,
            sms: gpu.info.multiprocessors as u32,
            depth: depth_from_env()?,
            early: launch::starts_early(gpu)?,
            beside: None,
        };
        cells.choose_pairs();
        Ok(cells)
    }

    fn upload(&mut self, stream: &Arc<CudaStream>, cube: &Cube) -> Result<()> {
        stream.memcpy_htod(as_bytes(cube.lines().words()), &mut self.cells)?;
        stream.synchronize()?;
        Ok(())
    }

    fn generation(&mut self, stream: &Arc<CudaStream>, block: (u32, u32)) -> Result<()> {
        self.own_kernels_when_ready(stream)?;
        self.launch(stream, block, 1)
    }

    fn queue(
        &mut self,
        stream: &Arc<CudaStream>,
        block: (u32, u32),
        generations: u64,
    ) -> Result<u64> {
        self.own_kernels_when_ready(stream)?;
        let pairs = if self.kernels.kernels.pair.is_some() {
            generations / 2
        } else {
            0
        };
        let singles = generations - 2 * pairs;
        (0..pairs).try_for_each(|_| self.launch(stream, block, 2))?;
        (0..singles).try_for_each(|_| self.launch(stream, block, 1))?;
        Ok(pairs + singles)
    }

    fn queue_round(
        &mut self,
        stream: &Arc<CudaStream>,
        block: (u32, u32),
        generations: u64,
        halos: (usize, usize),
        refreshed: &mut dyn FnMut(Option<u64>) -> gol_core::Result<()>,
    ) -> Option<Result<u64>> {
        // Only between halos at both ends; a round no deeper than they are.
        let deep_enough = generations <= halos.0.min(halos.1) as u64;
        (halos.0 > 0 && halos.1 > 0 && deep_enough)
            .then(|| self.round(stream, block, generations, halos, refreshed))
    }

    fn download(&self, stream: &Arc<CudaStream>) -> Result<Cube> {
        let mut lines = Grid::new(self.side, self.planes * self.side)?;
        copy_into_fresh(stream, &self.cells, as_bytes_mut(lines.words_mut()))?;
        Ok(Cube::slab(lines)?)
    }

    fn read_rows(
        &self,
        stream: &Arc<CudaStream>,
        first: usize,
        words: &mut [u64],
    ) -> Option<Result<()>> {
        Some((|| {
            let range = self.row_bytes(first, words.len())?;
            stream.memcpy_dtoh(&self.cells.slice(range), as_bytes_mut(words))?;
            stream.synchronize()?;
            Ok(())
        })())
    }

    fn write_rows(
        &mut self,
        stream: &Arc<CudaStream>,
        first: usize,
        words: &[u64],
    ) -> Option<Result<()>> {
        Some((|| {
            let range = self.row_bytes(first, words.len())?;
            stream.memcpy_htod(as_bytes(words), &mut self.cells.slice_mut(range))?;
            stream.synchronize()?;
            Ok(())
        })())
    }

    fn device_rows(
        &self,
        stream: &Arc<CudaStream>,
        first: usize,
        rows: usize,
    ) -> Option<Result<(u64, usize)>> {
        let wpr = gol_core::grid::words_per_row(self.side);
        Some(self.row_bytes(first, rows * wpr).map(|range| {
            let (base, _record) = self.cells.device_ptr(stream);
            (base + range.start as u64, range.len())
        }))
    }

    fn population(&self, stream: &Arc<CudaStream>) -> Result<u64> {
        self.count_bytes(stream, 0..self.cells.len())
    }

    fn population_of_rows(
        &self,
        stream: &Arc<CudaStream>,
        first: usize,
        rows: usize,
    ) -> Option<Result<u64>> {
        let wpr = gol_core::grid::words_per_row(self.side);
        Some(
            self.row_bytes(first, rows * wpr)
                .and_then(|range| self.count_bytes(stream, range)),
        )
    }

    fn projection(&self, stream: &Arc<CudaStream>, look: Look) -> Option<Result<Vec<u32>>> {
        Some(
            look.check(self.side)
                .map_err(CudaError::from)
                .and_then(|()| self.project(stream, look)),
        )
    }

    fn starts_early(&self) -> bool {
        self.early
    }

    fn describe(&self) -> Option<String> {
        let block_y = KERNELS[0].default_block.1;
        let kernel = match self.kernels.describe() {
            Some(generic) => format!(", {generic}"),
            None => String::new(),
        };
        Some(format!(
            "warps of 32 words x {ROWS} lines, {} planes per thread, {}{kernel}",
            self.whole_grid(block_y, self.kernels.kernels.slots.0).1,
            match self.kernels.kernels.pair {
                Some(_) => format!(
                    "two generations a launch ({} planes per thread)",
                    self.whole_grid(block_y, self.kernels.kernels.slots.1).1
                ),
                None => "one generation a launch".into(),
            }
        ))
    }
}

/// The planes a launch makes: `count` from `first`, wrapping at the slab's last plane.
#[derive(Clone, Copy, Debug)]
struct Run {
    first: usize,
    count: usize,
    /// Whether it is the ring round a slab's wrap that a round makes once its halos are in
    /// (walked in shorter walks, see [`CubeBits::grid`]).
    ring: bool,
}

impl Run {
    fn new(first: usize, count: usize) -> Run {
        Run {
            first,
            count,
            ring: false,
        }
    }

    /// Every one of `planes` planes.
    fn whole(planes: usize) -> Run {
        Run::new(0, planes)
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
