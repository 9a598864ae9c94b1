//! `gol run` on the infinite plane: a [`PlaneSimulation`] stepped to an exact generation of any
//! size, reported with exact counts and its bounding box.

use std::time::Instant;

use anyhow::{bail, Result};
use gol::output::{Animation, Format, Picture};
use gol::{PlaneSimulation, PlaneView, Setup};
use gol_plane::{Rect, Stepped};
use num_bigint::BigUint;
use num_traits::{ToPrimitive, Zero};
use serde::Serialize;

use crate::cli::RunArgs;
use crate::interrupt::{self, Interrupted};

/// An exact integer of any size, written into JSON as a plain number (JavaScript's numbers lose
/// precision above 2^53: the README says so).
#[derive(Clone, Debug)]
struct Exact(String);

impl Serialize for Exact {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let raw = serde_json::value::RawValue::from_string(self.0.clone())
            .map_err(serde::ser::Error::custom)?;
        raw.serialize(s)
    }
}

impl<T: ToString> From<&T> for Exact {
    fn from(n: &T) -> Exact {
        Exact(n.to_string())
    }
}

/// `done` generations in `seconds`, a second, in scientific notation with seven significant
/// digits (`1.394776e4`) at any size.
fn rate(done: &BigUint, seconds: f64) -> Exact {
    if done.is_zero() {
        return Exact("0".into());
    }
    // done = lead × 10^(digits − 1), lead from its first 17 digits (a double's precision).
    let digits = done.to_string();
    let lead = &digits[..digits.len().min(17)];
    let lead = lead.parse::<f64>().unwrap_or(1.0) / 10f64.powi(lead.len() as i32 - 1);
    let mut mantissa = lead / seconds.max(1e-9);
    let mut exponent = digits.len() as i64 - 1;
    let shift = mantissa.log10().floor();
    mantissa /= 10f64.powf(shift);
    exponent += shift as i64;
    let mut text = format!("{mantissa:.6}");
    // 9.9999996 rounds up to 10.000000.
    if text.starts_with("10") {
        exponent += 1;
        text = format!("{:.6}", mantissa / 10.0);
    }
    Exact(format!("{text}e{exponent}"))
}

/// A bounding box in the JSON report.
#[derive(Serialize)]
struct Bounds {
    x: Exact,
    y: Exact,
    width: Exact,
    height: Exact,
}

impl From<&Rect> for Bounds {
    fn from(r: &Rect) -> Bounds {
        Bounds {
            x: (&r.x).into(),
            y: (&r.y).into(),
            width: (&r.width).into(),
            height: (&r.height).into(),
        }
    }
}

/// The machine-readable report of a run on the plane (`--json`).
#[derive(Serialize)]
struct Report {
    alive: Exact,
    /// Under a Generations rule, the cells in state 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    live: Option<Exact>,
    generations: Exact,
    /// The universe: "infinite plane".
    universe: &'static str,
    /// The smallest rectangle holding every live cell (`null` for an empty plane): its top-left
    /// cell in Golly's coordinates and its size.
    bounding_box: Option<Bounds>,
    /// The input's own generation plus the run (`#CXRLE Gen=` of an output), where the input
    /// gave one.
    #[serde(skip_serializing_if = "Option::is_none")]
    stamp: Option<Exact>,
    #[serde(skip_serializing_if = "Option::is_none")]
    resumed_at: Option<Exact>,
    #[serde(skip_serializing_if = "Option::is_none")]
    frames: Option<u64>,
    checkpoints: u64,
    checkpoint_seconds: f64,
    interrupted: bool,
    engine: String,
    engine_choice: String,
    engine_details: String,
    rule: String,
    source: String,
    seconds: f64,
    input_seconds: f64,
    setup_seconds: f64,
    count_seconds: f64,
    output_seconds: f64,
    total_seconds: f64,
    /// A JSON number at any size (a double holds no more than about 1.8e308).
    generations_per_second: Exact,
    /// Bytes of the engine's state (HashLife's nodes) at the end.
    memory_bytes: u64,
    /// The process's peak resident memory.
    peak_rss_bytes: u64,
    /// What the world is at the end (`--identify`).
    #[serde(skip_serializing_if = "Option::is_none")]
    identity: Option<gol::identify::Report>,
}

/// The frames of a `.gif` output on the plane: the animation, its view, the generations (from
/// this run's start) still to be taken.
struct Frames {
    animation: Animation,
    view: PlaneView,
    stops: Vec<BigUint>,
    taken: usize,
    seconds: f64,
}

impl Frames {
    fn next(&self) -> Option<&BigUint> {
        self.stops.get(self.taken)
    }

