//! A 2D rule as a circuit of bitwise operations over the nine cells of a neighbourhood: how the
//! bit-sliced engines run the rules that are not outer-totalistic Moore rules (isotropic
//! non-totalistic, hexagonal, von Neumann). `cpu-bitsliced` interprets it over strips of words;
//! `cuda-bitsliced` gets it as source.
//!
//! The circuit counts the rule's neighbourhood into bit planes with full and half adders, then
//! picks each cell's next state with a multiplexer tree over the count planes and the centre.
//! A leaf is a constant, or for a count where only some of Hensel's arrangements apply, a
//! predicate over the neighbours: the OR of one term per arrangement (the AND of its live
//! cells; for counts above 4, the NOR of its dead ones), built for whichever of the
//! arrangements in and out of the set are fewer. The count is known at the leaf, so a term
//! needs only the cells that tell its arrangement from the others of that count. Operations
//! are shared where they repeat and constants are folded as the circuit is built.

use std::collections::HashMap;

use super::{hensel, Rule};

/// A signal of the circuit: the cells (`0..9`, cell `3r + c` of the 3×3 square, the centre at
/// 4), the constants [`ZERO`] and [`ONE`], then gate `i` as `FIRST_GATE + i`.
pub type Signal = u16;

/// The all-zero signal.
pub const ZERO: Signal = 9;
/// The all-one signal.
pub const ONE: Signal = 10;
/// The signal of the first gate.
pub const FIRST_GATE: Signal = 11;

/// One operation of the circuit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Gate {
    /// `a & b`.
    And(Signal, Signal),
    /// `a | b`.
    Or(Signal, Signal),
    /// `a ^ b`.
    Xor(Signal, Signal),
    /// `a & !b`.
    AndNot(Signal, Signal),
    /// `!a`.
    Not(Signal),
    /// `a ^ b ^ c`: a full adder's sum.
    Xor3(Signal, Signal, Signal),
    /// At least two of `a`, `b`, `c`: a full adder's carry.
    Majority(Signal, Signal, Signal),
    /// `s ? one : zero`, as `Mux(s, one, zero)`.
    Mux(Signal, Signal, Signal),
}

/// A rule's next state as gates over a neighbourhood's cells, each gate's inputs earlier
/// signals.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Circuit {
    gates: Vec<Gate>,
    output: Signal,
}

impl Circuit {
    /// The circuit of a 2D rule.
    pub fn new(rule: &Rule) -> Circuit {
        let mut b = Builder::default();
        let counted: Vec<Signal> = (0..9)
            .filter(|&cell| rule.neighbourhood().mask() >> cell & 1 == 1)
            .collect();
        let size = counted.len();
        let planes = b.count(counted);
        let mut next = [ZERO; 2];
        for (alive, next) in next.iter_mut().enumerate() {
            let mut leaves: Vec<Signal> = (0..=size)
                .map(|count| b.leaf(rule, alive == 1, count))
                .collect();
            let last = *leaves.last().expect("a count of 0 at least");
            leaves.resize(1 << planes.len(), last);
            *next = b.select(&planes, &leaves);
        }
        let output = b.mux(4, next[1], next[0]);
        b.finish(output)
    }

    /// The next state of a cell (`alive` or not) with `count` counted live neighbours, as a
    /// circuit over the nine cells: a constant ([`Circuit::constant`]) where every arrangement
    /// of that count has the same next state, else a predicate over the neighbours that is
    /// right for arrangements of exactly `count` live neighbours (on others it may be
    /// anything). The leaves of [`Circuit::new`]'s multiplexer tree; a kernel that counts
    /// the neighbourhood its own way can pick them with its count.
    pub fn leaf(rule: &Rule, alive: bool, count: u32) -> Circuit {
        let mut b = Builder::default();
        let output = b.leaf(rule, alive, count as usize);
        b.finish(output)
    }

    /// The circuit's value if it is a constant (no gates, the output [`ZERO`] or [`ONE`]).
    pub fn constant(&self) -> Option<bool> {
        match self.output {
            ZERO => Some(false),
            ONE => Some(true),
            _ => None,
        }
    }

