//! Turning the problem options into an initial world (a 2D grid or a 3D cube) and a rule.

use std::path::Path;

use anyhow::{bail, Context, Result};
use gol_core::pattern::PatternFile;
#[cfg(feature = "mpi")]
use gol_core::slab::Slabs;
use gol_core::{checkpoint, cube_file, seed, Cube, Grid, Rule};

use crate::cli::ProblemArgs;
use crate::engines::{is_bin, Dimension};

/// The side of a random 2D soup when no size is given: the seeds' N.
pub const DEFAULT_SIDE: usize = 1024;

/// The side of a random 3D soup when no size is given.
pub const DEFAULT_SIDE_3D: usize = 256;

/// A world ready to run, with its rule and a description of where it came from.
pub struct Problem<W> {
    pub world: W,
    pub rule: Rule,
    pub source: Source,
    /// The generation stamp of the input (a `.bin` file's T; 0 otherwise).
    pub stamp: u64,
    /// Generations already advanced from the input (a resumed checkpoint's; 0 otherwise).
    pub done: u64,
}

/// Building the problem of one dimension from the options.
pub trait Build: Dimension {
    /// The problem the options describe, in this dimension.
    fn build(args: &ProblemArgs) -> Result<Problem<Self>>;

    /// Part `part` of that problem split into `parts` slabs with halos `halo` layers deep: the
    /// slabs, and the problem whose world is that part's extended slab. Soups and `.bin` files
    /// make or read only the slab's layers; a pattern file is placed in the whole grid first.
    #[cfg(feature = "mpi")]
    fn build_slab(
        args: &ProblemArgs,
        parts: usize,
        part: usize,
        halo: usize,
    ) -> Result<(Slabs, Problem<Self>)>;
}

impl Build for Grid {
    fn build(args: &ProblemArgs) -> Result<Problem<Grid>> {
        match &args.input {
            Some(path) => read_pattern(args, path),
            None => random_grid(args),
        }
    }

    #[cfg(feature = "mpi")]
    fn build_slab(
        args: &ProblemArgs,
        parts: usize,
        part: usize,
        halo: usize,
    ) -> Result<(Slabs, Problem<Grid>)> {
        if args.input.is_some() {
            let whole = Grid::build(args)?;
            let slabs = Slabs::of(&whole.world, parts, halo)?;
            let world = slabs.cut(&whole.world, part)?;
            return Ok((slabs, Problem { world, ..whole }));
        }
        let (width, height) = soup_size(args);
        let slabs = Slabs::new::<Grid>(width, height, parts, halo)?;
        let rows: Vec<usize> = slabs.extended(part).collect();
        Ok((slabs, soup_rows::<Grid>(args, width, height, &rows)?))
    }
}

impl Build for Cube {
    fn build(args: &ProblemArgs) -> Result<Problem<Cube>> {
        match &args.input {
            Some(path) => read_cube(args, path),
            None => random_cube(args),
        }
    }

    #[cfg(feature = "mpi")]
    fn build_slab(
        args: &ProblemArgs,
        parts: usize,
        part: usize,
        halo: usize,
    ) -> Result<(Slabs, Problem<Cube>)> {
        let file = args
            .input
            .as_deref()
            .map(|p| open_cube(args, p))
            .transpose()?;
        let side = match &file {
            Some(file) => file.side,
            None => cube_side(args)?,
        };
        let slabs = Slabs::new::<Cube>(side, side, parts, halo)?;
        let lines: Vec<usize> = slabs.extended(part).collect();
        let problem = match (&file, &args.input) {
            (Some(file), Some(path)) => cube_lines_from_file(args, path, file, &lines)?,
            _ => cube_soup_lines(args, side, &lines)?,
        };
        Ok((slabs, problem))
    }
}

/// Where the initial state came from.
pub enum Source {
    /// glibc's rand() % 2 after srand(seed).
    Glibc { seed: u32 },
    /// The fast generator at a density.
    Density { density: f64, seed: u32 },
    /// A pattern or `.bin` file.
    File { path: String },
    /// A checkpoint, written after `done` generations.
    Checkpoint { path: String, done: u64 },
}

impl Source {
    pub fn describe(&self) -> String {
        match self {
            Source::Glibc { seed } => format!("glibc rand() % 2 soup, seed {seed}"),
            Source::Density { density, seed } => format!("soup of density {density}, seed {seed}"),
            Source::File { path } => format!("file {path}"),
            Source::Checkpoint { path, done } => {
                format!("checkpoint {path} at generation {done}")
            }
        }
    }
}

