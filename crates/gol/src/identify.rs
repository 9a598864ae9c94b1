//! What a pattern is ([`gol_census::identify`]): the cells of a simulation, wherever it runs,
//! copied onto a plane of their own and run there until they repeat; the simulation itself
//! does not move.

use std::sync::atomic::AtomicBool;

use gol_census::Identity;
use gol_core::rule::Topology;
use gol_core::{EngineId, Grid, Rule};
use gol_plane::{Options, Start};

use crate::error::invalid;
use crate::{Dimension, PlaneSimulation, PlaneView, Result, Simulation};

pub use gol_census::identify::{Cycle, Verdict, MOST_CELLS};

/// The generations `identify` runs at most where none are given: 2^16.
pub const DEFAULT_LIMIT: u64 = 1 << 16;

/// Identifies `grid`, its top-left cell at (x, y) of the plane, under `rule` (on the infinite
/// plane; a tube or strip stays one): at most `limit` generations, `stop` ending it early.
pub fn identify(
    grid: &Grid,
    (x, y): (i64, i64),
    rule: Rule,
    limit: u64,
    stop: &AtomicBool,
) -> Result<Identity> {
    let rule = match rule.topology() {
        Topology::Strip(_) => rule,
        _ => rule.on(Topology::Torus),
    };
    // Tiles for two-state B/S rules, which they run fastest; HashLife for Generations rules
    // and rule tables; the window for what only it runs.
    let engine = [EngineId::Tiles, EngineId::Hashlife, EngineId::Window]
        .into_iter()
        .find(|&e| gol_plane::runs(e, &rule))
        .unwrap_or(EngineId::Window);
    let options = Options {
        memory: crate::plane::default_memory().min(4 << 30),
        threads: 1,
        parallel_level: None,
    };
    let mut plane = gol_plane::new(engine, Start::Grid { grid, x, y }, rule, &options)?;
    Ok(gol_census::identify(&mut *plane, limit, stop)?)
}

impl PlaneSimulation {
    /// What the pattern now is ([`identify`]).
    pub fn identify(&self, limit: u64, stop: &AtomicBool) -> Result<Identity> {
        let Some(rect) = self.bounding_box() else {
            invalid!("the pattern is empty: nothing to identify");
        };
        let fits = rect
            .size()
            .filter(|&(w, h)| w.saturating_mul(h) <= MOST_CELLS);
        let (Some(_), Some(corner)) = (fits, rect.corner()) else {
            invalid!("the pattern's bounding box {rect} is too large or too far out to identify");
        };
        let grid = self.window(&PlaneView::of(&rect))?;
        identify(&grid, corner, self.rule(), limit, stop)
    }
}

impl<W: Dimension> Simulation<W> {
    /// What the world's cells are on the infinite plane, its top-left cell at (0, 0)
    /// ([`identify`]); 2D only.
    pub fn identify(&self, limit: u64, stop: &AtomicBool) -> Result<Identity> {
        let world = self.world()?;
        let (width, height, _) = world.extent();
        if (width as u64).saturating_mul(height as u64) > MOST_CELLS {
            invalid!("a {width}x{height} grid is too large to identify");
        }
        world.identify(self.rule(), limit, stop)
    }
}
