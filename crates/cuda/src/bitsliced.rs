//! `cuda-bitsliced`: 32 cells per 32-bit word, bit-sliced neighbour counts and up to 16
//! generations per launch (`kernels/bitsliced.cu` describes the kernel and its layout).
//!
//! The device buffers hold the host [`Grid`]'s words unchanged (the kernel reads each 64-bit
//! word as two 32-bit words, little end first), so uploads and downloads are single copies.
//! Each launch advances `depth` generations over row tiles chosen by a small cost model
//! ([`Plan`]): deep launches read and write the grid less often, tall tiles recompute fewer
//! halo rows, and enough tiles keep every SM busy.
//!
//! Small grids, whose generations are too short to fill the GPU, take another kernel
//! (`kernels/resident.cu`, compute capability 9.0 and later): one thread-block cluster holds the
//! whole grid in its shared memory and runs every generation of a step in one launch
//! ([`Resident`]). The same cost model picks it where it is faster.

use std::sync::Arc;

use cudarc::driver::{
    CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, LaunchConfig,
    PushKernelArg,
};
use gol_core::picture::{Frame, View};
use gol_core::rule::Topology;
use gol_core::{EngineId, Grid, Rule};

use crate::device::Gpu;
use crate::engine::{words32 as words, Backend};
use crate::error::{CudaError, Result};
use crate::generic::{self, Choice, RuleKernels};
use crate::kernels::{self, KernelSpec, Tiling};
use crate::launch::{self, param};
use crate::pinned::copy_into_fresh;
use crate::source::{self, Generic, Shape, DEPTHS};

/// Words each warp writes in a row (of the 32 its lanes hold, half a word each side is halo).
const GROUP_WORDS: usize = 31;

/// Warps per block (the kernels' `__launch_bounds__(128)`).
const WARPS_PER_BLOCK: u32 = 4;

/// Modelled cost of a launch, in nanoseconds: launch, ramp and drain of one kernel in a graph.
/// With the two below, fitted to 315 launches of Life from 256² to 65536² on an H100
/// (docs/benchmarks/gpu-2d.md, "The plan model by schedulers"): 4.5% from each on average.
const LAUNCH_NS: f64 = 1840.0;

/// Modelled device memory bandwidth in bytes per nanosecond (an H100 copies about 3 TB/s). A
/// launch streams its grid in and out while it computes, so it takes the longer of the two.
const BYTES_PER_NS: f64 = 3000.0;

/// Modelled time for a level of a warp to advance one row, in nanoseconds. An SM's four
/// schedulers each take one warp of every block ([`WARPS_PER_BLOCK`] is 4), so a block per SM
/// is a warp per scheduler. A warp alone on its scheduler waits on its own dependent operations
/// (`LATENCY_NS`); warps sharing one take turns to issue, `ISSUE_NS[k]` each in the kernel of
/// depth `DEPTHS[k]` (fitted at depths 4, 8 and 16, less where the row's load and store are
/// shared by more levels; depths 1 and 2 extrapolated as `a + b / depth` from 4 and 8).
const LATENCY_NS: f64 = 18.25;
const ISSUE_NS: [f64; DEPTHS.len()] = [53.0, 32.0, 21.0, 15.6, 14.7];

/// Rows each thread of the resident kernel updates in a generation, where the band has that
/// many (more threads than that leave too little work to amortise each segment's two edge rows).
const RESIDENT_ROWS_PER_THREAD: u32 = 4;

/// Modelled cost of a resident generation, in nanoseconds: the pass's ramp and the barrier
/// (a block's own where the cluster is one block, else the cluster's), plus one word's update
/// by one block (an SM). Fitted to 64² … 2048² on an H100.
const RESIDENT_ALONE_NS: f64 = 350.0;
const RESIDENT_BARRIER_NS: f64 = 850.0;
const RESIDENT_WORD_NS: f64 = 0.2;

/// Rows a launch of `depth` generations in chains of `chain` streams beyond its tile: the
/// `depth` rows above it that the levels read, and the rows between the one level 0 takes and
/// the one the top level makes (`lag` in `kernels/bitsliced.cu`).
fn skew_rows(depth: u32, chain: u32) -> u32 {
    depth + 1 + (depth - 1) + (depth - 1) / chain
}

/// Launch shapes for one grid on one GPU: for each depth, the tile height that minimises the
/// modelled time, and the depth with the least modelled time per generation. The model: blocks
/// of warps run in waves that fill every SM, and a last wave that may not, spread evenly; each
/// warp streams its tile plus the rows that the deeper levels wait for (`skew_rows`), at the
/// pace its scheduler allows (`ISSUE_NS`); the grid, `planes` bit planes of it (more than one
/// under a Generations rule), is read and written once per launch, meanwhile.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// Rows per tile for each of [`DEPTHS`].
    pub tiles: [u32; DEPTHS.len()],
    /// Index into [`DEPTHS`] of the depth long runs use.
    pub best: usize,
    /// Modelled time of a generation at the best depth, in nanoseconds.
    pub per_generation: f64,
}

