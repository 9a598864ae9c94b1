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
//!
//! # Slabs
//!
//! A cube split among GPUs or processes is cut along x into *slabs* of X planes of constant x
//! ([`crate::slab`]). A slab is held in the same type and layout: X·M lines instead of M², a
//! torus of X × M × M of its own (x wraps at X). [`Cube::planes`] is X; for a whole cube it is
//! M. Files, soups and reports deal in whole cubes only.

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::grid::{gather_bytes, Grid, SPREAD, WORD_BITS};
use crate::memory;
use crate::seed;

/// The largest side accepted: M² rows must stay addressable as a [`Grid`].
pub const MAX_SIDE: usize = 1 << 15;

/// An M×M×M torus of two-state cells, or a slab of X×M×M (see the module documentation for the
/// layout).
#[derive(Clone, PartialEq, Eq)]
pub struct Cube {
    side: usize,
    lines: Grid,
}

impl std::fmt::Debug for Cube {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let m = self.side;
        write!(
            f,
            "Cube({}x{m}x{m}, {} alive)",
            self.planes(),
            self.population()
        )
    }
}

/// A cell byte that is neither 0 nor 1, where [`pack_lines`] met it: the index of its line
/// among those packed, its z and its value.
pub(crate) struct BadCell {
    pub(crate) line: usize,
    pub(crate) z: usize,
    pub(crate) value: u8,
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

/// Refuses a cube of side `side` before anything is allocated: a side out of range, or cells
/// that do not fit in the memory available.
pub fn check_fits(side: usize) -> Result<()> {
    check_side(side)?;
    let line_bytes = crate::grid::words_per_row(side) as u64 * 8;
    memory::check(
        line_bytes * (side * side) as u64,
        &format!("a cube of side {side}"),
    )
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

    /// A slab whose lines are the rows of `lines`: M columns and X·M rows for X ≥ 1 planes of
    /// constant x (see [Slabs](self#slabs)).
    pub fn slab(lines: Grid) -> Result<Cube> {
        let side = lines.width();
        check_side(side)?;
        if !lines.height().is_multiple_of(side) {
            return Err(Error::Invalid(format!(
                "a {}x{} grid is not the lines of whole planes of side {side}",
                lines.width(),
                lines.height()
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

    /// Planes of constant x: M for a whole cube, X for a slab.
    pub fn planes(&self) -> usize {
        self.lines.height() / self.side
    }

    /// Whether this is a whole cube (M planes), not a slab of another number.
    pub fn is_whole(&self) -> bool {
        self.planes() == self.side
    }

    /// Number of cells, M³ (X·M² for a slab).
    pub fn cells(&self) -> u64 {
        self.lines.cells()
    }

    /// The cells as a grid of M columns (z) and M² rows (x·M + y); X·M rows for a slab.
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

    /// Whether cell `(x, y, z)` is alive. Panics outside the cube (or slab).
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
            x < self.planes() && y < m && z < m,
            "cell ({x}, {y}, {z}) is outside the {}x{m}x{m} torus",
            self.planes()
        );
    }

    /// Number of live cells.
    pub fn population(&self) -> u64 {
        self.lines.population()
    }

    /// The cells as bytes (1 alive, 0 dead) in the `.bin` order, each line of M cells padded
    /// with zeros to `stride` bytes (`stride` ≥ M; M for the file layout itself).
    pub fn to_bytes(&self, stride: usize) -> Vec<u8> {
        let mut bytes = vec![0u8; self.lines.height() * stride];
        self.unpack(&mut bytes, stride);
        bytes
    }

    /// A cube (or slab: as many planes as `bytes` holds) of side `side` from bytes laid out as
    /// [`Cube::to_bytes`] writes them. Refused if a cell byte is neither 0 nor 1.
    pub fn from_bytes(side: usize, bytes: &[u8], stride: usize) -> Result<Cube> {
        check_side(side)?;
        let plane = side * stride;
        assert!(stride >= side && bytes.len().is_multiple_of(plane) && !bytes.is_empty());
        let mut lines = Grid::new(side, bytes.len() / plane * side)?;
        if let Err(bad) = pack_lines(&mut lines, |k| &bytes[k * stride..][..side]) {
            return Err(Error::Invalid(format!(
                "cell ({}, {}, {}) is {}: cells must be 0 (dead) or 1 (alive)",
                bad.line / side,
                bad.line % side,
                bad.z,
                bad.value
            )));
        }
        Cube::slab(lines)
    }

    /// Writes every line into `bytes` (line `k` at byte `k · stride`), on all cores; the
    /// padding bytes of each line are left as they are.
    pub(crate) fn unpack(&self, bytes: &mut [u8], stride: usize) {
        let (side, wpl) = (self.side, self.lines.words_per_row());
        bytes
            .par_chunks_mut(stride)
            .zip(self.lines.words().par_chunks(wpl))
            .for_each(|(bytes, words)| unpack_line(words, &mut bytes[..side]));
    }

    /// Writes lines `first..first + bytes.len() / M` into `bytes`, M bytes each.
    pub(crate) fn unpack_lines(&self, first: usize, bytes: &mut [u8]) {
        let (side, wpl) = (self.side, self.lines.words_per_row());
        let words = &self.lines.words()[first * wpl..];
        for (line, words) in bytes.chunks_mut(side).zip(words.chunks(wpl)) {
            unpack_line(words, line);
        }
    }

    /// The first cell (in file order) where `self` and `other` differ, if any. Panics if the
    /// sides differ.
    pub fn first_difference(&self, other: &Cube) -> Option<(usize, usize, usize)> {
        let (z, line) = self.lines.first_difference(&other.lines)?;
        Some((line / self.side, line % self.side, z))
    }
}

/// Sets every row `k` of `lines` (a cube's lines) from the cell bytes `bytes_of(k)`, on all
/// cores. Fails on a byte other than 0 or 1, naming it.
pub(crate) fn pack_lines<'a>(
    lines: &mut Grid,
    bytes_of: impl Fn(usize) -> &'a [u8] + Sync,
) -> std::result::Result<(), BadCell> {
    let wpl = lines.words_per_row();
    lines
        .words_mut()
        .par_chunks_mut(wpl)
        .enumerate()
        .try_for_each(|(line, words)| {
            let cells = bytes_of(line);
            pack_line(cells, words).map_err(|()| {
                let z = cells.iter().position(|&b| b > 1).expect("a bad byte");
                BadCell {
                    line,
                    z,
                    value: cells[z],
                }
            })
        })
}

/// Packs one line of cell bytes into bits. `Err` if a byte is neither 0 nor 1.
fn pack_line(bytes: &[u8], words: &mut [u64]) -> std::result::Result<(), ()> {
    for (word, chunk) in words.iter_mut().zip(bytes.chunks(WORD_BITS)) {
        let mut bits = 0u64;
        let mut high = 0u64;
        let mut eights = chunk.chunks_exact(8);
        for (k, eight) in eights.by_ref().enumerate() {
            let v = u64::from_le_bytes(eight.try_into().expect("8 bytes"));
            high |= v;
            bits |= gather_bytes(v) << (8 * k);
        }
        let done = chunk.len() - eights.remainder().len();
        for (k, &b) in eights.remainder().iter().enumerate() {
            high |= b as u64;
            bits |= ((b & 1) as u64) << (done + k);
        }
        if high & 0xFEFE_FEFE_FEFE_FEFE != 0 {
            return Err(());
        }
        *word = bits;
    }
    Ok(())
}

/// Unpacks one line of bits into cell bytes.
fn unpack_line(words: &[u64], bytes: &mut [u8]) {
    for (chunk, &word) in bytes.chunks_mut(WORD_BITS).zip(words) {
        let done = chunk.len() / 8 * 8;
        let mut eights = chunk.chunks_exact_mut(8);
        for (k, eight) in eights.by_ref().enumerate() {
            eight.copy_from_slice(&SPREAD[(word >> (8 * k)) as usize & 0xFF].to_le_bytes());
        }
        for (k, b) in eights.into_remainder().iter_mut().enumerate() {
            *b = (word >> (done + k)) as u8 & 1;
        }
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn gather_and_spread_are_inverse() {
        for b in 0..256u64 {
            assert_eq!(gather_bytes(SPREAD[b as usize]), b);
        }
    }

    #[test]
    fn bytes_round_trip_with_padding() {
        for side in [1, 3, 8, 9, 65] {
            let cube = Cube::density_soup(side, 0.5, 3).unwrap();
            for stride in [side, side.div_ceil(4) * 4, side + 5] {
                let bytes = cube.to_bytes(stride);
                for line in 0..side * side {
                    for z in 0..stride {
                        let want = z < side && cube.get(line / side, line % side, z);
                        assert_eq!(bytes[line * stride + z], want as u8);
                    }
                }
                assert_eq!(Cube::from_bytes(side, &bytes, stride).unwrap(), cube);
            }
        }
        let mut bad = Cube::new(3).unwrap().to_bytes(4);
        bad[4 * 5 + 2] = 2;
        let err = Cube::from_bytes(3, &bad, 4).unwrap_err().to_string();
        assert!(err.contains("cell (1, 2, 2) is 2"), "{err}");
    }

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
        assert!(Cube::from_lines(Grid::new(4, 8).unwrap()).is_err());
        assert!(Cube::slab(Grid::new(4, 10).unwrap()).is_err());
    }

    #[test]
    fn slabs_hold_whole_planes() {
        let mut slab = Cube::slab(Grid::new(3, 6).unwrap()).unwrap();
        assert_eq!((slab.planes(), slab.side(), slab.cells()), (2, 3, 18));
        assert!(!slab.is_whole() && Cube::new(3).unwrap().is_whole());
        slab.set(1, 2, 0, true);
        assert!(slab.lines().get(0, 5));
        let bytes = slab.to_bytes(4);
        assert_eq!(bytes.len(), 24);
        assert_eq!(Cube::from_bytes(3, &bytes, 4).unwrap(), slab);
        assert!(std::panic::catch_unwind(|| slab.get(2, 0, 0)).is_err());
    }
}
