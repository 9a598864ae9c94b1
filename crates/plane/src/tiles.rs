//! Tiles: the infinite plane as dense squares of 64 × 64 cells that exist only where there are
//! cells or their neighbours, stepped one generation at a time on every core. The engine for
//! chaotic patterns (soups, methuselahs), where HashLife finds little to reuse.
//!
//! # Layout
//!
//! Tile (tx, ty) holds Golly's cells x in 64·tx .. 64·tx + 63 and y in 64·ty .. 64·ty + 63 as 64
//! words, one a row from the top, cell x at bit x − 64·tx of its row (bit 0 the leftmost). A
//! tile keeps its state now and one generation back.
//!
//! # A generation
//!
//! Each tile's next state is the rule's [`Circuit`] run over its rows, 64 words at a time, with
//! the rows and edge bits of its eight neighbours (an absent neighbour is dead). Tiles whose
//! neighbourhood did not change sleep, as QuickLife's do: where neither a tile nor any of its
//! neighbours changed in the last generation, its next state is its state now; where none of
//! them differs from two generations back (still lifes and period-2 oscillators), its next
//! state is its state one generation back, taken without computing. Before a generation, a
//! tile that changed and has live cells on an edge gets the neighbour across that edge if it is
//! missing; after it, a tile that has been empty for three generations is dropped. So a missing
//! tile is always dead and has been for the last two generations, which is what lets its
//! neighbours sleep.
//!
//! Two-state rules only (B/S, isotropic non-totalistic, hexagonal, von Neumann: every rule a
//! [`Circuit`] runs); Generations rules run on HashLife. Cells must stay within ±2^62 of the
//! origin.

use std::collections::HashMap;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};

use gol_core::pattern::{PatternFile, Sink};
use gol_core::rule::circuit::{Circuit, Gate, Signal, FIRST_GATE, ONE};
use gol_core::{EngineId, Error, Grid, Result, Rule};
use num_bigint::{BigInt, BigUint};
use num_traits::{ToPrimitive, Zero};
use rayon::prelude::*;

use crate::files::{self, Builder};
use crate::leaf::{Bits, Leaf};
use crate::store::Store;
use crate::tree::{block_corner, Rect, Tree};
use crate::{Plane, Stepped, Written};

/// Cells a tile each way.
pub const SIDE: i64 = 64;

/// The largest population tiles are made from (a pattern of more cells is HashLife's: tiles
/// would take minutes just to be made).
pub const MOST_CELLS: u64 = 50_000_000;

/// A tile's cells: one word a row.
type Cells = [u64; SIDE as usize];

const EMPTY: Cells = [0; SIDE as usize];

/// How far from the origin tiles may lie, in tiles: cells within ±2^62.
const REACH: i64 = 1 << 56;

/// Bytes a tile takes, with its bookkeeping (for the memory cap).
const TILE_BYTES: u64 = 2 * 8 * SIDE as u64 + 96;

/// The neighbours' offsets, in the order of [`Tile::around`].
const AROUND: [(i64, i64); 8] = [
    (-1, -1),
    (0, -1),
    (1, -1),
    (-1, 0),
    (1, 0),
    (-1, 1),
    (0, 1),
    (1, 1),
];

/// No tile.
const NONE: u32 = u32::MAX;

/// One tile.
struct Tile {
    at: (i64, i64),
    now: Box<Cells>,
    /// The state one generation back.
    before: Box<Cells>,
    /// Whether the state now differs from one generation back, and from two back.
    changed: bool,
    changed_two: bool,
    /// Set by the pattern before its first generation: the state one back is not known.
    fresh: bool,
    /// The neighbours, in [`AROUND`]'s order ([`NONE`] where missing).
    around: [u32; 8],
}

/// What a tile does this generation.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Its next state is its state now.
    Sleep,
    /// Its next state is its state one generation back.
    Swap,
    /// Computed.
    Compute,
}