/// The explicit grid size, if the options give one.
fn explicit_size(args: &ProblemArgs) -> Option<(usize, usize)> {
    match (args.size, args.width, args.height) {
        (Some(n), _, _) => Some((n, n)),
        (None, Some(w), Some(h)) => Some((w, h)),
        _ => None,
    }
}

/// The rule given with --rule, checked for the dimension.
fn rule_override<W: Dimension>(args: &ProblemArgs) -> Result<Option<Rule>> {
    let rule = args.rule.as_deref().map(Rule::parse).transpose()?;
    if let Some(rule) = rule {
        rule.check_neighbours(W::NEIGHBOURS)
            .with_context(|| format!("--rule in {}", W::DIMENSION))?;
    }
    Ok(rule)
}

/// Checks the options that do not depend on the dimension and says which it is: 3D for a
/// `.bin` input or `--dim 3`, else 2D.
pub fn is_3d(args: &ProblemArgs) -> Result<bool> {
    if args.dim != 2 && args.dim != 3 {
        bail!("--dim {} is not a dimension gol runs; use 2 or 3", args.dim);
    }
    if args.input.is_some() && (args.seed.is_some() || args.density.is_some()) {
        bail!("--seed and --density make a random soup; they cannot be used with --input");
    }
    match &args.input {
        Some(path) if is_bin(path) => Ok(true),
        Some(path) if args.dim == 3 => bail!(
            "{}: a 3D run reads a .bin cube; .rle and .cells files are 2D",
            path.display()
        ),
        Some(_) => Ok(false),
        None => Ok(args.dim == 3),
    }
}

fn read_cube(args: &ProblemArgs, path: &Path) -> Result<Problem<Cube>> {
    let file = open_cube(args, path)?;
    let m = file.side;
    cube_lines_from_file(args, path, &file, &(0..m * m).collect::<Vec<_>>())
}

/// The `.bin` file at `path`, checked, with the options that cannot go with it refused.
fn open_cube(args: &ProblemArgs, path: &Path) -> Result<cube_file::Opened> {
    if args.width.is_some() || args.size.is_some() {
        bail!(
            "{}: a .bin file sets the cube's side; --size, --width and --height do not apply",
            path.display()
        );
    }
    Ok(cube_file::open(path)?)
}

/// Lines `lines` of the cube in `file` (see [`cube_file::Opened::read_lines`]) as a problem
/// whose world is the slab they make (the whole cube for all its lines in order).
fn cube_lines_from_file(
    args: &ProblemArgs,
    path: &Path,
    file: &cube_file::Opened,
    lines: &[usize],
) -> Result<Problem<Cube>> {
    let rule = rule_override::<Cube>(args)?.unwrap_or(Cube::DEFAULT_RULE);
    Ok(Problem {
        world: Cube::slab(file.read_lines(lines)?)?,
        rule,
        source: Source::File {
            path: path.display().to_string(),
        },
        stamp: file.stamp,
        done: 0,
    })
}

fn random_cube(args: &ProblemArgs) -> Result<Problem<Cube>> {
    let side = cube_side(args)?;
    cube_soup_lines(args, side, &(0..side * side).collect::<Vec<_>>())
}

/// The side of a random cube: --size, else the default.
fn cube_side(args: &ProblemArgs) -> Result<usize> {
    if args.width.is_some() {
        bail!("a 3D cube has one side: use --size N, not --width and --height");
    }
    let side = args.size.unwrap_or(DEFAULT_SIDE_3D);
    gol_core::cube::check_side(side)?;
    Ok(side)
}

/// Lines `lines` (in that order) of the cube of side `side` the soup options describe, as a
/// problem whose world is the slab they make.
fn cube_soup_lines(args: &ProblemArgs, side: usize, lines: &[usize]) -> Result<Problem<Cube>> {
    let soup = soup_rows::<Cube>(args, side, side * side, lines)?;
    Ok(Problem {
        world: Cube::slab(soup.world)?,
        rule: soup.rule,
        source: soup.source,
        stamp: 0,
        done: 0,
    })
}

