//! Apgcodes: the names apgsearch, lifelib and Catagolue give objects (`xs4_33` the block,
//! `xq4_153` the glider), in Extended Wechsler format.
//!
//! One phase in one orientation is written strip by strip: the bounding box cut into strips of
//! five rows from the top (the last padded with dead rows), each strip a column at a time from
//! the left, a column as one character `0`–`9`, `a`–`v` of its five cells (the strip's top row
//! the lowest bit). Runs of empty columns are shortened (`0` one, `w` two, `x` three, `y`
//! and a base-36 digit 4 to 39), empty columns at a strip's end dropped, and strips joined by
//! `z`. An object's code takes, of every phase in each of the 8 orientations, the shortest
//! string, ties broken by byte order; phases too large to write (a box past 40,000 cells with a
//! border of one, or more than 1,280 characters) are passed over, and an object none of whose
//! phases can be written gets `ov_` and its population or period alone.

use std::collections::HashSet;
use std::fmt;
use std::sync::{LazyLock, RwLock};

/// Cells of one phase, `(x, y)` with x to the right and y down, anywhere on the plane.
pub type Cells = [(i64, i64)];

/// The characters of a column of a strip, by its five cells (the strip's top row bit 0).
const DIGITS: &[u8; 32] = b"0123456789abcdefghijklmnopqrstuv";

/// The largest box (with a border of one cell) of a phase that is written.
const MOST_AREA: u64 = 40_000;

/// The longest string of a phase that is kept.
const MOST_CHARACTERS: usize = 1_280;

/// What kind of object a code names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Period 1, no displacement: `xs`, with its population.
    Still {
        /// Cells alive.
        population: u64,
    },
    /// Returns to itself where it was: `xp`, with its period.
    Oscillator {
        /// Generations of one period.
        period: u64,
    },
    /// Returns to itself elsewhere: `xq`, with its period.
    Spaceship {
        /// Generations of one period.
        period: u64,
    },
}

impl fmt::Display for Kind {
    /// The code's prefix without its underscore: `xs4`, `xp2`, `xq4`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Kind::Still { population } => write!(f, "xs{population}"),
            Kind::Oscillator { period } => write!(f, "xp{period}"),
            Kind::Spaceship { period } => write!(f, "xq{period}"),
        }
    }
}

/// An apgcode held once for the whole process ([`intern`]): copied, compared and counted
/// without an allocation.
pub type Code = &'static str;

/// `code` as a [`Code`]: each distinct code is stored once, for the life of the process, and
/// given out again after. A census counts a handful of codes a soup, a million soups a second,
/// from a few thousand distinct codes in 10^8 soups (its haul holds each of them too): a
/// tally then copies a pointer where it would allocate a string.
pub fn intern(code: &str) -> Code {
    static CODES: LazyLock<RwLock<HashSet<Code>>> = LazyLock::new(Default::default);
    if let Some(&held) = CODES.read().expect("the codes' lock").get(code) {
        return held;
    }
    let mut codes = CODES.write().expect("the codes' lock");
    match codes.get(code) {
        Some(&held) => held,
        None => {
            let held: Code = Box::leak(code.into());
            codes.insert(held);
            held
        }
    }
}

/// The apgcode of an object of `kind` whose phases over one period are `phases`.
pub fn code<'a>(kind: Kind, phases: impl IntoIterator<Item = &'a Cells>) -> String {
    match canonical(phases) {
        Some(wechsler) => format!("{kind}_{wechsler}"),
        None => {
            let kind = kind.to_string();
            format!("ov_{}{}", &kind[1..2], &kind[2..])
        }
    }
}

/// The shortest (then least in byte order) Wechsler string of `phases` over the 8
/// orientations; `None` when none can be written.
pub fn canonical<'a>(phases: impl IntoIterator<Item = &'a Cells>) -> Option<String> {
    let mut best: Option<String> = None;
    let mut turned = Vec::new();
    for phase in phases {
        for orientation in 0..8 {
            turned.clear();
            turned.extend(phase.iter().map(|&cell| orient(cell, orientation)));
            let Some(text) = wechsler(&turned) else {
                continue;
            };
            let better = match &best {
                None => true,
                Some(b) => (text.len(), text.as_bytes()) < (b.len(), b.as_bytes()),
            };
            if better {
                best = Some(text);
            }
        }
    }
    best
}

