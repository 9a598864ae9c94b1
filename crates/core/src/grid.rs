//! The 2D torus grid, bit-packed.
//!
//! # Bit layout
//!
//! Rows are stored top to bottom (y = 0 first), each as `words_per_row = ceil(width / 64)`
//! little-endian `u64` words. Cell `(x, y)` is bit `x % 64` (bit 0 the least significant) of word
//! `y * words_per_row + x / 64`. The bits of the last word of a row at positions `x >= width`
//! (the padding) are always zero, so population counts and comparisons can work on whole words.
//!
//! The grid is a torus: the neighbours of `(x, y)` are `((x + dx) mod W, (y + dy) mod H)` for
//! the eight offsets, counted with multiplicity (on a 1×1 grid a cell is its own eight
//! neighbours), exactly as the ghost-cell C programs of docs/lineage.md behave.

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::memory;

/// Cells per storage word.
pub const WORD_BITS: usize = 64;

/// The largest width or height accepted (cell coordinates stay well inside `u32`/`i64` math).
pub const MAX_SIDE: usize = 1 << 30;

/// A W×H torus of two-state cells, bit-packed (see the module documentation for the layout).
#[derive(Clone, PartialEq, Eq)]
pub struct Grid {
    width: usize,
    height: usize,
    words_per_row: usize,
    words: Vec<u64>,
}

impl std::fmt::Debug for Grid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Grid({}x{}, {} alive)",
            self.width,
            self.height,
            self.population()
        )
    }
}

/// Sets `len` cells alive from cell `x` of `row` (one row of a grid's words), which must hold
/// them.
#[inline]
pub(crate) fn fill_row_run(row: &mut [u64], x: usize, len: usize) {
    if len == 0 {
        return;
    }
    let (first, last) = (x / WORD_BITS, (x + len - 1) / WORD_BITS);
    if first == last {
        // Most runs of a soup: a few cells inside one word.
        row[first] |= (!0u64 >> (WORD_BITS - len)) << (x % WORD_BITS);
        return;
    }
    let low = !0u64 << (x % WORD_BITS);
    let high = !0u64 >> (WORD_BITS - 1 - (x + len - 1) % WORD_BITS);
    row[first] |= low;
    row[first + 1..last].fill(!0);
    row[last] |= high;
}

/// Words needed for a row of `width` cells.
pub fn words_per_row(width: usize) -> usize {
    width.div_ceil(WORD_BITS)
}

/// `SPREAD[b]` holds bit i of `b` in byte i (little-endian): eight cells as bytes.
pub(crate) static SPREAD: [u64; 256] = {
    let mut table = [0u64; 256];
    let mut b = 0;
    while b < 256 {
        let mut i = 0;
        while i < 8 {
            table[b] |= ((b as u64 >> i) & 1) << (8 * i);
            i += 1;
        }
        b += 1;
    }
    table
};

/// The low bits of the eight bytes of `v` (each 0 or 1) as bits 0..8. The multiplier puts byte
/// `i`'s bit at position 56 + i; no two partial products share a position, so nothing carries.
#[inline]
pub(crate) fn gather_bytes(v: u64) -> u64 {
    (v & 0x0101_0101_0101_0101).wrapping_mul(0x0102_0408_1020_4080) >> 56
}

/// Up to eight cell bytes (non-zero alive) as the low bits of a byte, the first cell lowest.
fn gather(cells: &[u8]) -> u8 {
    let mut bytes = [0u8; 8];
    bytes[..cells.len()].copy_from_slice(cells);
    let v = u64::from_le_bytes(bytes);
    // The high bit of each byte: set where the byte is non-zero.
    let low = 0x7f7f_7f7f_7f7f_7f7f;
    let nonzero = (((v & low) + low) | v) & !low;
    gather_bytes(nonzero >> 7) as u8
}

