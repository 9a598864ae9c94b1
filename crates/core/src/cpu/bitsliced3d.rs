//! `cpu-bitsliced` in 3D: 64 cells per word, bit-sliced 27-cell sums, SIMD, all cores.
//!
//! # Layout
//!
//! The state stays in [`Cube`]'s own layout: line `(x, y)` (every `z`) is row `x·M + y` of a
//! grid of M columns, 64 cells per `u64` word, padding bits zero.
//!
//! # Algorithm
//!
//! The 3×3×3 sum of a cell (itself included, 0..=27) is built in three passes, each reusing the
//! previous one's partial sums between neighbours:
//!
//! 1. *Line sums*: for each line, the 3-sum along z of every cell (`z-1`, `z`, `z+1`, wrapping
//!    at the line's ends), two bit planes — the 2D engine's row sums.
//! 2. *Plane sums*: for each line `(x, y)`, the line sums of `(x, y-1)`, `(x, y)`, `(x, y+1)`
//!    added: the 3×3 sum in the plane of constant x, four bit planes (0..=9).
//! 3. The plane sums of planes `x-1`, `x`, `x+1` added: five bit planes (0..=27). The next state
//!    is a multiplexer tree over those planes whose leaves are the rule's birth bits (dead
//!    cells) or survival bits shifted by one (live cells, whose sum counts themselves).
//!
//! Each thread takes a band of x-planes and slides a window of three plane sums down it, so
//! each plane sum is computed once per band. The loops are compiled once per instruction set
//! and chosen at run time, as in 2D.

use rayon::prelude::*;

use super::bitsliced::{
    add_3sums, dispatch, full_add, mux, row_sum, Frame, Isa, Kernel, Leaves, State,
};
use crate::cube::Cube;
use crate::engine::{Engine, EngineId, RowAccess};
use crate::error::{Error, Result};
use crate::grid::last_word_mask;
use crate::rule::Rule;

/// Cubes with fewer cells than this are stepped on the calling thread alone.
const PARALLEL_CELLS: u64 = 1 << 18;

/// The 3D cpu-bitsliced engine.
pub struct Bitsliced3d {
    isa: Isa,
    state: Option<State>,
}

impl Default for Bitsliced3d {
    fn default() -> Self {
        Bitsliced3d {
            isa: Isa::detect(),
            state: None,
        }
    }
}

impl Bitsliced3d {
    /// An engine whose inner loops use `isa`; refused if this CPU lacks it.
    pub fn with_isa(isa: Isa) -> Result<Bitsliced3d> {
        Ok(Bitsliced3d {
            isa: isa.require()?,
            state: None,
        })
    }

    fn loaded(&self) -> Result<&State> {
        self.state
            .as_ref()
            .ok_or_else(|| Error::Engine("cpu-bitsliced: no cube loaded".into()))
    }
}

impl Engine<Cube> for Bitsliced3d {
    fn id(&self) -> EngineId {
        EngineId::CpuBitsliced
    }

    fn load(&mut self, cube: &Cube, rule: Rule) -> Result<()> {
        rule.check_neighbours(26)?;
        self.state = None;
        let m = cube.side();
        let what = format!(
            "a {}x{m}x{m} torus on cpu-bitsliced (two bit-packed buffers)",
            cube.planes()
        );
        self.state = Some(State::new(cube.lines(), rule, &what)?);
        Ok(())
    }

    fn step(&mut self, generations: u64) -> Result<()> {
        let isa = self.isa;
        let state = self
            .state
            .as_mut()
            .ok_or_else(|| Error::Engine("cpu-bitsliced: no cube loaded".into()))?;
        if state.rule == Rule::LIFE_3D {
            state.advance(generations, |frame, next| {
                generation(isa, frame, next, &Life3d)
            });
        } else {
            let leaves = Leaves::<32>::new(state.rule);
            state.advance(generations, |frame, next| {
                generation(isa, frame, next, &leaves)
            });
        }
        Ok(())
    }

    fn snapshot(&self) -> Result<Cube> {
        Cube::slab(self.loaded()?.grid()?)
    }

    fn population(&self) -> Result<u64> {
        Ok(self.loaded()?.population())
    }

    fn rows(&self) -> Option<&dyn RowAccess> {
        Some(self)
    }

    fn rows_mut(&mut self) -> Option<&mut dyn RowAccess> {
        Some(self)
    }

    fn details(&self) -> String {
        self.isa.details()
    }
}

impl RowAccess for Bitsliced3d {
    fn read_rows(&self, first: usize, words: &mut [u64]) -> Result<()> {
        self.loaded()?.read_rows(first, words)
    }

    fn write_rows(&mut self, first: usize, words: &[u64]) -> Result<()> {
        (self.state.as_mut())
            .ok_or_else(|| Error::Engine("cpu-bitsliced: no cube loaded".into()))?
            .write_rows(first, words)
    }
}