impl Plan {
    /// The plan for a `width` × `height` grid on a GPU of `sms` multiprocessors, each holding
    /// `slots[k]` warps of the kernel of depth `DEPTHS[k]` (none where that kernel is not
    /// built), whose levels form chains of `chains[k]`, at once.
    pub fn new(
        width: usize,
        height: usize,
        sms: u32,
        slots: [u32; DEPTHS.len()],
        chains: [u32; DEPTHS.len()],
        planes: u64,
    ) -> Plan {
        let groups = words(width).div_ceil(GROUP_WORDS) as u64;
        let height = height as u64;
        let mut tiles = [1; DEPTHS.len()];
        let mut per_generation = [f64::INFINITY; DEPTHS.len()];
        let bytes = 2 * groups * GROUP_WORDS as u64 * 4 * height * planes;
        for (k, &depth) in DEPTHS.iter().enumerate().filter(|&(k, _)| slots[k] > 0) {
            // A warp's time per level and row, with `blocks` blocks on its SM.
            let row_ns = |blocks: u64| LATENCY_NS.max(ISSUE_NS[k] * blocks as f64);
            let per_sm = (slots[k] / WARPS_PER_BLOCK).max(1) as u64;
            let wave = sms as u64 * per_sm;
            let skew = skew_rows(depth, chains[k]) as u64;
            // Every tile count up to 65536; tile heights follow.
            for count in 1..=height.min(1 << 16) {
                let tile = height.div_ceil(count);
                let warps = groups * height.div_ceil(tile);
                let blocks = warps.div_ceil(WARPS_PER_BLOCK as u64);
                let steps = tile.min(height) + skew;
                // Full waves, then the blocks left over, spread over the SMs.
                let mut level_row_ns = (blocks / wave) as f64 * row_ns(per_sm);
                if !blocks.is_multiple_of(wave) {
                    level_row_ns += row_ns((blocks % wave).div_ceil(sms as u64));
                }
                let work = level_row_ns * (steps * depth as u64) as f64;
                let ns = LAUNCH_NS + work.max(bytes as f64 / BYTES_PER_NS);
                let ns = ns / depth as f64;
                if ns < per_generation[k] {
                    per_generation[k] = ns;
                    tiles[k] = tile as u32;
                }
            }
        }
        let best = (0..DEPTHS.len())
            .min_by(|&a, &b| per_generation[a].total_cmp(&per_generation[b]))
            .expect("DEPTHS is not empty");
        Plan {
            tiles,
            best,
            per_generation: per_generation[best],
        }
    }

    /// The depths (indices into [`DEPTHS`]) of the launches that advance `generations`: the
    /// best depth as often as it fits, then the binary digits of the rest.
    pub fn launches(&self, generations: u64) -> impl Iterator<Item = usize> + '_ {
        let deepest = DEPTHS[self.best] as u64;
        let rest = generations % deepest;
        std::iter::repeat_n(self.best, (generations / deepest) as usize).chain(
            (0..self.best)
                .rev()
                .filter(move |&k| rest & DEPTHS[k] as u64 != 0),
        )
    }
}

/// The resident kernel's launch for one grid.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Resident {
    /// Blocks in the cluster (the whole launch).
    pub blocks: u32,
    /// Threads per block.
    pub threads: u32,
    /// Rows each block holds in its shared memory: block r holds rows `r * band ..`.
    pub band: u32,
    /// 32-bit words per row.
    pub row_words: u32,
}

impl Resident {
    /// Clusters of up to 16 blocks (the most a GPU allows; more than 8 is not portable).
    pub const MOST_BLOCKS: u32 = 16;

    /// The launch over a `width` × `height` grid with `blocks` blocks and, unless `threads`
    /// says, enough threads per block for each to update 4 rows of a word column.
    pub fn new(width: usize, height: usize, blocks: u32, threads: Option<u32>) -> Resident {
        let row_words = words(width) as u32;
        let band = (height as u32).div_ceil(blocks);
        let threads = threads.unwrap_or_else(|| {
            (band * row_words)
                .div_ceil(RESIDENT_ROWS_PER_THREAD)
                .next_multiple_of(32)
                .clamp(32, 1024)
        });
        Resident {
            blocks,
            threads,
            band,
            row_words,
        }
    }

    /// Dynamic shared memory per block: two buffers of the band.
    pub fn shared_bytes(&self) -> u64 {
        2 * self.band as u64 * self.row_words as u64 * 4
    }

    /// Modelled time of a generation in nanoseconds.
    pub fn per_generation(&self) -> f64 {
        let barrier = if self.blocks == 1 {
            RESIDENT_ALONE_NS
        } else {
            RESIDENT_BARRIER_NS
        };
        barrier + (self.band * self.row_words) as f64 * RESIDENT_WORD_NS
    }

    fn config(&self) -> LaunchConfig {
        LaunchConfig {
            grid_dim: (self.blocks, 1, 1),
            block_dim: (self.threads, 1, 1),
            shared_mem_bytes: self.shared_bytes() as u32,
        }
    }
}