/// Checks a grid size: both sides at least 1 and at most [`MAX_SIDE`].
pub fn check_size(width: usize, height: usize) -> Result<()> {
    if width == 0 || height == 0 {
        return Err(Error::Size(format!(
            "grid size {width}x{height}: width and height must be at least 1"
        )));
    }
    if width > MAX_SIDE || height > MAX_SIDE {
        return Err(Error::Size(format!(
            "grid size {width}x{height}: each side must be at most {MAX_SIDE}"
        )));
    }
    Ok(())
}

/// Refuses a `width` × `height` grid before anything is allocated: a side out of range
/// ([`check_size`]), or cells that do not fit in the memory available ([`memory::check`]).
pub fn check_fits(width: usize, height: usize) -> Result<()> {
    check_size(width, height)?;
    let bytes = (words_per_row(width) as u64).saturating_mul(height as u64 * 8);
    memory::check(bytes, &format!("a {width}x{height} grid"))
}

impl Grid {
    /// An all-dead grid. Refused, before allocating, if a side is 0 or too large, or if the grid
    /// does not fit in the memory available.
    pub fn new(width: usize, height: usize) -> Result<Grid> {
        check_fits(width, height)?;
        let words_per_row = words_per_row(width);
        let words = memory::zeroed_vec::<u64>(
            words_per_row as u64 * height as u64,
            &format!("a {width}x{height} grid"),
        )?;
        Ok(Grid {
            width,
            height,
            words_per_row,
            words,
        })
    }

    /// Width in cells.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Height in cells.
    pub fn height(&self) -> usize {
        self.height
    }

    /// Number of cells.
    pub fn cells(&self) -> u64 {
        self.width as u64 * self.height as u64
    }

    /// Words per row (see the bit layout).
    pub fn words_per_row(&self) -> usize {
        self.words_per_row
    }

    /// The mask of the valid bits in the last word of each row.
    pub fn last_word_mask(&self) -> u64 {
        last_word_mask(self.width)
    }

    /// All words, row after row.
    pub fn words(&self) -> &[u64] {
        &self.words
    }

    /// All words, mutable. Callers must keep the padding bits zero.
    pub fn words_mut(&mut self) -> &mut [u64] {
        &mut self.words
    }

    /// The words of row `y`.
    pub fn row(&self, y: usize) -> &[u64] {
        &self.words[y * self.words_per_row..(y + 1) * self.words_per_row]
    }

    /// The words of row `y`, mutable. Callers must keep the padding bits zero.
    pub fn row_mut(&mut self, y: usize) -> &mut [u64] {
        &mut self.words[y * self.words_per_row..(y + 1) * self.words_per_row]
    }

    /// Whether cell `(x, y)` is alive. Panics outside the grid.
    #[inline]
    pub fn get(&self, x: usize, y: usize) -> bool {
        assert!(
            x < self.width && y < self.height,
            "cell ({x}, {y}) is outside the grid"
        );
        self.words[y * self.words_per_row + x / WORD_BITS] >> (x % WORD_BITS) & 1 != 0
    }

    /// Sets cell `(x, y)`. Panics outside the grid.
    #[inline]
    pub fn set(&mut self, x: usize, y: usize, alive: bool) {
        assert!(
            x < self.width && y < self.height,
            "cell ({x}, {y}) is outside the grid"
        );
        let word = &mut self.words[y * self.words_per_row + x / WORD_BITS];
        let bit = 1u64 << (x % WORD_BITS);
        if alive {
            *word |= bit;
        } else {
            *word &= !bit;
        }
    }

    /// Sets `len` cells of row `y` alive from `x` on. Panics outside the grid.
    pub fn fill_run(&mut self, x: usize, y: usize, len: usize) {
        assert!(
            x + len <= self.width && y < self.height,
            "run outside the grid"
        );
        let row = &mut self.words[y * self.words_per_row..(y + 1) * self.words_per_row];
        fill_row_run(row, x, len);
    }

    /// Number of live cells.
    pub fn population(&self) -> u64 {
        self.words.iter().map(|w| w.count_ones() as u64).sum()
    }

