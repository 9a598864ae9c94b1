//! Command-line arguments.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// gol: a Game of Life engine on a torus, on the CPU (and CUDA GPUs).
#[derive(Parser, Debug)]
#[command(name = "gol", version, about, long_about = None)]
pub struct Cli {
    /// Worker threads for the CPU engines, at most 4 for each CPU (default: one per core).
    #[arg(long, global = true, value_name = "N")]
    pub threads: Option<usize>,

    /// A folder of Golly rule files (NAME.rule), searched for rule tables before the pattern
    /// file's own folder and Golly's Rules folder; may be given more than once.
    #[arg(long = "rules", global = true, value_name = "DIR")]
    pub rules: Vec<PathBuf>,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run a simulation and report the population and timings.
    Run(RunArgs),
    /// Time engines across grid sizes; print a Markdown table and write JSON.
    Bench(BenchArgs),
    /// Cross-check every engine against the scalar reference.
    Verify(VerifyArgs),
    /// Serve a live viewer of a simulation in the browser (pan, zoom, play, step, upload).
    View(ViewArgs),
    /// Say what a pattern is: run it on the infinite plane until it repeats, then its type,
    /// period, speed, heat and apgcode.
    Identify(IdentifyArgs),
    /// Census apgsearch's C1 soups of B3/S23 on every core: each run until it settles, its
    /// ash cut into objects and named by apgcode, written as a haul in apgsearch's format.
    Census(CensusArgs),
    /// Show the machine, its instruction sets and the engines available.
    Info,
}

/// What to simulate: the grid, its initial state and the rule.
#[derive(Args, Debug, Clone)]
pub struct ProblemArgs {
    /// Side of a square grid or of a cube (default 1024 in 2D, 256 in 3D).
    #[arg(long, value_name = "N", conflicts_with_all = ["width", "height"])]
    pub size: Option<usize>,

    /// Grid width (give --height too).
    #[arg(long, value_name = "W", requires = "height")]
    pub width: Option<usize>,

    /// Grid height (give --width too).
    #[arg(long, value_name = "H", requires = "width")]
    pub height: Option<usize>,

    /// Dimension of a random soup: 2 or 3 (a .bin input is always 3D).
    #[arg(long, value_name = "2|3", default_value_t = 2)]
    pub dim: u8,

    /// Generations to run: a whole number of any size (on the infinite plane; bounded grids
    /// and cubes count to 2^64 - 1), written out or as 2^K or 10^K.
    #[arg(long, value_name = "G", default_value = "1024", value_parser = parse_generations)]
    pub gens: num_bigint::BigUint,

    /// Seed of the random soup: glibc's srand(S), one rand() % 2 per cell in row-major order
    /// (default 0); with --density, the seed of the fast generator.
    #[arg(long, value_name = "S")]
    pub seed: Option<u32>,

    /// Fill each cell alive with probability P (fast generator) instead of glibc's rand() % 2.
    #[arg(long, value_name = "P")]
    pub density: Option<f64>,

    /// Rule in B/S notation (B3/S23, b36/s23, B2-a/S12, B2/S34H, B6/S5-7,10 …); overrides the
    /// file's rule, its topology included: add :P for a bounded plane (B3/S23:P), where cells
    /// past the edges are dead, instead of the torus. Default B3/S23 in 2D, B6/S567 in 3D.
    #[arg(long, value_name = "R")]
    pub rule: Option<String>,

    /// File to start from: a 2D pattern (RLE, .cells, macrocell .mc, Life 1.06 or 1.05, any
    /// of them .gz) or a 3D contest cube (.bin). A pattern with no size given and no bounded-grid
    /// suffix runs on the infinite plane, placed as Golly places it.
    #[arg(long, value_name = "FILE")]
    pub input: Option<PathBuf>,

    /// Run on the infinite plane: a soup of --size (or --width and --height) placed as a
    /// pattern of that size is, or a file with its bounded-grid suffix overridden.
    #[arg(long)]
    pub infinite: bool,

    /// Memory cap of a run on the infinite plane, such as 4G or 512M (default: half the memory
    /// available).
    #[arg(long, value_name = "BYTES", value_parser = parse_bytes)]
    pub memory: Option<u64>,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    #[command(flatten)]
    pub problem: ProblemArgs,

    /// Engine to run (see `gol info`); auto picks the one with the shortest whole run here.
    #[arg(long, value_name = "NAME", default_value = "auto")]
    pub engine: gol::EngineChoice,

