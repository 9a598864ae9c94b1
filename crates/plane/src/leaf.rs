//! Leaves: the cells a node at the bottom of the quadtree holds, and the base case of HashLife,
//! which steps the cells of sixteen leaves (a node two levels above them) directly: the nodes
//! one level above the leaves made of overlapping leaves are never hashed, as in Golly's
//! HashLife, and they would be the most numerous nodes of all.
//!
//! Two kinds, each bound to a rule:
//!
//! - [`Bits`], for two-state rules: a leaf is 8×8 cells (level 3), one bit each. Its key's word
//!   0 holds rows 0–3 and word 1 rows 4–7, cell (x, y) at bit 8(y mod 4) + x; words 2 and 3 are
//!   zero. Sixteen leaves make a 32×32 square, stepped up to 8 generations at once by bitwise
//!   logic over sixteen 64-bit words, two rows of 32 cells in each (see [`Square`]).
//! - [`States`], for Generations rules: a leaf is 4×4 cells (level 2), one byte each holding the
//!   state; word `y` of the key holds row `y`, cell (x, y) in byte x. Sixteen leaves make a
//!   16×16 square, stepped up to 4 generations cell by cell.

use gol_core::rule::circuit::{Circuit, Gate, FIRST_GATE, ONE, ZERO};
use gol_core::Rule;

/// A kind of leaf, bound to the rule that steps it.
pub trait Leaf: Send + Sync + 'static {
    /// The leaves' level: their side is 2^LEVEL cells.
    const LEVEL: u32;

    /// The number of cell states the leaves hold.
    fn states(&self) -> u32;

    /// The cells of the sixteen leaves `leaves` (four rows of four, a square of side
    /// 2^(LEVEL+2)), after 2^`log2` generations (at most 2^LEVEL): the four leaves at its
    /// centre (nw, ne, sw, se).
    fn step(&self, leaves: &[[u32; 4]; 16], log2: u32) -> [[u32; 4]; 4];

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

/// A 32×32 square of cells in sixteen words: word `w` holds rows 2w and 2w + 1, cell (x, y) at
/// bit 32(y mod 2) + x. The whole square is a 1024-bit number in which cell (x, y) is bit
/// 32y + x.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Square([u64; WORDS]);

/// Words of a [`Square`].
const WORDS: usize = 16;

/// Each 32-bit row of a word without its cell x = 0 (which a shift east leaves behind).
const NOT_WEST: u64 = 0xffff_fffe_ffff_fffe;
/// Each 32-bit row of a word without its cell x = 31.
const NOT_EAST: u64 = 0x7fff_ffff_7fff_ffff;

impl Square {
    /// The square of sixteen 8×8 leaves, four rows of four, each as one word (cell (x, y) at
    /// bit 8y + x).
    #[inline]
    fn of(leaves: &[u64; 16]) -> Square {
        let mut words = [0u64; WORDS];
        for (band, row) in leaves.chunks_exact(4).enumerate() {
            for r in 0..8 {
                let cells = row.iter().enumerate().fold(0u64, |acc, (c, &leaf)| {
                    acc | (leaf >> (8 * r) & 0xff) << (8 * c)
                });
                words[4 * band + r / 2] |= cells << (32 * (r % 2));
            }
        }
        Square(words)
    }

    /// The 16×16 cells at the square's centre (x and y from 8 to 23), as four leaves (nw, ne,
    /// sw, se), each one word.
    #[inline]
    fn centre(&self) -> [u64; 4] {
        std::array::from_fn(|q| {
            let (qx, qy) = (q & 1, q >> 1);
            (0..8).fold(0u64, |acc, r| {
                let y = 8 + 8 * qy + r;
                let row = self.0[y / 2] >> (32 * (y % 2));
                acc | (row >> (8 + 8 * qx) & 0xff) << (8 * r)
            })
        })
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
        let w = &self.0;
        Square(std::array::from_fn(|i| {
            w[i] << 32 | if i > 0 { w[i - 1] >> 32 } else { 0 }
        }))
    }

    /// Each cell replaced by its south neighbour (y + 1).
    #[inline(always)]
    fn south(&self) -> Square {
        let w = &self.0;
        Square(std::array::from_fn(|i| {
            w[i] >> 32 | if i + 1 < WORDS { w[i + 1] << 32 } else { 0 }
        }))
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
        Square(std::array::from_fn(|i| {
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
            twos_odd & !any_pair & (ones | v(4))
        }))
    }

