//! [`Simulation`]: a world on an engine, stepped, counted, read, saved and checkpointed.

use std::path::Path;
use std::time::Instant;

use gol_core::engine::{Engine, EngineId, EngineOptions};
use gol_core::picture::{self, Frame, Look, View};
use gol_core::{Cube, Grid, Rule};

use crate::auto::{self, EngineChoice, Machine, Resolved, Workload};
use crate::dimension::Dimension;
use crate::error::{invalid, Error, Result};
use crate::output::Picture;
use crate::registry;
use crate::setup::{Checkpoints, Problem, Setup, Source, DEFAULT_GENERATIONS};
use gol_cuda::generic::Readiness;

/// Where the time of a simulation went, in seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Timings {
    /// Reading the input file or making the soup.
    pub input: f64,
    /// Making the engine and loading the world into it (on a GPU: the driver's start-up, the
    /// kernels' compilation or cache, the copy to the device), beyond what overlapped the
    /// input.
    pub setup: f64,
    /// Advancing generations ([`Simulation::step`]), checkpoints not included.
    pub stepping: f64,
    /// Checkpoints written.
    pub checkpoints: u64,
    /// Writing them.
    pub checkpointing: f64,
}

/// A world on an engine: the library's one way to run Life, in 2D (`Simulation<Grid>`, the
/// default) or 3D (`Simulation<Cube>`).
///
/// ```
/// use gol::{Setup, Simulation, Size, Start};
///
/// // Kurnosov's seminar's soup (docs/lineage.md), on a smaller grid: 64², 64 generations, srand(0).
/// let setup = Setup {
///     start: Start::Glibc { seed: 0 },
///     size: Some(Size::Side(64)),
///     ..Setup::default()
/// };
/// let mut sim: Simulation = Simulation::new(&setup)?;
/// sim.step(64)?;
/// assert_eq!(sim.generation(), 64);
/// assert_eq!(sim.population()?, sim.world()?.population());
/// # Ok::<(), gol::Error>(())
/// ```
pub struct Simulation<W: Dimension = Grid> {
    engine: Box<dyn Engine<W>>,
    resolved: Resolved,
    /// The cost model's time of one generation on the engine ([`auto::generation_seconds`]).
    generation_seconds: Option<f64>,
    rule: Rule,
    source: Source,
    stamp: u64,
    resumed_at: u64,
    generation: u64,
    extent: (usize, usize, Option<usize>),
    cells: u64,
    gpus: Option<usize>,
    checkpoints: Option<Checkpoints>,
    /// The generation of the last checkpoint written.
    saved_at: Option<u64>,
    timings: Timings,
}

