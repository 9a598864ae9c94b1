//! Leaves: the cells a node at the bottom of the quadtree holds, and the base case of HashLife,
//! which steps the cells of four leaves directly.
//!
//! Two kinds, each bound to a rule:
//!
//! - [`Bits`], for two-state rules: a leaf is 8×8 cells (level 3), one bit each. Its key's word
//!   0 holds rows 0–3 and word 1 rows 4–7, cell (x, y) at bit 8(y mod 4) + x; words 2 and 3 are
//!   zero. Four leaves make a 16×16 square, stepped 1, 2 or 4 generations at once by bitwise
//!   logic over four 64-bit words, one row of 16 cells in each quarter of a word (see
//!   `Square`).
//! - [`States`], for Generations rules and rule tables: a leaf is 4×4 cells (level 2), one byte each holding the
//!   state; word `y` of the key holds row `y`, cell (x, y) in byte x. Four leaves make an 8×8
//!   square, stepped 1 or 2 generations cell by cell.

use gol_core::rule::circuit::{Circuit, Gate, FIRST_GATE, ONE, ZERO};
use gol_core::Rule;

/// A kind of leaf, bound to the rule that steps it.
pub trait Leaf: Send + Sync + 'static {
    /// The leaves' level: their side is 2^LEVEL cells.
    const LEVEL: u32;

    /// The number of cell states the leaves hold.
    fn states(&self) -> u32;

    /// The cells of the four leaves `quads` (nw, ne, sw, se), a square of side 2^(LEVEL+1),
    /// after 2^`log2` generations (at most a quarter of that side): the leaf at its centre.
    fn step(&self, quads: [[u32; 4]; 4], log2: u32) -> [u32; 4];

    /// The leaf at the centre of the square of four leaves `quads` (nw, ne, sw, se), as they
    /// are.
    fn centre(quads: [[u32; 4]; 4]) -> [u32; 4];

    /// Cells of leaf `key` not in state 0.
    fn population(key: [u32; 4]) -> u64;

    /// Cells of leaf `key` in state 1.
    fn live(key: [u32; 4]) -> u64;

    /// The state of cell (x, y) of leaf `key`.
    fn get(key: [u32; 4], x: u32, y: u32) -> u8;

    /// Sets cell (x, y) of leaf `key` to `state`.
    fn set(key: &mut [u32; 4], x: u32, y: u32, state: u8);
}

/// Two-state leaves of 8×8 cells, stepped by the rule's logic (see the module documentation).
pub struct Bits {
    logic: Logic,
}

/// How [`Bits`] computes a generation.
enum Logic {
    /// B3/S23, written out.
    Life,
    /// Any other two-state 2D rule: its circuit over the nine cells, interpreted.
    Circuit { gates: Vec<Gate>, output: u16 },
}

impl Bits {
    /// Leaves stepped under `rule`, a two-state 2D rule.
    pub fn new(rule: &Rule) -> Bits {
        let logic = if *rule == Rule::LIFE.on(rule.topology()) {
            Logic::Life
        } else {
            let circuit = Circuit::new(rule);
            Logic::Circuit {
                gates: circuit.gates().to_vec(),
                output: circuit.output(),
            }
        };
        Bits { logic }
    }

    /// A leaf's key as one word: rows 0–7, cell (x, y) at bit 8y + x.
    #[inline]
    pub fn word(key: [u32; 4]) -> u64 {
        key[0] as u64 | (key[1] as u64) << 32
    }

    /// The key of the leaf whose cells are `word`.
    #[inline]
    pub fn key(word: u64) -> [u32; 4] {
        [word as u32, (word >> 32) as u32, 0, 0]
    }

    /// One generation of `square`: exact except within `1` cell of its edges, where cells
    /// outside count as dead.
    #[inline]
    fn generation(&self, s: &Square) -> Square {
        match &self.logic {
            Logic::Life => s.life(),
            Logic::Circuit { gates, output } => s.circuit(gates, *output),
        }
    }
}

/// A 16×16 square of cells in four words: word `w` holds rows 4w to 4w + 3, cell (x, y) at bit
/// 16(y mod 4) + x. The whole square is a 256-bit number in which cell (x, y) is bit 16y + x.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Square([u64; 4]);

/// Each 16-bit row of a word without its cell x = 0 (which a shift east leaves behind).
const NOT_WEST: u64 = 0xfffe_fffe_fffe_fffe;
/// Each 16-bit row of a word without its cell x = 15.
const NOT_EAST: u64 = 0x7fff_7fff_7fff_7fff;

/// The four bytes of `x` spread to the low bytes of four 16-bit lanes.
#[inline]
fn spread(x: u32) -> u64 {
    let x = x as u64;
    let x = (x | x << 16) & 0x0000_ffff_0000_ffff;
    (x | x << 8) & 0x00ff_00ff_00ff_00ff
}

