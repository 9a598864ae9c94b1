//! A rule as a circuit of three-input logic operations (the GPU's `LOP3`), for the bit-sliced
//! kernel: the host finds a small circuit for the rule and pastes it into the kernel's source,
//! so that each rule costs only the operations it needs.
//!
//! The kernel sums each row's three cells into two bit planes (weights 1 and 2) and the three
//! rows' low planes into t0 (sum) and k0 (carry); the circuit takes it from there, from t0, k0,
//! the three rows' high planes a1, b1 (middle row) and c1, and the centre cell x (see
//! `kernels/bitsliced.cu`). For most rules it adds the high planes into u0 (sum) and u1 (carry),
//! so that the 3×3 sum (centre included) is `t0 + 2·(u0 + k0) + 4·u1`, and finds a circuit of
//! the rule over (t0, u0, k0, u1, x) by Shannon expansion. For a few rules a smaller circuit
//! found offline by an exact search (`EXACT`, from `tools/exact_circuit.py`) replaces both.

use std::collections::HashMap;

use gol_core::rule::circuit::{self as cells, Circuit, Signal, FIRST_GATE, ONE, ZERO};
use gol_core::rule::{Family, Topology};
use gol_core::Rule;

/// The inputs of the Shannon-expanded circuits, in truth-table bit order, as the source names
/// them.
const INPUTS: [&str; 5] = ["t0", "u0", "k0", "u1", "x"];

/// The inputs of an exact circuit (its signals 0 to 5; gate `n` is signal 6 + n), as the kernel
/// names them.
const SIGNALS: [&str; 6] = ["t0", "x", "k0", "a1", "b1", "c1"];

/// One operation of an exact circuit: its three signals (weighing 4, 2 and 1 in the table's
/// index) and its LOP3 table.
type Gate = ([usize; 3], u8);

/// Circuits found offline by an exact search (a SAT solver over circuits of n three-input gates
/// of any function, with n rising until one exists) for the function of [`SIGNALS`] that a
/// rule's next state is. Entries that no cells produce are don't-cares: a live centre makes the
/// middle row's sum at least 1 (so with b1 = 0 the middle row's low bit is 1, and t0 = k0 = 0
/// cannot occur), a dead one at most 2 (so with b1 = 1 the low bit is 0, and t0 = k0 = 1
/// cannot occur). Life takes 5 operations where the general route takes 6 (2 for u0 and u1,
/// 4 for the rule); no circuit of 4 exists.
const EXACT: &[(Rule, &[Gate])] = &[(
    Rule::LIFE,
    &[
        ([0, 1, 2], 0x7c),
        ([0, 2, 4], 0x69),
        ([0, 6, 7], 0x9b),
        ([3, 5, 7], 0x43),
        ([6, 8, 9], 0x92),
    ],
)];

/// LOP3 table of `select ? one : zero` for inputs (select, zero, one).
const MUX: u8 = 0xac;

/// Truth table of one input over all 32 entries.
fn input_table(v: usize) -> u32 {
    (0..32u32)
        .filter(|i| i >> v & 1 == 1)
        .fold(0, |t, i| t | 1 << i)
}

/// The rule's next state for every entry; the entry with a live centre and a sum of 0 cannot
/// occur (the centre counts itself), so it is returned separately as a don't-care.
fn truth_table(rule: Rule) -> (u32, u32) {
    let mut table = 0;
    for i in 0..32u32 {
        let bit = |v: u32| i >> v & 1;
        let sum = bit(0) + 2 * (bit(1) + bit(2)) + 4 * bit(3);
        let alive = bit(4) == 1;
        let next = if alive {
            sum >= 1 && rule.next(true, sum - 1)
        } else {
            rule.next(false, sum)
        };
        table |= (next as u32) << i;
    }
    (table, 1 << 16)
}

