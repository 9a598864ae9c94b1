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

use super::runs::{blocks, masks, runs, Toggles, BLOCK};
use super::{describe, lines, parse_error, Canvas, Count, Header, Sink, Target};
use crate::error::{quoted, Result};
use crate::grid::{fill_row_run, Grid, MAX_SIDE};
use crate::rule::Rule;
use num_bigint::{BigInt, BigUint};

/// The longest line written.
pub(super) const LINE_LIMIT: usize = 70;

/// Parses everything up to the body: returns the header and the body's byte offset and line.
pub(super) fn header(path: &Path, text: &[u8]) -> Result<(Header, (usize, usize))> {
    let mut old_rule = None;
    let (mut position, mut generation) = (None, BigUint::default());
    // Golly reads `#CXRLE` only on the first line that is not blank (where it writes it): a
    // later one, as in `Self-Rep/JvN/CY_Lee_computer.zip`, is a comment to it.
    let mut first = true;
    for (number, offset, line) in lines(text, 0, 1) {
        let trimmed = line.trim_ascii();
        if trimmed.is_empty() {
            continue;
        }
        let at_first = std::mem::replace(&mut first, false);
        if trimmed[0] == b'#' {
            if let Some(rest) = trimmed.strip_prefix(b"#CXRLE").filter(|_| at_first) {
                (position, generation) = extension(&String::from_utf8_lossy(rest))
                    .map_err(|m| parse_error(path, number, m))?;
            } else if let Some(rest) = trimmed.strip_prefix(b"#r") {
                old_rule = Some((number, rest.to_vec()));
            }
            continue;
        }
        let line_text = std::str::from_utf8(trimmed)
            .map_err(|_| parse_error(path, number, "the header is not text"))?;
        let near = super::folder_of(path);
        let mut header =
            parse_header(line_text, Some(&near)).map_err(|m| parse_error(path, number, m))?;
        if header.rule.is_none() {
            if let Some((line, rule)) = old_rule {
                let rule = String::from_utf8_lossy(&rule).into_owned();
                header.rule = Some(
                    Rule::parse_in(&rule, Some(&near))
                        .map_err(|e| parse_error(path, line, e.to_string()))?,
                );
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
fn extension(text: &str) -> std::result::Result<(Option<(BigInt, BigInt)>, BigUint), String> {
    let (mut position, mut generation) = (None, BigUint::default());
    for item in text.split_ascii_whitespace() {
        let (key, value) = item
            .split_once('=')
            .ok_or_else(|| format!("#CXRLE: expected key=value, found {}", quoted(item)))?;
        let coordinate = |v: &str| {
            v.trim()
                .parse::<BigInt>()
                .map_err(|_| format!("#CXRLE Pos: {} is not a whole number", quoted(v)))
        };
        match key {
            "Pos" => {
                let (x, y) = value
                    .split_once(',')
                    .ok_or_else(|| format!("#CXRLE Pos={value}: expected Pos=x,y"))?;
                position = Some((coordinate(x)?, coordinate(y)?));
            }
            "Gen" => {
                generation = value.parse::<BigUint>().map_err(|_| {
                    format!("#CXRLE Gen={value}: not a generation count (a whole number)")
                })?;
            }
            // Golly may add keys of its own; they do not change the cells.
            _ => {}
        }
    }
    Ok((position, generation))
}

/// Parses `x = W, y = H[, rule = R[:Tw,h]]`; a rule table it names is looked for in `near`
/// too.
fn parse_header(line: &str, near: Option<&Path>) -> std::result::Result<Header, String> {
    let lower = line.to_ascii_lowercase();
    // The rule may itself hold commas (":T10,20", "S5-7,10"), so it is split off first; it is
    // taken from the line as written (lowercasing keeps every byte where it was), so that
    // messages quote what the file says.
    let (sizes, rule_text) = match lower.find("rule") {
        Some(at) => {
            let rest = line[at + 4..].trim_start();
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
                "expected 'key = value' in the header, found {}",
                quoted(item.trim())
            )
        })?;
        let (key, value) = (key.trim(), value.trim());
        let slot = match key {
            "x" => &mut width,
            "y" => &mut height,
            _ => return Err(format!("unknown header key {}", quoted(key))),
        };
        *slot = Some(parse_side(key, value)?);
    }
    let (Some(width), Some(height)) = (width, height) else {
        return Err("the header must give both x and y, such as \"x = 3, y = 3\"".into());
    };
    let (rule, bounds) = match rule_text {
        Some(text) => {
            let (rule, bounds) = parse_rule(text, near)?;
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
        oversized: false,
        generation: Default::default(),
    })
}

fn parse_side(key: &str, value: &str) -> std::result::Result<usize, String> {
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("{key} = {} is not a whole number", quoted(value)));
    }
    match value.parse::<usize>() {
        Ok(n) if n <= MAX_SIDE => Ok(n),
        _ => Err(format!(
            "{key} = {} is larger than the largest side, {MAX_SIDE}",
            quoted(value)
        )),
    }
}