    /// The circuit without a final NOT, and whether it had one: for a consumer that takes the
    /// complement for free (a LOP3's table), one operation fewer.
    pub fn split_not(mut self) -> (Circuit, bool) {
        match self.gates.last() {
            Some(&Gate::Not(inner))
                if self.output == FIRST_GATE + self.gates.len() as Signal - 1 =>
            {
                self.gates.pop();
                self.output = inner;
                (self, true)
            }
            _ => (self, false),
        }
    }

    /// The gates, in order: gate `i` is signal `FIRST_GATE + i`.
    pub fn gates(&self) -> &[Gate] {
        &self.gates
    }

    /// The signal that is the next state.
    pub fn output(&self) -> Signal {
        self.output
    }

    /// The next state of the centre of `cells` (a 9-bit neighbourhood).
    pub fn eval(&self, cells: u16) -> bool {
        let mut values: Vec<bool> = (0..9).map(|bit| cells >> bit & 1 == 1).collect();
        values.extend([false, true]);
        for gate in &self.gates {
            let v = |s: &Signal| values[*s as usize];
            let value = match gate {
                Gate::And(a, b) => v(a) & v(b),
                Gate::Or(a, b) => v(a) | v(b),
                Gate::Xor(a, b) => v(a) ^ v(b),
                Gate::AndNot(a, b) => v(a) & !v(b),
                Gate::Not(a) => !v(a),
                Gate::Xor3(a, b, c) => v(a) ^ v(b) ^ v(c),
                Gate::Majority(a, b, c) => (v(a) as u8 + v(b) as u8 + v(c) as u8) >= 2,
                Gate::Mux(s, one, zero) => {
                    if v(s) {
                        v(one)
                    } else {
                        v(zero)
                    }
                }
            };
            values.push(value);
        }
        values[self.output as usize]
    }

    /// For each signal, the last gate that reads it (or `gates().len()` for the output), so
    /// that an interpreter can reuse its storage after that.
    pub fn last_uses(&self) -> Vec<usize> {
        let mut last = vec![0; FIRST_GATE as usize + self.gates.len()];
        for (i, gate) in self.gates.iter().enumerate() {
            for input in gate.inputs() {
                last[input as usize] = i;
            }
        }
        last[self.output as usize] = self.gates.len();
        last
    }
}

impl Gate {
    /// The signals the gate reads.
    pub fn inputs(&self) -> impl Iterator<Item = Signal> {
        let (a, b, c) = match *self {
            Gate::And(a, b) | Gate::Or(a, b) | Gate::Xor(a, b) | Gate::AndNot(a, b) => {
                (a, Some(b), None)
            }
            Gate::Not(a) => (a, None, None),
            Gate::Xor3(a, b, c) | Gate::Majority(a, b, c) | Gate::Mux(a, b, c) => {
                (a, Some(b), Some(c))
            }
        };
        std::iter::once(a).chain(b).chain(c)
    }

    /// The gate with its inputs renamed by `r`.
    fn renamed(&self, r: impl Fn(Signal) -> Signal) -> Gate {
        match *self {
            Gate::And(a, b) => Gate::And(r(a), r(b)),
            Gate::Or(a, b) => Gate::Or(r(a), r(b)),
            Gate::Xor(a, b) => Gate::Xor(r(a), r(b)),
            Gate::AndNot(a, b) => Gate::AndNot(r(a), r(b)),
            Gate::Not(a) => Gate::Not(r(a)),
            Gate::Xor3(a, b, c) => Gate::Xor3(r(a), r(b), r(c)),
            Gate::Majority(a, b, c) => Gate::Majority(r(a), r(b), r(c)),
            Gate::Mux(s, one, zero) => Gate::Mux(r(s), r(one), r(zero)),
        }
    }
}

/// Builds a circuit, sharing gates that repeat and folding constants.
#[derive(Default)]
struct Builder {
    gates: Vec<Gate>,
    known: HashMap<Gate, Signal>,
}

impl Builder {
    fn gate(&mut self, gate: Gate) -> Signal {
        let gate = match gate {
            Gate::And(a, b) if a > b => Gate::And(b, a),
            Gate::Or(a, b) if a > b => Gate::Or(b, a),
            Gate::Xor(a, b) if a > b => Gate::Xor(b, a),
            Gate::Xor3(a, b, c) => {
                let mut v = [a, b, c];
                v.sort_unstable();
                Gate::Xor3(v[0], v[1], v[2])
            }
            Gate::Majority(a, b, c) => {
                let mut v = [a, b, c];
                v.sort_unstable();
                Gate::Majority(v[0], v[1], v[2])
            }
            other => other,
        };
        if let Some(&signal) = self.known.get(&gate) {
            return signal;
        }
        let signal = FIRST_GATE + self.gates.len() as Signal;
        self.gates.push(gate);
        self.known.insert(gate, signal);
        signal
    }

