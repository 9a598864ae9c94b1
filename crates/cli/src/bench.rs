//! `gol bench`: engines × sizes → time, generations/s, cell updates/s, speed-up.

use std::time::Instant;

use anyhow::{Context, Result};
use gol_core::engine::{self, Engine, EngineSpec};
use gol_core::{Cube, EngineOptions, Grid, Rule};
use serde::Serialize;

use crate::cli::BenchArgs;
use crate::{machine, plot, scaling};
use gol::Dimension;
use gol_core::EngineId;

#[derive(Serialize)]
struct Row {
    engine: String,
    details: String,
    size: usize,
    generations: u64,
    /// Median over the repetitions, generation loop only.
    seconds: f64,
    generations_per_second: f64,
    cell_updates_per_second: f64,
    speedup_vs_cpu_scalar: f64,
    /// Share of the GPU's one-bit-per-cell bandwidth limit (CUDA engines).
    bandwidth_limit_fraction: Option<f64>,
    /// Share of the integer pipe's limit at the kernel's operations per word (cuda-bitsliced).
    integer_limit_fraction: Option<f64>,
}

#[derive(Serialize)]
struct Results {
    machine: machine::Machine,
    dimension: &'static str,
    #[serde(skip)]
    power: &'static str,
    baseline_side: usize,
    rule: String,
    soup: &'static str,
    reps: usize,
    warmup: usize,
    baseline: Row,
    /// The GPU's limits, where a CUDA engine was timed.
    limits: Option<GpuLimits>,
    results: Vec<Row>,
}

#[derive(Serialize)]
struct GpuLimits {
    copy_bytes_per_second: f64,
    bandwidth_cell_updates_per_second: f64,
    integer_ops_per_second: f64,
}

/// One timed run: wall-clock seconds, and the seconds of it spent exchanging halos (split runs).
#[derive(Clone, Copy)]
pub(crate) struct Sample {
    pub seconds: f64,
    pub exchange_seconds: f64,
}

/// Times `gens` generations `reps` times after `warmup` untimed runs; returns the median run.
pub(crate) fn time<W: Dimension>(
    engine: &mut dyn Engine<W>,
    gens: u64,
    reps: usize,
    warmup: usize,
) -> Result<Sample> {
    for _ in 0..warmup {
        engine.step(gens)?;
    }
    let exchanged = |engine: &dyn Engine<W>| {
        engine
            .timings()
            .iter()
            .find(|(what, _)| *what == gol_core::slab::EXCHANGE_TIMING)
            .map_or(0.0, |&(_, seconds)| seconds)
    };
    let mut samples = Vec::with_capacity(reps);
    for _ in 0..reps.max(1) {
        let before = exchanged(engine);
        let t = Instant::now();
        engine.step(gens)?;
        samples.push(Sample {
            seconds: t.elapsed().as_secs_f64(),
            exchange_seconds: exchanged(engine) - before,
        });
    }
    samples.sort_by(|a, b| a.seconds.total_cmp(&b.seconds));
    Ok(samples[samples.len() / 2])
}

/// Generations that take about `target` seconds, estimated from doubling runs.
pub(crate) fn calibrate<W: Dimension>(engine: &mut dyn Engine<W>, target: f64) -> Result<u64> {
    let mut gens = 1u64;
    loop {
        let t = Instant::now();
        engine.step(gens)?;
        let elapsed = t.elapsed().as_secs_f64();
        if elapsed >= 0.05 || gens >= 1 << 20 {
            return Ok(((target / elapsed * gens as f64) as u64).clamp(1, 1 << 24));
        }
        gens *= 2;
    }
}

/// How one measurement runs.
struct Plan {
    gens: Option<u64>,
    target: f64,
    reps: usize,
    warmup: usize,
}

