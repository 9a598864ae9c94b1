//! Plaintext patterns (`.cells`), as LifeWiki writes them: `!` comment lines, then one line per
//! row with `.` for a dead cell and `O` for a live one (`*` is accepted for live cells too).
//! Lines may be shorter than the pattern (the rest of the row is dead); the width is that of the
//! longest line.

use std::io::{self, Write};
use std::path::Path;

use rayon::prelude::*;

use super::{describe, lines, parse_error, Canvas, Header, Target};
use crate::error::Result;
use crate::grid::{gather_bytes, Grid, MAX_SIDE, SPREAD, WORD_BITS};
use crate::rule::Rule;

/// The body lines: every line that is not a comment, without trailing whitespace, with trailing
/// empty lines dropped.
fn body_lines(text: &[u8], from: usize, first_line: usize) -> impl Iterator<Item = (usize, &[u8])> {
    let all: Vec<(usize, &[u8])> = lines(text, from, first_line)
        .filter(|(_, _, line)| line.first() != Some(&b'!'))
        .map(|(number, _, line)| (number, line.trim_ascii_end()))
        .collect();
    let keep = all
        .iter()
        .rposition(|(_, l)| !l.is_empty())
        .map_or(0, |i| i + 1);
    all.into_iter().take(keep)
}

/// Scans the whole file for its size, checking every character.
pub(super) fn header(path: &Path, text: &[u8]) -> Result<(Header, (usize, usize))> {
    let (mut width, mut height) = (0usize, 0usize);
    for (number, line) in body_lines(text, 0, 1) {
        if !all_cells(line) {
            let bad = line
                .iter()
                .find(|&&b| !is_cell(b))
                .expect("a line that is not all cells has a byte that is not one");
            return Err(parse_error(
                path,
                number,
                format!("{} (expected '.' or 'O')", describe(*bad)),
            ));
        }
        width = width.max(line.len());
        height += 1;
    }
    if width > MAX_SIDE || height > MAX_SIDE {
        return Err(parse_error(
            path,
            1,
            format!("the pattern is larger than {MAX_SIDE} cells on a side"),
        ));
    }
    let header = Header {
        width,
        height,
        rule: None,
        bounds: None,
        position: None,
        oversized: false,
        generation: Default::default(),
    };
    Ok((header, (0, 1)))
}

/// Whether `byte` is a cell: `.`, `O` or `*`.
fn is_cell(byte: u8) -> bool {
    matches!(byte, b'.' | b'O' | b'*')
}

/// Whether every byte of `line` is a cell, tested 32 bytes at a time without stopping early
/// inside them, so that the test is vectorised.
pub(super) fn all_cells(line: &[u8]) -> bool {
    line.chunks(32)
        .all(|chunk| chunk.iter().fold(true, |ok, &b| ok & is_cell(b)))
}

/// Draws the live cells (the header pass has validated every character): each line's bytes
/// become its row's bits eight at a time, the rows shared out among the threads.
pub(super) fn paint(
    _path: &Path,
    text: &[u8],
    body: (usize, usize),
    canvas: Canvas<'_>,
) -> Result<()> {
    let lines: Vec<&[u8]> = body_lines(text, body.0, body.1)
        .map(|(_, line)| line)
        .collect();
    let (grid, left, top) = match canvas.grid() {
        Ok(grid) => grid,
        Err(canvas) => {
            let Target::Sink(sink) = canvas.target else {
                unreachable!("Canvas::grid gives back only sinks")
            };
            let mut row = vec![0u64; canvas.width.div_ceil(WORD_BITS)];
            for (y, line) in lines.iter().enumerate() {
                row.fill(0);
                draw_line(&mut row, 0, line);
                if row.iter().any(|&w| w != 0) {
                    sink.row(y, 0, &row);
                }
            }
            return Ok(());
        }
    };
    let words_per_row = grid.words_per_row();
    grid.words_mut()[top * words_per_row..]
        .par_chunks_mut(words_per_row)
        .zip(lines.par_iter())
        .for_each(|(row, line)| draw_line(row, left, line));
    Ok(())
}

/// Sets the live cells of `line` in `row` (a grid row's words), its first cell at cell `left`.
fn draw_line(row: &mut [u64], left: usize, line: &[u8]) {
    let (word, shift) = (left / WORD_BITS, left % WORD_BITS);
    for (k, chunk) in line.chunks(WORD_BITS).enumerate() {
        let cells = line_bits(chunk);
        row[word + k] |= cells << shift;
        // Cells carried into the next word lie on the row, so the word exists.
        let carried = if shift == 0 {
            0
        } else {
            cells >> (WORD_BITS - shift)
        };
        if carried != 0 {
            row[word + k + 1] |= carried;
        }
    }
}

/// Up to 64 cell bytes as bits, the first byte lowest. A byte is live where its bit 6 is set
/// (`O`, 0x4f) or its bit 2 is clear (`*`, 0x2a); `.` (0x2e) has bit 2 set and bit 6 clear.
fn line_bits(chunk: &[u8]) -> u64 {
    let mut cells = 0;
    for (k, eight) in chunk.chunks(8).enumerate() {
        let mut bytes = [b'.'; 8];
        bytes[..eight.len()].copy_from_slice(eight);
        let v = u64::from_le_bytes(bytes);
        cells |= gather_bytes(v >> 6 | !v >> 2) << (8 * k);
    }
    cells
}

/// Writes the whole grid, every row in full.
pub(super) fn write(out: &mut impl Write, grid: &Grid, rule: Rule) -> io::Result<()> {
    writeln!(out, "!Name: gol")?;
    writeln!(
        out,
        "!{}x{} {}, rule {}",
        grid.width(),
        grid.height(),
        rule.topology().name(),
        rule.on(crate::rule::Topology::Torus)
    )?;
    let mut line = vec![b'.'; grid.width() + 1];
    *line.last_mut().expect("width is at least 1") = b'\n';
    for y in 0..grid.height() {
        // Eight cells at a time: each byte of a word spread to eight bytes of 0 or 1
        // (`SPREAD`), which turn '.' (0x2e) into 'O' (0x4f) where 1.
        let cells = &mut line[..grid.width()];
        let bytes = grid.row(y).iter().flat_map(|w| w.to_le_bytes());
        for (chunk, byte) in cells.chunks_mut(8).zip(bytes) {
            let spread =
                u64::from_le_bytes([b'.'; 8]) + SPREAD[byte as usize] * (b'O' - b'.') as u64;
            chunk.copy_from_slice(&spread.to_le_bytes()[..chunk.len()]);
        }
        out.write_all(&line)?;
    }
    Ok(())
}
