//! `gol run`: one simulation, reported like the seeds' programs.

use std::io::IsTerminal;
use std::time::Instant;

use anyhow::{Context, Result};
use gol_core::{Cube, Grid};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;

use crate::cli::RunArgs;
use crate::engines;
use crate::problem::{self, Build};

/// Runs with fewer cell updates than this get no progress bar.
const PROGRESS_MIN_UPDATES: f64 = 2e10;

/// The machine-readable report (`--json`).
#[derive(Serialize)]
pub(crate) struct Report {
    pub(crate) alive: u64,
    pub(crate) generations: u64,
    pub(crate) width: usize,
    pub(crate) height: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) depth: Option<usize>,
    /// The generation stamp written to a `.bin` output (the input's stamp plus the run).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) stamp: Option<u64>,
    /// The generation a resumed run started from (its checkpoint's); `generations` counts
    /// from the original start, the rates only what this process ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) resumed_at: Option<u64>,
    /// GPUs of a split run, and each one's share of the cell updates per second.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) gpus: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) cell_updates_per_second_per_gpu: Option<f64>,
    /// Checkpoints written, and the time they took (not counted in `seconds`).
    pub(crate) checkpoints: u64,
    pub(crate) checkpoint_seconds: f64,
    /// The ranks of an MPI run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) ranks: Option<Ranks>,
    pub(crate) engine: String,
    pub(crate) engine_details: String,
    pub(crate) rule: String,
    pub(crate) source: String,
    /// The generation loop alone.
    pub(crate) seconds: f64,
    /// Reading the input file or making the soup.
    pub(crate) input_seconds: f64,
    /// Making the engine and loading the state into it (on a GPU: device start-up, kernel
    /// compilation or cache, allocation, the copy to the device), beyond what overlapped the
    /// input.
    pub(crate) setup_seconds: f64,
    /// Counting the live cells after the loop (where a CUDA engine keeps byte cells: a
    /// download and a count on the host).
    pub(crate) count_seconds: f64,
    pub(crate) output_seconds: f64,
    pub(crate) total_seconds: f64,
    pub(crate) generations_per_second: f64,
    pub(crate) cell_updates_per_second: f64,
    /// Times the engine measured itself (GPU copies, the loop timed with CUDA events).
    pub(crate) engine_timings: std::collections::BTreeMap<String, f64>,
}

pub fn run(args: &RunArgs) -> Result<()> {
    #[cfg(feature = "mpi")]
    if crate::ranks::launched() {
        return crate::ranks::run(args);
    }
    #[cfg(not(feature = "mpi"))]
    if let Some(ranks) = crate::machine::mpi_ranks().filter(|&n| n > 1) {
        anyhow::bail!(
            "started as one of {ranks} MPI ranks, but this gol was built without MPI: build it with `cargo build --release --features mpi`"
        );
    }
    let three_d = match &args.resume {
        Some(path) => problem::checkpoint_is_3d(path)?,
        None => problem::is_3d(&args.problem)?,
    };
    if three_d {
        run_in::<Cube>(args)
    } else {
        run_in::<Grid>(args)
    }
}

