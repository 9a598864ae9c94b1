//! Random soups: glibc's `rand() % 2` exactly, and a fast reproducible density fill.

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::grid::{Grid, WORD_BITS};

/// glibc's `random()`/`rand()` with its default state (TYPE_3: an additive feedback generator
/// `r[i] = r[i-31] + r[i-3]` over 32-bit words, seeded by a Park–Miller sequence and warmed up
/// by 310 discarded outputs). `GlibcRand::new(s)` followed by `next()` gives exactly what
/// `srand(s)` followed by `rand()` gives in C with glibc.
#[derive(Clone)]
pub struct GlibcRand {
    state: [i32; 31],
    front: usize,
    rear: usize,
}

impl GlibcRand {
    /// The generator after `srand(seed)`.
    pub fn new(seed: u32) -> GlibcRand {
        let mut state = [0i32; 31];
        // glibc replaces a zero seed by 1, so srand(0) and srand(1) agree.
        let seed = if seed == 0 { 1 } else { seed };
        state[0] = seed as i32;
        let mut word = state[0];
        for slot in state.iter_mut().skip(1) {
            // state[i] = 16807 * state[i-1] % 2147483647, computed as glibc does (Schrage's
            // method in signed arithmetic), including its treatment of "negative" seeds.
            let hi = word as i64 / 127_773;
            let lo = word as i64 % 127_773;
            word = (16_807 * lo - 2_836 * hi) as i32;
            if word < 0 {
                word += 2_147_483_647;
            }
            *slot = word;
        }
        let mut rand = GlibcRand {
            state,
            front: 3,
            rear: 0,
        };
        for _ in 0..310 {
            rand.next();
        }
        rand
    }

    /// The next `rand()` value, in `0..=RAND_MAX` (2³¹ − 1).
    #[inline]
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u32 {
        let value = (self.state[self.front] as u32).wrapping_add(self.state[self.rear] as u32);
        self.state[self.front] = value as i32;
        self.front = if self.front == 30 { 0 } else { self.front + 1 };
        self.rear = if self.rear == 30 { 0 } else { self.rear + 1 };
        value >> 1
    }
}

/// A W×H soup where cell `(x, y)` is `rand() % 2` of the `(y·W + x)`-th call after
/// `srand(seed)`: the initial state of the C programs of the OLCF tutorial and Kurnosov's seminar (docs/lineage.md).
pub fn glibc_soup(width: usize, height: usize, seed: u32) -> Result<Grid> {
    crate::grid::check_fits(width, height)?;
    let rows = crate::memory::indices(height, "the rows of a soup")?;
    glibc_rows(width, height, seed, &rows)
}

/// Rows `rows` (in that order, repeats allowed) of [`glibc_soup`]`(width, height, seed)`,
/// without the others: the generator still runs through every cell up to the last row asked
/// for, but only these rows are kept.
pub fn glibc_rows(width: usize, height: usize, seed: u32, rows: &[usize]) -> Result<Grid> {
    crate::grid::check_size(width, height)?;
    let mut grid = Grid::new(width, rows.len())?;
    let mut wanted: Vec<(usize, usize)> = rows.iter().enumerate().map(|(i, &y)| (y, i)).collect();
    wanted.sort_unstable();
    assert!(
        wanted.last().is_none_or(|&(y, _)| y < height),
        "row beyond the grid"
    );
    let mut rand = GlibcRand::new(seed);
    let mut row = vec![0u64; grid.words_per_row()];
    let mut next = wanted.iter().peekable();
    for y in 0..wanted.last().map_or(0, |&(y, _)| y + 1) {
        for (i, word) in row.iter_mut().enumerate() {
            let cells = (width - i * WORD_BITS).min(WORD_BITS);
            let mut bits = 0u64;
            for b in 0..cells {
                bits |= ((rand.next() & 1) as u64) << b;
            }
            *word = bits;
        }
        while let Some(&&(_, at)) = next.peek().filter(|&&&(wy, _)| wy == y) {
            grid.row_mut(at).copy_from_slice(&row);
            next.next();
        }
    }
    Ok(grid)
}

/// SplitMix64: a tiny, fast, well-mixed generator, used here to seed per-row streams.
#[derive(Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    /// The next 64 random bits.
    #[inline]
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// Checks that a density is a probability.
pub fn check_density(density: f64) -> Result<()> {
    if !(0.0..=1.0).contains(&density) {
        return Err(Error::Invalid(format!(
            "density {density} is not between 0 and 1"
        )));
    }
    Ok(())
}