    /// Write the final state: in 2D .rle, .mc (macrocell) or .cells (the whole grid; not on the
    /// infinite plane), each also .gz-compressed (x.rle.gz), or .png (a picture); in 3D a .bin
    /// cube stamped with the input's stamp plus --gens, or a .png of its projection; .gif: an
    /// animation of the run (--frames, --every). Checked before the run; a read-only file is
    /// refused, a link is written through, and the file replaced keeps its mode.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// The cells a .png or .gif shows, X,Y,W,H: on a grid from its top-left cell, wrapping
    /// round the torus [default: the whole grid]; on the infinite plane in Golly's coordinates
    /// [default: the bounding box].
    #[arg(long, value_name = "X,Y,W,H")]
    pub view: Option<String>,

    /// Pixels a cell of a .png or .gif [default: a small world drawn at least 512 pixels wide,
    /// a world too large for 4096 pixels as the share of live cells per pixel].
    #[arg(long, value_name = "S", value_parser = clap::value_parser!(u32).range(1..))]
    pub scale: Option<u32>,

    /// Frames of a .gif, spread evenly over the run, first and last generation included
    /// [default: 100, or every generation of a run shorter than 100].
    #[arg(long, value_name = "N", conflicts_with = "every")]
    pub frames: Option<u64>,

    /// One frame of a .gif every K generations, and one at the last.
    #[arg(long, value_name = "K")]
    pub every: Option<u64>,

    /// The axis a 3D .png or .gif sums live cells along: x, y or z.
    #[arg(long, value_name = "x|y|z", default_value = "x")]
    pub axis: gol_core::picture::Axis,

    /// Print one JSON object on standard output instead of the report.
    #[arg(long)]
    pub json: bool,

    /// After the run, say what the world is (as `gol identify` does): its cells on the
    /// infinite plane, run until they repeat.
    #[arg(long)]
    pub identify: bool,

    /// Generations --identify runs at most, looking for a repeat.
    #[arg(long, value_name = "G", default_value_t = gol::identify::DEFAULT_LIMIT, requires = "identify")]
    pub max_gens: u64,

    /// Thread-block size of a CUDA engine, such as 32x16.
    #[arg(long, value_name = "WxH", value_parser = parse_block)]
    pub block: Option<(u32, u32)>,

    /// Split a 2D grid (a torus or a bounded plane) into slabs of rows, one per GPU: `all` or a
    /// count (with cuda-bitsliced).
    #[arg(long, value_name = "all|N", value_parser = parse_gpus)]
    pub gpus: Option<Gpus>,

    /// Halo depth of a split run in layers (rows in 2D, planes in 3D): generations between two
    /// exchanges (capped at the smallest slab) [default: 256 rows, 16 planes].
    #[arg(long, value_name = "LAYERS",
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub halo: Option<usize>,

    /// Write the state to FILE (atomically) every --checkpoint-every generations and at the
    /// end, to continue with --resume.
    #[arg(long, value_name = "FILE")]
    pub checkpoint: Option<PathBuf>,

    /// Generations between two checkpoints (default: only at the end).
    #[arg(long, value_name = "N", requires = "checkpoint",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub checkpoint_every: Option<u64>,

    /// Continue from a checkpoint up to --gens generations in all (the grid, rule and
    /// generation count come from the file).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["input", "seed", "density"])]
    pub resume: Option<PathBuf>,
}

/// How many GPUs a split run uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gpus {
    /// Every GPU of the machine.
    All,
    /// The first N.
    Count(usize),
}

fn parse_gpus(text: &str) -> Result<Gpus, String> {
    match text {
        "all" => Ok(Gpus::All),
        _ => match text.parse::<usize>() {
            Ok(n) if n > 0 => Ok(Gpus::Count(n)),
            _ => Err(format!(
                "{text:?} is not a GPU count: use all or a number from 1"
            )),
        },
    }
}

#[derive(Args, Debug)]
pub struct IdentifyArgs {
    /// The pattern file (RLE, .cells, macrocell .mc, Life 1.06 or 1.05, any of them .gz),
    /// placed on the infinite plane as Golly places it (a bounded-grid suffix is overridden).
    #[arg(value_name = "FILE")]
    pub input: PathBuf,

    /// Rule in place of the file's.
    #[arg(long, value_name = "R")]
    pub rule: Option<String>,