/// What `GOL_BITSLICED_PLAN` asks for (for tuning, benchmarks and tests): `stream` (the
/// streaming kernels with their modelled plan), `DEPTH:ROWS` (them with that depth and tile
/// height), `resident`, `resident:BLOCKS` or `resident:BLOCKS:THREADS` (the resident kernel,
/// refused where the grid does not fit); unset, the cost model chooses.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Asked {
    Model,
    Stream(Option<(usize, u32)>),
    Resident(Option<u32>, Option<u32>),
}

impl Asked {
    fn from_env() -> Result<Asked> {
        match std::env::var("GOL_BITSLICED_PLAN") {
            Err(_) => Ok(Asked::Model),
            Ok(text) => Asked::parse(&text).ok_or_else(|| {
                CudaError::Refused(format!(
                    "GOL_BITSLICED_PLAN={text}: expected stream, DEPTH:ROWS with DEPTH one of {DEPTHS:?} and ROWS >= 1, resident, resident:BLOCKS (1 to {}) or resident:BLOCKS:THREADS (a multiple of 32 up to 1024)",
                    Resident::MOST_BLOCKS
                ))
            }),
        }
    }

    fn parse(text: &str) -> Option<Asked> {
        let mut parts = text.split(':');
        let first = parts.next()?;
        let rest: Vec<&str> = parts.collect();
        match (first, rest.as_slice()) {
            ("stream", []) => Some(Asked::Stream(None)),
            ("resident", rest) if rest.len() <= 2 => {
                let blocks = match rest.first() {
                    Some(b) => Some(
                        b.parse::<u32>()
                            .ok()
                            .filter(|b| (1..=Resident::MOST_BLOCKS).contains(b))?,
                    ),
                    None => None,
                };
                let threads = match rest.get(1) {
                    Some(t) => Some(
                        t.parse::<u32>()
                            .ok()
                            .filter(|t| (32..=1024).contains(t) && t % 32 == 0)?,
                    ),
                    None => None,
                };
                Some(Asked::Resident(blocks, threads))
            }
            (depth, [rows]) => {
                let depth = DEPTHS.iter().position(|&x| depth.parse() == Ok(x))?;
                let rows = rows.parse::<u32>().ok().filter(|&t| t >= 1)?;
                Some(Asked::Stream(Some((depth, rows))))
            }
            _ => None,
        }
    }
}

/// Integer-pipe operations per 32-cell word and generation for `rule`: two funnel shifts and
/// two logic operations for a row's sums, and the rule's function from the three rows' sums
/// (halo and skew rows not counted).
pub fn operations_per_word(rule: Rule) -> u32 {
    4 + crate::circuit::operations(rule)
}

/// Bit-packed cells on the device, two buffers that swap roles at each launch.
pub struct BitCells {
    width: usize,
    height: usize,
    cells: CudaSlice<u64>,
    next: CudaSlice<u64>,
    /// The kernels of the rule's own module or, while that compiles, the generic one's.
    kernels: RuleKernels<Kernels>,
    /// The rule.
    rule: Rule,
    /// The launch shape asked for (`GOL_BITSLICED_PLAN`).
    asked: Asked,
    sms: u32,
    /// Whether each launch may start before the previous one ends ([`launch::starts_early`]).
    early: bool,
    /// Whether the grid is a bounded plane (its top and bottom rows are tiles of their own).
    plane: bool,
    /// Under a Generations rule, the planes of the dying cells' ages that follow the live
    /// cells' rows in each buffer (kernels/bitsliced.cu, `Cells`), plane after plane; 0 under
    /// a two-state rule.
    planes: usize,
    /// The rule's cell states.
    states: u32,
}

/// What BitCells launches, all from one module: the rule's own, or the generic kernel's.
struct Kernels {
    /// `advance_<depth>` for each of [`DEPTHS`] the module builds.
    advance: Vec<CudaFunction>,
    count: CudaFunction,
    /// The picture of a view (block_shares).
    shares: CudaFunction,
    plan: Plan,
    /// The resident kernel and its launch, where the grid takes it.
    resident: Option<(CudaFunction, Resident)>,
}

