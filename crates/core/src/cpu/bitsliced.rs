//! `cpu-bitsliced`: 64 cells per word, bit-sliced neighbour counts, SIMD, all cores.
//!
//! # Layout
//!
//! The engine keeps the state in [`Grid`]'s own layout (rows of `ceil(W/64)` `u64` words, cell
//! `x` at bit `x % 64` of word `x / 64`, padding bits zero), so loading and reading back are
//! plain copies.
//!
//! # Algorithm
//!
//! Every bit position of a word is a separate cell, and all 64 are computed at once with
//! bitwise logic ("bit slicing"):
//!
//! 1. For each row, the west and east neighbours of the 64 cells of a word are the word shifted
//!    by one with the neighbouring word's edge bit funnelled in (the row's first and last words
//!    take the bit from the other end of the row on a torus, a dead cell on a bounded plane). A
//!    full adder over (west, centre, east) gives the row's horizontal 3-sum as two bit planes
//!    `(s0, s1)`.
//! 2. The 3×3 sum (the cell itself included, 0..=9) of row `y` is the sum of the 3-sums of rows
//!    `y-1`, `y`, `y+1` (round the torus; on a bounded plane the rows past the edges are dead,
//!    with 3-sums of zero): four bit planes from a handful of full and half adders. Each row's
//!    3-sum is computed once and reused by the three output rows that need it (a sliding window
//!    of three rows).
//! 3. The next state is a function of the four sum planes and the cell's own state, evaluated as
//!    a multiplexer tree whose leaves are the rule's birth/survival bits. For Conway's Life the
//!    leaves are compile-time constants and the tree folds to a few operations; other rules use
//!    the same code with the leaves in registers.
//!
//! Work is split into bands of rows (one rayon task each). On grids small enough that the
//! threads' hand-over each generation would cost as much as the work, each thread runs several
//! generations of its band on a copy with halo rows before the next hand-over (temporal
//! blocking, [`Blocks`]). Inside a band, narrow rows are taken in blocks of whole rows and wide
//! rows in strips of [`STRIP_WORDS`] words, so that the rows of 3-sums in use stay in L1. The inner loops are plain
//! word loops compiled three times — portable, AVX2 and AVX-512 — and the widest one the CPU has
//! is chosen at run time, so the binary runs on any x86-64 (and on other architectures with the
//! portable path).

use rayon::prelude::*;

use crate::engine::{Engine, EngineId, RowAccess};
use crate::error::{Error, Result};
use crate::grid::{age_planes, check_size, Grid};
use crate::memory;
use crate::rule::circuit::Circuit;
use crate::rule::topology::Surface;
use crate::rule::{Family, Rule, Topology};

use super::blocks::Blocks;
use super::generations::Ages;
use super::program::{Layout, Program};

/// Words per strip: the three rows of 3-sums of a strip take 6 × 8 × `STRIP_WORDS` bytes.
pub const STRIP_WORDS: usize = 1024;

/// Grids with fewer cells than this are stepped on the calling thread alone.
const PARALLEL_CELLS: u64 = 1 << 18;

/// The instruction set the inner loops are compiled for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Isa {
    /// Plain 64-bit integer code (whatever the compiler's baseline target allows).
    Portable,
    /// 256-bit AVX2.
    Avx2,
    /// 512-bit AVX-512 (F and VL, with three-input logic instructions; BW, for the byte and
    /// word lanes of `cpu-states`).
    Avx512,
}

impl Isa {
    /// The widest instruction set this CPU supports.
    pub fn detect() -> Isa {
        Isa::available().last().copied().unwrap_or(Isa::Portable)
    }

    /// Every instruction set this CPU supports, narrowest first.
    pub fn available() -> Vec<Isa> {
        [Isa::Portable, Isa::Avx2, Isa::Avx512]
            .into_iter()
            .filter(|isa| isa.is_here())
            .collect()
    }

