//! Larger than Life: Griffeath's family of rules over large neighbourhoods, in the notation
//! of MCell and Golly, `Rr,Cc,Mm,Smin..max,Bmin..max,Nn`:
//!
//! - `R`: the range r, 1 to 500;
//! - `C`: the number of states (0 and 1 mean 2); with more, a live cell that does not survive
//!   decays through the states 2 to C − 1 as under a Generations rule;
//! - `M`: whether the cell itself counts (1) or not (0);
//! - `S`, `B`: the counts of live neighbours (state 1) within which a live cell survives and
//!   an empty cell is born;
//! - `N`: the neighbourhood, `M` the (2r+1)² square, `N` von Neumann's diamond
//!   (|dx| + |dy| ≤ r), `C` the disc of the cells nearer the centre than r + ½.
//!
//! Kellie Evans' notation `r,bmin,bmax,smin,smax` (the square, the cell counted, two states)
//! is read too. [`step`] is the rule's generation over a grid of states, counted with prefix
//! sums: O(1) a cell for the square, O(r) for the others.

use std::fmt;

use rayon::prelude::*;

/// The most a range may be (Golly's limit).
pub const MAX_RANGE: u32 = 500;

/// The neighbourhood of a Larger than Life rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Shape {
    /// The (2r+1)² square.
    Moore,
    /// |dx| + |dy| ≤ r.
    VonNeumann,
    /// dx² + dy² < (r + ½)².
    Circular,
}

/// A Larger than Life rule (its number of states is the [`crate::Rule`]'s).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Larger {
    /// The range r.
    pub range: u32,
    /// Whether the cell counts itself.
    pub middle: bool,
    /// Counts within which a live cell survives (inclusive).
    pub survive: (u32, u32),
    /// Counts within which an empty cell is born (inclusive).
    pub birth: (u32, u32),
    /// The neighbourhood.
    pub shape: Shape,
}

impl Larger {
    /// Reads `text` (lower case, no whitespace) as a Larger than Life rule and its number of
    /// states; `None` where it is not in either notation, `Err` with the reason where it is
    /// but is wrong.
    pub fn parse(text: &str) -> Option<Result<(Larger, u32), String>> {
        let parts: Vec<&str> = text.split(',').collect();
        if parts.len() == 5
            && parts
                .iter()
                .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        {
            let n: Vec<u32> = parts
                .iter()
                .map(|p| p.parse().unwrap_or(u32::MAX))
                .collect();
            let rule = Larger {
                range: n[0],
                middle: true,
                birth: (n[1], n[2]),
                survive: (n[3], n[4]),
                shape: Shape::Moore,
            };
            return Some(rule.checked().map(|r| (r, 2)));
        }
        if parts.len() != 6 || !parts[0].starts_with('r') || !parts[1].starts_with('c') {
            return None;
        }
        Some(Larger::parse_parts(&parts))
    }

    fn parse_parts(parts: &[&str]) -> Result<(Larger, u32), String> {
        let number = |part: &str, tag: &str| -> Result<u32, String> {
            part.strip_prefix(tag)
                .and_then(|n| n.parse::<u32>().ok())
                .ok_or_else(|| format!("expected {}N, not {part:?}", tag.to_ascii_uppercase()))
        };
        let range_of = |part: &str, tag: &str| -> Result<(u32, u32), String> {
            let body = part.strip_prefix(tag).ok_or_else(|| {
                format!(
                    "expected {}MIN..MAX, not {part:?}",
                    tag.to_ascii_uppercase()
                )
            })?;
            let (low, high) = body.split_once("..").unwrap_or((body, body));
            match (low.parse::<u32>(), high.parse::<u32>()) {
                (Ok(l), Ok(h)) => Ok((l, h)),
                _ => Err(format!(
                    "expected {}MIN..MAX, not {part:?}",
                    tag.to_ascii_uppercase()
                )),
            }
        };
        let range = number(parts[0], "r")?;
        let states = number(parts[1], "c")?;
        let middle = match number(parts[2], "m")? {
            0 => false,
            1 => true,
            m => return Err(format!("M is 0 or 1, not {m}")),
        };
        let survive = range_of(parts[3], "s")?;
        let birth = range_of(parts[4], "b")?;
        let shape = match parts[5] {
            "nm" => Shape::Moore,
            "nn" => Shape::VonNeumann,
            "nc" => Shape::Circular,
            other => return Err(format!("the neighbourhood is NM, NN or NC, not {other:?}")),
        };
        if states > 256 {
            return Err(format!("C is 0 to 256, not {states}"));
        }
        let rule = Larger {
            range,
            middle,
            survive,
            birth,
            shape,
        }
        .checked()?;
        Ok((rule, states.max(2)))
    }