impl Kernels {
    /// The kernels of `module` (generic or the rule's own, as `generic` says) for a grid of
    /// `width` × `height` cells in `planes` planes under `rule`, launched as `asked`.
    fn new(
        gpu: &Gpu,
        stream: &Arc<CudaStream>,
        module: &Arc<CudaModule>,
        generic: bool,
        (width, height, planes): (usize, usize, usize),
        rule: Rule,
        asked: Asked,
    ) -> Result<Kernels> {
        let shape = match generic {
            true => Shape::generic(planes as u32),
            false => Shape::of(rule),
        };
        let advance = DEPTHS
            .iter()
            .filter(|&&d| d <= shape.max_depth)
            .map(|d| module.load_function(&format!("advance_{d}")))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        let sms = gpu.info.multiprocessors as u32;
        let mut slots = [0; DEPTHS.len()];
        for (slot, function) in slots.iter_mut().zip(&advance) {
            let blocks = function.occupancy_max_active_blocks_per_multiprocessor(
                32 * WARPS_PER_BLOCK,
                0,
                None,
            )?;
            *slot = blocks * WARPS_PER_BLOCK;
        }
        let mut plan = Plan::new(width, height, sms, slots, shape.chains, 1 + planes as u64);
        if let Asked::Stream(Some((depth, rows))) = asked {
            if depth >= advance.len() {
                let why = match (generic, planes) {
                    (true, 0) => "the generic rule kernel is built no deeper".to_string(),
                    (false, 0) => "each level keeps its rows' cells beside their sums".to_string(),
                    _ => format!("each level holds its dying states' {planes} bit planes too"),
                };
                return Err(CudaError::Refused(format!(
                    "GOL_BITSLICED_PLAN asks for {} generations a launch, but {rule} runs at most {} ({why})",
                    DEPTHS[depth], shape.max_depth
                )));
            }
            plan.best = depth;
            plan.tiles[depth] = rows;
        }
        let function = module.load_function("resident")?;
        let resident = match planes {
            0 => resident_launch(gpu, stream, &function, (width, height), &plan, asked)?,
            _ if matches!(asked, Asked::Resident(..)) => {
                return Err(CudaError::Refused(format!(
                    "GOL_BITSLICED_PLAN asks for the resident kernel, which does not hold the dying states of {rule}: use stream or DEPTH:ROWS"
                )))
            }
            _ => None,
        };
        Ok(Kernels {
            advance,
            count: module.load_function("population")?,
            shares: module.load_function("block_shares")?,
            plan,
            resident: resident.map(|r| (function, r)),
        })
    }
}

/// Row tiles of a launch of `depth` generations over `height` rows in tiles of `tile`, as the
/// kernel (`advance` in kernels/bitsliced.cu) lays them out: on a bounded plane of more than
/// 2 · depth rows, the `depth` rows at the top and at the bottom are tiles of their own, so that
/// the warps that mask rows past the edges are short.
fn tiles(height: u64, tile: u64, depth: u64, plane: bool) -> u64 {
    if plane && height > 2 * depth {
        2 + (height - 2 * depth).div_ceil(tile)
    } else {
        height.div_ceil(tile)
    }
}

impl BitCells {
    /// The kernels' size arguments: width, height, row stride in 32-bit words (the grid's
    /// 64-bit words, two each) and words holding cells per row.
    fn shape(&self) -> (i32, i32, i32, i32) {
        (
            self.width as i32,
            self.height as i32,
            2 * gol_core::grid::words_per_row(self.width) as i32,
            words(self.width) as i32,
        )
    }

    /// Live cells in rows `first..first + rows`, counted on the device.
    fn count_rows(&self, stream: &Arc<CudaStream>, first: usize, rows: usize) -> Result<u64> {
        let wpr = gol_core::grid::words_per_row(self.width);
        let range = crate::engine::row_range(self.width, self.height, first, rows * wpr)?;
        let cells = self.cells.slice(range);
        let mut total = stream.alloc_zeros::<u64>(1)?;
        let (w, _, stride, nw) = self.shape();
        let h = rows as i32;
        let cfg = crate::engine::count_launch(nw as u64 * rows as u64, self.sms);
        // SAFETY: population takes (const unsigned int* cells, int w, int h, int stride,
        // int nw, unsigned long long* total); `cells` holds h rows of `stride` 32-bit words and
        // `total` one 64-bit counter.
        unsafe {
            stream
                .launch_builder(&self.kernels.kernels.count)
                .arg(&cells)
                .arg(&w)
                .arg(&h)
                .arg(&stride)
                .arg(&nw)
                .arg(&mut total)
                .launch(cfg)?;
        }
        Ok(stream.clone_dtoh(&total)?[0])
    }