    /// Whether this CPU supports the instruction set (feature detection is cached: cheap).
    pub fn is_here(self) -> bool {
        match self {
            Isa::Portable => true,
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => is_x86_feature_detected!("avx2"),
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => {
                is_x86_feature_detected!("avx512f")
                    && is_x86_feature_detected!("avx512vl")
                    && is_x86_feature_detected!("avx512bw")
            }
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    /// `self`, or an error if this CPU lacks it.
    pub fn require(self) -> Result<Isa> {
        if !self.is_here() {
            return Err(Error::Engine(format!(
                "cpu-bitsliced: this CPU has no {} instructions",
                self.name()
            )));
        }
        Ok(self)
    }

    /// How a bit-sliced engine runs here, for reports.
    pub(super) fn details(self) -> String {
        format!("{}, {} threads", self.name(), rayon::current_num_threads())
    }

    /// Lower-case name (`portable`, `avx2`, `avx512`).
    pub fn name(self) -> &'static str {
        match self {
            Isa::Portable => "portable",
            Isa::Avx2 => "avx2",
            Isa::Avx512 => "avx512",
        }
    }
}

/// The cpu-bitsliced engine.
pub struct Bitsliced {
    isa: Isa,
    state: Option<State>,
    /// One of Golly's other bounded grids, where the loaded rule names one: the state is then
    /// the grid with a ring of ghost cells round it, run as a bounded plane, the ring filled
    /// from the grid as the surface joins its edges before each generation and cleared after.
    surface: Option<Surface>,
    /// The loaded rule's circuit, for rules the sums' logic does not run (compiled once per
    /// load, not per step).
    program: Option<Program>,
}

/// The state of a bit-sliced engine (2D, or 3D with a cube's lines as the rows): the current
/// generation in the grid's own layout, the buffer for the next one, and the rule.
pub(super) struct State {
    pub(super) frame: Frame,
    next: Vec<u64>,
    pub(super) rule: Rule,
    /// The dying cells' ages under a Generations rule.
    ages: Option<Ages>,
}

impl State {
    /// A copy of `grid`; refused if the two buffers do not fit in memory (`what` names the
    /// problem in the message).
    pub(super) fn new(grid: &Grid, rule: Rule, what: &str) -> Result<State> {
        let len = grid.words().len() as u64;
        memory::check(2 * 8 * len, what)?;
        let next = memory::zeroed_vec::<u64>(len, what)?;
        let ages = match rule.is_generations() {
            false => None,
            true if grid.states() == rule.states() => {
                Some(Ages::new(grid.ages(), rule.states(), what)?)
            }
            true => {
                let planes = vec![0; age_planes(rule.states()) * len as usize];
                Some(Ages::new(&planes, rule.states(), what)?)
            }
        };
        Ok(State {
            frame: Frame {
                width: grid.width(),
                height: grid.height(),
                words_per_row: grid.words_per_row(),
                words: grid.words().to_vec(),
                wraps_columns: rule.topology() == Topology::Torus,
                wraps_rows: rule.topology() == Topology::Torus,
            },
            next,
            rule,
            ages,
        })
    }

    /// Computes each generation into the spare buffer with `generation`, then swaps.
    ///
    /// The loop runs inside rayon's pool (`in_worker`: on one of its threads), so that each
    /// generation's split into bands is a fork and join among the pool's own threads rather
    /// than a job sent into the pool from outside and waited for, which costs a wake-up of a
    /// sleeping worker each time.
    pub(super) fn advance(
        &mut self,
        generations: u64,
        generation: impl Fn(&Frame, &mut [u64]) + Sync,
    ) {
        let (frame, next) = (&mut self.frame, &mut self.next);
        rayon::scope(|_| {
            for _ in 0..generations {
                generation(frame, next);
                std::mem::swap(&mut frame.words, next);
            }
        });
    }

    /// Runs `generations` of a 2D grid with `work`: several generations between the threads'
    /// hand-overs where the grid is small enough for them to matter ([`Blocks`]), else one.
    fn advance_2d(&mut self, isa: Isa, generations: u64, work: &impl BandWork) {
        if let Some(ages) = self.ages.as_mut() {
            ages.advance(isa, &mut self.frame, &mut self.next, generations, work);
            return;
        }
        match Blocks::plan(&self.frame, generations) {
            Some(blocks) => blocks.advance(isa, &mut self.frame, &mut self.next, generations, work),
            None => self.advance(generations, |frame, next| {
                generation(isa, frame, next, work)
            }),
        }
    }

    /// The current generation as a grid.
    pub(super) fn grid(&self) -> Result<Grid> {
        let (width, height) = (self.frame.width, self.frame.height);
        let mut grid = Grid::with_states(width, height, self.rule.states())?;
        grid.words_mut().copy_from_slice(&self.frame.words);
        if let Some(ages) = &self.ages {
            grid.ages_mut().copy_from_slice(&ages.now);
        }
        Ok(grid)
    }

    /// The words of rows `first..` that `words` has room for (whole rows).
    fn rows_at(&self, first: usize, len: usize) -> Result<std::ops::Range<usize>> {
        let wpr = self.frame.words_per_row;
        let start = first * wpr;
        if !len.is_multiple_of(wpr) || start + len > self.frame.words.len() {
            return Err(Error::Engine(format!(
                "rows {first}.. ({len} words) are not whole rows of a {}x{} state",
                self.frame.width, self.frame.height
            )));
        }
        Ok(start..start + len)
    }

    /// See [`RowAccess::read_rows`].
    pub(super) fn read_rows(&self, first: usize, words: &mut [u64]) -> Result<()> {
        words.copy_from_slice(&self.frame.words[self.rows_at(first, words.len())?]);
        Ok(())
    }

    /// See [`RowAccess::write_rows`].
    pub(super) fn write_rows(&mut self, first: usize, words: &[u64]) -> Result<()> {
        let range = self.rows_at(first, words.len())?;
        self.frame.words[range].copy_from_slice(words);
        Ok(())
    }

