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
//! Each tile's next state is the rule's circuit run over its rows by a [`Stencil`]
//! (compiled to machine code where the CPU has AVX2), with the rows and edge bits of its eight
//! neighbours (an absent neighbour is dead). A tile keeps its two last states, one for each
//! parity of the generation, and masks of where its state now differs from one and from two
//! generations back (`Change`: which rows, and which rows' first and last cells). Rows whose
//! neighbourhood did not change sleep, as QuickLife's blocks do: where neither a row nor the
//! rows beside it, in the tile and in its neighbours next to it, changed in the last
//! generation, its next state is its state now (both of its states already are); where none
//! of them differs from two generations back (blinkers beside blocks), its next state is the
//! one of one generation back, already in place at the coming parity. Either way nothing is
//! done. Only the groups of eight rows that hold a row left are computed (a glider wakes
//! a group or two, not the tile), and only the tiles whose own or whose neighbours' masks
//! changed are looked at in the next generation. A missing tile is dead: it is made when a
//! neighbour's cells next to it changed and some tile beside it has live cells next to it,
//! and dropped once empty for three generations.
//!
//! Two-state rules only (B/S, isotropic non-totalistic, hexagonal, von Neumann: every rule a
//! circuit runs); Generations rules run on HashLife. Cells must stay within ±2^62 of the
//! origin.

use std::io::{self, Write};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use gol_core::cpu::Stencil;
use gol_core::pattern::{PatternFile, Sink};
use gol_core::{EngineId, Error, Grid, Result, Rule};
use num_bigint::{BigInt, BigUint};
use num_traits::ToPrimitive;
use rayon::prelude::*;
use rustc_hash::FxHashMap;

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

/// Groups of rows the last generation computed at least for the tiles of the next to be
/// shared among the threads: below, sharing them costs more than it saves (the threads' waking
/// up each generation). A 2048² soup at 50% on two threads (AMD EPYC, 2 cores) gains 1.5× in
/// its first 300 generations (8000–3000 groups a generation) and nothing once it computes about
/// a thousand a generation, with its tiles shared or not.
const PARALLEL_GROUPS: u32 = 2048;

/// Rows computed together: where a tile's next state is computed, it is computed for every
/// group of this many rows that holds a row to compute (a vector of eight words).
const GROUP: usize = 8;

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

/// Whether `cells` has a live cell next to neighbour `k` of [`AROUND`] (a corner cell, a
/// row or a column).
fn touches(cells: &Cells, k: usize) -> bool {
    let (top, bottom) = (cells[0], cells[SIDE as usize - 1]);
    match k {
        0 => top & 1 != 0,
        1 => top != 0,
        2 => top >> 63 != 0,
        3 => cells.iter().any(|w| w & 1 != 0),
        4 => cells.iter().any(|w| w >> 63 != 0),
        5 => bottom & 1 != 0,
        6 => bottom != 0,
        _ => bottom >> 63 != 0,
    }
}

/// Where two states of a tile differ, row by row: bit r of `rows` where row r differs, of
/// `west` and `east` where its first cell (x = 0) and its last (x = 63) do.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Change {
    rows: u64,
    west: u64,
    east: u64,
}

impl Change {
    /// Every cell (a state whose past is not known).
    const ALL: Change = Change {
        rows: u64::MAX,
        west: u64::MAX,
        east: u64::MAX,
    };