    fn not(&mut self, a: Signal) -> Signal {
        match a {
            ZERO => ONE,
            ONE => ZERO,
            _ => match a.checked_sub(FIRST_GATE).map(|i| self.gates[i as usize]) {
                Some(Gate::Not(inner)) => inner,
                _ => self.gate(Gate::Not(a)),
            },
        }
    }

    fn and(&mut self, a: Signal, b: Signal) -> Signal {
        match (a, b) {
            (ZERO, _) | (_, ZERO) => ZERO,
            (ONE, x) | (x, ONE) => x,
            _ if a == b => a,
            _ => self.gate(Gate::And(a, b)),
        }
    }

    fn or(&mut self, a: Signal, b: Signal) -> Signal {
        match (a, b) {
            (ONE, _) | (_, ONE) => ONE,
            (ZERO, x) | (x, ZERO) => x,
            _ if a == b => a,
            _ => self.gate(Gate::Or(a, b)),
        }
    }

    fn xor(&mut self, a: Signal, b: Signal) -> Signal {
        match (a, b) {
            (ZERO, x) | (x, ZERO) => x,
            (ONE, x) | (x, ONE) => self.not(x),
            _ if a == b => ZERO,
            _ => self.gate(Gate::Xor(a, b)),
        }
    }

    /// `a & !b`.
    fn and_not(&mut self, a: Signal, b: Signal) -> Signal {
        match (a, b) {
            (ZERO, _) | (_, ONE) => ZERO,
            (x, ZERO) => x,
            (ONE, x) => self.not(x),
            _ if a == b => ZERO,
            _ => self.gate(Gate::AndNot(a, b)),
        }
    }

    /// `select ? one : zero`.
    fn mux(&mut self, select: Signal, one: Signal, zero: Signal) -> Signal {
        match (one, zero) {
            _ if one == zero => one,
            (ONE, ZERO) => select,
            (ZERO, ONE) => self.not(select),
            (x, ZERO) => self.and(select, x),
            (ZERO, x) => self.and_not(x, select),
            (ONE, x) => self.or(select, x),
            (x, ONE) => {
                let off = self.not(select);
                self.or(off, x)
            }
            _ => self.gate(Gate::Mux(select, one, zero)),
        }
    }

    /// The sum of `inputs` as bit planes, least significant first, from full and half adders.
    fn count(&mut self, inputs: Vec<Signal>) -> Vec<Signal> {
        let mut columns = vec![inputs];
        let mut weight = 0;
        while weight < columns.len() {
            while columns[weight].len() >= 2 {
                let column = &mut columns[weight];
                let (a, b) = (column.remove(0), column.remove(0));
                let c = (!column.is_empty()).then(|| column.remove(0));
                let (sum, carry) = match c {
                    Some(c) => (
                        self.gate(Gate::Xor3(a, b, c)),
                        self.gate(Gate::Majority(a, b, c)),
                    ),
                    None => (self.xor(a, b), self.and(a, b)),
                };
                columns[weight].push(sum);
                if columns.len() == weight + 1 {
                    columns.push(Vec::new());
                }
                columns[weight + 1].push(carry);
            }
            weight += 1;
        }
        columns
            .into_iter()
            .filter_map(|c| c.first().copied())
            .collect()
    }

