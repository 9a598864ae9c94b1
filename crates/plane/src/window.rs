//! A dense window on the plane for Larger than Life rules, as Golly runs them unbounded: one
//! grid of byte cells (states) that grows when the pattern nears its edge and shrinks when the
//! pattern leaves most of it empty, each generation counted with prefix sums
//! ([`gol_core::rule::larger::step`]) on every core.
//!
//! Cells are born only within the range r of a live cell (the plane refuses B0), so a window
//! that holds every live cell at least r + 1 cells from its edge holds the next generation
//! too; cells outside it are empty. The window keeps a margin of r plus some room (a
//! sixteenth of the pattern's side), so that it is re-made only now and then.

use std::io::{self, Write};
use std::sync::atomic::AtomicBool;

use gol_core::rule::larger::{self, Larger};
use gol_core::{EngineId, Error, Result, Rule};
use num_bigint::{BigInt, BigUint};
use num_traits::ToPrimitive;

use crate::files::{self, Builder};
use crate::leaf::{Leaf, States};
use crate::store::Store;
use crate::tree::{BlockCounts, Rect, Tree};
use crate::{Plane, Written};

/// Room added past the margin when the window is re-made, as a share of the pattern's side
/// (at least [`LEAST_SLACK`] cells): the less room, the less each generation counts and the
/// more often the window is re-made (a copy of the cells). R500-alien-bug.rle, 100
/// generations, dev-2c-z4: 6.6 s with a quarter of the side, 3.6 s with a sixteenth.
const SLACK: usize = 16;

/// The least room added past the margin.
const LEAST_SLACK: usize = 32;

/// How far from the origin cells may go: coordinates stay in `i64` with room to spare.
const FARTHEST: i64 = 1 << 62;

/// The pattern in its window.
pub struct Window {
    rule: Rule,
    larger: Larger,
    /// Golly's (x, y) of the window's top-left cell.
    corner: (i64, i64),
    width: usize,
    height: usize,
    cells: Vec<u8>,
    /// The next generation's cells, as large as `cells`.
    next: Vec<u8>,
    /// Cells not in state 0, and their smallest rectangle in window coordinates (x0, y0, x1,
    /// y1 inclusive).
    occupied: u64,
    bounds: Option<(usize, usize, usize, usize)>,
    pool: rayon::ThreadPool,
    threads: usize,
    memory: u64,
    /// Times the window was re-made.
    remade: u64,
}