/// `cell` in the `orientation`th of the square's 8 symmetries (0 leaves it).
pub fn orient((x, y): (i64, i64), orientation: u8) -> (i64, i64) {
    let (x, y) = if orientation & 4 != 0 { (y, x) } else { (x, y) };
    let x = if orientation & 1 != 0 { -x } else { x };
    let y = if orientation & 2 != 0 { -y } else { y };
    (x, y)
}

/// Whether cells whose bounding box is `width` × `height` can be written as a Wechsler string:
/// the box with a ring of one blank cell round it holds at most 40,000 cells (`MOST_AREA`).
pub fn writable(width: u64, height: u64) -> bool {
    (width + 2).saturating_mul(height + 2) <= MOST_AREA
}

/// The Wechsler string of `cells` as they lie; `None` when they are too large to write.
pub fn wechsler(cells: &Cells) -> Option<String> {
    let Some(&(x0, y0)) = cells.first() else {
        return Some("0".into());
    };
    let (mut left, mut top, mut right, mut bottom) = (x0, y0, x0, y0);
    for &(x, y) in cells {
        left = left.min(x);
        right = right.max(x);
        top = top.min(y);
        bottom = bottom.max(y);
    }
    let (width, height) = ((right - left + 1) as u64, (bottom - top + 1) as u64);
    if !writable(width, height) {
        return None;
    }
    let (width, strips) = (width as usize, height.div_ceil(5) as usize);
    // Each column of each strip, as the five bits of its character.
    let mut columns = vec![0u8; width * strips];
    for &(x, y) in cells {
        let (column, row) = ((x - left) as usize, (y - top) as usize);
        columns[(row / 5) * width + column] |= 1 << (row % 5);
    }
    let mut text = Vec::new();
    for (s, strip) in columns.chunks(width).enumerate() {
        if s > 0 {
            text.push(b'z');
        }
        let mut blanks = 0;
        for &column in strip {
            if column == 0 {
                blanks += 1;
                continue;
            }
            push_blanks(&mut text, blanks);
            blanks = 0;
            text.push(DIGITS[column as usize]);
        }
        if text.len() > MOST_CHARACTERS + 1 {
            return None;
        }
    }
    while text.last() == Some(&b'z') {
        text.pop();
    }
    if text.len() > MOST_CHARACTERS {
        return None;
    }
    if text.is_empty() {
        text.push(b'0');
    }
    Some(String::from_utf8(text).expect("the alphabet is ASCII"))
}

/// Writes a run of `blanks` empty columns.
fn push_blanks(text: &mut Vec<u8>, mut blanks: usize) {
    while blanks >= 40 {
        text.extend_from_slice(b"yz");
        blanks -= 39;
    }
    match blanks {
        0 => {}
        1 => text.push(b'0'),
        2 => text.push(b'w'),
        3 => text.push(b'x'),
        _ => {
            text.push(b'y');
            text.push(b"0123456789abcdefghijklmnopqrstuvwxyz"[blanks - 4]);
        }
    }
}

/// The live cells a Wechsler string writes (the part of an apgcode after its `_`), the
/// top-left of its box at (0, 0); `None` for a character outside the format.
pub fn decode(wechsler: &str) -> Option<Vec<(i64, i64)>> {
    let mut cells = Vec::new();
    let (mut x, mut strip) = (0i64, 0i64);
    let mut bytes = wechsler.bytes();
    while let Some(b) = bytes.next() {
        match b {
            b'0'..=b'9' | b'a'..=b'v' => {
                let value = DIGITS.iter().position(|&d| d == b)?;
                for row in 0..5 {
                    if value >> row & 1 != 0 {
                        cells.push((x, strip * 5 + row));
                    }
                }
                x += 1;
            }
            b'w' => x += 2,
            b'x' => x += 3,
            b'y' => {
                let n = bytes.next()?;
                x += 4 + (n as char).to_digit(36)? as i64;
            }
            b'z' => {
                strip += 1;
                x = 0;
            }
            _ => return None,
        }
    }
    Some(cells)
}

