//! The 3D torus: an M×M×M cube of cells, bit-packed.
//!
//! # Bit layout
//!
//! The cube is stored as a 2D [`Grid`] of M columns and M² rows: the cells of *line* `(x, y)`
//! (all `z` for one `x` and `y`) are row `x·M + y` of that grid, cell `z` at bit `z % 64` of the
//! row's word `z / 64` (the padding bits of each row's last word zero, as in every grid). This is
//! the byte order of the contest's `.bin` format (byte `x·M·M + y·M + z`) with eight cells per
//! byte replaced by one bit per cell, so reading and writing a file is a per-line pack or unpack,
//! and a glibc soup of the cube is the glibc soup of that grid.
//!
//! The cube is a torus: the neighbours of `(x, y, z)` are `((x+dx) mod M, (y+dy) mod M,
//! (z+dz) mod M)` for the 26 offsets, counted with multiplicity (on a cube of side 1 or 2 a cell
//! meets the same neighbour several times), as the contest's reference program does.

use crate::error::{Error, Result};
use crate::grid::Grid;
use crate::seed;

/// The largest side accepted: M² rows must stay addressable as a [`Grid`].
pub const MAX_SIDE: usize = 1 << 15;

/// An M×M×M torus of two-state cells (see the module documentation for the layout).
#[derive(Clone, PartialEq, Eq)]
pub struct Cube {
    side: usize,
    lines: Grid,
}

impl std::fmt::Debug for Cube {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let m = self.side;
        write!(f, "Cube({m}x{m}x{m}, {} alive)", self.population())
    }
}

/// Checks a cube side: at least 1 and at most [`MAX_SIDE`].
pub fn check_side(side: usize) -> Result<()> {
    if side == 0 || side > MAX_SIDE {
        return Err(Error::Size(format!(
            "cube side {side}: it must be between 1 and {MAX_SIDE}"
        )));
    }
    Ok(())
}

impl Cube {
    /// An all-dead cube. Refused, before allocating, if the side is 0 or too large, or if the
    /// cube does not fit in the memory available.
    pub fn new(side: usize) -> Result<Cube> {
        check_side(side)?;
        Ok(Cube {
            side,
            lines: Grid::new(side, side * side)?,
        })
    }

    /// A cube whose lines are the rows of `lines` (M columns, M² rows; see the layout).
    pub fn from_lines(lines: Grid) -> Result<Cube> {
        let side = lines.width();
        check_side(side)?;
        if lines.height() != side * side {
            return Err(Error::Invalid(format!(
                "a {}x{} grid is not the lines of a cube (a cube of side {side} has {} lines)",
                lines.width(),
                lines.height(),
                side * side
            )));
        }
        Ok(Cube { side, lines })
    }

    /// A cube of side `side` where byte `k` of the file order is `rand() % 2` of the `k`-th call
    /// after glibc's `srand(seed)`.
    pub fn glibc_soup(side: usize, seed: u32) -> Result<Cube> {
        check_side(side)?;
        Cube::from_lines(seed::glibc_soup(side, side * side, seed)?)
    }

    /// A cube whose cells are alive with probability `density`, reproducible from `seed`.
    pub fn density_soup(side: usize, density: f64, seed: u64) -> Result<Cube> {
        check_side(side)?;
        Cube::from_lines(seed::density_soup(side, side * side, density, seed)?)
    }

    /// The side M.
    pub fn side(&self) -> usize {
        self.side
    }

    /// Number of cells, M³.
    pub fn cells(&self) -> u64 {
        self.lines.cells()
    }

    /// The cells as a grid of M columns (z) and M² rows (x·M + y).
    pub fn lines(&self) -> &Grid {
        &self.lines
    }

    /// The lines, mutable. Callers must keep the padding bits zero.
    pub fn lines_mut(&mut self) -> &mut Grid {
        &mut self.lines
    }

    /// The index of line `(x, y)` among the rows of [`Cube::lines`].
    #[inline]
    pub fn line(&self, x: usize, y: usize) -> usize {
        x * self.side + y
    }

    /// Whether cell `(x, y, z)` is alive. Panics outside the cube.
    pub fn get(&self, x: usize, y: usize, z: usize) -> bool {
        self.check_cell(x, y, z);
        self.lines.get(z, self.line(x, y))
    }

    /// Sets cell `(x, y, z)`. Panics outside the cube.
    pub fn set(&mut self, x: usize, y: usize, z: usize, alive: bool) {
        self.check_cell(x, y, z);
        let line = self.line(x, y);
        self.lines.set(z, line, alive);
    }

    fn check_cell(&self, x: usize, y: usize, z: usize) {
        let m = self.side;
        assert!(
            x < m && y < m && z < m,
            "cell ({x}, {y}, {z}) is outside the cube of side {m}"
        );
    }

    /// Number of live cells.
    pub fn population(&self) -> u64 {
        self.lines.population()
    }

    /// The first cell (in file order) where `self` and `other` differ, if any. Panics if the
    /// sides differ.
    pub fn first_difference(&self, other: &Cube) -> Option<(usize, usize, usize)> {
        let (z, line) = self.lines.first_difference(&other.lines)?;
        Some((line / self.side, line % self.side, z))
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn cells_live_on_their_lines() {
        let mut c = Cube::new(5).unwrap();
        c.set(1, 2, 3, true);
        c.set(4, 4, 4, true);
        assert!(c.get(1, 2, 3) && c.get(4, 4, 4) && !c.get(3, 2, 1));
        assert!(c.lines().get(3, 7));
        assert_eq!(c.population(), 2);
        let mut d = c.clone();
        d.set(4, 0, 2, true);
        assert_eq!(c.first_difference(&d), Some((4, 0, 2)));
    }

    #[test]
    fn glibc_soup_follows_file_order() {
        let c = Cube::glibc_soup(3, 5).unwrap();
        let mut r = seed::GlibcRand::new(5);
        for x in 0..3 {
            for y in 0..3 {
                for z in 0..3 {
                    assert_eq!(c.get(x, y, z), r.next() % 2 == 1, "({x}, {y}, {z})");
                }
            }
        }
    }

    #[test]
    fn refuses_bad_sides() {
        assert!(Cube::new(0).is_err());
        assert!(Cube::new(MAX_SIDE + 1).is_err());
        assert!(Cube::from_lines(Grid::new(4, 15).unwrap()).is_err());
        assert!(Cube::from_lines(Grid::new(4, 16).unwrap()).is_ok());
    }
}