/// The rule as operations over slots of 64 words: a circuit laid out so that a slot is reused
/// once the last gate that reads it has run.
struct Program {
    ops: Vec<(Gate, usize)>,
    /// The slot of each signal that feeds a gate (cells 0..9, then the gates').
    slot_of: Vec<usize>,
    slots: usize,
    output: Signal,
}

impl Program {
    fn new(circuit: &Circuit) -> Program {
        let last = circuit.last_uses();
        let mut slot_of = vec![usize::MAX; last.len()];
        // Cells in slots 0..9; constants in 9 and 10.
        for (signal, slot) in slot_of.iter_mut().take(FIRST_GATE as usize).enumerate() {
            *slot = signal;
        }
        let mut slots = FIRST_GATE as usize;
        let mut free = Vec::new();
        let mut ops = Vec::with_capacity(circuit.gates().len());
        for (i, gate) in circuit.gates().iter().enumerate() {
            // The inputs whose last reader this is free their slots after it runs.
            let out = free.pop().unwrap_or_else(|| {
                slots += 1;
                slots - 1
            });
            ops.push((*gate, out));
            slot_of[FIRST_GATE as usize + i] = out;
            for input in gate.inputs() {
                if input >= FIRST_GATE
                    && last[input as usize] == i
                    && !free.contains(&slot_of[input as usize])
                {
                    free.push(slot_of[input as usize]);
                }
            }
        }
        Program {
            ops,
            slot_of,
            slots,
            output: circuit.output(),
        }
    }

    /// Runs the gates over `slots` (at least [`Program::slots`] of them, the constants
    /// filled in), the cells read from `rows` (the neighbourhood's rows shifted west, not and
    /// east, each with the rows above and below the tile: cell `3r + c` of a row is
    /// `rows[c][r..r + 64]`). Returns the next state.
    #[inline(always)]
    fn run(&self, rows: &[Padded; 3], slots: &mut [Cells]) -> Cells {
        assert!(slots.len() >= self.slots);
        let base = slots.as_mut_ptr();
        let at = |signal: Signal| -> &Cells {
            let signal = signal as usize;
            if signal < 9 {
                let (r, c) = (signal / 3, signal % 3);
                let row: &[u64; SIDE as usize] =
                    rows[c][r..r + SIDE as usize].try_into().expect("64 rows");
                row
            } else {
                // SAFETY: slot indices are below `self.slots` <= `slots.len()` (asserted).
                unsafe { &*base.add(self.slot_of[signal]) }
            }
        };
        for &(gate, out) in &self.ops {
            // SAFETY: `out` is below `self.slots` <= `slots.len()` and is never a slot the gate
            // reads (Program::new frees an input's slot only after the output slot of its
            // last reader is chosen), so this one mutable reference aliases nothing read.
            let o = unsafe { &mut *base.add(out) };
            match gate {
                Gate::And(a, b) => each(o, at(a), at(b), |a, b| a & b),
                Gate::Or(a, b) => each(o, at(a), at(b), |a, b| a | b),
                Gate::Xor(a, b) => each(o, at(a), at(b), |a, b| a ^ b),
                Gate::AndNot(a, b) => each(o, at(a), at(b), |a, b| a & !b),
                Gate::Not(a) => each(o, at(a), at(a), |a, _| !a),
                Gate::Xor3(a, b, c) => each3(o, at(a), at(b), at(c), |a, b, c| a ^ b ^ c),
                Gate::Majority(a, b, c) => {
                    each3(o, at(a), at(b), at(c), |a, b, c| (a & b) | (c & (a | b)))
                }
                Gate::Mux(c, one, zero) => each3(o, at(c), at(one), at(zero), |c, one, zero| {
                    (c & one) | (!c & zero)
                }),
            }
        }
        *at(self.output)
    }
}

/// A column of a tile's rows with the row above and the row below: 66 words.
type Padded = [u64; SIDE as usize + 2];

/// `out[i] = f(a[i], b[i])` for every word.
#[inline(always)]
fn each(out: &mut Cells, a: &Cells, b: &Cells, f: impl Fn(u64, u64) -> u64) {
    for ((o, &a), &b) in out.iter_mut().zip(a).zip(b) {
        *o = f(a, b);
    }
}

