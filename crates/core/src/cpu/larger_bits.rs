//! Larger than Life's square neighbourhood under a rule of two states, 64 cells a word: the
//! path `cpu-states` takes for the family's commonest rules (`R5,C0,M1,S34..58,B34..45,NM`
//! and the like) on a torus or a bounded plane.
//!
//! # Layout
//!
//! A row is `ghost` words, `words` words, `ghost` words (`words` is ⌈W/64⌉ rounded up to a
//! whole number of [`LANES`]; `ghost` is ⌊r/64⌋ + 1): cell x at bit x % 64 of word
//! `ghost + x / 64`. Every bit of a cell outside 0..W (the ghost words, the rounding and the
//! tail of the last word) holds the cell a torus wraps round to, or zero on a bounded plane,
//! and is made so again after each generation ([`Edges`]). A row's counts therefore read any
//! cell within the range of one of its cells without a test.
//!
//! # Algorithm
//!
//! Bit slicing, as in `cpu-bitsliced`: each bit of a word is a cell, and a number per cell is
//! kept as bit planes (plane i holds bit i of each cell's number), [`LANES`] words at a time.
//! Down a band of rows, for each column of `LANES` words:
//!
//! 1. A row's horizontal count (the live cells among the 2r + 1 of the row centred on each
//!    cell): the row read at each offset −r..=r (two neighbouring words funnelled into one)
//!    and added into `HB` planes by Harley and Seal's carry-save adders (four cells to three
//!    full adders and a carry), O(r) operations a word.
//! 2. The square's count, kept in `CB` planes as a running sum: the row entering the window
//!    adds its horizontal count, the row leaving takes it away (kept in a ring of 2r + 1), so
//!    a row costs two additions at any range.
//! 3. The next state: the count compared with the rule's bounds, one three-input logic
//!    operation a plane a bound.
//!
//! The planes' O(r) horizontal count and log₂((2r + 1)²) planes make a cell dearer as the
//! range grows (range 100 cost 6.9× range 5). From range 11 to 127, where the CPU has
//! AVX-512 with VBMI, BITALG and BMI2, the counts are integers instead ([`sums`]): a row's
//! from its prefix counts, the square's a 16-bit running sum, the same cost a cell at every
//! range.

#[cfg(target_arch = "x86_64")]
mod sums;

use rayon::prelude::*;

use super::bitsliced::Isa;
use super::vector::{Simd, Vector, VectorKernel};
use crate::error::Result;
use crate::grid::{last_word_mask, words_per_row, Grid};
use crate::memory;
use crate::rule::Larger;

/// The largest range taken here. A row's horizontal counts cost O(r) operations a word, the
/// byte path's O(log r) passes a row: on a 2048² torus (2 threads, AVX-512) bits were 1.4× as
/// fast at range 200, as fast at 300 and 0.9× at 500; Golly's `R500-alien-bug` ran 1.4× slower
/// in bits.
pub const MOST_RANGE: u32 = 300;

/// Words the rows are rounded up to: a whole number of the widest vectors (AVX-512's 512
/// bits).
const LANES: usize = 8;

/// A two-state square Larger than Life world in the layout above.
pub struct LargerBits {
    width: usize,
    height: usize,
    wraps: bool,
    range: usize,
    /// The inclusive bounds of the whole square's count (the cell itself included) within
    /// which an empty cell is born and a live one survives.
    birth: (u32, u32),
    survive: (u32, u32),
    ghost: usize,
    words: usize,
    stride: usize,
    edges: Edges,
    simd: Simd,
    /// Whether the counts are integers ([`sums`], AVX-512) rather than bit planes.
    in_sums: bool,
    cells: Vec<u64>,
    next: Vec<u64>,
}

impl LargerBits {
    /// Whether `rule` of `states` states takes this path: two states, the square, and a
    /// range up to [`MOST_RANGE`].
    pub fn takes(rule: &Larger, states: u32) -> bool {
        states == 2 && rule.shape == crate::rule::larger::Shape::Moore && rule.range <= MOST_RANGE
    }

