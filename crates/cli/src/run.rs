//! `gol run`: one simulation through the library's [`Simulation`], reported as the C programs
//! report theirs (docs/lineage.md).

use std::io::IsTerminal;
use std::time::Instant;

use anyhow::Result;
use gol::output::{Animation, Format, Picture};
use gol::{Checkpoints, Cube, Dim, Dimension, Grid, Rule, Setup, Simulation, Size, Split, Start};
use gol_core::picture::{frame_generations, View};
use indicatif::{ProgressBar, ProgressStyle};
use num_traits::ToPrimitive;
use serde::Serialize;

use crate::cli::{Gpus, ProblemArgs, RunArgs};
use crate::interrupt::{self, Interrupted};

/// Runs with fewer cell updates than this get no progress bar.
const PROGRESS_MIN_UPDATES: f64 = 2e10;

/// Cell updates of the first chunk of generations on a CPU, between two looks for a signal.
const CHUNK_UPDATES: u64 = 1 << 30;

/// The fewest and the most cell updates of the first chunk on GPUs, which run them a hundred
/// times faster than a CPU and idle at the start and end of every chunk; between them, as many
/// as the cost model that `auto` chooses by says take CHUNK_SECONDS. 2^30 made 1024³ × 1024 on
/// two GPUs begin with a chunk of one generation (0.3 ms for 60 µs of work) and run in 4
/// chunks; 2^36 in 2; the model in one, 0.3 ms faster. The most keeps a model that is wrong
/// for this GPU from delaying the answer to a signal long (2^40 updates take 0.1 s on an H200
/// at 1024³, 0.6 s on the generic 3D kernel).
const GPU_CHUNK_UPDATES: std::ops::RangeInclusive<u64> = (1 << 36)..=(1 << 40);

/// The time the later chunks aim at: a signal is answered within about this long.
const CHUNK_SECONDS: f64 = 0.25;

/// The most generations a chunk has over the last one's. Where time grows with generations, a
/// chunk sized from the last one's rate stays near CHUNK_SECONDS anyway; the cap guards against
/// rates measured on chunks too short to time well. Every chunk ends waiting for the engine, and
/// on GPUs each start leaves them idle until the host has queued work again: growing 16-fold
/// rather than 4-fold, 1024³ × 1024 on two GPUs ran in 4 chunks rather than 6 (from a first
/// chunk of one generation).
const CHUNK_GROWTH: u64 = 16;

/// The machine-readable report (`--json`).
#[derive(Serialize)]
pub(crate) struct Report {
    pub(crate) alive: u64,
    /// Under a Generations rule, the cells in state 1 (`alive` counts the dying ones too).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) live: Option<u64>,
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
    /// Frames of a `.gif` output.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) frames: Option<u64>,
    /// Checkpoints written, and the time they took (not counted in `seconds`).
    pub(crate) checkpoints: u64,
    pub(crate) checkpoint_seconds: f64,
    /// Whether SIGINT or SIGTERM stopped the run before its last generation (`generations` is
    /// then the generation reached).
    pub(crate) interrupted: bool,
    /// The ranks of an MPI run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) ranks: Option<Ranks>,
    pub(crate) engine: String,
    /// Why this engine: "asked for", or what `auto` compared.
    pub(crate) engine_choice: String,
    pub(crate) engine_details: String,
    pub(crate) rule: String,
    /// What lies past the edges: "torus" or "bounded plane".
    pub(crate) topology: &'static str,
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
    /// What the world is at the end (`--identify`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) identity: Option<gol::identify::Report>,
}