/// Times `spec` on `grid`, a square soup.
fn measure<W: Dimension>(
    spec: &EngineSpec<W>,
    world: &W,
    rule: Rule,
    plan: &Plan,
    options: &EngineOptions,
) -> Result<Row> {
    let size = world.extent().0;
    let mut engine = (spec.create)(options)?;
    engine.load(world, rule)?;
    let gens = match plan.gens {
        Some(g) => g,
        None => calibrate(engine.as_mut(), plan.target)?,
    };
    let seconds = time(engine.as_mut(), gens, plan.reps, plan.warmup)
        .with_context(|| format!("{} at {size}{}", spec.name(), W::POWER))?
        .seconds;
    let updates = world.cells() as f64 * gens as f64;
    Ok(Row {
        engine: spec.name().to_string(),
        details: engine.details(),
        size,
        generations: gens,
        seconds,
        generations_per_second: gens as f64 / seconds,
        cell_updates_per_second: updates / seconds,
        speedup_vs_cpu_scalar: 0.0,
        bandwidth_limit_fraction: None,
        integer_limit_fraction: None,
    })
}

/// Benchmarks the engines of the dimension `--dim` asks for; the cpu-scalar baseline runs at
/// 1024² (N of Kurnosov's seminar, docs/lineage.md) or 128³.
pub fn bench(args: &BenchArgs) -> Result<()> {
    if let Some(gpus) = args.gpus {
        return scaling::scaling(args, gpus);
    }
    match args.dim {
        2 => bench_in::<Grid>(args, 1024),
        3 => bench_in::<Cube>(args, 128),
        d => anyhow::bail!("--dim {d} is not a dimension gol runs; use 2 or 3"),
    }
}

/// Benchmarks the engines of one dimension; the speed-up is against cpu-scalar at
/// `baseline_side`.
fn bench_in<W: Dimension>(args: &BenchArgs, baseline_side: usize) -> Result<()> {
    let rule = match &args.rule {
        Some(text) => Rule::parse(text)?,
        None => W::DEFAULT_RULE,
    };
    let options = EngineOptions {
        block: args.block,
        ..Default::default()
    };
    rule.check_neighbours(W::NEIGHBOURS)?;
    let all = W::registry();
    let specs: Vec<EngineSpec<W>> = if args.engines.is_empty() {
        all.iter()
            .copied()
            .filter(|s| (s.create)(&options).is_ok())
            .collect()
    } else {
        args.engines
            .iter()
            .map(|&id| engine::find(&all, id).copied())
            .collect::<gol_core::Result<_>>()?
    };
    if specs.is_empty() {
        // Nothing here runs with these options: say why each engine cannot.
        let reasons: Vec<String> = (all.iter())
            .filter_map(|s| (s.create)(&options).err().map(|e| e.to_string()))
            .collect();
        anyhow::bail!("no engine can run here: {}", reasons.join("; "));
    }
    for &size in &args.sizes {
        W::check_side(size)?;
    }
    let scalar = engine::find(&all, EngineId::CpuScalar)?;
    eprintln!(
        "measuring the cpu-scalar baseline at {baseline_side}{}…",
        W::POWER
    );
    let base_plan = Plan {
        gens: None,
        target: 1.0,
        reps: 3,
        warmup: 0,
    };
    let mut baseline = measure(
        scalar,
        &W::glibc_soup(baseline_side, 1)?,
        rule,
        &base_plan,
        &EngineOptions::default(),
    )?;
    let plan = Plan {
        gens: args.gens,
        target: args.target,
        reps: args.reps,
        warmup: args.warmup,
    };
    baseline.speedup_vs_cpu_scalar = 1.0;
    let limits = if specs.iter().any(|s| s.id.on_gpu()) {
        eprintln!("measuring the GPU's copy bandwidth…");
        Some(gol_cuda::limits()?)
    } else {
        None
    };
    // One soup per size, shared by every engine; rows are reported engine by engine.
    let mut measured = Vec::new();
    for (s, &size) in args.sizes.iter().enumerate() {
        let soup = W::glibc_soup(size, 1)?;
        for (e, spec) in specs.iter().enumerate() {
            eprintln!("{} at {size}{}…", spec.name(), W::POWER);
            let mut row = measure(spec, &soup, rule, &plan, &options)?;
            row.speedup_vs_cpu_scalar =
                row.cell_updates_per_second / baseline.cell_updates_per_second;
            if let (Some(limits), true) = (limits, spec.id.on_gpu()) {
                let cups = row.cell_updates_per_second;
                row.bandwidth_limit_fraction = Some(cups / limits.bandwidth_cups());
                if spec.id == EngineId::CudaBitsliced && W::NEIGHBOURS == 8 {
                    let ops = gol_cuda::bitsliced::operations_per_word(rule) as f64;
                    row.integer_limit_fraction = Some(cups / limits.integer_cups(ops));
                }
            }
            measured.push((e, s, row));
        }
    }
    measured.sort_by_key(|&(e, s, _)| (e, s));
    let results = measured.into_iter().map(|(_, _, row)| row).collect();
    let out = Results {
        machine: machine::describe(),
        dimension: W::DIMENSION,
        power: W::POWER,
        baseline_side,
        rule: rule.to_string(),
        soup: "glibc rand() % 2, seed 1",
        reps: args.reps,
        warmup: args.warmup,
        baseline,
        limits: limits.map(|l| GpuLimits {
            copy_bytes_per_second: l.copy_bytes_per_second,
            bandwidth_cell_updates_per_second: l.bandwidth_cups(),
            integer_ops_per_second: l.integer_ops_per_second,
        }),
        results,
    };
    print_table(&out);
    let points: Vec<plot::Point> = out
        .results
        .iter()
        .map(|r| plot::Point {
            series: r.engine.clone(),
            size: r.size,
            cups: r.cell_updates_per_second,
        })
        .collect();
    let title = format!(
        "gol bench, {} {}, {}",
        out.dimension, out.rule, out.machine.cpu
    );
    std::fs::write(&args.plot, plot::svg(&title, &points))
        .with_context(|| format!("{}: cannot write the plot", args.plot.display()))?;
    eprintln!("plot written to {}", args.plot.display());
    write_results(&args.json, &out)
}