    /// A random rule (for tests and `gol verify`) of range 1 to `most_range`, any
    /// neighbourhood, 2 to 5 states, its thresholds round the share of live cells a soup of
    /// 40% has, births from at least one live cell (no B0); its number of states beside it.
    pub fn random(most_range: u32, next: &mut dyn FnMut() -> u64) -> (Larger, u32) {
        let range = 1 + (next() % most_range.clamp(1, MAX_RANGE) as u64) as u32;
        let shape = [Shape::Moore, Shape::VonNeumann, Shape::Circular][(next() % 3) as usize];
        let size = Larger::size_of(range, shape) as u64;
        let mut share =
            |from: u64, spread: u64| ((size * (from + next() % spread) / 100).max(1)) as u32;
        let (s_low, s_more, b_low, b_more) =
            (share(20, 15), share(10, 20), share(25, 10), share(5, 10));
        let rule = Larger {
            range,
            middle: next().is_multiple_of(2),
            survive: (s_low, (s_low + s_more).min(size as u32)),
            birth: (b_low, (b_low + b_more).min(size as u32)),
            shape,
        };
        (rule, [2, 2, 3, 5][(next() % 4) as usize])
    }

    /// The rule, or why it cannot be: a range beyond 1 to [`MAX_RANGE`], or a count beyond the
    /// neighbourhood.
    fn checked(self) -> Result<Larger, String> {
        if !(1..=MAX_RANGE).contains(&self.range) {
            return Err(format!("the range is 1 to {MAX_RANGE}, not {}", self.range));
        }
        let size = self.size();
        for (what, (low, high)) in [("S", self.survive), ("B", self.birth)] {
            if low > size || high > size {
                return Err(format!(
                    "{what}{low}..{high} goes beyond the {size} cells of the neighbourhood"
                ));
            }
        }
        Ok(self)
    }

    /// Half the width of the neighbourhood's row `dy` cells above or below the centre.
    #[inline]
    pub fn reach(&self, dy: u32) -> u32 {
        let r = self.range;
        match self.shape {
            Shape::Moore => r,
            Shape::VonNeumann => r - dy,
            // The largest dx with dx² + dy² ≤ r² + r (that is, below (r + ½)²).
            Shape::Circular => ((r * r + r - dy * dy) as f64).sqrt() as u32,
        }
    }

    /// The cells of the neighbourhood, the centre included.
    pub fn size(&self) -> u32 {
        Larger::size_of(self.range, self.shape)
    }

    /// The cells of the `shape` neighbourhood of range `range`, the centre included.
    pub fn size_of(range: u32, shape: Shape) -> u32 {
        let rule = Larger {
            range,
            middle: true,
            survive: (0, 0),
            birth: (0, 0),
            shape,
        };
        (0..=range)
            .map(|dy| (2 * rule.reach(dy) + 1) * if dy == 0 { 1 } else { 2 })
            .sum()
    }

    /// The next state of a cell in `state` with `count` live cells in its neighbourhood (itself
    /// included where the rule counts it), under `states` states.
    #[inline]
    pub fn next(&self, state: u8, count: u32, states: u32) -> u8 {
        let within = |(low, high): (u32, u32)| low <= count && count <= high;
        match state {
            0 => within(self.birth) as u8,
            1 if within(self.survive) => 1,
            s => {
                let next = s as u32 + 1;
                if next >= states {
                    0
                } else {
                    next as u8
                }
            }
        }
    }

    /// Writes the rule in Golly's notation with `states` states.
    pub fn write(&self, f: &mut fmt::Formatter<'_>, states: u32) -> fmt::Result {
        let shape = match self.shape {
            Shape::Moore => 'M',
            Shape::VonNeumann => 'N',
            Shape::Circular => 'C',
        };
        write!(
            f,
            "R{},C{},M{},S{}..{},B{}..{},N{shape}",
            self.range,
            if states > 2 { states } else { 0 },
            self.middle as u8,
            self.survive.0,
            self.survive.1,
            self.birth.0,
            self.birth.1
        )
    }
}