/// Cells 4 to 11 of each of the four 16-bit rows of `w`, as four bytes.
#[inline]
fn gather(w: u64) -> u32 {
    let x = (w >> 4) & 0x00ff_00ff_00ff_00ff;
    let x = (x | x >> 8) & 0x0000_ffff_0000_ffff;
    (x | x >> 16) as u32
}

impl Square {
    /// The square of four 8×8 leaves (nw, ne, sw, se), each as one word (cell (x, y) at bit
    /// 8y + x).
    #[inline]
    fn of(nw: u64, ne: u64, sw: u64, se: u64) -> Square {
        let half = |west: u64, east: u64| {
            [
                spread(west as u32) | spread(east as u32) << 8,
                spread((west >> 32) as u32) | spread((east >> 32) as u32) << 8,
            ]
        };
        let [a, b] = half(nw, ne);
        let [c, d] = half(sw, se);
        Square([a, b, c, d])
    }

    /// The 8×8 cells at the square's centre (x and y from 4 to 11), as one word.
    #[inline]
    fn centre(&self) -> u64 {
        gather(self.0[1]) as u64 | (gather(self.0[2]) as u64) << 32
    }

    /// Each cell replaced by its west neighbour (x − 1).
    #[inline(always)]
    fn west(&self) -> Square {
        Square(self.0.map(|w| (w << 1) & NOT_WEST))
    }

    /// Each cell replaced by its east neighbour (x + 1).
    #[inline(always)]
    fn east(&self) -> Square {
        Square(self.0.map(|w| (w >> 1) & NOT_EAST))
    }

    /// Each cell replaced by its north neighbour (y − 1).
    #[inline(always)]
    fn north(&self) -> Square {
        let w = self.0;
        Square([
            w[0] << 16,
            w[1] << 16 | w[0] >> 48,
            w[2] << 16 | w[1] >> 48,
            w[3] << 16 | w[2] >> 48,
        ])
    }

    /// Each cell replaced by its south neighbour (y + 1).
    #[inline(always)]
    fn south(&self) -> Square {
        let w = self.0;
        Square([
            w[0] >> 16 | w[1] << 48,
            w[1] >> 16 | w[2] << 48,
            w[2] >> 16 | w[3] << 48,
            w[3] >> 16,
        ])
    }

    /// The nine cells of each cell's neighbourhood, as [`Circuit`] numbers them: cell 3r + c in
    /// row r (0 north) and column c (0 west).
    #[inline(always)]
    fn neighbourhood(&self) -> [Square; 9] {
        let (n, s) = (self.north(), self.south());
        [
            n.west(),
            n,
            n.east(),
            self.west(),
            *self,
            self.east(),
            s.west(),
            s,
            s.east(),
        ]
    }

    /// One generation of Life.
    #[inline]
    fn life(&self) -> Square {
        let cells = self.neighbourhood();
        let mut out = [0u64; 4];
        for (i, out) in out.iter_mut().enumerate() {
            let v = |k: usize| cells[k].0[i];
            // Sums of the rows above and below (three cells) and of the row itself (two).
            let (a, b, c) = (v(0), v(1), v(2));
            let (top0, top1) = (a ^ b ^ c, (a & b) | (c & (a ^ b)));
            let (a, b, c) = (v(6), v(7), v(8));
            let (bot0, bot1) = (a ^ b ^ c, (a & b) | (c & (a ^ b)));
            let (mid0, mid1) = (v(3) ^ v(5), v(3) & v(5));
            // Ones and twos of the total.
            let ones = top0 ^ bot0 ^ mid0;
            let carry = (top0 & bot0) | (mid0 & (top0 ^ bot0));
            // Twos: top1 + bot1 + mid1 + carry (0 to 4); Life needs exactly one of them.
            let x = top1 ^ bot1;
            let y = mid1 ^ carry;
            let twos_odd = x ^ y;
            let any_pair = (top1 & bot1) | (mid1 & carry) | (x & y);
            // Totals 2 and 3: one two, no more; alive with 3, or with 2 if alive already.
            *out = twos_odd & !any_pair & (ones | v(4));
        }
        Square(out)
    }

