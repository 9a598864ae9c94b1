//! The typed description of a run ([`Setup`]) and the initial world it makes ([`Problem`]).
//!
//! A [`Setup`] says where the run starts (a soup, a file, a checkpoint, cells in memory), on
//! what grid, under which rule, on which engine and how split; [`crate::Simulation::new`]
//! checks it and turns it into a running engine. Everything a front end parses from its own
//! options ends up here, so that no front end re-derives a size or a rule.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use gol_core::pattern::PatternFile;
use gol_core::rule::Topology;
use gol_core::slab::Slabs;
use gol_core::{checkpoint, cube_file, memory, seed, Cube, Grid, Rule};
use num_traits::ToPrimitive;

use crate::auto::EngineChoice;
use crate::dimension::Dimension;
use crate::error::{invalid, Result};

/// Where a run starts.
#[derive(Clone, Debug)]
pub enum Start {
    /// glibc's `srand(seed)` then one `rand() % 2` per cell in row-major order: the soup of the
    /// C programs (docs/lineage.md), which gives 47026 for 1024², 1024 generations, seed 0.
    Glibc {
        /// The `srand` seed.
        seed: u32,
    },
    /// Each cell alive with probability `density`, from a fast generator seeded with `seed`.
    Density {
        /// Probability of a live cell, 0 to 1.
        density: f64,
        /// The generator's seed.
        seed: u32,
    },
    /// A file: a 2D pattern (any format `gol run` reads, gzipped or in a zip archive too),
    /// placed as Golly places it, or a 3D contest cube (`.bin`), by extension.
    File(PathBuf),
    /// The bytes of a 2D pattern file given in memory, as an upload brings it, read as
    /// [`Start::File`] reads a file named `name` (a zip archive's member named as
    /// `ARCHIVE.zip:MEMBER`); placed as a file is placed.
    Pattern {
        /// The file's name, for its format and for messages.
        name: PathBuf,
        /// Its contents.
        text: Vec<u8>,
    },
    /// A 2D pattern file already read, named `path` (as [`Start::File`] or
    /// [`Start::Pattern`] names it), placed as a file is placed: what [`Setup::opened`] makes
    /// of those two, so that a file read for its header is not read again to be run.
    Opened {
        /// The file's name, for reports and messages.
        path: PathBuf,
        /// The file, read.
        file: Arc<PatternFile>,
    },
    /// A checkpoint written by an earlier run ([`Checkpoints`]); the world, rule and
    /// generation come from it.
    Checkpoint(PathBuf),
    /// These cells (2D).
    Grid(Grid),
    /// These cells (3D).
    Cube(Cube),
}

impl Default for Start {
    fn default() -> Start {
        Start::Glibc { seed: 0 }
    }
}

/// The dimension of a soup (files, checkpoints and cells in memory set their own).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Dim {
    /// A W×H torus, 8 neighbours.
    #[default]
    Two,
    /// An M×M×M torus, 26 neighbours.
    Three,
}

impl Dim {
    /// 2 or 3.
    pub fn axes(self) -> u32 {
        match self {
            Dim::Two => 2,
            Dim::Three => 3,
        }
    }
}

/// The size of the world.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Size {
    /// A square of this side, or a cube.
    Side(usize),
    /// A `width` × `height` grid (2D only).
    Rect {
        /// Cells per row.
        width: usize,
        /// Rows.
        height: usize,
    },
}

impl Size {
    /// Width and height.
    pub fn sides(self) -> (usize, usize) {
        match self {
            Size::Side(n) => (n, n),
            Size::Rect { width, height } => (width, height),
        }
    }
}

/// Whether the world is split into slabs over several GPUs of this process.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Split {
    /// One engine holds the whole world.
    #[default]
    None,
    /// One slab per GPU, over every GPU of the machine.
    AllGpus,
    /// One slab per GPU, over the first N GPUs.
    Gpus(usize),
}

/// When checkpoints are written, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checkpoints {
    /// The file, replaced atomically at each write.
    pub path: PathBuf,
    /// Generations between two checkpoints, counted from the original start (so that a resumed
    /// run keeps the schedule); `None` for none but those asked for
    /// ([`crate::Simulation::checkpoint`]).
    pub every: Option<u64>,
}