/// The next-state function over the five planes of the 3×3×3 sum.
trait RuleLogic3d: Sync {
    /// `sum` holds the planes (least significant first) of each cell's 27-cell sum, the cell
    /// itself included; `alive` the cells' states. Returns the next states.
    fn apply(&self, sum: [u64; 5], alive: u64) -> u64;
}

impl RuleLogic3d for Leaves<32> {
    #[inline(always)]
    fn apply(&self, sum: [u64; 5], alive: u64) -> u64 {
        let mut level = [0u64; 32];
        for (c, leaf) in level.iter_mut().enumerate() {
            *leaf = self.base[c] ^ (alive & self.flip[c]);
        }
        let mut width = 32;
        for plane in sum {
            width /= 2;
            for i in 0..width {
                level[i] = mux(plane, level[2 * i + 1], level[2 * i]);
            }
        }
        level[0]
    }
}

/// B6/S567: the same tree with constant leaves, which the compiler folds away.
struct Life3d;

impl RuleLogic3d for Life3d {
    #[inline(always)]
    fn apply(&self, sum: [u64; 5], alive: u64) -> u64 {
        const LEAVES: Leaves<32> = Leaves::new(Rule::LIFE_3D);
        LEAVES.apply(sum, alive)
    }
}

/// The sum of three plane sums (four planes each, values 0..=9) as five planes (0..=27).
#[inline(always)]
fn add_plane_sums(a: [u64; 4], b: [u64; 4], c: [u64; 4]) -> [u64; 5] {
    let (t0, k1) = full_add(a[0], b[0], c[0]);
    let (u1, k2) = full_add(a[1], b[1], c[1]);
    let (t1, k2b) = (u1 ^ k1, u1 & k1);
    let (u2, k3) = full_add(a[2], b[2], c[2]);
    let (t2, k3b) = full_add(u2, k2, k2b);
    let (u3, k4) = full_add(a[3], b[3], c[3]);
    let (t3, k4b) = full_add(u3, k3, k3b);
    // The sum is at most 27, so the two weight-16 carries are never both set.
    [t0, t1, t2, t3, k4 | k4b]
}

/// Computes one generation of `frame` into `next`.
fn generation<R: RuleLogic3d>(isa: Isa, frame: &Frame, next: &mut [u64], logic: &R) {
    let side = frame.width;
    let planes = frame.height / side;
    let plane_words = side * frame.words_per_row;
    let cells = (side * side * planes) as u64;
    let threads = rayon::current_num_threads();
    if cells < PARALLEL_CELLS || threads == 1 {
        dispatch(
            isa,
            Band {
                frame,
                out: next,
                first: 0,
                logic,
            },
        );
        return;
    }
    // Several bands per thread balance the load; each band adds two plane sums of its own.
    let planes_per_band = planes.div_ceil(threads * 4).max(4);
    next.par_chunks_mut(planes_per_band * plane_words)
        .enumerate()
        .for_each(|(b, out)| {
            let first = b * planes_per_band;
            dispatch(
                isa,
                Band {
                    frame,
                    out,
                    first,
                    logic,
                },
            )
        });
}

/// Output planes `first..first + out.len() / plane_words` of one generation.
struct Band<'a, R> {
    frame: &'a Frame,
    out: &'a mut [u64],
    first: usize,
    logic: &'a R,
}

impl<R: RuleLogic3d> Kernel for Band<'_, R> {
    #[inline(always)]
    fn run(self) {
        let Band {
            frame,
            out,
            first,
            logic,
        } = self;
        let m = frame.width;
        let planes = frame.height / m;
        let wpl = frame.words_per_row;
        let plane_words = m * wpl;
        let mut line_sums = vec![0u64; 2 * plane_words];
        let mut window = vec![0u64; 3 * 4 * plane_words];
        let sums = |window: &mut [u64], slot: usize, x: usize, line_sums: &mut [u64]| {
            plane_sum(
                frame,
                x,
                line_sums,
                &mut window[slot * 4 * plane_words..][..4 * plane_words],
            )
        };
        sums(
            &mut window,
            0,
            (first + planes - 1) % planes,
            &mut line_sums,
        );
        sums(&mut window, 1, first, &mut line_sums);
        for (p, target) in out.chunks_mut(plane_words).enumerate() {
            let x = first + p;
            sums(&mut window, (p + 2) % 3, (x + 1) % planes, &mut line_sums);
            let planes = |slot: usize| {
                let base = &window[(slot % 3) * 4 * plane_words..][..4 * plane_words];
                let (b0, rest) = base.split_at(plane_words);
                let (b1, rest) = rest.split_at(plane_words);
                let (b2, b3) = rest.split_at(plane_words);
                [b0, b1, b2, b3]
            };
            let (below, middle, above) = (planes(p), planes(p + 1), planes(p + 2));
            let alive = &frame.words[x * plane_words..][..plane_words];
            for k in 0..plane_words {
                let at = |s: [&[u64]; 4]| [s[0][k], s[1][k], s[2][k], s[3][k]];
                let sum = add_plane_sums(at(below), at(middle), at(above));
                target[k] = logic.apply(sum, alive[k]);
            }
            let mask = last_word_mask(m);
            for line in target.chunks_mut(wpl) {
                line[wpl - 1] &= mask;
            }
        }
    }
}