/// Parses a rule with an optional Golly bounded-grid suffix: the rule and the suffix's size. A
/// rule table it names is looked for in `near` too.
pub(super) fn parse_rule(
    text: &str,
    near: Option<&Path>,
) -> std::result::Result<(Rule, Option<(usize, usize)>), String> {
    Rule::parse_sized_in(text, near).map_err(|e| e.to_string())
}

/// Where [`decode`] draws: the words of each row of the grid, the pattern's cell `x` at cell
/// `left + x` of the row.
trait Rows {
    /// Row `y` of the pattern, or `None` where this sink draws nothing there.
    fn row(&mut self, y: usize) -> Option<&mut [u64]>;

    /// The words of the row given last that the decoder drew into lie in `words` (a range
    /// that may hold words it did not draw into): told before the next row is asked for and
    /// before the decoder returns, so that rows that are handed on need not be scanned whole.
    fn drawn(&mut self, _words: std::ops::Range<usize>) {}
}

/// Draws nothing: a pass that only follows the position.
struct Nowhere;

impl Rows for Nowhere {
    fn row(&mut self, _: usize) -> Option<&mut [u64]> {
        None
    }
}

/// The whole pattern's rows in the grid.
struct GridRows<'a> {
    words: &'a mut [u64],
    words_per_row: usize,
    top: usize,
}

impl Rows for GridRows<'_> {
    fn row(&mut self, y: usize) -> Option<&mut [u64]> {
        let wpr = self.words_per_row;
        self.words
            .get_mut((self.top + y) * wpr..(self.top + y + 1) * wpr)
    }
}

/// One piece's rows in [`paint_pieces`]: its first row in a row of its own, the rest in its
/// share of the grid. A row outside both is a fault of the reader, marked `stray`.
struct PieceRows<'a> {
    first_row: Vec<u64>,
    first_y: usize,
    mine: &'a mut [u64],
    words_per_row: usize,
    stray: bool,
}

impl Rows for PieceRows<'_> {
    fn row(&mut self, y: usize) -> Option<&mut [u64]> {
        let wpr = self.words_per_row;
        let row = match y.checked_sub(self.first_y + 1) {
            None => Some(&mut self.first_row[..]),
            Some(r) => self.mine.get_mut(r * wpr..(r + 1) * wpr),
        };
        self.stray |= row.is_none();
        row
    }
}

/// The rows for a [`Sink`], one at a time: rows are asked for in order, so each is handed over
/// when the next is asked for (and the last by [`SinkRows::flush`]).
struct SinkRows<'a> {
    sink: &'a mut dyn Sink,
    row: Vec<u64>,
    y: Option<usize>,
    /// The words of `row` drawn into (see [`Rows::drawn`]); every other word is 0. A row as
    /// wide as a large pattern's bounding box is thus handed on and cleared by its cells, not
    /// by its width (a file of 262,123 rows of 6,183 words counted in 1.8 s rather than 2.4).
    drawn: std::ops::Range<usize>,
    /// Whether a row was asked for again (after a `$` of count 0), which goes on drawing into
    /// the row being drawn.
    again: bool,
}

