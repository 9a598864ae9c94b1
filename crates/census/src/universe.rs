//! A small universe of B3/S23 for soups and the objects they leave: a window of bits that
//! grows with the pattern, stepped 64 cells a word.
//!
//! Layout: `rows` rows of `words` 64-bit words, row-major; bit `b` of word `w` of row `r` is
//! the cell (x0 + 64·w + b, y0 + r) of the plane. The window keeps a dead border of at least
//! [`MARGIN`] cells round every live one, so a generation is computed exactly as on the
//! unbounded plane; [`Universe::step`] grows the window (by whole words and rows) when the
//! pattern comes nearer.

/// Dead cells kept between the pattern and the window's edge.
pub const MARGIN: i64 = 2;

/// Rows and words added on each side when the window grows.
const GROWTH_ROWS: usize = 32;

/// A pattern of B3/S23 on the plane.
#[derive(Clone, Debug)]
pub struct Universe {
    x0: i64,
    y0: i64,
    words: usize,
    rows: usize,
    cells: Vec<u64>,
    spare: Vec<u64>,
    /// Generations stepped.
    pub generation: u64,
}

/// Adds three bits: (sum, carry).
#[inline(always)]
fn full_add(a: u64, b: u64, c: u64) -> (u64, u64) {
    let ab = a ^ b;
    (ab ^ c, (a & b) | (c & ab))
}

impl Universe {
    /// An empty universe whose window holds (x, y) to (x + width, y + height).
    pub fn empty(x: i64, y: i64, width: usize, height: usize) -> Universe {
        let words = width.div_ceil(64).max(1);
        let rows = height.max(1);
        Universe {
            x0: x,
            y0: y,
            words,
            rows,
            cells: vec![0; words * rows],
            spare: vec![0; words * rows],
            generation: 0,
        }
    }

    /// A universe holding `cells`.
    pub fn of(cells: &[(i64, i64)]) -> Universe {
        let (left, top, right, bottom) = bounds(cells).unwrap_or((0, 0, 0, 0));
        let border = 32;
        let mut u = Universe::empty(
            left - border,
            top - border,
            (right - left + 1 + 2 * border) as usize,
            (bottom - top + 1 + 2 * border) as usize,
        );
        for &(x, y) in cells {
            u.set(x, y, true);
        }
        u
    }

    /// Whether (x, y) is alive.
    pub fn get(&self, x: i64, y: i64) -> bool {
        let (cx, cy) = (x - self.x0, y - self.y0);
        if cx < 0 || cy < 0 || cx >= 64 * self.words as i64 || cy >= self.rows as i64 {
            return false;
        }
        self.cells[cy as usize * self.words + (cx / 64) as usize] >> (cx % 64) & 1 != 0
    }

    /// Sets (x, y), growing the window to hold it.
    pub fn set(&mut self, x: i64, y: i64, alive: bool) {
        self.reach(x, y, x, y);
        let (cx, cy) = ((x - self.x0) as usize, (y - self.y0) as usize);
        let word = &mut self.cells[cy * self.words + cx / 64];
        if alive {
            *word |= 1 << (cx % 64);
        } else {
            *word &= !(1 << (cx % 64));
        }
    }

    /// Grows the window until it holds the rectangle with [`MARGIN`] to spare.
    fn reach(&mut self, left: i64, top: i64, right: i64, bottom: i64) {
        let width = 64 * self.words as i64;
        let grow_left = left - MARGIN < self.x0;
        let grow_right = right + MARGIN >= self.x0 + width;
        let grow_up = top - MARGIN < self.y0;
        let grow_down = bottom + MARGIN >= self.y0 + self.rows as i64;
        if !(grow_left || grow_right || grow_up || grow_down) {
            return;
        }
        let words_left = if grow_left {
            ((self.x0 - (left - MARGIN)) as usize).div_ceil(64).max(1)
        } else {
            0
        };
        let words_right = if grow_right {
            ((right + MARGIN - (self.x0 + width) + 1) as usize).div_ceil(64).max(1)
        } else {
            0
        };
        let rows_up = if grow_up {
            ((self.y0 - (top - MARGIN)) as usize).max(GROWTH_ROWS)
        } else {
            0
        };
        let rows_down = if grow_down {
            ((bottom + MARGIN - (self.y0 + self.rows as i64) + 1) as usize).max(GROWTH_ROWS)
        } else {
            0
        };
        let (words, rows) = (
            self.words + words_left + words_right,
            self.rows + rows_up + rows_down,
        );
        let mut cells = vec![0u64; words * rows];
        for r in 0..self.rows {
            let from = &self.cells[r * self.words..(r + 1) * self.words];
            let at = (r + rows_up) * words + words_left;
            cells[at..at + self.words].copy_from_slice(from);
        }
        self.x0 -= 64 * words_left as i64;
        self.y0 -= rows_up as i64;
        self.words = words;
        self.rows = rows;
        self.cells = cells;
        self.spare = vec![0; words * rows];
    }