impl<W: Dimension> Simulation<W> {
    /// The simulation `setup` describes: the world made or read, the engine resolved (`auto`
    /// by [`auto::resolve`]) and made, the world loaded into it. The engine (on a GPU: the
    /// driver's start-up) is made while the input is read or made.
    pub fn new(setup: &Setup) -> Result<Simulation<W>> {
        let start = Instant::now();
        let dim = setup.dimension()?;
        if dim.axes() != W::AXES {
            invalid!(
                "the setup describes a {}D world, not a {} one",
                dim.axes(),
                W::DIMENSION
            );
        }
        let gpus = registry::gpu_count(setup.split)?;
        let machine = Machine::here();
        let ids = registry::ids::<W>();
        let work = |cells, rule| Workload {
            cells,
            generations: setup.generations.unwrap_or(DEFAULT_GENERATIONS),
            axes: W::AXES,
            slabs: gpus.is_some(),
            gpu_options: setup.block.is_some() || gpus.is_some(),
            kernel: match machine.gpus {
                0 => Readiness::Ready,
                _ => gol_cuda::generic::readiness(rule, W::AXES),
            },
            states_in_bits: gol_core::cpu::States::keeps_in_bits(rule),
        };
        // The engines `auto` chooses among under `rule`: those that run it, or the rule's
        // refusal where none does (an engine named refuses a rule it does not run in its own
        // words when loaded).
        let running = |rule: Rule| -> Result<Vec<EngineId>> {
            if setup.engine != EngineChoice::Auto {
                return Ok(ids.clone());
            }
            let able: Vec<EngineId> = ids
                .iter()
                .copied()
                .filter(|&id| rule.check_engine(id, W::NEIGHBOURS).is_ok())
                .collect();
            match (able.is_empty(), ids.first()) {
                (true, Some(&first)) => Err(rule.check_engine(first, W::NEIGHBOURS).unwrap_err())?,
                _ => Ok(able),
            }
        };
        // The engine for a world of `extent` under `rule`, and the run's memory checked for it
        // (before any of the world is made where both are known ahead).
        let plan = |extent, rule: Rule| -> Result<Resolved> {
            let ids = running(rule)?;
            let resolved =
                auto::resolve(setup.engine, &ids, &work(cells_of(extent), rule), &machine)?;
            check_run_memory(resolved.id, extent, rule)?;
            Ok(resolved)
        };
        let make = |resolved: Resolved| -> Result<(Box<dyn Engine<W>>, Resolved)> {
            let options = EngineOptions {
                block: setup.block,
                device: 0,
            };
            let engine = match gpus {
                None => registry::create::<W>(resolved.id, &options)?,
                Some(n) => registry::split::<W>(
                    resolved.id,
                    &options,
                    n,
                    n,
                    setup.halo.unwrap_or(W::DEFAULT_HALO),
                )?,
            };
            Ok((engine, resolved))
        };
        let planned = match (setup.extent_ahead::<W>(), setup.rule_ahead::<W>()) {
            (Some(extent), Ok(rule)) => Some(plan(extent, rule)?),
            _ => None,
        };
        let (problem, made, input) = std::thread::scope(|scope| -> Result<_> {
            let reader = scope.spawn(|| (W::build(setup), start.elapsed().as_secs_f64()));
            let joined = || reader.join().expect("building a world does not panic");
            match planned {
                Some(resolved) => {
                    let made = make(resolved);
                    let (problem, input) = joined();
                    Ok((problem?, made, input))
                }
                None => {
                    let (problem, input) = joined();
                    let problem: Problem<W> = problem?;
                    let made = plan(problem.world.extent(), problem.rule).and_then(make);
                    Ok((problem, made, input))
                }
            }
        })?;
        if gpus.is_some() {
            crate::setup::check_splittable(problem.rule)?;
        }
        let loaded = made.and_then(|(mut engine, resolved)| {
            engine.load(&problem.world, problem.rule)?;
            Ok((engine, resolved))
        });
        // `auto` that chose a GPU which then could not take the run (too little GPU memory,
        // no NVRTC, a driver that fails to start) falls back to the best CPU engine, and says
        // so in the reason; a GPU engine asked for by name, or a split over GPUs, fails.
        let cpu = Machine { gpus: 0, ..machine };
        let (engine, resolved, machine) = match loaded {
            Err(Error::Core(gol_core::Error::Device(cause)))
                if setup.engine == EngineChoice::Auto && gpus.is_none() && machine.gpus > 0 =>
            {
                let chosen = auto::resolve(
                    EngineChoice::Auto,
                    &running(problem.rule)?,
                    &work(problem.world.cells(), problem.rule),
                    &cpu,
                )?;
                let mut engine = registry::create::<W>(chosen.id, &EngineOptions::default())?;
                engine.load(&problem.world, problem.rule)?;
                let reason = format!(
                    "auto: the GPU could not take this run ({cause}); fell back to {}",
                    chosen.id
                );
                (
                    engine,
                    Resolved {
                        id: chosen.id,
                        reason,
                    },
                    cpu,
                )
            }
            loaded => {
                let (engine, resolved) = loaded?;
                (engine, resolved, machine)
            }
        };
        let work = work(problem.world.cells(), problem.rule);
        let generation_seconds = auto::generation_seconds(resolved.id, &work, &machine);
        Ok(Simulation {
            engine,
            resolved,
            generation_seconds,
            rule: problem.rule,
            stamp: problem.stamp,
            resumed_at: problem.done,
            generation: problem.done,
            extent: problem.world.extent(),
            cells: problem.world.cells(),
            source: problem.source,
            gpus,
            checkpoints: setup.checkpoints.clone(),
            saved_at: None,
            timings: Timings {
                input,
                setup: start.elapsed().as_secs_f64() - input,
                ..Timings::default()
            },
        })
    }

    /// Advances `generations` generations, writing the checkpoints that fall due on the way
    /// ([`Checkpoints::every`]).
    pub fn step(&mut self, generations: u64) -> Result<()> {
        self.check_steps(generations)?;
        let start = Instant::now();
        let before = self.timings.checkpointing;
        let mut left = generations;
        while left > 0 {
            let schedule = self.checkpoints.as_ref();
            let n = schedule.map_or(left, |s| left.min(s.until_next(self.generation)));
            self.engine.step(n)?;
            self.generation += n;
            left -= n;
            if schedule.is_some_and(|s| s.due(self.generation)) {
                self.checkpoint()?;
            }
        }
        // Split runs on GPUs may return from `step` with launches still queued.
        self.engine.wait()?;
        self.timings.stepping +=
            start.elapsed().as_secs_f64() - (self.timings.checkpointing - before);
        Ok(())
    }

