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
//! the rows and edge bits of its eight neighbours (an absent neighbour is dead). A tile keeps
//! its two last states, one for each parity of the generation, and flags of where (which edge,
//! which corner, anywhere) its state now differs from one and from two generations back. Tiles
//! whose neighbourhood did not change sleep, as QuickLife's do: where neither a tile nor the
//! cells of its neighbours next to it changed in the last generation, its next state is its
//! state now (both of its states already are); where none of them differs from two generations
//! back (blinkers beside blocks), its next state is the one of one generation back, already in
//! place at the coming parity. Either way nothing is done, and only the tiles whose own or
//! whose neighbours' flags changed are looked at in the next generation. A missing tile is
//! dead: it is made when a neighbour's cells next to it changed and some tile beside it has
//! live cells next to it, and dropped once empty for three generations.
//!
//! Two-state rules only (B/S, isotropic non-totalistic, hexagonal, von Neumann: every rule a
//! [`Circuit`] runs); Generations rules run on HashLife. Cells must stay within ±2^62 of the
//! origin.

use std::collections::HashMap;
use std::io::{self, Write};
use std::sync::atomic::AtomicBool;

use gol_core::pattern::{PatternFile, Sink};
use gol_core::rule::circuit::{Circuit, Gate, Signal, FIRST_GATE, ONE};
use gol_core::{EngineId, Error, Grid, Result, Rule};
use num_bigint::{BigInt, BigUint};
use num_traits::ToPrimitive;
use rayon::prelude::*;

use crate::files::{self, Builder};
use crate::leaf::{Bits, Leaf};
use crate::store::Store;
use crate::tree::{BlockCounts, Rect, Tree};
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

/// Where in a tile something is: bit k for the cells next to neighbour k of [`AROUND`] (a
/// corner cell, a row or a column), [`ANYWHERE`] for any cell at all.
type Edges = u16;

/// Any cell of the tile.
const ANYWHERE: Edges = 1 << 8;

/// Every bit of [`Edges`].
const EVERYWHERE: Edges = (1 << 9) - 1;

/// The edges of `cells` that hold a set bit.
fn edges(cells: &Cells) -> Edges {
    let all = cells.iter().fold(0, |a, w| a | w);
    if all == 0 {
        return 0;
    }
    let (top, bottom) = (cells[0], cells[SIDE as usize - 1]);
    let (left, right) = cells
        .iter()
        .fold((0, 0), |(l, r), w| (l | (w & 1), r | (w >> 63)));
    // In AROUND's order: the corners' cells, the edges' rows and columns.
    let parts = [
        top & 1,
        top,
        top >> 63,
        left,
        right,
        bottom & 1,
        bottom,
        bottom >> 63,
    ];
    parts
        .iter()
        .enumerate()
        .fold(ANYWHERE, |e, (k, &p)| e | (((p != 0) as Edges) << k))
}

/// Where `a` and `b` differ.
fn differences(a: &Cells, b: &Cells) -> Edges {
    edges(&std::array::from_fn(|i| a[i] ^ b[i]))
}

/// One tile.
struct Tile {
    at: (i64, i64),
    /// The state at the last generation of each parity: now at the plane's parity, one
    /// generation back at the other (see [`Tiles::parity`]).
    cells: [Box<Cells>; 2],
    /// Whether the tile is in use (not dropped).
    alive: bool,
    /// Whether the tile is in the list of those to look at next generation.
    queued: bool,
    /// Where the state now differs from one generation back, and from two back ([`Edges`]).
    changed: Edges,
    changed_two: Edges,
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
    /// Which of each tile's two states is the state now: the generation's parity.
    parity: usize,
    /// The tiles to look at next generation.
    active: Vec<u32>,
    /// Tile steps computed, and tiles there were, summed over the generations.
    work: [u64; 2],
}

impl Tiles {
    /// Tiles of the cells of `tree` under `rule` (two-state), on `threads` threads, within
    /// `memory` bytes.
    pub fn new(tree: &Tree<Bits>, rule: Rule, threads: usize, memory: u64) -> Result<Tiles> {
        let mut tiles = Tiles::empty(rule, threads, memory)?;
        if tree.population() > BigUint::from(MOST_CELLS) {
            return Err(too_many(&tree.population()));
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
            return Err(too_many(&self.population()));
        }
        Ok(())
    }

    /// No tiles yet.
    fn empty(rule: Rule, threads: usize, memory: u64) -> Result<Tiles> {
        debug_assert!(!crate::in_bytes(&rule), "gol_plane::new refuses them");
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
            parity: 0,
            active: Vec::new(),
            work: [0; 2],
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
                let parity = self.parity;
                let tile = &mut self.tiles[i as usize];
                tile.cells[parity][row] |= bits;
                tile.changed = EVERYWHERE;
                tile.changed_two = EVERYWHERE;
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
            cells: [Box::new(EMPTY), Box::new(EMPTY)],
            alive: true,
            queued: false,
            changed: 0,
            changed_two: 0,
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
        self.queue(i);
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
        let tile = &mut self.tiles[i as usize];
        tile.around = [NONE; 8];
        tile.alive = false;
        self.free.push(i);
    }