    /// Advances one generation; the window grows first where the pattern is near its edge.
    pub fn step(&mut self) {
        if let Some((l, t, r, b)) = self.bounds() {
            self.reach(l - 1, t - 1, r + 1, b + 1);
        }
        let (words, rows) = (self.words, self.rows);
        let cells = &self.cells;
        let next = &mut self.spare;
        let zero = vec![0u64; words];
        for r in 0..rows {
            let above = if r > 0 { &cells[(r - 1) * words..r * words] } else { &zero[..] };
            let here = &cells[r * words..(r + 1) * words];
            let below = if r + 1 < rows { &cells[(r + 1) * words..(r + 2) * words] } else { &zero[..] };
            for w in 0..words {
                let side = |row: &[u64]| {
                    let m = row[w];
                    let west = if w > 0 { row[w - 1] >> 63 } else { 0 };
                    let east = if w + 1 < words { row[w + 1] << 63 } else { 0 };
                    ((m << 1) | west, m, (m >> 1) | east)
                };
                let (al, a, ar) = side(above);
                let (bl, b, br) = side(here);
                let (cl, c, cr) = side(below);
                let (sa, ca) = full_add(al, a, ar);
                let (sc, cc) = full_add(cl, c, cr);
                let (sb, cb) = (bl ^ br, bl & br);
                let (u0, u1) = full_add(sa, sb, sc);
                let (v0, v1) = full_add(ca, cb, cc);
                let bit1 = u1 ^ v0;
                let bit2 = v1 ^ (u1 & v0);
                next[r * words + w] = bit1 & !bit2 & (u0 | b);
            }
        }
        std::mem::swap(&mut self.cells, &mut self.spare);
        self.generation += 1;
    }

    /// Live cells.
    pub fn population(&self) -> u64 {
        self.cells.iter().map(|w| w.count_ones() as u64).sum()
    }

    /// The smallest rectangle of live cells: (left, top, right, bottom), inclusive.
    pub fn bounds(&self) -> Option<(i64, i64, i64, i64)> {
        let words = self.words;
        let top = (0..self.rows).find(|&r| self.cells[r * words..(r + 1) * words].iter().any(|&w| w != 0))?;
        let bottom = (0..self.rows).rev().find(|&r| self.cells[r * words..(r + 1) * words].iter().any(|&w| w != 0))?;
        let mut columns = vec![0u64; words];
        for r in top..=bottom {
            for (c, &w) in columns.iter_mut().zip(&self.cells[r * words..(r + 1) * words]) {
                *c |= w;
            }
        }
        let first = columns.iter().position(|&w| w != 0)?;
        let last = columns.iter().rposition(|&w| w != 0)?;
        let left = 64 * first as i64 + columns[first].trailing_zeros() as i64;
        let right = 64 * last as i64 + 63 - columns[last].leading_zeros() as i64;
        Some((self.x0 + left, self.y0 + top as i64, self.x0 + right, self.y0 + bottom as i64))
    }

    /// Every live cell.
    pub fn cells(&self) -> Vec<(i64, i64)> {
        let mut out = Vec::new();
        for r in 0..self.rows {
            for w in 0..self.words {
                let mut bits = self.cells[r * self.words + w];
                while bits != 0 {
                    let b = bits.trailing_zeros() as i64;
                    out.push((self.x0 + 64 * w as i64 + b, self.y0 + r as i64));
                    bits &= bits - 1;
                }
            }
        }
        out
    }

    /// A key of the whole state where it lies: equal states have equal keys, and different
    /// ones equal keys with a chance of about 2^-128.
    pub fn key(&self) -> (i64, i64, i64, i64, u64, u64) {
        let Some((l, t, r, b)) = self.bounds() else {
            return (0, 0, 0, 0, 0, 0);
        };
        let (mut h1, mut h2) = (0x243f_6a88_85a3_08d3u64, 0x1319_8a2e_0370_7344u64);
        let first_row = (t - self.y0) as usize;
        let last_row = (b - self.y0) as usize;
        for row in first_row..=last_row {
            for &w in &self.cells[row * self.words..(row + 1) * self.words] {
                h1 = (h1 ^ w).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(31);
                h2 = (h2 ^ w.rotate_left(17)).wrapping_mul(0xc2b2_ae3d_27d4_eb4f).rotate_left(27);
            }
        }
        // The words depend on where the window lies, so its corner goes in too: the same
        // cells in a window that has grown meanwhile get another key (a repeat then shows one
        // period later).
        (l, t, r, b, h1 ^ (self.x0 as u64).rotate_left(7), h2 ^ self.y0 as u64)
    }
}

/// The smallest rectangle of `cells`: (left, top, right, bottom), inclusive.
pub fn bounds(cells: &[(i64, i64)]) -> Option<(i64, i64, i64, i64)> {
    let &(x, y) = cells.first()?;
    let mut b = (x, y, x, y);
    for &(x, y) in cells {
        b = (b.0.min(x), b.1.min(y), b.2.max(x), b.3.max(y));
    }
    Some(b)
}