    /// Writes a checkpoint of the state now to the file of [`Setup::checkpoints`] (atomically),
    /// unless one of this generation was written already; refused where none was given.
    pub fn checkpoint(&mut self) -> Result<()> {
        let Some(checkpoints) = &self.checkpoints else {
            invalid!("no checkpoint file was given");
        };
        if self.saved_at == Some(self.generation) {
            return Ok(());
        }
        let start = Instant::now();
        gol_core::checkpoint::write(
            &checkpoints.path,
            &self.engine.snapshot()?,
            self.rule,
            self.stamp,
            self.generation,
        )?;
        self.saved_at = Some(self.generation);
        self.timings.checkpoints += 1;
        self.timings.checkpointing += start.elapsed().as_secs_f64();
        Ok(())
    }

    /// The generation now, counted from the original start (a checkpoint's generation
    /// included).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The generation the simulation started from: a checkpoint's, else 0.
    pub fn resumed_at(&self) -> u64 {
        self.resumed_at
    }

    /// Cells not in state 0 now: the live cells, and under a Generations rule the dying ones
    /// too (Golly's population).
    pub fn population(&self) -> Result<u64> {
        Ok(self.engine.population()?)
    }

    /// Under a Generations rule, the live cells (state 1) now; `None` under a two-state rule,
    /// where they are [`Simulation::population`].
    pub fn live(&self) -> Result<Option<u64>> {
        if !self.rule.is_generations() {
            return Ok(None);
        }
        Ok(Some(self.world()?.rows().live()))
    }

    /// The whole world now.
    pub fn world(&self) -> Result<W> {
        Ok(self.engine.snapshot()?)
    }

    /// Writes the world now to `path`, in the format its extension names: in 2D `.rle`,
    /// `.cells`, `.png` or `.gif` (one frame), in 3D a `.bin` cube stamped with the input's
    /// stamp plus the generations run, or a `.png`/`.gif` of its projection along x.
    pub fn save(&self, path: &Path) -> Result<()> {
        self.save_with(path, &Picture::default())
    }

    /// [`Simulation::save`], pictures drawn as `picture` says.
    pub fn save_with(&self, path: &Path, picture: &Picture) -> Result<()> {
        self.world()?
            .write(path, self.rule, self.stamp + self.generation, picture)
    }

    /// Refuses `generations` more where the generation or the stamp would pass 2^64 − 1, what
    /// a bounded world counts (they would wrap round; the infinite plane counts exactly).
    pub fn check_steps(&self, generations: u64) -> Result<()> {
        let end = self
            .stamp
            .checked_add(self.generation)
            .and_then(|g| g.checked_add(generations));
        if end.is_none() {
            invalid!(
                "generation {} (stamped {}) and {generations} more pass 2^64 - 1, which a bounded world counts to; the infinite plane counts exactly",
                self.generation,
                self.stamp(),
            );
        }
        Ok(())
    }

    /// The generation stamp [`Simulation::save`] writes to a `.bin` file now.
    pub fn stamp(&self) -> u64 {
        self.stamp + self.generation
    }

    /// The engine running the simulation.
    pub fn engine(&self) -> EngineId {
        self.engine.id()
    }

    /// The time one generation is estimated to take on the engine once the run has started
    /// (the cost model `auto` chooses by); `None` for engines it has no model of.
    pub fn generation_seconds(&self) -> Option<f64> {
        self.generation_seconds
    }

    /// How the engine was chosen.
    pub fn resolved(&self) -> &Resolved {
        &self.resolved
    }

    /// How the engine runs here (instruction set, threads, device, slabs…).
    pub fn details(&self) -> String {
        self.engine.details()
    }

    /// Times the engine measured itself, by name (GPU copies, the loop timed with device
    /// events, halo exchanges).
    pub fn engine_timings(&self) -> Vec<(&'static str, f64)> {
        self.engine.timings()
    }

    /// Where the time went.
    pub fn timings(&self) -> Timings {
        self.timings
    }

    /// The rule.
    pub fn rule(&self) -> Rule {
        self.rule
    }

    /// Where the initial state came from.
    pub fn source(&self) -> &Source {
        &self.source
    }

    /// Width, height and (in 3D) depth.
    pub fn extent(&self) -> (usize, usize, Option<usize>) {
        self.extent
    }

    /// Cells of the world.
    pub fn cells(&self) -> u64 {
        self.cells
    }

    /// GPUs of a split run.
    pub fn gpus(&self) -> Option<usize> {
        self.gpus
    }
}