/// A node of the circuit.
#[derive(Clone, Debug)]
enum Node {
    /// All zeros or all ones.
    Const(bool),
    /// One of [`INPUTS`].
    Input(usize),
    /// A three-input operation of inputs (fewer are padded with constants): LOP3 with its
    /// 8-bit table, inputs first to third weighing 4, 2 and 1 in the table's index.
    Lop3([Option<usize>; 3], u8),
    /// `select ? one : zero`.
    Mux(usize, Box<Node>, Box<Node>),
}

/// The inputs a table depends on, as a bit mask.
fn support(table: u32) -> u32 {
    (0..5)
        .filter(|&v| cofactor(table, v, false) != cofactor(table, v, true))
        .fold(0, |m, v| m | 1 << v)
}

/// The table with input `v` fixed to `value`, as a table over all 32 entries.
fn cofactor(table: u32, v: usize, value: bool) -> u32 {
    let mut out = 0;
    for i in 0..32u32 {
        let j = if value { i | 1 << v } else { i & !(1 << v) };
        out |= (table >> j & 1) << i;
    }
    out
}

/// The cheapest circuit found for `table` (Shannon expansion on each input in turn, a single
/// LOP3 once three inputs or fewer remain) and its operation count.
fn synthesise(table: u32, memo: &mut HashMap<u32, (u32, Node)>) -> (u32, Node) {
    if let Some(found) = memo.get(&table) {
        return found.clone();
    }
    let vars = support(table);
    let result = if table == 0 || table == u32::MAX {
        (0, Node::Const(table != 0))
    } else if let Some(v) = (0..5).find(|&v| table == input_table(v)) {
        (0, Node::Input(v))
    } else if vars.count_ones() <= 3 {
        let inputs: Vec<usize> = (0..5).filter(|v| vars >> v & 1 == 1).collect();
        let mut lut = 0u8;
        for k in 0..8u32 {
            // The table's entry with the LOP3 inputs as in k (the first input weighs 4).
            let entry = inputs
                .iter()
                .enumerate()
                .filter(|&(n, _)| k >> (2 - n) & 1 == 1)
                .fold(0u32, |e, (_, &v)| e | 1 << v);
            lut |= ((table >> entry & 1) as u8) << k;
        }
        let mut padded = [None; 3];
        for (slot, &v) in padded.iter_mut().zip(&inputs) {
            *slot = Some(v);
        }
        (1, Node::Lop3(padded, lut))
    } else {
        (0..5)
            .filter(|v| vars >> v & 1 == 1)
            .map(|v| {
                let (c0, n0) = synthesise(cofactor(table, v, false), memo);
                let (c1, n1) = synthesise(cofactor(table, v, true), memo);
                (c0 + c1 + 1, Node::Mux(v, Box::new(n0), Box::new(n1)))
            })
            .min_by_key(|(cost, _)| *cost)
            .expect("a table of four or more inputs has one")
    };
    memo.insert(table, result.clone());
    result
}

/// The cheapest circuit for the rule, trying both values of the don't-care entry.
fn circuit(rule: Rule) -> (u32, Node) {
    let (table, dont_care) = truth_table(rule);
    let mut memo = HashMap::new();
    let a = synthesise(table & !dont_care, &mut memo);
    let b = synthesise(table | dont_care, &mut memo);
    if b.0 < a.0 {
        b
    } else {
        a
    }
}

/// The exact circuit for `rule`, where [`EXACT`] has one.
fn exact(rule: Rule) -> Option<&'static [Gate]> {
    // The circuit is the cells' logic, whatever the grid's edges.
    let cells = rule.on(Topology::Torus);
    EXACT
        .iter()
        .find(|(r, _)| *r == cells)
        .map(|(_, gates)| *gates)
}

/// Whether `rule` has an exact circuit (found offline, `EXACT`) rather than the general one.
pub fn is_exact(rule: Rule) -> bool {
    exact(rule).is_some()
}

