//! Multi-state RLE, as Golly writes it for Generations rules: `.` (or `b`) a dead cell, `A` to
//! `X` states 1 to 24 (`o` is state 1 too), and two-letter states from 25 up, a prefix `p` to `y`
//! for 24 × 1 to 24 × 10 more followed by `A` to `X` (`pA` 25, `pB` 26, … `yO` 255); counts,
//! `$` and `!` as in two-state RLE ([`super::rle`]).

use std::io::{self, Write};
use std::path::Path;

use super::rle::LineWriter;
use super::{describe, parse_error, Canvas};
use crate::error::Result;
use crate::grid::{Grid, MAX_SIDE};

/// The letters of a state (1 to 255): one, or a prefix and one.
pub(super) fn letters(state: u32) -> ([u8; 2], usize) {
    let (prefix, letter) = ((state - 1) / 24, (state - 1) % 24);
    let letter = b'A' + letter as u8;
    match prefix {
        0 => ([letter, 0], 1),
        p => ([b'o' + p as u8, letter], 2),
    }
}

/// Draws a multi-state body (its bytes from `body.0` of `text`, the file's line `body.1`) into
/// `canvas`, whose grid has the states the cells need. Errors name the file's line.
pub(super) fn paint(
    path: &Path,
    text: &[u8],
    body: (usize, usize),
    mut canvas: Canvas<'_>,
) -> Result<()> {
    let bytes = &text[body.0.min(text.len())..];
    let (width, height) = (canvas.width, canvas.height);
    let mut line = body.1;
    let fail = |line: usize, message: String| parse_error(path, line, message);
    let (mut x, mut y) = (0usize, 0usize);
    let (mut count, mut counted) = (0usize, false);
    let mut line_start = true;
    let mut i = 0;
    while i < bytes.len() {
        let byte = bytes[i];
        i += 1;
        if std::mem::take(&mut line_start) && byte == b'#' {
            // A comment line inside the body.
            i += bytes[i..]
                .iter()
                .position(|&b| b == b'\n')
                .unwrap_or(bytes.len() - i);
            continue;
        }
        let state = match byte {
            b'0'..=b'9' => {
                count = count * 10 + (byte - b'0') as usize;
                counted = true;
                if count > MAX_SIDE {
                    return Err(fail(line, format!("run count is larger than {MAX_SIDE}")));
                }
                continue;
            }
            b'$' => {
                y += if counted { count } else { 1 };
                (count, counted, x) = (0, false, 0);
                if y > height {
                    return Err(fail(
                        line,
                        format!("more rows than the header's y = {height}"),
                    ));
                }
                continue;
            }
            b'!' => {
                if counted {
                    return Err(fail(line, "a run count before '!' has no cell".into()));
                }
                return Ok(());
            }
            b'\n' => {
                line += 1;
                line_start = true;
                continue;
            }
            b' ' | b'\t' | b'\r' => continue,
            b'.' | b'b' => 0,
            b'o' => 1,
            b'A'..=b'X' => (byte - b'A') as u32 + 1,
            b'p'..=b'y' => match bytes.get(i) {
                Some(&next @ b'A'..=b'X') => {
                    i += 1;
                    24 * (byte - b'o') as u32 + (next - b'A') as u32 + 1
                }
                _ => {
                    return Err(fail(
                        line,
                        format!(
                            "'{}' begins a two-letter state and must be followed by A to X",
                            byte as char
                        ),
                    ))
                }
            },
            b'A'..=b'Z' | b'a'..=b'z' => {
                return Err(fail(
                    line,
                    format!(
                        "cell '{}' is not a state (states are '.', 'A' to 'X', and 'pA' to 'yO')",
                        byte as char
                    ),
                ))
            }
            other => return Err(fail(line, describe(other))),
        };
        let n = if counted { count } else { 1 };
        (count, counted) = (0, false);
        if x + n > width {
            return Err(fail(
                line,
                format!("row {} is wider than the header's x = {width}", y + 1),
            ));
        }
        if state != 0 && n > 0 {
            if y >= height {
                return Err(fail(
                    line,
                    format!("more rows than the header's y = {height}"),
                ));
            }
            canvas.states(x, y, n, state).map_err(|m| fail(line, m))?;
        }
        x += n;
    }
    match counted {
        true => Err(fail(line, "the pattern ends inside a run".into())),
        false => Ok(()),
    }
}

/// Writes the runs of the whole multi-state `grid` (the body of an RLE file, `!` included).
pub(super) fn write(out: &mut impl Write, grid: &Grid) -> io::Result<()> {
    let w = grid.width();
    let mut line = LineWriter::new(out);
    let mut pending_rows = 0usize;
    let states = grid.to_states();
    for row in states.chunks(w) {
        let mut x = 0;
        let mut first = true;
        while x < w {
            let state = row[x];
            let run = row[x..].iter().take_while(|&&s| s == state).count();
            let last = x + run == w;
            if state != 0 || !last {
                if first && pending_rows > 0 {
                    line.tag(pending_rows, b"$")?;
                    pending_rows = 0;
                }
                first = false;
                match state {
                    0 => line.tag(run, b".")?,
                    s => {
                        let (letters, len) = letters(s as u32);
                        line.tag(run, &letters[..len])?
                    }
                }
            }
            x += run;
        }
        pending_rows += 1;
    }
    line.finish()
}

#[cfg(test)]
mod test {
    use super::letters;

    #[test]
    fn states_have_golly_letters() {
        let text = |s: u32| {
            let (l, n) = letters(s);
            String::from_utf8(l[..n].to_vec()).unwrap()
        };
        assert_eq!(text(1), "A");
        assert_eq!(text(24), "X");
        assert_eq!(text(25), "pA");
        assert_eq!(text(48), "pX");
        assert_eq!(text(49), "qA");
        assert_eq!(text(255), "yO");
    }
}