    /// Takes the frames due at generation `done` of the run.
    fn take(&mut self, sim: &PlaneSimulation, done: &BigUint) -> Result<()> {
        while self.next().is_some_and(|at| at <= done) {
            let start = Instant::now();
            self.animation
                .add_frame(sim.picture(Some(&self.view), None)?)?;
            self.taken += 1;
            self.seconds += start.elapsed().as_secs_f64();
        }
        Ok(())
    }
}

/// The generations of the frames of a run of `gens`: as on a grid where `gens` fits in 64 bits,
/// else `frames` (default 100) spread evenly.
fn frame_stops(gens: &BigUint, every: Option<u64>, frames: Option<u64>) -> Result<Vec<BigUint>> {
    if let Some(g) = gens.to_u64() {
        let stops = gol_core::picture::frame_generations(g, every, frames)?;
        return Ok(stops.into_iter().map(BigUint::from).collect());
    }
    if every.is_some() {
        bail!("--every: a run of {gens} generations would have too many frames; use --frames");
    }
    let n = frames.unwrap_or(100);
    if n < 2 {
        bail!("--frames is at least 2 (the first generation and the last)");
    }
    Ok((0..n).map(|i| gens * i / (n - 1)).collect())
}

pub fn run(args: &RunArgs, setup: &Setup, read: crate::run::Read) -> Result<()> {
    let start = read.begun;
    if args.gpus.is_some() || args.halo.is_some() {
        bail!("--gpus and --halo split bounded grids; the infinite plane runs in one process");
    }
    let view = args.view.as_deref().map(PlaneView::parse).transpose()?;
    let format = match &args.output {
        Some(path) => {
            let format = gol::plane::check_output(path)?;
            gol::output::probe(path)?;
            Some(format)
        }
        None => None,
    };
    let pictured = matches!(format, Some(Format::Png | Format::Gif));
    if !pictured && (view.is_some() || args.scale.is_some()) {
        bail!("--view and --scale draw an --output .png or .gif");
    }
    if format != Some(Format::Gif) && (args.frames.is_some() || args.every.is_some()) {
        bail!("--frames and --every choose the frames of a .gif output");
    }
    if let Some(path) = &args.checkpoint {
        gol::output::probe(path)?;
    }
    if let Some(path) = &args.output {
        interrupt::remove_if_ended(&gol_core::replace::temporary_name(path));
    }
    let mut sim = PlaneSimulation::new(setup)?;
    let total = &args.problem.gens;
    if sim.generation() > total {
        bail!("{} is beyond --gens {total}", sim.source());
    }
    let began = sim.generation().clone();
    let gens = total - &began;
    let mut frames = match (&args.output, format) {
        (Some(path), Some(Format::Gif)) => Some(Frames {
            animation: Animation::create(path, Picture::default())?,
            // Everything the run can reach: the start's box grown by one cell a generation.
            view: view.clone().unwrap_or_else(|| {
                sim.default_view()
                    .grown(gens.to_u64().unwrap_or(u64::MAX / 4).min(u64::MAX / 4))
            }),
            stops: frame_stops(&gens, args.every, args.frames)?,
            taken: 0,
            seconds: 0.0,
        }),
        _ => None,
    };
    let zero = BigUint::zero();
    if let Some(frames) = &mut frames {
        frames.take(&sim, &zero)?;
    }
    interrupt::looping();
    let mut stopped = false;
    loop {
        let done = sim.generation() - &began;
        let target = frames
            .as_ref()
            .and_then(|f| f.next().cloned())
            .unwrap_or_else(|| gens.clone())
            .min(gens.clone());
        if done >= gens || interrupt::received().is_some() {
            break;
        }
        let ended = sim.step(&(&target - &done), &interrupt::STOP)?;
        let done = sim.generation() - &began;
        if let Some(frames) = &mut frames {
            frames.take(&sim, &done)?;
        }
        if ended == Stepped::Stopped {
            stopped = true;
            break;
        }
    }
    let stopped_by = interrupt::received().filter(|_| stopped || sim.generation() < total);
    if args.checkpoint.is_some() {
        sim.checkpoint()?;
    }
    let timings = sim.timings();
    let count_start = Instant::now();
    let alive = sim.population();
    let live = sim.live();
    let bounds = sim.bounding_box();
    let count_seconds = count_start.elapsed().as_secs_f64();
    let done = sim.generation() - &began;
    let seconds = timings.stepping;
    let mut report = Report {
        alive: (&alive).into(),
        live: live.as_ref().map(Exact::from),
        generations: sim.generation().into(),
        universe: "infinite plane",
        bounding_box: bounds.as_ref().map(Bounds::from),
        stamp: (sim.stamp() != *sim.generation()).then(|| (&sim.stamp()).into()),
        resumed_at: args.resume.as_ref().map(|_| sim.resumed_at().into()),
        frames: frames.as_ref().map(|f| f.taken as u64),
        checkpoints: timings.checkpoints,
        checkpoint_seconds: timings.checkpointing,
        interrupted: stopped_by.is_some(),
        engine: sim.engine().to_string(),
        engine_choice: sim.resolved().reason.clone(),
        engine_details: sim.details(),
        rule: sim.rule().to_string(),
        source: sim.source().to_string(),
        seconds,
        input_seconds: read.seconds + timings.input,
        setup_seconds: timings.setup,
        count_seconds,
        output_seconds: 0.0,
        total_seconds: 0.0,
        generations_per_second: rate(&done, seconds),
        memory_bytes: sim.memory_bytes(),
        peak_rss_bytes: 0,
        identity: None,
    };
    if args.identify && stopped_by.is_none() {
        report.identity = Some(crate::identify::after_run(
            |limit, stop| sim.identify(limit, stop),
            args.max_gens,
            &report.rule,
            &format!("the pattern at generation {}", sim.generation()),
        )?);
    }
    let reached = sim.generation().clone();
    let output_start = Instant::now();
    let frame_seconds = frames.as_ref().map_or(0.0, |f| f.seconds);
    if stopped_by.is_some() {
        // An interrupted run writes no output: it would not be the state asked for.
    } else if let Some(frames) = frames {
        frames.animation.finish()?;
    } else if let Some(path) = &args.output {
        sim.save(path, view.as_ref(), args.scale)?;
    }
    report.output_seconds = output_start.elapsed().as_secs_f64() + frame_seconds;
    report.total_seconds = start.elapsed().as_secs_f64();
    report.peak_rss_bytes = gol_core::memory::usage().peak_rss_bytes;
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        print_report(&report, args, bounds.as_ref());
    }
    match stopped_by {
        Some(signal) => Err(Interrupted {
            signal,
            message: crate::run::interrupted_message(args, signal, &reached, total),
        }
        .into()),
        None => Ok(()),
    }
}