/// Whether the rule reads each cell's whole neighbourhood (a family other than outer-totalistic
/// Moore rules): the kernel then keeps each row's cells rather than its sums (`CELL_RULE`).
pub fn reads_cells(rule: Rule) -> bool {
    rule.family() != Family::OuterTotalistic
}

/// Operations the rule's circuit takes per word (for a rule that reads cells, the circuit's
/// gates, each one operation or two).
pub fn operations(rule: Rule) -> u32 {
    if reads_cells(rule) {
        return Circuit::new(&rule).gates().len() as u32;
    }
    match exact(rule) {
        Some(gates) => gates.len() as u32,
        None => 2 + circuit(rule).0,
    }
}

/// `FULL_MASK` and `lop3<LUT>(a, b, c)` (the PTX instruction), which the rule's source uses.
const PREAMBLE: &str = "#define FULL_MASK 0xffffffffu\n\
    template <unsigned int LUT>\n\
    __device__ __forceinline__ unsigned int lop3(unsigned int a, unsigned int b, unsigned int c)\n{\n\
    \x20   unsigned int d;\n\
    \x20   asm(\"lop3.b32 %0, %1, %2, %3, %4;\" : \"=r\"(d) : \"r\"(a), \"r\"(b), \"r\"(c), \"n\"(LUT));\n\
    \x20   return d;\n}\n\n";

/// CUDA source of the rule for cuda-bitsliced's kernel: `rule_circuit(t0, k0, a1, b1, c1, x)`
/// built from LOP3s for an outer-totalistic Moore rule, or `CELL_RULE` and
/// `rule_cells(c0, …, c8)` from the rule's [`Circuit`] for the other families.
pub fn source(rule: Rule) -> String {
    if reads_cells(rule) {
        return cells_source(rule);
    }
    let mut body = String::new();
    let mut count = 0;
    let (ops, result) = match exact(rule) {
        Some(gates) => {
            let mut names: Vec<String> = SIGNALS.iter().map(|s| s.to_string()).collect();
            for (inputs, lut) in gates {
                let [a, b, c] = inputs.map(|i| names[i].clone());
                let expression = format!("lop3<0x{lut:02x}>({a}, {b}, {c})");
                names.push(statement(&mut body, &mut count, &expression));
            }
            let result = names.pop().expect("exact circuits have gates");
            (gates.len() as u32, result)
        }
        None => {
            body.push_str("    unsigned int u0 = lop3<0x96>(a1, b1, c1);\n");
            body.push_str("    unsigned int u1 = lop3<0xe8>(a1, b1, c1);\n");
            let (ops, node) = circuit(rule);
            (2 + ops, emit(&node, &mut body, &mut count))
        }
    };
    format!(
        "{PREAMBLE}\
         // The rule {rule} as {ops} three-input logic operations.\n\
         __device__ __forceinline__ unsigned int rule_circuit(unsigned int t0, unsigned int k0,\n\
         \x20   unsigned int a1, unsigned int b1, unsigned int c1, unsigned int x)\n{{\n{body}    return {result};\n}}\n"
    )
}

