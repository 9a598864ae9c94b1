//! Life-like rules in B/S notation.
//!
//! A rule is two sets of neighbour counts: `birth` (a dead cell becomes alive) and `survive` (a
//! live cell stays alive). Counts go up to 26 so that the same type serves 3D rules; a 2D engine
//! checks with [`Rule::check_neighbours`] that no count exceeds 8.
//!
//! Accepted spellings (case-insensitive, whitespace ignored):
//! - `B3/S23`, `S23/B3`, `B3S23`, `b36/s23`, `B2/S`, `B0123/S` …: each count a single digit;
//! - `B6/S5-7,10,12-14`: a list that holds a comma or a hyphen is read as comma-separated
//!   numbers and ranges (write a lone count of 10 or more as `10-10` or `10,`);
//! - `23/3`: the older survival/birth digits notation used in old RLE files;
//! - `Life`: B3/S23.

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};

/// The highest neighbour count a rule may mention (3D Moore neighbourhood).
pub const MAX_COUNT: u32 = 26;

/// A Life-like (outer totalistic, two-state) rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Rule {
    birth: u32,
    survive: u32,
}

impl Rule {
    /// Conway's Life, B3/S23: the 2D default.
    pub const LIFE: Rule = Rule {
        birth: 1 << 3,
        survive: (1 << 2) | (1 << 3),
    };

    /// B6/S567: the 3D default.
    pub const LIFE_3D: Rule = Rule {
        birth: 1 << 6,
        survive: (1 << 5) | (1 << 6) | (1 << 7),
    };

    /// Builds a rule from bit masks (bit `k` set: count `k` is in the set).
    ///
    /// Fails if a mask holds a count above [`MAX_COUNT`].
    pub fn from_masks(birth: u32, survive: u32) -> Result<Rule> {
        let rule = Rule { birth, survive };
        if (birth | survive) >> (MAX_COUNT + 1) != 0 {
            return Err(Error::Rule {
                rule: format!("{birth:#x}/{survive:#x}"),
                reason: format!("counts above {MAX_COUNT} cannot occur"),
            });
        }
        Ok(rule)
    }

    /// Parses B/S notation (see the module documentation).
    pub fn parse(text: &str) -> Result<Rule> {
        let fail = |reason: String| Error::Rule {
            rule: text.to_string(),
            reason,
        };
        let compact: String = text
            .chars()
            .filter(|c| !c.is_whitespace())
            .map(|c| c.to_ascii_lowercase())
            .collect();
        if compact.is_empty() {
            return Err(fail("the rule is empty".into()));
        }
        if compact == "life" || compact == "conway" {
            return Ok(Rule::LIFE);
        }
        let (birth, survive) = if compact.starts_with('b') || compact.starts_with('s') {
            split_letters(&compact).map_err(fail)?
        } else if let Some((s, b)) = compact.split_once('/') {
            // Old notation: survival counts, a slash, birth counts.
            (b, s)
        } else {
            return Err(fail(
                "expected B/S notation such as B3/S23 (or S/B digits such as 23/3)".into(),
            ));
        };
        let birth = parse_counts(birth).map_err(|r| fail(format!("birth list: {r}")))?;
        let survive = parse_counts(survive).map_err(|r| fail(format!("survival list: {r}")))?;
        Ok(Rule { birth, survive })
    }

    /// Bit `k` set: a dead cell with `k` live neighbours is born.
    pub const fn birth_mask(&self) -> u32 {
        self.birth
    }

    /// Bit `k` set: a live cell with `k` live neighbours survives.
    pub const fn survive_mask(&self) -> u32 {
        self.survive
    }

    /// The next state of a cell that is `alive` now and has `neighbours` live neighbours.
    #[inline]
    pub fn next(&self, alive: bool, neighbours: u32) -> bool {
        let set = if alive { self.survive } else { self.birth };
        (set >> neighbours) & 1 != 0
    }

