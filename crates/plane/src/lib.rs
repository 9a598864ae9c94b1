//! The infinite plane of `gol`: Golly's default universe, unbounded in every direction, with
//! exact generation counts, populations and coordinates of any size.
//!
//! One interface, [`Plane`], for every algorithm that runs the plane (as Golly's `lifealgo`
//! is for its algorithms): set up from a pattern file or cells ([`Start`]), stepped by any
//! number of generations ([`BigUint`]), read back as a population, a bounding box, the cells of
//! a window, the populations of blocks (a zoomed-out picture), or written as RLE and macrocell.
//! [`new`] makes one, by [`EngineId`].
//!
//! - [`auto`](mod@auto): tiles and HashLife raced on the pattern, the faster kept.
//! - [`hashlife`]: Gosper's HashLife on every core, over a concurrent [`store`] of hash-consed
//!   nodes with memoised results; for engineered and periodic patterns, astronomically far.
//! - [`tiles`]: dense tiles of 64 × 64 cells where there are cells, asleep where nothing
//!   changes, on every core; for chaotic patterns (two-state rules).
//! - [`window`]: one dense window that grows with the pattern, run by a grid engine: for Larger
//!   than Life rules, Golly's tubes and strips, and B0 rules (kept complemented, as Golly does).
//! - [`tree`]: a pattern as a quadtree in a store, and what can be read from it; the form every
//!   algorithm reads files into and writes them from ([`files`]).
//! - [`leaf`]: the cells at the bottom of a tree and the rule's step of them: bits for
//!   two-state rules, bytes of states for Generations rules.
//!
//! Coordinates are Golly's (x right, y down); see [`tree`] for where the root lies.
#![deny(missing_docs)]

pub mod auto;
pub mod check;
pub mod files;
pub mod hashlife;
pub mod leaf;
pub mod store;
mod tasks;
pub mod tiles;
pub mod tree;
pub mod window;

use std::io::{self, Write};
use std::sync::atomic::AtomicBool;

use gol_core::pattern::PatternFile;
use gol_core::rule::Topology;
use gol_core::{EngineId, Error, Grid, Result, Rule};
use num_bigint::{BigInt, BigUint};

pub use hashlife::{HashLife, Stepped};
pub use leaf::{Bits, Leaf, States};
pub use tiles::Tiles;
pub use tree::{Rect, Tree};
pub use window::Window;

/// What a plane starts from.
pub enum Start<'a> {
    /// A pattern file, placed as Golly places it.
    File(&'a PatternFile),
    /// Cells, the grid's top-left cell at Golly's (x, y).
    Grid {
        /// The cells.
        grid: &'a Grid,
        /// Golly's x of the grid's left column.
        x: i64,
        /// Golly's y of the grid's top row.
        y: i64,
    },
}

/// The file formats a plane writes from its own nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Written {
    /// RLE of the bounding box, with `#CXRLE Pos= Gen=`.
    Rle,
    /// Golly's macrocell.
    Macrocell,
}

/// How much a plane may take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// The memory cap, in bytes.
    pub memory: u64,
    /// Threads stepping.
    pub threads: usize,
    /// Tuning: the level of the nodes from which HashLife computes results as parallel tasks
    /// (`None`: `GOL_HASHLIFE_PARALLEL_LEVEL` where set, else the measured default).
    pub parallel_level: Option<u32>,
}

/// One interface for every algorithm on the plane.
pub trait Plane: Send {
    /// Which engine this is.
    fn engine(&self) -> EngineId;

    /// The rule.
    fn rule(&self) -> Rule;

    /// Advances `generations`, stopping early (between two steps of a power of two) where
    /// `stop` is set: the generations taken, and how it ended.
    fn step(&mut self, generations: &BigUint, stop: &AtomicBool) -> Result<(BigUint, Stepped)>;

    /// Cells not in state 0 (under a Generations rule, the dying ones too).
    fn population(&self) -> BigUint;

    /// Cells in state 1.
    fn live(&self) -> BigUint;

    /// The smallest rectangle holding every cell not in state 0; `None` when there is none.
    fn bounding_box(&self) -> Option<Rect>;

    /// The states of the `width` × `height` cells whose top-left cell is (x, y), row by row.
    fn cells(&self, x: &BigInt, y: &BigInt, width: usize, height: usize) -> Vec<u8>;

    /// The populations of `columns` × `rows` blocks of 2^`level` × 2^`level` cells, row by
    /// row: a zoomed-out picture. The first is the block of the tree's grid that holds (x, y),
    /// its top-left cell [`tree::block_corner`].
    fn block_populations(
        &self,
        x: &BigInt,
        y: &BigInt,
        columns: usize,
        rows: usize,
        level: u32,
    ) -> Vec<u64>;

    /// Writes the pattern in `format`, stamped with `generation`.
    fn write(&self, format: Written, generation: &BigUint, out: &mut dyn Write) -> io::Result<()>;

    /// How it runs here, for reports.
    fn details(&self) -> String;

    /// Bytes of memory in use.
    fn memory_bytes(&self) -> u64;
}

