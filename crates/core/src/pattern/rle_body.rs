//! The body of a two-state RLE file, written by bands of rows in parallel.
//!
//! Each band's runs become tokens without line ends, on its own thread. A word of one state
//! only lengthens the run being read; any other word is read a byte of 8 cells at a time, whose
//! runs between its first and last come whole from a table ([`BYTE_RUNS`]), and a count below
//! 10 is written as one or two bytes with no division. The row ends between bands are added
//! when the bands are joined.
//!
//! Lines are broken as the greedy writer breaks them (a token goes on the next line when it
//! would take its line past [`LINE_LIMIT`] bytes), but from the bands' tokens: a token ends at
//! every byte that is not a digit, so a line starting at byte `p` of the tokens ends after the
//! last such byte of `p..p + LINE_LIMIT`. Finding the line ends is serial (each depends on the
//! one before) but looks at a few bytes a line; the bands' bytes are then copied into the
//! lines on their own threads, each to its own place. Bands are made and written a group at a
//! time, so memory stays bounded on large grids.

use std::io::{self, Write};

use super::rle::{put_short, put_token, LINE_LIMIT};
use crate::grid::{Grid, WORD_BITS};

/// Cells a band holds, at least one row (in this crate's unit tests, a few rows, so that small
/// grids are written in several bands and groups).
const BAND_CELLS: usize = if cfg!(test) { 100 } else { 1 << 17 };

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
/// [`LINE_LIMIT`] bytes. A group's lines are written to `out` while the next group is made.
pub(super) fn write(out: &mut (impl Write + Send), grid: &Grid) -> io::Result<()> {
    use rayon::prelude::*;
    let rows_per_band = (BAND_CELLS / grid.width().max(1)).max(1);
    let bands: Vec<std::ops::Range<usize>> = (0..grid.height())
        .step_by(rows_per_band)
        .map(|top| top..(top + rows_per_band).min(grid.height()))
        .collect();
    let group = BANDS_PER_THREAD * rayon::current_num_threads();
    // The tokens of the line being made, from its start.
    let mut pending = Vec::new();
    // The lines laid out for the group before (being written) and for this one.
    let (mut laid, mut laying) = (Vec::new(), Vec::new());
    let mut last_row = None;
    let mut made: Vec<Band> = std::iter::repeat_with(Band::default).take(group).collect();
    for bands in bands.chunks(group) {
        let made = &mut made[..bands.len()];
        let ((), written) = rayon::join(
            || {
                made.par_iter_mut()
                    .zip(bands)
                    .for_each(|(band, rows)| band.make(grid, rows.clone()))
            },
            || out.write_all(&laid),
        );
        written?;
        // The row ends before each band's first live row, since the last live row (or the top).
        let mut skips = vec![[0u8; 22]; made.len()];
        let mut parts = vec![&pending[..]];
        for (band, skip) in made.iter().zip(&mut skips) {
            let Some((first, last)) = band.rows else {
                continue;
            };
            let rows = first - last_row.unwrap_or(0);
            let len = if rows > 0 {
                put_token(skip, 0, rows, b'$')
            } else {
                0
            };
            parts.extend([&skip[..len], &band.bytes[..band.len]]);
            last_row = Some(last);
        }
        pending = Lines::new(parts).lay(&mut laying, false);
        std::mem::swap(&mut laid, &mut laying);
    }
    out.write_all(&laid)?;
    Lines::new(vec![&pending, b"!"]).lay(&mut laid, true);
    out.write_all(&laid)
}

/// Tokens in several pieces (`parts`), read as one run of bytes from a line's start.
struct Lines<'a> {
    parts: Vec<&'a [u8]>,
    /// Where each part starts in the whole, and the whole's length last.
    starts: Vec<usize>,
}