impl Checkpoints {
    /// Generations from generation `at` to the next checkpoint of the schedule (`u64::MAX`
    /// where there is no `every`).
    pub fn until_next(&self, at: u64) -> u64 {
        self.every.map_or(u64::MAX, |every| every - at % every)
    }

    /// Whether a checkpoint of the schedule falls at generation `at`.
    pub fn due(&self, at: u64) -> bool {
        self.every.is_some_and(|every| at.is_multiple_of(every))
    }
}

/// The description of a run: what [`crate::Simulation::new`] takes.
///
/// Every field has a default: a 1024² glibc soup of seed 0 under B3/S23 on `auto`.
///
/// ```
/// use gol::{Dim, Setup, Size, Start};
///
/// let setup = Setup {
///     start: Start::Density { density: 0.3, seed: 7 },
///     size: Some(Size::Side(64)),
///     dim: Dim::Three,
///     ..Setup::default()
/// };
/// assert_eq!(setup.dimension().unwrap(), Dim::Three);
/// ```
#[derive(Clone, Debug, Default)]
pub struct Setup {
    /// Where the run starts.
    pub start: Start,
    /// The dimension of a soup; a file, a checkpoint or cells in memory set their own, and a
    /// soup of the other dimension given with them is refused.
    pub dim: Dim,
    /// The size: required for a pattern file with no Golly torus suffix (`:TW,H`), refused for
    /// a `.bin` file; a soup's default is 1024² (2D) or 256³ (3D).
    pub size: Option<Size>,
    /// The rule, overriding the file's; default B3/S23 (2D), B6/S567 (3D). A checkpoint's
    /// rule can only be confirmed, not changed.
    pub rule: Option<Rule>,
    /// The engine.
    pub engine: EngineChoice,
    /// Thread-block size (x, y) of a CUDA engine.
    pub block: Option<(u32, u32)>,
    /// A split over GPUs.
    pub split: Split,
    /// Halo depth of a split run, in layers (rows in 2D, planes in 3D); each dimension's
    /// default otherwise.
    pub halo: Option<usize>,
    /// Checkpoints to write.
    pub checkpoints: Option<Checkpoints>,
    /// Generations the run is expected to take: what `auto` weighs the GPU's start-up
    /// against ([`crate::auto`]). 1024 where not given.
    pub generations: Option<u64>,
    /// Whether the world is the infinite plane whatever the start says: a soup placed as a
    /// pattern of its size is, a file's bounded-grid suffix overridden ([`Setup::on_plane`]).
    pub infinite: bool,
    /// The memory cap of a run on the plane, in bytes ([`crate::plane::default_memory`] where
    /// not given).
    pub memory: Option<u64>,
}

/// The generations `auto` assumes where [`Setup::generations`] is not given.
pub const DEFAULT_GENERATIONS: u64 = 1024;

impl Setup {
    /// The dimension the setup describes, with the combinations that make no sense refused.
    pub fn dimension(&self) -> Result<Dim> {
        let soup_dim = |found: Dim, what: &str| -> Result<Dim> {
            if self.dim != found && self.dim != Dim::default() {
                invalid!("{what} is {}D, not {}D", found.axes(), self.dim.axes());
            }
            Ok(found)
        };
        match &self.start {
            Start::Glibc { .. } => Ok(self.dim),
            Start::Density { density, .. } => {
                if !(0.0..=1.0).contains(density) {
                    invalid!("density {density} is not between 0 and 1");
                }
                Ok(self.dim)
            }
            Start::File(path) if is_bin(path) => soup_dim(Dim::Three, "a .bin cube"),
            Start::File(path) | Start::Opened { path, .. } => {
                if self.dim == Dim::Three {
                    invalid!(
                        "{}: a 3D run reads a .bin cube; .rle and .cells files are 2D",
                        path.display()
                    );
                }
                Ok(Dim::Two)
            }
            Start::Pattern { name, .. } => {
                if self.dim == Dim::Three {
                    invalid!("{}: pattern files are 2D", name.display());
                }
                Ok(Dim::Two)
            }
            Start::Checkpoint(path) => {
                let found = match checkpoint::open(path)?.header.dimension {
                    3 => Dim::Three,
                    _ => Dim::Two,
                };
                soup_dim(found, &format!("checkpoint {}", path.display()))
            }
            Start::Grid(_) => soup_dim(Dim::Two, "a grid"),
            Start::Cube(_) => soup_dim(Dim::Three, "a cube"),
        }
    }