    /// Stores the rows of groups `groups` (bit k for rows `GROUP`·k on) of `next` into
    /// `back`, and says where in them `next` differs from `now` and from `back` as it was.
    fn settle(next: &Cells, now: &Cells, back: &mut Cells, groups: u32) -> [Change; 2] {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f") {
                // SAFETY: the CPU has AVX-512F (just checked).
                return unsafe { Change::settle_avx512(next, now, back, groups) };
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU has AVX2 (just checked).
                return unsafe { Change::settle_avx2(next, now, back, groups) };
            }
        }
        Change::settle_words(next, now, back, groups)
    }

    /// [`Change::settle`] a group (eight rows) at a time: `vptestmq` sets a mask bit for each
    /// word with a bit in common with the other operand.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f")]
    unsafe fn settle_avx512(
        next: &Cells,
        now: &Cells,
        back: &mut Cells,
        groups: u32,
    ) -> [Change; 2] {
        use std::arch::x86_64::*;
        const { assert!(GROUP == 8, "a group is one vector of eight words") };
        let mut c = [Change::default(); 2];
        let (first, last) = (_mm512_set1_epi64(1), _mm512_set1_epi64(i64::MIN));
        for rows in runs(groups) {
            for top in rows.step_by(GROUP) {
                // SAFETY: runs lie within the tile's 64 rows in whole groups of eight, so
                // words top..top + 8 of each are inside.
                let (n, a, b) = unsafe {
                    (
                        _mm512_loadu_si512(next.as_ptr().add(top).cast()),
                        _mm512_loadu_si512(now.as_ptr().add(top).cast()),
                        _mm512_loadu_si512(back.as_ptr().add(top).cast()),
                    )
                };
                // SAFETY: as above.
                unsafe { _mm512_storeu_si512(back.as_mut_ptr().add(top).cast(), n) };
                for (c, d) in c
                    .iter_mut()
                    .zip([_mm512_xor_si512(n, a), _mm512_xor_si512(n, b)])
                {
                    c.rows |= (_mm512_test_epi64_mask(d, d) as u64) << top;
                    c.west |= (_mm512_test_epi64_mask(d, first) as u64) << top;
                    c.east |= (_mm512_test_epi64_mask(d, last) as u64) << top;
                }
            }
        }
        c
    }

    /// [`Change::settle`] four rows at a time: a row's flag and its edge cells' are the sign
    /// bits of a vector's words, gathered by `movemask`.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn settle_avx2(next: &Cells, now: &Cells, back: &mut Cells, groups: u32) -> [Change; 2] {
        use std::arch::x86_64::*;
        let mut c = [Change::default(); 2];
        let signs = |v: __m256i| _mm256_movemask_pd(_mm256_castsi256_pd(v)) as u64;
        for rows in runs(groups) {
            for top in rows.step_by(4) {
                // SAFETY: runs lie within the tile's 64 rows in whole groups, and a group is
                // a multiple of four rows, so words top..top + 4 of each are inside.
                let (n, a, b) = unsafe {
                    (
                        _mm256_loadu_si256(next.as_ptr().add(top).cast()),
                        _mm256_loadu_si256(now.as_ptr().add(top).cast()),
                        _mm256_loadu_si256(back.as_ptr().add(top).cast()),
                    )
                };
                // SAFETY: as above.
                unsafe { _mm256_storeu_si256(back.as_mut_ptr().add(top).cast(), n) };
                for (c, d) in c
                    .iter_mut()
                    .zip([_mm256_xor_si256(n, a), _mm256_xor_si256(n, b)])
                {
                    let same = _mm256_cmpeq_epi64(d, _mm256_setzero_si256());
                    c.rows |= (!signs(same) & 15) << top;
                    c.west |= signs(_mm256_slli_epi64::<63>(d)) << top;
                    c.east |= signs(d) << top;
                }
            }
        }
        c
    }

    /// [`Change::settle`] a word at a time.
    fn settle_words(next: &Cells, now: &Cells, back: &mut Cells, groups: u32) -> [Change; 2] {
        let mut c = [Change::default(); 2];
        for rows in runs(groups) {
            for top in rows.step_by(GROUP) {
                // A group at a time, its shifts constant.
                for (c, old) in c.iter_mut().zip([now, &*back]) {
                    let (mut rows, mut west, mut east) = (0u64, 0u64, 0u64);
                    for j in 0..GROUP {
                        let d = next[top + j] ^ old[top + j];
                        rows |= ((d != 0) as u64) << j;
                        west |= (d & 1) << j;
                        east |= (d >> 63) << j;
                    }
                    c.rows |= rows << top;
                    c.west |= west << top;
                    c.east |= east << top;
                }
                back[top..top + GROUP].copy_from_slice(&next[top..top + GROUP]);
            }
        }
        c
    }

    /// The change outside the rows of groups `groups`, and `inside` in them.
    fn with(self, groups: u32, inside: Change) -> Change {
        let mask = rows_of(groups);
        Change {
            rows: self.rows & !mask | inside.rows,
            west: self.west & !mask | inside.west,
            east: self.east & !mask | inside.east,
        }
    }

    fn is_none(self) -> bool {
        self.rows == 0
    }

    /// Where the change reaches the tile's edges: bit k where it reaches the cells next to
    /// neighbour k of [`AROUND`] (a corner cell, a row or a column).
    fn edges(self) -> u8 {
        let last = SIDE as u32 - 1;
        // In AROUND's order: the corners' cells, the edges' rows and columns.
        let parts = [
            self.west & 1,
            self.rows & 1,
            self.east & 1,
            self.west,
            self.east,
            self.west >> last,
            self.rows >> last,
            self.east >> last,
        ];
        parts
            .iter()
            .enumerate()
            .fold(0, |e, (k, &p)| e | ((p != 0) as u8) << k)
    }
}

