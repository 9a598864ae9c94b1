//! Every engine this build has, CUDA and CPU, for each dimension, and `--engine auto`.

use std::path::Path;

use anyhow::Result;
use gol_core::engine::{self, Engine, EngineOptions, EngineSpec, World};
use gol_core::slab::Decomposed;
use gol_core::{cube_file, pattern, Cube, Grid, Rule};

use crate::cli::{Gpus, RunArgs};

/// What the commands need to know of a dimension beyond [`World`].
pub trait Dimension: World {
    /// The default rule (B3/S23 or B6/S567).
    const DEFAULT_RULE: Rule;
    /// The superscript of the side in tables (`²` or `³`).
    const POWER: &'static str;
    /// The halo depth of split runs where `--halo` is not given, in layers.
    const DEFAULT_HALO: usize;

    /// All registered engines, fastest first: the CUDA ones, then the CPU ones.
    fn registry() -> Vec<EngineSpec<Self>>;

    /// Refuses a side the world cannot have.
    fn check_side(side: usize) -> Result<()>;

    /// A square (cube) of side `side` filled with glibc's `rand() % 2` after `srand(seed)`.
    fn glibc_soup(side: usize, seed: u32) -> Result<Self>;

    /// Width, height and (in 3D) depth.
    fn extent(&self) -> (usize, usize, Option<usize>);

    /// Writes the state to `path`; `stamp` is the generation count to record where the format
    /// has one.
    fn write(&self, path: &Path, rule: Rule, stamp: u64) -> Result<()>;
}

impl Dimension for Grid {
    const DEFAULT_RULE: Rule = Rule::LIFE;
    const POWER: &'static str = "²";
    const DEFAULT_HALO: usize = gol_core::slab::DEFAULT_DEPTH;

    fn registry() -> Vec<EngineSpec<Grid>> {
        gol_cuda::ENGINES
            .iter()
            .chain(gol_core::cpu::ENGINES)
            .copied()
            .collect()
    }

    fn check_side(side: usize) -> Result<()> {
        Ok(gol_core::grid::check_size(side, side)?)
    }

    fn glibc_soup(side: usize, seed: u32) -> Result<Grid> {
        Ok(gol_core::seed::glibc_soup(side, side, seed)?)
    }

    fn extent(&self) -> (usize, usize, Option<usize>) {
        (self.width(), self.height(), None)
    }

    fn write(&self, path: &Path, rule: Rule, _stamp: u64) -> Result<()> {
        if is_bin(path) {
            anyhow::bail!(
                "{}: .bin files hold 3D cubes; write a 2D grid as .rle, .cells or .png",
                path.display()
            );
        }
        Ok(pattern::write(path, self, rule)?)
    }
}

impl Dimension for Cube {
    const DEFAULT_RULE: Rule = Rule::LIFE_3D;
    const POWER: &'static str = "³";
    const DEFAULT_HALO: usize = gol_core::slab::DEFAULT_DEPTH_3D;

    fn registry() -> Vec<EngineSpec<Cube>> {
        gol_cuda::ENGINES_3D
            .iter()
            .chain(gol_core::cpu::ENGINES_3D)
            .copied()
            .collect()
    }

    fn check_side(side: usize) -> Result<()> {
        Ok(gol_core::cube::check_side(side)?)
    }

    fn glibc_soup(side: usize, seed: u32) -> Result<Cube> {
        Ok(Cube::glibc_soup(side, seed)?)
    }

    fn extent(&self) -> (usize, usize, Option<usize>) {
        (self.side(), self.side(), Some(self.side()))
    }

    fn write(&self, path: &Path, _rule: Rule, stamp: u64) -> Result<()> {
        if !is_bin(path) {
            anyhow::bail!(
                "{}: a 3D cube is written as a .bin file (the contest's format)",
                path.display()
            );
        }
        Ok(cube_file::write(path, self, stamp)?)
    }
}

/// The engine `name` (`auto`: cuda-bitsliced) advancing `parts` slabs with halos `halo`
/// layers deep, the slabs going round `gpus` GPUs (one each where `parts` = `gpus`, as
/// `--gpus` asks), halos exchanged GPU to GPU where the engine keeps its state there.
pub fn split<W: Dimension>(
    name: &str,
    options: &EngineOptions,
    parts: usize,
    gpus: usize,
    halo: usize,
) -> Result<Box<dyn Engine<W>>> {
    let name = if name == "auto" {
        "cuda-bitsliced"
    } else {
        name
    };
    let engines = (0..parts)
        .map(|p| {
            let options = EngineOptions {
                device: p % gpus.max(1),
                ..*options
            };
            create::<W>(name, &options)
        })
        .collect::<Result<Vec<_>>>()?;
    let decomposed = Decomposed::new(engines, halo)?;
    Ok(Box::new(if name.starts_with("cuda-") {
        decomposed.with_peer_copy(Box::new(gol_cuda::peer::Peers::open(gpus)?))
    } else {
        decomposed
    }))
}

/// Whether `path` names a `.bin` file (a 3D cube).
pub fn is_bin(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("bin"))
}

/// Makes the engine `name`; `auto` gives the first (fastest) engine that can run here with
/// these options.
pub fn create<W: Dimension>(name: &str, options: &EngineOptions) -> Result<Box<dyn Engine<W>>> {
    let specs = W::registry();
    if name == "auto" {
        let mut reasons: Vec<String> = Vec::new();
        for spec in &specs {
            match (spec.create)(options) {
                Ok(engine) => return Ok(engine),
                Err(e) if !reasons.contains(&e.to_string()) => reasons.push(e.to_string()),
                Err(_) => {}
            }
        }
        anyhow::bail!("no engine can run here: {}", reasons.join("; "));
    }
    let spec = engine::find(&specs, name)?;
    Ok((spec.create)(options)?)
}

/// The engine of a run: one engine, or with --gpus one per GPU over slabs; and the number of
/// GPUs of a split run.
pub fn create_split<W: Dimension>(
    args: &RunArgs,
    options: &EngineOptions,
) -> Result<(Box<dyn Engine<W>>, Option<usize>)> {
    let Some(gpus) = args.gpus else {
        return Ok((create::<W>(&args.engine, options)?, None));
    };
    let gpus = gpu_count(gpus)?;
    Ok((
        split::<W>(
            &args.engine,
            options,
            gpus,
            gpus,
            args.halo.unwrap_or(W::DEFAULT_HALO),
        )?,
        Some(gpus),
    ))
}

/// The number of GPUs `--gpus` asks for, checked against the machine.
pub fn gpu_count(gpus: Gpus) -> Result<usize> {
    let present = gol_cuda::device::device_count()?;
    match gpus {
        Gpus::All => Ok(present),
        Gpus::Count(n) if n > present => {
            anyhow::bail!("--gpus {n}: this machine has {present} GPU(s)")
        }
        Gpus::Count(n) => Ok(n),
    }
}