/// The source of `rule_cells(c0, …, c8)` (cell `3r + c` of the neighbourhood as `c{3r+c}`, the
/// centre `c4`): the rule's [`Circuit`], a statement a gate (NVCC fuses them into LOP3s).
fn cells_source(rule: Rule) -> String {
    let circuit = Circuit::new(&rule);
    let name = |s: Signal| -> String {
        match s {
            ZERO => "0u".into(),
            ONE => "FULL_MASK".into(),
            s if s < FIRST_GATE => format!("c{s}"),
            s => format!("g{}", s - FIRST_GATE),
        }
    };
    let mut body = String::new();
    for (i, gate) in circuit.gates().iter().enumerate() {
        let expression = match *gate {
            cells::Gate::And(a, b) => format!("{} & {}", name(a), name(b)),
            cells::Gate::Or(a, b) => format!("{} | {}", name(a), name(b)),
            cells::Gate::Xor(a, b) => format!("{} ^ {}", name(a), name(b)),
            cells::Gate::AndNot(a, b) => format!("{} & ~{}", name(a), name(b)),
            cells::Gate::Not(a) => format!("~{}", name(a)),
            cells::Gate::Xor3(a, b, c) => format!("{} ^ {} ^ {}", name(a), name(b), name(c)),
            cells::Gate::Majority(a, b, c) => {
                format!("lop3<0xe8>({}, {}, {})", name(a), name(b), name(c))
            }
            cells::Gate::Mux(s, one, zero) => {
                format!(
                    "lop3<0x{MUX:02x}>({}, {}, {})",
                    name(s),
                    name(zero),
                    name(one)
                )
            }
        };
        body.push_str(&format!("    unsigned int g{i} = {expression};\n"));
    }
    let cells: Vec<String> = (0..9).map(|c| format!("unsigned int c{c}")).collect();
    format!(
        "{PREAMBLE}#define CELL_RULE\n\
         // The rule {rule} as {} operations over the cells of the neighbourhood.\n\
         __device__ __forceinline__ unsigned int rule_cells({})\n{{\n{body}    return {};\n}}\n",
        circuit.gates().len(),
        cells.join(", "),
        name(circuit.output())
    )
}

/// Writes the statements computing `node` and returns the expression naming its value.
fn emit(node: &Node, body: &mut String, count: &mut usize) -> String {
    match node {
        Node::Const(false) => "0u".into(),
        Node::Const(true) => "0xffffffffu".into(),
        Node::Input(v) => INPUTS[*v].into(),
        Node::Lop3(inputs, lut) => {
            let name = |slot: &Option<usize>| slot.map_or("0u", |v| INPUTS[v]).to_string();
            let [a, b, c] = inputs.each_ref().map(name);
            statement(body, count, &format!("lop3<0x{lut:02x}>({a}, {b}, {c})"))
        }
        Node::Mux(v, zero, one) => {
            let zero = emit(zero, body, count);
            let one = emit(one, body, count);
            statement(
                body,
                count,
                &format!("lop3<0x{MUX:02x}>({}, {zero}, {one})", INPUTS[*v]),
            )
        }
    }
}

fn statement(body: &mut String, count: &mut usize, expression: &str) -> String {
    let name = format!("n{count}");
    *count += 1;
    body.push_str(&format!("    unsigned int {name} = {expression};\n"));
    name
}

#[cfg(test)]
mod test {
    use super::*;

    /// One bit of a LOP3: `lut`'s entry for inputs a, b, c (weighing 4, 2 and 1 in the index,
    /// PTX's convention).
    fn lop3(lut: u8, a: bool, b: bool, c: bool) -> bool {
        lut >> ((a as u8) << 2 | (b as u8) << 1 | c as u8) & 1 == 1
    }

    /// Evaluates the circuit on one entry (inputs as 0/1).
    fn eval(node: &Node, entry: u32) -> bool {
        let input = |v: usize| entry >> v & 1 == 1;
        match node {
            Node::Const(c) => *c,
            Node::Input(v) => input(*v),
            Node::Lop3([a, b, c], lut) => {
                let value = |s: &Option<usize>| s.is_some_and(input);
                lop3(*lut, value(a), value(b), value(c))
            }
            Node::Mux(v, zero, one) => lop3(MUX, input(*v), eval(zero, entry), eval(one, entry)),
        }
    }

    #[test]
    fn circuits_compute_their_rules() {
        for text in [
            "B3/S23",
            "B36/S23",
            "B2/S",
            "B/S",
            "B012345678/S012345678",
            "B0123478/S01234678",
            "B3678/S34678",
            "B1357/S1357",
        ] {
            let rule = Rule::parse(text).unwrap();
            let (table, dont_care) = truth_table(rule);
            let (_, node) = circuit(rule);
            for entry in (0..32).filter(|&e| dont_care >> e & 1 == 0) {
                assert_eq!(
                    eval(&node, entry),
                    table >> entry & 1 == 1,
                    "{text} {entry}"
                );
            }
        }
    }