/// `out[i] = f(a[i], b[i], c[i])` for every word.
#[inline(always)]
fn each3(out: &mut Cells, a: &Cells, b: &Cells, c: &Cells, f: impl Fn(u64, u64, u64) -> u64) {
    for (((o, &a), &b), &c) in out.iter_mut().zip(a).zip(b).zip(c) {
        *o = f(a, b, c);
    }
}

/// The vector instructions the tiles are stepped with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Vectors {
    Portable,
    #[cfg(target_arch = "x86_64")]
    Avx2,
    #[cfg(target_arch = "x86_64")]
    Avx512,
}

impl Vectors {
    fn detect() -> Vectors {
        #[cfg(target_arch = "x86_64")]
        {
            if std::is_x86_feature_detected!("avx512f") {
                return Vectors::Avx512;
            }
            if std::is_x86_feature_detected!("avx2") {
                return Vectors::Avx2;
            }
        }
        Vectors::Portable
    }

    fn name(self) -> &'static str {
        match self {
            Vectors::Portable => "portable",
            #[cfg(target_arch = "x86_64")]
            Vectors::Avx2 => "avx2",
            #[cfg(target_arch = "x86_64")]
            Vectors::Avx512 => "avx512",
        }
    }
}

/// The plane as tiles.
pub struct Tiles {
    tiles: Vec<Tile>,
    /// Tile coordinates to indices.
    index: HashMap<(i64, i64), u32>,
    /// Indices of dropped tiles, to reuse.
    free: Vec<u32>,
    rule: Rule,
    program: Program,
    pool: rayon::ThreadPool,
    threads: usize,
    memory: u64,
    isa: Vectors,
    /// Tile steps computed, taken from one back, and slept, since the start.
    work: [u64; 3],
}

impl Tiles {
    /// Tiles of the cells of `tree` under `rule` (two-state), on `threads` threads, within
    /// `memory` bytes.
    pub fn new(tree: &Tree<Bits>, rule: Rule, threads: usize, memory: u64) -> Result<Tiles> {
        let mut tiles = Tiles::empty(rule, threads, memory)?;
        if tree.population() > BigUint::from(MOST_CELLS) {
            return Err(Error::Memory(format!(
                "{} cells are more than tiles are made from ({MOST_CELLS}); run it with hashlife",
                tree.population()
            )));
        }
        let Some(bounds) = tree.bounding_box() else {
            return Ok(tiles);
        };
        let (Some((x, y)), Some((w, h))) = (bounds.corner(), bounds.size()) else {
            return Err(far());
        };
        let within = |v: i64, len: u64| {
            v.checked_add(len as i64)
                .is_some_and(|end| v > -(REACH * SIDE) && end < REACH * SIDE)
        };
        if !within(x, w) || !within(y, h) {
            return Err(far());
        }
        let mut painter = Painter::new(&mut tiles, (x, y));
        tree.runs(&bounds.x, &bounds.y, w, h, &mut |dy, runs| {
            for run in runs {
                painter.run(run.x as usize, dy as usize, run.len as usize, 1);
            }
        });
        painter.finish()?;
        Ok(tiles)
    }

    /// Tiles of `grid`'s cells (two states), its top-left cell at Golly's (x, y).
    pub fn from_grid(
        grid: &Grid,
        (x, y): (i64, i64),
        rule: Rule,
        threads: usize,
        memory: u64,
    ) -> Result<Tiles> {
        let mut tiles = Tiles::empty(rule, threads, memory)?;
        let mut painter = Painter::new(&mut tiles, (x, y));
        for row in 0..grid.height() {
            painter.row(row, grid.row(row));
        }
        painter.finish()?;
        tiles.check_population()?;
        Ok(tiles)
    }