    /// Live cells now.
    pub(super) fn population(&self) -> u64 {
        if let Some(ages) = &self.ages {
            return ages.population(&self.frame.words, self.frame.words_per_row);
        }
        self.frame
            .words
            .par_iter()
            .map(|w| w.count_ones() as u64)
            .sum()
    }
}

/// The current generation and its geometry.
pub(super) struct Frame {
    pub(super) width: usize,
    pub(super) height: usize,
    pub(super) words_per_row: usize,
    pub(super) words: Vec<u64>,
    /// Whether a row's first and last cells are neighbours (a torus) or see dead cells past
    /// them (a bounded plane).
    pub(super) wraps_columns: bool,
    /// Whether the first and last rows are neighbours (a torus) or see dead rows past them: a
    /// bounded plane's edges, or the ends of a band run on its own ([`Blocks`]).
    pub(super) wraps_rows: bool,
}

/// `ringed` without its ring of ghost cells: the grid inside, each row shifted a cell left.
fn unringed(ringed: &Grid) -> Result<Grid> {
    let (w, h) = (ringed.width() - 2, ringed.height() - 2);
    let mut grid = Grid::new(w, h)?;
    let mask = grid.last_word_mask();
    for y in 0..h {
        let from = ringed.row(y + 1);
        let to = grid.row_mut(y);
        let last = to.len() - 1;
        for (i, word) in to.iter_mut().enumerate() {
            let high = from.get(i + 1).map_or(0, |&next| next << 63);
            *word = from[i] >> 1 | high;
            if i == last {
                *word &= mask;
            }
        }
    }
    Ok(grid)
}

impl Frame {
    /// Whether cell (x, y) of the frame is alive.
    fn cell(&self, x: usize, y: usize) -> bool {
        self.words[y * self.words_per_row + x / 64] >> (x % 64) & 1 == 1
    }

    /// Sets cell (x, y) of the frame to `alive`.
    fn set_cell(&mut self, x: usize, y: usize, alive: bool) {
        let word = &mut self.words[y * self.words_per_row + x / 64];
        *word = *word & !(1 << (x % 64)) | (alive as u64) << (x % 64);
    }

    /// Fills the ring of ghost cells round a grid of (width − 2) × (height − 2) cells (the
    /// frame holds it at (1, 1)) with the cells `surface` joins its edges to.
    fn fill_ring(&mut self, surface: &Surface) {
        let (w, h) = (self.width as isize - 2, self.height as isize - 2);
        let ghosts = (-1..=w)
            .flat_map(|x| [(x, -1), (x, h)])
            .chain((0..h).flat_map(|y| [(-1, y), (w, y)]));
        for (x, y) in ghosts {
            let (sx, sy) = surface.outside(x, y);
            let alive = self.cell(sx + 1, sy + 1);
            self.set_cell((x + 1) as usize, (y + 1) as usize, alive);
        }
    }

    /// Clears the ring of ghost cells (what a generation left there means nothing).
    fn clear_ring(&mut self) {
        let (w, h, wpr) = (self.width, self.height, self.words_per_row);
        self.words[..wpr].fill(0);
        self.words[(h - 1) * wpr..].fill(0);
        for y in 1..h - 1 {
            self.set_cell(0, y, false);
            self.set_cell(w - 1, y, false);
        }
    }

    /// The rows above and below row `y`: round the torus, or `None` past the first and last
    /// rows.
    #[inline(always)]
    pub(super) fn around(&self, y: usize) -> [Option<usize>; 2] {
        let h = self.height;
        if self.wraps_rows {
            [Some((y + h - 1) % h), Some((y + 1) % h)]
        } else {
            [y.checked_sub(1), Some(y + 1).filter(|&b| b < h)]
        }
    }
}

impl Default for Bitsliced {
    fn default() -> Self {
        Bitsliced {
            isa: Isa::detect(),
            state: None,
            surface: None,
            program: None,
        }
    }
}

impl Bitsliced {
    /// An engine whose inner loops use `isa`; refused if this CPU lacks it.
    pub fn with_isa(isa: Isa) -> Result<Bitsliced> {
        Ok(Bitsliced {
            isa: isa.require()?,
            state: None,
            surface: None,
            program: None,
        })
    }

    /// The instruction set in use.
    pub fn isa(&self) -> Isa {
        self.isa
    }

    /// Whether a Generations rule is loaded, whose dying states rows do not carry (so no
    /// [`RowAccess`]).
    fn generations(&self) -> bool {
        self.state.as_ref().is_some_and(|s| s.ages.is_some())
    }

    fn loaded(&self) -> Result<&State> {
        self.state.as_ref().ok_or_else(no_grid)
    }

