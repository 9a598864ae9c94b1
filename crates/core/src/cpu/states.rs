//! `cpu-states`: byte cells of up to 256 states on every core, for the rules whose cells need
//! more than a live-neighbour count: rule tables ([`crate::rule::table`]) and Larger than Life
//! ([`crate::rule::larger`]).
//!
//! The W×H grid is W·H bytes, row-major, one state a byte, without ghost cells; a generation
//! is cut into bands of rows, one rayon task each, every band's inner loops compiled for the
//! widest instruction set the CPU has ([`Isa`]).
//!
//! - **Rule tables.** A band copies each row it reads once, with one cell of the wrapped row
//!   (a torus) or an empty cell (a bounded plane) at each end. A row's next states are then
//!   looked up in the table's flat form ([`RuleTable::flat`]): the index `Σ state × weight`
//!   over the cells the table reads is summed over the whole row one cell position at a time
//!   (vectorised), then each cell takes one load. A table whose flat form would pass
//!   [`MOST_FLAT`] entries (many states on eight neighbours: LifeHistory, JvN-like tables)
//!   walks its tree per cell instead ([`RuleTable::next`]).
//! - **Larger than Life, the square neighbourhood.** Running sums: a band keeps, for each
//!   column extended by r cells either side (wrapped, or empty), the sum of the 2r + 1 rows
//!   around its current row; a row's counts are differences of the prefix sums of those
//!   column sums, and moving down a row adds the row that enters and takes away the row
//!   that leaves. A cell costs the same at any range. The diamond and the disc go through
//!   [`crate::rule::larger::step`] (row prefix sums, O(r) a cell).
//! - **Two-state square rules up to range [`MOST_RANGE`](super::larger_bits::MOST_RANGE)** on a
//!   torus or a bounded plane are kept in bits instead, 64 cells a word, with bit-sliced running
//!   sums ([`LargerBits`]): 2.1× to 2.4× the bytes' rate at ranges 5 to 20; from range 11 to
//!   127 on AVX-512 the counts of those bits are integers (each row's from its prefix counts),
//!   the same cost a cell at every range: 6.9× the bytes' rate at range 100.

use rayon::prelude::*;

use super::bitsliced::{dispatch, Isa, Kernel};
use super::larger_bits::LargerBits;
use crate::engine::{Engine, EngineId};
use crate::error::{Error, Result};
use crate::grid::{check_size, Grid};
use crate::memory;
use crate::rule::larger::{self, Shape};
use crate::rule::table::Flat;
use crate::rule::{Larger, Rule, RuleTable, Topology};

/// The most entries a rule table's flat lookup may take (4 MiB): beyond it, lookups would
/// miss the caches as often as the tree's loads do.
pub const MOST_FLAT: usize = 1 << 22;

/// The `cpu-states` engine (see the module documentation).
pub struct States {
    state: Option<Kept>,
    isa: Isa,
}

impl Default for States {
    fn default() -> States {
        States {
            state: None,
            isa: Isa::detect(),
        }
    }
}

/// How the world is kept: bytes, or bits for the two-state square Larger than Life rules
/// ([`LargerBits`]).
enum Kept {
    Bytes(Loaded),
    Bits(LargerBits),
}

/// How a generation is computed.
enum Update {
    Flat(Flat),
    Tree(&'static RuleTable),
    Larger(Larger),
}

struct Loaded {
    width: usize,
    height: usize,
    edges: Topology,
    states: u32,
    update: Update,
    isa: Isa,
    cells: Vec<u8>,
    next: Vec<u8>,
}

impl States {
    /// The engine with its inner loops compiled for `isa` (the widest one the CPU has by
    /// default), or an error if this CPU lacks it.
    pub fn with_isa(isa: Isa) -> Result<States> {
        Ok(States {
            state: None,
            isa: isa.require()?,
        })
    }

    /// Whether the engine keeps a world under `rule` in bits, 64 cells a word: two-state
    /// square Larger than Life rules up to range 300 on a torus or a bounded plane (about
    /// twice the bytes' rate).
    pub fn keeps_in_bits(rule: Rule) -> bool {
        States::bits_of(rule).is_some()
    }