fn print_report(r: &Report, args: &RunArgs, bounds: Option<&Rect>) {
    let details = match r.engine_details.as_str() {
        "" => String::new(),
        d => format!(" ({d})"),
    };
    let from = match &r.stamp {
        Some(stamp) => format!(" (generation {} of the input)", stamp.0),
        None => String::new(),
    };
    println!(
        "Game of Life: infinite plane, rule {}, {} generations{from}, {}",
        r.rule, r.generations.0, r.source
    );
    println!("Engine: {}{details}", r.engine);
    println!("Engine choice: {}", r.engine_choice);
    println!("Total alive cells: {}", r.alive.0);
    if let Some(live) = &r.live {
        println!("Live (state 1) cells: {}", live.0);
    }
    match bounds {
        Some(b) => println!(
            "Bounding box: x {}, y {}, width {}, height {} (X,Y,W,H {b})",
            b.x, b.y, b.width, b.height
        ),
        None => println!("Bounding box: none (no live cells)"),
    }
    println!("Input time (sec.): {:.6}", r.input_seconds);
    println!("Set-up time (sec.): {:.6}", r.setup_seconds);
    println!("Generation loop time (sec.): {:.6}", r.seconds);
    println!("Population count time (sec.): {:.6}", r.count_seconds);
    println!("Generations per sec.: {}", r.generations_per_second.0);
    println!(
        "Memory: {} of nodes, peak resident {}",
        gol_core::memory::human_bytes(r.memory_bytes),
        gol_core::memory::human_bytes(r.peak_rss_bytes)
    );
    if r.checkpoints > 0 {
        println!(
            "Checkpoints written: {} (sec.): {:.6}",
            r.checkpoints, r.checkpoint_seconds
        );
    }
    if let Some(path) = &args.output {
        let frames = r.frames.map_or(String::new(), |n| format!(", {n} frames"));
        crate::run::print_output(path, r.interrupted, &frames, r.output_seconds);
    }
    println!("Total time (sec.): {:.6}", r.total_seconds);
    if let Some(identity) = &r.identity {
        print!("{identity}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_are_numbers_at_any_size() {
        let rate = |done: BigUint, seconds| rate(&done, seconds).0;
        assert_eq!(rate(BigUint::from(13_947u32), 1.0), "1.394700e4");
        assert_eq!(rate(BigUint::from(0u32), 2.0), "0");
        assert_eq!(rate(BigUint::from(1u32), 4.0), "2.500000e-1");
        assert_eq!(rate(BigUint::from(999_999_999u32), 100.0), "1.000000e7");
        let huge = BigUint::from(10u32).pow(1000);
        assert_eq!(rate(huge.clone(), 0.5), "2.000000e1000");
        assert_eq!(rate(huge * 3u32, 2.0), "1.500000e1000");
        // 7^500 / 3 = 1.180…e422 (Python: 7**500 // 3).
        let text = rate(BigUint::from(7u32).pow(500), 3.0);
        assert!(text.starts_with("1.18") && text.ends_with("e422"), "{text}");
    }
}
