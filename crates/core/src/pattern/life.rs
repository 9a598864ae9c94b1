//! The Life 1.06 and Life 1.05 formats (`.lif`, `.life`), read only.
//!
//! - **Life 1.06**: a `#Life 1.06` line, then one live cell per line as `x y` (whole numbers,
//!   possibly negative). Lines starting with `#` are comments.
//! - **Life 1.05**: a `#Life 1.05` line; `#D` description lines; `#N` (Conway's rules) or
//!   `#R s/b` (a rule in survival/birth digits); then blocks, each a `#P x y` line giving the
//!   position of its top-left cell and rows of `.` (dead) and `*` (alive) below it. A bare
//!   `#P`, and rows before any `#P`, are at 0 0, as Golly reads them.
//!
//! Both give absolute coordinates, in Golly's system (x to the right, y down): the bounding box
//! of the live cells becomes the pattern, and its top-left corner its position
//! ([`Header::position`]).

use std::path::Path;

use super::{describe, lines, parse_error, Canvas, Header};
use crate::error::{quoted, Result};
use crate::grid::MAX_SIDE;
use crate::rule::Rule;

/// Which of the two.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Version {
    /// `#Life 1.06`: one cell per line.
    V106,
    /// `#Life 1.05`: `#P` blocks of rows.
    V105,
}

/// Calls `cell(line, x, y)` for every live cell of the file, in Golly's coordinates, and
/// returns the rule a Life 1.05 file names.
fn cells(
    path: &Path,
    text: &[u8],
    version: Version,
    mut cell: impl FnMut(usize, i64, i64) -> Result<()>,
) -> Result<Option<Rule>> {
    let mut rule = None;
    // Life 1.05: where the next row of the current block goes (rows before any #P start at
    // 0 0, as Golly places them).
    let mut block: (i64, i64) = (0, 0);
    let number = |line: usize, word: Option<&str>, what: &str| -> Result<i64> {
        let word = word.ok_or_else(|| parse_error(path, line, format!("expected {what}")))?;
        let digits = word.strip_prefix(['-', '+']).unwrap_or(word);
        let whole = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
        word.parse::<i64>()
            .ok()
            .filter(|v| v.unsigned_abs() < 1 << 62)
            .ok_or_else(|| {
                let why = match whole {
                    true => "is beyond ±2^62, the most a Life 1.0x file's cell may be",
                    false => "is not a whole number",
                };
                parse_error(path, line, format!("{} {why} ({what})", quoted(word)))
            })
    };
    for (line, _, bytes) in lines(text, 0, 1).skip(1) {
        let trimmed = bytes.trim_ascii();
        if trimmed.is_empty() {
            continue;
        }
        let text = std::str::from_utf8(trimmed)
            .map_err(|_| parse_error(path, line, "the line is not text"))?;
        match version {
            Version::V106 => {
                if text.starts_with('#') {
                    continue;
                }
                let mut words = text.split_ascii_whitespace();
                let x = number(line, words.next(), "x and y")?;
                let y = number(line, words.next(), "x and y")?;
                if let Some(extra) = words.next() {
                    return Err(parse_error(
                        path,
                        line,
                        format!("unexpected {} after the cell's x and y", quoted(extra)),
                    ));
                }
                cell(line, x, y)?;
            }
            Version::V105 => {
                if let Some(rest) = text.strip_prefix("#P") {
                    // A bare #P is a block at 0 0, as Golly reads it.
                    let mut words = rest.split_ascii_whitespace().peekable();
                    block = match words.peek() {
                        None => (0, 0),
                        Some(_) => (
                            number(line, words.next(), "the block's x and y after #P")?,
                            number(line, words.next(), "the block's x and y after #P")?,
                        ),
                    };
                } else if text.starts_with("#N") {
                    rule = Some(Rule::LIFE);
                } else if let Some(rest) = text.strip_prefix("#R") {
                    let near = super::folder_of(path);
                    rule = Some(
                        Rule::parse_in(rest.trim(), Some(&near))
                            .map_err(|e| parse_error(path, line, e.to_string()))?,
                    );
                } else if text.starts_with('#') {
                    continue;
                } else {
                    let (x0, y) = &mut block;
                    for (dx, &b) in trimmed.iter().enumerate() {
                        match b {
                            b'*' => cell(line, *x0 + dx as i64, *y)?,
                            b'.' => {}
                            other => {
                                return Err(parse_error(
                                    path,
                                    line,
                                    format!("{} (expected '.' or '*')", describe(other)),
                                ))
                            }
                        }
                    }
                    *y += 1;
                }
            }
        }
    }
    Ok(rule)
}

/// Reads the whole file for its bounding box: the header, its position in Golly's
/// coordinates, and the body (the whole text).
pub(super) fn header(
    path: &Path,
    text: &[u8],
    version: Version,
) -> Result<(Header, (usize, usize))> {
    let mut bounds: Option<(i64, i64, i64, i64)> = None;
    let rule = cells(path, text, version, |_, x, y| {
        bounds = Some(match bounds {
            None => (x, y, x, y),
            Some((l, t, r, b)) => (l.min(x), t.min(y), r.max(x), b.max(y)),
        });
        Ok(())
    })?;
    let (left, top, right, bottom) = bounds.unwrap_or((0, 0, -1, -1));
    let (width, height) = ((right - left + 1) as u64, (bottom - top + 1) as u64);
    if width > MAX_SIDE as u64 || height > MAX_SIDE as u64 {
        return Err(parse_error(
            path,
            1,
            format!("the live cells span {width}x{height}, more than {MAX_SIDE} cells on a side"),
        ));
    }
    let header = Header {
        width: width as usize,
        height: height as usize,
        rule,
        bounds: None,
        position: Some((left.into(), top.into())),
        oversized: false,
        generation: Default::default(),
    };
    Ok((header, (0, 1)))
}

/// Draws the live cells, relative to the bounding box's top-left corner (`header`'s position).
pub(super) fn paint(
    path: &Path,
    text: &[u8],
    version: Version,
    corner: (i64, i64),
    mut canvas: Canvas<'_>,
) -> Result<()> {
    cells(path, text, version, |_, x, y| {
        canvas.run((x - corner.0) as usize, (y - corner.1) as usize, 1);
        Ok(())
    })?;
    Ok(())
}
