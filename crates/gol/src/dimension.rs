//! What the library needs of a dimension beyond [`World`]: its defaults, its engines, how its
//! worlds are made from a [`Setup`] and written to files.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use gol_core::engine::{EngineSpec, World};
use gol_core::picture::{self, Frame, Look, View};
use gol_core::slab::Slabs;
use gol_core::{cube_file, pattern, Cube, Grid, Rule};

use crate::error::{invalid, Result};
use crate::output::{self, Animation, Format, Picture};
use crate::setup::{self, Dim, Problem, Setup};
use crate::Identity;

/// A 2D [`Grid`] or a 3D [`Cube`], as the library runs them.
pub trait Dimension: World {
    /// The default rule (B3/S23 or B6/S567).
    const DEFAULT_RULE: Rule;
    /// The side of a soup when no size is given: 1024 (N of Kurnosov's seminar, docs/lineage.md) or 256.
    const DEFAULT_SIDE: usize;
    /// The superscript of the side in tables (`²` or `³`).
    const POWER: &'static str;
    /// The halo depth of split runs where none is given, in layers.
    const DEFAULT_HALO: usize;

    /// All registered engines, fastest first: the CUDA ones, then the CPU ones.
    fn registry() -> Vec<EngineSpec<Self>>;

    /// Refuses a side the world cannot have.
    fn check_side(side: usize) -> Result<()>;

    /// A square (cube) of side `side` filled with glibc's `rand() % 2` after `srand(seed)`.
    fn glibc_soup(side: usize, seed: u32) -> Result<Self>;

    /// Width, height and (in 3D) depth.
    fn extent(&self) -> (usize, usize, Option<usize>);

    /// The dimension, as a setup names it.
    const DIM: Dim;

    /// Writes the state to `path`, in the format its extension names ([`Format::of`]):
    /// pictures drawn as `picture` says, `stamp` the generation count to record where the
    /// format has one.
    fn write(&self, path: &Path, rule: Rule, stamp: u64, picture: &Picture) -> Result<()> {
        let format = Format::of(path, Self::DIM)?;
        match format {
            Format::Png => output::write_png(path, &self.picture(picture)?),
            Format::Gif => {
                let mut animation = Animation::create(path, *picture)?;
                animation.add(self)?;
                animation.finish()
            }
            Format::Rle | Format::Cells | Format::Macrocell | Format::Bin => {
                self.write_cells(path, rule, stamp)
            }
        }
    }

    /// Writes the cells to `path` in the cell format it names (RLE, `.cells`, `.bin`).
    fn write_cells(&self, path: &Path, rule: Rule, stamp: u64) -> Result<()>;

    /// An output begun before its run by [`Dimension::begin_output`]: a cube's `.bin` file; a
    /// grid begins none.
    type Begun: Send;

    /// Begins the output `path` before the run where that takes time off its end: a 3D `.bin`
    /// file for a cube whose side `setup` tells ahead is made, and its pages written, while
    /// the run starts and computes ([`cube_file::Output`]). `None` for every other output,
    /// which is written whole at the end.
    fn begin_output(path: &Path, setup: &Setup) -> Result<Option<Self::Begun>>;

    /// Writes the state, stamped `stamp`, into the output `begun`, and puts the file in place.
    fn finish_output(&self, begun: Self::Begun, stamp: u64) -> Result<()>;

    /// The picture of the state ([`gol_core::picture`]).
    fn picture(&self, picture: &Picture) -> Result<Frame>;

    /// The problem `setup` describes, in this dimension.
    fn build(setup: &Setup) -> Result<Problem<Self>>;

    /// Part `part` of that problem split into `parts` slabs with halos `halo` layers deep: the
    /// slabs, and the problem whose world is that part's extended slab (for MPI ranks, which
    /// each hold one slab).
    fn build_slab(
        setup: &Setup,
        parts: usize,
        part: usize,
        halo: usize,
    ) -> Result<(Slabs, Problem<Self>)>;

    /// What the world's cells are on the infinite plane under `rule`, the top-left cell at
    /// (0, 0) ([`crate::identify()`]); 2D only.
    fn identify(&self, rule: Rule, limit: u64, stop: &AtomicBool) -> Result<Identity>;
}

impl Dimension for Grid {
    const DEFAULT_RULE: Rule = Rule::LIFE;
    const DEFAULT_SIDE: usize = 1024;
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

    const DIM: Dim = Dim::Two;

    fn write_cells(&self, path: &Path, rule: Rule, stamp: u64) -> Result<()> {
        Ok(pattern::write(path, self, rule, stamp)?)
    }

    type Begun = std::convert::Infallible;

    fn begin_output(_path: &Path, _setup: &Setup) -> Result<Option<Self::Begun>> {
        Ok(None)
    }

    fn finish_output(&self, begun: Self::Begun, _stamp: u64) -> Result<()> {
        match begun {}
    }

    fn picture(&self, p: &Picture) -> Result<Frame> {
        p.check(Dim::Two)?;
        let view = p
            .view
            .unwrap_or_else(|| View::whole(self.width(), self.height()));
        Ok(picture::grid(self, &view, p.scale, p.colours)?)
    }

    fn identify(&self, rule: Rule, limit: u64, stop: &AtomicBool) -> Result<Identity> {
        crate::identify::identify(self, (0, 0), rule, limit, stop)
    }

    fn build(setup: &Setup) -> Result<Problem<Grid>> {
        setup::grid(setup)
    }

    fn build_slab(
        setup: &Setup,
        parts: usize,
        part: usize,
        halo: usize,
    ) -> Result<(Slabs, Problem<Grid>)> {
        setup::grid_slab(setup, parts, part, halo)
    }
}

impl Dimension for Cube {
    const DEFAULT_RULE: Rule = Rule::LIFE_3D;
    const DEFAULT_SIDE: usize = 256;
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

    const DIM: Dim = Dim::Three;

    fn write_cells(&self, path: &Path, _rule: Rule, stamp: u64) -> Result<()> {
        Ok(cube_file::write(path, self, stamp)?)
    }

    type Begun = cube_file::Output;

    fn begin_output(path: &Path, setup: &Setup) -> Result<Option<Self::Begun>> {
        if Format::of(path, Dim::Three)? != Format::Bin {
            return Ok(None);
        }
        match setup.cube_side_ahead() {
            Some(side) => Ok(Some(cube_file::Output::begin(path, side)?)),
            None => Ok(None),
        }
    }

    fn finish_output(&self, begun: Self::Begun, stamp: u64) -> Result<()> {
        Ok(begun.finish(self, stamp)?)
    }

    fn picture(&self, p: &Picture) -> Result<Frame> {
        p.check(Dim::Three)?;
        Ok(picture::cube(self, Look::along(p.axis), p.scale)?)
    }

    fn identify(&self, _: Rule, _: u64, _: &AtomicBool) -> Result<Identity> {
        invalid!("identify looks at 2D patterns; a cube is 3D")
    }

    fn build(setup: &Setup) -> Result<Problem<Cube>> {
        setup::cube(setup)
    }

    fn build_slab(
        setup: &Setup,
        parts: usize,
        part: usize,
        halo: usize,
    ) -> Result<(Slabs, Problem<Cube>)> {
        setup::cube_slab(setup, parts, part, halo)
    }
}