impl<'a> SinkRows<'a> {
    /// Rows of `width` cells for `sink`.
    fn new(sink: &'a mut dyn Sink, width: usize) -> SinkRows<'a> {
        SinkRows {
            sink,
            row: vec![0; width.div_ceil(64)],
            y: None,
            drawn: 0..0,
            again: false,
        }
    }

    /// Hands the row being drawn to the sink, if it holds a cell.
    fn flush(&mut self) {
        let words = std::mem::take(&mut self.drawn);
        if let Some(y) = self.y.take() {
            let drawn = &mut self.row[words.clone()];
            if drawn.iter().any(|&w| w != 0) {
                self.sink.row(y, words.start, drawn);
                drawn.fill(0);
            }
        }
    }
}

impl Rows for SinkRows<'_> {
    fn row(&mut self, y: usize) -> Option<&mut [u64]> {
        match self.y == Some(y) {
            true => self.again = true,
            false => {
                self.flush();
                self.y = Some(y);
            }
        }
        Some(&mut self.row)
    }

    fn drawn(&mut self, words: std::ops::Range<usize>) {
        self.drawn = match (self.drawn.is_empty(), words.is_empty()) {
            (_, true) => return,
            (true, false) => words,
            (false, false) => self.drawn.start.min(words.start)..self.drawn.end.max(words.end),
        };
    }
}

/// Where the decoder stands in the body: the next cell and the file's line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Cursor {
    x: usize,
    y: usize,
    line: usize,
    /// Whether the next byte starts a line (where `#` starts a comment).
    line_start: bool,
}

/// Bodies shorter than this are read on one thread (in this crate's unit tests, only the
/// shortest, so that their bodies are read in pieces).
const PARALLEL_BYTES: usize = if cfg!(test) { 64 } else { 1 << 20 };

/// Draws the body's live cells. A large body is cut into pieces at line ends (where no run is
/// pending), and read in two parallel passes: first each piece's effect on the position (the
/// rows its `$` tokens advance, and where its last row ends), which gives every piece its
/// starting cell and line; then each piece is decoded from there, each drawing its own rows
/// (its first row, which it may share with the piece before, into a row of its own that is
/// merged afterwards). A body in which the first pass finds comment lines is read in one pass
/// instead. Errors are those of a single pass: the first piece's first error.
pub(super) fn paint(
    path: &Path,
    text: &[u8],
    body: (usize, usize),
    canvas: Canvas<'_>,
) -> Result<()> {
    let bytes = &text[body.0.min(text.len())..];
    let start = Cursor {
        line: body.1,
        line_start: true,
        ..Cursor::default()
    };
    if canvas.cell_states() > 2 {
        return super::states::paint(path, text, body, canvas);
    }
    let size = (canvas.width, canvas.height);
    let canvas = match canvas.grid() {
        Ok(grid) => grid,
        Err(canvas) => {
            // A sink takes the rows one at a time, as one pass decodes them.
            let Target::Sink(sink) = canvas.target else {
                unreachable!("Canvas::grid gives back only sinks")
            };
            let mut rows = SinkRows::new(sink, size.0);
            decode(path, bytes, size, start, (0, &mut rows))?;
            rows.flush();
            return Ok(());
        }
    };
    let most_pieces = 2 * rayon::current_num_threads();
    let Some(pass) = first_pass(path, bytes, body.1, size, most_pieces) else {
        let (grid, left, top) = canvas;
        let wpr = grid.words_per_row();
        let mut rows = GridRows {
            words: grid.words_mut(),
            words_per_row: wpr,
            top,
        };
        decode(path, bytes, size, start, (left, &mut rows))?;
        return Ok(());
    };
    paint_pieces(path, bytes, pass, size, canvas)
}

