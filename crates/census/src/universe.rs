//! A small universe of B3/S23 for soups and the objects they leave: a window of bits that
//! grows with the pattern, stepped 64 cells a word, where rows that have not changed over two
//! generations (still lifes, blinkers) are copied rather than computed.
//!
//! Layout: `rows` rows of `words` 64-bit words, row-major; bit `b` of word `w` of row `r` is
//! the cell (x0 + 64·w + b, y0 + r) of the plane. The window keeps a dead border of at least
//! [`MARGIN`] cells round every live one, so a generation is computed exactly as on the
//! unbounded plane; [`Universe::step`] grows the window (by whole words and rows) when the
//! pattern comes nearer. Three generations are kept: now, the one before, and the one before
//! that (where the next is written). A row whose neighbourhood (itself and the rows either
//! side) is the same now as two generations ago will be, next, what it was a generation ago.

/// Dead cells kept between the pattern and the window's edge.
pub const MARGIN: i64 = 2;

/// Rows and words added on each side when the window grows.
const GROWTH_ROWS: usize = 32;

/// A pattern of B3/S23 on the plane.
#[derive(Clone, Debug)]
pub struct Universe {
    x0: i64,
    y0: i64,
    words: usize,
    rows: usize,
    /// Now, a generation ago, two generations ago.
    cells: Vec<u64>,
    before: Vec<u64>,
    spare: Vec<u64>,
    /// Per row: whether it is now what it was two generations ago; and the same for the next
    /// generation, being worked out.
    same: Vec<bool>,
    same_next: Vec<bool>,
    /// The rows of `cells`, `before` and `spare` that may hold live cells (first, last), none
    /// when first > last.
    live_rows: [(usize, usize); 3],
    /// Steps still to come before rows may be copied again: a cell set by hand breaks the
    /// chain of generations that copying relies on for two steps.
    edited: u8,
    /// The bounding box now, when known.
    bbox: Option<Option<(i64, i64, i64, i64)>>,
    /// Per row of `cells`, `before` and `spare`: the hash of its cells ([`row_hash`]).
    hashes: [Vec<(u64, u64)>; 3],
    /// Scratch for [`Universe::step`]: the live columns of the next generation, OR-ed by word.
    columns: Vec<u64>,
    /// Generations stepped.
    pub generation: u64,
}

