//! Plaintext patterns (`.cells`), as LifeWiki writes them: `!` comment lines, then one line per
//! row with `.` for a dead cell and `O` for a live one (`*` is accepted for live cells too).
//! Lines may be shorter than the pattern (the rest of the row is dead); the width is that of the
//! longest line.

use std::io::{self, Write};
use std::path::Path;

use super::{describe, lines, parse_error, Canvas, Header};
use crate::error::Result;
use crate::grid::{Grid, MAX_SIDE, SPREAD};
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
        if let Some(&bad) = line.iter().find(|&&b| !matches!(b, b'.' | b'O' | b'*')) {
            return Err(parse_error(
                path,
                number,
                format!("{} (expected '.' or 'O')", describe(bad)),
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
        generation: 0,
    };
    Ok((header, (0, 1)))
}

/// Draws the live cells (the header pass has validated every character).
pub(super) fn paint(
    _path: &Path,
    text: &[u8],
    body: (usize, usize),
    mut canvas: Canvas<'_>,
) -> Result<()> {
    for (y, (_, line)) in body_lines(text, body.0, body.1).enumerate() {
        let mut x = 0;
        while x < line.len() {
            let run = line[x..].iter().take_while(|&&b| b != b'.').count();
            if run > 0 {
                canvas.run(x, y, run);
            }
            x += run;
            x += line[x..].iter().take_while(|&&b| b == b'.').count();
        }
    }
    Ok(())
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