/// The plane sums (four planes of `M × words_per_line` words, line `y` at word `y ·
/// words_per_line`) of plane `x`, using `line_sums` (two planes of the same size) as scratch.
#[inline(always)]
fn plane_sum(frame: &Frame, x: usize, line_sums: &mut [u64], out: &mut [u64]) {
    let m = frame.width;
    let wpl = frame.words_per_row;
    let plane_words = m * wpl;
    let (l0, l1) = line_sums.split_at_mut(plane_words);
    for y in 0..m {
        row_sum(
            frame,
            Some(x * m + y),
            0,
            wpl,
            (&mut l0[y * wpl..][..wpl], &mut l1[y * wpl..][..wpl]),
        );
    }
    let (o0, rest) = out.split_at_mut(plane_words);
    let (o1, rest) = rest.split_at_mut(plane_words);
    let (o2, o3) = rest.split_at_mut(plane_words);
    for y in 0..m {
        let (up, down) = ((y + m - 1) % m * wpl, (y + 1) % m * wpl);
        let here = y * wpl;
        for k in 0..wpl {
            let [s0, s1, s2, s3] = add_3sums(
                [l0[up + k], l1[up + k]],
                [l0[here + k], l1[here + k]],
                [l0[down + k], l1[down + k]],
            );
            o0[here + k] = s0;
            o1[here + k] = s1;
            o2[here + k] = s2;
            o3[here + k] = s3;
        }
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::cpu::Scalar3d;

    /// Checks a slab of `planes` planes of side `side` (a whole cube where they are equal).
    fn check_slab(planes: usize, side: usize, rule: Rule, gens: u64, isa: Isa) {
        let seed = (side * 7 + planes) as u64 + gens;
        let lines = crate::seed::density_soup(side, planes * side, 0.3, seed).unwrap();
        let cube = Cube::slab(lines).unwrap();
        let mut oracle = Scalar3d::default();
        oracle.load(&cube, rule).unwrap();
        oracle.step(gens).unwrap();
        let mut fast = Bitsliced3d::with_isa(isa).unwrap();
        fast.load(&cube, rule).unwrap();
        fast.step(gens).unwrap();
        let (want, got) = (oracle.snapshot().unwrap(), fast.snapshot().unwrap());
        assert_eq!(
            want.first_difference(&got),
            None,
            "{planes}x{side}x{side} {rule} {gens} gens on {isa:?}"
        );
        assert_eq!(fast.population().unwrap(), want.population());
    }

    fn check(side: usize, rule: Rule, gens: u64, isa: Isa) {
        check_slab(side, side, rule, gens, isa)
    }

    #[test]
    fn matches_scalar_on_awkward_sides() {
        let rules = [
            Rule::LIFE_3D,
            Rule::parse("B5-7/S4-9").unwrap(),
            Rule::parse("B0,3,26/S0-2,13,26").unwrap(),
        ];
        for isa in Isa::available() {
            for side in [1, 2, 3, 4, 5, 17, 63, 64, 65, 70] {
                for rule in rules {
                    check(side, rule, 4, isa);
                }
            }
        }
        // Large enough for several bands on several threads.
        check(130, Rule::LIFE_3D, 3, Isa::detect());
    }

    #[test]
    fn matches_scalar_on_slabs() {
        for (planes, side) in [(1, 3), (2, 5), (7, 3), (3, 65), (9, 64), (40, 70)] {
            for isa in Isa::available() {
                check_slab(planes, side, Rule::LIFE_3D, 5, isa);
            }
        }
    }

    #[test]
    fn life_leaves_fold_to_the_rule() {
        let generic = Leaves::<32>::new(Rule::LIFE_3D);
        for c in 0..28u64 {
            let planes = [0, 1, 2, 3, 4].map(|b| if c >> b & 1 != 0 { !0u64 } else { 0 });
            for alive in [0u64, !0] {
                let expected =
                    Rule::LIFE_3D.next(alive != 0, (c as u32).saturating_sub((alive != 0) as u32));
                assert_eq!(generic.apply(planes, alive) != 0, expected, "c={c}");
                assert_eq!(Life3d.apply(planes, alive), generic.apply(planes, alive));
            }
        }
    }

    #[test]
    fn plane_sums_add_to_every_total() {
        for a in 0..10u64 {
            for b in 0..10u64 {
                for c in 0..10u64 {
                    let planes = |v: u64| [0, 1, 2, 3].map(|i| if v >> i & 1 != 0 { 1 } else { 0 });
                    let sum = add_plane_sums(planes(a), planes(b), planes(c));
                    let total: u64 = sum.iter().enumerate().map(|(i, &p)| p << i).sum();
                    assert_eq!(total, a + b + c);
                }
            }
        }
    }
}