/// The body's pieces (at most `most_pieces`, see [`pieces`]) and where each starts, by the
/// first pass: up to the first piece that ends the pattern or does not decode on its own.
/// `None` where the body is read in one pass: one piece, or comment lines among the pieces.
fn first_pass(
    path: &Path,
    bytes: &[u8],
    first_line: usize,
    size: (usize, usize),
    most_pieces: usize,
) -> Option<(Vec<std::ops::Range<usize>>, Vec<Cursor>)> {
    use rayon::prelude::*;
    let pieces = pieces(bytes, most_pieces);
    if pieces.len() < 2 {
        return None;
    }
    let effects: Vec<Option<Effect>> = pieces
        .par_iter()
        .map(|range| effect(path, &bytes[range.clone()], size))
        .collect();
    if effects.iter().flatten().any(|e| e.comment) {
        return None;
    }
    let mut starts = vec![Cursor {
        line: first_line,
        line_start: true,
        ..Cursor::default()
    }];
    for effect in effects {
        let Some(e) = effect.filter(|e| !e.ends) else {
            break;
        };
        let at = *starts.last().expect("starts has the first piece's");
        starts.push(Cursor {
            x: if e.has_row_end { e.x } else { at.x + e.x },
            y: at.y + e.rows,
            line: at.line + e.lines,
            line_start: true,
        });
    }
    starts.truncate(pieces.len());
    Some((pieces, starts))
}

/// Whether piece `k` of `pieces`, decoded to `end` (`ended` at the `!`), ends where the first
/// pass said the next one `starts`, or ends the pattern, or is the last: anything else is a
/// fault of this reader, not of the file.
fn agrees(k: usize, starts: &[Cursor], pieces: usize, (end, ended): (Cursor, bool)) -> bool {
    match starts.get(k + 1) {
        Some(next) => !ended && (next.x, next.y, next.line) == (end.x, end.y, end.line),
        None => ended || k + 1 == pieces,
    }
}

/// The error of a piece that does not decode as the first pass said.
fn disagree(path: &Path, k: usize) -> crate::error::Error {
    crate::error::Error::Engine(format!(
        "{}: the RLE reader's parallel passes disagree at piece {k} (a bug in gol; the file \
         may be fine)",
        path.display()
    ))
}

/// Most bytes of rows that [`count`] draws its pieces' cells into, all pieces together (rows
/// as wide as the header's `x`, of which only the pages drawn into are touched).
const COUNT_ROW_BYTES: usize = 1 << 30;

/// Bytes of body for each piece that [`count`] cuts a body into (at least two pieces a
/// thread): once the cells counted pass the count's bound, the pieces not yet begun are left
/// unread (a file of 303 million cells, 953 MB of RLE, passes 50 million in its first
/// sixth).
const COUNT_PIECE_BYTES: usize = if cfg!(test) { 128 } else { 8 << 20 };

/// The live cells of a two-state body, drawn by its pieces (see [`paint`]) on rayon's threads,
/// each from where the first pass says it starts into a row of its own, and counted there;
/// `Ok(None)` once they are more than `most` (the pieces not yet begun are then not read).
/// `None` where the body is read in one pass, where the rows would be too wide, or where a
/// piece asks for a row again (a `$` of count 0: its cells may be those of a row that the piece
/// before drew); a single pass then counts it. Errors are those of a single pass, in the
/// pieces read.
pub(super) fn count(
    path: &Path,
    text: &[u8],
    body: (usize, usize),
    size: (usize, usize),
    most: u64,
) -> Option<Result<Option<u64>>> {
    use rayon::prelude::*;
    let bytes = &text[body.0.min(text.len())..];
    let most_pieces = (2 * rayon::current_num_threads()).max(bytes.len() / COUNT_PIECE_BYTES);
    let (pieces, starts) = first_pass(path, bytes, body.1, size, most_pieces)?;
    if starts.len() * size.0.div_ceil(64) * 8 > COUNT_ROW_BYTES {
        return None;
    }
    let counted_so_far = std::sync::atomic::AtomicU64::new(0);
    let counted: Vec<Option<(u64, Decoded, bool)>> = starts
        .par_iter()
        .zip(&pieces)
        .map(|(&at, range)| {
            use std::sync::atomic::Ordering::Relaxed;
            if counted_so_far.load(Relaxed) > most {
                return None;
            }
            let mut count = Count(0);
            let mut rows = SinkRows::new(&mut count, size.0);
            let decoded = decode(path, &bytes[range.clone()], size, at, (0, &mut rows));
            rows.flush();
            let again = rows.again;
            counted_so_far.fetch_add(count.0, Relaxed);
            Some((count.0, decoded, again))
        })
        .collect();
    let mut cells: u64 = 0;
    for (k, piece) in counted.into_iter().enumerate() {
        // A piece is left unread only once the cells counted are more than `most`.
        let Some((piece, decoded, again)) = piece else {
            return Some(Ok(None));
        };
        if again {
            return None;
        }
        let decoded = match decoded {
            Ok(decoded) => decoded,
            Err(e) => return Some(Err(e)),
        };
        if !agrees(k, &starts, pieces.len(), decoded) {
            return Some(Err(disagree(path, k)));
        }
        cells += piece;
    }
    Some(Ok((cells <= most).then_some(cells)))
}