    /// One generation of a rule given as a circuit over the nine cells.
    #[inline]
    fn circuit(&self, gates: &[Gate], output: u16) -> Square {
        let mut values: Vec<[u64; WORDS]> = Vec::with_capacity(FIRST_GATE as usize + gates.len());
        values.extend(self.neighbourhood().map(|s| s.0));
        values.extend([[0; WORDS], [!0; WORDS]]);
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
            let value: [u64; WORDS] = match gate {
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
            ZERO => Square([0; WORDS]),
            ONE => Square([!0; WORDS]),
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
    fn step(&self, leaves: &[[u32; 4]; 16], log2: u32) -> [[u32; 4]; 4] {
        debug_assert!(log2 <= 3);
        let mut square = Square::of(&leaves.map(Bits::word));
        for _ in 0..1u32 << log2 {
            square = self.generation(&square);
        }
        square.centre().map(Bits::key)
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
    /// Leaves stepped under `rule`, a Generations rule.
    pub fn new(rule: &Rule) -> States {
        States { rule: *rule }
    }
}

impl Leaf for States {
    const LEVEL: u32 = 2;

    fn states(&self) -> u32 {
        self.rule.states()
    }

    fn step(&self, leaves: &[[u32; 4]; 16], log2: u32) -> [[u32; 4]; 4] {
        debug_assert!(log2 <= 2);
        // The 16×16 square, then each generation over the cells not yet reached by the dead
        // cells assumed past its edges.
        let mut cells = [[0u8; 16]; 16];
        for (l, key) in leaves.iter().enumerate() {
            let (ox, oy) = (4 * (l % 4), 4 * (l / 4));
            for y in 0..4 {
                for x in 0..4 {
                    cells[oy + y][ox + x] = States::get(*key, x as u32, y as u32);
                }
            }
        }
        for g in 0..1usize << log2 {
            let mut next = cells;
            for y in 1 + g..15 - g {
                for x in 1 + g..15 - g {
                    let mut around = 0u16;
                    for r in 0..3 {
                        for c in 0..3 {
                            let live = cells[y + r - 1][x + c - 1] == 1;
                            around |= (live as u16) << (3 * r + c);
                        }
                    }
                    next[y][x] = self
                        .rule
                        .next_state(cells[y][x], self.rule.next_cells(around));
                }
            }
            cells = next;
        }
        std::array::from_fn(|q| {
            let (ox, oy) = (4 + 4 * (q & 1), 4 + 4 * (q >> 1));
            let mut key = [0u32; 4];
            for y in 0..4 {
                for x in 0..4 {
                    States::set(&mut key, x, y, cells[oy + y as usize][ox + x as usize]);
                }
            }
            key
        })
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

    /// One generation of a 32×32 square by the definition, cells outside dead.
    fn reference(rule: &Rule, cells: &Cells) -> Cells {
        let mut next = [[false; 32]; 32];
        for y in 0..32i32 {
            for x in 0..32i32 {
                let mut around = 0u16;
                for r in 0..3 {
                    for c in 0..3 {
                        let (nx, ny) = (x + c - 1, y + r - 1);
                        let live = (0..32).contains(&nx)
                            && (0..32).contains(&ny)
                            && cells[ny as usize][nx as usize];
                        around |= (live as u16) << (3 * r + c);
                    }
                }
                next[y as usize][x as usize] = rule.next_cells(around);
            }
        }
        next
    }

    type Cells = [[bool; 32]; 32];

    fn square_of(cells: &Cells) -> Square {
        let mut words = [0u64; WORDS];
        for (y, row) in cells.iter().enumerate() {
            for (x, &alive) in row.iter().enumerate() {
                words[y / 2] |= (alive as u64) << (32 * (y % 2) + x);
            }
        }
        Square(words)
    }

    fn random_cells(seed: &mut u64) -> Cells {
        let mut cells = [[false; 32]; 32];
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
            for _ in 0..10 {
                let cells = random_cells(&mut seed);
                let got = bits.generation(&square_of(&cells));
                assert_eq!(got, square_of(&reference(rule, &cells)), "{rule}");
            }
        }
    }

    #[test]
    fn sixteen_leaves_give_their_centre_after_up_to_eight_generations() {
        let mut seed = 3;
        let bits = Bits::new(&Rule::LIFE);
        for log2 in 0..=3 {
            for _ in 0..20 {
                let cells = random_cells(&mut seed);
                let mut want = cells;
                for _ in 0..1 << log2 {
                    want = reference(&Rule::LIFE, &want);
                }
                let leaves: [[u32; 4]; 16] = std::array::from_fn(|l| {
                    let (lx, ly) = (8 * (l % 4), 8 * (l / 4));
                    let mut word = 0u64;
                    for y in 0..8 {
                        for x in 0..8 {
                            word |= (cells[ly + y][lx + x] as u64) << (8 * y + x);
                        }
                    }
                    Bits::key(word)
                });
                let got = bits.step(&leaves, log2);
                for (q, key) in got.iter().enumerate() {
                    let word = Bits::word(*key);
                    for y in 0..8 {
                        for x in 0..8 {
                            let (cx, cy) = (8 + 8 * (q & 1) + x, 8 + 8 * (q >> 1) + y);
                            let alive = word >> (8 * y + x) & 1 == 1;
                            assert_eq!(alive, want[cy][cx], "({cx}, {cy}) after 2^{log2}");
                        }
                    }
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