/// What a live word of cells whose first cell is (`x`, `y`) adds to a state's hash: two lanes
/// of 64 bits, each the word and its place mixed so that any change of either changes every
/// bit with even odds. Summed over the live words, the hash does not depend on the window or on
/// the order the words are visited.
#[inline(always)]
fn word_hash(w: u64, x: i64, y: i64) -> (u64, u64) {
    let place =
        (y as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (x as u64).wrapping_mul(0xd6e8_feb8_6659_fd93);
    // A xor-shift-multiply finaliser, two rounds.
    let mix = |x: u64, k1: u64, k2: u64| {
        let x = (x ^ (x >> 33)).wrapping_mul(k1);
        let x = (x ^ (x >> 29)).wrapping_mul(k2);
        x ^ (x >> 32)
    };
    (
        mix(w ^ place, 0xbf58_476d_1ce4_e5b9, 0x94d0_49bb_1331_11eb),
        mix(w ^ place.rotate_left(32), 0xff51_afd7_ed55_8ccd, 0xc4ce_b9fe_1a85_ec53),
    )
}

/// The hash of a row of words whose first cell is (`x`, `y`): [`word_hash`] summed over its
/// live words.
fn row_hash(line: &[u64], x: i64, y: i64) -> (u64, u64) {
    let mut hash = (0u64, 0u64);
    for (i, &w) in line.iter().enumerate() {
        if w != 0 {
            let (h1, h2) = word_hash(w, x + 64 * i as i64, y);
            hash = (hash.0.wrapping_add(h1), hash.1.wrapping_add(h2));
        }
    }
    hash
}

/// Adds three bits: (sum, carry).
#[inline(always)]
fn full_add(a: u64, b: u64, c: u64) -> (u64, u64) {
    let ab = a ^ b;
    (ab ^ c, (a & b) | (c & ab))
}

impl Universe {
    /// An empty universe whose window holds (x, y) to (x + width, y + height) at least.
    pub fn empty(x: i64, y: i64, width: usize, height: usize) -> Universe {
        // Words start at multiples of 64 on the plane, in every universe: equal cells make
        // equal words, and so equal keys.
        let (x, width) = (x.div_euclid(64) * 64, width + x.rem_euclid(64) as usize);
        let words = width.div_ceil(64).max(1);
        let rows = height.max(1);
        Universe {
            x0: x,
            y0: y,
            words,
            rows,
            cells: vec![0; words * rows],
            before: vec![0; words * rows],
            spare: vec![0; words * rows],
            same: vec![false; rows],
            same_next: vec![false; rows],
            live_rows: [(1, 0); 3],
            edited: 0,
            bbox: Some(None),
            hashes: std::array::from_fn(|_| vec![(0, 0); rows]),
            columns: Vec::new(),
            generation: 0,
        }
    }

    /// A universe holding `cells`.
    pub fn of(cells: &[(i64, i64)]) -> Universe {
        let (left, top, right, bottom) = bounds(cells).unwrap_or((0, 0, 0, 0));
        let border = 32;
        let mut u = Universe::empty(
            left - border,
            top - border,
            (right - left + 1 + 2 * border) as usize,
            (bottom - top + 1 + 2 * border) as usize,
        );
        for &(x, y) in cells {
            u.set(x, y, true);
        }
        u
    }

    /// Whether (x, y) is alive.
    pub fn get(&self, x: i64, y: i64) -> bool {
        let (cx, cy) = (x - self.x0, y - self.y0);
        if cx < 0 || cy < 0 || cx >= 64 * self.words as i64 || cy >= self.rows as i64 {
            return false;
        }
        self.cells[cy as usize * self.words + (cx / 64) as usize] >> (cx % 64) & 1 != 0
    }

    /// Sets (x, y), growing the window to hold it.
    pub fn set(&mut self, x: i64, y: i64, alive: bool) {
        self.reach(x, y, x, y);
        let (cx, cy) = ((x - self.x0) as usize, (y - self.y0) as usize);
        let word = &mut self.cells[cy * self.words + cx / 64];
        let was = *word;
        if alive {
            *word |= 1 << (cx % 64);
        } else {
            *word &= !(1 << (cx % 64));
        }
        if *word != was {
            // No row is known to repeat any more: the generation before is not this one's.
            self.same.fill(false);
            self.edited = 2;
            self.bbox = None;
            let line = &self.cells[cy * self.words..(cy + 1) * self.words];
            self.hashes[0][cy] = row_hash(line, self.x0, self.y0 + cy as i64);
            let live = &mut self.live_rows[0];
            *live = if live.0 > live.1 {
                (cy, cy)
            } else {
                (live.0.min(cy), live.1.max(cy))
            };
        }
    }

    /// Grows the window until it holds the rectangle with [`MARGIN`] to spare.
    fn reach(&mut self, left: i64, top: i64, right: i64, bottom: i64) {
        let width = 64 * self.words as i64;
        let grow_left = left - MARGIN < self.x0;
        let grow_right = right + MARGIN >= self.x0 + width;
        let grow_up = top - MARGIN < self.y0;
        let grow_down = bottom + MARGIN >= self.y0 + self.rows as i64;
        if !(grow_left || grow_right || grow_up || grow_down) {
            return;
        }
        let words_left = if grow_left {
            ((self.x0 - (left - MARGIN)) as usize).div_ceil(64).max(1)
        } else {
            0
        };
        let words_right = if grow_right {
            ((right + MARGIN - (self.x0 + width) + 1) as usize)
                .div_ceil(64)
                .max(1)
        } else {
            0
        };
        let rows_up = if grow_up {
            ((self.y0 - (top - MARGIN)) as usize).max(GROWTH_ROWS)
        } else {
            0
        };
        let rows_down = if grow_down {
            ((bottom + MARGIN - (self.y0 + self.rows as i64) + 1) as usize).max(GROWTH_ROWS)
        } else {
            0
        };
        let (words, rows) = (
            self.words + words_left + words_right,
            self.rows + rows_up + rows_down,
        );
        let moved = |old: &[u64]| {
            let mut new = vec![0u64; words * rows];
            for r in 0..self.rows {
                let at = (r + rows_up) * words + words_left;
                new[at..at + self.words]
                    .copy_from_slice(&old[r * self.words..(r + 1) * self.words]);
            }
            new
        };
        self.cells = moved(&self.cells);
        self.before = moved(&self.before);
        self.spare = moved(&self.spare);
        let mut same = vec![false; rows];
        same[rows_up..rows_up + self.rows].copy_from_slice(&self.same);
        self.same = same;
        self.same_next = vec![false; rows];
        for hashes in &mut self.hashes {
            let mut moved = vec![(0, 0); rows];
            moved[rows_up..rows_up + self.rows].copy_from_slice(hashes);
            *hashes = moved;
        }
        for live in &mut self.live_rows {
            *live = (live.0 + rows_up, live.1 + rows_up);
        }
        self.x0 -= 64 * words_left as i64;
        self.y0 -= rows_up as i64;
        self.words = words;
        self.rows = rows;
    }

    /// Advances one generation; the window grows first where the pattern is near its edge.
    /// Only the rows round the live cells are looked at, and of those, rows whose
    /// neighbourhood repeats two generations on are copied.
    pub fn step(&mut self) {
        let Some((l, t, r, b)) = self.bounds() else {
            self.generation += 1;
            return;
        };
        self.reach(l - 1, t - 1, r + 1, b + 1);
        let words = self.words;
        let first_row = (t - 1 - self.y0) as usize;
        let last_row = (b + 1 - self.y0) as usize;
        // The words that may hold a live cell next; rows are copied, cleared and compared
        // whole, as the generations kept may hold cells anywhere in them.
        let copying = self.edited == 0;
        self.edited = self.edited.saturating_sub(1);
        let first_word = ((l - 1 - self.x0) / 64) as usize;
        let last_word = ((r + 1 - self.x0) / 64) as usize;
        // The buffer the next generation goes into held two generations ago: clear what it
        // held outside the rows written now.
        let (old_first, old_last) = self.live_rows[2];
        for row in old_first..=old_last {
            if row < first_row || row > last_row {
                self.spare[row * words..(row + 1) * words].fill(0);
                self.hashes[2][row] = (0, 0);
            }
        }
        let (cells, before, next) = (&self.cells, &self.before, &mut self.spare);
        let (same, same_next) = (&self.same, &mut self.same_next);
        let [_, before_hashes, next_hashes] = &mut self.hashes;
        let columns = &mut self.columns;
        columns.clear();
        columns.resize(last_word - first_word + 1, 0);
        let (mut top_live, mut bottom_live) = (usize::MAX, 0usize);
        for row in first_row..=last_row {
            let at = row * words;
            if copying && same[row - 1] && same[row] && same[row + 1] {
                next[at..at + words].copy_from_slice(&before[at..at + words]);
                next_hashes[row] = before_hashes[row];
                same_next[row] = true;
            } else {
                // Outside the words written, the row is dead next: it repeats there where it
                // was dead a generation ago too.
                let mut changed = 0;
                for w in (0..first_word).chain(last_word + 1..words) {
                    next[at + w] = 0;
                    changed |= before[at + w];
                }
                let (above, here, below) = (&cells[at - words..at], &cells[at..at + words], &cells[at + words..at + 2 * words]);
                for w in first_word..=last_word {
                    let side = |line: &[u64]| {
                        let m = line[w];
                        let west = if w > 0 { line[w - 1] >> 63 } else { 0 };
                        let east = if w + 1 < words { line[w + 1] << 63 } else { 0 };
                        ((m << 1) | west, m, (m >> 1) | east)
                    };
                    let (al, a, ar) = side(above);
                    let (bl, b, br) = side(here);
                    let (cl, c, cr) = side(below);
                    let (sa, ca) = full_add(al, a, ar);
                    let (sc, cc) = full_add(cl, c, cr);
                    let (sb, cb) = (bl ^ br, bl & br);
                    let (u0, u1) = full_add(sa, sb, sc);
                    let (v0, v1) = full_add(ca, cb, cc);
                    let bit1 = u1 ^ v0;
                    let bit2 = v1 ^ (u1 & v0);
                    let new = bit1 & !bit2 & (u0 | b);
                    next[at + w] = new;
                    changed |= new ^ before[at + w];
                }
                same_next[row] = changed == 0;
                next_hashes[row] = if changed == 0 {
                    before_hashes[row]
                } else {
                    row_hash(&next[at..at + words], self.x0, self.y0 + row as i64)
                };
            }
            let mut any = 0;
            for (c, &w) in columns.iter_mut().zip(&next[at + first_word..=at + last_word]) {
                *c |= w;
                any |= w;
            }
            if any != 0 {
                top_live = top_live.min(row);
                bottom_live = row;
            }
        }
        // The two rows either side of those written are dead next: the same as a generation
        // ago where they were dead then too (the next step looks no further: its rows are
        // within one of the live ones, all among those written now).
        for row in [first_row - 2, first_row - 1, last_row + 1, last_row + 2] {
            same_next[row] = before[row * words..(row + 1) * words]
                .iter()
                .all(|&w| w == 0);
        }
        self.bbox = Some(if top_live == usize::MAX {
            None
        } else {
            let first = columns.iter().position(|&w| w != 0).expect("a live row");
            let last = columns.iter().rposition(|&w| w != 0).expect("a live row");
            let left = 64 * (first_word + first) as i64 + columns[first].trailing_zeros() as i64;
            let right = 64 * (first_word + last) as i64 + 63 - columns[last].leading_zeros() as i64;
            Some((
                self.x0 + left,
                self.y0 + top_live as i64,
                self.x0 + right,
                self.y0 + bottom_live as i64,
            ))
        });
        // Now → a generation ago → two generations ago → now.
        std::mem::swap(&mut self.same, &mut self.same_next);
        std::mem::swap(&mut self.before, &mut self.spare);
        std::mem::swap(&mut self.cells, &mut self.before);
        self.hashes.rotate_right(1);
        self.live_rows = [(first_row, last_row), self.live_rows[0], self.live_rows[1]];
        self.generation += 1;
    }

    /// Whether the pattern is now what it was two generations ago, known without looking (no
    /// cell set by hand since): every row round the live ones repeats.
    pub fn repeats_in_two(&self) -> bool {
        let Some((_, t, _, b)) = self.bounds() else {
            return true;
        };
        self.edited == 0
            && self.generation >= 2
            && (t - 1 - self.y0..=b + 1 - self.y0).all(|row| self.same[row as usize])
    }

    /// Whether no cell is alive.
    pub fn is_empty(&self) -> bool {
        self.bounds().is_none()
    }

    /// The smallest rectangle of live cells: (left, top, right, bottom), inclusive.
    pub fn bounds(&self) -> Option<(i64, i64, i64, i64)> {
        if let Some(bbox) = self.bbox {
            return bbox;
        }
        self.scan_bounds()
    }

    fn scan_bounds(&self) -> Option<(i64, i64, i64, i64)> {
        let words = self.words;
        let top = (0..self.rows).find(|&r| {
            self.cells[r * words..(r + 1) * words]
                .iter()
                .any(|&w| w != 0)
        })?;
        let bottom = (0..self.rows).rev().find(|&r| {
            self.cells[r * words..(r + 1) * words]
                .iter()
                .any(|&w| w != 0)
        })?;
        let mut columns = vec![0u64; words];
        for r in top..=bottom {
            for (c, &w) in columns
                .iter_mut()
                .zip(&self.cells[r * words..(r + 1) * words])
            {
                *c |= w;
            }
        }
        let first = columns.iter().position(|&w| w != 0)?;
        let last = columns.iter().rposition(|&w| w != 0)?;
        let left = 64 * first as i64 + columns[first].trailing_zeros() as i64;
        let right = 64 * last as i64 + 63 - columns[last].leading_zeros() as i64;
        Some((
            self.x0 + left,
            self.y0 + top as i64,
            self.x0 + right,
            self.y0 + bottom as i64,
        ))
    }

    /// The clusters (cells joined within √5) of at most `most` cells that hold a live cell on
    /// an edge of the bounding box: where escaping ships are.
    pub fn edge_clusters(&self, most: usize) -> Vec<Vec<(i64, i64)>> {
        let Some((l, t, r, b)) = self.bounds() else {
            return Vec::new();
        };
        let mut seen: rustc_hash::FxHashSet<(i64, i64)> = rustc_hash::FxHashSet::default();
        let mut out = Vec::new();
        let edges = (l..=r)
            .flat_map(|x| [(x, t), (x, b)])
            .chain((t..=b).flat_map(|y| [(l, y), (r, y)]));
        for start in edges {
            if !self.get(start.0, start.1) || !seen.insert(start) {
                continue;
            }
            let mut stack = vec![start];
            let mut cluster = Vec::new();
            while let Some((x, y)) = stack.pop() {
                cluster.push((x, y));
                if cluster.len() > most {
                    break;
                }
                for dy in -2i64..=2 {
                    for dx in -2i64..=2 {
                        let c = (x + dx, y + dy);
                        if dx * dx + dy * dy <= 5 && self.get(c.0, c.1) && seen.insert(c) {
                            stack.push(c);
                        }
                    }
                }
            }
            if cluster.len() <= most {
                out.push(cluster);
            }
        }
        out
    }

    /// Every live cell.
    pub fn cells(&self) -> Vec<(i64, i64)> {
        let mut out = Vec::new();
        for r in 0..self.rows {
            for w in 0..self.words {
                let mut bits = self.cells[r * self.words + w];
                while bits != 0 {
                    let b = bits.trailing_zeros() as i64;
                    out.push((self.x0 + 64 * w as i64 + b, self.y0 + r as i64));
                    bits &= bits - 1;
                }
            }
        }
        out
    }

    /// A key of the whole state where it lies: equal states have equal keys, and different
    /// ones equal keys with a chance of about 2^-128.
    pub fn key(&self) -> (i64, i64, i64, i64, u64, u64) {
        let Some((l, t, r, b)) = self.bounds() else {
            return (0, 0, 0, 0, 0, 0);
        };
        let (first, last) = ((t - self.y0) as usize, (b - self.y0) as usize);
        let (h1, h2) = self.hashes[0][first..=last]
            .iter()
            .fold((0u64, 0u64), |(a1, a2), &(h1, h2)| {
                (a1.wrapping_add(h1), a2.wrapping_add(h2))
            });
        (l, t, r, b, h1, h2)
    }
}

/// The smallest rectangle of `cells`: (left, top, right, bottom), inclusive.
pub fn bounds(cells: &[(i64, i64)]) -> Option<(i64, i64, i64, i64)> {
    let &(x, y) = cells.first()?;
    let mut b = (x, y, x, y);
    for &(x, y) in cells {
        b = (b.0.min(x), b.1.min(y), b.2.max(x), b.3.max(y));
    }
    Some(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::{BTreeSet, HashMap};

    /// B3/S23 on a set of cells, cell by cell.
    fn naive(cells: &BTreeSet<(i64, i64)>) -> BTreeSet<(i64, i64)> {
        let mut counts: HashMap<(i64, i64), u32> = HashMap::new();
        for &(x, y) in cells {
            for dy in -1..=1 {
                for dx in -1..=1 {
                    if (dx, dy) != (0, 0) {
                        *counts.entry((x + dx, y + dy)).or_default() += 1;
                    }
                }
            }
        }
        counts
            .into_iter()
            .filter(|&(c, n)| n == 3 || (n == 2 && cells.contains(&c)))
            .map(|(c, _)| c)
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn steps_as_life_does(
            side in 1usize..40,
            seed in any::<u64>(),
            edits in proptest::collection::vec((0usize..300, -50i64..90, -50i64..90, any::<bool>()), 0..6),
        ) {
            let mut state = seed | 1;
            let mut random = move || { state ^= state << 13; state ^= state >> 7; state ^= state << 17; state };
            let mut cells = BTreeSet::new();
            for y in 0..side as i64 {
                for x in 0..side as i64 {
                    if random() % 2 == 0 {
                        cells.insert((x, y));
                    }
                }
            }
            let start: Vec<(i64, i64)> = cells.iter().copied().collect();
            let mut u = Universe::of(&start);
            for generation in 0..300 {
                for &(at, x, y, alive) in &edits {
                    if at == generation {
                        u.set(x, y, alive);
                        if alive { cells.insert((x, y)); } else { cells.remove(&(x, y)); }
                    }
                }
                let ours: BTreeSet<(i64, i64)> = u.cells().into_iter().collect();
                prop_assert_eq!(&ours, &cells, "generation {}", generation);
                prop_assert_eq!(u.bounds(), bounds(&start_of(&cells)));
                // The key kept up step by step is the key of the same cells set afresh.
                prop_assert_eq!(u.key(), Universe::of(&start_of(&cells)).key());
                u.step();
                cells = naive(&cells);
            }
        }
    }

    /// One or two cells in a strip across three words, with two more fixing the bounding box:
    /// every such pattern has its own key (a sum of word hashes that mixed bits only upwards
    /// gave {(62, 0), (62, 2)} and {(63, 0), (63, 2)} one key).
    #[test]
    fn keys_of_small_patterns_differ() {
        let corners = [(30, -2), (210, 5)];
        let places: Vec<(i64, i64)> = (0..3).flat_map(|y| (40..200).map(move |x| (x, y))).collect();
        let mut keys = std::collections::HashSet::new();
        for (i, &a) in places.iter().enumerate() {
            assert!(keys.insert(Universe::of(&[corners[0], corners[1], a]).key()));
            for &b in &places[i + 1..] {
                let key = Universe::of(&[corners[0], corners[1], a, b]).key();
                assert!(keys.insert(key), "{a:?} {b:?}");
            }
        }
    }

    fn start_of(cells: &BTreeSet<(i64, i64)>) -> Vec<(i64, i64)> {
        cells.iter().copied().collect()
    }
}