/// The body cut into at most `most` pieces for [`paint_pieces`] and [`count`]: their byte
/// ranges, or a single piece where the body is short or has no line end to cut at.
pub(super) fn pieces(bytes: &[u8], most: usize) -> Vec<std::ops::Range<usize>> {
    let whole = std::iter::once(0..bytes.len()).collect();
    if rayon::current_num_threads() < 2 || bytes.len() < PARALLEL_BYTES {
        return whole;
    }
    let count = (bytes.len() / (PARALLEL_BYTES / 2)).min(most);
    let mut cuts = vec![0];
    for k in 1..count {
        let from = (bytes.len() * k / count).max(*cuts.last().unwrap_or(&0));
        // The next line end after a complete token: a piece starts a line with no run pending.
        let cut = memchr::memchr_iter(b'\n', &bytes[from..])
            .map(|i| from + i)
            .find(|&i| {
                let before = bytes[..i].iter().rev().find(|&&b| b != b'\r');
                matches!(before, Some(b'b' | b'o' | b'.' | b'$'))
            });
        match cut {
            Some(cut) if cut + 1 < bytes.len() => cuts.push(cut + 1),
            _ => break,
        }
    }
    cuts.dedup();
    cuts.push(bytes.len());
    cuts.windows(2).map(|w| w[0]..w[1]).collect()
}

/// What a piece does to the position, found without drawing.
#[derive(Clone, Copy, Debug)]
struct Effect {
    /// Rows advanced by its `$` tokens.
    rows: usize,
    /// With a `$`: the column after the last one's row (its start is 0); without: the
    /// columns advanced.
    x: usize,
    has_row_end: bool,
    /// Newlines before its end or its `!`.
    lines: usize,
    /// Whether it holds the `!` that ends the pattern.
    ends: bool,
    /// Whether a comment line starts in it before its `!`: the body is then read in one pass
    /// (a comment's `$`, `!` and digits are not the pattern's).
    comment: bool,
}

/// The effect of `piece` (which starts a line, with no run pending), or `None` where its tail
/// does not decode (an error that the second pass reports from the right place). Its row ends,
/// newlines, `!` and comment lines are found in one pass, 64 bytes at a time.
fn effect(path: &Path, piece: &[u8], size: (usize, usize)) -> Option<Effect> {
    let mut effect = Effect {
        rows: 0,
        x: 0,
        has_row_end: false,
        lines: 0,
        ends: false,
        comment: false,
    };
    let mut end = piece.len();
    let mut last_row_end = None;
    let mut line_start = true;
    for (offset, block) in blocks(piece) {
        let [row_ends, bangs, newlines, hashes] = masks(&block, *b"$!\n#");
        let before = match bangs {
            0 => !0,
            _ => (1 << bangs.trailing_zeros()) - 1,
        };
        let line_starts = newlines << 1 | u64::from(line_start);
        effect.comment |= hashes & line_starts & before != 0;
        effect.lines += (newlines & before).count_ones() as usize;
        let mut row_ends = row_ends & before;
        while row_ends != 0 {
            let at = offset + row_ends.trailing_zeros() as usize;
            row_ends &= row_ends - 1;
            // The count before a `$`: its digits, read backwards, across blanks as the
            // decoder reads them.
            let (mut count, mut scale, mut counted) = (0usize, 1usize, false);
            for &b in piece[..at].iter().rev() {
                match b {
                    b'0'..=b'9' => {
                        count = count.checked_add(usize::from(b - b'0').checked_mul(scale)?)?;
                        scale = scale.saturating_mul(10);
                        counted = true;
                    }
                    b' ' | b'\t' | b'\r' | b'\n' => {}
                    _ => break,
                }
            }
            effect.rows = effect.rows.checked_add(if counted { count } else { 1 })?;
            last_row_end = Some(at);
        }
        line_start = newlines >> 63 == 1;
        if bangs != 0 {
            end = offset + bangs.trailing_zeros() as usize;
            effect.ends = true;
            break;
        }
    }
    if effect.comment {
        return Some(effect);
    }
    let tail = last_row_end.map_or(0, |at| at + 1);
    let from = Cursor {
        line_start: last_row_end.is_none(),
        ..Cursor::default()
    };
    let (at, _) = decode(path, &piece[tail..end], size, from, (0, &mut Nowhere)).ok()?;
    effect.x = at.x;
    effect.has_row_end = last_row_end.is_some();
    Some(effect)
}