    /// Whether a world at `range` on `isa` counts in integers ([`sums`]): on AVX-512, from the
    /// range where they beat the bit planes.
    fn counts_in_sums(isa: Isa, range: u32) -> bool {
        #[cfg(target_arch = "x86_64")]
        return isa == Isa::Avx512
            && sums::is_here()
            && (sums::FEWEST_RANGE..=sums::MOST_RANGE).contains(&range);
        #[cfg(not(target_arch = "x86_64"))]
        false
    }

    /// How the counts are kept: in bit planes, or in bytes and 16-bit words.
    pub fn counts(&self) -> &'static str {
        match self.in_sums {
            true => "in bytes and words",
            false => "in bit planes",
        }
    }

    /// The words of a row of a world `width` wide at `range`: (ghost words a side, words
    /// inside, all).
    fn row_words(width: usize, range: u32) -> (usize, usize, usize) {
        let ghost = range as usize / 64 + 1;
        let words = words_per_row(width).next_multiple_of(LANES);
        (ghost, words, words + 2 * ghost)
    }

    /// The bytes of the two arrays of a `width` × `height` world at `range`.
    pub fn bytes(width: usize, height: usize, range: u32) -> u64 {
        let (_, _, stride) = LargerBits::row_words(width, range);
        (16 * stride as u64).saturating_mul(height as u64)
    }

    /// `grid` (two states) under `rule`, on a torus where `wraps`, else a bounded plane.
    pub fn load(grid: &Grid, rule: &Larger, wraps: bool, isa: Isa) -> Result<LargerBits> {
        let (width, height) = (grid.width(), grid.height());
        let range = rule.range as usize;
        let (ghost, words, stride) = LargerBits::row_words(width, rule.range);
        let len = (stride * height) as u64;
        let what = format!("a {width}x{height} grid on cpu-states (two bit arrays)");
        memory::check(LargerBits::bytes(width, height, rule.range), &what)?;
        let mut cells = memory::zeroed_vec::<u64>(len, &what)?;
        let next = memory::zeroed_vec::<u64>(len, &what)?;
        // Without the cell itself in a live cell's count, its bounds over the whole square
        // are one more.
        let lift = |(low, high): (u32, u32)| {
            let m = u32::from(!rule.middle);
            (low.saturating_add(m), high.saturating_add(m))
        };
        let nw = words_per_row(width);
        let edges = Edges::new(width, ghost, stride, wraps);
        for (y, row) in cells.chunks_mut(stride).enumerate() {
            row[ghost..][..nw].copy_from_slice(grid.row(y));
            edges.fill(row);
        }
        Ok(LargerBits {
            width,
            height,
            wraps,
            range,
            birth: rule.birth,
            survive: lift(rule.survive),
            ghost,
            words,
            stride,
            edges,
            simd: Simd::new(isa),
            in_sums: LargerBits::counts_in_sums(isa, rule.range),
            cells,
            next,
        })
    }

    /// The world as a grid.
    pub fn to_grid(&self) -> Result<Grid> {
        let mut grid = Grid::new(self.width, self.height)?;
        let nw = words_per_row(self.width);
        let mask = last_word_mask(self.width);
        for (y, row) in self.cells.chunks(self.stride).enumerate() {
            let out = grid.row_mut(y);
            out.copy_from_slice(&row[self.ghost..][..nw]);
            out[nw - 1] &= mask;
        }
        Ok(grid)
    }

    /// Live cells.
    pub fn population(&self) -> u64 {
        let nw = words_per_row(self.width);
        let mask = last_word_mask(self.width);
        self.cells
            .par_chunks(self.stride)
            .map(|row| {
                let row = &row[self.ghost..][..nw];
                let full: u64 = row[..nw - 1].iter().map(|w| w.count_ones() as u64).sum();
                full + (row[nw - 1] & mask).count_ones() as u64
            })
            .sum()
    }

    /// One generation.
    pub fn generation(&mut self) {
        let (h, r) = (self.height, self.range);
        let threads = rayon::current_num_threads();
        // A band starts with 2r rows of counts: cut no thinner than 8r rows where it can be,
        // several bands a thread to balance the load.
        let bands = (1..=4)
            .rev()
            .find(|k| h.div_ceil(threads * k) >= 8 * r)
            .unwrap_or(1);
        let rows = h.div_ceil(threads * bands).max(16).min(h);
        // Planes for a row's counts (to 2r + 1) and for the square's (to (2r + 1)²).
        let bits = |n: usize| n.ilog2() + 1;
        let planes = (bits(2 * r + 1), bits((2 * r + 1) * (2 * r + 1)));
        let (simd, stride, in_sums) = (self.simd, self.stride, self.in_sums);
        let mut next = std::mem::take(&mut self.next);
        let frame = Frame { world: self };
        next.par_chunks_mut(rows * stride)
            .enumerate()
            .for_each(|(index, out)| {
                let top = index * rows;
                #[cfg(target_arch = "x86_64")]
                if in_sums {
                    // SAFETY: `in_sums` is only set where the CPU has AVX-512 (F and BW, as
                    // `Isa::is_here` checks) and VBMI, BITALG and BMI2 (`sums::is_here`), and
                    // the range is at most `sums::MOST_RANGE`.
                    unsafe { sums::band(frame, out, top) };
                    frame.fill_edges(out);
                    return;
                }
                macro_rules! planes {
                    ($(($hb:literal, $cb:literal)),*) => {
                        match planes {
                            $(($hb, $cb) => simd.run(Band::<$hb, $cb> { frame, out, top }),)*
                            _ => unreachable!("ranges 1 to MOST_RANGE"),
                        }
                    };
                }
                planes!(
                    (2, 4),
                    (3, 5),
                    (3, 6),
                    (4, 7),
                    (4, 8),
                    (5, 9),
                    (5, 10),
                    (6, 11),
                    (6, 12),
                    (7, 13),
                    (7, 14),
                    (8, 15),
                    (8, 16),
                    (9, 17),
                    (9, 18),
                    (10, 19)
                );
            });
        self.next = std::mem::replace(&mut self.cells, next);
    }
}