pub fn run(args: &RunArgs) -> Result<()> {
    // The input file is read once, here (its header says whether the run is on the plane);
    // the report's input and total times count it.
    let read = Read::start();
    let setup = setup(args)?.opened()?;
    let read = read.done();
    // Input, output and checkpoint are three files, links followed.
    let files: Vec<(&str, &std::path::Path)> = [
        ("--input", &args.problem.input),
        ("--output", &args.output),
        ("--checkpoint", &args.checkpoint),
    ]
    .into_iter()
    .filter_map(|(flag, path)| Some((flag, path.as_deref()?)))
    .collect();
    gol::output::check_distinct(&files)?;
    // From here on SIGINT and SIGTERM stop the run between chunks (an MPI run's ranks agree on
    // the round to stop after).
    interrupt::catch();
    let on_plane = setup.on_plane()?;
    if args.identify && crate::machine::mpi_ranks().is_some_and(|n| n > 1) {
        anyhow::bail!("--identify looks at the world in one process; run without MPI ranks");
    }
    if on_plane && crate::machine::mpi_ranks().is_some_and(|n| n > 1) {
        anyhow::bail!("MPI ranks split bounded grids; the infinite plane runs in one process");
    }
    if on_plane {
        return crate::plane::run(args, &setup, read);
    }
    #[cfg(feature = "mpi")]
    if crate::ranks::launched() {
        return crate::ranks::run(args, &setup);
    }
    #[cfg(not(feature = "mpi"))]
    if let Some(ranks) = crate::machine::mpi_ranks().filter(|&n| n > 1) {
        anyhow::bail!(
            "started as one of {ranks} MPI ranks, but this gol was built without MPI: build it with `cargo build --release --features mpi`"
        );
    }
    match setup.dimension()? {
        Dim::Two => run_in::<Grid>(args, &setup, read),
        Dim::Three => run_in::<Cube>(args, &setup, read),
    }
}

/// When a run began, and the seconds its input file took to read before the world was made.
#[derive(Clone, Copy)]
pub(crate) struct Read {
    pub(crate) begun: Instant,
    pub(crate) seconds: f64,
}

impl Read {
    fn start() -> Read {
        Read {
            begun: Instant::now(),
            seconds: 0.0,
        }
    }

    fn done(self) -> Read {
        Read {
            seconds: self.begun.elapsed().as_secs_f64(),
            ..self
        }
    }
}

/// The library's description of the run the options ask for.
pub(crate) fn setup(args: &RunArgs) -> Result<Setup> {
    Ok(Setup {
        split: match args.gpus {
            None => Split::None,
            Some(Gpus::All) => Split::AllGpus,
            Some(Gpus::Count(n)) => Split::Gpus(n),
        },
        halo: args.halo,
        checkpoints: args.checkpoint.as_ref().map(|path| Checkpoints {
            path: path.clone(),
            every: args.checkpoint_every,
        }),
        ..setup_of(&args.problem, args.resume.as_ref(), args.engine, args.block)?
    })
}

/// The setup of the problem options (start, size, rule), a checkpoint to resume, an engine
/// and a block size: what `gol run` and `gol view` share.
pub(crate) fn setup_of(
    p: &ProblemArgs,
    resume: Option<&std::path::PathBuf>,
    engine: gol::EngineChoice,
    block: Option<(u32, u32)>,
) -> Result<Setup> {
    let dim = match p.dim {
        2 => Dim::Two,
        3 => Dim::Three,
        d => anyhow::bail!("--dim {d} is not a dimension gol runs; use 2 or 3"),
    };
    if p.input.is_some() && (p.seed.is_some() || p.density.is_some()) {
        anyhow::bail!("--seed and --density make a random soup; they cannot be used with --input");
    }
    let seed = p.seed.unwrap_or(0);
    let start = match (resume, &p.input, p.density) {
        (Some(path), _, _) => Start::Checkpoint(path.clone()),
        (None, Some(path), _) => Start::File(path.clone()),
        (None, None, Some(density)) => Start::Density { density, seed },
        (None, None, None) => Start::Glibc { seed },
    };
    let size = match (p.size, p.width, p.height) {
        (Some(n), _, _) => Some(Size::Side(n)),
        (None, Some(width), Some(height)) => Some(Size::Rect { width, height }),
        _ => None,
    };
    Ok(Setup {
        start,
        dim,
        size,
        rule: p.rule.as_deref().map(Rule::parse).transpose()?,
        engine,
        block,
        generations: Some(p.gens.to_u64().unwrap_or(u64::MAX)),
        infinite: p.infinite,
        memory: p.memory,
        ..Setup::default()
    })
}

/// `--gens` for a bounded grid or a cube, which count generations in 64 bits.
pub(crate) fn grid_generations(gens: &num_bigint::BigUint) -> Result<u64> {
    gens.to_u64().ok_or_else(|| {
        anyhow::anyhow!(
            "--gens {gens}: bounded grids and cubes count to 2^64 - 1 generations; only the infinite plane (--infinite) goes further"
        )
    })
}

