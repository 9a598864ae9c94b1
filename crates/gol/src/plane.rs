//! Runs on the infinite plane: [`PlaneSimulation`], what a [`Setup`] whose world is the plane
//! ([`Setup::on_plane`]) becomes.
//!
//! Generations, populations and coordinates are exact integers of any size ([`BigUint`],
//! [`BigInt`]); coordinates are Golly's. The engine is one of `gol_plane`'s, behind its one
//! interface ([`Plane`]).

use std::io::Write;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use gol_core::pattern::PatternFile;
use gol_core::picture::{self, Frame, View, MAX_PIXELS};
use gol_core::rule::Topology;
use gol_core::{checkpoint, EngineId, Grid, Rule};
use gol_plane::{Options, Plane, Rect, Start as PlaneStart, Stepped, Written};
use num_bigint::{BigInt, BigUint};
use num_traits::{One, ToPrimitive, Zero};

use crate::auto::{EngineChoice, Resolved};
use crate::error::{invalid, Result};
use crate::output::{Animation, Format, Picture};
use crate::setup::{Checkpoints, Dim, Setup, Source, Split, Start};
use crate::simulation::Timings;

/// The least pixel (of 255) of a block of a zoomed-out picture that holds any live cell.
pub const FAINTEST: u8 = 64;

/// The engines of the plane (`auto` races the first two on the pattern and takes the window
/// for what only it runs: `gol_plane::auto`).
pub const ENGINES: [EngineId; 3] = [EngineId::Hashlife, EngineId::Tiles, EngineId::Window];

/// A rectangle of the plane in Golly's coordinates: the cells a picture or a window shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlaneView {
    /// The left column.
    pub x: BigInt,
    /// The top row.
    pub y: BigInt,
    /// Columns.
    pub width: u64,
    /// Rows.
    pub height: u64,
}

impl PlaneView {
    /// Parses `X,Y,W,H`: X and Y any integers, W and H from 1.
    pub fn parse(text: &str) -> Result<PlaneView> {
        let parts: Vec<&str> = text.split(',').map(str::trim).collect();
        let bad = || {
            crate::Error::Invalid(format!(
                "view {text:?}: expected X,Y,W,H in cells (X and Y any integers, W and H from 1)"
            ))
        };
        let [x, y, w, h] = parts[..] else {
            return Err(bad());
        };
        let (x, y) = (x.parse().map_err(|_| bad())?, y.parse().map_err(|_| bad())?);
        let (width, height) = (w.parse().map_err(|_| bad())?, h.parse().map_err(|_| bad())?);
        if width == 0 || height == 0 {
            return Err(bad());
        }
        Ok(PlaneView {
            x,
            y,
            width,
            height,
        })
    }

    /// The view of a bounding box (clamped to 2^64 − 1 cells a side).
    pub fn of(rect: &Rect) -> PlaneView {
        let side = |n: &BigUint| n.to_u64().unwrap_or(u64::MAX);
        PlaneView {
            x: rect.x.clone(),
            y: rect.y.clone(),
            width: side(&rect.width),
            height: side(&rect.height),
        }
    }

    /// The view grown by `margin` cells on every side.
    pub fn grown(&self, margin: u64) -> PlaneView {
        let grow = |side: u64| side.saturating_add(margin.saturating_mul(2));
        PlaneView {
            x: &self.x - margin,
            y: &self.y - margin,
            width: grow(self.width),
            height: grow(self.height),
        }
    }
}

impl std::fmt::Display for PlaneView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{},{},{},{}", self.x, self.y, self.width, self.height)
    }
}

/// A world on the infinite plane: stepped by any number of generations, read, saved and
/// checkpointed.
///
/// ```
/// use gol::{PlaneSimulation, Setup, Start};
/// use num_bigint::BigUint;
/// use std::sync::atomic::AtomicBool;
///
/// // A glider with its top-left cell on the origin (no position given, as bgolly places it),
/// // 10^30 generations on: 2.5·10^29 cells down and to the right.
/// let glider = b"x = 3, y = 3\nbo$2bo$3o!\n".to_vec();
/// let setup = Setup {
///     start: Start::Pattern { name: "glider.rle".into(), text: glider },
///     ..Setup::default()
/// };
/// let mut sim = PlaneSimulation::new(&setup)?;
/// let far: BigUint = BigUint::from(10u32).pow(30);
/// sim.step(&far, &AtomicBool::new(false))?;
/// assert_eq!(sim.population(), BigUint::from(5u32));
/// let corner = sim.bounding_box().unwrap();
/// assert_eq!(corner.x, num_bigint::BigInt::from(far / 4u32));
/// # Ok::<(), gol::Error>(())
/// ```
pub struct PlaneSimulation {
    plane: Box<dyn Plane>,
    resolved: Resolved,
    rule: Rule,
    source: Source,
    /// The generation of the input (a file's `#CXRLE Gen=` or `#G`).
    stamp: BigUint,
    /// Generations advanced from the input.
    generation: BigUint,
    resumed_at: BigUint,
    checkpoints: Option<Checkpoints>,
    saved_at: Option<BigUint>,
    timings: Timings,
}