/// What a band reads.
#[derive(Clone, Copy)]
struct Frame<'a> {
    world: &'a LargerBits,
}

impl Frame<'_> {
    /// Row `y` (any integer) with its ghost words: wrapped on a torus, `None` outside a
    /// bounded plane.
    #[inline(always)]
    fn row(&self, y: isize) -> Option<&[u64]> {
        let w = self.world;
        let h = w.height as isize;
        let y = match (0..h).contains(&y) {
            true => y,
            false if w.wraps => y.rem_euclid(h),
            false => return None,
        };
        Some(&w.cells[y as usize * w.stride..][..w.stride])
    }

    /// Sets the bits outside the grid of each row of a band's `out` (see [`Edges`]).
    fn fill_edges(&self, out: &mut [u64]) {
        for row in out.chunks_mut(self.world.stride) {
            self.world.edges.fill(row);
        }
    }

    /// The horizontal counts (`HB` planes) of the cells of row `y` in the words `at..`.
    #[inline(always)]
    fn counts<V: Vector, const HB: usize>(&self, y: isize, at: usize) -> [V; HB] {
        let mut count = [V::splat(0); HB];
        let Some(row) = self.row(y) else {
            return count;
        };
        let r = self.world.range as isize;
        // Harley and Seal's carry-save adding: four cells at a time into the ones and twos
        // planes by three full adders, one carry of weight 4 going on up; the first one or
        // three cells start the planes (2r + 1 is odd).
        count[0] = shifted::<V>(row, at, -r);
        let mut d = 1 - r;
        if r % 2 == 1 {
            (count[0], count[1]) = count[0].full_add(shifted(row, at, d), shifted(row, at, d + 1));
            d += 2;
        }
        while d < r {
            let (ones, low) = count[0].full_add(shifted(row, at, d), shifted(row, at, d + 1));
            let (ones, high) = ones.full_add(shifted(row, at, d + 2), shifted(row, at, d + 3));
            let (twos, fours) = count[1].full_add(low, high);
            (count[0], count[1]) = (ones, twos);
            carry_into(&mut count, 2, fours);
            d += 4;
        }
        count
    }
}