    /// The next state of a cell (`alive` or not) with `count` counted live neighbours: a
    /// constant, or a predicate over the cells that picks the arrangements the rule names.
    fn leaf(&mut self, rule: &Rule, alive: bool, count: usize) -> Signal {
        if !rule.next(alive, count as u32) {
            return ZERO;
        }
        let Some(sets) = &rule.letters else {
            return ONE;
        };
        let set = sets[alive as usize][count];
        if set == hensel::all_letters(count) {
            return ONE;
        }
        let arrangements = |inside: bool| -> Vec<u16> {
            (0..512u16)
                .filter(|c| c & 16 == 0 && c.count_ones() as usize == count)
                .filter(|&c| (set >> hensel::letter_index(c) & 1 == 1) == inside)
                .collect()
        };
        let (named, others) = (arrangements(true), arrangements(false));
        let (terms, inverted) = if named.len() <= others.len() {
            (named, false)
        } else {
            (others, true)
        };
        let cells_of = |c: u16| -> Vec<Signal> {
            (0..9)
                .filter(|&bit| bit != 4 && c >> bit & 1 == 1)
                .collect()
        };
        let any = if count <= 4 {
            // The OR of the ANDs of each arrangement's live cells.
            let terms: Vec<Vec<Signal>> = terms.into_iter().map(cells_of).collect();
            self.sum_of_products(terms)
        } else {
            // An arrangement of this count is told by its dead cells all being dead: the OR
            // over arrangements of the NOR of their dead cells is the NOT of the AND over them
            // of the OR of their dead cells.
            let terms: Vec<Vec<Signal>> = terms
                .into_iter()
                .map(|arrangement| cells_of(!arrangement & 0x1ef))
                .collect();
            let none_dead = self.product_of_sums(terms);
            self.not(none_dead)
        };
        if inverted {
            self.not(any)
        } else {
            any
        }
    }

    /// The OR over `terms` of the AND of each term's signals, factored: the signal in most
    /// terms is taken out of them (`x & (rest) | others`), and so on down.
    fn sum_of_products(&mut self, terms: Vec<Vec<Signal>>) -> Signal {
        self.factored(terms, true)
    }

    /// The AND over `terms` of the OR of each term's signals, factored the same way
    /// (`(x | rest) & others`).
    fn product_of_sums(&mut self, terms: Vec<Vec<Signal>>) -> Signal {
        self.factored(terms, false)
    }

    /// [`Builder::sum_of_products`] where `products`, else [`Builder::product_of_sums`]: the
    /// two are the same factoring with AND and OR (and their identities) swapped.
    fn factored(&mut self, terms: Vec<Vec<Signal>>, products: bool) -> Signal {
        let (outer_identity, inner_identity) = if products { (ZERO, ONE) } else { (ONE, ZERO) };
        if terms.is_empty() {
            return outer_identity;
        }
        if terms.iter().any(|t| t.is_empty()) {
            return inner_identity;
        }
        let top = most_common(&terms);
        let (with, without): (Vec<_>, Vec<_>) = terms.into_iter().partition(|t| t.contains(&top));
        let rest: Vec<Vec<Signal>> = with
            .into_iter()
            .map(|t| t.into_iter().filter(|&s| s != top).collect())
            .collect();
        let rest = self.factored(rest, products);
        let without = self.factored(without, products);
        if products {
            let with = self.and(top, rest);
            self.or(with, without)
        } else {
            let with = self.or(top, rest);
            self.and(with, without)
        }
    }

    /// The leaf that the count in `planes` (least significant first) picks.
    fn select(&mut self, planes: &[Signal], leaves: &[Signal]) -> Signal {
        let Some((&top, lower)) = planes.split_last() else {
            return leaves[0];
        };
        let half = leaves.len() / 2;
        let low = self.select(lower, &leaves[..half]);
        let high = self.select(lower, &leaves[half..]);
        self.mux(top, high, low)
    }

    /// The circuit computing `output`, without the gates it does not need.
    fn finish(self, output: Signal) -> Circuit {
        let mut needed = vec![false; FIRST_GATE as usize + self.gates.len()];
        needed[output as usize] = true;
        for (i, gate) in self.gates.iter().enumerate().rev() {
            if needed[FIRST_GATE as usize + i] {
                for input in gate.inputs() {
                    needed[input as usize] = true;
                }
            }
        }
        let mut renamed: Vec<Signal> = (0..FIRST_GATE).collect();
        let mut gates = Vec::new();
        for (i, gate) in self.gates.iter().enumerate() {
            let new = FIRST_GATE + gates.len() as Signal;
            renamed.push(new);
            if needed[FIRST_GATE as usize + i] {
                gates.push(gate.renamed(|s| renamed[s as usize]));
            }
        }
        Circuit {
            gates,
            output: renamed[output as usize],
        }
    }
}