/// The memory cap of a plane where none is given: half the memory available, at least
/// 256 MiB (1 GiB where the system does not say).
pub fn default_memory() -> u64 {
    gol_core::memory::available_bytes().map_or(1 << 30, |a| (a / 2).max(256 << 20))
}

/// The engine of the plane a choice comes to.
fn resolve(choice: EngineChoice) -> Result<Resolved> {
    let names = ENGINES.map(EngineId::name).join(", ");
    match choice {
        EngineChoice::Auto => Ok(Resolved {
            id: EngineId::Tiles,
            reason: "auto: tiles and hashlife raced on the pattern in time slices from 0.25 s, \
                     the faster kept (tiles for two-state B/S rules only; Larger than Life \
                     rules, tubes, strips and B0 rules on window)"
                .into(),
        }),
        EngineChoice::Named(id) if id.on_plane() => Ok(Resolved {
            id,
            reason: "asked for".into(),
        }),
        EngineChoice::Named(id) => invalid!(
            "{id} runs bounded grids, not the infinite plane; engines of the plane: {names} (or give a size for a torus)"
        ),
    }
}

impl PlaneSimulation {
    /// The simulation `setup` describes, on the plane: the pattern read (or the soup made and
    /// placed as a pattern of its size is), the engine resolved and made.
    pub fn new(setup: &Setup) -> Result<PlaneSimulation> {
        let start = Instant::now();
        if setup.dim == Dim::Three {
            invalid!("the infinite plane is 2D; a 3D run needs a cube of a given side");
        }
        if setup.split != Split::None {
            invalid!("--gpus splits bounded grids; the infinite plane runs in one process");
        }
        if setup.block.is_some() {
            invalid!(
                "a thread-block size applies to CUDA engines; the infinite plane runs on the CPU"
            );
        }
        let resolved = resolve(setup.engine)?;
        let options = Options {
            memory: setup.memory.unwrap_or_else(default_memory),
            threads: rayon::current_num_threads(),
            parallel_level: None,
        };
        let asked = setup.rule;
        if let Some(rule) = asked {
            if !matches!(rule.topology(), Topology::Torus | Topology::Strip(_)) {
                invalid!(
                    "rule {rule}: a bounded-grid suffix does not apply on the infinite plane; drop it, or give a size"
                );
            }
        }
        // A tube or a strip runs as one, unless --infinite asks for the whole plane; a bounded
        // grid's suffix is overridden.
        let unbounded = |rule: Rule| match rule.topology() {
            Topology::Strip(_) if !setup.infinite => rule,
            _ => rule.on(Topology::Torus),
        };
        let made = |start: PlaneStart<'_>, rule: Rule| -> Result<Box<dyn Plane>> {
            let rule = unbounded(rule);
            Ok(match setup.engine {
                EngineChoice::Auto => gol_plane::auto(start, rule, &options)?,
                EngineChoice::Named(id) => gol_plane::new(id, start, rule, &options)?,
            })
        };
        let from_file = |path: &Path, file: &PatternFile| -> Result<(Box<dyn Plane>, Rule)> {
            if setup.size.is_some() {
                invalid!(
                    "{}: the infinite plane takes the pattern where it lies; a size makes a bounded grid (give one or the other)",
                    path.display()
                );
            }
            let rule = unbounded(asked.or(file.header().rule).unwrap_or(Rule::LIFE));
            let plane = made(PlaneStart::File(file), rule)
                .map_err(|e| crate::Error::Invalid(format!("{}: {e}", path.display())))?;
            Ok((plane, rule))
        };
        let file_source = |path: &Path| Source::File {
            path: path.to_path_buf(),
        };
        let (plane, rule, source, stamp, done) = match &setup.start {
            Start::File(path) if crate::setup::is_bin(path) => {
                invalid!(
                    "{}: a .bin file is a 3D cube, not a pattern of the plane",
                    path.display()
                )
            }
            Start::File(path) => {
                let file = PatternFile::open(path)?;
                let (plane, rule) = from_file(path, &file)?;
                let stamp = file.header().generation.clone();
                (plane, rule, file_source(path), stamp, BigUint::zero())
            }
            Start::Pattern { name, text } => {
                let file = PatternFile::from_bytes(name, text.clone())?;
                let (plane, rule) = from_file(name, &file)?;
                let stamp = file.header().generation.clone();
                (plane, rule, file_source(name), stamp, BigUint::zero())
            }
            Start::Opened { path, file } => {
                let (plane, rule) = from_file(path, file)?;
                let stamp = file.header().generation.clone();
                (plane, rule, file_source(path), stamp, BigUint::zero())
            }
            Start::Checkpoint(path) => resume(setup, path, &made)?,
            Start::Cube(_) => invalid!("a cube is 3D; the infinite plane is 2D"),
            Start::Grid(grid) => {
                let rule = asked.unwrap_or(Rule::LIFE);
                let plane = made(centred(grid), rule)?;
                (plane, rule, Source::Cells, BigUint::zero(), BigUint::zero())
            }
            Start::Glibc { .. } | Start::Density { .. } => {
                let problem = crate::setup::grid(&Setup {
                    rule: asked.map(|r| r.on(Topology::Torus)),
                    ..setup.clone()
                })?;
                let plane = made(centred(&problem.world), problem.rule)?;
                (
                    plane,
                    problem.rule,
                    problem.source,
                    BigUint::zero(),
                    BigUint::zero(),
                )
            }
        };
        let input = start.elapsed().as_secs_f64();
        Ok(PlaneSimulation {
            plane,
            resolved,
            rule,
            source,
            stamp,
            resumed_at: done.clone(),
            generation: done,
            checkpoints: setup.checkpoints.clone(),
            saved_at: None,
            timings: Timings {
                input,
                ..Timings::default()
            },
        })
    }

    /// Advances `generations`, writing the checkpoints that fall due on the way, and stopping
    /// early where `stop` is set (the state is then that of the last power of two of
    /// generations completed, and [`PlaneSimulation::generation`] says which).
    pub fn step(&mut self, generations: &BigUint, stop: &AtomicBool) -> Result<Stepped> {
        let start = Instant::now();
        let before = self.timings.checkpointing;
        let mut left = generations.clone();
        let mut ended = Stepped::Done;
        while !left.is_zero() {
            let every = self.checkpoints.as_ref().and_then(|c| c.every);
            let n = match every {
                Some(every) => {
                    let until = BigUint::from(every) - (&self.generation % every);
                    until.min(left.clone())
                }
                None => left.clone(),
            };
            let (taken, how) = self.plane.step(&n, stop)?;
            self.generation += &taken;
            left -= &taken;
            if every.is_some_and(|every| (&self.generation % every).is_zero()) && !taken.is_zero() {
                self.checkpoint()?;
            }
            if how == Stepped::Stopped {
                ended = Stepped::Stopped;
                break;
            }
        }
        self.timings.stepping +=
            start.elapsed().as_secs_f64() - (self.timings.checkpointing - before);
        Ok(ended)
    }

    /// Writes a checkpoint of the state now to the file of [`Setup::checkpoints`], unless one
    /// of this generation was written already; refused where none was given.
    pub fn checkpoint(&mut self) -> Result<()> {
        let Some(checkpoints) = &self.checkpoints else {
            invalid!("no checkpoint file was given");
        };
        if self.saved_at.as_ref() == Some(&self.generation) {
            return Ok(());
        }
        let start = Instant::now();
        let mut macrocell = Vec::new();
        self.plane
            .write(Written::Macrocell, &self.stamp(), &mut macrocell)
            .map_err(|e| gol_core::Error::io(&checkpoints.path, e))?;
        checkpoint::write_plane(&checkpoints.path, &self.generation, &macrocell)?;
        self.saved_at = Some(self.generation.clone());
        self.timings.checkpoints += 1;
        self.timings.checkpointing += start.elapsed().as_secs_f64();
        Ok(())
    }

    /// Generations advanced, counted from the original start (a checkpoint's included).
    pub fn generation(&self) -> &BigUint {
        &self.generation
    }

    /// The generation the simulation started from: a checkpoint's, else 0.
    pub fn resumed_at(&self) -> &BigUint {
        &self.resumed_at
    }

    /// The generation reached as the input counts it: its own stamp (`#CXRLE Gen=`, `#G`)
    /// plus [`PlaneSimulation::generation`]; what outputs are stamped with.
    pub fn stamp(&self) -> BigUint {
        &self.stamp + &self.generation
    }

    /// Cells not in state 0 (Golly's population).
    pub fn population(&self) -> BigUint {
        self.plane.population()
    }

    /// Under a Generations rule, the cells in state 1; `None` under a two-state rule.
    pub fn live(&self) -> Option<BigUint> {
        self.rule.is_generations().then(|| self.plane.live())
    }

    /// The smallest rectangle holding every cell not in state 0; `None` for an empty plane.
    pub fn bounding_box(&self) -> Option<Rect> {
        self.plane.bounding_box()
    }

    /// The cells of `view` (states).
    pub fn window(&self, view: &PlaneView) -> Result<Grid> {
        let (w, h) = (view.width as usize, view.height as usize);
        gol_core::grid::check_fits(w, h)?;
        let states = self.plane.cells(&view.x, &view.y, w, h);
        Ok(Grid::from_states(w, h, self.rule.states(), &states)?)
    }

    /// The picture of `view` (the bounding box by default, a small square round the origin for
    /// an empty plane), `scale` pixels a cell where given; a view too large for one pixel a
    /// cell at [`MAX_PIXELS`] is drawn from the populations of the tree's blocks, each pixel
    /// the share of cells alive in its block.
    pub fn picture(&self, view: Option<&PlaneView>, scale: Option<u32>) -> Result<Frame> {
        let view = match view {
            Some(view) => view.clone(),
            None => self.default_view(),
        };
        let side = view.width.max(view.height);
        if side <= MAX_PIXELS as u64 {
            let grid = self.window(&view)?;
            return Ok(picture::grid(
                &grid,
                &View::whole(grid.width(), grid.height()),
                scale,
                self.rule.colours(),
            )?);
        }
        if scale.is_some() {
            invalid!(
                "--scale: a {}x{} view is more than {MAX_PIXELS} pixels a side at one pixel a cell",
                view.width,
                view.height
            );
        }
        let level = 64 - (side.div_ceil(MAX_PIXELS as u64) - 1).leading_zeros();
        Ok(self.blocks(&view, level))
    }

    /// The picture of `view` with one pixel for each block of 2^`level` × 2^`level` cells of
    /// the tree, the share of its cells not in state 0 (the view's corner moved to a block's),
    /// and no less than [`FAINTEST`] where any is: a sparse pattern zoomed out stays in sight,
    /// as Golly draws any block with a live cell.
    pub fn blocks(&self, view: &PlaneView, level: u32) -> Frame {
        let side = 1u64 << level.min(63);
        let (x, y) = gol_plane::tree::block_corner(&view.x, &view.y, level);
        let span = |start: &BigInt, corner: &BigInt, len: u64| {
            let extra = (start - corner).to_u64().unwrap_or(0);
            (len.saturating_add(extra)).div_ceil(side).max(1) as usize
        };
        let (columns, rows) = (
            span(&view.x, &x, view.width),
            span(&view.y, &y, view.height),
        );
        let counts = self.plane.block_populations(&x, &y, columns, rows, level);
        let cells = BigUint::one() << (2 * level);
        let pixels = counts
            .iter()
            .map(|&c| match c {
                0 => 0,
                c => {
                    let share = (BigUint::from(c) * 255u32 + &cells / 2u32) / &cells;
                    share.to_u8().unwrap_or(255).max(FAINTEST)
                }
            })
            .collect();
        Frame {
            width: columns,
            height: rows,
            pixels,
            palette: None,
        }
    }

    /// The bounding box's view, or a 64-cell square round the origin on an empty plane.
    pub fn default_view(&self) -> PlaneView {
        match self.bounding_box() {
            Some(rect) => PlaneView::of(&rect),
            None => PlaneView {
                x: BigInt::from(-32),
                y: BigInt::from(-32),
                width: 64,
                height: 64,
            },
        }
    }

    /// Writes the state to `path` by its extension: `.rle` (the bounding box, with
    /// `#CXRLE Pos= Gen=`), `.mc` (macrocell, from the tree), either with `.gz`; `.png` (a
    /// picture of `picture`'s view, the bounding box by default) or `.gif` (one frame).
    pub fn save(&self, path: &Path, view: Option<&PlaneView>, scale: Option<u32>) -> Result<()> {
        match check_output(path)? {
            Format::Rle => self.write_cells(path, Written::Rle),
            Format::Macrocell => self.write_cells(path, Written::Macrocell),
            Format::Png => crate::output::write_png(path, &self.picture(view, scale)?),
            Format::Gif => {
                let mut animation = Animation::create(path, Picture::default())?;
                animation.add_frame(self.picture(view, scale)?)?;
                animation.finish()
            }
            Format::Cells | Format::Bin => unreachable!("refused by check_output"),
        }
    }

    /// Writes `format` to `path` atomically, compressed where the name ends in `.gz`.
    fn write_cells(&self, path: &Path, format: Written) -> Result<()> {
        let stamp = self.stamp();
        Ok(gol_core::replace::replace(path, false, |file, _| {
            let out = std::io::BufWriter::new(file);
            let io = |e| gol_core::Error::io(path, e);
            if gol_core::pattern::gzipped(path) {
                let mut gz = flate2::write::GzEncoder::new(out, flate2::Compression::default());
                self.plane.write(format, &stamp, &mut gz).map_err(io)?;
                gz.finish().and_then(|mut out| out.flush()).map_err(io)
            } else {
                let mut out = out;
                self.plane.write(format, &stamp, &mut out).map_err(io)?;
                out.flush().map_err(io)
            }
        })?)
    }

    /// The engine.
    pub fn engine(&self) -> EngineId {
        self.plane.engine()
    }

    /// How the engine was chosen.
    pub fn resolved(&self) -> &Resolved {
        &self.resolved
    }

    /// How the engine runs here.
    pub fn details(&self) -> String {
        self.plane.details()
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

    /// Bytes of memory the engine's state takes.
    pub fn memory_bytes(&self) -> u64 {
        self.plane.memory_bytes()
    }
}