    /// One generation of a rule given as a circuit over the nine cells.
    #[inline]
    fn circuit(&self, gates: &[Gate], output: u16) -> Square {
        let mut values: Vec<[u64; 4]> = Vec::with_capacity(FIRST_GATE as usize + gates.len());
        values.extend(self.neighbourhood().map(|s| s.0));
        values.extend([[0; 4], [!0; 4]]);
        for gate in gates {
            let v = |s: &u16| values[*s as usize];
            let each2 = |a: &u16, b: &u16, f: fn(u64, u64) -> u64| {
                let (a, b) = (v(a), v(b));
                std::array::from_fn(|i| f(a[i], b[i]))
            };
            let each3 = |a: &u16, b: &u16, c: &u16, f: fn(u64, u64, u64) -> u64| {
                let (a, b, c) = (v(a), v(b), v(c));
                std::array::from_fn(|i| f(a[i], b[i], c[i]))
            };
            let value: [u64; 4] = match gate {
                Gate::And(a, b) => each2(a, b, |a, b| a & b),
                Gate::Or(a, b) => each2(a, b, |a, b| a | b),
                Gate::Xor(a, b) => each2(a, b, |a, b| a ^ b),
                Gate::AndNot(a, b) => each2(a, b, |a, b| a & !b),
                Gate::Not(a) => v(a).map(|a| !a),
                Gate::Xor3(a, b, c) => each3(a, b, c, |a, b, c| a ^ b ^ c),
                Gate::Majority(a, b, c) => each3(a, b, c, |a, b, c| (a & b) | (c & (a ^ b))),
                Gate::Mux(s, one, zero) => each3(s, one, zero, |s, o, z| (s & o) | (!s & z)),
            };
            values.push(value);
        }
        match output {
            ZERO => Square([0; 4]),
            ONE => Square([!0; 4]),
            signal => Square(values[signal as usize]),
        }
    }
}

impl Leaf for Bits {
    const LEVEL: u32 = 3;

    fn states(&self) -> u32 {
        2
    }

    #[inline]
    fn step(&self, quads: [[u32; 4]; 4], log2: u32) -> [u32; 4] {
        debug_assert!(log2 <= 2);
        let [nw, ne, sw, se] = quads.map(Bits::word);
        let mut square = Square::of(nw, ne, sw, se);
        for _ in 0..1u32 << log2 {
            square = self.generation(&square);
        }
        Bits::key(square.centre())
    }

    fn centre(quads: [[u32; 4]; 4]) -> [u32; 4] {
        let [nw, ne, sw, se] = quads.map(Bits::word);
        Bits::key(Square::of(nw, ne, sw, se).centre())
    }

    fn population(key: [u32; 4]) -> u64 {
        Bits::word(key).count_ones() as u64
    }

    fn live(key: [u32; 4]) -> u64 {
        Bits::population(key)
    }

    fn get(key: [u32; 4], x: u32, y: u32) -> u8 {
        (Bits::word(key) >> (8 * y + x) & 1) as u8
    }

    fn set(key: &mut [u32; 4], x: u32, y: u32, state: u8) {
        let bit = 1u64 << (8 * y + x);
        let word = Bits::word(*key);
        *key = Bits::key(if state != 0 { word | bit } else { word & !bit });
    }
}

/// Multi-state leaves of 4×4 cells for Generations rules (see the module documentation).
pub struct States {
    rule: Rule,
}

impl States {
    /// Leaves stepped under `rule`, a Generations rule or a rule table.
    pub fn new(rule: &Rule) -> States {
        States { rule: *rule }
    }
}

impl Leaf for States {
    const LEVEL: u32 = 2;

    fn states(&self) -> u32 {
        self.rule.states()
    }

    fn step(&self, quads: [[u32; 4]; 4], log2: u32) -> [u32; 4] {
        debug_assert!(log2 <= 1);
        // The 8×8 square, then each generation over the cells not yet reached by the dead
        // cells assumed past its edges.
        let mut cells = [[0u8; 8]; 8];
        for (q, key) in quads.iter().enumerate() {
            let (ox, oy) = (4 * (q & 1), 4 * (q >> 1));
            for y in 0..4 {
                for x in 0..4 {
                    cells[oy + y][ox + x] = States::get(*key, x as u32, y as u32);
                }
            }
        }
        for g in 0..1usize << log2 {
            let mut next = cells;
            for y in 1 + g..7 - g {
                for x in 1 + g..7 - g {
                    let around: [[u8; 3]; 3] =
                        std::array::from_fn(|r| [0, 1, 2].map(|c| cells[y + r - 1][x + c - 1]));
                    next[y][x] = self.rule.next_of(&around);
                }
            }
            cells = next;
        }
        let mut key = [0u32; 4];
        for y in 0..4 {
            for x in 0..4 {
                States::set(&mut key, x, y, cells[2 + y as usize][2 + x as usize]);
            }
        }
        key
    }