/// Writes a benchmark's results as JSON to `path` and says where.
pub(crate) fn write_results(path: &std::path::Path, out: &impl Serialize) -> Result<()> {
    let json = serde_json::to_string_pretty(out)?;
    std::fs::write(path, json + "\n")
        .with_context(|| format!("{}: cannot write the results", path.display()))?;
    eprintln!("results written to {}", path.display());
    Ok(())
}

fn print_table(out: &Results) {
    println!(
        "Machine: {} ({} threads); rule {}; soup: {}; median of {} runs after {} warm-up",
        out.machine.cpu, out.machine.threads, out.rule, out.soup, out.reps, out.warmup
    );
    println!(
        "Speed-up against cpu-scalar at {}{}: {:.3e} cell updates/s\n",
        out.baseline_side, out.power, out.baseline.cell_updates_per_second
    );
    if let Some(l) = &out.limits {
        println!(
            "GPU limits: copy {:.2} TB/s (read + write), so {:.3e} cell updates/s at one bit per cell and one generation per pass; integer pipe {:.3e} operations/s\n",
            l.copy_bytes_per_second / 1e12,
            l.bandwidth_cell_updates_per_second,
            l.integer_ops_per_second
        );
    }
    println!(
        "| engine | size | generations | time (s) | generations/s | cell updates/s | speed-up | of bandwidth limit | of integer limit |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for r in &out.results {
        let name = if r.details.is_empty() {
            r.engine.clone()
        } else {
            format!("{} ({})", r.engine, r.details)
        };
        let percent =
            |f: Option<f64>| f.map_or("—".to_string(), |f| format!("{:.0}%", f * 100.0));
        println!(
            "| {name} | {0}{8} | {1} | {2:.4} | {3:.1} | {4:.3e} | {5:.1}× | {6} | {7} |",
            r.size,
            r.generations,
            r.seconds,
            r.generations_per_second,
            r.cell_updates_per_second,
            r.speedup_vs_cpu_scalar,
            percent(r.bandwidth_limit_fraction),
            percent(r.integer_limit_fraction),
            out.power
        );
    }
}
