//! [`Stencil`]: a two-state rule's next state over *columns* of words, a word a row, the way
//! the infinite plane's tiles (64 cells wide, a word a row) are stepped: the rule's [`Circuit`]
//! (`program.rs`), compiled to machine code where the CPU has AVX2 (`jit.rs`), else its gates
//! interpreted.
//!
//! B/S rules run their circuit here too: adding the 3×3 sums as `cpu-bitsliced` does, compiled
//! by rustc for AVX-512, was slower on a 2048² soup's tiles (2000 generations, one thread,
//! 0.50 s against 0.43 s), its 3-sums read back while still being stored.

use super::bitsliced::Isa;
use super::program::{Layout, Program};
use crate::rule::circuit::Circuit;
use crate::rule::Rule;

/// A rule over columns of words (see the module's documentation).
pub struct Stencil {
    program: Program,
    isa: Isa,
}

impl Stencil {
    /// `rule` (two states, 2D), for the widest instruction set this CPU has.
    pub fn new(rule: &Rule) -> Stencil {
        Stencil::for_isa(rule, Isa::detect())
    }

    /// `rule` (two states, 2D), for `isa` (one this CPU has).
    pub fn for_isa(rule: &Rule, isa: Isa) -> Stencil {
        Stencil {
            program: Program::new(&Circuit::new(rule), Layout::Columns),
            isa,
        }
    }

    /// The instruction set it runs with.
    pub fn isa(&self) -> Isa {
        self.isa
    }

    /// The next states of the words of `out`: `columns` are the cells' column and those to its
    /// west and east, each a word a row (cell x of a row at bit x, its west neighbour at bit
    /// x − 1 or the west column's bit 63) with a row of margin above and below, so that word
    /// `k` of `out` is computed from words `k..=k + 2` of each. `scratch` is room the call
    /// keeps between calls.
    pub fn run(&self, columns: [&[u64]; 3], out: &mut [u64], scratch: &mut Vec<u64>) {
        assert!(
            columns.iter().all(|c| c.len() >= out.len() + 2),
            "columns too short"
        );
        self.program.columns(self.isa, columns, out, scratch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rule::Family;

    #[test]
    fn stencils_give_every_cell_of_a_column_its_next_state() {
        let mut generator = crate::seed::SplitMix64::new(0x853c_49e6_748f_ea9b_u64);
        let mut random = move || generator.next();
        for isa in Isa::available() {
            // Life, then random rules of every family, each checked cell by cell against its
            // circuit's gates.
            for k in 0..24 {
                let rule = match k {
                    0 => Rule::LIFE,
                    k => Rule::random(Family::ALL[k % 4], &mut random),
                };
                let circuit = Circuit::new(&rule);
                let stencil = Stencil::for_isa(&rule, isa);
                let mut scratch = Vec::new();
                // Lengths that are and are not whole vectors, a tile's 64 rows, and more than a
                // strip of the interpreter.
                for n in [1, 3, 4, 8, 13, 64, 300] {
                    let columns: Vec<Vec<u64>> = (0..3)
                        .map(|_| (0..n + 2).map(|_| random()).collect())
                        .collect();
                    let mut out = vec![0; n];
                    let given = [&columns[0][..], &columns[1][..], &columns[2][..]];
                    stencil.run(given, &mut out, &mut scratch);
                    // Cell (x, y)'s neighbour (x, y + r − 1), from the column it lies in.
                    let cell = |x: i32, y: usize, r: usize| -> u16 {
                        let (column, bit) = match x {
                            -1 => (0, 63),
                            64 => (2, 0),
                            x => (1, x),
                        };
                        (columns[column][y + r] >> bit & 1) as u16
                    };
                    for (y, &word) in out.iter().enumerate() {
                        for x in 0..64 {
                            let mut cells = 0u16;
                            for r in 0..3 {
                                for c in 0..3 {
                                    cells |= cell(x + c as i32 - 1, y, r) << (3 * r + c);
                                }
                            }
                            assert_eq!(
                                word >> x & 1 == 1,
                                circuit.eval(cells),
                                "{rule}, {isa:?}, {n} rows, cell ({x}, {y})"
                            );
                        }
                    }
                }
            }
        }
    }
}