    fn centre(quads: [[u32; 4]; 4]) -> [u32; 4] {
        // Row y of the centre: the last two cells of the western quadrant's row, the first two
        // of the eastern one's.
        let row = |west: u32, east: u32| west >> 16 | east << 16;
        let [nw, ne, sw, se] = quads;
        [
            row(nw[2], ne[2]),
            row(nw[3], ne[3]),
            row(sw[0], se[0]),
            row(sw[1], se[1]),
        ]
    }

    fn population(key: [u32; 4]) -> u64 {
        key.iter()
            .map(|w| w.to_le_bytes().iter().filter(|&&b| b != 0).count() as u64)
            .sum()
    }

    fn live(key: [u32; 4]) -> u64 {
        key.iter()
            .map(|w| w.to_le_bytes().iter().filter(|&&b| b == 1).count() as u64)
            .sum()
    }

    fn get(key: [u32; 4], x: u32, y: u32) -> u8 {
        (key[y as usize] >> (8 * x)) as u8
    }

    fn set(key: &mut [u32; 4], x: u32, y: u32, state: u8) {
        let shift = 8 * x;
        key[y as usize] = (key[y as usize] & !(0xff << shift)) | (state as u32) << shift;
    }
}

#[cfg(test)]
mod test {
    use super::*;

    /// One generation of a 16×16 square by the definition, cells outside dead.
    fn reference(rule: &Rule, cells: &[[bool; 16]; 16]) -> [[bool; 16]; 16] {
        let mut next = [[false; 16]; 16];
        for y in 0..16i32 {
            for x in 0..16i32 {
                let mut around = 0u16;
                for r in 0..3 {
                    for c in 0..3 {
                        let (nx, ny) = (x + c - 1, y + r - 1);
                        let live = (0..16).contains(&nx)
                            && (0..16).contains(&ny)
                            && cells[ny as usize][nx as usize];
                        around |= (live as u16) << (3 * r + c);
                    }
                }
                next[y as usize][x as usize] = rule.next_cells(around);
            }
        }
        next
    }

    fn square_of(cells: &[[bool; 16]; 16]) -> Square {
        let mut words = [0u64; 4];
        for (y, row) in cells.iter().enumerate() {
            for (x, &alive) in row.iter().enumerate() {
                words[y / 4] |= (alive as u64) << (16 * (y % 4) + x);
            }
        }
        Square(words)
    }

    fn random_cells(seed: &mut u64) -> [[bool; 16]; 16] {
        let mut cells = [[false; 16]; 16];
        for row in cells.iter_mut() {
            for cell in row.iter_mut() {
                *seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                *cell = *seed >> 62 == 0;
            }
        }
        cells
    }

    #[test]
    fn a_square_steps_as_the_rule_says_everywhere() {
        let mut seed = 1u64;
        let mut next = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
            seed >> 11
        };
        let rules: Vec<Rule> = std::iter::once(Rule::LIFE)
            .chain((0..40).map(|i| Rule::random(gol_core::rule::Family::ALL[i % 4], &mut next)))
            .collect();
        let mut seed = 7;
        for rule in &rules {
            let bits = Bits::new(rule);
            for _ in 0..20 {
                let cells = random_cells(&mut seed);
                let got = bits.generation(&square_of(&cells));
                assert_eq!(got, square_of(&reference(rule, &cells)), "{rule}");
            }
        }
    }

    #[test]
    fn four_leaves_give_their_centre_after_four_generations() {
        let mut seed = 3;
        let bits = Bits::new(&Rule::LIFE);
        for _ in 0..50 {
            let cells = random_cells(&mut seed);
            let mut want = cells;
            for _ in 0..4 {
                want = reference(&Rule::LIFE, &want);
            }
            let leaf = |qx: usize, qy: usize| {
                let mut word = 0u64;
                for y in 0..8 {
                    for x in 0..8 {
                        word |= (cells[8 * qy + y][8 * qx + x] as u64) << (8 * y + x);
                    }
                }
                Bits::key(word)
            };
            let got = Bits::word(bits.step([leaf(0, 0), leaf(1, 0), leaf(0, 1), leaf(1, 1)], 2));
            for y in 0..8 {
                for x in 0..8 {
                    assert_eq!(
                        got >> (8 * y + x) & 1 == 1,
                        want[4 + y][4 + x],
                        "({x}, {y})"
                    );
                }
            }
        }
    }

    #[test]
    fn leaf_cells_read_back_as_set() {
        let mut bits = [0u32; 4];
        let mut states = [0u32; 4];
        Bits::set(&mut bits, 7, 6, 1);
        States::set(&mut states, 3, 2, 200);
        assert_eq!(Bits::get(bits, 7, 6), 1);
        assert_eq!(Bits::population(bits), 1);
        assert_eq!(States::get(states, 3, 2), 200);
        assert_eq!((States::population(states), States::live(states)), (1, 0));
    }
}