    /// The setup with its pattern file read: [`Start::File`] (but a `.bin` cube) and
    /// [`Start::Pattern`] become [`Start::Opened`], so that the file is read once, here, and
    /// what needs its header ([`Setup::on_plane`]) and the run itself take it from there. Any
    /// other start is kept.
    pub fn opened(self) -> Result<Setup> {
        let start = match self.start {
            Start::File(path) if !is_bin(&path) => {
                let file = Arc::new(PatternFile::open(&path)?);
                Start::Opened { path, file }
            }
            Start::Pattern { name, text } => {
                let file = Arc::new(PatternFile::from_bytes(&name, text)?);
                Start::Opened { path: name, file }
            }
            start => start,
        };
        Ok(Setup { start, ..self })
    }

    /// Whether the world is the infinite plane rather than a grid or a cube: where
    /// [`Setup::infinite`] asks for it, for a pattern file (or text) that names no bounded grid
    /// when no size is given (Golly's default universe), and for a checkpoint of the plane.
    /// A rule with a bounded-plane suffix (`:P`) asks for a grid, whose size must be given;
    /// Golly's tubes and strips (`:T0,20`) are the plane's.
    pub fn on_plane(&self) -> Result<bool> {
        let bounded_rule = |rule: Option<Rule>| {
            rule.is_some_and(|r| !matches!(r.topology(), Topology::Torus | Topology::Strip(_)))
        };
        match &self.start {
            Start::Checkpoint(path) => {
                let plane = checkpoint::is_plane(path);
                if self.infinite && !plane {
                    invalid!(
                        "{}: a checkpoint of a bounded grid resumes on its grid, not on the infinite plane",
                        path.display()
                    );
                }
                Ok(plane)
            }
            _ if self.infinite => Ok(true),
            Start::File(path) if is_bin(path) => Ok(false),
            Start::File(_) | Start::Pattern { .. } | Start::Opened { .. }
                if self.size.is_some() =>
            {
                Ok(false)
            }
            Start::File(_) | Start::Pattern { .. } => self.clone().opened()?.on_plane(),
            Start::Opened { file, .. } => {
                let header = file.header();
                Ok(header.bounds.is_none() && !bounded_rule(self.rule.or(header.rule)))
            }
            _ => Ok(false),
        }
    }

    /// The rule given, checked for dimension `W`.
    pub(crate) fn rule_for<W: Dimension>(&self) -> Result<Option<Rule>> {
        if let Some(rule) = self.rule {
            if let Err(e) = rule.check_neighbours(W::NEIGHBOURS) {
                invalid!("rule in {}: {e}", W::DIMENSION);
            }
        }
        Ok(self.rule)
    }

    /// The width, height and (in 3D) depth of the world where they are known without reading
    /// or making it (all but a pattern file with no size given).
    pub(crate) fn extent_ahead<W: Dimension>(&self) -> Option<(usize, usize, Option<usize>)> {
        if W::AXES == 3 {
            return self.cube_side_ahead().map(|m| (m, m, Some(m)));
        }
        let flat = |(w, h): (usize, usize)| (w, h, None);
        match &self.start {
            Start::Grid(grid) => Some(flat((grid.width(), grid.height()))),
            Start::Cube(cube) => Some((cube.side(), cube.side(), Some(cube.side()))),
            Start::Checkpoint(path) => {
                let header = checkpoint::open(path).ok()?.header;
                Some(flat((header.width as usize, header.rows as usize)))
            }
            Start::File(_) | Start::Pattern { .. } | Start::Opened { .. } => {
                self.size.map(|s| flat(s.sides()))
            }
            _ => Some(flat(self.soup_size())),
        }
    }

    /// The rule where it is known without reading the input (a pattern file may name it),
    /// `Err` where it is not.
    pub(crate) fn rule_ahead<W: Dimension>(&self) -> std::result::Result<Rule, ()> {
        match (&self.rule, &self.start) {
            (Some(rule), _) => Ok(*rule),
            (None, Start::File(_) | Start::Pattern { .. } | Start::Opened { .. })
                if W::AXES == 2 =>
            {
                Err(())
            }
            (None, Start::Checkpoint(path)) => checkpoint::open(path)
                .map(|c| c.header.rule)
                .map_err(|_| ()),
            (None, _) => Ok(W::DEFAULT_RULE),
        }
    }