/// The 64 cells from cell 64·k + `d` of `row`, for each word k of `at..at + V::WORDS` (`d`
/// may be negative: two neighbouring words funnelled into one).
#[inline(always)]
fn shifted<V: Vector>(row: &[u64], at: usize, d: isize) -> V {
    let first = (at as isize + d.div_euclid(64)) as usize;
    let words = &row[first..][..V::WORDS + 1];
    V::load(words).funnel(V::load(&words[1..]), (d & 63) as u32)
}

/// Adds the one-bit numbers `bit`, of weight 2^`from`, into the number whose planes are
/// `planes`.
#[inline(always)]
fn carry_into<V: Vector, const N: usize>(planes: &mut [V; N], from: usize, mut bit: V) {
    for plane in &mut planes[from..] {
        (*plane, bit) = (plane.xor(bit), plane.and(bit));
    }
}

/// `total += part` (`part` no wider than `total`; wrapping).
#[inline(always)]
fn add<V: Vector, const HB: usize, const CB: usize>(total: &mut [V; CB], part: &[V; HB]) {
    let mut carry = V::splat(0);
    for (t, p) in total.iter_mut().zip(part) {
        (*t, carry) = (*t).full_add(*p, carry);
    }
    carry_into(total, HB, carry);
}

/// `total -= part`, as `total + !part + 1` (wrapping).
#[inline(always)]
fn subtract<V: Vector, const HB: usize, const CB: usize>(total: &mut [V; CB], part: &[V; HB]) {
    let ones = V::splat(!0);
    let mut carry = ones;
    for (i, t) in total.iter_mut().enumerate() {
        let p = part.get(i).map_or(ones, |p| p.xor(ones));
        (*t, carry) = (*t).full_add(p, carry);
    }
}

/// The bits of `k` (clamped to the largest number `CB` planes hold, which no count reaches)
/// as vectors of all ones or all zeros, lowest first: a bound [`at_least`] compares with.
#[inline(always)]
fn threshold<V: Vector, const CB: usize>(k: u32) -> [V; CB] {
    let k = k.min((1 << CB) - 1);
    std::array::from_fn(|i| V::splat(if k >> i & 1 == 1 { !0 } else { 0 }))
}

/// The cells whose count (`CB` planes) is at least the number whose bits are `k`: from the
/// lowest plane up, "at least k's low bits" is kept, a plane where k has a 1 taking an AND and
/// one where it has a 0 an OR (one three-input operation on AVX-512).
#[inline(always)]
fn at_least<V: Vector, const CB: usize>(count: &[V; CB], k: &[V; CB]) -> V {
    let mut at_least = V::splat(!0);
    for (c, bit) in count.iter().zip(k) {
        let g = at_least;
        at_least = c.and(g).or(bit.not().and(c.or(g)));
    }
    at_least
}

/// Rows `top..top + out.len() / stride` of one generation, with `HB` planes for a row's
/// horizontal counts and `CB` for the square's.
struct Band<'a, const HB: usize, const CB: usize> {
    frame: Frame<'a>,
    out: &'a mut [u64],
    top: usize,
}

impl<const HB: usize, const CB: usize> VectorKernel for Band<'_, HB, CB> {
    #[inline(always)]
    fn run<V: Vector>(self) {
        band_in::<V, HB, CB>(self.frame, self.out, self.top)
    }
}