/// The groups of rows whose rows `rows` hold (bit k for rows `GROUP`·k on).
fn groups_of(rows: u64) -> u32 {
    (0..SIDE as usize / GROUP).fold(0, |g, k| {
        g | (((rows >> (k * GROUP)) as u8 != 0) as u32) << k
    })
}

/// The rows of groups `groups`, as a mask of rows.
fn rows_of(groups: u32) -> u64 {
    runs(groups).fold(0, |m, rows| {
        m | (u64::MAX >> (64 - rows.len())) << rows.start
    })
}

/// The rows of groups `groups`, run by run.
fn runs(mut groups: u32) -> impl Iterator<Item = std::ops::Range<usize>> {
    std::iter::from_fn(move || {
        if groups == 0 {
            return None;
        }
        let first = groups.trailing_zeros() as usize;
        let len = (groups >> first).trailing_ones() as usize;
        groups &= !(((1 << len) - 1) << first);
        Some(first * GROUP..(first + len) * GROUP)
    })
}

/// A tile looked at in a generation: what the generation's pass over the tiles (on every
/// thread) found for it, applied to the tile after the pass.
struct Step {
    tile: u32,
    /// The tile's state one generation back, taken out of it for the pass (no other tile
    /// reads it): in the groups computed, its next state.
    cells: Box<Cells>,
    /// The groups of rows computed; none where the tile has nothing to do.
    groups: u32,
    /// The rows whose neighbourhood changed in the last generation ([`Tiles::reach`]).
    near: u64,
    /// Where the next state differs from the state now and from one back (where computed).
    changed: Change,
    changed_two: Change,
}

/// Room a thread computes a tile's next state in.
struct Scratch {
    next: Cells,
    words: Vec<u64>,
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
    /// Where the state now differs from one generation back, and from two back.
    changed: Change,
    changed_two: Change,
    /// Set by the pattern before its first generation: the state one back is not known.
    fresh: bool,
    /// The neighbours, in [`AROUND`]'s order ([`NONE`] where missing).
    around: [u32; 8],
}

/// The neighbours of `around` that are missing: bit k for neighbour k.
fn missing(around: &[u32; 8]) -> u8 {
    (0..8).fold(0, |m, k| m | ((around[k] == NONE) as u8) << k)
}

/// The plane as tiles.
pub struct Tiles {
    tiles: Vec<Tile>,
    /// Tile coordinates to indices.
    index: FxHashMap<(i64, i64), u32>,
    /// Indices of dropped tiles, to reuse.
    free: Vec<u32>,
    rule: Rule,
    stencil: Stencil,
    /// The threads where there are more than one (shared, so that a step can run on them
    /// while it changes the tiles); one thread is the caller's own.
    pool: Option<Arc<rayon::ThreadPool>>,
    memory: u64,
    /// Which of each tile's two states is the state now: the generation's parity.
    parity: usize,
    /// The tiles to look at next generation.
    active: Vec<u32>,
    /// Groups of rows the last generation computed.
    groups: u32,
    /// Room for the tiles looked at in a generation, kept for the next.
    steps: Vec<Step>,
    /// Room for tiles' states, taken out and put back by each generation (boxed: a state
    /// moves between a tile and here as a pointer, its cells staying where they are).
    #[allow(clippy::vec_box)]
    spares: Vec<Box<Cells>>,
    /// Tile steps computed, and tiles there were, summed over the generations.
    work: [u64; 2],
}