    /// Tiles of the cells of `file`, placed as Golly places them (see [`files::read`]), read
    /// straight into tiles; `None` for what only a tree reads (a macrocell file, or a position
    /// far from the origin).
    pub fn from_file(
        file: &PatternFile,
        rule: Rule,
        threads: usize,
        memory: u64,
    ) -> Result<Option<Tiles>> {
        if file.macrocell_nodes().is_some() {
            return Ok(None);
        }
        let (x, y) = file.header().position.clone().unwrap_or_default();
        let near = |v: &BigInt| v.to_i64().filter(|v| v.unsigned_abs() < 1 << 60);
        let (Some(x), Some(y)) = (near(&x), near(&y)) else {
            return Ok(None);
        };
        let mut tiles = Tiles::empty(rule, threads, memory)?;
        let mut painter = Painter::new(&mut tiles, (x, y));
        file.paint_into(&mut painter)?;
        painter.finish()?;
        tiles.check_population()?;
        Ok(Some(tiles))
    }

    fn check_population(&self) -> Result<()> {
        if self.population() > BigUint::from(MOST_CELLS) {
            return Err(Error::Memory(format!(
                "{} cells are more than tiles are made from ({MOST_CELLS}); run it with hashlife",
                self.population()
            )));
        }
        Ok(())
    }