    /// The rule's table indexed `[state][count]`, as Kurnosov's seminar's `states[2][9]` (docs/lineage.md) (for 2D) and
    /// its 3D counterpart: `table[0]` for dead cells, `table[1]` for live ones.
    pub fn table(&self) -> [[u8; MAX_COUNT as usize + 1]; 2] {
        let mut table = [[0u8; MAX_COUNT as usize + 1]; 2];
        for n in 0..=MAX_COUNT {
            table[0][n as usize] = self.next(false, n) as u8;
            table[1][n as usize] = self.next(true, n) as u8;
        }
        table
    }

    /// Checks that every count the rule mentions can occur with `neighbours` neighbours
    /// (8 in 2D, 26 in 3D).
    pub fn check_neighbours(&self, neighbours: u32) -> Result<()> {
        let highest = 31 - (self.birth | self.survive | 1).leading_zeros();
        if highest > neighbours {
            return Err(Error::Rule {
                rule: self.to_string(),
                reason: format!(
                    "it mentions {highest} neighbours, but a cell here has only {neighbours}"
                ),
            });
        }
        Ok(())
    }
}

impl Default for Rule {
    fn default() -> Self {
        Rule::LIFE
    }
}

impl FromStr for Rule {
    type Err = Error;
    fn from_str(s: &str) -> Result<Rule> {
        Rule::parse(s)
    }
}

/// Splits `b…/s…`, `s…/b…` or `b…s…` (lower case, no whitespace) into the birth and survival
/// lists.
fn split_letters(text: &str) -> std::result::Result<(&str, &str), String> {
    let (first, second) = match text.split_once('/') {
        Some((a, b)) => (a, b),
        None => {
            let at = text[1..]
                .find(['b', 's'])
                .map(|i| i + 1)
                .ok_or("expected both a B and an S part, such as B3/S23")?;
            (&text[..at], &text[at..])
        }
    };
    let tag = |part: &str| part.chars().next();
    let (b, s) = match (tag(first), tag(second)) {
        (Some('b'), Some('s')) => (first, second),
        (Some('s'), Some('b')) => (second, first),
        _ => return Err("expected one B part and one S part, such as B3/S23".into()),
    };
    Ok((&b[1..], &s[1..]))
}

/// Parses a count list: digits written together, or comma-separated numbers and ranges.
fn parse_counts(list: &str) -> std::result::Result<u32, String> {
    let mut mask = 0u32;
    let mut add = |n: u32| -> std::result::Result<(), String> {
        if n > MAX_COUNT {
            return Err(format!("count {n} is above {MAX_COUNT}"));
        }
        mask |= 1 << n;
        Ok(())
    };
    if list.contains([',', '-']) {
        for item in list.split(',').filter(|i| !i.is_empty()) {
            let number = |s: &str| -> std::result::Result<u32, String> {
                if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(format!("{item:?} is not a count or a range such as 5-7"));
                }
                s.parse::<u32>()
                    .map_err(|_| format!("count {s} is too large"))
            };
            match item.split_once('-') {
                Some((lo, hi)) => {
                    let (lo, hi) = (number(lo)?, number(hi)?);
                    if lo > hi {
                        return Err(format!("range {item} runs backwards"));
                    }
                    for n in lo..=hi.min(MAX_COUNT + 1) {
                        add(n)?;
                    }
                }
                None => add(number(item)?)?,
            }
        }
    } else {
        for c in list.chars() {
            let digit = c
                .to_digit(10)
                .ok_or_else(|| format!("unexpected character {c:?}"))?;
            add(digit)?;
        }
    }
    Ok(mask)
}

/// Writes a count set: single digits together when every count is below 10, else
/// comma-separated numbers with ranges.
fn write_counts(f: &mut fmt::Formatter<'_>, mask: u32) -> fmt::Result {
    if mask >> 10 == 0 {
        for n in 0..10 {
            if mask >> n & 1 != 0 {
                write!(f, "{n}")?;
            }
        }
        return Ok(());
    }
    let mut first = true;
    let mut n = 0;
    while n <= MAX_COUNT {
        if mask >> n & 1 == 0 {
            n += 1;
            continue;
        }
        let start = n;
        while n < MAX_COUNT && mask >> (n + 1) & 1 != 0 {
            n += 1;
        }
        if !first {
            write!(f, ",")?;
        }
        first = false;
        if n > start {
            write!(f, "{start}-{n}")?;
        } else {
            write!(f, "{start}")?;
        }
        n += 1;
    }
    // A lone count of 10 or more needs a comma so that it reads back as one number.
    if mask.count_ones() == 1 {
        write!(f, ",")?;
    }
    Ok(())
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "B")?;
        write_counts(f, self.birth)?;
        write!(f, "/S")?;
        write_counts(f, self.survive)
    }
}