fn run_in<W: Build>(args: &RunArgs) -> Result<()> {
    let start = Instant::now();
    let options = gol_core::EngineOptions {
        block: args.block,
        ..Default::default()
    };
    // The engine (on a GPU: the driver and the device's start-up) is made while the input is
    // read or generated.
    let (engine, problem, input_seconds) = std::thread::scope(|scope| {
        let maker = scope.spawn(|| engines::create_split::<W>(args, &options));
        let problem = match &args.resume {
            Some(path) => problem::resume::<W>(&args.problem, path),
            None => W::build(&args.problem),
        };
        let input_seconds = start.elapsed().as_secs_f64();
        let engine = maker.join().expect("making an engine does not panic");
        (engine, problem, input_seconds)
    });
    let (problem, (mut engine, gpus)) = (problem?, engine?);
    let (world, rule) = (&problem.world, problem.rule);
    let total = args.problem.gens;
    if problem.done > total {
        anyhow::bail!("{} is beyond --gens {total}", problem.source.describe());
    }
    let gens = total - problem.done;
    engine.load(world, rule)?;
    let setup = start.elapsed().as_secs_f64() - input_seconds;

    let updates = world.cells() as f64 * gens as f64;
    let loop_start = Instant::now();
    let bar = (std::io::stderr().is_terminal() && updates >= PROGRESS_MIN_UPDATES && !args.json)
        .then(|| {
            ProgressBar::new(gens).with_style(
                ProgressStyle::with_template("{bar:40} {pos}/{len} generations, {eta} left")
                    .expect("the template is valid"),
            )
        });
    let mut saver = Schedule::of(args).map(|schedule| Saver {
        schedule,
        rule,
        stamp: problem.stamp,
        written: 0,
        seconds: 0.0,
    });
    let mut done = 0;
    while done < gens {
        let mut n = gens - done;
        if bar.is_some() {
            n = n.min(gens.div_ceil(200).max(1));
        }
        if let Some(saver) = &saver {
            n = n.min(saver.schedule.until_next(problem.done + done));
        }
        engine.step(n)?;
        done += n;
        if let Some(bar) = &bar {
            bar.set_position(done);
        }
        if let Some(saver) = &mut saver {
            if saver.schedule.due(problem.done + done, gens - done) {
                saver.save(engine.as_ref(), problem.done + done)?;
            }
        }
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    if let Some(saver) = &mut saver {
        saver.save(engine.as_ref(), total)?;
    }
    // Split runs on GPUs return from `step` with launches still queued.
    engine.wait()?;
    let checkpoint_seconds = saver.as_ref().map_or(0.0, |s| s.seconds);
    let seconds = loop_start.elapsed().as_secs_f64() - checkpoint_seconds;
    let count_start = Instant::now();
    let alive = engine.population()?;
    let count_seconds = count_start.elapsed().as_secs_f64();

    let (width, height, depth) = world.extent();
    let stamp = depth.map(|_| problem.stamp + total);
    let output_start = Instant::now();
    if let Some(path) = &args.output {
        engine
            .snapshot()?
            .write(path, rule, problem.stamp + total)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    let output_seconds = output_start.elapsed().as_secs_f64();

    let report = Report {
        alive,
        generations: total,
        width,
        height,
        depth,
        stamp,
        resumed_at: args.resume.as_ref().map(|_| problem.done),
        gpus,
        cell_updates_per_second_per_gpu: gpus.map(|n| updates / seconds / n as f64),
        checkpoints: saver.as_ref().map_or(0, |s| s.written),
        checkpoint_seconds,
        ranks: None,
        engine: engine.name().to_string(),
        engine_details: engine.details(),
        rule: rule.to_string(),
        source: problem.source.describe(),
        seconds,
        input_seconds,
        setup_seconds: setup,
        count_seconds,
        output_seconds,
        total_seconds: start.elapsed().as_secs_f64(),
        generations_per_second: gens as f64 / seconds,
        cell_updates_per_second: updates / seconds,
        engine_timings: engine
            .timings()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    };
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        print_report(&report, args);
    }
    Ok(())
}

/// What each rank of an MPI run held and did.
#[derive(Serialize)]
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub(crate) struct Ranks {
    pub(crate) count: usize,
    /// What the ranks split: "row" (2D) or "plane" (3D, planes of constant x).
    pub(crate) layer: &'static str,
    /// Layers each rank owns, and the halo depth (in layers) added on each side.
    pub(crate) layers: Vec<usize>,
    pub(crate) halo: usize,
    /// Bytes of cell state each rank's engine holds (its extended slab, twice).
    pub(crate) state_bytes: Vec<u64>,
    /// Each rank's peak resident memory.
    pub(crate) peak_rss_bytes: Vec<u64>,
    /// Each rank's time exchanging halos.
    pub(crate) exchange_seconds: Vec<f64>,
}

/// When a run writes checkpoints: every `--checkpoint-every` generations counted from the
/// original start (so a resumed run keeps the schedule), and once at the end.
#[derive(Clone, Copy)]
pub(crate) struct Schedule<'a> {
    pub(crate) path: &'a std::path::Path,
    every: u64,
}