    /// The side of a cube where it is known without reading or making the cube: a `.bin`
    /// file's or a checkpoint's header, a cube given, or a random cube's side.
    pub(crate) fn cube_side_ahead(&self) -> Option<usize> {
        match &self.start {
            Start::Cube(cube) => Some(cube.side()),
            // A 3D checkpoint's rows are M cells long.
            Start::Checkpoint(path) => Some(checkpoint::open(path).ok()?.header.width as usize),
            Start::File(path) => Some(cube_file::open(path).ok()?.side),
            Start::Grid(_) | Start::Pattern { .. } | Start::Opened { .. } => None,
            _ => self.cube_side().ok(),
        }
    }

    /// The size of a 2D soup: the one given, else the default square.
    fn soup_size(&self) -> (usize, usize) {
        self.size
            .map_or((Grid::DEFAULT_SIDE, Grid::DEFAULT_SIDE), Size::sides)
    }

    /// The side of a random cube: the one given, else the default.
    fn cube_side(&self) -> Result<usize> {
        let side = match self.size {
            None => Cube::DEFAULT_SIDE,
            Some(Size::Side(n)) => n,
            Some(Size::Rect { .. }) => {
                invalid!("a 3D cube has one side: give one size, not a width and a height")
            }
        };
        gol_core::cube::check_side(side)?;
        Ok(side)
    }

    /// The `.bin` file at `path`, checked, with a size refused.
    fn open_cube(&self, path: &Path) -> Result<cube_file::Opened> {
        if self.size.is_some() {
            invalid!(
                "{}: a .bin file sets the cube's side; a size does not apply",
                path.display()
            );
        }
        Ok(cube_file::open(path)?)
    }
}

/// Whether `path` names a `.bin` file (a 3D cube).
pub fn is_bin(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("bin"))
}

/// Where the initial state came from, for reports.
#[derive(Clone, Debug, PartialEq)]
pub enum Source {
    /// glibc's `rand() % 2` after `srand(seed)`.
    Glibc {
        /// The seed.
        seed: u32,
    },
    /// The fast generator at a density.
    Density {
        /// The density.
        density: f64,
        /// The seed.
        seed: u32,
    },
    /// A pattern or `.bin` file.
    File {
        /// The file.
        path: PathBuf,
    },
    /// A checkpoint, written after `done` generations.
    Checkpoint {
        /// The file.
        path: PathBuf,
        /// Its generation.
        done: num_bigint::BigUint,
    },
    /// Cells given in memory.
    Cells,
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Glibc { seed } => write!(f, "glibc rand() % 2 soup, seed {seed}"),
            Source::Density { density, seed } => {
                write!(f, "soup of density {density}, seed {seed}")
            }
            Source::File { path } => write!(f, "file {}", path.display()),
            Source::Checkpoint { path, done } => {
                write!(f, "checkpoint {} at generation {done}", path.display())
            }
            Source::Cells => f.write_str("cells given in memory"),
        }
    }
}

/// A world ready to run, with its rule and where it came from.
pub struct Problem<W> {
    /// The initial world (or one slab of it).
    pub world: W,
    /// The rule.
    pub rule: Rule,
    /// Where it came from.
    pub source: Source,
    /// The generation stamp of the input (a `.bin` file's T, an RLE file's `#CXRLE Gen=`; 0
    /// otherwise).
    pub stamp: u64,
    /// Generations already advanced from the input (a checkpoint's; 0 otherwise).
    pub done: u64,
}

/// The 2D problem of `setup`.
pub(crate) fn grid(setup: &Setup) -> Result<Problem<Grid>> {
    match &setup.start {
        Start::File(path) => read_pattern(setup, path, &PatternFile::open(path)?),
        Start::Pattern { name, text } => {
            let file = PatternFile::from_bytes(name, text.clone())?;
            read_pattern(setup, name, &file)
        }
        Start::Opened { path, file } => read_pattern(setup, path, file),
        Start::Checkpoint(path) => resume(setup, path),
        Start::Grid(grid) => cells(setup, grid.clone()),
        Start::Cube(_) => invalid!("a cube is 3D"),
        Start::Glibc { .. } | Start::Density { .. } => {
            let (width, height) = setup.soup_size();
            gol_core::grid::check_fits(width, height)?;
            let rows = memory::indices(height, &format!("the rows of a {width}x{height} grid"))?;
            soup_rows::<Grid>(setup, width, height, &rows)
        }
    }
}