    /// No tiles yet.
    fn empty(rule: Rule, threads: usize, memory: u64) -> Result<Tiles> {
        debug_assert!(!rule.is_generations(), "gol_plane::new refuses them");
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads.max(1))
            .thread_name(|i| format!("tiles-{i}"))
            .build()
            .map_err(|e| Error::Engine(format!("tiles: cannot start their threads: {e}")))?;
        Ok(Tiles {
            tiles: Vec::new(),
            index: HashMap::new(),
            free: Vec::new(),
            rule,
            program: Program::new(&Circuit::new(&rule)),
            pool,
            threads: threads.max(1),
            memory,
            isa: Vectors::detect(),
            work: [0; 3],
        })
    }

    /// Adds live cells to row y of the tiles, from `word`'s bit 0 at column x on (while
    /// building; the tiles touched count as changed, with no known past).
    fn paint(&mut self, x: i64, y: i64, word: u64) -> Result<()> {
        let (tx, ty, bit) = (x.div_euclid(SIDE), y.div_euclid(SIDE), x.rem_euclid(SIDE));
        let row = y.rem_euclid(SIDE) as usize;
        let parts = [
            (tx, word << bit),
            (tx + 1, if bit == 0 { 0 } else { word >> (SIDE - bit) }),
        ];
        for (tx, bits) in parts {
            if bits != 0 {
                let i = self.tile((tx, ty))?;
                let tile = &mut self.tiles[i as usize];
                tile.now[row] |= bits;
                tile.changed = true;
                tile.changed_two = true;
                tile.fresh = true;
            }
        }
        Ok(())
    }

    /// The tile at `at`, made empty if missing.
    fn tile(&mut self, at: (i64, i64)) -> Result<u32> {
        if let Some(&i) = self.index.get(&at) {
            return Ok(i);
        }
        if at.0.abs() >= REACH || at.1.abs() >= REACH {
            return Err(far());
        }
        let tiles = self.index.len() as u64 + 1;
        if tiles * TILE_BYTES > self.memory {
            return Err(Error::Memory(format!(
                "{tiles} tiles of 64x64 cells are more than the memory cap of {} holds",
                gol_core::memory::human_bytes(self.memory)
            )));
        }
        let mut around = [NONE; 8];
        for (k, (dx, dy)) in AROUND.iter().enumerate() {
            around[k] = self
                .index
                .get(&(at.0 + dx, at.1 + dy))
                .copied()
                .unwrap_or(NONE);
        }
        let tile = Tile {
            at,
            now: Box::new(EMPTY),
            before: Box::new(EMPTY),
            changed: false,
            changed_two: false,
            fresh: false,
            around,
        };
        let i = match self.free.pop() {
            Some(i) => {
                self.tiles[i as usize] = tile;
                i
            }
            None => {
                self.tiles.push(tile);
                self.tiles.len() as u32 - 1
            }
        };
        self.index.insert(at, i);
        for (k, &n) in around.iter().enumerate() {
            if n != NONE {
                self.tiles[n as usize].around[7 - k] = i;
            }
        }
        Ok(i)
    }

    /// Drops tile `i`.
    fn drop_tile(&mut self, i: u32) {
        let tile = &self.tiles[i as usize];
        self.index.remove(&tile.at);
        let around = tile.around;
        for (k, &n) in around.iter().enumerate() {
            if n != NONE {
                self.tiles[n as usize].around[7 - k] = NONE;
            }
        }
        self.tiles[i as usize].around = [NONE; 8];
        self.free.push(i);
    }

    /// The missing neighbours of `t` across edges that have live cells.
    fn wanted(t: &Tile, wanted: &mut Vec<(i64, i64)>) {
        let last = SIDE as usize - 1;
        let (top, bottom) = (t.now[0], t.now[last]);
        let (left, right) = t
            .now
            .iter()
            .fold((0, 0), |(l, r), w| (l | (w & 1), r | (w >> 63)));
        // In AROUND's order: the corners' cells, the edges' rows and columns.
        let edges = [
            top & 1,
            top,
            top >> 63,
            left,
            right,
            bottom & 1,
            bottom,
            bottom >> 63,
        ];
        for (k, &edge) in edges.iter().enumerate() {
            if edge != 0 && t.around[k] == NONE {
                wanted.push((t.at.0 + AROUND[k].0, t.at.1 + AROUND[k].1));
            }
        }
    }

    /// What each tile does this generation.
    fn mode(&self, t: &Tile) -> Mode {
        let (mut changed, mut changed_two) = (t.changed, t.changed_two);
        for &n in &t.around {
            if n != NONE {
                let n = &self.tiles[n as usize];
                changed |= n.changed;
                changed_two |= n.changed_two;
            }
        }
        match (changed, changed_two) {
            (false, _) => Mode::Sleep,
            (true, false) => Mode::Swap,
            (true, true) => Mode::Compute,
        }
    }

    /// Tile `t`'s next state, with the widest vector instructions the CPU has (the word loops
    /// are the same; the compiler vectorises them for each).
    fn next(&self, t: &Tile, slots: &mut Vec<Cells>) -> Cells {
        #[cfg(target_arch = "x86_64")]
        {
            if self.isa == Vectors::Avx512 {
                // SAFETY: the CPU has AVX-512F (checked when the tiles were made).
                return unsafe { self.next_avx512(t, slots) };
            }
            if self.isa == Vectors::Avx2 {
                // SAFETY: the CPU has AVX2 (checked when the tiles were made).
                return unsafe { self.next_avx2(t, slots) };
            }
        }
        self.next_in(t, slots)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn next_avx2(&self, t: &Tile, slots: &mut Vec<Cells>) -> Cells {
        self.next_in(t, slots)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f")]
    unsafe fn next_avx512(&self, t: &Tile, slots: &mut Vec<Cells>) -> Cells {
        self.next_in(t, slots)
    }

    /// [`Tiles::next`], inlined into each of its instruction sets.
    #[inline(always)]
    fn next_in(&self, t: &Tile, slots: &mut Vec<Cells>) -> Cells {
        let cells = |n: u32| -> &Cells {
            match n {
                NONE => &EMPTY,
                n => &self.tiles[n as usize].now,
            }
        };
        let a: [&Cells; 8] = std::array::from_fn(|k| cells(t.around[k]));
        let (nw, n, ne, w, e, sw, s, se) = (a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]);
        if slots.len() < self.program.slots {
            slots.resize(self.program.slots, EMPTY);
            slots[ONE as usize] = [u64::MAX; SIDE as usize];
        }
        let last = SIDE as usize - 1;
        // The tile's rows and those of the tiles beside it, each with a row above and below.
        let padded = |above: &Cells, rows: &Cells, below: &Cells| -> Padded {
            let mut p = [0; SIDE as usize + 2];
            p[0] = above[last];
            p[1..=SIDE as usize].copy_from_slice(rows);
            p[SIDE as usize + 1] = below[0];
            p
        };
        let (west, mid, east) = (padded(nw, w, sw), padded(n, &t.now, s), padded(ne, e, se));
        // Each cell's neighbour to the west (column x − 1) and to the east, at its own bit.
        let mut shifted = [mid; 3];
        for (i, (to_west, to_east)) in west.iter().zip(&east).enumerate() {
            shifted[0][i] = (mid[i] << 1) | (to_west >> 63);
            shifted[2][i] = (mid[i] >> 1) | (to_east << 63);
        }
        self.program.run(&shifted, slots)
    }

    /// Advances one generation.
    fn generation(&mut self) -> Result<()> {
        let mut modes: Vec<(u32, Mode)> = self
            .index
            .values()
            .map(|&i| (i, self.mode(&self.tiles[i as usize])))
            .collect();
        // A tile that wakes may give birth across an edge where there is no tile yet: it is
        // made (a missing tile stays dead only while its neighbours' inputs to it stay as
        // they were; those neighbours all wake when one of them changes).
        let mut wanted = Vec::new();
        for &(i, mode) in &modes {
            if mode != Mode::Sleep {
                Self::wanted(&self.tiles[i as usize], &mut wanted);
            }
        }
        let mut made = Vec::new();
        for at in wanted {
            if !self.index.contains_key(&at) {
                made.push(self.tile(at)?);
            }
        }
        for i in made {
            modes.push((i, self.mode(&self.tiles[i as usize])));
        }
        let computed: Vec<(u32, Cells)> = {
            let this = &*self;
            let step = |&(i, _): &(u32, Mode)| {
                thread_local! {
                    static SLOTS: std::cell::RefCell<Vec<Cells>> = const { std::cell::RefCell::new(Vec::new()) };
                }
                SLOTS.with(|slots| {
                    (
                        i,
                        this.next(&this.tiles[i as usize], &mut slots.borrow_mut()),
                    )
                })
            };
            let work: Vec<&(u32, Mode)> =
                modes.iter().filter(|(_, m)| *m == Mode::Compute).collect();
            if work.len() >= 8 && self.threads > 1 {
                self.pool
                    .install(|| work.par_iter().map(|m| step(m)).collect())
            } else {
                work.iter().map(|m| step(m)).collect()
            }
        };
        let mut slept = 0;
        let mut dropped = Vec::new();
        for &(i, mode) in &modes {
            let t = &mut self.tiles[i as usize];
            match mode {
                Mode::Sleep => {
                    slept += 1;
                    // Empty now, one back (unchanged) and two back: dropped.
                    if *t.now == EMPTY && !t.changed_two {
                        dropped.push(i);
                    }
                    t.changed = false;
                    t.changed_two = false;
                }
                Mode::Swap => {
                    std::mem::swap(&mut t.now, &mut t.before);
                    t.changed = true;
                    t.changed_two = false;
                }
                Mode::Compute => {}
            }
        }
        self.work[1] += modes.iter().filter(|(_, m)| *m == Mode::Swap).count() as u64;
        self.work[2] += slept;
        self.work[0] += computed.len() as u64;
        for (i, next) in computed {
            let t = &mut self.tiles[i as usize];
            let changed = next != *t.now;
            let changed_two = t.fresh || next != *t.before;
            t.fresh = false;
            std::mem::swap(&mut t.before, &mut t.now);
            *t.now = next;
            t.changed = changed;
            t.changed_two = changed_two;
            if !changed && !changed_two && next == EMPTY {
                dropped.push(i);
            }
        }
        for i in dropped {
            self.drop_tile(i);
        }
        Ok(())
    }

    /// The tiles that hold live cells, with their cells.
    fn occupied(&self) -> impl Iterator<Item = &Tile> {
        self.index
            .values()
            .map(|&i| &self.tiles[i as usize])
            .filter(|t| *t.now != EMPTY)
    }

    /// The cells as a tree in a store of `memory` bytes (for files).
    fn tree(&self) -> Result<Tree<Bits>> {
        let mut builder = Builder::<Bits>::new((0, 0), 2);
        for t in self.occupied() {
            for (r, &word) in t.now.iter().enumerate() {
                let mut bits = word;
                while bits != 0 {
                    let b = bits.trailing_zeros() as i64;
                    builder.set(t.at.0 * SIDE + b, t.at.1 * SIDE + r as i64, 1);
                    bits &= bits - 1;
                }
            }
        }
        let store = Store::new(self.memory.max(Store::LEAST), Bits::LEVEL)?;
        builder.build(store, Bits::new(&self.rule))
    }

    /// Tile steps computed, taken from one generation back, and slept.
    pub fn work(&self) -> [u64; 3] {
        self.work
    }
}

