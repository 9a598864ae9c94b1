//! A dense window on the plane: one grid of byte cells (states) that grows when the pattern
//! nears its edge and shrinks when the pattern leaves most of it empty, stepped by the fastest
//! of `gol`'s CPU grid engines that runs the rule (the first of [`gol_core::cpu::ENGINES`] to
//! take it) on every core. It runs what HashLife and tiles do not:
//!
//! - Larger than Life rules, as Golly runs them unbounded;
//! - Golly's tubes and strips ([`Strip`]): the window spans the bounded side and grows along the
//!   infinite one; the engine runs a torus for a tube (its bounded side wraps) and a bounded
//!   plane for a strip (dead beyond its bounded side);
//! - two-state B0 rules, as Golly emulates them: whenever the background is alive the cells are
//!   kept complemented, and each generation runs the rule seen through the complements
//!   ([`Rule::complemented`]), which has no B0. Without the top S count (S8) the background
//!   alternates, so the cells are kept complemented in odd generations; with it Golly takes
//!   the background as alive from the start, the cells complemented always. Populations,
//!   bounding boxes, cells and files are those of the cells as kept, as Golly reports and
//!   writes them.
//!
//! Cells are born only within the rule's reach r (1, or a Larger than Life rule's range) of a
//! live cell, so where m dead cells lie between the pattern and the window's edge along each
//! infinite side, m / r generations run before the window is looked at again: the pattern
//! never comes within r of that edge, so the engine's border (a wrap or dead cells) is never
//! seen. The window is re-made (a copy) where the pattern has come within r of such an edge, or
//! leaves most of it empty, with room of r plus some slack (a sixteenth of the pattern's side).

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};

use gol_core::rule::topology::Strip;
use gol_core::rule::Topology;
use gol_core::{cpu, Engine, EngineId, EngineOptions, Error, Grid, Result, Rule};
use num_bigint::{BigInt, BigUint};
use num_traits::ToPrimitive;

use crate::files::{self, Builder};
use crate::leaf::{Leaf, States};
use crate::store::Store;
use crate::tree::{BlockCounts, Rect, Tree};
use crate::{Plane, Stepped, Written};

/// Room added past the margin when the window is re-made, as a share of the pattern's side
/// (at least [`LEAST_SLACK`] cells): the less room, the fewer cells each generation steps and
/// the more often the window is re-made (a copy of the cells). Room of at least the reach
/// (two generations between looks) made R100-alien-bug.rle 1.3× faster and R100-NN-bug.rle
/// 1.5× slower (its O(r) diamond steps the larger window): not taken. R500-alien-bug.rle, 100
/// generations, dev-2c-z4: 6.6 s with a quarter of the side, 3.6 s with a sixteenth.
const SLACK: usize = 16;

/// The least room added past the margin.
const LEAST_SLACK: usize = 32;

/// How far from the origin cells may go: coordinates stay in `i64` with room to spare.
const FARTHEST: i64 = 1 << 62;

/// Bytes a cell of the window takes at most: its byte here, the engine's two generations of
/// bytes (ghost cells aside), and the snapshot read back.
const CELL_BYTES: u64 = 4;

/// Windows of fewer cells are measured and stepped on the calling thread: waking the pool's
/// threads costs more than the work.
const PARALLEL_CELLS: usize = 1 << 18;

/// The pattern in its window.
pub struct Window {
    /// The rule, as given (a tube's or a strip's included).
    rule: Rule,
    /// How far a cell's neighbourhood reaches.
    reach: usize,
    /// The tube or strip, if the plane is one.
    strip: Option<Strip>,
    /// Whether the rule has B0 (the background turns alive).
    b0: bool,
    /// Whether the cells are kept complemented (under a B0 rule, while the background is
    /// alive).
    inverted: bool,
    /// Golly's (x, y) of the window's top-left cell.
    corner: (i64, i64),
    width: usize,
    height: usize,
    /// The cells, as kept, row by row.
    cells: Vec<u8>,
    /// Cells not in state 0, and their smallest rectangle in window coordinates (x0, y0, x1,
    /// y1 inclusive).
    occupied: u64,
    bounds: Option<(usize, usize, usize, usize)>,
    engine: Box<dyn Engine>,
    /// The rule the engine holds `cells` under, or `None` where `cells` were re-made since.
    loaded: Option<Rule>,
    pool: rayon::ThreadPool,
    threads: usize,
    memory: u64,
    /// Times the window was re-made.
    remade: u64,
}