/// [`Band`] in vectors `V`.
#[inline(always)]
fn band_in<V: Vector, const HB: usize, const CB: usize>(frame: Frame, out: &mut [u64], top: usize) {
    let world = frame.world;
    let (r, stride, ghost) = (world.range as isize, world.stride, world.ghost);
    let span = 2 * r as usize + 1;
    let bound = |(low, high): (u32, u32)| {
        (
            threshold::<V, CB>(low),
            threshold::<V, CB>(high.saturating_add(1)),
        )
    };
    let (birth, survive) = (bound(world.birth), bound(world.survive));
    // Both bounds often start at the same count: one comparison then serves both.
    let shared = world.birth.0 == world.survive.0;
    let first = top as isize - r;
    // The ring holds the horizontal counts of the rows y − r..=y + r at slots (row − first)
    // mod 2r + 1: a row enters at `slot` and leaves from the slot after it.
    let mut ring = vec![[V::splat(0); HB]; span];
    for at in (ghost..ghost + world.words).step_by(V::WORDS) {
        let mut total = [V::splat(0); CB];
        for (y, kept) in (first..first + 2 * r).zip(&mut ring) {
            let counts = frame.counts::<V, HB>(y, at);
            add(&mut total, &counts);
            *kept = counts;
        }
        let mut slot = span - 1;
        for (k, out) in out.chunks_mut(stride).enumerate() {
            let y = top as isize + k as isize;
            let counts = frame.counts::<V, HB>(y + r, at);
            add(&mut total, &counts);
            ring[slot] = counts;
            slot = if slot + 1 == span { 0 } else { slot + 1 };
            let row = frame.row(y).expect("a band's rows are inside the grid");
            let alive = V::load(&row[at..]);
            let born_from = at_least(&total, &birth.0);
            let lives_from = match shared {
                true => born_from,
                false => at_least(&total, &survive.0),
            };
            let born = born_from.and(at_least(&total, &birth.1).not());
            let lives = lives_from.and(at_least(&total, &survive.1).not());
            alive
                .and(lives)
                .or(alive.not().and(born))
                .store(&mut out[at..]);
            subtract(&mut total, &ring[slot]);
        }
    }
    frame.fill_edges(out);
}

/// How the bits of a row's cells outside 0..W are set (see the module documentation): the
/// cells a torus wraps round to, or zero on a bounded plane.
struct Edges {
    width: usize,
    ghost: usize,
    wraps: bool,
    /// On a torus, each whole word to set (its index in the row) and the first cell it wraps
    /// round to; the same for every row.
    wrap: Vec<(usize, usize)>,
}

impl Edges {
    fn new(width: usize, ghost: usize, stride: usize, wraps: bool) -> Edges {
        let nw = words_per_row(width);
        let first = |k: usize| (64 * k as isize - 64 * ghost as isize).rem_euclid(width as isize);
        let wrap = match wraps {
            true => (0..ghost)
                .chain(ghost + nw..stride)
                .map(|k| (k, first(k) as usize))
                .collect(),
            false => Vec::new(),
        };
        Edges {
            width,
            ghost,
            wraps,
            wrap,
        }
    }

    /// Sets the bits of `row`'s cells outside 0..W.
    fn fill(&self, row: &mut [u64]) {
        let (width, ghost) = (self.width, self.ghost);
        let nw = words_per_row(width);
        let last = ghost + nw - 1;
        if !self.wraps {
            row[..ghost].fill(0);
            row[last] &= last_word_mask(width);
            row[last + 1..].fill(0);
            return;
        }
        let tail = width % 64;
        if tail != 0 {
            let end = wrapped(&row[ghost..=last], width, 0) << tail;
            row[last] = (row[last] & last_word_mask(width)) | end;
        }
        for &(k, x) in &self.wrap {
            row[k] = wrapped(&row[ghost..=last], width, x);
        }
    }
}

