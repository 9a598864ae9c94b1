//! The 2D torus grid, bit-packed.
//!
//! # Bit layout
//!
//! Rows are stored top to bottom (y = 0 first), each as `words_per_row = ceil(width / 64)`
//! little-endian `u64` words. Cell `(x, y)` is bit `x % 64` (bit 0 the least significant) of word
//! `y * words_per_row + x / 64`. The bits of the last word of a row at positions `x >= width`
//! (the padding) are always zero, so population counts and comparisons can work on whole words.
//!
//! # Dying states (Generations rules)
//!
//! A grid of `C` > 2 states ([`Grid::with_states`], for a Generations rule) keeps the words
//! above for its live cells (state 1), and beside them [`age_planes`]`(C)` bit planes of the
//! same layout that hold, for each dying cell (state `s` of 2 to `C` − 1), its age `s` − 1 in
//! binary: bit `p` of the age in plane `p`. The planes of a row lie together, row after row:
//! plane `p` of row `y` is the `words_per_row` words from `(y * planes + p) * words_per_row` of
//! [`Grid::ages`]. A cell is dead (state 0) where its live bit and every plane are clear; a live
//! cell's age is 0.
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
    /// Number of cell states: 2, or more for a Generations rule.
    states: u32,
    /// The dying cells' ages (see the module documentation); empty for two states.
    ages: Vec<u64>,
}

/// Cells not in state 0 of rows of `words_per_row` live words `words` and their `planes` age
/// planes `ages`, laid out as a grid's ([`Grid::ages`]).
pub(crate) fn occupied(words: &[u64], ages: &[u64], words_per_row: usize, planes: usize) -> u64 {
    let wpr = words_per_row;
    words
        .par_chunks(wpr)
        .zip(ages.par_chunks(planes * wpr))
        .map(|(row, ages)| {
            (0..wpr)
                .map(|k| {
                    let any = (0..planes).fold(row[k], |any, p| any | ages[p * wpr + k]);
                    any.count_ones() as u64
                })
                .sum::<u64>()
        })
        .sum()
}

/// The bit planes that hold the ages of the dying cells of a grid of `states` states: enough
/// for the ages 1 to `states` − 2; none for two states.
pub const fn age_planes(states: u32) -> usize {
    if states <= 2 {
        0
    } else {
        (u32::BITS - (states - 2).leading_zeros()) as usize
    }
}