    /// The bytes of the engine's own buffers for a `width` × `height` world under `rule`: two
    /// byte arrays, or two bit arrays with their ghost words where the rule is kept in bits.
    pub fn buffer_bytes(rule: Rule, width: usize, height: usize) -> u64 {
        match States::bits_of(rule) {
            Some((larger, _)) => LargerBits::bytes(width, height, larger.range),
            None => (2 * width as u64).saturating_mul(height as u64),
        }
    }

    /// The rule and whether its grid wraps, where the world is kept in bits.
    fn bits_of(rule: Rule) -> Option<(Larger, bool)> {
        let larger = rule
            .larger()
            .filter(|l| LargerBits::takes(l, rule.states()))?;
        match rule.topology() {
            Topology::Torus => Some((larger, true)),
            Topology::Plane => Some((larger, false)),
            _ => None,
        }
    }

    fn loaded(&self) -> Result<&Kept> {
        self.state
            .as_ref()
            .ok_or_else(|| Error::Engine("cpu-states: no grid loaded".into()))
    }
}

impl Engine for States {
    fn id(&self) -> EngineId {
        EngineId::CpuStates
    }

    fn load(&mut self, grid: &Grid, rule: Rule) -> Result<()> {
        rule.check_engine(EngineId::CpuStates, 8)?;
        rule.check_states(grid.states())?;
        rule.check_grid(grid.width(), grid.height())?;
        let isa = self.isa;
        if let Some((larger, wraps)) = States::bits_of(rule) {
            check_size(grid.width(), grid.height())?;
            self.state = None;
            self.state = Some(Kept::Bits(LargerBits::load(grid, &larger, wraps, isa)?));
            return Ok(());
        }
        let update = match (rule.rule_table(), rule.larger()) {
            (Some(table), _) => match table.flat(MOST_FLAT) {
                Some(flat) => Update::Flat(flat),
                None => {
                    // Every cell is looked up every generation: a tree being built is waited
                    // for rather than the transitions ANDed a cell meanwhile (DragonCurve on
                    // 2048², 300 generations: 5.4 s against 5.8, medians of three on dev-2c).
                    let _ = table.tree();
                    Update::Tree(table)
                }
            },
            (None, Some(larger)) => Update::Larger(larger),
            (None, None) => unreachable!("check_engine refuses other rules on cpu-states"),
        };
        let (width, height) = (grid.width(), grid.height());
        check_size(width, height)?;
        let len = width as u64 * height as u64;
        let what = format!("a {width}x{height} grid on cpu-states (two byte arrays)");
        memory::check(2 * len, &what)?;
        self.state = None;
        let mut cells = grid.to_bytes_in(width, 0, len as usize);
        grid.add_ages(&mut cells, width, 0);
        let next = memory::zeroed_vec::<u8>(len, &what)?;
        self.state = Some(Kept::Bytes(Loaded {
            width,
            height,
            edges: rule.topology(),
            states: rule.states(),
            update,
            isa,
            cells,
            next,
        }));
        Ok(())
    }

    fn step(&mut self, generations: u64) -> Result<()> {
        self.loaded()?;
        match self.state.as_mut() {
            Some(Kept::Bytes(world)) => (0..generations).for_each(|_| world.generation()),
            Some(Kept::Bits(world)) => (0..generations).for_each(|_| world.generation()),
            None => {}
        }
        Ok(())
    }

    fn snapshot(&self) -> Result<Grid> {
        let world = match self.loaded()? {
            Kept::Bytes(world) => world,
            Kept::Bits(world) => return world.to_grid(),
        };
        let (w, h) = (world.width, world.height);
        if world.states > 2 {
            return Grid::from_states_in(w, h, world.states, &world.cells, w, 0);
        }
        Grid::from_bytes_in(w, h, &world.cells, w, 0)
    }

    fn population(&self) -> Result<u64> {
        let world = match self.loaded()? {
            Kept::Bytes(world) => world,
            Kept::Bits(world) => return Ok(world.population()),
        };
        Ok(world
            .cells
            .par_chunks(1 << 16)
            .map(|chunk| chunk.iter().filter(|&&c| c != 0).count() as u64)
            .sum())
    }