/// The 3D problem of `setup`.
pub(crate) fn cube(setup: &Setup) -> Result<Problem<Cube>> {
    match &setup.start {
        Start::File(path) => {
            let file = setup.open_cube(path)?;
            let m = file.side;
            gol_core::cube::check_fits(m)?;
            let lines = memory::indices(m * m, &format!("the lines of a cube of side {m}"))?;
            cube_lines_from_file(setup, path, &file, &lines)
        }
        Start::Pattern { name: path, .. } | Start::Opened { path, .. } => {
            invalid!("{}: pattern files are 2D", path.display())
        }
        Start::Checkpoint(path) => resume(setup, path),
        Start::Cube(cube) => cells(setup, cube.clone()),
        Start::Grid(_) => invalid!("a grid is 2D"),
        Start::Glibc { .. } | Start::Density { .. } => {
            let side = setup.cube_side()?;
            gol_core::cube::check_fits(side)?;
            let lines =
                memory::indices(side * side, &format!("the lines of a cube of side {side}"))?;
            cube_soup_lines(setup, side, &lines)
        }
    }
}

/// Part `part` of the 2D problem split into `parts` slabs with halos `halo` rows deep: the
/// slabs, and the problem whose world is that part's extended slab. Soups make only the slab's
/// rows, checkpoints read only them; a pattern file is placed in the whole grid first.
pub(crate) fn grid_slab(
    setup: &Setup,
    parts: usize,
    part: usize,
    halo: usize,
) -> Result<(Slabs, Problem<Grid>)> {
    let asked = setup.rule_for::<Grid>()?;
    if let Some(rule) = asked {
        check_splittable(rule)?;
    }
    match &setup.start {
        Start::Glibc { .. } | Start::Density { .. } => {
            let (width, height) = setup.soup_size();
            let topology = asked.map_or(Topology::Torus, |rule| rule.topology());
            let slabs = Slabs::new::<Grid>(width, height, parts, halo)?.on(topology);
            let rows: Vec<usize> = slabs.extended(part).collect();
            Ok((slabs, soup_rows::<Grid>(setup, width, height, &rows)?))
        }
        Start::Checkpoint(path) => resume_slab(setup, path, parts, part, halo),
        _ => {
            let whole = grid(setup)?;
            check_splittable(whole.rule)?;
            let slabs = Slabs::of(&whole.world, parts, halo)?.on(whole.rule.topology());
            let world = slabs.cut(&whole.world, part)?;
            Ok((slabs, Problem { world, ..whole }))
        }
    }
}

/// Refuses to split a world run under `rule` into slabs: its dying states (Generations rules)
/// do not travel with the rows that slabs exchange.
pub(crate) fn check_splittable(rule: Rule) -> Result<()> {
    if rule.is_multi_state() || rule.rule_table().is_some() {
        invalid!(
            "rule {rule}: Generations rules and rule tables do not run split into slabs (--gpus, MPI ranks) yet; run them in one process"
        );
    }
    Ok(())
}

/// [`grid_slab`] for a cube: soups and `.bin` files make or read only the slab's planes.
pub(crate) fn cube_slab(
    setup: &Setup,
    parts: usize,
    part: usize,
    halo: usize,
) -> Result<(Slabs, Problem<Cube>)> {
    let file = match &setup.start {
        Start::File(path) => Some((path, setup.open_cube(path)?)),
        Start::Glibc { .. } | Start::Density { .. } => None,
        Start::Checkpoint(path) => return resume_slab(setup, path, parts, part, halo),
        _ => {
            let whole = cube(setup)?;
            let slabs = Slabs::of(&whole.world, parts, halo)?;
            let world = slabs.cut(&whole.world, part)?;
            return Ok((slabs, Problem { world, ..whole }));
        }
    };
    let side = match &file {
        Some((_, file)) => file.side,
        None => setup.cube_side()?,
    };
    let slabs = Slabs::new::<Cube>(side, side, parts, halo)?;
    let lines: Vec<usize> = slabs.extended(part).collect();
    let problem = match &file {
        Some((path, file)) => cube_lines_from_file(setup, path, file, &lines)?,
        None => cube_soup_lines(setup, side, &lines)?,
    };
    Ok((slabs, problem))
}