/// The output's format and how its pictures are drawn, checked against the options before the
/// run starts.
fn output_of<W: Dimension>(args: &RunArgs) -> Result<Option<(Format, Picture)>> {
    let picture = Picture {
        view: args.view.as_deref().map(View::parse).transpose()?,
        scale: args.scale,
        axis: args.axis,
        colours: None,
    };
    let Some(path) = &args.output else {
        if args.view.is_some()
            || args.scale.is_some()
            || args.frames.is_some()
            || args.every.is_some()
        {
            anyhow::bail!("--view, --scale, --frames and --every draw an --output .png or .gif");
        }
        return Ok(None);
    };
    let format = Format::writable(path, W::DIM)?;
    let pictured = matches!(format, Format::Png | Format::Gif);
    if !pictured && (args.view.is_some() || args.scale.is_some()) {
        anyhow::bail!("--view and --scale apply to .png and .gif outputs");
    }
    if format != Format::Gif && (args.frames.is_some() || args.every.is_some()) {
        anyhow::bail!("--frames and --every choose the frames of a .gif output");
    }
    if pictured {
        picture.check(W::DIM)?;
    }
    Ok(Some((format, picture)))
}

fn run_in<W: Dimension>(args: &RunArgs, setup: &Setup, read: Read) -> Result<()> {
    let start = read.begun;
    let output = output_of::<W>(args)?;
    if let Some(path) = &args.checkpoint {
        gol::output::probe(path)?;
    }
    // A `.bin` output is made while the run starts and computes; others are written at the end.
    // Its temporary file is named to the signal handler before it exists.
    let begun = match &args.output {
        Some(path) => {
            interrupt::remove_if_ended(&gol_core::replace::temporary_name(path));
            W::begin_output(path, setup)?
        }
        None => None,
    };
    let mut sim = Simulation::<W>::new(setup)?;
    let output = output.map(|(format, picture)| {
        let colours = sim.rule().colours();
        (format, Picture { colours, ..picture })
    });
    // A view beyond the world is refused now, not after the run.
    if let Some((
        _,
        Picture {
            view: Some(view), ..
        },
    )) = &output
    {
        let (width, height, _) = sim.extent();
        view.check_within(width, height)?;
    }
    if let (Some((Format::Cells, _)), Some(path)) = (&output, &args.output) {
        if sim.rule().is_multi_state() {
            anyhow::bail!(
                "{}: a .cells file holds two states; write the {} states of rule {} as .rle or .mc",
                path.display(),
                sim.rule().states(),
                sim.rule()
            );
        }
    }
    let total = grid_generations(&args.problem.gens)?;
    if sim.generation() > total {
        anyhow::bail!("{} is beyond --gens {total}", sim.source());
    }
    let gens = total - sim.generation();
    sim.check_steps(gens)?;
    // An animation takes its frames as the run goes: the loop stops at each frame's generation.
    let mut frames = match (&output, &args.output) {
        (Some((Format::Gif, picture)), Some(path)) => Some(Frames {
            animation: Animation::create(path, *picture)?,
            stops: frame_generations(gens, args.every, args.frames)?,
            taken: 0,
            seconds: 0.0,
        }),
        _ => None,
    };
    let planned = sim.cells() as f64 * gens as f64;
    let bar = (std::io::stderr().is_terminal() && planned >= PROGRESS_MIN_UPDATES && !args.json)
        .then(|| {
            ProgressBar::new(gens).with_style(
                ProgressStyle::with_template("{bar:40} {pos}/{len} generations, {eta} left")
                    .expect("the template is valid"),
            )
        });
    let mut done = 0;
    if let Some(frames) = &mut frames {
        frames.take(&sim, done)?;
    }
    // Steps in chunks of about CHUNK_SECONDS, so that a signal is answered promptly: the first
    // of 2³⁰ cell updates on a CPU (one chunk for the seminar's case), on GPUs as many as
    // GPU_CHUNK_UPDATES allows; then as many as the rate measured so far allows.
    let cells = sim.cells().max(1);
    let first = match sim.engine().on_gpu() {
        true => {
            let modelled =
                (sim.generation_seconds()).map_or(0.0, |s| CHUNK_SECONDS / s * cells as f64);
            (modelled as u64).clamp(*GPU_CHUNK_UPDATES.start(), *GPU_CHUNK_UPDATES.end())
        }
        false => CHUNK_UPDATES,
    };
    let mut chunk = (first / cells).max(1);
    interrupt::looping();
    while done < gens && interrupt::received().is_none() {
        let mut n = (gens - done).min(chunk);
        if bar.is_some() {
            n = n.min(gens.div_ceil(200).max(1));
        }
        if let Some(at) = frames.as_ref().and_then(|f| f.next()) {
            n = n.min(at - done);
        }
        let chunk_start = Instant::now();
        sim.step(n)?;
        let took = chunk_start.elapsed().as_secs_f64();
        chunk = ((n as f64 * CHUNK_SECONDS / took.max(1e-6)) as u64)
            .clamp(1, n.saturating_mul(CHUNK_GROWTH));
        done += n;
        if let Some(frames) = &mut frames {
            frames.take(&sim, done)?;
        }
        if let Some(bar) = &bar {
            bar.set_position(done);
        }
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let stopped_by = interrupt::received().filter(|_| done < gens);
    let updates = sim.cells() as f64 * done as f64;
    if args.checkpoint.is_some() {
        sim.checkpoint()?;
    }
    let timings = sim.timings();
    let seconds = timings.stepping;
    let count_start = Instant::now();
    let alive = sim.population()?;
    let live = sim.live()?;
    let count_seconds = count_start.elapsed().as_secs_f64();

    let (width, height, depth) = sim.extent();
    let frame_count = frames.as_ref().map(|f| f.taken);
    let frame_seconds = frames.as_ref().map_or(0.0, |f| f.seconds);
    let gpus = sim.gpus();
    let mut report = Report {
        alive,
        live,
        generations: sim.generation(),
        width,
        height,
        depth,
        // A 2D start saved at a later generation (RLE `#CXRLE Gen=`) counts on from it.
        stamp: (depth.is_some() || sim.stamp() > sim.generation()).then(|| sim.stamp()),
        resumed_at: args.resume.as_ref().map(|_| sim.resumed_at()),
        gpus,
        cell_updates_per_second_per_gpu: gpus.map(|n| updates / seconds / n as f64),
        frames: frame_count,
        checkpoints: timings.checkpoints,
        checkpoint_seconds: timings.checkpointing,
        interrupted: stopped_by.is_some(),
        ranks: None,
        engine: sim.engine().to_string(),
        engine_choice: sim.resolved().reason.clone(),
        engine_details: sim.details(),
        rule: sim.rule().to_string(),
        topology: sim.rule().topology().name(),
        source: sim.source().to_string(),
        seconds,
        input_seconds: read.seconds + timings.input,
        setup_seconds: timings.setup,
        count_seconds,
        output_seconds: 0.0,
        total_seconds: 0.0,
        generations_per_second: done as f64 / seconds,
        cell_updates_per_second: updates / seconds,
        engine_timings: sim
            .engine_timings()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
        identity: None,
    };
    if args.identify && stopped_by.is_none() {
        report.identity = Some(crate::identify::after_run(
            |limit, stop| sim.identify(limit, stop),
            args.max_gens,
            &report.rule,
            &format!("the world at generation {}", sim.generation()),
        )?);
    }
    let reached = sim.generation();
    let output_start = Instant::now();
    if stopped_by.is_some() {
        // An interrupted run writes no output: it would not be the state asked for.
    } else if let Some(frames) = frames {
        frames.animation.finish()?;
    } else if let Some(begun) = begun {
        // The engine is let go (on a GPU, its context torn down) while the file is filled.
        let world = sim.world()?;
        let stamp = sim.stamp();
        std::thread::scope(|s| {
            s.spawn(move || drop(sim));
            world.finish_output(begun, stamp)
        })?;
    } else if let (Some(path), Some((_, picture))) = (&args.output, &output) {
        sim.save_with(path, picture)?;
    }
    report.output_seconds = output_start.elapsed().as_secs_f64() + frame_seconds;
    report.total_seconds = start.elapsed().as_secs_f64();
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        print_report(&report, args);
    }
    match stopped_by {
        Some(signal) => Err(Interrupted {
            signal,
            message: interrupted_message(args, signal, &reached, &total),
        }
        .into()),
        None => Ok(()),
    }
}