    fn loaded_mut(&mut self) -> Result<&mut State> {
        self.state.as_mut().ok_or_else(no_grid)
    }
}

/// The error of a call that needs a loaded grid before one is loaded.
fn no_grid() -> Error {
    Error::Engine("cpu-bitsliced: no grid loaded".into())
}

impl Engine for Bitsliced {
    fn id(&self) -> EngineId {
        EngineId::CpuBitsliced
    }

    fn load(&mut self, grid: &Grid, rule: Rule) -> Result<()> {
        rule.check_engine(EngineId::CpuBitsliced, 8)?;
        rule.check_states(grid.states())?;
        rule.check_grid(grid.width(), grid.height())?;
        check_size(grid.width(), grid.height())?;
        self.state = None;
        let what = format!(
            "a {}x{} grid on cpu-bitsliced (two bit-packed buffers)",
            grid.width(),
            grid.height()
        );
        self.surface = match rule.topology() {
            Topology::Surface(surface) => Some(surface),
            _ => None,
        };
        self.state = Some(match self.surface {
            None => State::new(grid, rule, &what)?,
            Some(_) => {
                let mut ringed = Grid::new(grid.width() + 2, grid.height() + 2)?;
                ringed.paste(grid, 1, 1)?;
                State::new(&ringed, rule.on(Topology::Plane), &what)?
            }
        });
        self.program = (rule.family() != Family::OuterTotalistic)
            .then(|| Program::new(&Circuit::new(&rule), Layout::Rows));
        Ok(())
    }

    fn step(&mut self, generations: u64) -> Result<()> {
        let (isa, surface) = (self.isa, self.surface);
        let state = self.state.as_mut().ok_or_else(no_grid)?;
        // Life's own logic on either topology (the frame knows its edges), and under Life's
        // Generations rules for their live cells.
        let two_state = state.rule.on(Topology::Torus).with_states(2)?;
        let outer = state.rule.family() == Family::OuterTotalistic;
        let leaves = (outer && two_state != Rule::LIFE).then(|| Leaves::<10>::new(state.rule));
        let program = self.program.as_ref();
        let advance = |state: &mut State, generations: u64| {
            if let Some(leaves) = &leaves {
                state.advance_2d(isa, generations, &BySums(leaves));
            } else if two_state == Rule::LIFE {
                state.advance_2d(isa, generations, &BySums(&Life));
            } else {
                let program = program.expect("a circuit for the loaded rule");
                state.advance_2d(isa, generations, program);
            }
        };
        match surface {
            None => advance(state, generations),
            Some(surface) => {
                for _ in 0..generations {
                    state.frame.fill_ring(&surface);
                    advance(state, 1);
                    state.frame.clear_ring();
                }
            }
        }
        Ok(())
    }

    fn snapshot(&self) -> Result<Grid> {
        let grid = self.loaded()?.grid()?;
        match self.surface {
            None => Ok(grid),
            Some(_) => unringed(&grid),
        }
    }

    fn population(&self) -> Result<u64> {
        Ok(self.loaded()?.population())
    }

    fn rows(&self) -> Option<&dyn RowAccess> {
        (!self.generations() && self.surface.is_none()).then_some(self as &dyn RowAccess)
    }

    fn rows_mut(&mut self) -> Option<&mut dyn RowAccess> {
        (!self.generations() && self.surface.is_none()).then_some(self as &mut dyn RowAccess)
    }

    fn details(&self) -> String {
        self.isa.details()
    }
}

impl RowAccess for Bitsliced {
    fn read_rows(&self, first: usize, words: &mut [u64]) -> Result<()> {
        self.loaded()?.read_rows(first, words)
    }