impl Window {
    /// The cells of `tree` under `rule` (a Larger than Life rule), stepped on `threads`
    /// threads in at most `memory` bytes.
    pub fn new(tree: &Tree<States>, rule: Rule, threads: usize, memory: u64) -> Result<Window> {
        let Some(larger) = rule.larger() else {
            return Err(Error::Invalid(format!(
                "rule {rule}: the window runs Larger than Life rules; other rules run on hashlife or tiles"
            )));
        };
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads.max(1))
            .build()
            .map_err(|e| Error::Engine(format!("could not start {threads} threads: {e}")))?;
        let mut window = Window {
            rule,
            larger,
            corner: (0, 0),
            width: 0,
            height: 0,
            cells: Vec::new(),
            next: Vec::new(),
            occupied: 0,
            bounds: None,
            pool,
            threads: threads.max(1),
            memory,
            remade: 0,
        };
        if let Some(b) = tree.bounding_box() {
            let (Some((x, y)), Some((w, h))) = (b.corner(), b.size()) else {
                return Err(far());
            };
            let (w, h) = (w as usize, h as usize);
            window.check_size(w, h)?;
            let cells = tree.cells(&BigInt::from(x), &BigInt::from(y), w, h);
            (window.corner, window.width, window.height) = ((x, y), w, h);
            window.cells = cells;
            window.next = vec![0; w * h];
            window.measure();
            window.fit()?;
        }
        Ok(window)
    }

    /// Refuses a window of `width` × `height` cells beyond the memory cap (two copies).
    fn check_size(&self, width: usize, height: usize) -> Result<()> {
        let bytes = 2 * width as u64 * height as u64;
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
        let rows: Vec<(u64, Option<(usize, usize)>)> = self.pool.install(|| {
            use rayon::prelude::*;
            cells
                .par_chunks(w.max(1))
                .map(|row| {
                    let first = row.iter().position(|&c| c != 0);
                    let last = row.iter().rposition(|&c| c != 0);
                    let count = row.iter().filter(|&&c| c != 0).count() as u64;
                    (count, first.zip(last))
                })
                .collect()
        });
        self.occupied = rows.iter().map(|r| r.0).sum();
        self.bounds = rows
            .iter()
            .enumerate()
            .filter_map(|(y, (_, span))| span.map(|(a, b)| (a, y, b, y)))
            .reduce(|p, q| (p.0.min(q.0), p.1.min(q.1), p.2.max(q.2), p.3.max(q.3)));
    }

    /// Re-makes the window round the pattern where it has come within the range of an edge,
    /// or leaves most of the window empty.
    fn fit(&mut self) -> Result<()> {
        let Some((x0, y0, x1, y1)) = self.bounds else {
            return Ok(());
        };
        let r = self.larger.range as usize;
        let near = x0 <= r || y0 <= r || x1 + r + 1 >= self.width || y1 + r + 1 >= self.height;
        let (pw, ph) = (x1 - x0 + 1, y1 - y0 + 1);
        let room = |side: usize| r + 1 + (side / SLACK).max(LEAST_SLACK);
        let (mx, my) = (room(pw), room(ph));
        let loose = (self.width as u64 * self.height as u64)
            > 4 * (pw + 2 * mx) as u64 * (ph + 2 * my) as u64;
        if !near && !loose {
            return Ok(());
        }
        let (w, h) = (pw + 2 * mx, ph + 2 * my);
        self.check_size(w, h)?;
        let corner = (
            self.corner.0 + x0 as i64 - mx as i64,
            self.corner.1 + y0 as i64 - my as i64,
        );
        let far_corner = (corner.0 + w as i64, corner.1 + h as i64);
        if [corner.0, corner.1, far_corner.0, far_corner.1]
            .iter()
            .any(|c| c.abs() > FARTHEST)
        {
            return Err(far());
        }
        let mut cells = vec![0u8; w * h];
        for y in y0..=y1 {
            let from = &self.cells[y * self.width + x0..][..pw];
            cells[(y - y0 + my) * w + mx..][..pw].copy_from_slice(from);
        }
        (self.corner, self.width, self.height) = (corner, w, h);
        self.cells = cells;
        self.next = vec![0; w * h];
        self.bounds = Some((mx, my, mx + pw - 1, my + ph - 1));
        self.remade += 1;
        Ok(())
    }

    /// One generation.
    fn generation(&mut self) -> Result<()> {
        if self.bounds.is_none() {
            return Ok(());
        }
        let (larger, states) = (self.larger, self.rule.states());
        let (w, h) = (self.width, self.height);
        let (cells, next) = (&self.cells, &mut self.next);
        self.pool
            .install(|| larger::step(&larger, states, cells, w, h, false, next));
        std::mem::swap(&mut self.cells, &mut self.next);
        self.measure();
        self.fit()
    }

    /// The occupied cells as a tree (for writing files).
    fn tree(&self) -> Result<Tree<States>> {
        let mut builder = Builder::<States>::new(self.corner, self.rule.states());
        if let Some((x0, y0, x1, y1)) = self.bounds {
            for y in y0..=y1 {
                for x in x0..=x1 {
                    let state = self.cells[y * self.width + x];
                    if state != 0 {
                        builder.set(self.corner.0 + x as i64, self.corner.1 + y as i64, state);
                    }
                }
            }
        }
        let store = Store::new(self.memory, States::LEVEL)?;
        builder.build(store, States::new(&self.rule))
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

    fn step(
        &mut self,
        generations: &BigUint,
        stop: &AtomicBool,
    ) -> Result<(BigUint, crate::Stepped)> {
        crate::one_at_a_time(
            generations,
            stop,
            "more than the window runs (below 2^60, one at a time)",
            || self.generation(),
        )
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
        format!(
            "{} threads, a window of {}x{} cells (range {}), re-made {} times",
            self.threads, self.width, self.height, self.larger.range, self.remade
        )
    }

    fn memory_bytes(&self) -> u64 {
        2 * self.cells.len() as u64
    }
}