impl<'a> Lines<'a> {
    fn new(mut parts: Vec<&'a [u8]>) -> Lines<'a> {
        parts.retain(|part| !part.is_empty());
        let starts = std::iter::once(0)
            .chain(parts.iter().scan(0, |at, part| {
                *at += part.len();
                Some(*at)
            }))
            .collect();
        Lines { parts, starts }
    }

    fn len(&self) -> usize {
        self.starts[self.parts.len()]
    }

    /// Where the greedy writer ends the lines that come before the last [`LINE_LIMIT`] bytes:
    /// a line end goes before each byte returned.
    fn ends(&self) -> Vec<usize> {
        let mut ends = Vec::with_capacity(self.len() / (LINE_LIMIT - 20));
        let (mut p, mut part) = (0, 0);
        while self.len() - p > LINE_LIMIT {
            // The line is `p..end`, `end` just past the last non-digit of `p..p + LINE_LIMIT`.
            let mut end = p + LINE_LIMIT;
            while self.starts[part + 1] < end {
                part += 1;
            }
            let mut k = part;
            while self.parts[k][end - 1 - self.starts[k]].is_ascii_digit() {
                end -= 1;
                assert!(end > p, "a token is shorter than a line");
                if end == self.starts[k] {
                    k -= 1;
                }
            }
            ends.push(end);
            p = end;
        }
        ends
    }

    /// Lays out in `lines` (resized to them) the whole lines before the last [`LINE_LIMIT`]
    /// bytes (all of them, and a last line end, if `last`); returns the bytes left, the start
    /// of the next line.
    fn lay(&self, lines: &mut Vec<u8>, last: bool) -> Vec<u8> {
        use rayon::prelude::*;
        let mut ends = self.ends();
        if last {
            ends.push(self.len());
        }
        let done = ends.last().copied().unwrap_or(0);
        let size = done + ends.len();
        if lines.capacity() < size {
            // Fresh zeroed memory is mapped lazily, so each thread below takes the page faults
            // of its own part.
            *lines = vec![0; size.max(2 * lines.capacity())];
        }
        lines.resize(size, 0);
        // Each part's bytes and line ends go to a range of their own: a part starting at byte
        // `s` of the whole starts at `s` plus the line ends before it.
        let mut jobs = Vec::with_capacity(self.parts.len());
        let mut rest = &mut lines[..];
        let mut before = 0;
        for (i, part) in self.parts.iter().enumerate() {
            let (start, end) = (self.starts[i], self.starts[i + 1].min(done));
            if start >= end {
                break;
            }
            // The line ends after the part's bytes `start..end` (the ends in `start + 1..=end`).
            let count = ends[before..].partition_point(|&e| e <= end);
            let (here, after) = rest.split_at_mut(end - start + count);
            jobs.push((
                &part[..end - start],
                start,
                &ends[before..before + count],
                here,
            ));
            rest = after;
            before += count;
        }
        jobs.into_par_iter().for_each(|(part, start, ends, here)| {
            let (mut from, mut to) = (0, 0);
            for &end in ends {
                let len = end - start - from;
                here[to..to + len].copy_from_slice(&part[from..from + len]);
                here[to + len] = b'\n';
                (from, to) = (from + len, to + len + 1);
            }
            here[to..].copy_from_slice(&part[from..]);
        });
        let mut left = Vec::with_capacity(LINE_LIMIT + 1);
        for (i, part) in self.parts.iter().enumerate() {
            let start = self.starts[i];
            left.extend_from_slice(&part[done.clamp(start, start + part.len()) - start..]);
        }
        left
    }
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
            at = runs(&mut self.bytes, at, row);
        }
        self.len = at;
    }
}

/// Writes the runs of `row` (padding bits zero) from `bytes[at]`, up to its last live cell;
/// returns where they end. Words of one state only lengthen the run being read; other words are
/// read a byte (8 cells) at a time through [`BYTE_RUNS`], so a soup's runs cost no branch each.
#[inline(always)]
fn runs(bytes: &mut [u8], mut at: usize, row: &[u64]) -> usize {
    // The length of the run being read, and whether its cells are alive.
    let (mut run, mut alive) = (0, false);
    let tag = |alive: bool| if alive { b'o' } else { b'b' };
    for &word in row {
        if word == if alive { !0 } else { 0 } {
            run += WORD_BITS;
            continue;
        }
        for byte in word.to_le_bytes() {
            let first = byte & 1 != 0;
            // The run being read ends before this byte where its first cell differs (nothing
            // to write at a row's start, where no cell has been read).
            let ends = first != alive;
            if run < 10 {
                let end = put_short(bytes, at, run, tag(alive));
                at = if ends && run > 0 { end } else { at };
            } else if ends {
                at = put_token(bytes, at, run, tag(alive));
            }
            let runs = BYTE_RUNS[byte as usize];
            run = if ends { 0 } else { run } + runs.first as usize;
            alive = first;
            if runs.first == 8 {
                continue;
            }
            // The first run ends inside the byte; those between it and the last run are whole.
            at = put_token(bytes, at, run, tag(alive));
            bytes[at..at + 8].copy_from_slice(&runs.tokens.to_le_bytes());
            at += runs.len as usize;
            (run, alive) = (runs.last as usize, byte >> 7 != 0);
        }
    }
    if alive {
        at = put_token(bytes, at, run, b'o');
    }
    at
}

/// The runs of a byte of 8 cells (the first in bit 0), for [`runs`]: the lengths of its first
/// and last runs (8 and 8 for a byte of one state), and the tokens of the runs between them,
/// packed from the low byte up. Those runs hold at most 6 cells, and a token takes at most as
/// many bytes as it has cells, so they fit a word.
#[derive(Clone, Copy)]
struct ByteRuns {
    first: u8,
    last: u8,
    len: u8,
    tokens: u64,
}

/// [`ByteRuns`] of every byte.
const BYTE_RUNS: [ByteRuns; 256] = byte_runs();

const fn byte_runs() -> [ByteRuns; 256] {
    let mut table = [ByteRuns {
        first: 0,
        last: 0,
        len: 0,
        tokens: 0,
    }; 256];
    let mut byte = 0;
    while byte < 256 {
        let mut lengths = [0u8; 8];
        let (mut n, mut x) = (0, 0);
        while x < 8 {
            let mut end = x + 1;
            while end < 8 && (byte >> end) & 1 == (byte >> x) & 1 {
                end += 1;
            }
            lengths[n] = (end - x) as u8;
            (n, x) = (n + 1, end);
        }
        let (mut tokens, mut len) = (0u64, 0);
        let mut i = 1;
        while i + 1 < n {
            // Runs alternate from the first cell's state.
            let tag = if (byte & 1) ^ (i & 1) != 0 {
                b'o'
            } else {
                b'b'
            };
            if lengths[i] > 1 {
                tokens |= ((b'0' + lengths[i]) as u64) << (8 * len);
                len += 1;
            }
            tokens |= (tag as u64) << (8 * len);
            len += 1;
            i += 1;
        }
        table[byte] = ByteRuns {
            first: lengths[0],
            last: lengths[n - 1],
            len,
            tokens,
        };
        byte += 1;
    }
    table
}
