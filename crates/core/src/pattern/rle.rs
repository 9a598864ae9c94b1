//! Run-length encoded patterns (`.rle`), as Golly and LifeWiki write them.
//!
//! A file is `#` comment lines, a header `x = W, y = H[, rule = R]`, then a body of runs: an
//! optional count followed by `b` (dead), `o` (alive) or `$` (end of row), finished by `!`.
//! Golly's bounded-grid suffix on the rule, `:TW,H` (or `:TN` for N×N), declares a torus of that
//! size; other bounded grids (`:P` planes, `:K` Klein bottles, `:S` spheres, `:C` cross-surfaces,
//! shifted tori) are refused. An old-style `#r` comment line gives the rule when the header does
//! not. Golly's extension line `#CXRLE Pos=x,y Gen=g` gives the pattern's position (its top-left
//! cell in Golly's coordinates, see [`super`]) and the generation it was saved at; the writer
//! writes one.

use std::io::{self, Write};
use std::path::Path;

use super::{describe, lines, parse_error, Canvas, Header};
use crate::error::Result;
use crate::grid::{Grid, MAX_SIDE, WORD_BITS};
use crate::rule::Rule;

/// The longest line written.
const LINE_LIMIT: usize = 70;

/// Parses everything up to the body: returns the header and the body's byte offset and line.
pub(super) fn header(path: &Path, text: &[u8]) -> Result<(Header, (usize, usize))> {
    let mut old_rule = None;
    let (mut position, mut generation) = (None, 0);
    for (number, offset, line) in lines(text, 0, 1) {
        let trimmed = line.trim_ascii();
        if trimmed.is_empty() {
            continue;
        }
        if trimmed[0] == b'#' {
            if let Some(rest) = trimmed.strip_prefix(b"#CXRLE") {
                (position, generation) = extension(&String::from_utf8_lossy(rest))
                    .map_err(|m| parse_error(path, number, m))?;
            } else if let Some(rest) = trimmed.strip_prefix(b"#r") {
                old_rule = Some((number, rest.to_vec()));
            }
            continue;
        }
        let line_text = std::str::from_utf8(trimmed)
            .map_err(|_| parse_error(path, number, "the header is not text"))?;
        let mut header = parse_header(line_text).map_err(|m| parse_error(path, number, m))?;
        if header.rule.is_none() {
            if let Some((line, rule)) = old_rule {
                let rule = String::from_utf8_lossy(&rule).into_owned();
                header.rule =
                    Some(Rule::parse(&rule).map_err(|e| parse_error(path, line, e.to_string()))?);
            }
        }
        header.position = position;
        header.generation = generation;
        return Ok((header, (offset + line.len() + 1, number + 1)));
    }
    Err(parse_error(
        path,
        1,
        "no RLE header (a line such as \"x = 3, y = 3, rule = B3/S23\")",
    ))
}

/// Parses the rest of a `#CXRLE` line: `Pos=x,y` (the top-left cell in Golly's coordinates)
/// and `Gen=g`, in any order, each optional.
fn extension(text: &str) -> std::result::Result<(Option<(i64, i64)>, u64), String> {
    let (mut position, mut generation) = (None, 0);
    for item in text.split_ascii_whitespace() {
        let (key, value) = item
            .split_once('=')
            .ok_or_else(|| format!("#CXRLE: expected key=value, found {item:?}"))?;
        let coordinate = |v: &str| {
            v.trim()
                .parse::<i64>()
                .ok()
                .filter(|c| c.unsigned_abs() < 1 << 62)
                .ok_or_else(|| format!("#CXRLE Pos={value}: {v:?} is not a whole number"))
        };
        match key {
            "Pos" => {
                let (x, y) = value
                    .split_once(',')
                    .ok_or_else(|| format!("#CXRLE Pos={value}: expected Pos=x,y"))?;
                position = Some((coordinate(x)?, coordinate(y)?));
            }
            "Gen" => {
                generation = value.parse::<u64>().map_err(|_| {
                    format!("#CXRLE Gen={value}: not a generation count below 2^64")
                })?;
            }
            // Golly may add keys of its own; they do not change the cells.
            _ => {}
        }
    }
    Ok((position, generation))
}