/// What [`decode`] gives: where it stopped, and whether at the pattern's `!`.
type Decoded = Result<(Cursor, bool)>;

/// [`paint`]'s second parallel pass over `pieces` of `bytes`, from their `effects`.
fn paint_pieces(
    path: &Path,
    bytes: &[u8],
    (pieces, starts): (Vec<std::ops::Range<usize>>, Vec<Cursor>),
    size: (usize, usize),
    (grid, left, top): (&mut Grid, usize, usize),
) -> Result<()> {
    use rayon::prelude::*;
    // The rows each piece draws directly: after its first, up to the next piece's first (its
    // last row), within the pattern.
    let height = size.1;
    let wpr = grid.words_per_row();
    let row_of = |y: usize| (top + y.min(height)) * wpr;
    let mut rest = &mut grid.words_mut()[row_of(starts[0].y + 1)..];
    let mut owned = Vec::with_capacity(starts.len());
    for (k, at) in starts.iter().enumerate() {
        let first = (at.y + 1).min(height);
        let end = starts
            .get(k + 1)
            .map_or(height, |next| (next.y + 1).min(height))
            .max(first);
        let (mine, after) = std::mem::take(&mut rest).split_at_mut(row_of(end) - row_of(first));
        rest = after;
        owned.push(mine);
    }
    let results: Vec<(Vec<u64>, bool, Decoded)> = owned
        .into_par_iter()
        .zip(starts.par_iter())
        .enumerate()
        .map(|(k, (mine, &at))| {
            let mut rows = PieceRows {
                first_row: vec![0u64; wpr],
                first_y: at.y,
                mine,
                words_per_row: wpr,
                stray: false,
            };
            let decoded = decode(path, &bytes[pieces[k].clone()], size, at, (left, &mut rows));
            (rows.first_row, rows.stray, decoded)
        })
        .collect();
    for (k, (first_row, stray, decoded)) in results.into_iter().enumerate() {
        let decoded = decoded?;
        let at = starts[k];
        if at.y < height {
            let row = &mut grid.words_mut()[(top + at.y) * wpr..][..wpr];
            row.iter_mut().zip(&first_row).for_each(|(w, b)| *w |= b);
        }
        if stray || !agrees(k, &starts, pieces.len(), decoded) {
            return Err(disagree(path, k));
        }
    }
    Ok(())
}

/// Bytes read by the block reader ([`runs`]) below which [`decode`] reads on a byte at a
/// time, first for [`FIRST_SKIP`] bytes, then twice as far each time the block reader stops
/// as short again, up to [`LAST_SKIP`]. Classifying a block costs as much as reading a few
/// tokens byte by byte, and a pattern whose counts have two digits (sparse rows) stops the
/// block reader at each. Measured on dev-2c (`gol run --input F --gens 0`, medians of 9):
/// mosquito5 at 2^19 generations (76 million cells, 239 MB of RLE) counted in 1.17 → 0.81 s,
/// 8192² soups at 5% read onto the plane in 0.189 → 0.126 s, at 20–50% unchanged (4 bytes
/// and 16 from the first: 20% and 30% 5–6% slower; 16 bytes and a block each time: 20%
/// 32% slower).
const FEW_FAST_BYTES: usize = 4;