    /// Evaluates the kernel's whole rule circuit (exact, or sums and Shannon circuit) on a
    /// neighbourhood: `cells` bit 3r + c is the cell in row r, column c; the centre is bit 4.
    fn next_state(rule: Rule, cells: u32) -> bool {
        let cell = |r: u32, c: u32| cells >> (3 * r + c) & 1 == 1;
        // A row's sum of three cells as its low and high bits.
        let row = |r: u32| {
            let n = (0..3).filter(|&c| cell(r, c)).count();
            (n & 1 == 1, n >= 2)
        };
        let ((a0, a1), (b0, b1), (c0, c1)) = (row(0), row(1), row(2));
        let t0 = a0 ^ b0 ^ c0;
        let k0 = (a0 as u8 + b0 as u8 + c0 as u8) >= 2;
        let x = cell(1, 1);
        match exact(rule) {
            Some(gates) => {
                let mut signals = vec![t0, x, k0, a1, b1, c1];
                for (inputs, lut) in gates {
                    let [a, b, c] = inputs.map(|i| signals[i]);
                    signals.push(lop3(*lut, a, b, c));
                }
                signals[signals.len() - 1]
            }
            None => {
                let u0 = a1 ^ b1 ^ c1;
                let u1 = (a1 as u8 + b1 as u8 + c1 as u8) >= 2;
                let entry = [t0, u0, k0, u1, x]
                    .iter()
                    .enumerate()
                    .fold(0, |e, (v, &bit)| e | (bit as u32) << v);
                eval(&circuit(rule).1, entry)
            }
        }
    }

    #[test]
    fn whole_circuits_give_every_neighbourhood_its_next_state() {
        for text in [
            "B3/S23",
            "B36/S23",
            "B2/S",
            "B3678/S34678",
            "B0123478/S01234678",
        ] {
            let rule = Rule::parse(text).unwrap();
            for cells in 0..512u32 {
                let alive = cells >> 4 & 1 == 1;
                let neighbours = (cells & !(1 << 4)).count_ones();
                assert_eq!(
                    next_state(rule, cells),
                    rule.next(alive, neighbours),
                    "{text} {cells:09b}"
                );
            }
        }
    }

    #[test]
    fn life_takes_five_operations_and_every_rule_at_most_nine() {
        assert_eq!(operations(Rule::LIFE), 5);
        assert_eq!(operations(Rule::parse("B36/S23").unwrap()), 2 + 5);
        for birth in (0..512u32).step_by(37) {
            for survive in (0..512u32).step_by(41) {
                let text = format!(
                    "B{}/S{}",
                    (0..9)
                        .filter(|n| birth >> n & 1 == 1)
                        .map(|n| n.to_string())
                        .collect::<String>(),
                    (0..9)
                        .filter(|n| survive >> n & 1 == 1)
                        .map(|n| n.to_string())
                        .collect::<String>()
                );
                let ops = operations(Rule::parse(&text).unwrap());
                assert!(ops <= 9, "{text}: {ops}");
            }
        }
    }

    #[test]
    fn the_source_names_every_step() {
        for (s, zero, one) in [
            (false, false, true),
            (true, false, true),
            (true, true, false),
        ] {
            assert_eq!(lop3(MUX, s, zero, one), if s { one } else { zero });
        }
        let text = source(Rule::LIFE);
        assert_eq!(text.matches("lop3<0x").count(), 5, "{text}");
        assert!(text.contains("return n4;"), "{text}");
        let text = source(Rule::parse("B36/S23").unwrap());
        assert_eq!(text.matches("lop3<0x").count(), 2 + 5, "{text}");
    }
}