/// Cells given in memory, with the rule given or the default.
fn cells<W: Dimension>(setup: &Setup, world: W) -> Result<Problem<W>> {
    if setup.size.is_some() {
        invalid!("cells given in memory set their own size; a size does not apply");
    }
    Ok(Problem {
        world,
        rule: setup.rule_for::<W>()?.unwrap_or(W::DEFAULT_RULE),
        source: Source::Cells,
        stamp: 0,
        done: 0,
    })
}

/// Lines `lines` of the cube in `file` as a problem whose world is the slab they make (the
/// whole cube for all its lines in order).
fn cube_lines_from_file(
    setup: &Setup,
    path: &Path,
    file: &cube_file::Opened,
    lines: &[usize],
) -> Result<Problem<Cube>> {
    let rule = setup.rule_for::<Cube>()?.unwrap_or(Cube::DEFAULT_RULE);
    Ok(Problem {
        world: Cube::slab(file.read_lines(lines)?)?,
        rule,
        source: Source::File {
            path: path.to_path_buf(),
        },
        stamp: file.stamp,
        done: 0,
    })
}

/// Lines `lines` (in that order) of the soup cube of side `side`, as a problem whose world is
/// the slab they make.
fn cube_soup_lines(setup: &Setup, side: usize, lines: &[usize]) -> Result<Problem<Cube>> {
    let soup = soup_rows::<Cube>(setup, side, side * side, lines)?;
    Ok(Problem {
        world: Cube::slab(soup.world)?,
        rule: soup.rule,
        source: soup.source,
        stamp: 0,
        done: 0,
    })
}

/// The pattern of `file` (read from `path`) on the grid the setup or the file sizes.
fn read_pattern(setup: &Setup, path: &Path, file: &PatternFile) -> Result<Problem<Grid>> {
    let rule_given = setup.rule_for::<Grid>()?;
    let header = file.header();
    let Some((width, height)) = setup.size.map(Size::sides).or(header.bounds) else {
        invalid!(
            "{}: the grid size is not given: use --size N or --width W --height H (or a Golly bounded-grid suffix :TW,H or :PW,H on the file's rule)",
            path.display()
        );
    };
    let mut rule = rule_given.or(header.rule).unwrap_or(Grid::DEFAULT_RULE);
    // A size given for a tube makes it a torus, for a strip a bounded plane.
    if let Topology::Strip(strip) = rule.topology() {
        rule = rule.on(if strip.wrap {
            Topology::Torus
        } else {
            Topology::Plane
        });
    }
    if let Topology::Surface(surface) = rule.topology() {
        if (surface.width, surface.height) != (width, height) {
            match surface.resized(width, height) {
                Ok(resized) => rule = rule.on(Topology::Surface(resized)),
                Err(why) => invalid!("{}: {why}", path.display()),
            }
        }
    }
    if let Err(e) = rule.check_neighbours(8) {
        invalid!("{}: {e}", path.display());
    }
    gol_core::grid::check_size(width, height)?;
    let Some(stamp) = header.generation.to_u64() else {
        invalid!(
            "{}: generation {} is beyond what a bounded grid counts (2^64 - 1); run it on the infinite plane",
            path.display(),
            header.generation
        );
    };
    Ok(Problem {
        world: file.place_with_states(width, height, rule.states())?,
        rule,
        source: Source::File {
            path: path.to_path_buf(),
        },
        stamp,
        done: 0,
    })
}

/// Rows `rows` (in that order) of the `width` × `height` soup of `setup`, as a problem whose
/// world holds only those rows; the rule is that of dimension `W` (a cube's soup is the soup
/// of its lines).
fn soup_rows<W: Dimension>(
    setup: &Setup,
    width: usize,
    height: usize,
    rows: &[usize],
) -> Result<Problem<Grid>> {
    let rule = setup.rule_for::<W>()?.unwrap_or(W::DEFAULT_RULE);
    let (world, source) = match setup.start {
        Start::Density { density, seed } => (
            seed::density_rows(width, density, seed as u64, rows)?,
            Source::Density { density, seed },
        ),
        Start::Glibc { seed } => (
            seed::glibc_rows(width, height, seed, rows)?,
            Source::Glibc { seed },
        ),
        _ => unreachable!("soup_rows is called for soups"),
    };
    Ok(Problem {
        world,
        rule,
        source,
        stamp: 0,
        done: 0,
    })
}