/// A W×H soup where each cell is alive with probability `density`, reproducible from `seed`
/// (each row draws from its own SplitMix64 stream, so rows fill in parallel).
pub fn density_soup(width: usize, height: usize, density: f64, seed: u64) -> Result<Grid> {
    crate::grid::check_fits(width, height)?;
    let rows = crate::memory::indices(height, "the rows of a soup")?;
    density_rows(width, density, seed, &rows)
}

/// A W×H soup of a Generations rule's `states` cell states (3 or more), reproducible from
/// `seed` (for tests and benchmarks): about half the cells dead, a quarter alive and a quarter
/// dying, their states drawn evenly from 2 to `states` − 1.
pub fn states_soup(width: usize, height: usize, states: u32, seed: u64) -> Result<Grid> {
    let mut grid = Grid::with_states(width, height, states)?;
    if states < 3 {
        return Err(Error::Invalid(format!(
            "a soup of dying states needs 3 states or more, not {states}"
        )));
    }
    let mut rng = SplitMix64::new(seed);
    for y in 0..height {
        for x in 0..width {
            let draw = rng.next();
            let state = match draw % 4 {
                0 | 1 => 0,
                2 => 1,
                _ => 2 + (draw >> 8) as u32 % (states - 2),
            };
            grid.set_state(x, y, state);
        }
    }
    Ok(grid)
}

/// Rows `rows` (in that order, repeats allowed) of a [`density_soup`] of this width, density
/// and seed, of any height above them.
pub fn density_rows(width: usize, density: f64, seed: u64, rows: &[usize]) -> Result<Grid> {
    check_density(density)?;
    let mut grid = Grid::new(width, rows.len())?;
    let wpr = grid.words_per_row();
    let mask = grid.last_word_mask();
    // A cell is alive when a 32-bit draw is below the threshold; 2³² means always.
    let threshold = (density * 4_294_967_296.0).round() as u64;
    grid.words_mut()
        .par_chunks_mut(wpr)
        .zip(rows)
        .for_each(|(row, &y)| {
            let mut rng = SplitMix64::new(seed ^ (y as u64).wrapping_mul(0xD1B5_4A32_D192_ED03));
            for word in row.iter_mut() {
                let mut bits = 0u64;
                for pair in 0..WORD_BITS / 2 {
                    let r = rng.next();
                    bits |= (((r & 0xFFFF_FFFF) < threshold) as u64) << (2 * pair);
                    bits |= (((r >> 32) < threshold) as u64) << (2 * pair + 1);
                }
                *word = bits;
            }
            row[wpr - 1] &= mask;
        });
    Ok(grid)
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn matches_glibc_rand() {
        // First outputs of glibc's rand() after srand(1) (and srand(0), the same sequence).
        let expected = [
            1_804_289_383u32,
            846_930_886,
            1_681_692_777,
            1_714_636_915,
            1_957_747_793,
        ];
        for seed in [0, 1] {
            let mut r = GlibcRand::new(seed);
            let got: Vec<u32> = (0..5).map(|_| r.next()).collect();
            assert_eq!(got, expected);
        }
        // srand(42): rand() = 71876166, 708592740.
        let mut r = GlibcRand::new(42);
        assert_eq!((r.next(), r.next()), (71_876_166, 708_592_740));
        // A seed above 2³¹ goes through glibc's signed arithmetic.
        assert_eq!(GlibcRand::new(3_000_000_000).next(), 2_058_147_116);
    }

    #[test]
    fn glibc_soup_is_row_major() {
        let g = glibc_soup(70, 3, 7).unwrap();
        let mut r = GlibcRand::new(7);
        for y in 0..3 {
            for x in 0..70 {
                assert_eq!(g.get(x, y), r.next() % 2 == 1);
            }
        }
    }

    #[test]
    fn density_soup_is_reproducible_and_dense_enough() {
        let a = density_soup(300, 200, 0.3, 9).unwrap();
        assert_eq!(a, density_soup(300, 200, 0.3, 9).unwrap());
        assert_ne!(a, density_soup(300, 200, 0.3, 10).unwrap());
        let share = a.population() as f64 / a.cells() as f64;
        assert!((share - 0.3).abs() < 0.01, "{share}");
        assert_eq!(density_soup(65, 2, 1.0, 1).unwrap().population(), 130);
        assert_eq!(density_soup(65, 2, 0.0, 1).unwrap().population(), 0);
        assert!(density_soup(4, 4, 1.5, 1).is_err());
    }
}