/// The bytes read a byte at a time after the block reader's first short stop.
const FIRST_SKIP: usize = 8;

/// The most bytes read a byte at a time before the block reader is tried again.
const LAST_SKIP: usize = 8 * BLOCK;

/// Decodes `bytes` of a body from `at`, drawing each run of live cells (inside the `size` box)
/// into `rows`' row at cell `left + x`; returns where it stopped, and whether that is at the `!`
/// that ends the pattern rather than the end of `bytes`. Counts lines only at newlines.
fn decode(
    path: &Path,
    bytes: &[u8],
    size: (usize, usize),
    at: Cursor,
    (left, rows): (usize, &mut impl Rows),
) -> Decoded {
    let (width, height) = size;
    let Cursor {
        mut x,
        mut y,
        mut line,
        mut line_start,
    } = at;
    let fail = |line: usize, message: String| parse_error(path, line, message);
    // The pending run count; `counted` tells whether any digit was given.
    let (mut count, mut counted) = (0usize, false);
    let mut i = 0;
    // The row being drawn: `None` past the pattern's last row, or where `rows` draws nothing.
    let mut row = if y < height { rows.row(y) } else { None };
    // The columns of the row (from `left`) drawn into so far, told to `rows` by their words.
    let mut drawn = (usize::MAX, 0);
    let words = |(from, to): (usize, usize)| from / 64..to.div_ceil(64).max(from / 64);
    // Where the block reader is next tried, and the bytes it was last kept off for: where it
    // stops within a few bytes (counts of two or more digits end its blocks, as in a large
    // pattern's sparse rows), the byte loop reads on for a while first, twice as far each
    // time it stops short again.
    let (mut fast_from, mut skip) = (0, 0);
    while i < bytes.len() {
        if !line_start && !counted && i >= fast_from {
            // Runs of cells inside the row, the bulk of a soup, read a block at a time; the
            // first byte that is anything else (or does not fit) goes to the byte loop below.
            let stop = match row.as_deref_mut() {
                Some(row) => {
                    let from = x;
                    let stop = runs(
                        bytes,
                        i,
                        &mut x,
                        (width, true),
                        Some(&mut Toggles::new(row, left)),
                    );
                    if x > from {
                        drawn = (drawn.0.min(left + from), drawn.1.max(left + x));
                    }
                    stop
                }
                None => runs(bytes, i, &mut x, (width, y < height), None),
            };
            if stop.at - i < FEW_FAST_BYTES {
                skip = (2 * skip).clamp(FIRST_SKIP, LAST_SKIP);
                fast_from = stop.at + skip;
            } else {
                skip = 0;
            }
            i = stop.at;
            line += stop.lines;
            if let Some(after_newline) = stop.after_newline {
                line_start = after_newline;
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
            // Golly reads `.` as `b` and `A` as `o` in two-state patterns (MCell files write
            // them so).
            b'b' | b'.' | b'o' | b'A' => {
                let n = if counted { count } else { 1 };
                (count, counted) = (0, false);
                if x + n > width {
                    return Err(fail(
                        line,
                        format!("row {} is wider than the header's x = {width}", y + 1),
                    ));
                }
                if (byte == b'o' || byte == b'A') && n > 0 {
                    if y >= height {
                        return Err(fail(
                            line,
                            format!("more rows than the header's y = {height}"),
                        ));
                    }
                    if let Some(row) = row.as_deref_mut() {
                        fill_row_run(row, left + x, n);
                        drawn = (drawn.0.min(left + x), drawn.1.max(left + x + n));
                    }
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
                rows.drawn(words(std::mem::replace(&mut drawn, (usize::MAX, 0))));
                row = if y < height { rows.row(y) } else { None };
            }
            b'!' => {
                rows.drawn(words(drawn));
                return match counted {
                    true => Err(fail(line, "a run count before '!' has no cell".into())),
                    false => Ok((
                        Cursor {
                            x,
                            y,
                            line,
                            line_start,
                        },
                        true,
                    )),
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
                        "cell '{}' is not a two-state cell (b or ., o or A, and $ are; multi-state cells need a rule of more states)",
                        byte as char
                    ),
                ))
            }
            other => return Err(fail(line, describe(other))),
        }
    }
    rows.drawn(words(drawn));
    match counted {
        true => Err(fail(line, "the pattern ends inside a run".into())),
        false => Ok((
            Cursor {
                x,
                y,
                line,
                line_start,
            },
            false,
        )),
    }
}

