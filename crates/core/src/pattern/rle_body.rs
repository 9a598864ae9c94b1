//! The body of a two-state RLE file, written by bands of rows in parallel.
//!
//! Each band's runs become tokens without line ends, on its own thread: a row's word `w` gives
//! its run ends as the bits of `w ^ (w << 1)`, and a count below 10 is written as one or two
//! bytes with no division. The row ends between bands are added when the bands are joined.
//!
//! Lines are then broken as the greedy writer breaks them (a token goes on the next line when
//! it would take its line past [`LINE_LIMIT`] bytes), but from the joined tokens: a token ends
//! at every byte that is not a digit, so a line starting at byte `p` of the tokens ends after
//! the last such byte of `p..p + LINE_LIMIT`. Bands are made and written a group at a time,
//! so memory stays bounded on large grids.

use std::io::{self, Write};

use super::rle::{put_token, LINE_LIMIT};
use crate::grid::{Grid, WORD_BITS};

/// Cells a band holds, at least one row (in this crate's unit tests, a few rows, so that small
/// grids are written in several bands and groups).
const BAND_CELLS: usize = if cfg!(test) { 100 } else { 1 << 20 };

/// Bands made at once on each thread before their bytes are written.
const BANDS_PER_THREAD: usize = 4;

/// One band's tokens, in a buffer kept from group to group (fresh memory costs its page
/// faults again).
#[derive(Default)]
struct Band {
    bytes: Vec<u8>,
    /// The bytes used.
    len: usize,
    /// Its first and last rows with a live cell.
    rows: Option<(usize, usize)>,
}

/// Writes the runs of `grid`'s rows, the `!` and the last line end, in lines of at most
/// [`LINE_LIMIT`] bytes.
pub(super) fn write(out: &mut impl Write, grid: &Grid) -> io::Result<()> {
    use rayon::prelude::*;
    let rows_per_band = (BAND_CELLS / grid.width().max(1)).max(1);
    let bands: Vec<std::ops::Range<usize>> = (0..grid.height())
        .step_by(rows_per_band)
        .map(|top| top..(top + rows_per_band).min(grid.height()))
        .collect();
    let group = BANDS_PER_THREAD * rayon::current_num_threads();
    // Tokens not yet broken into lines: the current line's, from its start.
    let mut tokens = Vec::new();
    let mut lines = Vec::new();
    let mut last_row = None;
    let mut made: Vec<Band> = std::iter::repeat_with(Band::default).take(group).collect();
    for bands in bands.chunks(group) {
        made.par_iter_mut()
            .zip(bands)
            .for_each(|(band, rows)| band.make(grid, rows.clone()));
        let bytes: usize = made[..bands.len()].iter().map(|band| band.len + 22).sum();
        tokens.reserve(bytes + 1);
        for band in &made[..bands.len()] {
            let Some((first, last)) = band.rows else {
                continue;
            };
            // The row ends since the last live row (or the rows before the first).
            let skipped = first - last_row.unwrap_or(0);
            if skipped > 0 {
                let at = tokens.len();
                tokens.resize(at + 22, 0);
                let end = put_token(&mut tokens, at, skipped, b'$');
                tokens.truncate(end);
            }
            tokens.extend_from_slice(&band.bytes[..band.len]);
            last_row = Some(last);
        }
        let done = break_lines(&tokens, &mut lines);
        out.write_all(&lines)?;
        lines.clear();
        tokens.drain(..done);
    }
    tokens.push(b'!');
    let done = break_lines(&tokens, &mut lines);
    lines.extend_from_slice(&tokens[done..]);
    lines.push(b'\n');
    out.write_all(&lines)
}

/// Appends to `lines` the whole lines that `tokens` (starting a line) holds before its last
/// [`LINE_LIMIT`] bytes, each with its line end; returns the bytes of `tokens` used.
fn break_lines(tokens: &[u8], lines: &mut Vec<u8>) -> usize {
    let mut at = lines.len();
    // Room for every line: the tokens and a line end for each LINE_LIMIT / 4 bytes at least
    // (a token is at most 21 bytes).
    lines.resize(at + tokens.len() + tokens.len() / (LINE_LIMIT / 4) + 1, 0);
    let mut p = 0;
    while tokens.len() - p > LINE_LIMIT {
        let line = &tokens[p..p + LINE_LIMIT];
        let len = 1 + line
            .iter()
            .rposition(|b| !b.is_ascii_digit())
            .expect("a token is shorter than a line");
        lines[at..at + len].copy_from_slice(&line[..len]);
        lines[at + len] = b'\n';
        at += len + 1;
        p += len;
    }
    lines.truncate(at);
    p
}

impl Band {
    /// The tokens of the live rows among `rows` of `grid`, each after the row ends since the
    /// live row before it in the band (none before the band's first).
    fn make(&mut self, grid: &Grid, rows: std::ops::Range<usize>) {
        let width = grid.width();
        // The most a row takes: a token of one or more bytes per run of one or more cells,
        // the row ends before it, and one byte written past the end of a one-byte token.
        let row_bytes = 2 * width + 32;
        let mut at = 0;
        self.rows = None;
        for y in rows {
            let row = grid.row(y);
            if row.iter().all(|&w| w == 0) {
                continue;
            }
            if self.bytes.len() < at + row_bytes {
                let len = (at + row_bytes).max(2 * self.bytes.len());
                self.bytes.resize(len, 0);
            }
            self.rows = match self.rows {
                None => Some((y, y)),
                Some((first, last)) => {
                    at = put_token(&mut self.bytes, at, y - last, b'$');
                    Some((first, y))
                }
            };
            at = runs(&mut self.bytes, at, row, width);
        }
        self.len = at;
    }
}

/// Writes the runs of `row` (of `width` cells, padding bits zero) from `bytes[at]`, up to its
/// last live cell; returns where they end.
#[inline(always)]
fn runs(bytes: &mut [u8], mut at: usize, row: &[u64], width: usize) -> usize {
    // The first cell of the run being read, and whether it is alive.
    let (mut x, mut alive) = (0, false);
    let mut before = 0u64;
    for (i, &word) in row.iter().enumerate() {
        let mut ends = word ^ (word << 1 | before);
        before = word >> (WORD_BITS - 1);
        while ends != 0 {
            let end = i * WORD_BITS + ends.trailing_zeros() as usize;
            ends &= ends - 1;
            // Only the first cell can end an empty run (a row starting alive).
            if end > x {
                at = put_token(bytes, at, end - x, if alive { b'o' } else { b'b' });
            }
            (x, alive) = (end, !alive);
        }
    }
    if alive {
        at = put_token(bytes, at, width - x, b'o');
    }
    at
}