/// The live cells of a picture, a row a string, `o` alive (tests).
#[cfg(test)]
pub(crate) fn cells(rows: &[&str]) -> Vec<(i64, i64)> {
    let mut out = Vec::new();
    for (y, row) in rows.iter().enumerate() {
        for (x, c) in row.chars().enumerate() {
            if c == 'o' {
                out.push((x as i64, y as i64));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_code_is_interned_once_whatever_string_it_comes_from() {
        let block = intern("xs4_33");
        let again = intern(&String::from("xs4_33"));
        assert!(std::ptr::eq(block, again), "one copy of a code");
        assert_eq!(block, "xs4_33");
        let blinker = intern("xp2_7");
        assert_eq!(blinker, "xp2_7");
        assert!(!std::ptr::eq(block, blinker));
        // From many threads at once, still one copy.
        let held: Vec<Code> = std::thread::scope(|s| {
            let threads: Vec<_> = (0..8).map(|_| s.spawn(|| intern("xs6_696"))).collect();
            threads.into_iter().map(|t| t.join().unwrap()).collect()
        });
        assert!(held.iter().all(|&c| std::ptr::eq(c, held[0])));
    }

    #[test]
    fn still_lifes_get_their_catagolue_names() {
        let named: [(&[&str], &str); 7] = [
            (&["oo", "oo"], "33"),
            (&[".oo.", "o..o", ".oo."], "696"),
            (&["oo.", "o.o", ".o."], "253"),
            (&["oo.", "o.o", ".oo"], "356"),
            (&[".oo.", "o..o", ".o.o", "..o."], "2596"),
            (&[".o.", "o.o", ".o."], "252"),
            (&[".oo.", "o..o", "o..o", ".oo."], "6996"),
        ];
        for (rows, code) in named {
            assert_eq!(
                canonical([cells(rows).as_slice()]).unwrap(),
                code,
                "{rows:?}"
            );
        }
    }

    #[test]
    fn an_oscillator_takes_its_shortest_phase() {
        // The blinker's horizontal phase writes 111, its vertical one 7.
        let phases = [cells(&["ooo"]), cells(&["o", "o", "o"])];
        assert_eq!(wechsler(&phases[0]).unwrap(), "111");
        assert_eq!(
            code(
                Kind::Oscillator { period: 2 },
                phases.iter().map(Vec::as_slice)
            ),
            "xp2_7"
        );
    }

    #[test]
    fn blank_columns_and_strips_are_shortened() {
        let (mut far, mut x) = (vec![(0, 0), (1, 0)], 1);
        for gap in 1..=45 {
            x += gap + 1;
            far.push((x, 0));
        }
        let text = wechsler(&far).unwrap();
        assert!(text.starts_with("1101w1x1y01y11"), "{text}");
        assert!(text.ends_with("yz01yzw1yzx1yzy01yzy11yzy21"), "{text}");
        assert_eq!(decode(&text).unwrap().len(), far.len());
        let mut back = decode(&text).unwrap();
        back.sort();
        let mut sorted = far.clone();
        sorted.sort();
        assert_eq!(back, sorted);
        // Two cells 12 rows apart: an empty strip between.
        assert_eq!(wechsler(&[(0, 0), (0, 12)]).unwrap(), "1zz4");
    }

    #[test]
    fn too_large_phases_are_not_written() {
        let line: Vec<(i64, i64)> = (0..20_000).map(|x| (x, 0)).collect();
        assert_eq!(wechsler(&line), None);
        assert_eq!(
            code(Kind::Still { population: 20_000 }, [line.as_slice()]),
            "ov_s20000"
        );
    }
}