impl Window {
    /// The cells of `tree` under `rule` (any 2D rule `gol` runs; on a tube or a strip where its
    /// topology is one), stepped on `threads` threads in at most `memory` bytes. `generation`
    /// is the generation the cells are of (a file's stamp): under a B0 rule without the top S
    /// count, whether they are kept complemented follows from it, as the window writes them.
    pub fn new(
        tree: &Tree<States>,
        rule: Rule,
        generation: &BigUint,
        threads: usize,
        memory: u64,
    ) -> Result<Window> {
        let strip = match rule.topology() {
            Topology::Strip(strip) => Some(strip),
            Topology::Torus => None,
            other => {
                return Err(Error::Invalid(format!(
                    "rule {rule}: a {} is a bounded grid, not the infinite plane",
                    other.name()
                )))
            }
        };
        let b0 = rule.births_on_nothing();
        // With the top S count too, Golly takes the cells as complemented from the start (the
        // background alive for ever): the rule run is the complemented one, which has no B0.
        let inverted = b0 && (rule.survives_in_everything() || generation.bit(0));
        if b0 && strip.is_some_and(|s| !s.wrap) {
            return Err(Error::Rule {
                rule: rule.to_string(),
                reason: "B0 rules on a strip (dead cells past its sides) are not run; on a tube or the plane they are".into(),
            });
        }
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads.max(1))
            .build()
            .map_err(|e| Error::Engine(format!("could not start {threads} threads: {e}")))?;
        let mut window = Window {
            rule,
            reach: rule.larger().map_or(1, |l| l.range as usize),
            strip,
            b0,
            inverted,
            corner: (0, 0),
            width: 0,
            height: 0,
            cells: Vec::new(),
            occupied: 0,
            bounds: None,
            engine: Box::new(cpu::Scalar::default()),
            loaded: None,
            pool,
            threads: threads.max(1),
            memory,
            remade: 0,
        };
        let stepping = window.stepping().1;
        let spec = cpu::ENGINES
            .iter()
            .find(|spec| stepping.check_engine(spec.id, 8).is_ok())
            .ok_or_else(|| Error::Rule {
                rule: rule.to_string(),
                reason: "no CPU engine runs it".into(),
            })?;
        window.engine = (spec.create)(&EngineOptions::default())?;
        if let Some(b) = tree.bounding_box() {
            let (Some((mut x, mut y)), Some((w, h))) = (b.corner(), b.size()) else {
                return Err(far());
            };
            let (mut w, mut h) = (w as usize, h as usize);
            if let Some(strip) = strip {
                let (first, side) = (-((strip.side() / 2) as i64), strip.side());
                let (at, len) = if strip.bounded_rows() { (y, h) } else { (x, w) };
                if at < first || at + len as i64 > first + side as i64 {
                    let axis = if strip.bounded_rows() { "y" } else { "x" };
                    return Err(Error::Invalid(format!(
                        "the pattern's cells reach {axis} = {at} .. {}, outside the {}'s {side} cells ({first} .. {})",
                        at + len as i64 - 1,
                        Topology::Strip(strip).name(),
                        first + side as i64 - 1
                    )));
                }
                if strip.bounded_rows() {
                    (y, h) = (first, side);
                } else {
                    (x, w) = (first, side);
                }
            }
            window.check_size(w, h)?;
            let cells = tree.cells(&BigInt::from(x), &BigInt::from(y), w, h);
            (window.corner, window.width, window.height) = ((x, y), w, h);
            window.cells = cells;
            window.measure();
            window.fit()?;
        }
        Ok(window)
    }

    /// The background's state after this generation (kept complemented or not), and the rule
    /// the engine runs this generation: on a torus for a tube, on a bounded plane otherwise,
    /// seen through complements under a B0 rule.
    fn stepping(&self) -> (bool, Rule) {
        let edges = match self.strip {
            Some(strip) if strip.wrap => Topology::Torus,
            _ => Topology::Plane,
        };
        if !self.b0 {
            return (false, self.rule.on(edges));
        }
        let next = if self.inverted {
            self.rule.survives_in_everything()
        } else {
            true
        };
        let rule = self
            .rule
            .complemented(self.inverted, next)
            .expect("B0 is found only in rules of B/S notation");
        (next, rule.on(edges))
    }

    /// Refuses a window of `width` × `height` cells beyond the memory cap.
    fn check_size(&self, width: usize, height: usize) -> Result<()> {
        let bytes = CELL_BYTES * width as u64 * height as u64;
        if bytes > self.memory {
            return Err(Error::Memory(format!(
                "a window of {width}x{height} cells for {} needs {}, beyond the memory cap of {}",
                self.rule,
                gol_core::memory::human_bytes(bytes),
                gol_core::memory::human_bytes(self.memory)
            )));
        }
        Ok(())
    }

    /// Counts the occupied cells and their rectangle.
    fn measure(&mut self) {
        let (w, cells) = (self.width, &self.cells);
        let row_of = |row: &[u8]| {
            let first = row.iter().position(|&c| c != 0);
            let last = row.iter().rposition(|&c| c != 0);
            let count = row.iter().filter(|&&c| c != 0).count() as u64;
            (count, first.zip(last))
        };
        let rows: Vec<(u64, Option<(usize, usize)>)> = match cells.len() < PARALLEL_CELLS {
            true => cells.chunks(w.max(1)).map(row_of).collect(),
            false => self.pool.install(|| {
                use rayon::prelude::*;
                cells.par_chunks(w.max(1)).map(row_of).collect()
            }),
        };
        self.occupied = rows.iter().map(|r| r.0).sum();
        self.bounds = rows
            .iter()
            .enumerate()
            .filter_map(|(y, (_, span))| span.map(|(a, b)| (a, y, b, y)))
            .reduce(|p, q| (p.0.min(q.0), p.1.min(q.1), p.2.max(q.2), p.3.max(q.3)));
    }

    /// Whether the window's columns (rather than rows) grow: the plane's both do; a strip's
    /// infinite side does.
    fn grows(&self, columns: bool) -> bool {
        self.strip.is_none_or(|s| s.bounded_rows() == columns)
    }

    /// The fewest dead cells between the pattern and the window's edge along a side that
    /// grows.
    fn margin(&self, (x0, y0, x1, y1): (usize, usize, usize, usize)) -> usize {
        let mut least = usize::MAX;
        if self.grows(true) {
            least = least.min(x0).min(self.width - 1 - x1);
        }
        if self.grows(false) {
            least = least.min(y0).min(self.height - 1 - y1);
        }
        least
    }

    /// Re-makes the window round the pattern where it has come within the reach of an edge
    /// that grows, or leaves most of the window empty.
    fn fit(&mut self) -> Result<()> {
        let Some(bounds) = self.bounds else {
            return Ok(());
        };
        let (x0, y0, x1, y1) = bounds;
        let r = self.reach;
        let near = self.margin(bounds) <= r;
        let room = |side: usize, grows: bool| match grows {
            true => r + 1 + (side / SLACK).max(LEAST_SLACK),
            false => 0,
        };
        // Along a bounded side the window spans the whole side.
        let (from_x, to_x) = if self.grows(true) {
            (x0, x1)
        } else {
            (0, self.width - 1)
        };
        let (from_y, to_y) = if self.grows(false) {
            (y0, y1)
        } else {
            (0, self.height - 1)
        };
        let (pw, ph) = (to_x - from_x + 1, to_y - from_y + 1);
        let (mx, my) = (room(pw, self.grows(true)), room(ph, self.grows(false)));
        let (w, h) = (pw + 2 * mx, ph + 2 * my);
        let loose = (self.width as u64 * self.height as u64) > 4 * w as u64 * h as u64;
        if !near && !loose {
            return Ok(());
        }
        self.check_size(w, h)?;
        let corner = (
            self.corner.0 + from_x as i64 - mx as i64,
            self.corner.1 + from_y as i64 - my as i64,
        );
        let far_corner = (corner.0 + w as i64, corner.1 + h as i64);
        if [corner.0, corner.1, far_corner.0, far_corner.1]
            .iter()
            .any(|c| c.abs() > FARTHEST)
        {
            return Err(far());
        }
        let mut cells = vec![0u8; w * h];
        for y in from_y..=to_y {
            let from = &self.cells[y * self.width + from_x..][..pw];
            cells[(y - from_y + my) * w + mx..][..pw].copy_from_slice(from);
        }
        (self.corner, self.width, self.height) = (corner, w, h);
        self.cells = cells;
        self.bounds = Some((
            x0 - from_x + mx,
            y0 - from_y + my,
            x1 - from_x + mx,
            y1 - from_y + my,
        ));
        self.loaded = None;
        self.remade += 1;
        Ok(())
    }

    /// Runs at least one and at most `most` generations: as many as the room round the
    /// pattern allows (one at a time under a B0 rule, whose rule changes with the
    /// background). The generations run.
    fn advance(&mut self, most: u64) -> Result<u64> {
        let Some(bounds) = self.bounds else {
            // Nothing stays nothing; under a B0 rule without the top S count the background
            // goes on alternating.
            if self.b0 && !self.rule.survives_in_everything() {
                self.inverted ^= most % 2 == 1;
            }
            return Ok(most);
        };
        let (next, stepping) = self.stepping();
        let generations = if self.b0 {
            1
        } else {
            ((self.margin(bounds) / self.reach) as u64).clamp(1, most)
        };
        if self.loaded != Some(stepping) {
            let grid = Grid::from_states(self.width, self.height, stepping.states(), &self.cells)?;
            self.engine.load(&grid, stepping)?;
            self.loaded = Some(stepping);
        }
        let engine = &mut self.engine;
        let mut run = || -> Result<Grid> {
            engine.step(generations)?;
            engine.snapshot()
        };
        let grid = match self.cells.len() < PARALLEL_CELLS {
            true => run()?,
            false => self.pool.install(run)?,
        };
        self.cells = grid.to_states();
        self.inverted = next;
        self.measure();
        self.fit()?;
        Ok(generations)
    }

    /// The occupied cells as a tree (for writing files).
    fn tree(&self) -> Result<Tree<States>> {
        let store = Store::new(self.memory, States::LEVEL)?;
        let mut builder = Builder::new((0, 0), store, States::new(&self.rule));
        self.each(|x, y, state| builder.set(x, y, state));
        builder.build()
    }

    /// Calls `visit(x, y, state)` with Golly's coordinates of every occupied cell.
    fn each(&self, mut visit: impl FnMut(i64, i64, u8)) {
        if let Some((x0, y0, x1, y1)) = self.bounds {
            for y in y0..=y1 {
                for x in x0..=x1 {
                    let state = self.cells[y * self.width + x];
                    if state != 0 {
                        visit(self.corner.0 + x as i64, self.corner.1 + y as i64, state);
                    }
                }
            }
        }
    }
}