    fn write_rows(&mut self, first: usize, words: &[u64]) -> Result<()> {
        self.loaded_mut()?.write_rows(first, words)
    }
}

/// The next-state function of a rule over bit planes.
trait RuleLogic: Sync {
    /// `sum` holds the four bit planes (least significant first) of each cell's 3×3 sum, the
    /// cell itself included; `alive` the cells' states. Returns the next states.
    fn apply(&self, sum: [u64; 4], alive: u64) -> u64;
}

/// A rule as the `N` leaves of a multiplexer tree over a cell's sum `c`, the cell itself
/// included (the 3×3 sum, 0..=9, in 2D; the 27-cell sum in 3D): leaf `c` is `base[c] ^ (alive &
/// flip[c])`, i.e. the birth bit for `c` when dead and the survival bit for `c - 1` when alive.
/// Every mask is all ones or all zeros; sums the rule cannot mention give 0.
#[derive(Clone, Copy)]
pub(super) struct Leaves<const N: usize> {
    pub(super) base: [u64; N],
    pub(super) flip: [u64; N],
}

impl<const N: usize> Leaves<N> {
    /// The leaves of `rule` (`N` at most 32).
    pub(super) const fn new(rule: Rule) -> Leaves<N> {
        let (birth, survive) = (rule.birth_mask(), rule.survive_mask());
        let mut base = [0u64; N];
        let mut flip = [0u64; N];
        let mut c = 0;
        while c < N {
            let born = (birth >> c) & 1 != 0;
            let stays = c >= 1 && (survive >> (c - 1)) & 1 != 0;
            base[c] = if born { !0 } else { 0 };
            flip[c] = if born != stays { !0 } else { 0 };
            c += 1;
        }
        Leaves { base, flip }
    }
}

/// Bitwise multiplexer: `one` where `select` is set, `zero` elsewhere.
#[inline(always)]
pub(super) fn mux(select: u64, one: u64, zero: u64) -> u64 {
    zero ^ (select & (one ^ zero))
}

impl RuleLogic for Leaves<10> {
    #[inline(always)]
    fn apply(&self, sum: [u64; 4], alive: u64) -> u64 {
        let leaf = |c: usize| self.base[c] ^ (alive & self.flip[c]);
        let [s0, s1, s2, s3] = sum;
        let p01 = mux(s0, leaf(1), leaf(0));
        let p23 = mux(s0, leaf(3), leaf(2));
        let p45 = mux(s0, leaf(5), leaf(4));
        let p67 = mux(s0, leaf(7), leaf(6));
        let p89 = mux(s0, leaf(9), leaf(8));
        let q03 = mux(s1, p23, p01);
        let q47 = mux(s1, p67, p45);
        let r07 = mux(s2, q47, q03);
        mux(s3, p89, r07)
    }
}

/// Conway's Life: the same tree with constant leaves, which the compiler folds away.
struct Life;

impl RuleLogic for Life {
    #[inline(always)]
    fn apply(&self, sum: [u64; 4], alive: u64) -> u64 {
        const LEAVES: Leaves<10> = Leaves::new(Rule::LIFE);
        LEAVES.apply(sum, alive)
    }
}

/// How one band of output rows is computed: `out` holds rows `top..top + out.len() /
/// words_per_row` of the next generation of `frame`.
pub(super) trait BandWork: Sync {
    /// Computes the band with the inner loops compiled for `isa`.
    fn band(&self, isa: Isa, frame: &Frame, out: &mut [u64], top: usize);
}

/// Bands by 3×3 sums and a rule's [`RuleLogic`].
struct BySums<'a, R>(&'a R);

impl<R: RuleLogic> BandWork for BySums<'_, R> {
    fn band(&self, isa: Isa, frame: &Frame, out: &mut [u64], top: usize) {
        dispatch(
            isa,
            Band {
                frame,
                out,
                top,
                logic: self.0,
            },
        )
    }
}

/// Rows of the bands a generation of `height` rows is cut into for rayon's threads: several
/// bands per thread balance the load; each band recomputes two rows of 3-sums.
pub(super) fn rows_per_band(height: usize) -> usize {
    height.div_ceil(rayon::current_num_threads() * 4).max(16)
}

/// Computes one generation of `frame` into `next`, in bands spread over rayon's threads.
pub(super) fn generation(isa: Isa, frame: &Frame, next: &mut [u64], work: &impl BandWork) {
    let wpr = frame.words_per_row;
    let cells = frame.width as u64 * frame.height as u64;
    let threads = rayon::current_num_threads();
    if cells < PARALLEL_CELLS || threads == 1 {
        work.band(isa, frame, next, 0);
        return;
    }
    let rows_per_band = rows_per_band(frame.height);
    next.par_chunks_mut(rows_per_band * wpr)
        .enumerate()
        .for_each(|(b, out)| work.band(isa, frame, out, b * rows_per_band));
}

/// Work whose inner loops are compiled once per instruction set: `run` is `#[inline(always)]`
/// in every implementation, so each `#[target_feature]` wrapper below gets its own copy
/// compiled (and vectorised) for its instruction set.
pub trait Kernel {
    /// Does the work.
    fn run(self);
}

