//! The plane's oracle: `cpu-scalar` on a torus wide enough that nothing reaches its edge in
//! the generations run (light speed is one cell a generation, r under a Larger than Life rule
//! of range r) gives the plane's cells exactly.
//! Used by `gol verify` and by this crate's tests.

use gol_core::{cpu, Engine, Grid, Result, Rule};
use num_bigint::{BigInt, BigUint};

use crate::Plane;

/// What the plane should hold: the oracle's torus, and Golly's coordinates of its top-left
/// cell. Every cell outside the torus should be dead.
pub struct Expected {
    /// The torus after the generations.
    pub torus: Grid,
    /// Golly's x of the torus's left column.
    pub x: i64,
    /// Golly's y of the torus's top row.
    pub y: i64,
}

/// `pattern` (its top-left cell at Golly's origin) run `gens` generations under `rule` by
/// cpu-scalar, on a torus wider on each side than the rule reaches in them (`gens` times its
/// range, plus 2).
///
/// Under a two-state B0 rule the torus runs the real cells, its background changing with the
/// plane's, and the cells are compared as the plane keeps them: complemented where the
/// background is alive (in odd generations without the top S count; always with it, where
/// Golly takes the pattern as complemented from the start).
pub fn oracle(pattern: &Grid, rule: Rule, gens: u64) -> Result<Expected> {
    let range = rule.larger().map_or(1, |l| l.range as usize);
    let margin = gens as usize * range + 2;
    let (w, h) = (pattern.width() + 2 * margin, pattern.height() + 2 * margin);
    let mut torus = Grid::with_states(w, h, rule.states())?;
    torus.paste(pattern, margin, margin)?;
    let always = rule.births_on_nothing() && rule.survives_in_everything();
    if always {
        torus = complement(&torus)?;
    }
    let mut engine = cpu::Scalar::default();
    engine.load(&torus, rule)?;
    engine.step(gens)?;
    let mut torus = engine.snapshot()?;
    if always || (rule.births_on_nothing() && gens % 2 == 1) {
        torus = complement(&torus)?;
    }
    Ok(Expected {
        torus,
        x: -(margin as i64),
        y: -(margin as i64),
    })
}

/// Every cell of a two-state grid flipped.
fn complement(grid: &Grid) -> Result<Grid> {
    let flipped: Vec<u8> = grid.to_states().iter().map(|&s| 1 - s).collect();
    Grid::from_states(grid.width(), grid.height(), 2, &flipped)
}

/// The first way `plane` differs from `expected` (a cell, the population, or a live cell
/// outside the torus), or `None`.
pub fn difference(plane: &dyn Plane, expected: &Expected) -> Option<String> {
    let Expected { torus, x, y } = expected;
    let (w, h) = (torus.width(), torus.height());
    let cells = plane.cells(&BigInt::from(*x), &BigInt::from(*y), w, h);
    let want = torus.to_states();
    if let Some(i) = (0..cells.len()).find(|&i| cells[i] != want[i]) {
        return Some(format!(
            "cell ({}, {}) is {} on the plane, {} by the oracle",
            x + (i % w) as i64,
            y + (i / w) as i64,
            cells[i],
            want[i]
        ));
    }
    let population = BigUint::from(torus.population());
    if plane.population() != population {
        return Some(format!(
            "{} live cells on the plane, {population} by the oracle",
            plane.population()
        ));
    }
    let b = plane.bounding_box()?;
    let (bx, by) = b.corner().unwrap_or((i64::MIN, i64::MIN));
    let (bw, bh) = b.size().unwrap_or((u64::MAX, u64::MAX));
    let inside =
        bx >= *x && by >= *y && bx + bw as i64 <= x + w as i64 && by + bh as i64 <= y + h as i64;
    (!inside).then(|| format!("the plane's bounding box {b} reaches outside the oracle's torus"))
}