/// Refuses what `engine` cannot run on the plane: B0 rules other than two-state ones of B/S
/// notation (under which every empty cell of the unbounded plane would be born at once, with
/// no complement to keep instead), and, on engines other than the window, B0 rules, tubes and
/// strips, and Larger than Life rules.
pub fn check_rule(engine: EngineId, rule: &Rule) -> Result<()> {
    rule.check_neighbours(8)?;
    let b0 = match rule.larger() {
        Some(larger) => larger.birth.0 == 0,
        None => rule.next_of(&[[0; 3]; 3]) != 0,
    };
    let refuse = |reason: String| {
        Err(Error::Rule {
            rule: rule.to_string(),
            reason,
        })
    };
    if b0 && !rule.births_on_nothing() {
        return refuse("B0 rules turn the whole infinite plane on at once, and only two-state rules of B/S notation are run complemented (as Golly does); run it on a torus or bounded grid (a size, or a :T or :P suffix)".into());
    }
    if engine == EngineId::Window {
        return Ok(());
    }
    let what = if rule.larger().is_some() {
        "Larger than Life rules"
    } else if b0 {
        "B0 rules (emulated as Golly does, by keeping the cells complemented while the background is alive)"
    } else if let Topology::Strip(strip) = rule.topology() {
        if strip.wrap {
            "tubes"
        } else {
            "strips"
        }
    } else {
        return Ok(());
    };
    refuse(format!(
        "{engine} does not run {what} on the infinite plane; window does"
    ))
}

/// Runs `generation` once a generation, `generations` times (below 2^60; `more` says why not
/// beyond), stopping early where `stop` is set: the generations taken, and how it ended.
fn one_at_a_time(
    generations: &BigUint,
    stop: &AtomicBool,
    more: &str,
    mut generation: impl FnMut() -> Result<()>,
) -> Result<(BigUint, Stepped)> {
    if generations.bits() > 60 {
        return Err(Error::Invalid(format!(
            "{} generations: {more}",
            hashlife::short(generations)
        )));
    }
    let mut taken = BigUint::from(0u32);
    while &taken < generations {
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            return Ok((taken, Stepped::Stopped));
        }
        generation()?;
        taken += 1u32;
    }
    Ok((taken, Stepped::Done))
}

/// Whether `engine` (one of the plane's) runs `rule`: the window every rule the plane runs,
/// HashLife all but Larger than Life rules, B0 rules, tubes and strips, tiles those of them
/// with two states.
pub fn runs(engine: EngineId, rule: &Rule) -> bool {
    check_rule(engine, rule).is_ok()
        && match engine {
            EngineId::Window | EngineId::Hashlife => true,
            EngineId::Tiles => !in_bytes(rule),
            _ => false,
        }
}

/// Whether the plane's cells under `rule` are bytes of states ([`States`]): under Generations
/// rules and rule tables, which tiles do not run.
pub fn in_bytes(rule: &Rule) -> bool {
    rule.is_multi_state() || rule.rule_table().is_some()
}

/// "1 thread", "2 threads": for the engines' details.
fn threads(n: usize) -> String {
    match n {
        1 => "1 thread".into(),
        n => format!("{n} threads"),
    }
}

/// Refuses a memory cap below [`store::Store::LEAST`], whatever the engine: `auto` may move
/// any pattern onto HashLife, and files are written through a tree.
fn check_memory(options: &Options) -> Result<()> {
    if options.memory < store::Store::LEAST {
        return Err(Error::Invalid(format!(
            "a memory cap of {} is too small: the infinite plane needs at least {}",
            gol_core::memory::human_bytes(options.memory),
            gol_core::memory::human_bytes(store::Store::LEAST)
        )));
    }
    Ok(())
}

/// A plane run by `engine` (one of the plane's: [`EngineId::on_plane`]) under `rule` from
/// `start`.
pub fn new(
    engine: EngineId,
    start: Start<'_>,
    rule: Rule,
    options: &Options,
) -> Result<Box<dyn Plane>> {
    check_rule(engine, &rule)?;
    check_memory(options)?;
    match engine {
        EngineId::Hashlife if in_bytes(&rule) => Ok(Box::new(hashed_of(
            start,
            States::new(&rule),
            rule,
            options,
        )?)),
        EngineId::Hashlife => Ok(Box::new(hashed_of(start, Bits::new(&rule), rule, options)?)),
        EngineId::Tiles if in_bytes(&rule) => Err(Error::Invalid(format!(
            "rule {rule}: tiles run two-state B/S rules; Generations rules and rule tables run on hashlife"
        ))),
        EngineId::Tiles => Ok(Box::new(tiles_of(start, rule, options)?)),
        EngineId::Window => {
            let store = store::Store::new(options.memory, States::LEVEL)?;
            let generation = match start {
                Start::File(file) => file.header().generation.clone(),
                Start::Grid { .. } => BigUint::from(0u32),
            };
            let tree = tree_of(start, store, States::new(&rule))?;
            Ok(Box::new(Window::new(
                &tree,
                rule,
                &generation,
                options.threads,
                options.memory,
            )?))
        }
        other => Err(Error::Engine(format!(
            "{other} does not run the infinite plane"
        ))),
    }
}