impl std::fmt::Debug for Grid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Grid({}x{}, {} alive",
            self.width,
            self.height,
            self.population()
        )?;
        if self.states > 2 {
            write!(f, ", {} states, {} in state 1", self.states, self.live())?;
        }
        f.write_str(")")
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
            states: 2,
            ages: Vec::new(),
        })
    }

    /// An all-dead grid of `states` cell states (2 to [`crate::rule::MAX_STATES`]): with the
    /// bit planes of the dying cells' ages (see the module documentation) for more than two.
    pub fn with_states(width: usize, height: usize, states: u32) -> Result<Grid> {
        if !(2..=crate::rule::MAX_STATES).contains(&states) {
            return Err(Error::Invalid(format!(
                "a grid of {states} states: cells have 2 to {} states",
                crate::rule::MAX_STATES
            )));
        }
        let mut grid = Grid::new(width, height)?;
        let planes = age_planes(states) as u64;
        let words = grid.words.len() as u64 * planes;
        let what = format!("the dying states of a {width}x{height} grid");
        memory::check(8 * words, &what)?;
        grid.ages = memory::zeroed_vec::<u64>(words, &what)?;
        grid.states = states;
        Ok(grid)
    }

    /// Number of cell states: 2, or more for a Generations rule's grid.
    pub fn states(&self) -> u32 {
        self.states
    }

    /// The bit planes of the dying cells' ages, row after row (see the module documentation);
    /// empty for a two-state grid.
    pub fn ages(&self) -> &[u64] {
        &self.ages
    }

    /// Plane `plane` of the dying cells' ages in row `y`: `words_per_row` words. Panics past the
    /// grid's rows or planes.
    pub fn age_row(&self, y: usize, plane: usize) -> &[u64] {
        let (planes, wpr) = (age_planes(self.states), self.words_per_row);
        assert!(
            y < self.height && plane < planes,
            "no age plane {plane} of row {y}"
        );
        &self.ages[(y * planes + plane) * wpr..][..wpr]
    }

    /// [`Grid::ages`], mutable. Callers must keep the padding bits zero, live cells' ages 0
    /// and every age below `states − 1`.
    pub fn ages_mut(&mut self) -> &mut [u64] {
        &mut self.ages
    }

    /// The state of cell `(x, y)`: 0 dead, 1 alive, 2 and up dying. Panics outside the grid.
    pub fn state(&self, x: usize, y: usize) -> u32 {
        if self.get(x, y) {
            return 1;
        }
        let planes = age_planes(self.states);
        let (wpr, k, bit) = (self.words_per_row, x / WORD_BITS, x % WORD_BITS);
        let age = (0..planes).fold(0, |age, p| {
            age | ((self.ages[(y * planes + p) * wpr + k] >> bit & 1) as u32) << p
        });
        if age == 0 {
            0
        } else {
            age + 1
        }
    }

    /// Sets cell `(x, y)` to `state` (below [`Grid::states`]). Panics outside the grid or for
    /// a state the grid does not have.
    pub fn set_state(&mut self, x: usize, y: usize, state: u32) {
        assert!(
            state < self.states,
            "state {state} on a grid of {} states",
            self.states
        );
        self.set(x, y, state == 1);
        let age = state.saturating_sub(1);
        let planes = age_planes(self.states);
        let (wpr, k, bit) = (self.words_per_row, x / WORD_BITS, x % WORD_BITS);
        for p in 0..planes {
            let word = &mut self.ages[(y * planes + p) * wpr + k];
            *word = *word & !(1 << bit) | ((age >> p & 1) as u64) << bit;
        }
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
        if !self.ages.is_empty() {
            // Dead or alive, the cell is not dying.
            let planes = age_planes(self.states);
            let start = y * planes * self.words_per_row + x / WORD_BITS;
            for p in 0..planes {
                self.ages[start + p * self.words_per_row] &= !bit;
            }
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

    /// Number of cells not in state 0: the live ones, and the dying ones of a Generations
    /// rule's grid (Golly's population).
    pub fn population(&self) -> u64 {
        if self.ages.is_empty() {
            return self.live();
        }
        occupied(
            &self.words,
            &self.ages,
            self.words_per_row,
            age_planes(self.states),
        )
    }

    /// Number of live cells (state 1).
    pub fn live(&self) -> u64 {
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
        if pattern.states > self.states {
            return Err(Error::Invalid(format!(
                "a pattern of {} states does not fit in a grid of {}",
                pattern.states, self.states
            )));
        }
        let planes = age_planes(pattern.states);
        for y in 0..pattern.height {
            for (i, &word) in pattern.row(y).iter().enumerate() {
                let dying = (0..planes).fold(0, |any, p| {
                    any | pattern.ages[(y * planes + p) * pattern.words_per_row + i]
                });
                let mut bits = word | dying;
                while bits != 0 {
                    let x = i * WORD_BITS + bits.trailing_zeros() as usize;
                    if planes == 0 {
                        self.set(left + x, top + y, true);
                    } else {
                        self.set_state(left + x, top + y, pattern.state(x, y));
                    }
                    bits &= bits - 1;
                }
            }
        }
        Ok(())
    }

    /// The cells' states as bytes, row-major: 0 dead, 1 alive, 2 and up dying (so that the
    /// bytes of a grid of more than 256 states would not fit: none has).
    pub fn to_states(&self) -> Vec<u8> {
        let mut bytes = self.to_bytes();
        self.add_ages(&mut bytes, self.width, 0);
        bytes
    }

    /// Adds each dying cell's state to its byte of `bytes`, laid out as
    /// [`Grid::to_bytes_in`] lays them out (where a dying cell's byte is 0).
    pub fn add_ages(&self, bytes: &mut [u8], stride: usize, origin: usize) {
        let (wpr, planes) = (self.words_per_row, age_planes(self.states));
        if planes == 0 {
            return;
        }
        for y in 0..self.height {
            let line = &mut bytes[origin + y * stride..][..self.width];
            let ages = &self.ages[y * planes * wpr..][..planes * wpr];
            for k in 0..wpr {
                let mut dying = (0..planes).fold(0, |any, p| any | ages[p * wpr + k]);
                while dying != 0 {
                    let bit = dying.trailing_zeros() as usize;
                    let age = (0..planes).fold(0u8, |age, p| {
                        age | ((ages[p * wpr + k] >> bit & 1) as u8) << p
                    });
                    line[k * WORD_BITS + bit] = age + 1;
                    dying &= dying - 1;
                }
            }
        }
    }

    /// Builds a grid of `states` states from row-major state bytes (0 dead, 1 alive, 2 and up
    /// dying); a byte of `states` or more is refused.
    pub fn from_states(width: usize, height: usize, states: u32, bytes: &[u8]) -> Result<Grid> {
        if bytes.len() as u64 != width as u64 * height as u64 {
            return Err(Error::Invalid(format!(
                "{} bytes given for a {width}x{height} grid",
                bytes.len()
            )));
        }
        Grid::from_states_in(width, height, states, bytes, width, 0)
    }

    /// [`Grid::from_states`] from bytes laid out as [`Grid::to_bytes_in`] lays them out.
    /// Panics if `bytes` is too short for the layout.
    pub fn from_states_in(
        width: usize,
        height: usize,
        states: u32,
        bytes: &[u8],
        stride: usize,
        origin: usize,
    ) -> Result<Grid> {
        let mut grid = Grid::with_states(width, height, states)?;
        for y in 0..height {
            for (x, &state) in bytes[origin + y * stride..][..width].iter().enumerate() {
                if state as u32 >= states {
                    return Err(Error::Invalid(format!(
                        "cell ({x}, {y}) is in state {state}, but the grid has {states} states"
                    )));
                }
                if state != 0 {
                    grid.set_state(x, y, state as u32);
                }
            }
        }
        Ok(grid)
    }

    /// The cells as bytes (1 alive, 0 dead or dying), row-major.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.to_bytes_in(self.width, 0, self.width * self.height)
    }

    /// The live cells as bytes (1 alive, 0 dead or dying) in a zeroed buffer of `len` bytes whose rows are
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
        if self.ages.is_empty() && other.ages.is_empty() {
            let i = self
                .words
                .iter()
                .zip(&other.words)
                .position(|(a, b)| a != b)?;
            let bit = (self.words[i] ^ other.words[i]).trailing_zeros() as usize;
            return Some((
                (i % self.words_per_row) * WORD_BITS + bit,
                i / self.words_per_row,
            ));
        }
        let i = self
            .to_states()
            .iter()
            .zip(other.to_states())
            .position(|(&a, b)| a != b)?;
        Some((i % self.width, i / self.width))
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
