//! `gol bench --gpus`: how split runs scale over the GPUs of the machine, against the unsplit
//! engine on one GPU.
//!
//! For each size S: the unsplit engine on an S × S torus (the baseline), then on n = 1, 2, 4, …
//! GPUs (and the count asked for) a weak run, an S × S·n torus (S² per GPU), and a strong run,
//! the S × S torus over n GPUs. Weak efficiency is the cell updates/s over n × the baseline's;
//! strong efficiency is the speed-up over the baseline's time, over n.

use anyhow::{Context, Result};
use gol_core::seed::density_soup;
use gol_core::{Engine, EngineOptions, Grid, Rule};
use serde::Serialize;

use crate::bench::{calibrate, time, write_results, Sample};
use crate::cli::{BenchArgs, Gpus};
use crate::machine;
use gol::registry;
use gol::{Dimension, EngineId, Split};

/// Density and seed of the soups (the fast generator: the weak runs' tori are large).
const DENSITY: f64 = 0.3;
const SEED: u64 = 1;

#[derive(Serialize)]
struct Run {
    /// `unsplit`, `weak` or `strong`.
    scaling: &'static str,
    gpus: usize,
    width: usize,
    height: usize,
    generations: u64,
    /// Median over the repetitions, generation loop with its exchanges.
    seconds: f64,
    /// Of `seconds`, the time spent exchanging halos.
    exchange_seconds: f64,
    cell_updates_per_second: f64,
    cell_updates_per_second_per_gpu: f64,
    /// Strong runs: the unsplit engine's time over this one's.
    speedup: Option<f64>,
    /// Weak: per-GPU cell updates/s over the unsplit engine's; strong: speed-up over GPUs.
    efficiency: f64,
    details: String,
}

#[derive(Serialize)]
struct Scaling {
    machine: machine::Machine,
    engine: String,
    rule: String,
    soup: String,
    halo: usize,
    reps: usize,
    warmup: usize,
    runs: Vec<Run>,
}

/// The GPU counts measured up to `most`: the powers of two below it, and itself.
fn counts(most: usize) -> Vec<usize> {
    let mut counts: Vec<usize> = (0..usize::BITS)
        .map(|k| 1 << k)
        .take_while(|&n| n < most)
        .collect();
    counts.push(most);
    counts
}

/// Runs the scaling measurements `args` asks for over `gpus`.
pub fn scaling(args: &BenchArgs, gpus: Gpus) -> Result<()> {
    if args.dim != 2 {
        anyhow::bail!(
            "bench --gpus measures 2D scaling only; time a split cube with gol run --dim 3 --gpus N"
        );
    }
    let name = match args.engines.as_slice() {
        [] => EngineId::CudaBitsliced,
        [one] => *one,
        _ => anyhow::bail!("--gpus measures one engine at a time; name one with --engines"),
    };
    let rule = match &args.rule {
        Some(text) => Rule::parse(text)?,
        None => Grid::DEFAULT_RULE,
    };
    let split = match gpus {
        Gpus::All => Split::AllGpus,
        Gpus::Count(n) => Split::Gpus(n),
    };
    let most = registry::gpu_count(split)?.expect("a split over GPUs");
    let options = EngineOptions {
        block: args.block,
        ..Default::default()
    };
    for &size in &args.sizes {
        Grid::check_side(size)?;
    }
    let mut runs = Vec::new();
    for &size in &args.sizes {
        eprintln!("{name} at {size}², one GPU, unsplit…");
        let soup = density_soup(size, size, DENSITY, SEED)?;
        let mut engine = registry::create::<Grid>(name, &options)?;
        engine.load(&soup, rule)?;
        let gens = match args.gens {
            Some(gens) => gens,
            None => calibrate(engine.as_mut(), args.target)?,
        };
        let timed = |engine: &mut dyn Engine| {
            time(engine, gens, args.reps, args.warmup).with_context(|| format!("{name} at {size}²"))
        };
        let baseline = timed(engine.as_mut())?;
        let details = engine.details();
        drop(engine);
        let row = |scaling, gpus, height, sample: Sample, details| {
            let cups = size as f64 * height as f64 * gens as f64 / sample.seconds;
            let per_gpu = cups / gpus as f64;
            let speedup = baseline.seconds / sample.seconds;
            Run {
                scaling,
                gpus,
                width: size,
                height,
                generations: gens,
                seconds: sample.seconds,
                exchange_seconds: sample.exchange_seconds,
                cell_updates_per_second: cups,
                cell_updates_per_second_per_gpu: per_gpu,
                speedup: (scaling == "strong").then_some(speedup),
                efficiency: if scaling == "strong" {
                    speedup / gpus as f64
                } else {
                    per_gpu * baseline.seconds / (size as f64 * size as f64 * gens as f64)
                },
                details,
            }
        };
        runs.push(row("unsplit", 1, size, baseline, details));
        for n in counts(most) {
            for (scaling, height) in [("weak", size * n), ("strong", size)] {
                eprintln!("{name}, {scaling} scaling, {size} × {height} on {n} GPU(s)…");
                let grid = if height == size {
                    soup.clone()
                } else {
                    density_soup(size, height, DENSITY, SEED)?
                };
                let mut split = registry::split::<Grid>(name, &options, n, n, args.halo)?;
                split.load(&grid, rule)?;
                drop(grid);
                let sample = timed(split.as_mut())?;
                runs.push(row(scaling, n, height, sample, split.details()));
            }
        }
    }
    let out = Scaling {
        machine: machine::describe(),
        engine: name.to_string(),
        rule: rule.to_string(),
        soup: format!("density {DENSITY}, seed {SEED}"),
        halo: args.halo,
        reps: args.reps,
        warmup: args.warmup,
        runs,
    };
    print_table(&out);
    write_results(&args.json, &out)
}

fn print_table(out: &Scaling) {
    println!(
        "Machine: {} ({} threads); {} on GPUs, rule {}; soup: {}; halo {} rows; median of {} runs after {} warm-up",
        out.machine.cpu,
        out.machine.threads,
        out.engine,
        out.rule,
        out.soup,
        out.halo,
        out.reps,
        out.warmup
    );
    println!(
        "\n| scaling | GPUs | size | generations | time (s) | halo exchange (s) | cell updates/s | per GPU | speed-up | efficiency |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for r in &out.runs {
        println!(
            "| {} | {} | {}×{} | {} | {:.4} | {:.4} | {:.3e} | {:.3e} | {} | {:.1}% |",
            r.scaling,
            r.gpus,
            r.width,
            r.height,
            r.generations,
            r.seconds,
            r.exchange_seconds,
            r.cell_updates_per_second,
            r.cell_updates_per_second_per_gpu,
            r.speedup.map_or("—".into(), |s| format!("{s:.2}×")),
            r.efficiency * 100.0
        );
    }
    if let Some(split) = out.runs.iter().rfind(|r| r.scaling != "unsplit") {
        println!("\nSplit runs: {}", split.details);
    }
}

#[cfg(test)]
mod test {
    use super::counts;

    #[test]
    fn gpu_counts_double_up_to_the_most() {
        assert_eq!(counts(1), [1]);
        assert_eq!(counts(4), [1, 2, 4]);
        assert_eq!(counts(6), [1, 2, 4, 6]);
        assert_eq!(counts(8), [1, 2, 4, 8]);
    }
}
