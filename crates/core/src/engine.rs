//! The one interface every engine implements, and the registry of engines by name.

use crate::error::{Error, Result};
use crate::grid::Grid;
use crate::rule::Rule;

/// A Game of Life engine: holds a 2D torus and advances it under a rule.
///
/// The life cycle is `load` (copy a grid in, in whatever layout the engine likes), any number of
/// `step` calls, then `snapshot` or `population` to read the state back. Every engine must give
/// bit-for-bit the same states as [`crate::cpu::Scalar`], the oracle.
pub trait Engine: Send {
    /// The engine's registered name (`cpu-scalar`, `cpu-bitsliced`, …).
    fn name(&self) -> &'static str;

    /// Replaces the engine's state with `grid`, to be advanced under `rule`.
    fn load(&mut self, grid: &Grid, rule: Rule) -> Result<()>;

    /// Advances the loaded state by `generations` generations.
    fn step(&mut self, generations: u64) -> Result<()>;

    /// The current state.
    fn snapshot(&self) -> Result<Grid>;

    /// The number of live cells now.
    fn population(&self) -> Result<u64>;

    /// How the engine runs here (instruction set, threads, device…), for reports.
    fn details(&self) -> String {
        String::new()
    }

    /// Times the engine measured itself, in seconds, by name (for a GPU engine: the
    /// host-to-device copy, the generation loop timed with device events, the copy back).
    fn timings(&self) -> Vec<(&'static str, f64)> {
        Vec::new()
    }
}

/// Options that tune an engine without changing its results.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EngineOptions {
    /// Thread-block size (x, y) for the GPU engines; `None` for each engine's default.
    pub block: Option<(u32, u32)>,
}

impl EngineOptions {
    /// Fails if a block size is given to an engine that has none (the CPU engines).
    pub fn refuse_block(&self) -> Result<()> {
        match self.block {
            Some((x, y)) => Err(Error::Engine(format!(
                "--block {x}x{y} applies to the CUDA engines only"
            ))),
            None => Ok(()),
        }
    }
}

/// How an engine is found and made: one entry of a registry.
#[derive(Clone, Copy)]
pub struct EngineSpec {
    /// The name given to `--engine`.
    pub name: &'static str,
    /// One line on what the engine does.
    pub description: &'static str,
    /// Makes an engine; fails with a clear message where it cannot run on this machine.
    pub create: fn(&EngineOptions) -> Result<Box<dyn Engine>>,
}

impl std::fmt::Debug for EngineSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

/// Finds `name` in `specs`, or explains which engines there are.
pub fn find<'a>(specs: &'a [EngineSpec], name: &str) -> Result<&'a EngineSpec> {
    specs.iter().find(|s| s.name == name).ok_or_else(|| {
        let names: Vec<&str> = specs.iter().map(|s| s.name).collect();
        Error::Engine(format!(
            "unknown engine {name:?} for 2D; engines here: auto, {}",
            names.join(", ")
        ))
    })
}

/// Runs `generations` generations of `grid` under `rule` on a fresh engine from `spec` and
/// returns the final state: the shape every cross-check uses.
pub fn evolve(spec: &EngineSpec, grid: &Grid, rule: Rule, generations: u64) -> Result<Grid> {
    let mut engine = (spec.create)(&EngineOptions::default())?;
    engine.load(grid, rule)?;
    engine.step(generations)?;
    engine.snapshot()
}