    /// The picture of `view`, one pixel for each `block` × `block` cells, made on the device
    /// (block_shares) so that only the picture crosses the bus.
    fn block_shares(&self, stream: &Arc<CudaStream>, view: &View, block: usize) -> Result<Frame> {
        let block = block.max(1);
        let (width, height) = (view.width.div_ceil(block), view.height.div_ceil(block));
        let side = |n: usize| {
            i32::try_from(n)
                .map_err(|_| CudaError::Refused(format!("a view of {n} cells is too large")))
        };
        let (w, h, stride, _) = self.shape();
        let (vx, vy) = (side(view.x % self.width)?, side(view.y % self.height)?);
        let (vw, vh, b) = (side(view.width)?, side(view.height)?, side(block)?);
        let (pw, ph) = (side(width)?, side(height)?);
        let mut pixels = stream.alloc_zeros::<u8>(width * height)?;
        let cfg = LaunchConfig {
            grid_dim: ((pw as u32).div_ceil(32), (ph as u32).div_ceil(8), 1),
            block_dim: (32, 8, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: block_shares takes (const unsigned* cells, int w, int h, int stride, int vx,
        // int vy, int vw, int vh, int block, int pw, int ph, unsigned char* pixels); `cells`
        // holds h rows of `stride` 32-bit words, `pixels` pw × ph bytes, and the kernel reads
        // only rows below h (wrapped) and words below the row's width.
        unsafe {
            stream
                .launch_builder(&self.kernels.kernels.shares)
                .arg(&self.cells)
                .arg(&w)
                .arg(&h)
                .arg(&stride)
                .arg(&vx)
                .arg(&vy)
                .arg(&vw)
                .arg(&vh)
                .arg(&b)
                .arg(&pw)
                .arg(&ph)
                .arg(&mut pixels)
                .launch(cfg)?;
        }
        Ok(Frame {
            width,
            height,
            pixels: stream.clone_dtoh(&pixels)?,
            palette: None,
        })
    }

    /// `grid`'s words as the device holds them: its rows, then under a Generations rule its
    /// age planes one after another (the grid keeps a row's planes together instead).
    fn device_layout(&self, grid: &Grid) -> Vec<u64> {
        let rows = grid.height();
        let mut words = Vec::with_capacity(grid.words().len() * (1 + self.planes));
        words.extend_from_slice(grid.words());
        if grid.states() == 2 {
            // A two-state grid: no cell is dying.
            words.resize(grid.words().len() * (1 + self.planes), 0);
            return words;
        }
        for p in 0..self.planes {
            for y in 0..rows {
                words.extend_from_slice(grid.age_row(y, p));
            }
        }
        words
    }

    /// The grid whose device layout ([`BitCells::device_layout`]) is `words`.
    fn host_layout(&self, words: &[u64]) -> Result<Grid> {
        let mut grid = Grid::with_states(self.width, self.height, self.states)?;
        let (wpr, rows, len) = (grid.words_per_row(), grid.height(), grid.words().len());
        grid.words_mut().copy_from_slice(&words[..len]);
        let ages = grid.ages_mut();
        for p in 0..self.planes {
            for y in 0..rows {
                ages[(y * self.planes + p) * wpr..][..wpr]
                    .copy_from_slice(&words[(1 + p) * len + y * wpr..][..wpr]);
            }
        }
        Ok(grid)
    }

    /// Moves from the generic kernel to the rule's own once its compile is done.
    fn own_kernels_when_ready(&mut self, stream: &Arc<CudaStream>) -> Result<()> {
        let (rule, asked) = (self.rule, self.asked);
        let fits = (self.width, self.height, self.planes);
        self.kernels.poll(stream, |gpu, module| {
            Kernels::new(gpu, stream, module, false, fits, rule, asked)
        })
    }

    /// Queues one launch of `DEPTHS[k]` generations.
    fn launch(&mut self, stream: &Arc<CudaStream>, k: usize) -> Result<()> {
        let (mut w, mut h, mut stride, mut nw) = self.shape();
        let mut tile = self.kernels.kernels.plan.tiles[k] as i32;
        let mut groups = (nw as u32).div_ceil(GROUP_WORDS as u32) as i32;
        let warps = groups as u64 * tiles(h as u64, tile as u64, DEPTHS[k] as u64, self.plane);
        let cfg = LaunchConfig {
            grid_dim: (warps.div_ceil(WARPS_PER_BLOCK as u64) as u32, 1, 1),
            block_dim: (32, WARPS_PER_BLOCK, 1),
            shared_mem_bytes: 0,
        };
        {
            // The guards, dropped at the end of this block, record the buffers' use once the
            // launch is queued.
            let (mut input, _read) = self.cells.device_ptr(stream);
            let (mut output, _written) = self.next.device_ptr_mut(stream);
            let mut params = [
                param(&mut input),
                param(&mut output),
                param(&mut w),
                param(&mut h),
                param(&mut stride),
                param(&mut nw),
                param(&mut tile),
                param(&mut groups),
            ];
            // SAFETY: advance_<depth> takes (const unsigned int* in, unsigned int* out, int w,
            // int h, int stride, int nw, int tile_h, int groups), which `params` points to in that
            // order; both buffers hold h rows of `stride` 32-bit words (the grid's 64-bit words),
            // times 1 + AGE_PLANES planes, and the kernel reads `in`, writes only `out`, and keeps
            // to those planes' rows < h and words < nw <= stride. It touches neither buffer before `wait_for_previous_grid()`.
            unsafe {
                launch::kernel(
                    stream,
                    &self.kernels.kernels.advance[k],
                    cfg,
                    &mut params,
                    self.early,
                )?
            };
        }
        std::mem::swap(&mut self.cells, &mut self.next);
        Ok(())
    }

    /// Queues `generations` generations of the resident kernel, in place (no swap), where the
    /// grid takes it; returns whether it does.
    fn launch_resident(&mut self, stream: &Arc<CudaStream>, generations: u64) -> Result<bool> {
        let (mut w, mut h, mut stride, mut nw) = self.shape();
        let Some((function, resident)) = &self.kernels.kernels.resident else {
            return Ok(false);
        };
        let mut band = resident.band as i32;
        let mut left = generations;
        while left > 0 {
            let mut count = left.min(i32::MAX as u64) as i32;
            left -= count as u64;
            let (mut cells, _record) = self.cells.device_ptr_mut(stream);
            let mut params = [
                param(&mut cells),
                param(&mut w),
                param(&mut h),
                param(&mut stride),
                param(&mut nw),
                param(&mut band),
                param(&mut count),
            ];
            // SAFETY: resident takes (unsigned int* cells, int w, int h, int stride, int nw,
            // int band, int generations), which `params` points to in that order; `cells` holds h
            // rows of `stride` 32-bit words, of which the kernel touches words < nw of rows < h.
            // Its blocks (one cluster, allowed by `allow_large_clusters` in `prepare`) take
            // 2 * band * nw words of shared memory each and cover band * blocks >= h rows. It
            // touches `cells` only after `wait_for_previous_grid()`.
            unsafe {
                launch::cluster(stream, function, resident.config(), &mut params, self.early)?
            };
        }
        Ok(true)
    }
}

/// The resident launch for a `width` × `height` grid, where `asked` allows it, the GPU can run
/// it (clusters from compute capability 9.0, the band in one block's shared memory) and, when
/// the model chooses, it is modelled faster than the streaming `plan`.
fn resident_launch(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    function: &CudaFunction,
    (width, height): (usize, usize),
    plan: &Plan,
    asked: Asked,
) -> Result<Option<Resident>> {
    let (blocks, threads) = match asked {
        Asked::Stream(_) => return Ok(None),
        Asked::Model => (None, None),
        Asked::Resident(blocks, threads) => (blocks, threads),
    };
    let mut best: Option<Resident> = None;
    if gpu.info.capability.0 >= 9 {
        let most = gpu.max_shared_per_block()? as u64;
        // The module, and so the function, may be shared with other engines of other grids:
        // the limit is the device's, whatever this grid takes.
        launch::allow_large_clusters(function, most as u32)?;
        let counts = std::iter::successors(Some(1), |b| Some(b * 2))
            .take_while(|&b| b <= Resident::MOST_BLOCKS)
            .filter(|&b| blocks.is_none_or(|asked| asked == b));
        for launch in counts.map(|b| Resident::new(width, height, b, threads)) {
            if launch.shared_bytes() > most {
                continue;
            }
            if launch::clusters_that_fit(stream, function, launch.config())? == 0 {
                continue;
            }
            if best.is_none_or(|b| launch.per_generation() < b.per_generation()) {
                best = Some(launch);
            }
        }
    }
    match asked {
        Asked::Model => Ok(best.filter(|r| r.per_generation() < plan.per_generation)),
        _ => best.map(Some).ok_or_else(|| {
            CudaError::Refused(format!(
                "GOL_BITSLICED_PLAN asks for the resident kernel, but a {width}x{height} grid does not fit in the shared memory of one thread-block cluster on the {} (compute capability {}.{}; clusters need 9.0)",
                gpu.info.name, gpu.info.capability.0, gpu.info.capability.1
            ))
        }),
    }
}

/// cuda-bitsliced's kernel: the rule as a LOP3 circuit and the lengths of its chains of levels
/// in front of the multi-generation kernels, the small grids' resident kernel and programmatic
/// dependent launch; the launch shape is the engine's own.
pub const KERNELS: [KernelSpec; 1] = [KernelSpec {
    engine: EngineId::CudaBitsliced,
    build_source: source::bitsliced,
    function: "advance_16",
    small_function: None,
    default_block: (32, 4),
    tiling: Tiling::Plain,
    fixed_block: true,
    shared_table: 0,
}];

impl Backend for BitCells {
    type World = Grid;

    fn spec(engine: EngineId) -> &'static KernelSpec {
        kernels::find(KERNELS.iter(), engine)
    }

    /// 64 generations: an even number of launches at every depth.
    const GRAPH_GENERATIONS: u64 = 64;

    fn prepare(
        gpu: &Gpu,
        stream: &Arc<CudaStream>,
        engine: EngineId,
        grid: &Grid,
        rule: Rule,
    ) -> Result<Self> {
        let (width, height) = (grid.width(), grid.height());
        let planes = match rule.is_generations() {
            true => gol_core::grid::age_planes(rule.states()),
            false => 0,
        };
        let len = grid.words().len() * (1 + planes);
        gpu.check_memory(
            16 * len as u64,
            &format!("a {width}x{height} grid on {engine}"),
        )?;
        let asked = Asked::from_env()?;
        let fits = (width, height, planes);
        // A launch deeper than the generic kernels go is the rule's own kernels' to make.
        let mut choice = Choice::from_env()?;
        if let Asked::Stream(Some((depth, _))) = asked {
            if choice == Choice::Auto && DEPTHS[depth] > Shape::generic(planes as u32).max_depth {
                choice = Choice::Own;
            }
        }
        let kernels = RuleKernels::start(
            gpu,
            choice,
            Self::spec(engine).source(rule),
            Generic::flat(rule),
            |module| generic::fill_flat(module, stream, rule),
            |module, generic| Kernels::new(gpu, stream, module, generic, fits, rule, asked),
        )?;
        Ok(BitCells {
            width,
            height,
            cells: stream.alloc_zeros::<u64>(len)?,
            next: stream.alloc_zeros::<u64>(len)?,
            kernels,
            rule,
            asked,
            sms: gpu.info.multiprocessors as u32,
            early: launch::starts_early(gpu)?,
            plane: rule.topology() == Topology::Plane,
            planes,
            states: rule.states(),
        })
    }

    fn upload(&mut self, stream: &Arc<CudaStream>, grid: &Grid) -> Result<()> {
        if self.planes == 0 {
            stream.memcpy_htod(grid.words(), &mut self.cells)?;
        } else {
            stream.memcpy_htod(&self.device_layout(grid), &mut self.cells)?;
        }
        stream.synchronize()?;
        Ok(())
    }

    fn generation(&mut self, stream: &Arc<CudaStream>, _block: (u32, u32)) -> Result<()> {
        self.own_kernels_when_ready(stream)?;
        self.launch(stream, 0)
    }

    fn queue(
        &mut self,
        stream: &Arc<CudaStream>,
        _block: (u32, u32),
        generations: u64,
    ) -> Result<u64> {
        self.own_kernels_when_ready(stream)?;
        if self.launch_resident(stream, generations)? {
            return Ok(0);
        }
        let plan = self.kernels.kernels.plan.clone();
        let mut swaps = 0;
        for k in plan.launches(generations) {
            self.launch(stream, k)?;
            swaps += 1;
        }
        Ok(swaps)
    }

    fn download(&self, stream: &Arc<CudaStream>) -> Result<Grid> {
        if self.planes > 0 {
            let mut words = vec![0u64; self.cells.len()];
            copy_into_fresh(stream, &self.cells, &mut words)?;
            return self.host_layout(&words);
        }
        let mut grid = Grid::new(self.width, self.height)?;
        copy_into_fresh(stream, &self.cells, grid.words_mut())?;
        Ok(grid)
    }

    fn read_rows(
        &self,
        stream: &Arc<CudaStream>,
        first: usize,
        words: &mut [u64],
    ) -> Option<Result<()>> {
        Some((|| {
            let range = crate::engine::row_range(self.width, self.height, first, words.len())?;
            stream.memcpy_dtoh(&self.cells.slice(range), words)?;
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
            let range = crate::engine::row_range(self.width, self.height, first, words.len())?;
            stream.memcpy_htod(words, &mut self.cells.slice_mut(range))?;
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
        let wpr = gol_core::grid::words_per_row(self.width);
        Some(
            crate::engine::row_range(self.width, self.height, first, rows * wpr).map(|range| {
                let (base, _record) = self.cells.device_ptr(stream);
                let word = std::mem::size_of::<u64>();
                (base + (range.start * word) as u64, range.len() * word)
            }),
        )
    }

    fn population(&self, stream: &Arc<CudaStream>) -> Result<u64> {
        if self.planes > 0 {
            return Ok(self.download(stream)?.population());
        }
        self.count_rows(stream, 0, self.height)
    }

    fn population_of_rows(
        &self,
        stream: &Arc<CudaStream>,
        first: usize,
        rows: usize,
    ) -> Option<Result<u64>> {
        Some(self.count_rows(stream, first, rows))
    }

    fn blocks(&self, stream: &Arc<CudaStream>, view: &View, block: usize) -> Option<Result<Frame>> {
        Some(self.block_shares(stream, view, block))
    }

    fn starts_early(&self) -> bool {
        self.early
    }

    fn rows_are_the_state(&self) -> bool {
        self.planes == 0
    }

    fn describe(&self) -> Option<String> {
        let kernel = match self.kernels.describe() {
            Some(generic) => format!(", {generic}"),
            None => String::new(),
        };
        if let Some((_, r)) = &self.kernels.kernels.resident {
            return Some(format!(
                "whole grid in the shared memory of a cluster of {} blocks x {} threads, one launch a step{kernel}",
                r.blocks, r.threads
            ));
        }
        let k = self.kernels.kernels.plan.best;
        let ages = match self.planes {
            0 => String::new(),
            n => format!(", the dying states as {n} bit plane(s) beside the live cells"),
        };
        Some(format!(
            "{} generations per launch, tiles of {} rows{ages}{kernel}",
            DEPTHS[k], self.kernels.kernels.plan.tiles[k]
        ))
    }
}

#[cfg(test)]
mod test {
    use super::*;

    /// Warps per SM of each depth's kernel for Life on an H200 or H100 (132 SMs), from the
    /// registers ptxas gave them (112, 119, 145, 122 and 150).
    const H200: [u32; 5] = [16, 16, 12, 16, 12];

    #[test]
    fn resident_blocks_hold_bands_of_the_grid() {
        let r = Resident::new(1024, 1024, 16, None);
        assert_eq!((r.band, r.row_words, r.threads), (64, 32, 512));
        assert_eq!(r.shared_bytes(), 16 << 10);
        // Fewer rows than blocks: bands of one row, the last blocks hold none.
        let r = Resident::new(3, 3, 16, None);
        assert_eq!((r.band, r.row_words, r.threads), (1, 1, 32));
        // Wide rows: at most 1024 threads, which then take several columns each.
        let r = Resident::new(100_000, 40, 8, None);
        assert_eq!((r.band, r.row_words, r.threads), (5, 3125, 1024));
        assert_eq!(Resident::new(1024, 1024, 4, Some(96)).threads, 96);
        // The model prefers more blocks while each has much to do.
        let cost = |blocks| Resident::new(1024, 1024, blocks, None).per_generation();
        assert!(cost(16) < cost(8) && cost(8) < cost(1));
    }

    #[test]
    fn small_grids_stay_resident_and_large_ones_stream() {
        let model = |n| Plan::new(n, n, 132, H200, Shape::of(Rule::LIFE).chains, 1);
        let plan = model(128);
        let resident = Resident::new(128, 128, 1, None);
        assert!(resident.per_generation() < plan.per_generation, "{plan:?}");
        // Measured on an H100 at 1024² × 1024: streaming 0.63 to 0.69 ms, resident 1.27 ms.
        for n in [1024, 2048, 4096] {
            let plan = model(n);
            let resident = Resident::new(n, n, 16, None);
            assert!(
                resident.per_generation() > plan.per_generation,
                "{n}: {plan:?}"
            );
        }
    }

    #[test]
    fn plans_asked_for_are_parsed_or_refused() {
        assert_eq!(Asked::parse("stream"), Some(Asked::Stream(None)));
        assert_eq!(Asked::parse("8:4"), Some(Asked::Stream(Some((3, 4)))));
        assert_eq!(Asked::parse("resident"), Some(Asked::Resident(None, None)));
        assert_eq!(
            Asked::parse("resident:16"),
            Some(Asked::Resident(Some(16), None))
        );
        assert_eq!(
            Asked::parse("resident:2:64"),
            Some(Asked::Resident(Some(2), Some(64)))
        );
        for bad in [
            "",
            "3:4",
            "8:0",
            "8",
            "8:4:1",
            "resident:0",
            "resident:17",
            "resident:4:48",
            "resident:4:2048",
            "resident:4:64:1",
            "streams",
        ] {
            assert_eq!(Asked::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn launches_add_up_to_the_generations_asked_for() {
        for (w, h) in [(1, 1), (1024, 1024), (65536, 65536), (100, 3)] {
            let plan = Plan::new(w, h, 132, H200, Shape::of(Rule::LIFE).chains, 1);
            for n in [0, 1, 2, 3, 15, 16, 17, 31, 64, 1000, 1023] {
                let total: u64 = plan.launches(n).map(|k| DEPTHS[k] as u64).sum();
                assert_eq!(total, n, "{w}x{h}, {n} generations");
            }
        }
    }

    #[test]
    fn plans_are_the_fastest_measured_or_within_3_percent() {
        // The best of the launch shapes measured per size (docs/benchmarks/gpu-2d.md, "The plan model by
        // schedulers"; at 512², 8:2 measured 1.5% faster than this 8:1, and at 32768² 16:713
        // 0.4% faster than this 16:1058).
        for (side, depth, rows) in [
            (256, 8, 1),
            (512, 8, 1),
            (1024, 8, 4),
            (2048, 8, 12),
            (4096, 8, 40),
            (8192, 8, 71),
            (16384, 16, 265),
            (32768, 16, 1058),
            (65536, 16, 1395),
        ] {
            let plan = Plan::new(side, side, 132, H200, Shape::of(Rule::LIFE).chains, 1);
            let got = (DEPTHS[plan.best], plan.tiles[plan.best]);
            assert_eq!(got, (depth, rows), "{side}²");
        }
    }

    #[test]
    fn large_grids_launch_deep_and_tall() {
        let plan = Plan::new(65536, 65536, 132, H200, Shape::of(Rule::LIFE).chains, 1);
        assert_eq!(DEPTHS[plan.best], 16);
        let tile = plan.tiles[plan.best] as f64;
        // Rows recomputed for the halo and the skew cost under 5%.
        let skew = skew_rows(16, Shape::of(Rule::LIFE).chains[plan.best]) as f64;
        assert!(tile / (tile + skew) > 0.95, "{plan:?}");
    }

    #[test]
    fn tall_tiles_do_not_leave_sms_idle() {
        // 16 column groups of 31 words: without many tiles most SMs would wait.
        let plan = Plan::new(
            16 * 31 * 32,
            4096,
            132,
            H200,
            Shape::of(Rule::LIFE).chains,
            1,
        );
        let tiles = 4096u64.div_ceil(plan.tiles[plan.best] as u64);
        assert!(16 * tiles >= 132 * H200[plan.best] as u64 / 2, "{plan:?}");
    }

    #[test]
    fn full_waves_are_preferred_to_a_wave_and_a_little() {
        // 67 column groups: 23 tiles fill one wave of 1584 warps, 24 would spill into a second.
        let plan = Plan::new(65536, 65536, 132, H200, Shape::of(Rule::LIFE).chains, 1);
        let k = plan.best;
        let warps = 67 * 65536u64.div_ceil(plan.tiles[k] as u64);
        let slots = 132 * H200[k] as u64;
        let waves = warps.div_ceil(slots);
        assert!(warps * 10 >= waves * slots * 9, "{plan:?}: {warps} warps");
    }
}