/// Parses `x = W, y = H[, rule = R[:Tw,h]]`.
fn parse_header(line: &str) -> std::result::Result<Header, String> {
    let lower = line.to_ascii_lowercase();
    // The rule may itself hold commas (":T10,20", "S5-7,10"), so it is split off first.
    let (sizes, rule_text) = match lower.find("rule") {
        Some(at) => {
            let rest = lower[at + 4..].trim_start();
            let value = rest
                .strip_prefix('=')
                .ok_or("expected '=' after 'rule' in the header")?;
            (
                lower[..at].trim_end().trim_end_matches(','),
                Some(value.trim()),
            )
        }
        None => (lower.as_str(), None),
    };
    let (mut width, mut height) = (None, None);
    for item in sizes.split(',') {
        let (key, value) = item.split_once('=').ok_or_else(|| {
            format!(
                "expected 'key = value' in the header, found {:?}",
                item.trim()
            )
        })?;
        let (key, value) = (key.trim(), value.trim());
        let slot = match key {
            "x" => &mut width,
            "y" => &mut height,
            _ => return Err(format!("unknown header key {key:?}")),
        };
        *slot = Some(parse_side(key, value)?);
    }
    let (Some(width), Some(height)) = (width, height) else {
        return Err("the header must give both x and y, such as \"x = 3, y = 3\"".into());
    };
    let (rule, bounds) = match rule_text {
        Some(text) => {
            let (rule, bounds) = parse_rule(text)?;
            (Some(rule), bounds)
        }
        None => (None, None),
    };
    Ok(Header {
        width,
        height,
        rule,
        bounds,
        position: None,
        generation: 0,
    })
}

fn parse_side(key: &str, value: &str) -> std::result::Result<usize, String> {
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("{key} = {value:?} is not a whole number"));
    }
    match value.parse::<usize>() {
        Ok(n) if n <= MAX_SIDE => Ok(n),
        _ => Err(format!(
            "{key} = {value} is larger than the largest side, {MAX_SIDE}"
        )),
    }
}

/// Parses a rule with an optional Golly bounded-grid suffix: the rule and the suffix's size.
pub(super) fn parse_rule(
    text: &str,
) -> std::result::Result<(Rule, Option<(usize, usize)>), String> {
    Rule::parse_sized(text).map_err(|e| e.to_string())
}

/// What a byte is to [`next_run`]: a digit's value (0 to 9), or one of the classes below.
static CLASS: [u8; 256] = {
    let mut class = [OTHER; 256];
    let mut d = 0;
    while d < 10 {
        class[b'0' as usize + d] = d as u8;
        d += 1;
    }
    class[b'b' as usize] = DEAD;
    class[b'.' as usize] = DEAD;
    class[b'o' as usize] = ALIVE;
    class
};
const DEAD: u8 = 10;
const ALIVE: u8 = 11;
const OTHER: u8 = 12;

/// The common token of a soup's body, read without a branch on its digits: up to three digits
/// and a dead or live cell (`2o`, `b`, `13b`) at `bytes[i..]`. Returns the run's length, whether
/// it is alive, and the token's length; `None` for anything else (a row end, a newline, a
/// longer count, the end of the text), which the general loop then reads byte by byte.
#[inline(always)]
fn next_run(bytes: &[u8], i: usize) -> Option<(usize, bool, usize)> {
    let four = bytes.get(i..i + 4)?;
    let c = [0, 1, 2, 3].map(|k| CLASS[four[k] as usize]);
    let digit = c.map(|c| (c < 10) as usize);
    // Leading digits: 0 to 3 (a fourth is left to the general loop).
    let k = digit[0] + (digit[0] & digit[1]) + (digit[0] & digit[1] & digit[2]);
    let v = c.map(|c| c as usize);
    let counts = [1, v[0], v[0] * 10 + v[1], (v[0] * 10 + v[1]) * 10 + v[2]];
    let cell = c[k];
    if cell != DEAD && cell != ALIVE {
        return None;
    }
    Some((counts[k], cell == ALIVE, k + 1))
}