/// Cells in the order [`most_common`] prefers among equals: the centres of the top and bottom
/// rows, then of the side columns, then the corners. Taking out an edge's centre first leaves
/// the cells beside it in the rest (`c1 & (c0 | c2)`), so that a factor reads one row alone;
/// the GPU kernel streams rows, and NVCC makes such a factor of a row once for the two rows it
/// serves as the top and the bottom of a neighbourhood.
const PREFERENCE: [Signal; 9] = [1, 7, 3, 5, 0, 2, 6, 8, 4];

/// The signal found in the most terms (the first of equals in [`PREFERENCE`]).
fn most_common(terms: &[Vec<Signal>]) -> Signal {
    let mut counts = [0usize; 9];
    for &s in terms.iter().flatten() {
        counts[s as usize] += 1;
    }
    PREFERENCE
        .iter()
        .rev()
        .copied()
        .max_by_key(|&s| counts[s as usize])
        .expect("nine cells")
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn circuits_give_every_neighbourhood_its_next_state() {
        for text in [
            "B3/S23",
            "B2-a/S12",
            "B3/S23-a",
            "B2e3/S23",
            "B2ce3aeijnqry4n/S1e2-a3ae4ejqt",
            "B3-cnqy5-e/S2-ck3-i6n7e",
            "B2/S34H",
            "B2/S013V",
            "B/S",
            "B012345678/S012345678",
            "B0123456/S0123456H",
            "B1c2-k5e6-n8/S0",
        ] {
            let rule = Rule::parse(text).unwrap();
            let circuit = Circuit::new(&rule);
            for cells in 0..512u16 {
                assert_eq!(
                    circuit.eval(cells),
                    rule.next_cells(cells),
                    "{text} {cells:09b}"
                );
            }
        }
    }

    #[test]
    fn leaves_give_the_next_state_of_their_count() {
        for text in [
            "B2-a/S12",
            "B3/S23-a",
            "B2ce3aeijnqry4n/S1e2-a3ae4ejqt",
            "B3-cnqy5-e/S2-ck3-i6n7e",
            "B1c2-k5e6-n8/S0",
            "B3/S23",
            "B2/S34H",
        ] {
            let rule = Rule::parse(text).unwrap();
            let mask = rule.neighbourhood().mask();
            let mut predicates = 0;
            for alive in [false, true] {
                for count in 0..=8 {
                    let leaf = Circuit::leaf(&rule, alive, count);
                    predicates += leaf.constant().is_none() as usize;
                    for cells in (0..512u16)
                        .filter(|c| (c & mask).count_ones() == count && (c >> 4 & 1 == 1) == alive)
                    {
                        let next = rule.next_cells(cells);
                        assert_eq!(leaf.eval(cells), next, "{text} {cells:09b}");
                        let (split, inverted) = leaf.clone().split_not();
                        assert_eq!(split.eval(cells) ^ inverted, next, "{text} {cells:09b}");
                        if let Some(value) = leaf.constant() {
                            assert_eq!(value, next, "{text} {cells:09b}");
                        }
                    }
                }
            }
            let letters = rule.family() == crate::rule::Family::Isotropic;
            assert_eq!(predicates > 0, letters, "{text}: {predicates} predicates");
        }
    }

    #[test]
    fn gates_read_only_earlier_signals() {
        let circuit = Circuit::new(&Rule::parse("B2ce3aeijnqry4n/S1e2-a3ae4ejqt").unwrap());
        for (i, gate) in circuit.gates().iter().enumerate() {
            assert!(gate
                .inputs()
                .all(|s| s < FIRST_GATE + i as Signal && s != ZERO && s != ONE));
        }
        let last = circuit.last_uses();
        assert_eq!(last[circuit.output() as usize], circuit.gates().len());
    }

    #[test]
    fn just_friends_costs_a_few_gates_beyond_counting() {
        // Counting 8 cells takes 4 full and 3 half adders (14 gates); B2-a/S12 adds the
        // predicate of 2a (8 pairs, factored to 11 gates) and the leaves' multiplexers.
        let gates = Circuit::new(&Rule::parse("B2-a/S12").unwrap())
            .gates()
            .len();
        assert!(gates <= 36, "{gates}");
        let gates = Circuit::new(&Rule::parse("B2/S34H").unwrap()).gates().len();
        assert!(gates <= 15, "{gates}");
    }
}