    /// Generations to run at most, looking for a repeat.
    #[arg(long, value_name = "G", default_value_t = gol::identify::DEFAULT_LIMIT)]
    pub max_gens: u64,

    /// Memory cap of the plane the file is read into, such as 4G or 512M.
    #[arg(long, value_name = "BYTES", value_parser = parse_bytes)]
    pub memory: Option<u64>,

    /// Print one JSON object on standard output instead of the report.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct CensusArgs {
    /// The seed root: soup k is SHA-256 of ROOT followed by k in decimal, as apgsearch makes
    /// it [default: a new k_ root, as apgsearch makes one].
    #[arg(long, value_name = "ROOT")]
    pub root: Option<String>,

    /// Soups to census, 0 to N - 1, or `all`: on until Ctrl-C, then the haul of the soups
    /// finished.
    #[arg(long, value_name = "N|all", value_parser = parse_soups)]
    pub soups: Soups,

    /// Write the haul to FILE (atomically) instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Write each soup's objects, one line a soup, to FILE (tab-separated: index, the
    /// generation it settled at, its period, its objects as apgcode:count).
    #[arg(long, value_name = "FILE")]
    pub tallies: Option<PathBuf>,

    /// Save the census so far to FILE (atomically) every 65,536 soups and at the end, to go
    /// on with --resume.
    #[arg(long, value_name = "FILE")]
    pub checkpoint: Option<PathBuf>,

    /// Go on from a checkpoint (its root; --soups counts from soup 0).
    #[arg(long, value_name = "FILE")]
    pub resume: Option<PathBuf>,

    /// The rule: b3s23 only.
    #[arg(long, value_name = "R", default_value = "b3s23")]
    pub rule: String,

    /// The soups' symmetry: C1 only.
    #[arg(long, value_name = "S", default_value = "C1")]
    pub symmetry: String,

    /// Step the soups on GPUs, `all` or the first N, each taking its share of every round of
    /// soups (the CPU's threads name the ash, and census the soups a GPU hands back); the haul
    /// is the same as without.
    #[arg(long, value_name = "all|N", value_parser = parse_gpus)]
    pub gpus: Option<Gpus>,
}

/// How many soups a census takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Soups {
    /// Soups 0 to N - 1.
    Count(u64),
    /// On until Ctrl-C.
    All,
}

fn parse_soups(text: &str) -> Result<Soups, String> {
    match text {
        "all" => Ok(Soups::All),
        _ => text
            .parse::<u64>()
            .map(Soups::Count)
            .map_err(|_| format!("{text:?} is not a number of soups: use a whole number or all")),
    }
}

#[derive(Args, Debug)]
pub struct ViewArgs {
    #[command(flatten)]
    pub problem: ProblemArgs,

    /// Engine to run (see `gol info`).
    #[arg(long, value_name = "NAME", default_value = "auto")]
    pub engine: gol::EngineChoice,

    /// Thread-block size of a CUDA engine, such as 32x16.
    #[arg(long, value_name = "WxH", value_parser = parse_block)]
    pub block: Option<(u32, u32)>,

    /// Address to serve on, ADDRESS:PORT (port 0: any free port) [default: 127.0.0.1:8191, or
    /// the next free port].
    #[arg(long, value_name = "ADDR:PORT")]
    pub listen: Option<String>,