    fn details(&self) -> String {
        let how = match self.state.as_ref() {
            Some(Kept::Bits(world)) => format!("running sums of cells in bits, {}", world.counts()),
            Some(Kept::Bytes(world)) => match &world.update {
                Update::Flat(flat) => format!(
                    "flat lookup of {} entries over {} cells",
                    flat.next.len(),
                    flat.cells.len()
                ),
                Update::Tree(table) if table.tree().is_some() => {
                    "the rule's tree walked per cell".into()
                }
                Update::Tree(_) => "the rule's transitions looked up per cell (no tree)".into(),
                Update::Larger(l) if l.shape == Shape::Moore => "running sums".into(),
                Update::Larger(_) => "row prefix sums".into(),
            },
            None => String::new(),
        };
        format!(
            "{how}, {}, {} threads",
            self.isa.name(),
            rayon::current_num_threads()
        )
    }
}

impl Loaded {
    /// One generation from `cells` into `next`, then swapped.
    fn generation(&mut self) {
        let (w, h) = (self.width, self.height);
        let threads = rayon::current_num_threads();
        let grid = Source {
            cells: &self.cells,
            width: w,
            height: h,
            edges: self.edges,
        };
        match &self.update {
            Update::Larger(rule) if rule.shape != Shape::Moore => larger::step(
                rule,
                self.states,
                &self.cells,
                w,
                h,
                grid.wraps(),
                &mut self.next,
            ),
            update => {
                // Bands several to a thread balance the load; a running-sum band starts with
                // 2r + 1 rows of sums, so it is cut no thinner than 8r rows where it can be,
                // and into no more bands than threads where that is too thin.
                let least = match update {
                    Update::Larger(rule) => 8 * rule.range as usize,
                    _ => 16,
                };
                let bands = (1..=4)
                    .rev()
                    .find(|k| h.div_ceil(threads * k) >= least)
                    .unwrap_or(1);
                let rows = h.div_ceil(threads * bands).max(16).min(h);
                let (isa, states) = (self.isa, self.states);
                self.next
                    .par_chunks_mut(rows * w)
                    .enumerate()
                    .for_each(|(band, out)| {
                        let top = band * rows;
                        match update {
                            Update::Flat(flat) => dispatch(
                                isa,
                                FlatBand {
                                    grid,
                                    flat,
                                    out,
                                    top,
                                },
                            ),
                            Update::Tree(table) => tree_band(grid, table, out, top),
                            // The narrowest count that holds every neighbourhood's sum.
                            Update::Larger(rule) => match rule.size() {
                                n if n < 1 << 8 => square::<u8>(isa, grid, rule, states, out, top),
                                n if n < 1 << 16 => {
                                    square::<u16>(isa, grid, rule, states, out, top)
                                }
                                _ => square::<u32>(isa, grid, rule, states, out, top),
                            },
                        }
                    });
            }
        }
        std::mem::swap(&mut self.cells, &mut self.next);
    }
}

/// The grid a generation reads.
#[derive(Clone, Copy)]
struct Source<'a> {
    cells: &'a [u8],
    width: usize,
    height: usize,
    edges: Topology,
}

impl Source<'_> {
    /// Whether the grid wraps as a plain torus.
    fn wraps(&self) -> bool {
        self.edges == Topology::Torus
    }

    /// Row `y` (any integer): wrapped on a torus, `None` outside a bounded plane (and outside
    /// Golly's other grids, whose borders [`Source::padded`] reads).
    fn row(&self, y: isize) -> Option<&[u8]> {
        let h = self.height as isize;
        let y = match (0..h).contains(&y) {
            true => y,
            false if self.wraps() => y.rem_euclid(h),
            false => return None,
        };
        Some(&self.cells[y as usize * self.width..][..self.width])
    }

    /// Copies row `y` (−1 to H) into `line` (W + 2 cells) with the ghost cell at each end:
    /// wrapped, empty, or as Golly's border for the grid says
    /// ([`crate::rule::topology::Surface::outside`]).
    fn padded(&self, y: isize, line: &mut [u8]) {
        let w = self.width;
        if let Topology::Surface(surface) = self.edges {
            let cell = |x: isize| {
                let (x, y) = surface.outside(x, y);
                self.cells[y * w + x]
            };
            match self.row(y) {
                Some(row) => line[1..=w].copy_from_slice(row),
                None => (0..w).for_each(|x| line[x + 1] = cell(x as isize)),
            }
            (line[0], line[w + 1]) = (cell(-1), cell(w as isize));
            return;
        }
        match self.row(y) {
            Some(row) => {
                line[1..=w].copy_from_slice(row);
                (line[0], line[w + 1]) = match self.wraps() {
                    true => (row[w - 1], row[0]),
                    false => (0, 0),
                };
            }
            None => line.fill(0),
        }
    }
}