/// Draws the body's live cells: one pass over the bytes, counting lines only at newlines.
pub(super) fn paint(
    path: &Path,
    text: &[u8],
    body: (usize, usize),
    mut canvas: Canvas<'_>,
) -> Result<()> {
    let (width, height) = (canvas.width, canvas.height);
    let bytes = &text[body.0.min(text.len())..];
    let mut line = body.1;
    let fail = |line: usize, message: String| parse_error(path, line, message);
    let (mut x, mut y) = (0usize, 0usize);
    // The pending run count; `counted` tells whether any digit was given.
    let (mut count, mut counted) = (0usize, false);
    let mut i = 0;
    let mut line_start = true;
    while i < bytes.len() {
        if !line_start && !counted {
            // Runs of cells inside the row, the bulk of a soup, read a token at a time; the
            // first that is anything else (or does not fit) goes to the byte loop below.
            while let Some((n, alive, len)) = next_run(bytes, i) {
                if x + n > width || (alive && y >= height) {
                    break;
                }
                if alive && n > 0 {
                    canvas.run(x, y, n);
                }
                x += n;
                i += len;
            }
        }
        let Some(&byte) = bytes.get(i) else {
            break;
        };
        i += 1;
        if line_start {
            line_start = false;
            if byte == b'#' {
                // A comment line inside the body.
                i += bytes[i..]
                    .iter()
                    .position(|&b| b == b'\n')
                    .unwrap_or(bytes.len() - i);
                continue;
            }
        }
        match byte {
            b'0'..=b'9' => {
                count = count * 10 + (byte - b'0') as usize;
                counted = true;
                if count > MAX_SIDE {
                    return Err(fail(line, format!("run count is larger than {MAX_SIDE}")));
                }
            }
            b'b' | b'.' | b'o' => {
                let n = if counted { count } else { 1 };
                (count, counted) = (0, false);
                if x + n > width {
                    return Err(fail(
                        line,
                        format!("row {} is wider than the header's x = {width}", y + 1),
                    ));
                }
                if byte == b'o' && n > 0 {
                    if y >= height {
                        return Err(fail(
                            line,
                            format!("more rows than the header's y = {height}"),
                        ));
                    }
                    canvas.run(x, y, n);
                }
                x += n;
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
            }
            b'!' => {
                return match counted {
                    true => Err(fail(line, "a run count before '!' has no cell".into())),
                    false => Ok(()),
                };
            }
            b'\n' => {
                line += 1;
                line_start = true;
            }
            b' ' | b'\t' | b'\r' => {}
            b'A'..=b'Z' | b'a'..=b'z' => {
                return Err(fail(
                    line,
                    format!(
                        "cell '{}' is not a two-state cell (only b, o and $ are allowed)",
                        byte as char
                    ),
                ))
            }
            other => return Err(fail(line, describe(other))),
        }
    }
    match counted {
        true => Err(fail(line, "the pattern ends inside a run".into())),
        false => Ok(()),
    }
}

/// Writes the whole grid: header with the rule and its `:TW,H` or `:PW,H` suffix, runs, lines
/// of at most 70 characters.
pub(super) fn write(
    out: &mut impl Write,
    grid: &Grid,
    rule: Rule,
    generation: u64,
) -> io::Result<()> {
    let (w, h) = (grid.width(), grid.height());
    // The whole grid, whose top-left cell is Golly's (-⌊W/2⌋, -⌊H/2⌋).
    writeln!(
        out,
        "#CXRLE Pos={},{} Gen={generation}",
        -((w / 2) as i64),
        -((h / 2) as i64)
    )?;
    writeln!(out, "x = {w}, y = {h}, rule = {}", rule.sized(w, h))?;
    let mut line = LineWriter { out, length: 0 };
    let mut pending_rows = 0usize;
    for y in 0..h {
        let row = grid.row(y);
        let mut x = 0;
        let mut first = true;
        while let Some(start) = next_bit(row, w, x, true) {
            let end = next_bit(row, w, start, false).unwrap_or(w);
            if first && pending_rows > 0 {
                line.token(pending_rows, b'$')?;
                pending_rows = 0;
            }
            first = false;
            if start > x {
                line.token(start - x, b'b')?;
            }
            line.token(end - start, b'o')?;
            x = end;
        }
        pending_rows += 1;
    }
    line.token(1, b'!')?;
    writeln!(line.out)
}

/// Emits run tokens, breaking lines before they pass [`LINE_LIMIT`].
struct LineWriter<'a, W: Write> {
    out: &'a mut W,
    length: usize,
}

impl<W: Write> LineWriter<'_, W> {
    fn token(&mut self, count: usize, tag: u8) -> io::Result<()> {
        // The count's digits, written backwards from the end of a stack buffer, then the tag.
        let mut buf = [0u8; 24];
        let mut at = buf.len() - 1;
        buf[at] = tag;
        if count != 1 {
            let mut n = count;
            loop {
                at -= 1;
                buf[at] = b'0' + (n % 10) as u8;
                n /= 10;
                if n == 0 {
                    break;
                }
            }
        }
        let token = &buf[at..];
        if self.length + token.len() > LINE_LIMIT {
            self.out.write_all(b"\n")?;
            self.length = 0;
        }
        self.out.write_all(token)?;
        self.length += token.len();
        Ok(())
    }
}

/// The first x ≥ `from` (and < `width`) whose cell is `alive`, found a word at a time.
fn next_bit(row: &[u64], width: usize, from: usize, alive: bool) -> Option<usize> {
    let mut i = from / WORD_BITS;
    let first = *row.get(i)?;
    let mut word = if alive { first } else { !first } >> (from % WORD_BITS);
    let mut base = from;
    loop {
        if word != 0 {
            let x = base + word.trailing_zeros() as usize;
            return (x < width).then_some(x);
        }
        i += 1;
        base = i * WORD_BITS;
        if base >= width {
            return None;
        }
        word = if alive { row[i] } else { !row[i] };
    }
}