/// The refusal of cells beyond what the window places.
fn far() -> Error {
    Error::Invalid(
        "the window places cells within ±2^62 of the origin; this pattern reaches beyond".into(),
    )
}

impl Plane for Window {
    fn engine(&self) -> EngineId {
        EngineId::Window
    }

    fn rule(&self) -> Rule {
        self.rule
    }

    fn step(&mut self, generations: &BigUint, stop: &AtomicBool) -> Result<(BigUint, Stepped)> {
        let Some(mut left) = generations.to_u64().filter(|&n| n < 1 << 60) else {
            return Err(Error::Invalid(format!(
                "{} generations: more than the window runs (below 2^60)",
                crate::hashlife::short(generations)
            )));
        };
        let mut taken = 0u64;
        while left > 0 {
            if stop.load(Ordering::Relaxed) {
                return Ok((BigUint::from(taken), Stepped::Stopped));
            }
            let ran = self.advance(left)?;
            (taken, left) = (taken + ran, left - ran);
        }
        Ok((BigUint::from(taken), Stepped::Done))
    }

    fn population(&self) -> BigUint {
        BigUint::from(self.occupied)
    }

    fn live(&self) -> BigUint {
        let mut n = 0u64;
        self.each(|_, _, s| n += (s == 1) as u64);
        BigUint::from(n)
    }