/// Runs `kernel` compiled for `isa`.
pub fn dispatch<K: Kernel>(isa: Isa, kernel: K) {
    match isa {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Isa::Avx512` is only chosen when the CPU reports AVX-512 F, VL and BW.
        Isa::Avx512 => unsafe { run_avx512(kernel) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Isa::Avx2` is only chosen when the CPU reports AVX2.
        Isa::Avx2 => unsafe { run_avx2(kernel) },
        _ => kernel.run(),
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vl,avx512bw")]
fn run_avx512<K: Kernel>(kernel: K) {
    kernel.run()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn run_avx2<K: Kernel>(kernel: K) {
    kernel.run()
}

/// Output rows `top..top + out.len() / words_per_row` of one generation.
struct Band<'a, R> {
    frame: &'a Frame,
    out: &'a mut [u64],
    top: usize,
    logic: &'a R,
}

impl<R: RuleLogic> Kernel for Band<'_, R> {
    #[inline(always)]
    fn run(self) {
        band(self.frame, self.out, self.top, self.logic)
    }
}

/// The band kernel: [`rows_band`] where several whole rows fit in a strip, else strips of
/// [`STRIP_WORDS`] words of one row at a time.
#[inline(always)]
fn band<R: RuleLogic>(frame: &Frame, out: &mut [u64], top: usize, logic: &R) {
    let wpr = frame.words_per_row;
    if wpr * ROWS_PER_BLOCK <= STRIP_WORDS {
        rows_band(frame, out, top, logic);
    } else {
        strips_band(frame, out, top, logic);
    }
    let mask = crate::grid::last_word_mask(frame.width);
    for row in out.chunks_exact_mut(wpr) {
        row[wpr - 1] &= mask;
    }
}

/// Narrow rows are computed in blocks of whole rows when at least this many fit in a strip.
const ROWS_PER_BLOCK: usize = 16;

/// A band of narrow rows, in blocks of rows that together fill a strip: each block's 3-sums are
/// computed as if its rows were one long row (one vectorised loop over all its words, then
/// each row's first and last words again with their true outside neighbours), and the rule is
/// applied to the whole block in one loop. The 3-sums of the last two rows of a block are
/// carried to the next. Row by row, the loops of a 256-cell row are four words long and the
/// work per row dominates.
#[inline(always)]
fn rows_band<R: RuleLogic>(frame: &Frame, out: &mut [u64], top: usize, logic: &R) {
    let wpr = frame.words_per_row;
    let rows = out.len() / wpr;
    let block = (STRIP_WORDS / wpr).min(rows);
    // Rows of 3-sums: the row above the block, the block's rows, the row below.
    let len = (block + 2) * wpr;
    let (mut s0, mut s1) = (vec![0u64; len], vec![0u64; len]);
    let [above, _] = frame.around(top);
    row_sum(frame, above, 0, wpr, (&mut s0[..wpr], &mut s1[..wpr]));
    row_sums(frame, top, 1, &mut s0[wpr..], &mut s1[wpr..]);
    let mut first = top;
    while first < top + rows {
        let n = block.min(top + rows - first);
        // Rows first + 1 ..= first + n: those inside the band in one pass, then the row below
        // the band (round the torus, or dead past a plane's edge) if the block reaches it.
        let inside = n.min(top + rows - first - 1);
        row_sums(
            frame,
            first + 1,
            inside,
            &mut s0[2 * wpr..],
            &mut s1[2 * wpr..],
        );
        if inside < n {
            let [_, below] = frame.around(first + n - 1);
            let at = (n + 1) * wpr..(n + 2) * wpr;
            row_sum(frame, below, 0, wpr, (&mut s0[at.clone()], &mut s1[at]));
        }
        let words = n * wpr;
        combine(
            (&s0[..words], &s1[..words]),
            (&s0[wpr..][..words], &s1[wpr..][..words]),
            (&s0[2 * wpr..][..words], &s1[2 * wpr..][..words]),
            &frame.words[first * wpr..][..words],
            &mut out[(first - top) * wpr..][..words],
            logic,
        );
        // The block's last two rows of 3-sums are the next block's first two.
        s0.copy_within(words..words + 2 * wpr, 0);
        s1.copy_within(words..words + 2 * wpr, 0);
        first += n;
    }
}

/// A band row by row, in strips of [`STRIP_WORDS`] words, with a sliding window of three rows
/// of 3-sums per strip.
#[inline(always)]
fn strips_band<R: RuleLogic>(frame: &Frame, out: &mut [u64], top: usize, logic: &R) {
    let wpr = frame.words_per_row;
    let rows = out.len() / wpr;
    let strip = STRIP_WORDS.min(wpr);
    // Three rows of 3-sums, each two planes of `strip` words.
    let mut window = vec![0u64; 6 * strip];
    let mut left = 0;
    while left < wpr {
        let right = (left + strip).min(wpr);
        let n = right - left;
        row_sum(
            frame,
            frame.around(top)[0],
            left,
            right,
            slot(&mut window, 0, strip, n),
        );
        row_sum(
            frame,
            Some(top),
            left,
            right,
            slot(&mut window, 1, strip, n),
        );
        for r in 0..rows {
            let y = top + r;
            row_sum(
                frame,
                frame.around(y)[1],
                left,
                right,
                slot(&mut window, (r + 2) % 3, strip, n),
            );
            let at = |k: usize| {
                let base = (k % 3) * 2 * strip;
                (
                    &window[base..base + n],
                    &window[base + strip..base + strip + n],
                )
            };
            let alive = &frame.words[y * wpr + left..y * wpr + right];
            let target = &mut out[r * wpr + left..r * wpr + right];
            combine(at(r), at(r + 1), at(r + 2), alive, target, logic);
        }
        left = right;
    }
}

/// The horizontal 3-sums of the `count` whole rows from row `first` (all inside the grid)
/// into the first `count` rows of `s0`, `s1`: every word as if the rows were one long row,
/// then each row's first and last words again with their true outside neighbours.
#[inline(always)]
fn row_sums(frame: &Frame, first: usize, count: usize, s0: &mut [u64], s1: &mut [u64]) {
    let wpr = frame.words_per_row;
    let words = &frame.words[first * wpr..(first + count) * wpr];
    let n = words.len();
    let (s0, s1) = (&mut s0[..n], &mut s1[..n]);
    if n >= 3 {
        let (west, centre, east) = (&words[..n - 2], &words[1..n - 1], &words[2..]);
        let (o0, o1) = (&mut s0[1..n - 1], &mut s1[1..n - 1]);
        for k in 0..n - 2 {
            let c = centre[k];
            let (w, e) = west_east(west[k], c, east[k]);
            let (sum, carry) = full_add(w, c, e);
            o0[k] = sum;
            o1[k] = carry;
        }
    }
    for (r, row) in words.chunks_exact(wpr).enumerate() {
        row_ends(frame, row, |i, west, centre, east| {
            let (sum, carry) = full_add(west, centre, east);
            s0[r * wpr + i] = sum;
            s1[r * wpr + i] = carry;
        });
    }
}

/// The two planes of slot `k` of the window, trimmed to `n` words.
#[inline(always)]
fn slot(window: &mut [u64], k: usize, strip: usize, n: usize) -> (&mut [u64], &mut [u64]) {
    let (s0, s1) = window[2 * k * strip..2 * (k + 1) * strip].split_at_mut(strip);
    (&mut s0[..n], &mut s1[..n])
}

/// The horizontal 3-sums (west + centre + east, as planes `s0`, `s1`) of words
/// `left..right` of row `y`; zero for a dead row past a bounded plane's edge (`None`).
#[inline(always)]
pub(super) fn row_sum(
    frame: &Frame,
    y: Option<usize>,
    left: usize,
    right: usize,
    sums: (&mut [u64], &mut [u64]),
) {
    let (s0, s1) = sums;
    let Some(y) = y else {
        s0.fill(0);
        s1.fill(0);
        return;
    };
    shifted(frame, y, left, right, |k, west, centre, east| {
        let (sum, carry) = full_add(west, centre, east);
        s0[k] = sum;
        s1[k] = carry;
    });
}

/// Calls `each(k, west, centre, east)` for words `left..right` of row `y` (`k` counting from
/// `left`): the word, and the words of its cells' west and east neighbours (the word shifted
/// by one, the neighbouring word's edge bit funnelled in; at the row's ends round the torus,
/// or a dead cell on a bounded plane).
#[inline(always)]
pub(super) fn shifted(
    frame: &Frame,
    y: usize,
    left: usize,
    right: usize,
    mut each: impl FnMut(usize, u64, u64, u64),
) {
    let wpr = frame.words_per_row;
    let row = &frame.words[y * wpr..(y + 1) * wpr];
    // Interior words take their edge bits from their neighbours in the row.
    let lo = left.max(1);
    let hi = right.min(wpr - 1);
    if lo < hi {
        let n = hi - lo;
        let (west_words, centre, east_words) =
            (&row[lo - 1..][..n], &row[lo..][..n], &row[lo + 1..][..n]);
        for k in 0..n {
            let c = centre[k];
            let (west, east) = west_east(west_words[k], c, east_words[k]);
            each(lo - left + k, west, c, east);
        }
    }
    row_ends(frame, row, |i, west, centre, east| {
        if (left..right).contains(&i) {
            each(i - left, west, centre, east);
        }
    });
}

/// The words of the west and east neighbours of word `c`'s cells, inside a row: `c` shifted by
/// one, with the edge bit of the word before (`before`) or after (`after`) it funnelled in.
#[inline(always)]
pub(super) fn west_east(before: u64, c: u64, after: u64) -> (u64, u64) {
    ((c << 1) | (before >> 63), (c >> 1) | (after << 63))
}

/// Calls `each(i, west, centre, east)` as [`shifted`] does for the first and the last word of
/// `row` (one call if the row is one word): their neighbours outside the row are the row's
/// other end on a torus, dead cells on a bounded plane.
#[inline(always)]
fn row_ends(frame: &Frame, row: &[u64], mut each: impl FnMut(usize, u64, u64, u64)) {
    let last = row.len() - 1;
    let top_bit = (frame.width - 1) % 64;
    let wraps = frame.wraps_columns as u64;
    let west_end = (row[last] >> top_bit) & wraps;
    let east_end = (row[0] & wraps) << top_bit;
    let c = row[0];
    if last == 0 {
        each(0, (c << 1) | west_end, c, (c >> 1) | east_end);
        return;
    }
    each(0, (c << 1) | west_end, c, (c >> 1) | (row[1] << 63));
    let c = row[last];
    each(
        last,
        (c << 1) | (row[last - 1] >> 63),
        c,
        (c >> 1) | east_end,
    );
}

/// Bitwise full adder: (sum, carry) of three planes.
#[inline(always)]
pub(super) fn full_add(a: u64, b: u64, c: u64) -> (u64, u64) {
    let t = a ^ b;
    (t ^ c, (a & b) | (t & c))
}

/// Adds three rows of 3-sums into the 3×3 sum planes and applies the rule.
#[inline(always)]
fn combine<R: RuleLogic>(
    above: (&[u64], &[u64]),
    middle: (&[u64], &[u64]),
    below: (&[u64], &[u64]),
    alive: &[u64],
    out: &mut [u64],
    logic: &R,
) {
    let n = out.len();
    let (a0, a1) = (&above.0[..n], &above.1[..n]);
    let (m0, m1) = (&middle.0[..n], &middle.1[..n]);
    let (b0, b1) = (&below.0[..n], &below.1[..n]);
    let alive = &alive[..n];
    for k in 0..n {
        let sum = add_3sums([a0[k], a1[k]], [m0[k], m1[k]], [b0[k], b1[k]]);
        out[k] = logic.apply(sum, alive[k]);
    }
}

/// The sum of three 3-sums (two planes each, values 0..=3) as four planes (0..=9).
#[inline(always)]
pub(super) fn add_3sums(a: [u64; 2], b: [u64; 2], c: [u64; 2]) -> [u64; 4] {
    // Ones: a0 + b0 + c0 → s0 and a carry of weight 2.
    let (s0, carry2) = full_add(a[0], b[0], c[0]);
    // Twos: a1 + b1 + c1 + carry2 → s1 and weight-4 terms.
    let (twos, fours) = full_add(a[1], b[1], c[1]);
    let s1 = twos ^ carry2;
    let carry4 = twos & carry2;
    let s2 = fours ^ carry4;
    let s3 = fours & carry4;
    [s0, s1, s2, s3]
}

#[cfg(test)]
pub(super) mod test {
    use super::*;
    use crate::cpu::Scalar;
    use crate::seed::density_soup;

    /// Checks `gens` generations of a soup on `isa` against `cpu-scalar`.
    pub(in crate::cpu) fn check(width: usize, height: usize, rule: Rule, gens: u64, isa: Isa) {
        let grid = density_soup(width, height, 0.4, (width * 31 + height) as u64).unwrap();
        let mut oracle = Scalar::default();
        oracle.load(&grid, rule).unwrap();
        oracle.step(gens).unwrap();
        let mut fast = Bitsliced::with_isa(isa).unwrap();
        fast.load(&grid, rule).unwrap();
        fast.step(gens).unwrap();
        let (want, got) = (oracle.snapshot().unwrap(), fast.snapshot().unwrap());
        assert_eq!(
            want.first_difference(&got),
            None,
            "{width}x{height} {rule} {gens} gens on {isa:?}"
        );
        assert_eq!(fast.population().unwrap(), want.population());
    }

    #[test]
    fn matches_scalar_on_awkward_sizes() {
        for isa in Isa::available() {
            for &(w, h) in &[
                (1, 1),
                (2, 1),
                (1, 2),
                (3, 3),
                (63, 5),
                (64, 4),
                (65, 7),
                (128, 3),
                (130, 9),
                (200, 2),
            ] {
                check(w, h, Rule::LIFE, 9, isa);
                check(w, h, Rule::parse("B36/S23").unwrap(), 7, isa);
                check(w, h, Rule::parse("B0123478/S01234678").unwrap(), 6, isa);
            }
            // Blocks of rows: one block, several blocks and a short last block per band.
            check(64 * 30 + 13, 20, Rule::LIFE, 5, isa);
            check(64 * 5 + 1, 1000, Rule::LIFE, 5, isa);
            // Rows in strips: one strip a row, and rows wider than one strip and not a
            // multiple of it.
            check(64 * 70 + 13, 80, Rule::LIFE, 5, isa);
            check(64 * STRIP_WORDS + 64 * 3 + 5, 6, Rule::LIFE, 4, isa);
            check(
                64 * (STRIP_WORDS / ROWS_PER_BLOCK) + 64,
                7,
                Rule::LIFE,
                4,
                isa,
            );
            check(600, 700, Rule::parse("B3678/S34678").unwrap(), 4, isa);
        }
    }

    #[test]
    fn life_masks_fold_to_life() {
        let generic = Leaves::<10>::new(Rule::LIFE);
        for c in 0..10u64 {
            let planes = [0, 1, 2, 3].map(|b| if c >> b & 1 != 0 { !0u64 } else { 0 });
            for alive in [0u64, !0] {
                let expected =
                    Rule::LIFE.next(alive != 0, (c as u32).saturating_sub((alive != 0) as u32));
                assert_eq!(
                    generic.apply(planes, alive) != 0,
                    expected,
                    "c={c} alive={alive}"
                );
                assert_eq!(Life.apply(planes, alive), generic.apply(planes, alive));
            }
        }
    }
}