    /// The missing tiles that may see a birth this generation: those across an edge of a
    /// tile that changed there, with live cells next to them in some tile beside them. (A
    /// missing tile is dead, and stays so while the cells next to it stay as they were.)
    fn births(&self, candidates: &[u32]) -> Vec<(i64, i64)> {
        let mut wanted = Vec::new();
        for &i in candidates {
            let t = &self.tiles[i as usize];
            if t.changed == 0 {
                continue;
            }
            for (k, &n) in t.around.iter().enumerate() {
                if n != NONE || t.changed & (1 << k) == 0 {
                    continue;
                }
                let at = (t.at.0 + AROUND[k].0, t.at.1 + AROUND[k].1);
                // Live cells beside it: in a tile at direction j from it, on that tile's edge
                // facing it (direction 7 − j).
                let live = AROUND.iter().enumerate().any(|(j, (dx, dy))| {
                    self.index
                        .get(&(at.0 + dx, at.1 + dy))
                        .is_some_and(|&x| edges(self.now(x)) & (1 << (7 - j)) != 0)
                });
                if live {
                    wanted.push(at);
                }
            }
        }
        wanted
    }

    /// What each tile does this generation.
    fn mode(&self, t: &Tile) -> Mode {
        // The tile's cells, and its neighbours' cells next to it (neighbour k's edge facing it
        // is its edge 7 − k).
        let (mut changed, mut changed_two) =
            (t.changed & ANYWHERE != 0, t.changed_two & ANYWHERE != 0);
        for (k, &n) in t.around.iter().enumerate() {
            if n != NONE {
                let n = &self.tiles[n as usize];
                changed |= n.changed & (1 << (7 - k)) != 0;
                changed_two |= n.changed_two & (1 << (7 - k)) != 0;
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
                n => self.now(n),
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
        let (west, mid, east) = (
            padded(nw, w, sw),
            padded(n, &t.cells[self.parity], s),
            padded(ne, e, se),
        );
        // Each cell's neighbour to the west (column x − 1) and to the east, at its own bit.
        let mut shifted = [mid; 3];
        for (i, (to_west, to_east)) in west.iter().zip(&east).enumerate() {
            shifted[0][i] = (mid[i] << 1) | (to_west >> 63);
            shifted[2][i] = (mid[i] >> 1) | (to_east << 63);
        }
        self.program.run(&shifted, slots)
    }

    /// The state now of tile `i`.
    fn now(&self, i: u32) -> &Cells {
        &self.tiles[i as usize].cells[self.parity]
    }

    /// Puts tile `i` on the list of those to look at next generation.
    fn queue(&mut self, i: u32) {
        let tile = &mut self.tiles[i as usize];
        if tile.alive && !tile.queued {
            tile.queued = true;
            self.active.push(i);
        }
    }

    /// Advances one generation. Only the tiles on the list are looked at: the others sleep
    /// or repeat with period 2 with nothing to do (their two states are in place), and stay
    /// so until a neighbour's flags change.
    fn generation(&mut self) -> Result<()> {
        let mut candidates = std::mem::take(&mut self.active);
        candidates.retain(|&i| self.tiles[i as usize].alive);
        for &i in &candidates {
            self.tiles[i as usize].queued = false;
        }
        for at in self.births(&candidates) {
            if !self.index.contains_key(&at) {
                candidates.push(self.tile(at)?);
            }
        }
        let modes: Vec<(u32, Mode)> = candidates
            .iter()
            .map(|&i| (i, self.mode(&self.tiles[i as usize])))
            .collect();
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
        let (now, back) = (self.parity, self.parity ^ 1);
        // The tiles whose flags change: they and their neighbours are looked at next time.
        let mut touched = Vec::new();
        let mut dropped = Vec::new();
        for &(i, mode) in &modes {
            let t = &mut self.tiles[i as usize];
            match mode {
                // Both states are the state now: nothing moves.
                Mode::Sleep => {
                    // Empty now, one back (unchanged) and two back: dropped.
                    if *t.cells[now] == EMPTY && t.changed_two == 0 {
                        dropped.push(i);
                    }
                    if (t.changed, t.changed_two) != (0, 0) {
                        (t.changed, t.changed_two) = (0, 0);
                        touched.push(i);
                    }
                }
                // The state one back is the next: in place at the other parity. Where now and
                // one back differ stays as it was.
                Mode::Swap => {
                    if t.changed_two != 0 {
                        t.changed_two = 0;
                        touched.push(i);
                    }
                }
                Mode::Compute => {}
            }
        }
        self.work[0] += computed.len() as u64;
        self.work[1] += self.index.len() as u64;
        for (i, next) in computed {
            let t = &mut self.tiles[i as usize];
            let changed = differences(&next, &t.cells[now]);
            let changed_two = match t.fresh {
                true => EVERYWHERE,
                false => differences(&next, &t.cells[back]),
            };
            t.fresh = false;
            *t.cells[back] = next;
            t.changed = changed;
            t.changed_two = changed_two;
            if changed == 0 && changed_two == 0 && next == EMPTY {
                dropped.push(i);
            }
            touched.push(i);
        }
        self.parity = back;
        for i in dropped {
            self.drop_tile(i);
        }
        for i in touched {
            if self.tiles[i as usize].alive {
                self.queue(i);
                for n in self.tiles[i as usize].around {
                    if n != NONE {
                        self.queue(n);
                    }
                }
            }
        }
        Ok(())
    }

    /// The tiles that hold live cells, with their cells.
    fn occupied(&self) -> impl Iterator<Item = (&Tile, &Cells)> {
        self.index
            .values()
            .map(|&i| (&self.tiles[i as usize], self.now(i)))
            .filter(|(_, now)| **now != EMPTY)
    }

    /// The cells as a tree in a store of `memory` bytes (for files).
    fn tree(&self) -> Result<Tree<Bits>> {
        let mut builder = Builder::<Bits>::new((0, 0), 2);
        for (t, now) in self.occupied() {
            for (r, &word) in now.iter().enumerate() {
                let mut bits = word;
                while bits != 0 {
                    let b = bits.trailing_zeros() as i64;
                    builder.set(t.at.0 * SIDE + b, t.at.1 * SIDE + r as i64, 1);
                    bits &= bits - 1;
                }
            }
        }
        let store = Store::new(self.memory, Bits::LEVEL)?;
        builder.build(store, Bits::new(&self.rule))
    }

    /// Tile steps computed, and tiles there were, summed over the generations.
    pub fn work(&self) -> [u64; 2] {
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

fn too_many(population: &BigUint) -> Error {
    Error::Memory(format!(
        "{population} cells are more than tiles are made from ({MOST_CELLS}); run it with hashlife"
    ))
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
        // Cells move at most one a generation: more than this could leave the tiles' reach.
        crate::one_at_a_time(
            generations,
            stop,
            "more than tiles run (below 2^60, one at a time); run it with hashlife",
            || self.generation(),
        )
    }

    fn population(&self) -> BigUint {
        let n: u64 = self
            .occupied()
            .map(|(_, now)| now.iter().map(|w| w.count_ones() as u64).sum::<u64>())
            .sum();
        BigUint::from(n)
    }

    fn live(&self) -> BigUint {
        self.population()
    }

    fn bounding_box(&self) -> Option<Rect> {
        let mut b: Option<(i64, i64, i64, i64)> = None;
        for (t, now) in self.occupied() {
            let (x0, y0) = (t.at.0 * SIDE, t.at.1 * SIDE);
            let top = now.iter().position(|&w| w != 0).unwrap() as i64;
            let bottom = now.iter().rposition(|&w| w != 0).unwrap() as i64;
            let all = now.iter().fold(0, |a, w| a | w);
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
        for (t, now) in self.occupied() {
            let (x0, y0) = (t.at.0 * SIDE, t.at.1 * SIDE);
            for (r, &word) in now.iter().enumerate() {
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
        let mut counts = BlockCounts::new(x, y, columns, rows, level);
        for (t, now) in self.occupied() {
            let (x0, y0) = ((t.at.0 * SIDE) as i128, (t.at.1 * SIDE) as i128);
            for (r, &word) in now.iter().enumerate() {
                let cy = y0 + r as i128;
                if level >= 6 {
                    // The row's 64 cells lie in one block (blocks are aligned to 0 across).
                    if word != 0 {
                        counts.add(x0, cy, word.count_ones() as u64);
                    }
                    continue;
                }
                let mut bits = word;
                while bits != 0 {
                    let b = bits.trailing_zeros() as i128;
                    counts.add(x0 + b, cy, 1);
                    bits &= bits - 1;
                }
            }
        }
        counts.done()
    }

    fn write(&self, format: Written, generation: &BigUint, out: &mut dyn Write) -> io::Result<()> {
        let tree = self.tree().map_err(io::Error::other)?;
        files::write_as(&tree, format, &self.rule, generation, out)
    }

    fn details(&self) -> String {
        let [computed, all] = self.work;
        format!(
            "{} threads ({}), {} tiles of 64x64 cells; tile steps: {computed} computed of {all} \
             (the rest asleep or repeating with period 2)",
            self.threads,
            self.isa.name(),
            self.index.len()
        )
    }

    fn memory_bytes(&self) -> u64 {
        self.tiles.len() as u64 * TILE_BYTES
    }
}