/// Writes the whole grid: header with the rule and its `:TW,H` or `:PW,H` suffix, runs, lines
/// of at most 70 characters.
pub(super) fn write(
    out: &mut (impl Write + Send),
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
    if grid.states() > 2 {
        return super::states::write(out, grid);
    }
    super::rle_body::write(out, grid)
}

/// [`LineWriter`] hands its buffer to the output once it holds this many bytes.
const FLUSH_BYTES: usize = 1 << 16;

/// Emits run tokens, breaking lines before they pass [`LINE_LIMIT`]; tokens are gathered in a
/// buffer of its own (a `write_all` of one to four bytes a token cost more than the runs).
pub(super) struct LineWriter<'a, W: Write> {
    out: &'a mut W,
    buffer: Vec<u8>,
    length: usize,
}

impl<'a, W: Write> LineWriter<'a, W> {
    /// A writer of tokens to `out`.
    pub(super) fn new(out: &'a mut W) -> LineWriter<'a, W> {
        LineWriter {
            out,
            buffer: Vec::with_capacity(2 * FLUSH_BYTES),
            length: 0,
        }
    }

    /// Writes the `!` that ends the pattern, and everything gathered.
    pub(super) fn finish(mut self) -> io::Result<()> {
        self.token(1, b'!')?;
        self.buffer.push(b'\n');
        self.out.write_all(&self.buffer)
    }

    /// A run of `count` cells (or rows) of a tag of one or more letters.
    pub(super) fn tag(&mut self, count: usize, tag: &[u8]) -> io::Result<()> {
        if let [one] = tag {
            return self.token(count, *one);
        }
        let mut bytes = match count {
            1 => Vec::new(),
            n => n.to_string().into_bytes(),
        };
        bytes.extend_from_slice(tag);
        self.push(&bytes)
    }

    #[inline(always)]
    fn token(&mut self, count: usize, tag: u8) -> io::Result<()> {
        let mut bytes = [0u8; 22];
        let len = put_token(&mut bytes, 0, count, tag);
        self.push(&bytes[..len])
    }

    /// Adds one token's bytes, on a new line where they would pass [`LINE_LIMIT`].
    #[inline(always)]
    fn push(&mut self, bytes: &[u8]) -> io::Result<()> {
        let len = bytes.len();
        if self.length + len > LINE_LIMIT {
            self.buffer.push(b'\n');
            self.length = 0;
        }
        self.buffer.extend_from_slice(bytes);
        self.length += len;
        if self.buffer.len() >= FLUSH_BYTES {
            self.out.write_all(&self.buffer)?;
            self.buffer.clear();
        }
        Ok(())
    }
}

/// Writes the token of `count` cells (or rows) of `tag` at `bytes[at]`, which has room for it
/// and one byte more; returns where it ends. No count for 1; a count below 10 without a
/// division (the runs of a soup); longer counts' digits found backwards.
#[inline(always)]
pub(super) fn put_token(bytes: &mut [u8], at: usize, count: usize, tag: u8) -> usize {
    if count < 10 {
        return put_short(bytes, at, count, tag);
    }
    let mut digits = [0u8; 20];
    let mut first = digits.len();
    let mut n = count;
    while n > 0 {
        first -= 1;
        digits[first] = b'0' + (n % 10) as u8;
        n /= 10;
    }
    let len = digits.len() - first;
    bytes[at..at + len].copy_from_slice(&digits[first..]);
    bytes[at + len] = tag;
    at + len + 1
}

/// [`put_token`] for a count below 10 (0 writes a digit `0`, for callers that then drop it).
#[inline(always)]
pub(super) fn put_short(bytes: &mut [u8], at: usize, count: usize, tag: u8) -> usize {
    let one = count == 1;
    bytes[at] = if one { tag } else { b'0' + count as u8 };
    bytes[at + 1] = tag;
    at + 2 - usize::from(one)
}