/// One generation of the `width` × `height` grid of states `cells` (row-major) under `rule`
/// of `states` states into `next`: on a torus where `wrap` (neighbourhoods wider than the grid
/// count cells more than once), else on a bounded plane (cells outside empty). Rows in
/// parallel.
pub fn step(
    rule: &Larger,
    states: u32,
    cells: &[u8],
    width: usize,
    height: usize,
    wrap: bool,
    next: &mut [u8],
) {
    let r = rule.range as usize;
    // Row prefix sums of live cells over the row extended by r each side (wrapped, or empty):
    // prefix[y][i] counts the extended row's first i cells, so the cells of row y within
    // `half` of x are prefix[y][x + r + half + 1] − prefix[y][x + r − half].
    let span = width + 2 * r + 1;
    let mut prefix = vec![0u32; height * span];
    prefix
        .par_chunks_mut(span)
        .enumerate()
        .for_each(|(y, sums)| {
            let row = &cells[y * width..][..width];
            let outside = |i: usize| {
                let x = (i as isize - r as isize).rem_euclid(width as isize) as usize;
                (wrap && row[x] == 1) as u32
            };
            let mut total = 0;
            for i in 0..r {
                total += outside(i);
                sums[i + 1] = total;
            }
            for (sum, &cell) in sums[r + 1..][..width].iter_mut().zip(row) {
                total += (cell == 1) as u32;
                *sum = total;
            }
            for i in r + width..width + 2 * r {
                total += outside(i);
                sums[i + 1] = total;
            }
        });
    // Row `y` of the prefix sums (any integer: wrapped, or none outside).
    let row_of = |y: isize| -> Option<&[u32]> {
        let y = match (0..height as isize).contains(&y) {
            true => y as usize,
            false if wrap => y.rem_euclid(height as isize) as usize,
            false => return None,
        };
        Some(&prefix[y * span..][..span])
    };
    // Adds to `counts` the cells of row `y` within `half` of each x.
    let add_row = |counts: &mut [u32], y: isize, half: usize| {
        if let Some(sums) = row_of(y) {
            let (high, low) = (&sums[r + half + 1..][..width], &sums[r - half..][..width]);
            for ((count, &h), &l) in counts.iter_mut().zip(high).zip(low) {
                *count += h - l;
            }
        }
    };
    let settle = |out: &mut [u8], row: &[u8], counts: &[u32]| {
        for ((cell, &state), &count) in out.iter_mut().zip(row).zip(counts) {
            let count = count - (!rule.middle && state == 1) as u32;
            *cell = rule.next(state, count, states);
        }
    };
    if rule.shape == Shape::Moore {
        // The square: each column's sums of its rows' windows, summed down the rows extended
        // by r above and below, so that a cell's count is one difference.
        let tall = height + 2 * r + 1;
        let mut down = vec![0u32; tall * width];
        down[width..]
            .par_chunks_mut(width)
            .enumerate()
            .for_each(|(k, row)| add_row(row, k as isize - r as isize, r));
        for k in 1..tall {
            let (done, rest) = down.split_at_mut(k * width);
            for (sum, above) in rest[..width].iter_mut().zip(&done[(k - 1) * width..]) {
                *sum += above;
            }
        }
        next.par_chunks_mut(width).enumerate().for_each(|(y, out)| {
            let (top, bottom) = (
                &down[y * width..][..width],
                &down[(y + 2 * r + 1) * width..][..width],
            );
            let counts: Vec<u32> = bottom.iter().zip(top).map(|(b, t)| b - t).collect();
            settle(out, &cells[y * width..][..width], &counts);
        });
        return;
    }
    let reach: Vec<usize> = (0..=rule.range).map(|dy| rule.reach(dy) as usize).collect();
    next.par_chunks_mut(width).enumerate().for_each(|(y, out)| {
        let mut counts = vec![0u32; width];
        for dy in -(r as isize)..=r as isize {
            add_row(&mut counts, y as isize + dy, reach[dy.unsigned_abs()]);
        }
        settle(out, &cells[y * width..][..width], &counts);
    });
}

#[cfg(test)]
mod test {
    use super::*;

    fn parse(text: &str) -> Result<(Larger, u32), String> {
        Larger::parse(text).expect("Larger than Life notation")
    }