/// Cells drawn into tiles from a reader or a tree, relative to an origin in Golly's coordinates.
struct Painter<'a> {
    tiles: &'a mut Tiles,
    origin: (i64, i64),
    failed: Option<Error>,
}

impl<'a> Painter<'a> {
    fn new(tiles: &'a mut Tiles, origin: (i64, i64)) -> Painter<'a> {
        Painter {
            tiles,
            origin,
            failed: None,
        }
    }

    fn word(&mut self, x: usize, y: usize, word: u64) {
        if word == 0 || self.failed.is_some() {
            return;
        }
        let place = |o: i64, d: usize| i64::try_from(d).ok().and_then(|d| o.checked_add(d));
        let result = match (place(self.origin.0, x), place(self.origin.1, y)) {
            (Some(x), Some(y)) => self.tiles.paint(x, y, word),
            _ => Err(far()),
        };
        if let Err(e) = result {
            self.failed = Some(e);
        }
    }

    /// The first failure, if any.
    fn finish(self) -> Result<()> {
        self.failed.map_or(Ok(()), Err)
    }
}

impl Sink for Painter<'_> {
    fn states(&self) -> u32 {
        2
    }

    fn row(&mut self, y: usize, words: &[u64]) {
        for (k, &word) in words.iter().enumerate() {
            self.word(64 * k, y, word);
        }
    }