/// The 64 cells from cell `x` (in 0..`width`) of a row's words `inside`, round the torus.
fn wrapped(inside: &[u64], width: usize, x: usize) -> u64 {
    let (i, s) = (x / 64, x % 64);
    if x + 64 <= width {
        // No wrap: one word, or two funnelled (the second then holds cells inside).
        return match s {
            0 => inside[i],
            _ => (inside[i] >> s) | (inside[i + 1] << (64 - s)),
        };
    }
    let (mut word, mut filled, mut x) = (0u64, 0, x);
    while filled < 64 {
        let n = (64 - filled).min(width - x);
        let (i, s) = (x / 64, x % 64);
        let mut bits = inside[i] >> s;
        if s > 0 && i + 1 < inside.len() {
            bits |= inside[i + 1] << (64 - s);
        }
        if n < 64 {
            bits &= (1 << n) - 1;
        }
        word |= bits << filled;
        filled += n;
        x = if x + n == width { 0 } else { x + n };
    }
    word
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn wrapped_words_repeat_a_narrow_row() {
        // A row of 3 cells, 1 0 1: from cell 1 the cells are 0 1 1 0 1 1 0 …
        let word = wrapped(&[0b101], 3, 1);
        for i in 0..64 {
            assert_eq!(word >> i & 1, u64::from((i + 1) % 3 != 1), "cell {i}");
        }
    }

    #[test]
    fn every_instruction_set_gives_the_same_generations() {
        // The engine tests compare each instruction set's default with the oracle; this
        // compares AVX-512 with and without VBMI2 too (and every other path), at ranges of
        // one and of two ghost words a side, on a torus and a plane.
        // Where the CPU can, the counts in integers too, at ranges 70 and 127 (the most they
        // take, in a soup so dense that some rows' counts reach 255 and squares' 64,000), and
        // on rows wide enough to be cut into strips (2,048 cells a strip at range 127).
        for (text, wraps, density, width) in [
            ("r7,c0,m0,s60..120,b70..110,nm", true, 0.5, 300),
            ("r70,c0,m1,s5000..11000,b6000..9000,nm", false, 0.5, 300),
            ("r70,c0,m1,s5000..11000,b6000..9000,nm", true, 0.5, 300),
            ("r127,c0,m1,s20000..65025,b25000..35000,nm", true, 0.99, 300),
            (
                "r127,c0,m1,s20000..65025,b32400..32600,nm",
                false,
                0.5,
                4500,
            ),
            ("r127,c0,m1,s20000..65025,b32400..32600,nm", true, 0.5, 4500),
        ] {
            let (rule, _) = Larger::parse(text).unwrap().unwrap();
            let grid = crate::seed::density_soup(width, 300, density, 7).unwrap();
            let mut runs = Vec::new();
            for isa in Isa::available() {
                for (funnel, in_sums) in [(false, false), (true, false), (false, true)] {
                    let mut world = LargerBits::load(&grid, &rule, wraps, isa).unwrap();
                    if in_sums && !world.in_sums || funnel && !world.simd.funnel() {
                        continue;
                    }
                    world.in_sums = in_sums;
                    world.simd = match funnel {
                        true => world.simd,
                        false => world.simd.without_funnel(),
                    };
                    (0..4).for_each(|_| world.generation());
                    runs.push((isa, funnel, in_sums, world.to_grid().unwrap()));
                }
            }
            let (.., first) = &runs[0];
            assert!(first.population() > 0, "{text}");
            for (isa, funnel, in_sums, grid) in &runs {
                assert_eq!(
                    first.first_difference(grid),
                    None,
                    "{text} {isa:?} funnel {funnel} integers {in_sums}"
                );
            }
        }
    }

    #[test]
    fn counts_compare_with_their_bounds() {
        // Numbers 0..16 in 4 planes, one per bit position of the first word.
        let mut count = [0u64; 4];
        for n in 0..16u64 {
            for (p, plane) in count.iter_mut().enumerate() {
                *plane |= (n >> p & 1) << n;
            }
        }
        for k in 0..20 {
            let at = at_least(&count, &threshold::<u64, 4>(k));
            for n in 0..15u32 {
                assert_eq!(at >> n & 1 == 1, n >= k, "{n} >= {k}");
            }
        }
    }
}