    /// Copies `pattern` into this grid with its top-left corner at `(left, top)`. Cells of the
    /// pattern that would fall outside the grid are an error.
    pub fn paste(&mut self, pattern: &Grid, left: usize, top: usize) -> Result<()> {
        if left + pattern.width > self.width || top + pattern.height > self.height {
            return Err(Error::Invalid(format!(
                "a {}x{} pattern at ({left}, {top}) does not fit in a {}x{} grid",
                pattern.width, pattern.height, self.width, self.height
            )));
        }
        for y in 0..pattern.height {
            for (i, &word) in pattern.row(y).iter().enumerate() {
                let mut bits = word;
                while bits != 0 {
                    let x = i * WORD_BITS + bits.trailing_zeros() as usize;
                    self.set(left + x, top + y, true);
                    bits &= bits - 1;
                }
            }
        }
        Ok(())
    }

    /// The cells as bytes (1 alive, 0 dead), row-major.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.to_bytes_in(self.width, 0, self.width * self.height)
    }

    /// The cells as bytes (1 alive, 0 dead) in a zeroed buffer of `len` bytes whose rows are
    /// `stride` bytes apart, cell (0, 0) at byte `origin`: row-major for `(width, 0)`, the C programs'
    /// ghost-cell layout for `(width + 2, width + 3)`.
    pub fn to_bytes_in(&self, stride: usize, origin: usize, len: usize) -> Vec<u8> {
        let mut out = vec![0u8; len];
        // Row y starts at origin + y·stride: the chunks of `stride` bytes from `origin`.
        out[origin..]
            .par_chunks_mut(stride)
            .zip(self.words.par_chunks(self.words_per_row))
            .for_each(|(line, row)| {
                for (cells, &word) in line[..self.width].chunks_mut(WORD_BITS).zip(row) {
                    // Eight cells at a time: each byte of the word spread to eight bytes.
                    for (eight, byte) in cells.chunks_mut(8).zip(word.to_le_bytes()) {
                        let spread = SPREAD[byte as usize].to_le_bytes();
                        eight.copy_from_slice(&spread[..eight.len()]);
                    }
                }
            });
        out
    }

    /// Builds a grid from row-major bytes (non-zero alive).
    pub fn from_bytes(width: usize, height: usize, bytes: &[u8]) -> Result<Grid> {
        if bytes.len() as u64 != width as u64 * height as u64 {
            return Err(Error::Invalid(format!(
                "{} bytes given for a {width}x{height} grid",
                bytes.len()
            )));
        }
        Grid::from_bytes_in(width, height, bytes, width, 0)
    }

    /// Builds a grid from bytes laid out as [`Grid::to_bytes_in`] writes them (non-zero
    /// alive). Panics if `bytes` is too short for the layout.
    pub fn from_bytes_in(
        width: usize,
        height: usize,
        bytes: &[u8],
        stride: usize,
        origin: usize,
    ) -> Result<Grid> {
        let mut grid = Grid::new(width, height)?;
        let wpr = grid.words_per_row;
        grid.words
            .par_chunks_mut(wpr)
            .enumerate()
            .for_each(|(y, row)| {
                let cells = &bytes[origin + y * stride..][..width];
                for (word, chunk) in row.iter_mut().zip(cells.chunks(WORD_BITS)) {
                    *word = chunk
                        .chunks(8)
                        .enumerate()
                        .fold(0, |w, (k, eight)| w | (gather(eight) as u64) << (8 * k));
                }
            });
        Ok(grid)
    }

    /// The first cell (in row-major order) where `self` and `other` differ, if any. Panics if
    /// the sizes differ.
    pub fn first_difference(&self, other: &Grid) -> Option<(usize, usize)> {
        assert_eq!(
            (self.width, self.height),
            (other.width, other.height),
            "grids of different sizes"
        );
        let i = self
            .words
            .iter()
            .zip(&other.words)
            .position(|(a, b)| a != b)?;
        let bit = (self.words[i] ^ other.words[i]).trailing_zeros() as usize;
        Some((
            (i % self.words_per_row) * WORD_BITS + bit,
            i / self.words_per_row,
        ))
    }
}