/// A plane under `auto` ([`auto`](mod@auto)): tiles and HashLife raced on the pattern from
/// `start`, or the window for what only it runs.
pub fn auto(start: Start<'_>, rule: Rule, options: &Options) -> Result<Box<dyn Plane>> {
    if check_rule(EngineId::Hashlife, &rule).is_err() {
        return new(EngineId::Window, start, rule, options);
    }
    check_memory(options)?;
    Ok(Box::new(auto::Auto::new(start, rule, options)?))
}

/// HashLife on the cells of `start`, its leaves stepped by `leaf`.
pub(crate) fn hashed_of<L: Leaf>(
    start: Start<'_>,
    leaf: L,
    rule: Rule,
    options: &Options,
) -> Result<Hashed<L>> {
    let store = store::Store::new(options.memory, L::LEVEL)?;
    Hashed::new(tree_of(start, store, leaf)?, rule, options)
}

/// Tiles of the cells of `start` under `rule` (two states).
pub(crate) fn tiles_of(start: Start<'_>, rule: Rule, options: &Options) -> Result<Tiles> {
    let (threads, memory) = (options.threads, options.memory);
    // Straight into tiles where the reader can; through a tree where only it can.
    let direct = match start {
        Start::Grid { grid, x, y } if grid.states() == 2 => {
            Some(Tiles::from_grid(grid, (x, y), rule, threads, memory)?)
        }
        Start::File(file) => Tiles::from_file(file, rule, threads, memory)?,
        Start::Grid { .. } => None,
    };
    match direct {
        Some(tiles) => Ok(tiles),
        None => {
            let store = store::Store::new(memory, Bits::LEVEL)?;
            let tree = tree_of(start, store, Bits::new(&rule))?;
            Tiles::new(&tree, rule, threads, memory)
        }
    }
}

/// The cells of `start` as a tree of `store`.
fn tree_of<L: Leaf>(start: Start<'_>, store: store::Store, leaf: L) -> Result<Tree<L>> {
    match start {
        Start::File(file) => files::read(file, store, leaf),
        Start::Grid { grid, x, y } => files::from_grid(grid, x, y, store, leaf),
    }
}

/// HashLife behind [`Plane`].
pub(crate) struct Hashed<L: Leaf> {
    pub(crate) engine: HashLife<L>,
    rule: Rule,
}

impl<L: Leaf> Hashed<L> {
    /// HashLife over `tree` under `rule`, on the threads of `options`.
    pub(crate) fn new(tree: Tree<L>, rule: Rule, options: &Options) -> Result<Hashed<L>> {
        Ok(Hashed {
            engine: HashLife::new(tree, options.threads, options.parallel_level)?,
            rule,
        })
    }

    /// This HashLife on the cells that `plant` makes in its store ([`HashLife::replanted`]).
    pub(crate) fn replanted(
        self,
        plant: impl FnOnce(store::Store, L) -> Result<Tree<L>>,
    ) -> Result<Hashed<L>> {
        Ok(Hashed {
            engine: self.engine.replanted(plant)?,
            rule: self.rule,
        })
    }
}

impl<L: Leaf> Plane for Hashed<L> {
    fn engine(&self) -> EngineId {
        EngineId::Hashlife
    }

    fn rule(&self) -> Rule {
        self.rule
    }

    fn step(&mut self, generations: &BigUint, stop: &AtomicBool) -> Result<(BigUint, Stepped)> {
        self.engine.step(generations, stop)
    }

    fn population(&self) -> BigUint {
        self.engine.tree().population()
    }

    fn live(&self) -> BigUint {
        self.engine.tree().live()
    }

    fn bounding_box(&self) -> Option<Rect> {
        self.engine.tree().bounding_box()
    }

    fn cells(&self, x: &BigInt, y: &BigInt, width: usize, height: usize) -> Vec<u8> {
        self.engine.tree().cells(x, y, width, height)
    }

    fn block_populations(
        &self,
        x: &BigInt,
        y: &BigInt,
        columns: usize,
        rows: usize,
        level: u32,
    ) -> Vec<u64> {
        self.engine
            .tree()
            .block_populations(x, y, columns, rows, level)
    }

    fn write(&self, format: Written, generation: &BigUint, out: &mut dyn Write) -> io::Result<()> {
        files::write_as(self.engine.tree(), format, &self.rule, generation, out)
    }

    fn details(&self) -> String {
        let store = self.engine.tree().store();
        format!(
            "{}, {} nodes in {} (memory cap {}), {} garbage collections \
             ({} within a step), {} results computed ({} helping)",
            threads(self.engine.threads()),
            store.nodes(),
            gol_core::memory::human_bytes(store.bytes_used()),
            gol_core::memory::human_bytes(store.bytes()),
            self.engine.collections(),
            self.engine.collections_within(),
            self.engine.work().0,
            self.engine.work().1
        )
    }

    fn memory_bytes(&self) -> u64 {
        self.engine.tree().store().bytes_used()
    }
}