impl Tiles {
    /// Tiles of the cells of `tree` under `rule` (two-state), on `threads` threads, within
    /// `memory` bytes.
    pub fn new(tree: &Tree<Bits>, rule: Rule, threads: usize, memory: u64) -> Result<Tiles> {
        let mut tiles = Tiles::empty(rule, threads, memory)?;
        within_most_cells(tree.population())?;
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
        within_most_cells(grid.population().into())?;
        let mut tiles = Tiles::empty(rule, threads, memory)?;
        let mut painter = Painter::new(&mut tiles, (x, y));
        for row in 0..grid.height() {
            painter.row(row, 0, grid.row(row));
        }
        painter.finish()?;
        Ok(tiles)
    }

    /// Tiles of the cells of `file`, placed as Golly places them (see [`files::read`]), read
    /// straight into tiles; `None` for what only a tree reads (a macrocell file, or a position
    /// far from the origin).
    ///
    /// The file's cells are counted first, so that a pattern of more than [`MOST_CELLS`] is
    /// refused before any tile is made: a count reads the file without drawing it, and stops
    /// once it passes that, a small part of what making tiles costs (a file of 76 million
    /// cells, 239 MB of RLE gzipped to 3 MB, refused in 0.6 s on two cores, where tiles made
    /// for its first 50 million cells took 6.5 s).
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
        if file.count_cells(MOST_CELLS)?.is_none() {
            return Err(too_many("the file's"));
        }
        let mut tiles = Tiles::empty(rule, threads, memory)?;
        let mut painter = Painter::new(&mut tiles, (x, y));
        file.paint_into(&mut painter)?;
        painter.finish()?;
        Ok(Some(tiles))
    }

    /// No tiles yet.
    fn empty(rule: Rule, threads: usize, memory: u64) -> Result<Tiles> {
        debug_assert!(!crate::in_bytes(&rule), "gol_plane::new refuses them");
        let pool = match threads > 1 {
            true => Some(Arc::new(
                rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .thread_name(|i| format!("tiles-{i}"))
                    .build()
                    .map_err(|e| {
                        Error::Engine(format!("tiles: cannot start their threads: {e}"))
                    })?,
            )),
            false => None,
        };
        Ok(Tiles {
            tiles: Vec::new(),
            index: FxHashMap::default(),
            free: Vec::new(),
            rule,
            stencil: Stencil::new(&rule),
            pool,
            memory,
            parity: 0,
            active: Vec::new(),
            groups: 0,
            steps: Vec::new(),
            spares: Vec::new(),
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
                tile.changed = Change::ALL;
                tile.changed_two = Change::ALL;
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
            changed: Change::default(),
            changed_two: Change::default(),
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
            let mut across = match t.changed.edges() {
                0 => 0,
                edges => edges & missing(&t.around),
            };
            while across != 0 {
                let k = across.trailing_zeros() as usize;
                across &= across - 1;
                let at = (t.at.0 + AROUND[k].0, t.at.1 + AROUND[k].1);
                // Live cells beside it: in a tile at direction j from it, on that tile's edge
                // facing it (direction 7 − j).
                let live = AROUND.iter().enumerate().any(|(j, (dx, dy))| {
                    self.index
                        .get(&(at.0 + dx, at.1 + dy))
                        .is_some_and(|&x| touches(self.now(x), 7 - j))
                });
                if live {
                    wanted.push(at);
                }
            }
        }
        wanted
    }

    /// The rows of tile `t` whose neighbourhood changed in the last generation (the first
    /// mask), and those whose neighbourhood differs from two generations back (the second).
    /// A row in neither keeps its state, and a row in the first only repeats its state of
    /// one generation back: both already hold that state at the coming parity (a row whose
    /// neighbourhood did not change is the same in both). Only rows in both are computed.
    fn reach(&self, t: &Tile) -> (u64, u64) {
        let near = |change: fn(&Tile) -> Change| -> u64 {
            let at = |k: usize| match t.around[k] {
                NONE => Change::default(),
                n => change(&self.tiles[n as usize]),
            };
            let last = SIDE as u32 - 1;
            // Neighbour k's cells next to the tile are on its edge 7 − k.
            let side = change(t).rows | at(3).east | at(4).west;
            let above = (at(0).east | at(1).rows | at(2).west) >> last;
            let below = (at(5).east | at(6).rows | at(7).west) & 1;
            side | side << 1 | side >> 1 | above | below << last
        };
        (near(|t| t.changed), near(|t| t.changed_two))
    }

    /// Writes the next state of tile `t`'s rows in groups `groups` into `next` (see
    /// [`Tiles::reach`] for the other rows').
    fn next(&self, t: &Tile, groups: u32, next: &mut Cells, scratch: &mut Vec<u64>) {
        let cells = |n: u32| -> &Cells {
            match n {
                NONE => &EMPTY,
                n => self.now(n),
            }
        };
        let a: [&Cells; 8] = std::array::from_fn(|k| cells(t.around[k]));
        let columns = [a[3], &t.cells[self.parity], a[4]];
        let side = SIDE as usize;
        for run in runs(groups) {
            let mut inner = run.clone();
            // The first and last groups of the tile read a row of the tiles above or below:
            // through copies of the rows they read, the row beyond in place.
            if inner.start == 0 {
                let corners = [[a[0], a[1], a[2]], [a[5], a[6], a[7]]];
                let [above, _] = corners.map(|row| row.map(|c| c[side - 1]));
                self.edge_group(columns, 0, above, next, scratch);
                inner.start = GROUP;
            }
            if inner.end == side && inner.start < inner.end {
                let below = [a[5][0], a[6][0], a[7][0]];
                self.edge_group(columns, side - GROUP, below, next, scratch);
                inner.end = side - GROUP;
            }
            if inner.start < inner.end {
                let words = inner.start - 1..inner.end + 1;
                self.stencil.run(
                    columns.map(|c| &c[words.clone()]),
                    &mut next[inner],
                    scratch,
                );
            }
        }
    }

    /// Writes the next state of the group of rows from `top` (the first or the last of the
    /// tile) into `next`, `beyond` being the row above or below it of the west, centre and
    /// east columns.
    fn edge_group(
        &self,
        columns: [&Cells; 3],
        top: usize,
        beyond: [u64; 3],
        next: &mut Cells,
        scratch: &mut Vec<u64>,
    ) {
        let mut copies = [[0u64; GROUP + 2]; 3];
        for ((copy, column), beyond) in copies.iter_mut().zip(columns).zip(beyond) {
            if top == 0 {
                copy[0] = beyond;
                copy[1..].copy_from_slice(&column[..GROUP + 1]);
            } else {
                copy[..GROUP + 1].copy_from_slice(&column[top - 1..]);
                copy[GROUP + 1] = beyond;
            }
        }
        self.stencil.run(
            copies.each_ref().map(|c| &c[..]),
            &mut next[top..top + GROUP],
            scratch,
        );
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
    ///
    /// Three passes: the tiles to look at (with the tiles made for births); one over them,
    /// shared among the threads, where each finds its rows to compute and computes them
    /// into its state one back, taken out of the tile meanwhile (it reads only the other
    /// tiles' states now and flags, which the pass leaves as they are); and one that puts
    /// the states back, sets the flags and lists the tiles to look at next.
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
        let (now, back) = (self.parity, self.parity ^ 1);
        let mut steps = std::mem::take(&mut self.steps);
        steps.extend(candidates.iter().map(|&i| {
            let spare = self.spares.pop().unwrap_or_else(|| Box::new(EMPTY));
            Step {
                tile: i,
                cells: std::mem::replace(&mut self.tiles[i as usize].cells[back], spare),
                groups: 0,
                near: 0,
                changed: Change::default(),
                changed_two: Change::default(),
            }
        }));
        {
            let this = &*self;
            let advance = |step: &mut Step| {
                thread_local! {
                    static SCRATCH: std::cell::RefCell<Scratch> = const {
                        std::cell::RefCell::new(Scratch { next: EMPTY, words: Vec::new() })
                    };
                }
                SCRATCH.with_borrow_mut(|scratch| this.advance(step, scratch));
            };
            match &self.pool {
                Some(pool) if self.groups >= PARALLEL_GROUPS => {
                    pool.install(|| steps.par_iter_mut().with_min_len(16).for_each(advance))
                }
                _ => steps.iter_mut().for_each(advance),
            }
        }
        // The tiles whose flags change: they and their neighbours are looked at next time.
        let mut touched = Vec::new();
        let mut dropped = Vec::new();
        let (mut computed, mut groups) = (0, 0);
        for step in steps.drain(..) {
            let t = &mut self.tiles[step.tile as usize];
            self.spares
                .push(std::mem::replace(&mut t.cells[back], step.cells));
            if step.groups == 0 {
                // Nothing computed: the next state is the state one back, in place at the
                // coming parity; where it differs from the state now stays as it was. Empty
                // now, one back (unchanged) and two back, and nothing changed round it:
                // dropped.
                if step.near == 0 && t.changed_two.is_none() && *t.cells[now] == EMPTY {
                    dropped.push(step.tile);
                }
                if !t.changed_two.is_none() {
                    t.changed_two = Change::default();
                    touched.push(step.tile);
                }
                continue;
            }
            computed += 1;
            groups += step.groups.count_ones();
            t.fresh = false;
            (t.changed, t.changed_two) = (step.changed, step.changed_two);
            if t.changed.is_none() && t.changed_two.is_none() && *t.cells[now] == EMPTY {
                dropped.push(step.tile);
            }
            touched.push(step.tile);
        }
        self.steps = steps;
        self.groups = groups;
        self.work[0] += computed;
        self.work[1] += self.index.len() as u64;
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

    /// The pass of a generation over tile `step.tile` (see [`Tiles::generation`]).
    fn advance(&self, step: &mut Step, scratch: &mut Scratch) {
        let t = &self.tiles[step.tile as usize];
        let (one, two) = self.reach(t);
        step.near = one;
        if one & two == 0 {
            return;
        }
        let groups = groups_of(one & two);
        self.next(t, groups, &mut scratch.next, &mut scratch.words);
        let [changed, changed_two] = Change::settle(
            &scratch.next,
            &t.cells[self.parity],
            &mut step.cells,
            groups,
        );
        step.groups = groups;
        step.changed = t.changed.with(groups, changed);
        step.changed_two = match t.fresh {
            true => Change::ALL,
            false => changed_two,
        };
    }

    /// The tiles that hold live cells, with their cells.
    fn occupied(&self) -> impl Iterator<Item = (&Tile, &Cells)> {
        self.index
            .values()
            .map(|&i| (&self.tiles[i as usize], self.now(i)))
            .filter(|(_, now)| **now != EMPTY)
    }

    /// The cells as a tree in a store of `memory` bytes (for files, and for `auto`'s moves
    /// onto HashLife).
    pub(crate) fn tree(&self) -> Result<Tree<Bits>> {
        self.tree_in(Store::new(self.memory, Bits::LEVEL)?)
    }

    /// The cells as a tree in `store`, which may hold other nodes.
    pub(crate) fn tree_in(&self, store: Store) -> Result<Tree<Bits>> {
        let mut builder = Builder::new((0, 0), store, Bits::new(&self.rule));
        // Row by row, as the builder makes a row of leaves once the cells have gone past it.
        let mut tiles: Vec<(&Tile, &Cells)> = self.occupied().collect();
        tiles.sort_unstable_by_key(|(t, _)| (t.at.1, t.at.0));
        for row in tiles.chunk_by(|a, b| a.0.at.1 == b.0.at.1) {
            for r in 0..SIDE as usize {
                for (t, now) in row {
                    let mut bits = now[r];
                    while bits != 0 {
                        let b = bits.trailing_zeros() as i64;
                        builder.set(t.at.0 * SIDE + b, t.at.1 * SIDE + r as i64, 1);
                        bits &= bits - 1;
                    }
                }
            }
        }
        builder.build()
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

    fn row(&mut self, y: usize, first: usize, words: &[u64]) {
        for (k, &word) in words.iter().enumerate() {
            self.word(64 * (first + k), y, word);
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

/// Refuses a pattern of more than [`MOST_CELLS`] cells.
fn within_most_cells(cells: BigUint) -> Result<()> {
    match cells > BigUint::from(MOST_CELLS) {
        true => Err(too_many(&cells.to_string())),
        false => Ok(()),
    }
}

/// The refusal of a pattern of more than [`MOST_CELLS`] cells, whose `cells` are named.
fn too_many(cells: &str) -> Error {
    Error::Memory(format!(
        "{cells} cells are more than tiles are made from ({MOST_CELLS}); run it with hashlife"
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
        // Where there is a pool, the generations run on a thread of it, so that the other
        // threads wait for their next share of tiles beside it rather than beside a third.
        let pool = self.pool.clone();
        let mut run = || {
            crate::one_at_a_time(
                generations,
                stop,
                "more than tiles run (below 2^60, one at a time); run it with hashlife",
                || self.generation(),
            )
        };
        match pool {
            Some(pool) => pool.install(run),
            None => run(),
        }
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
            "{} ({}), {} tiles of 64x64 cells; tile steps: {computed} computed of {all} \
             (the rest asleep or repeating with period 2)",
            crate::threads(self.pool.as_ref().map_or(1, |p| p.current_num_threads())),
            self.stencil.isa().name(),
            self.index.len()
        )
    }

    fn memory_bytes(&self) -> u64 {
        self.tiles.len() as u64 * TILE_BYTES
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_are_found_and_rows_stored_alike_with_every_instruction_set() {
        let mut generator = gol_core::seed::SplitMix64::new(0x2545_f491_4f6c_dd1d_u64);
        let mut random = move || generator.next();
        // A state like `next`: rows equal, differing in one bit (the first, the last, or
        // inside), or anywhere.
        let mut like = |next: &Cells, round: u32| -> Cells {
            std::array::from_fn(|r| match (random() % 5, round % 2) {
                (0, _) => next[r] ^ 1,
                (1, _) => next[r] ^ 1 << 63,
                (2, _) => next[r] ^ 1 << (random() % 62 + 1),
                (3, 0) => random(),
                _ => next[r],
            })
        };
        let mut generator = gol_core::seed::SplitMix64::new(7);
        for round in 0..200 {
            let next: Cells = std::array::from_fn(|_| generator.next());
            let (now, back) = (like(&next, round), like(&next, round + 1));
            let groups = generator.next() as u32 & 0xff;
            let mut stored = back;
            let words = Change::settle_words(&next, &now, &mut stored, groups);
            // Outside the groups nothing is seen or stored; inside, every row's difference.
            let inside = rows_of(groups);
            for r in 0..64 {
                let seen = inside >> r & 1 == 1;
                assert_eq!(stored[r], if seen { next[r] } else { back[r] });
                for (change, old) in words.iter().zip([now, back]) {
                    let d = next[r] ^ old[r];
                    assert_eq!(change.rows >> r & 1 == 1, seen && d != 0);
                    assert_eq!(change.west >> r & 1 == 1, seen && d & 1 != 0);
                    assert_eq!(change.east >> r & 1 == 1, seen && d >> 63 != 0);
                }
            }
            #[cfg(target_arch = "x86_64")]
            {
                if std::arch::is_x86_feature_detected!("avx2") {
                    let mut avx2 = back;
                    // SAFETY: the CPU has AVX2 (just checked).
                    let found = unsafe { Change::settle_avx2(&next, &now, &mut avx2, groups) };
                    assert_eq!((found, avx2), (words, stored));
                }
                if std::arch::is_x86_feature_detected!("avx512f") {
                    let mut avx512 = back;
                    // SAFETY: the CPU has AVX-512F (just checked).
                    let found = unsafe { Change::settle_avx512(&next, &now, &mut avx512, groups) };
                    assert_eq!((found, avx512), (words, stored));
                }
            }
        }
    }
}