    fn run(&mut self, x: usize, y: usize, len: usize, state: u32) {
        if state != 1 {
            self.failed.get_or_insert(Error::Invalid(format!(
                "cell state {state} needs a Generations rule; tiles run two-state rules"
            )));
            return;
        }
        // Up to 64 cells a word.
        let mut at = 0;
        while at < len {
            let n = (len - at).min(64);
            let word = if n == 64 { u64::MAX } else { (1 << n) - 1 };
            self.word(x + at, y, word);
            at += n;
        }
    }
}

fn far() -> Error {
    Error::Invalid(
        "tiles hold cells within ±2^62 of the origin; this pattern lies further out: run it with hashlife".into(),
    )
}

impl Plane for Tiles {
    fn engine(&self) -> EngineId {
        EngineId::Tiles
    }

    fn rule(&self) -> Rule {
        self.rule
    }

    fn step(&mut self, generations: &BigUint, stop: &AtomicBool) -> Result<(BigUint, Stepped)> {
        let mut taken = BigUint::zero();
        while &taken < generations {
            if stop.load(Ordering::Relaxed) {
                return Ok((taken, Stepped::Stopped));
            }
            self.generation()?;
            taken += 1u32;
        }
        Ok((taken, Stepped::Done))
    }

    fn population(&self) -> BigUint {
        let n: u64 = self
            .occupied()
            .map(|t| t.now.iter().map(|w| w.count_ones() as u64).sum::<u64>())
            .sum();
        BigUint::from(n)
    }

    fn live(&self) -> BigUint {
        self.population()
    }