    #[test]
    fn golly_notations_are_read_and_written() {
        let (bosco, states) = parse("r5,c0,m1,s34..58,b34..45,nm").unwrap();
        assert_eq!(states, 2);
        assert_eq!(
            (bosco.range, bosco.survive, bosco.birth),
            (5, (34, 58), (34, 45))
        );
        assert_eq!(bosco.size(), 121);
        let (evans, _) = parse("1,3,3,3,4").unwrap();
        assert_eq!(
            (evans.middle, evans.birth, evans.survive),
            (true, (3, 3), (3, 4))
        );
        let (diamond, states) = parse("r3,c5,m0,s2..3,b3..3,nn").unwrap();
        assert_eq!((diamond.size(), states), (25, 5));
        let (disc, _) = parse("r3,c0,m0,s2..3,b3..3,nc").unwrap();
        // dx² + dy² ≤ 12: rows of half-widths 3, 3, 2, 1 (no corners beyond the circle).
        assert_eq!(disc.size(), 7 + 2 * (7 + 5 + 3));
        assert!(Larger::parse("b3/s23").is_none());
        for (text, says) in [
            ("r0,c0,m0,s1..1,b1..1,nm", "range is 1 to 500"),
            ("r1,c0,m2,s1..1,b1..1,nm", "M is 0 or 1"),
            ("r1,c0,m0,s1..10,b1..1,nm", "beyond the 9 cells"),
            ("r1,c0,m0,s1..1,b1..1,nx", "NM, NN or NC"),
            ("r1,c300,m0,s1..1,b1..1,nm", "C is 0 to 256"),
        ] {
            let err = parse(text).unwrap_err();
            assert!(err.contains(says), "{text}: {err}");
        }
    }

    /// One generation by the definition: every neighbour looked at.
    fn by_definition(
        rule: &Larger,
        states: u32,
        cells: &[u8],
        w: usize,
        h: usize,
        wrap: bool,
    ) -> Vec<u8> {
        let r = rule.range as isize;
        (0..w * h)
            .map(|i| {
                let (x, y) = ((i % w) as isize, (i / w) as isize);
                let mut count = 0;
                for dy in -r..=r {
                    for dx in -r..=r {
                        let inside = match rule.shape {
                            Shape::Moore => true,
                            Shape::VonNeumann => dx.abs() + dy.abs() <= r,
                            Shape::Circular => 4 * (dx * dx + dy * dy) < (2 * r + 1) * (2 * r + 1),
                        };
                        if !inside || ((dx, dy) == (0, 0) && !rule.middle) {
                            continue;
                        }
                        let (nx, ny) = (x + dx, y + dy);
                        let on = (0..w as isize).contains(&nx) && (0..h as isize).contains(&ny);
                        if !on && !wrap {
                            continue;
                        }
                        let at = ny.rem_euclid(h as isize) as usize * w
                            + nx.rem_euclid(w as isize) as usize;
                        count += (cells[at] == 1) as u32;
                    }
                }
                rule.next(cells[i], count, states)
            })
            .collect()
    }

    #[test]
    fn prefix_sums_count_as_the_definition_does() {
        let mut seed = 5u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            seed >> 33
        };
        for case in 0..56 {
            let shape = [Shape::Moore, Shape::VonNeumann, Shape::Circular][case % 3];
            let range = 1 + (next() % if case < 40 { 4 } else { 40 }) as u32;
            let size = Larger::size_of(range, shape);
            let pick = |next: &mut dyn FnMut() -> u64| {
                let a = (next() % (size as u64 + 1)) as u32;
                (a, (a + (next() % 6) as u32).min(size))
            };
            let rule = Larger {
                range,
                middle: next() % 2 == 0,
                survive: pick(&mut next),
                birth: pick(&mut next),
                shape,
            };
            let states = [2, 3, 5][case % 3];
            let (w, h) = match case {
                // Grids wider than the neighbourhood, as the plane's window has them.
                50.. => (100 + (next() % 40) as usize, 90 + (next() % 30) as usize),
                _ => (1 + (next() % 13) as usize, 1 + (next() % 11) as usize),
            };
            let cells: Vec<u8> = (0..w * h).map(|_| (next() % states as u64) as u8).collect();
            let wrap = case % 2 == 0;
            let mut out = vec![0u8; w * h];
            step(&rule, states, &cells, w, h, wrap, &mut out);
            assert_eq!(
                out,
                by_definition(&rule, states, &cells, w, h, wrap),
                "{rule:?} {w}x{h} wrap {wrap}"
            );
        }
    }
}
