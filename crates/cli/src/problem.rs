//! Turning the problem options into an initial grid and a rule.

use anyhow::{bail, Context, Result};
use gol_core::pattern::PatternFile;
use gol_core::{seed, Grid, Rule};

use crate::cli::ProblemArgs;

/// The side of a random soup when no size is given: the seeds' N.
pub const DEFAULT_SIDE: usize = 1024;

/// A grid ready to run, with its rule and a description of where it came from.
pub struct Problem {
    pub grid: Grid,
    pub rule: Rule,
    pub source: Source,
}

/// Where the initial state came from.
pub enum Source {
    /// glibc's rand() % 2 after srand(seed).
    Glibc { seed: u32 },
    /// The fast generator at a density.
    Density { density: f64, seed: u32 },
    /// A pattern file.
    File { path: String },
}

impl Source {
    pub fn describe(&self) -> String {
        match self {
            Source::Glibc { seed } => format!("glibc rand() % 2 soup, seed {seed}"),
            Source::Density { density, seed } => format!("soup of density {density}, seed {seed}"),
            Source::File { path } => format!("pattern {path}"),
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

/// Builds the problem the options describe.
pub fn build(args: &ProblemArgs) -> Result<Problem> {
    if args.dim == 3 {
        bail!("3D runs are not supported yet: this build has 2D engines only (--dim 2)");
    }
    if args.dim != 2 {
        bail!(
            "--dim {} is not a dimension gol runs; use 2 (or 3 once the 3D engines land)",
            args.dim
        );
    }
    let rule_override = args.rule.as_deref().map(Rule::parse).transpose()?;
    if let Some(rule) = rule_override {
        rule.check_neighbours(8)?;
    }
    if let Some(path) = &args.input {
        if args.seed.is_some() || args.density.is_some() {
            bail!("--seed and --density make a random soup; they cannot be used with --input");
        }
        let is_bin = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("bin"));
        if is_bin {
            bail!(
                "{}: .bin files are 3D grids, which this build does not run yet",
                path.display()
            );
        }
        let file = PatternFile::open(path)?;
        let header = file.header();
        let Some((width, height)) = explicit_size(args).or(header.torus) else {
            bail!(
                "{}: the grid size is not given: use --size N or --width W --height H (or a Golly torus suffix :TW,H on the file's rule)",
                path.display()
            );
        };
        let rule = rule_override.or(header.rule).unwrap_or_default();
        rule.check_neighbours(8)
            .with_context(|| format!("{}", path.display()))?;
        gol_core::grid::check_size(width, height)?;
        let grid = file.place(width, height)?;
        return Ok(Problem {
            grid,
            rule,
            source: Source::File {
                path: path.display().to_string(),
            },
        });
    }
    let (width, height) = explicit_size(args).unwrap_or((DEFAULT_SIDE, DEFAULT_SIDE));
    let seed = args.seed.unwrap_or(0);
    let rule = rule_override.unwrap_or_default();
    let (grid, source) = match args.density {
        Some(density) => (
            seed::density_soup(width, height, density, seed as u64)?,
            Source::Density { density, seed },
        ),
        None => (
            seed::glibc_soup(width, height, seed)?,
            Source::Glibc { seed },
        ),
    };
    Ok(Problem { grid, rule, source })
}