impl Simulation<Grid> {
    /// The `width` × `height` rectangle of the world whose top-left cell is (`x`, `y`),
    /// wrapping round the torus: a viewport.
    ///
    /// ```
    /// use gol::{Setup, Simulation, Start};
    /// use gol_core::Grid;
    ///
    /// let mut cells = Grid::new(8, 8)?;
    /// cells.set(7, 7, true);
    /// let sim: Simulation = Simulation::new(&Setup { start: Start::Grid(cells), ..Setup::default() })?;
    /// // A 2×2 window across the corner of the torus.
    /// let corner = sim.window(7, 7, 2, 2)?;
    /// assert!(corner.get(0, 0) && !corner.get(1, 1));
    /// # Ok::<(), gol::Error>(())
    /// ```
    pub fn window(&self, x: usize, y: usize, width: usize, height: usize) -> Result<Grid> {
        let (w, h, _) = self.extent;
        // Only the rows of the window, where the engine hands them out (from a GPU: a copy of
        // those rows, not of the world); else the whole world.
        let (rows, first) = match self.engine.rows() {
            Some(access) if height < h => {
                let mut rows = Grid::new(w, height)?;
                let wpr = rows.words_per_row();
                let top = y % h;
                let before_wrap = height.min(h - top);
                let (upper, lower) = rows.words_mut().split_at_mut(before_wrap * wpr);
                access.read_rows(top, upper)?;
                if !lower.is_empty() {
                    access.read_rows(0, lower)?;
                }
                (rows, 0)
            }
            _ => (self.world()?, y),
        };
        let mut window = Grid::with_states(width, height, rows.states())?;
        for dy in 0..height {
            let row = (first + dy) % rows.height();
            for dx in 0..width {
                match rows.states() {
                    2 if rows.get((x + dx) % w, row) => window.set(dx, dy, true),
                    2 => {}
                    _ => window.set_state(dx, dy, rows.state((x + dx) % w, row)),
                }
            }
        }
        Ok(window)
    }
    /// The picture of `view` (wrapping round the torus) with one pixel for each `block` ×
    /// `block` cells, the share of live cells among them ([`picture::blocks`]): what a viewer
    /// shows zoomed out. Engines that keep their cells on a GPU make it there, so that only the
    /// picture crosses the bus; the others from a copy of the world.
    pub fn blocks(&self, view: &View, block: usize) -> Result<Frame> {
        if let Some(made) = self.engine.rows().and_then(|rows| rows.blocks(view, block)) {
            return Ok(made?);
        }
        Ok(picture::blocks(&self.world()?, view, block))
    }
}

impl Simulation<Cube> {
    /// The live cells of the cube that `look` shows, one count a (row, column) of the
    /// projection ([`picture::cube_counts`]): counted on the GPU for engines that keep their
    /// cells there, else from a copy of the cube.
    pub fn projection(&self, look: Look) -> Result<Vec<u32>> {
        look.check(self.extent.0)?;
        if let Some(counted) = self.engine.rows().and_then(|rows| rows.projection(look)) {
            return Ok(counted?);
        }
        Ok(picture::cube_counts(&self.world()?, look)?)
    }
}

/// The cells of a world of `extent`.
fn cells_of((width, height, depth): (usize, usize, Option<usize>)) -> u64 {
    width as u64 * height as u64 * depth.unwrap_or(1) as u64
}

/// Refuses a run whose memory, all of it counted at once ([`EngineId::run_bytes`]: the world,
/// the engine's own buffers, the lists of rows and the copy read back), is more than the
/// memory available, naming the total.
fn check_run_memory(id: EngineId, extent: (usize, usize, Option<usize>), rule: Rule) -> Result<()> {
    let (width, height, depth) = extent;
    let what = match depth {
        Some(_) => format!("a {width}³ cube on {id}"),
        None => format!("a {width}x{height} grid on {id}"),
    };
    gol_core::memory::check(id.run_bytes(extent, rule), &what)?;
    Ok(())
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::{EngineChoice, EngineId, Start};

    #[test]
    fn windows_read_through_rows_match_the_whole_world() {
        let cells = gol_core::seed::density_soup(70, 23, 0.4, 9).unwrap();
        let on = |id| {
            Simulation::<Grid>::new(&Setup {
                start: Start::Grid(cells.clone()),
                engine: EngineChoice::Named(id),
                ..Setup::default()
            })
            .unwrap()
        };
        // cpu-bitsliced hands out rows; cpu-scalar does not (the whole world is read).
        let (rows, whole) = (on(EngineId::CpuBitsliced), on(EngineId::CpuScalar));
        for (x, y, w, h) in [
            (0, 0, 70, 23),
            (65, 20, 10, 7),
            (3, 5, 1, 1),
            (69, 22, 80, 22),
        ] {
            let a = rows.window(x, y, w, h).unwrap();
            assert_eq!(a, whole.window(x, y, w, h).unwrap(), "({x}, {y}) {w}x{h}");
            assert_eq!(a.get(0, 0), cells.get(x % 70, y % 23));
        }
    }
}