/// The message of a run that signal `signal` stopped at generation `reached` of `total`:
/// where its final checkpoint is and how to resume (the report, with `interrupted`, went out
/// first).
pub(crate) fn interrupted_message(
    args: &RunArgs,
    signal: i32,
    reached: &dyn std::fmt::Display,
    total: &dyn std::fmt::Display,
) -> String {
    let by = interrupt::name(signal);
    let output = match &args.output {
        Some(path) => format!("; {} was not written", path.display()),
        None => String::new(),
    };
    match &args.checkpoint {
        Some(path) => format!(
            "interrupted by {by} at generation {reached} of {total}{output}; checkpoint written to {}; resume with: {}",
            path.display(),
            resume_command(std::env::args().skip(1), path)
        ),
        None => format!(
            "interrupted by {by} at generation {reached} of {total}{output} (--checkpoint FILE keeps the state to resume from)"
        ),
    }
}

/// The command that resumes a run of `args` (its command line after `gol`) from `checkpoint`:
/// the same options (output, pictures, checkpoints, engine, threads, `--gens`, …) less those
/// that make the world, which the checkpoint holds, with `--resume`; quoted for a POSIX shell.
fn resume_command(args: impl Iterator<Item = String>, checkpoint: &std::path::Path) -> String {
    const WORLD: [&str; 9] = [
        "--input",
        "--size",
        "--width",
        "--height",
        "--density",
        "--seed",
        "--rule",
        "--dim",
        "--resume",
    ];
    let mut words = vec!["gol".to_string()];
    let mut args = args;
    while let Some(arg) = args.next() {
        let (name, joined) = match arg.split_once('=') {
            Some((name, _)) => (name, true),
            None => (arg.as_str(), false),
        };
        if WORLD.contains(&name) {
            if !joined {
                args.next();
            }
            continue;
        }
        words.push(arg);
    }
    let after_run = words
        .iter()
        .position(|w| w == "run")
        .map_or(words.len(), |i| i + 1);
    let path = checkpoint.to_string_lossy().into_owned();
    words.splice(after_run..after_run, ["--resume".to_string(), path]);
    words
        .iter()
        .map(|w| quoted(w))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `word` as a POSIX shell reads it back: as it is where it is plain, else in single quotes.
fn quoted(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./=:,+^@%".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// The report's line on the output at `path`: written (with `detail`), or not, after an
/// interrupt (an interrupted run writes no output: it would not be the state asked for).
pub(crate) fn print_output(path: &std::path::Path, interrupted: bool, detail: &str, seconds: f64) {
    if interrupted {
        println!(
            "Output not written to {}: the run was interrupted before its last generation",
            path.display()
        );
    } else {
        println!(
            "Output written to {}{detail} (sec.): {seconds:.6}",
            path.display()
        );
    }
}

/// The frames of a `.gif` output: the animation, the generations (counted from this run's
/// start) still to be taken, and the time taking them cost.
struct Frames {
    animation: Animation,
    stops: Vec<u64>,
    taken: u64,
    seconds: f64,
}

impl Frames {
    /// The generation of the next frame.
    fn next(&self) -> Option<u64> {
        self.stops.get(self.taken as usize).copied()
    }

    /// Takes the frames due at generation `done` of the run.
    fn take<W: Dimension>(&mut self, sim: &Simulation<W>, done: u64) -> Result<()> {
        while self.next().is_some_and(|at| at <= done) {
            let start = Instant::now();
            self.animation.add(&sim.world()?)?;
            self.taken += 1;
            self.seconds += start.elapsed().as_secs_f64();
        }
        Ok(())
    }
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
    let from = match (r.stamp, r.depth) {
        (Some(t), None) => format!(
            " from generation {} to {t}",
            t.saturating_sub(r.generations)
        ),
        _ => String::new(),
    };
    println!(
        "Game of Life: {shape} {}, rule {}, {} generations{from}, {}",
        r.topology, r.rule, r.generations, r.source
    );
    println!("Engine: {}{details}", r.engine);
    println!("Engine choice: {}", r.engine_choice);
    println!("Total alive cells: {}", r.alive);
    if let Some(live) = r.live {
        println!("Live (state 1) cells: {live}");
    }
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
        let stamp = match (r.stamp, r.frames) {
            (_, Some(frames)) => format!(", {frames} frames"),
            (Some(t), None) => format!(", generation stamp {t}"),
            (None, None) => String::new(),
        };
        print_output(path, r.interrupted, &stamp, r.output_seconds);
    }
    println!("Total time (sec.): {:.6}", r.total_seconds);
    if let Some(identity) = &r.identity {
        print!("{identity}");
    }
}