#[cfg(test)]
mod test {
    use super::*;

    fn counts(mask: u32) -> Vec<u32> {
        (0..=MAX_COUNT).filter(|n| mask >> n & 1 != 0).collect()
    }

    #[test]
    fn parses_common_spellings() {
        for text in [
            "B3/S23",
            "b3/s23",
            "S23/B3",
            "B3S23",
            "b3s23",
            "23/3",
            " B3 / S23 ",
            "Life",
        ] {
            assert_eq!(Rule::parse(text).unwrap(), Rule::LIFE, "{text}");
        }
        let highlife = Rule::parse("b36/s23").unwrap();
        assert_eq!(counts(highlife.birth_mask()), vec![3, 6]);
        let seeds = Rule::parse("B2/S").unwrap();
        assert_eq!(
            (counts(seeds.birth_mask()), seeds.survive_mask()),
            (vec![2], 0)
        );
        let day_night = Rule::parse("B3678/S34678").unwrap();
        assert_eq!(counts(day_night.survive_mask()), vec![3, 4, 6, 7, 8]);
        let b0 = Rule::parse("B0123/S").unwrap();
        assert_eq!(counts(b0.birth_mask()), vec![0, 1, 2, 3]);
    }

    #[test]
    fn parses_comma_lists_and_ranges() {
        let rule = Rule::parse("B6/S5-7,10,12-14").unwrap();
        assert_eq!(counts(rule.survive_mask()), vec![5, 6, 7, 10, 12, 13, 14]);
        assert_eq!(Rule::parse("B6/S567").unwrap(), Rule::LIFE_3D);
        assert_eq!(
            counts(Rule::parse("B10,/S").unwrap().birth_mask()),
            vec![10]
        );
    }

    #[test]
    fn refuses_bad_rules() {
        for text in [
            "", "B3", "S23", "B3/S2x", "B3/B3", "X3/S23", "B27,/S", "B5-3/S", "B3/S1--2", "hello",
        ] {
            let err = Rule::parse(text).unwrap_err().to_string();
            assert!(err.starts_with("invalid rule"), "{text}: {err}");
        }
    }

    #[test]
    fn display_round_trips() {
        for text in [
            "B3/S23",
            "B2/S",
            "B0/S8",
            "B6/S5-7,10,12-14",
            "B/S26,",
            "B10-12/S0",
        ] {
            let rule = Rule::parse(text).unwrap();
            assert_eq!(Rule::parse(&rule.to_string()).unwrap(), rule, "{text}");
        }
        assert_eq!(Rule::LIFE.to_string(), "B3/S23");
        assert_eq!(Rule::parse("B6/S5-7,10").unwrap().to_string(), "B6/S5-7,10");
    }

    #[test]
    fn next_and_table_agree() {
        let rule = Rule::LIFE;
        let table = rule.table();
        assert!(rule.next(false, 3) && !rule.next(false, 2));
        assert!(rule.next(true, 2) && rule.next(true, 3) && !rule.next(true, 4));
        for (n, (&dead, &alive)) in table[0].iter().zip(&table[1]).enumerate() {
            assert_eq!(dead != 0, rule.next(false, n as u32));
            assert_eq!(alive != 0, rule.next(true, n as u32));
        }
    }

    #[test]
    fn neighbour_check() {
        assert!(Rule::LIFE.check_neighbours(8).is_ok());
        assert!(Rule::parse("B9,/S").unwrap().check_neighbours(8).is_err());
        assert!(Rule::LIFE_3D.check_neighbours(26).is_ok());
    }
}