fn read_pattern(args: &ProblemArgs, path: &Path) -> Result<Problem<Grid>> {
    let rule_override = rule_override::<Grid>(args)?;
    let file = PatternFile::open(path)?;
    let header = file.header();
    let Some((width, height)) = explicit_size(args).or(header.torus) else {
        bail!(
            "{}: the grid size is not given: use --size N or --width W --height H (or a Golly torus suffix :TW,H on the file's rule)",
            path.display()
        );
    };
    let rule = rule_override.or(header.rule).unwrap_or(Grid::DEFAULT_RULE);
    rule.check_neighbours(8)
        .with_context(|| format!("{}", path.display()))?;
    gol_core::grid::check_size(width, height)?;
    let world = file.place(width, height)?;
    Ok(Problem {
        world,
        rule,
        source: Source::File {
            path: path.display().to_string(),
        },
        stamp: 0,
        done: 0,
    })
}

fn random_grid(args: &ProblemArgs) -> Result<Problem<Grid>> {
    let (width, height) = soup_size(args);
    soup_rows::<Grid>(args, width, height, &(0..height).collect::<Vec<_>>())
}

/// The size of a 2D soup: the one given, else the default square.
fn soup_size(args: &ProblemArgs) -> (usize, usize) {
    explicit_size(args).unwrap_or((DEFAULT_SIDE, DEFAULT_SIDE))
}

/// Rows `rows` (in that order) of the `width` × `height` soup the options describe (glibc's, or
/// the fast generator's with --density), as a problem whose world holds only those rows; the
/// rule is that of dimension `W` (a cube's soup is the soup of its lines).
fn soup_rows<W: Dimension>(
    args: &ProblemArgs,
    width: usize,
    height: usize,
    rows: &[usize],
) -> Result<Problem<Grid>> {
    let rule = rule_override::<W>(args)?.unwrap_or(W::DEFAULT_RULE);
    let seed = args.seed.unwrap_or(0);
    let (world, source) = match args.density {
        Some(density) => (
            seed::density_rows(width, density, seed as u64, rows)?,
            Source::Density { density, seed },
        ),
        None => (
            seed::glibc_rows(width, height, seed, rows)?,
            Source::Glibc { seed },
        ),
    };
    Ok(Problem {
        world,
        rule,
        source,
        stamp: 0,
        done: 0,
    })
}

/// Whether the checkpoint at `path` holds a 3D cube.
pub fn checkpoint_is_3d(path: &Path) -> Result<bool> {
    Ok(checkpoint::open(path)?.header.dimension == 3)
}

/// The checkpoint at `path`, checked against the options that describe the world: a --rule or
/// a size that differs from the checkpoint's is refused.
fn resumable<W: Dimension>(args: &ProblemArgs, path: &Path) -> Result<checkpoint::Opened> {
    let opened = checkpoint::open(path)?;
    let header = &opened.header;
    header.check_dimension::<W>(path)?;
    if let Some(rule) = rule_override::<W>(args)? {
        if rule != header.rule {
            bail!(
                "{}: the checkpoint runs rule {}, not --rule {rule}",
                path.display(),
                header.rule
            );
        }
    }
    let (width, height) = match W::AXES {
        2 => (header.width, header.rows),
        _ => (header.width, header.width),
    };
    if let Some((w, h)) = explicit_size(args) {
        if (w, h) != (width, height) {
            bail!(
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
            path: path.display().to_string(),
            done: header.done,
        },
        stamp: header.stamp,
        done: header.done,
    }
}

/// The problem a checkpoint holds (see [`resumable`] for what is checked).
pub fn resume<W: Dimension>(args: &ProblemArgs, path: &Path) -> Result<Problem<W>> {
    let opened = resumable::<W>(args, path)?;
    Ok(resumed(opened.read()?, path, &opened.header))
}

#[cfg(feature = "mpi")]
/// Part `part` of the problem split into `parts` slabs with halos `halo` layers deep
/// ([`Build::build_slab`]), or of the checkpoint `resume_from`, of which only the slab's rows
/// are read.
pub fn slab<W: Build>(
    args: &ProblemArgs,
    resume_from: Option<&Path>,
    parts: usize,
    part: usize,
    halo: usize,
) -> Result<(Slabs, Problem<W>)> {
    let Some(path) = resume_from else {
        return W::build_slab(args, parts, part, halo);
    };
    let opened = resumable::<W>(args, path)?;
    let header = &opened.header;
    let layers = header.rows / W::layer_rows(header.width);
    let slabs = Slabs::new::<W>(header.width, layers, parts, halo)?;
    let rows: Vec<usize> = slabs.extended(part).collect();
    let world = W::slab(opened.read_rows(&rows)?)?;
    Ok((slabs, resumed(world, path, header)))
}