    fn bounding_box(&self) -> Option<Rect> {
        let mut b: Option<(i64, i64, i64, i64)> = None;
        for t in self.occupied() {
            let (x0, y0) = (t.at.0 * SIDE, t.at.1 * SIDE);
            let top = t.now.iter().position(|&w| w != 0).unwrap() as i64;
            let bottom = t.now.iter().rposition(|&w| w != 0).unwrap() as i64;
            let all = t.now.iter().fold(0, |a, w| a | w);
            let (left, right) = (all.trailing_zeros() as i64, 63 - all.leading_zeros() as i64);
            let r = (x0 + left, y0 + top, x0 + right, y0 + bottom);
            b = Some(match b {
                None => r,
                Some(o) => (o.0.min(r.0), o.1.min(r.1), o.2.max(r.2), o.3.max(r.3)),
            });
        }
        b.map(|(x0, y0, x1, y1)| Rect {
            x: x0.into(),
            y: y0.into(),
            width: BigUint::from((x1 - x0 + 1) as u64),
            height: BigUint::from((y1 - y0 + 1) as u64),
        })
    }

    fn cells(&self, x: &BigInt, y: &BigInt, width: usize, height: usize) -> Vec<u8> {
        let mut out = vec![0u8; width * height];
        let (Some(x), Some(y)) = (x.to_i64(), y.to_i64()) else {
            return out;
        };
        for t in self.occupied() {
            let (x0, y0) = (t.at.0 * SIDE, t.at.1 * SIDE);
            for (r, &word) in t.now.iter().enumerate() {
                let cy = y0 + r as i64 - y;
                if word == 0 || cy < 0 || cy >= height as i64 {
                    continue;
                }
                let mut bits = word;
                while bits != 0 {
                    let b = bits.trailing_zeros() as i64;
                    let cx = x0 + b - x;
                    if cx >= 0 && cx < width as i64 {
                        out[cy as usize * width + cx as usize] = 1;
                    }
                    bits &= bits - 1;
                }
            }
        }
        out
    }

    fn block_populations(
        &self,
        x: &BigInt,
        y: &BigInt,
        columns: usize,
        rows: usize,
        level: u32,
    ) -> Vec<u64> {
        let mut out = vec![0u64; columns * rows];
        let (bx, by) = block_corner(x, y, level);
        let (Some(bx), Some(by)) = (bx.to_i128(), by.to_i128()) else {
            return out;
        };
        let level = level.min(126);
        let mut add = |cx: i128, cy: i128, n: u64| {
            let (i, j) = ((cx - bx) >> level, (cy - by) >> level);
            if (0..columns as i128).contains(&i) && (0..rows as i128).contains(&j) {
                out[j as usize * columns + i as usize] += n;
            }
        };
        for t in self.occupied() {
            let (x0, y0) = ((t.at.0 * SIDE) as i128, (t.at.1 * SIDE) as i128);
            for (r, &word) in t.now.iter().enumerate() {
                let cy = y0 + r as i128;
                if level >= 6 {
                    // The row's 64 cells lie in one block (blocks are aligned to 0 across).
                    if word != 0 {
                        add(x0, cy, word.count_ones() as u64);
                    }
                    continue;
                }
                let mut bits = word;
                while bits != 0 {
                    let b = bits.trailing_zeros() as i128;
                    add(x0 + b, cy, 1);
                    bits &= bits - 1;
                }
            }
        }
        out
    }

    fn write(
        &self,
        format: Written,
        generation: &BigUint,
        mut out: &mut dyn Write,
    ) -> io::Result<()> {
        let tree = self.tree().map_err(io::Error::other)?;
        let rule = self.rule.to_string();
        match format {
            Written::Rle => files::write_rle(&tree, &rule, generation, &mut out),
            Written::Macrocell => files::write_macrocell(&tree, &rule, generation, &mut out),
        }
    }

    fn details(&self) -> String {
        let [computed, swapped, slept] = self.work;
        format!(
            "{} threads ({}), {} tiles of 64x64 cells; tile steps: {computed} computed, {swapped} \
             taken from two generations back, {slept} asleep",
            self.threads,
            self.isa.name(),
            self.index.len()
        )
    }

    fn memory_bytes(&self) -> u64 {
        self.tiles.len() as u64 * TILE_BYTES
    }
}