/// The mask of the valid bits in the last word of a row of `width` cells.
pub fn last_word_mask(width: usize) -> u64 {
    match width % WORD_BITS {
        0 => !0,
        r => (1u64 << r) - 1,
    }
}

#[cfg(test)]
mod test {
    #[test]
    fn bytes_round_trip_through_the_tables() {
        for b in 0..=255u8 {
            let cells: Vec<u8> = (0..8).map(|i| b >> i & 1).collect();
            assert_eq!(super::SPREAD[b as usize].to_le_bytes().to_vec(), cells);
            assert_eq!(super::gather(&cells), b);
            // Any non-zero byte is alive.
            let loud: Vec<u8> = cells.iter().map(|&c| c * (0x80 | b)).collect();
            assert_eq!(super::gather(&loud), b);
            assert_eq!(super::gather(&cells[..5]), b & 0x1f);
        }
    }

    use super::*;

    #[test]
    fn set_get_population_and_padding() {
        let mut g = Grid::new(70, 3).unwrap();
        assert_eq!(g.words_per_row(), 2);
        g.set(0, 0, true);
        g.set(69, 2, true);
        g.set(64, 1, true);
        assert!(g.get(0, 0) && g.get(69, 2) && g.get(64, 1) && !g.get(1, 0));
        assert_eq!(g.population(), 3);
        assert_eq!(g.row(2)[1], 1 << 5);
        g.set(69, 2, false);
        assert_eq!(g.population(), 2);
        assert_eq!(g.last_word_mask(), (1 << 6) - 1);
    }

    #[test]
    fn bytes_round_trip_and_difference() {
        let bytes: Vec<u8> = (0..13 * 5).map(|i| (i * 7 % 3 == 0) as u8).collect();
        let g = Grid::from_bytes(13, 5, &bytes).unwrap();
        assert_eq!(g.to_bytes(), bytes);
        // The ghost-cell layout: a one-cell border, row stride width + 2.
        let ghosted = g.to_bytes_in(15, 16, 15 * 7);
        assert_eq!(ghosted[16..29], bytes[..13]);
        assert_eq!(ghosted[..16], [0; 16]);
        assert_eq!(Grid::from_bytes_in(13, 5, &ghosted, 15, 16).unwrap(), g);
        let mut h = g.clone();
        assert_eq!(g.first_difference(&h), None);
        h.set(11, 3, !h.get(11, 3));
        assert_eq!(g.first_difference(&h), Some((11, 3)));
    }

    #[test]
    fn refuses_zero_and_huge_sizes() {
        assert!(Grid::new(0, 5)
            .unwrap_err()
            .to_string()
            .contains("at least 1"));
        assert!(Grid::new(5, MAX_SIDE + 1).is_err());
        let err = Grid::new(MAX_SIDE, MAX_SIDE).unwrap_err().to_string();
        assert!(err.contains("memory"), "{err}");
    }

    #[test]
    fn paste_places_and_refuses_overflow() {
        let mut pattern = Grid::new(3, 2).unwrap();
        pattern.set(2, 1, true);
        let mut g = Grid::new(10, 10).unwrap();
        g.paste(&pattern, 7, 8).unwrap();
        assert!(g.get(9, 9));
        assert!(g.paste(&pattern, 8, 8).is_err());
    }

    #[test]
    fn fill_run_spans_words() {
        let mut g = Grid::new(200, 2).unwrap();
        g.fill_run(60, 1, 75);
        assert_eq!(g.population(), 75);
        assert!(!g.get(59, 1) && g.get(60, 1) && g.get(134, 1) && !g.get(135, 1));
        g.fill_run(0, 0, 200);
        assert_eq!(g.row(0)[3], (1 << 8) - 1);
    }
}