/// Rows `top..` of a rule table's generation through its flat lookup.
struct FlatBand<'a> {
    grid: Source<'a>,
    flat: &'a Flat,
    out: &'a mut [u8],
    top: usize,
}

impl Kernel for FlatBand<'_> {
    #[inline(always)]
    fn run(self) {
        let FlatBand {
            grid,
            flat,
            out,
            top,
        } = self;
        let w = grid.width;
        let mut lines = vec![0u8; 3 * (w + 2)];
        let mut index = vec![0u32; w];
        for (y, out) in (top..).zip(out.chunks_mut(w)) {
            for (k, line) in lines.chunks_mut(w + 2).enumerate() {
                grid.padded(y as isize + k as isize - 1, line);
            }
            index.fill(0);
            for &((row, column), weight) in &flat.cells {
                let cells = &lines[row * (w + 2) + column..][..w];
                for (i, &state) in index.iter_mut().zip(cells) {
                    *i += state as u32 * weight;
                }
            }
            for (cell, &i) in out.iter_mut().zip(&index) {
                *cell = flat.next[i as usize];
            }
        }
    }
}

/// Rows `top..` of a rule table's generation by its tree, cell by cell.
fn tree_band(grid: Source, table: &RuleTable, out: &mut [u8], top: usize) {
    let w = grid.width;
    let mut lines = vec![0u8; 3 * (w + 2)];
    for (y, out) in (top..).zip(out.chunks_mut(w)) {
        for (k, line) in lines.chunks_mut(w + 2).enumerate() {
            grid.padded(y as isize + k as isize - 1, line);
        }
        let (up, rest) = lines.split_at(w + 2);
        let (mid, down) = rest.split_at(w + 2);
        for (x, cell) in out.iter_mut().enumerate() {
            let around = [
                [up[x], up[x + 1], up[x + 2]],
                [mid[x], mid[x + 1], mid[x + 2]],
                [down[x], down[x + 1], down[x + 2]],
            ];
            *cell = table.next(&around);
        }
    }
}

/// Rows `top..` of a square Larger than Life generation by running sums, counted in `T`.
struct SquareBand<'a, T> {
    grid: Source<'a>,
    rule: &'a Larger,
    states: u32,
    out: &'a mut [u8],
    top: usize,
    count: std::marker::PhantomData<T>,
}

/// Rows `top..` of a square Larger than Life generation, counted in `T`, compiled for `isa`.
fn square<T: Count>(
    isa: Isa,
    grid: Source,
    rule: &Larger,
    states: u32,
    out: &mut [u8],
    top: usize,
) {
    let band = SquareBand::<T> {
        grid,
        rule,
        states,
        out,
        top,
        count: std::marker::PhantomData,
    };
    dispatch(isa, band);
}

impl<T: Count> Kernel for SquareBand<'_, T> {
    #[inline(always)]
    fn run(self) {
        let SquareBand {
            grid,
            rule,
            states,
            out,
            top,
            ..
        } = self;
        let (w, r) = (grid.width, rule.range as usize);
        let span = w + 2 * r;
        // columns[i]: live cells of column i − r (wrapped, or empty) in the 2r + 1 rows
        // around the current row.
        let mut columns = vec![T::ZERO; span];
        let top = top as isize;
        for dy in -(r as isize)..=r as isize {
            add_columns(&grid, top + dy, r, &mut columns, true);
        }
        // A row's counts: the sums of 2r + 1 consecutive column sums, made by doubling (the
        // sums of 1, 2, 4, … columns, each from the one before) and adding up the powers of
        // two that make 2r + 1, a few vectorised passes over the row at any range.
        let window = 2 * r + 1;
        let (mut power, mut spare) = (vec![T::ZERO; span], vec![T::ZERO; span]);
        let mut counts = vec![T::ZERO; w];
        let bound = |(low, high): (u32, u32)| (T::of(low), T::of(high));
        let (birth, survive) = (bound(rule.birth), bound(rule.survive));
        let oldest = (states - 1) as u8;
        let rows = out.len() / w;
        for (k, out) in out.chunks_mut(w).enumerate() {
            let y = top + k as isize;
            counts.fill(T::ZERO);
            let (mut width, mut offset, mut len) = (1, 0, span);
            while width <= window {
                let sums = if width == 1 { &columns } else { &power };
                if window & width != 0 {
                    for (c, &p) in counts.iter_mut().zip(&sums[offset..][..w]) {
                        *c = c.plus(p);
                    }
                    offset += width;
                }
                if 2 * width <= window {
                    len -= width;
                    for ((s, &a), &b) in spare[..len]
                        .iter_mut()
                        .zip(&sums[..len])
                        .zip(&sums[width..][..len])
                    {
                        *s = a.plus(b);
                    }
                    std::mem::swap(&mut power, &mut spare);
                }
                width *= 2;
            }
            let row = grid.row(y).expect("a band's rows are inside the grid");
            for ((cell, &state), &count) in out.iter_mut().zip(row).zip(&counts) {
                let live = state == 1;
                let count = count.minus(T::of((!rule.middle & live) as u32));
                let born = (birth.0 <= count) & (count <= birth.1);
                let lives = live & (survive.0 <= count) & (count <= survive.1);
                let decayed = if state < oldest { state + 1 } else { 0 };
                let other = if state == 0 { born as u8 } else { decayed };
                *cell = if lives { 1 } else { other };
            }
            if k + 1 < rows {
                add_columns(&grid, y + r as isize + 1, r, &mut columns, true);
                add_columns(&grid, y - r as isize, r, &mut columns, false);
            }
        }
    }
}

