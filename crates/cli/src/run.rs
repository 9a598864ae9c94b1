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
struct Report {
    alive: u64,
    generations: u64,
    width: usize,
    height: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    depth: Option<usize>,
    /// The generation stamp written to a `.bin` output (the input's stamp plus the run).
    #[serde(skip_serializing_if = "Option::is_none")]
    stamp: Option<u64>,
    engine: String,
    engine_details: String,
    rule: String,
    source: String,
    /// The generation loop alone.
    seconds: f64,
    /// Reading the input file or making the soup.
    input_seconds: f64,
    /// Making the engine and loading the state into it (on a GPU: device start-up, kernel
    /// compilation or cache, allocation, the copy to the device), beyond what overlapped the
    /// input.
    setup_seconds: f64,
    output_seconds: f64,
    total_seconds: f64,
    generations_per_second: f64,
    cell_updates_per_second: f64,
    /// Times the engine measured itself (GPU copies, the loop timed with CUDA events).
    engine_timings: std::collections::BTreeMap<String, f64>,
}

pub fn run(args: &RunArgs) -> Result<()> {
    if problem::is_3d(&args.problem)? {
        run_in::<Cube>(args)
    } else {
        run_in::<Grid>(args)
    }
}

fn run_in<W: Build>(args: &RunArgs) -> Result<()> {
    let start = Instant::now();
    let options = gol_core::EngineOptions { block: args.block };
    // The engine (on a GPU: the driver and the device's start-up) is made while the input is
    // read or generated.
    let (engine, problem, input_seconds) = std::thread::scope(|scope| {
        let maker = scope.spawn(|| engines::create::<W>(&args.engine, &options));
        let problem = W::build(&args.problem);
        let input_seconds = start.elapsed().as_secs_f64();
        let engine = maker.join().expect("making an engine does not panic");
        (engine, problem, input_seconds)
    });
    let (problem, mut engine) = (problem?, engine?);
    let (world, rule) = (&problem.world, problem.rule);
    let gens = args.problem.gens;
    engine.load(world, rule)?;
    let setup = start.elapsed().as_secs_f64() - input_seconds;

    let updates = world.cells() as f64 * gens as f64;
    let loop_start = Instant::now();
    if std::io::stderr().is_terminal() && updates >= PROGRESS_MIN_UPDATES && !args.json {
        let bar = ProgressBar::new(gens).with_style(
            ProgressStyle::with_template("{bar:40} {pos}/{len} generations, {eta} left")
                .expect("the template is valid"),
        );
        let chunk = gens.div_ceil(200).max(1);
        let mut done = 0;
        while done < gens {
            let n = chunk.min(gens - done);
            engine.step(n)?;
            done += n;
            bar.set_position(done);
        }
        bar.finish_and_clear();
    } else {
        engine.step(gens)?;
    }
    let alive = engine.population()?;
    let seconds = loop_start.elapsed().as_secs_f64();

    let (width, height, depth) = world.extent();
    let stamp = depth.map(|_| problem.stamp + gens);
    let output_start = Instant::now();
    if let Some(path) = &args.output {
        engine
            .snapshot()?
            .write(path, rule, problem.stamp + gens)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    let output_seconds = output_start.elapsed().as_secs_f64();

    let report = Report {
        alive,
        generations: gens,
        width,
        height,
        depth,
        stamp,
        engine: engine.name().to_string(),
        engine_details: engine.details(),
        rule: rule.to_string(),
        source: problem.source.describe(),
        seconds,
        input_seconds,
        setup_seconds: setup,
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

fn print_report(r: &Report, args: &RunArgs) {
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
    println!("Generations per sec.: {:.2}", r.generations_per_second);
    println!("Cell updates per sec.: {:.3e}", r.cell_updates_per_second);
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