impl<'a> Schedule<'a> {
    /// The schedule of `--checkpoint`, if given.
    pub(crate) fn of(args: &'a RunArgs) -> Option<Schedule<'a>> {
        args.checkpoint.as_deref().map(|path| Schedule {
            path,
            every: args.checkpoint_every.unwrap_or(u64::MAX),
        })
    }

    /// Generations from generation `at` to the next checkpoint of the schedule.
    pub(crate) fn until_next(self, at: u64) -> u64 {
        self.every - at % self.every
    }

    /// Whether a checkpoint falls at generation `at`, `left` generations before the end (the
    /// end's own is written after the loop).
    pub(crate) fn due(self, at: u64, left: u64) -> bool {
        left > 0 && at % self.every == 0
    }
}

/// Writes the checkpoints of a one-process run.
struct Saver<'a> {
    schedule: Schedule<'a>,
    rule: gol_core::Rule,
    stamp: u64,
    written: u64,
    seconds: f64,
}

impl Saver<'_> {
    fn save<W: Build>(&mut self, engine: &dyn gol_core::Engine<W>, at: u64) -> Result<()> {
        let start = Instant::now();
        let path = self.schedule.path;
        gol_core::checkpoint::write(path, &engine.snapshot()?, self.rule, self.stamp, at)
            .with_context(|| format!("writing checkpoint {}", path.display()))?;
        self.written += 1;
        self.seconds += start.elapsed().as_secs_f64();
        Ok(())
    }
}

pub(crate) fn print_report(r: &Report, args: &RunArgs) {
    let details = if r.engine_details.is_empty() {
        String::new()
    } else {
        format!(" ({})", r.engine_details)
    };
    let shape = match r.depth {
        Some(d) => format!("{}x{}x{}", r.width, r.height, d),
        None => format!("{}x{}", r.width, r.height),
    };
    println!(
        "Game of Life: {shape} torus, rule {}, {} generations, {}",
        r.rule, r.generations, r.source
    );
    println!("Engine: {}{details}", r.engine);
    println!("Total alive cells: {}", r.alive);
    println!("Input time (sec.): {:.6}", r.input_seconds);
    println!("Set-up time (sec.): {:.6}", r.setup_seconds);
    println!("Generation loop time (sec.): {:.6}", r.seconds);
    println!("Population count time (sec.): {:.6}", r.count_seconds);
    println!("Generations per sec.: {:.2}", r.generations_per_second);
    println!("Cell updates per sec.: {:.3e}", r.cell_updates_per_second);
    if let (Some(gpus), Some(per_gpu)) = (r.gpus, r.cell_updates_per_second_per_gpu) {
        println!("GPUs: {gpus}, cell updates per sec. per GPU: {per_gpu:.3e}");
    }
    if let Some(ranks) = &r.ranks {
        let most = |v: &[u64]| v.iter().copied().max().unwrap_or(0);
        let layer = ranks.layer;
        println!(
            "MPI ranks: {}, {layer}s per rank {:?} with {}-{layer} halos, largest state {} and peak memory {} per rank, halo exchange (sec.): {:.6} at most",
            ranks.count,
            ranks.layers,
            ranks.halo,
            gol_core::memory::human_bytes(most(&ranks.state_bytes)),
            gol_core::memory::human_bytes(most(&ranks.peak_rss_bytes)),
            ranks.exchange_seconds.iter().copied().fold(0.0, f64::max)
        );
    }
    if r.checkpoints > 0 {
        println!(
            "Checkpoints written: {} (sec.): {:.6}",
            r.checkpoints, r.checkpoint_seconds
        );
    }
    for (what, seconds) in &r.engine_timings {
        println!("Engine {what} (sec.): {seconds:.6}");
    }
    if let Some(path) = &args.output {
        let stamp = r
            .stamp
            .map_or(String::new(), |t| format!(", generation stamp {t}"));
        println!(
            "Output written to {}{stamp} (sec.): {:.6}",
            path.display(),
            r.output_seconds
        );
    }
    println!("Total time (sec.): {:.6}", r.total_seconds);
}