/// The output format of `path` on the plane, refused where the plane has none.
pub fn check_output(path: &Path) -> Result<Format> {
    let format = Format::of(path, Dim::Two)?;
    if format == Format::Cells {
        invalid!(
            "{}: a .cells file has no place on the plane; write .rle or .mc, which keep the pattern's position",
            path.display()
        );
    }
    Ok(format)
}

/// `grid` on the plane as a pattern of its size is placed: its cell (⌊W/2⌋, ⌊H/2⌋) on Golly's
/// origin.
fn centred(grid: &Grid) -> PlaneStart<'_> {
    PlaneStart::Grid {
        grid,
        x: -((grid.width() / 2) as i64),
        y: -((grid.height() / 2) as i64),
    }
}

/// The plane a checkpoint holds: its engine, rule, source, stamp and generations done.
#[allow(clippy::type_complexity)]
fn resume(
    setup: &Setup,
    path: &Path,
    made: &dyn Fn(PlaneStart<'_>, Rule) -> Result<Box<dyn Plane>>,
) -> Result<(Box<dyn Plane>, Rule, Source, BigUint, BigUint)> {
    let state = checkpoint::open_plane(path)?;
    let file = PatternFile::from_bytes(&path.with_extension("mc"), state.macrocell)
        .map_err(|e| crate::Error::Invalid(format!("{}: {e}: corrupted", path.display())))?;
    let header = file.header();
    let Some(rule) = header.rule else {
        invalid!(
            "{}: the checkpoint names no rule: corrupted",
            path.display()
        );
    };
    if let Some(asked) = setup.rule {
        if asked.on(Topology::Torus) != rule {
            invalid!(
                "{}: the checkpoint runs rule {rule}, not the rule asked for, {asked}",
                path.display()
            );
        }
    }
    if header.generation < state.done {
        invalid!(
            "{}: its generation counts disagree: corrupted",
            path.display()
        );
    }
    let stamp = &header.generation - &state.done;
    let plane = made(PlaneStart::File(&file), rule)?;
    let source = Source::Checkpoint {
        path: path.to_path_buf(),
        done: state.done.clone(),
    };
    Ok((plane, rule, source, stamp, state.done))
}