    fn bounding_box(&self) -> Option<Rect> {
        let (x0, y0, x1, y1) = self.bounds?;
        Some(Rect {
            x: (self.corner.0 + x0 as i64).into(),
            y: (self.corner.1 + y0 as i64).into(),
            width: BigUint::from((x1 - x0 + 1) as u64),
            height: BigUint::from((y1 - y0 + 1) as u64),
        })
    }

    fn cells(&self, x: &BigInt, y: &BigInt, width: usize, height: usize) -> Vec<u8> {
        let mut out = vec![0u8; width * height];
        let (Some(x), Some(y)) = (x.to_i64(), y.to_i64()) else {
            return out;
        };
        self.each(|cx, cy, state| {
            let (i, j) = (cx - x, cy - y);
            if (0..width as i64).contains(&i) && (0..height as i64).contains(&j) {
                out[j as usize * width + i as usize] = state;
            }
        });
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
        self.each(|cx, cy, _| counts.add(cx as i128, cy as i128, 1));
        counts.done()
    }

    fn write(&self, format: Written, generation: &BigUint, out: &mut dyn Write) -> io::Result<()> {
        let tree = self.tree().map_err(io::Error::other)?;
        files::write_as(&tree, format, &self.rule, generation, out)
    }

    fn details(&self) -> String {
        let mut text = format!(
            "{}, a window of {}x{} cells (reach {}) stepped by {}, re-made {} times",
            crate::threads(self.threads),
            self.width,
            self.height,
            self.reach,
            self.engine.name(),
            self.remade
        );
        if let Some(strip) = self.strip {
            text.push_str(&format!(
                ", on a {} :{}",
                Topology::Strip(strip).name(),
                strip.suffix()
            ));
        }
        if self.b0 {
            let kept = if self.inverted {
                "complemented"
            } else {
                "as they are"
            };
            text.push_str(&format!(", B0 emulated (cells now kept {kept})"));
        }
        text
    }

    fn memory_bytes(&self) -> u64 {
        CELL_BYTES * self.cells.len() as u64
    }
}