/// The integer a band counts in: `u8` where the neighbourhood has fewer than 2^8 cells (up to
/// range 7), `u16` below 2^16 cells, else `u32` (the narrower, the more cells a vector
/// instruction takes); sums wrap, and every count read is exact.
trait Count: Copy + Ord + Send + Sync {
    const ZERO: Self;
    /// `value`, or the largest `Self` where it does not fit (a bound past every count).
    fn of(value: u32) -> Self;
    fn plus(self, other: Self) -> Self;
    fn minus(self, other: Self) -> Self;
}

macro_rules! count {
    ($t:ty) => {
        impl Count for $t {
            const ZERO: Self = 0;
            #[inline(always)]
            fn of(value: u32) -> Self {
                value.min(<$t>::MAX as u32) as $t
            }
            #[inline(always)]
            fn plus(self, other: Self) -> Self {
                self.wrapping_add(other)
            }
            #[inline(always)]
            fn minus(self, other: Self) -> Self {
                self.wrapping_sub(other)
            }
        }
    };
}
count!(u8);
count!(u16);
count!(u32);

/// Adds (`add`) or takes away the live cells of row `y` from the column sums `columns` (column
/// i for the grid's column i − r: wrapped, or empty past the edges).
#[inline(always)]
fn add_columns<T: Count>(grid: &Source, y: isize, r: usize, columns: &mut [T], add: bool) {
    let Some(row) = grid.row(y) else { return };
    let w = grid.width;
    let live = |cell: u8| T::of((cell == 1) as u32);
    // An addition or a subtraction, not a multiplication by ±1: bytes have no vector
    // multiply.
    let step = |sum: &mut T, cell: u8| {
        *sum = if add {
            sum.plus(live(cell))
        } else {
            sum.minus(live(cell))
        }
    };
    for (sum, &cell) in columns[r..][..w].iter_mut().zip(row) {
        step(sum, cell);
    }
    if grid.wraps() {
        for i in (0..r).chain(r + w..w + 2 * r) {
            let x = (i as isize - r as isize).rem_euclid(w as isize) as usize;
            step(&mut columns[i], row[x]);
        }
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn a_world_kept_in_bits_counts_its_bits_for_memory() {
        // Two bit arrays (ghost words included) where the rule is kept in bits, two byte
        // arrays otherwise: an eighth, give or take the ghost words.
        let bits = Rule::parse("R5,C0,M1,S34..58,B34..45,NM").unwrap();
        let bytes = Rule::parse("R5,C3,M1,S34..58,B34..45,NM").unwrap();
        assert!(States::keeps_in_bits(bits) && !States::keeps_in_bits(bytes));
        let (w, h) = (65536, 65536);
        assert_eq!(States::buffer_bytes(bytes, w, h), 2 * 65536 * 65536);
        assert_eq!(States::buffer_bytes(bits, w, h), 16 * (1024 + 2) * 65536);
        let run = |rule| EngineId::CpuStates.run_bytes((w, h, None), rule);
        assert!(run(bits) * 3 < run(bytes));
    }
}