    /// Open the page in the default browser.
    #[arg(long)]
    pub open: bool,
}

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Engines to time, comma-separated (default: every engine available here).
    #[arg(long, value_name = "A,B", value_delimiter = ',')]
    pub engines: Vec<gol::EngineId>,

    /// Dimension to time: 2 (squares) or 3 (cubes).
    #[arg(long, value_name = "2|3", default_value_t = 2)]
    pub dim: u8,

    /// Sides to time, comma-separated.
    #[arg(long, value_name = "N,M", value_delimiter = ',', default_values_t = [256usize, 1024, 4096])]
    pub sizes: Vec<usize>,

    /// Generations per timed run (default: chosen so that each run takes about --target seconds).
    #[arg(long, value_name = "G")]
    pub gens: Option<u64>,

    /// Seconds a timed run should take when --gens is not given.
    #[arg(long, value_name = "SECONDS", default_value_t = 0.5)]
    pub target: f64,

    /// Timed repetitions per engine and size (the median is reported).
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub reps: usize,

    /// Untimed warm-up runs before the timed ones.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub warmup: usize,

    /// Rule to run (default B3/S23 in 2D, B6/S567 in 3D).
    #[arg(long, value_name = "R")]
    pub rule: Option<String>,

    /// Thread-block size of the CUDA engines, such as 32x16.
    #[arg(long, value_name = "WxH", value_parser = parse_block)]
    pub block: Option<(u32, u32)>,

    /// Where to write the results as JSON.
    #[arg(long, value_name = "FILE", default_value = "bench.json")]
    pub json: PathBuf,

    /// Where to draw cell updates/s against grid size for every engine (SVG).
    #[arg(long, value_name = "FILE", default_value = "bench.svg")]
    pub plot: PathBuf,

    /// Measure scaling over GPUs instead (2D, one engine, cuda-bitsliced by default): for each
    /// size S, the unsplit engine on one GPU, then split runs on 1, 2, 4, … up to all|N GPUs,
    /// weak (an S × S·n torus, S² per GPU) and strong (the S × S torus over n GPUs).
    #[arg(long, value_name = "all|N", value_parser = parse_gpus)]
    pub gpus: Option<Gpus>,

    /// Halo depth of the split runs of --gpus, in rows.
    #[arg(long, value_name = "LAYERS", default_value_t = gol_core::slab::DEFAULT_DEPTH,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..),
          requires = "gpus")]
    pub halo: usize,
}

#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// Seed of the random cases (printed on every run; give it again to replay them).
    #[arg(long, value_name = "S")]
    pub seed: Option<u64>,

    /// Random cases per engine.
    #[arg(long, value_name = "N", default_value_t = 200)]
    pub cases: usize,

    /// A short run for CI: 40 smaller cases and only the quick known values.
    #[arg(long)]
    pub quick: bool,

    /// Check only these engines, comma-separated (default: every engine available here).
    #[arg(long, value_name = "A,B", value_delimiter = ',')]
    pub engines: Vec<gol::EngineId>,
}

/// The most digits (or the highest power) a generation count may be written with.
const MAX_GENERATION_DIGITS: usize = 100_000;

/// Parses a generation count: decimal digits, or `2^K` or `10^K`.
pub fn parse_generations(text: &str) -> Result<num_bigint::BigUint, String> {
    let text = text.trim();
    let bad =
        || format!("{text:?} is not a generation count: write a whole number, or 2^K or 10^K");
    if let Some((base, power)) = text.split_once('^') {
        let power: u32 = power.trim().parse().map_err(|_| bad())?;
        let base: u32 = match base.trim() {
            "2" => 2,
            "10" => 10,
            _ => return Err(bad()),
        };
        if power as usize > MAX_GENERATION_DIGITS {
            return Err(format!(
                "{text}: the power may be at most {MAX_GENERATION_DIGITS}"
            ));
        }
        return Ok(num_bigint::BigUint::from(base).pow(power));
    }
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    if text.len() > MAX_GENERATION_DIGITS {
        return Err(format!(
            "{} digits: a generation count has at most {MAX_GENERATION_DIGITS}",
            text.len()
        ));
    }
    text.parse().map_err(|_| bad())
}

/// Parses a byte count: digits with an optional K, M, G or T (powers of 1024; B or iB may
/// follow).
fn parse_bytes(text: &str) -> Result<u64, String> {
    let bad = || format!("{text:?} is not an amount of memory such as 4G, 512M or 1000000");
    let upper = text.trim().to_ascii_uppercase();
    let upper = upper.trim_end_matches('B').trim_end_matches('I');
    let (digits, shift) = match upper.chars().last() {
        Some('K') => (&upper[..upper.len() - 1], 10),
        Some('M') => (&upper[..upper.len() - 1], 20),
        Some('G') => (&upper[..upper.len() - 1], 30),
        Some('T') => (&upper[..upper.len() - 1], 40),
        _ => (upper, 0),
    };
    let n: u64 = digits.trim().parse().map_err(|_| bad())?;
    n.checked_mul(1 << shift).filter(|&b| b > 0).ok_or_else(bad)
}

/// Parses `WxH` (or a single `N` for N×1).
fn parse_block(text: &str) -> Result<(u32, u32), String> {
    let number = |s: &str| {
        s.trim()
            .parse::<u32>()
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| format!("{text:?} is not a block size such as 32x16"))
    };
    match text.split_once(['x', 'X']) {
        Some((w, h)) => Ok((number(w)?, number(h)?)),
        None => Ok((number(text)?, 1)),
    }
}