/// The checkpoint at `path`, checked against the setup: a rule or a size that differs from the
/// checkpoint's is refused.
fn resumable<W: Dimension>(setup: &Setup, path: &Path) -> Result<checkpoint::Opened> {
    let opened = checkpoint::open(path)?;
    let header = &opened.header;
    header.check_dimension::<W>(path)?;
    if let Some(rule) = setup.rule_for::<W>()? {
        if rule != header.rule {
            invalid!(
                "{}: the checkpoint runs rule {}, not the rule asked for, {rule}",
                path.display(),
                header.rule
            );
        }
    }
    let (width, height) = match W::AXES {
        2 => (header.width, header.rows),
        _ => (header.width, header.width),
    };
    if let Some((w, h)) = setup.size.map(Size::sides) {
        if (w, h) != (width, height) {
            invalid!(
                "{}: the checkpoint holds a {width}x{height} world, not the {w}x{h} asked for",
                path.display()
            );
        }
    }
    Ok(opened)
}

fn resumed<W>(world: W, path: &Path, header: &checkpoint::Header) -> Problem<W> {
    Problem {
        world,
        rule: header.rule,
        source: Source::Checkpoint {
            path: path.to_path_buf(),
            done: header.done.into(),
        },
        stamp: header.stamp,
        done: header.done,
    }
}

/// The problem a checkpoint holds (see [`resumable`] for what is checked).
fn resume<W: Dimension>(setup: &Setup, path: &Path) -> Result<Problem<W>> {
    let opened = resumable::<W>(setup, path)?;
    Ok(resumed(opened.read()?, path, &opened.header))
}

/// One part of a checkpoint split into slabs, of which only the slab's rows are read.
fn resume_slab<W: Dimension>(
    setup: &Setup,
    path: &Path,
    parts: usize,
    part: usize,
    halo: usize,
) -> Result<(Slabs, Problem<W>)> {
    let opened = resumable::<W>(setup, path)?;
    let header = &opened.header;
    check_splittable(header.rule)?;
    let layers = header.rows / W::layer_rows(header.width);
    let slabs = Slabs::new::<W>(header.width, layers, parts, halo)?.on(header.rule.topology());
    let rows: Vec<usize> = slabs.extended(part).collect();
    let world = W::slab(opened.read_rows(&rows)?)?;
    Ok((slabs, resumed(world, path, header)))
}

#[cfg(test)]
mod test {
    use super::*;

    /// A pattern file or text read once ([`Setup::opened`]) goes where it went when it was read
    /// for its header and again for its cells: the same choice of plane or grid, the same
    /// cells; a `.bin` cube is kept a file.
    #[test]
    fn a_pattern_read_once_runs_as_it_did_read_twice() {
        let dir = tempfile::tempdir().unwrap();
        let glider = "bo$2bo$3o!\n";
        let torus = dir.path().join("torus.rle");
        std::fs::write(
            &torus,
            format!("x = 3, y = 3, rule = B3/S23:T8,8\n{glider}"),
        )
        .unwrap();
        let plane = dir.path().join("plane.rle");
        std::fs::write(&plane, format!("x = 3, y = 3\n{glider}")).unwrap();
        for (path, on_plane) in [(&torus, false), (&plane, true)] {
            let text = std::fs::read(path).unwrap();
            let starts = [
                Start::File(path.clone()),
                Start::Pattern {
                    name: path.clone(),
                    text,
                },
            ];
            for start in starts {
                let setup = Setup {
                    start,
                    ..Setup::default()
                };
                let opened = setup.clone().opened().unwrap();
                assert!(matches!(&opened.start, Start::Opened { path: p, .. } if p == path));
                assert_eq!(opened.on_plane().unwrap(), on_plane, "{}", path.display());
                assert_eq!(setup.on_plane().unwrap(), on_plane, "{}", path.display());
                if !on_plane {
                    let world = |s: &Setup| grid(s).unwrap().world;
                    assert_eq!(world(&opened), world(&setup));
                    assert_eq!(world(&opened).population(), 5);
                }
            }
        }
        let cube = dir.path().join("cube.bin");
        let setup = Setup {
            start: Start::File(cube.clone()),
            ..Setup::default()
        };
        assert!(matches!(setup.opened().unwrap().start, Start::File(p) if p == cube));
    }
}
