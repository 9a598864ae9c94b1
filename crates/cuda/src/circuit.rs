//! A rule as a circuit of three-input logic operations (the GPU's `LOP3`), for the bit-sliced
//! kernel: the host finds a small circuit for the rule and pastes it into the kernel's source,
//! so that each rule costs only the operations it needs.
//!
//! The kernel sums each row's three cells into two bit planes (weights 1 and 2) and the three
//! rows' low planes into t0 (sum) and k0 (carry), and hands the rule's function `rule_next`
//! those, the three rows' planes a0, a1, b0, b1 (middle row), c0 and c1, and the nine cells (see
//! `kernels/bitsliced.cu`); NVCC drops what the function does not read, k0's operation
//! included. The function takes one of three routes (`Route`):
//! - Outer-totalistic Moore rules add the high planes into u0 (sum) and u1 (carry), so that the
//!   3×3 sum (centre included) is `t0 + 2·(u0 + k0) + 4·u1`, and find a circuit of the rule over
//!   (t0, u0, k0, u1, x) by Shannon expansion. For a few rules a smaller circuit found offline
//!   by an exact search (`EXACT`, from `tools/exact_circuit.py`) replaces both.
//! - Isotropic non-totalistic (Hensel) rules whose next state depends on the arrangement of the
//!   neighbours at no more than [`MAX_PREDICATES`] (alive, count) pairs take the same sums, and
//!   for each such pair a predicate over the cells (`Circuit::leaf`) that tells the
//!   arrangements apart: the Shannon expansion then runs over the sums and the predicates, the
//!   predicate of a pair mattering only where the sums say that count. Counting costs what it
//!   costs Life, and each row's sums are made once for the three rows they serve.
//! - Other rules (hexagonal and von Neumann neighbourhoods, isotropic rules of more predicates)
//!   evaluate the rule's whole [`Circuit`] over the nine cells.

use std::collections::HashMap;

use gol_core::rule::circuit::{self as cells, Circuit, Signal, FIRST_GATE, ONE, ZERO};
use gol_core::rule::{Family, Topology};
use gol_core::Rule;

/// The inputs of the Shannon-expanded circuits, in truth-table bit order, as the source names
/// them: the sums and the centre, then the arrangements' predicates (at most
/// [`MAX_PREDICATES`]).
const INPUTS: [&str; 7] = ["t0", "u0", "k0", "u1", "x", "p0", "p1"];

/// Inputs of a Shannon-expanded circuit before the predicates.
const SUM_INPUTS: usize = 5;

/// The most arrangement predicates a rule's Shannon expansion takes (its truth table has
/// 2^(5 + predicates) entries, in a `u128`); isotropic rules with more take the cells' route.
pub const MAX_PREDICATES: usize = INPUTS.len() - SUM_INPUTS;

/// The inputs of an exact circuit (its signals 0 to 8; gate `n` is signal 9 + n), as the kernel
/// names them: t0 and k0 (made from the three low planes, k0 for one operation more where a
/// circuit reads it), the centre, and the three rows' planes.
const SIGNALS: [&str; 9] = ["t0", "x", "k0", "a0", "a1", "b0", "b1", "c0", "c1"];

/// [`SIGNALS`] that cost an operation each where a circuit reads them.
const MADE_SIGNALS: [usize; 2] = [0, 2];

/// One operation of an exact circuit: its three signals (weighing 4, 2 and 1 in the table's
/// index) and its LOP3 table.
type Gate = ([usize; 3], u8);

/// Circuits found offline by an exact search (a SAT solver over circuits of n three-input gates
/// of any function, with n rising until one exists; `tools/exact_circuit.py`) for a rule's next
/// state as a function of [`SIGNALS`]. Entries that no cells produce are don't-cares: a live
/// centre makes the middle row's sum at least 1, a dead one at most 2. Life takes t0 and 5
/// operations (no circuit of 4 computes it from these signals), where the general route takes
/// t0, k0, u0, u1 and 4, and the circuit before these, over t0, k0, the high planes and the
/// centre alone, t0, k0 and 5.
///
/// Each rule has two circuits of as many operations: one for the kernels of up to 8
/// generations, and one for the deepest kernel (16 generations). ptxas schedules each circuit
/// differently, even its statements in another order, and measured on an H100 (docs/benchmarks/gpu-2d.md,
/// "Life in t0 and five LOP3s" and "Circuits of equal size, measured"): the shallow kernels'
/// circuit (the first an earlier form of the search found) ran the depth-8 kernel 17–21%
/// faster at 2048² and 4096² than one of depth 3. The deepest kernel's (the first the search
/// prints now, its first two statements swapped) ran it 3% faster at 65536² than either of
/// those two, and 5% faster at 16384² than the one of depth 3.
const EXACT: &[(Rule, [&[Gate]; 2])] = &[(
    Rule::LIFE,
    [
        &[
            ([3, 7, 0], 0x7e),
            ([4, 8, 9], 0xd6),
            ([4, 5, 8], 0xe8),
            ([6, 10, 11], 0xbc),
            ([1, 0, 12], 0x54),
        ],
        &[
            ([3, 7, 8], 0x6a),
            ([0, 5, 6], 0xa8),
            ([4, 10, 9], 0x16),
            ([8, 9, 11], 0x8a),
            ([0, 1, 12], 0xa8),
        ],
    ],
)];

/// LOP3 table of `select ? one : zero` for inputs (select, zero, one).
const MUX: u8 = 0xac;

/// A truth table over `n` inputs: bit `i` is the value at entry `i`, whose input `v` is bit `v`
/// of `i` (2^n entries, n at most 7).
type Table = u128;

/// The entries of a table over `n` inputs.
fn entries(n: usize) -> impl Iterator<Item = u32> {
    0..1u32 << n
}

/// The table of the constant 1 over `n` inputs.
fn ones(n: usize) -> Table {
    Table::MAX >> (128 - (1 << n))
}

/// The table of input `v` over `n` inputs.
fn input_table(v: usize, n: usize) -> Table {
    entries(n)
        .filter(|i| i >> v & 1 == 1)
        .fold(0, |t, i| t | 1 << i)
}

/// The next state for every entry of the sums (t0, u0, k0, u1), the centre x and the
/// predicates of `leaves`' (alive, count) pairs (complemented where inverted), in the order of
/// [`INPUTS`]; the entries with a live centre and a sum of 0 cannot occur (the centre counts
/// itself), so they are returned separately as don't-cares. A pair's predicate decides the
/// entries of its count, and no other.
fn truth_table(rule: Rule, leaves: &[Leaf]) -> (Table, Table) {
    let n = SUM_INPUTS + leaves.len();
    let (mut table, mut dont_care) = (0, 0);
    for i in entries(n) {
        let bit = |v: usize| i >> v & 1;
        let sum = bit(0) + 2 * (bit(1) + bit(2)) + 4 * bit(3);
        let alive = bit(4) == 1;
        if alive && sum == 0 {
            dont_care |= 1 << i;
            continue;
        }
        let count = sum - alive as u32;
        let next = match leaves
            .iter()
            .position(|l| l.alive == alive && l.count == count)
        {
            Some(p) => (bit(SUM_INPUTS + p) == 1) ^ leaves[p].inverted,
            None => rule.next(alive, count),
        };
        table |= (next as Table) << i;
    }
    (table, dont_care)
}

/// A node of the circuit.
#[derive(Clone, Debug)]
enum Node {
    /// All zeros or all ones.
    Const(bool),
    /// One of [`INPUTS`].
    Input(usize),
    /// A three-input operation (LOP3) of three nodes, with its 8-bit table: the nodes first to
    /// third weigh 4, 2 and 1 in the table's index.
    Lop3(Box<[Node; 3]>, u8),
}

impl Node {
    /// `select ? one : zero` for input `select`.
    fn mux(select: usize, zero: Node, one: Node) -> Node {
        Node::Lop3(Box::new([Node::Input(select), zero, one]), MUX)
    }
}

/// The LOP3 table of `f` of the operands (first to third, weighing 4, 2 and 1 in the table's
/// index).
fn lut(f: impl Fn([bool; 3]) -> bool) -> u8 {
    (0..8u8).fold(0, |lut, k| {
        lut | (f([k & 4 != 0, k & 2 != 0, k & 1 != 0]) as u8) << k
    })
}

/// A LOP3 of up to three operands (the missing ones zero) with table `lut`.
fn lop3(operands: Vec<Node>, lut: u8) -> Node {
    let mut operands = operands.into_iter();
    let mut next = || operands.next().unwrap_or(Node::Const(false));
    Node::Lop3(Box::new([next(), next(), next()]), lut)
}

/// Synthesis of tables over `n` inputs, remembering the circuit found for each table.
struct Shannon {
    n: usize,
    /// The table of each input.
    inputs: Vec<Table>,
    memo: HashMap<Table, (u32, Node)>,
}

impl Shannon {
    fn new(n: usize) -> Shannon {
        Shannon {
            n,
            inputs: (0..n).map(|v| input_table(v, n)).collect(),
            memo: HashMap::new(),
        }
    }

    /// The inputs a table depends on, as a bit mask.
    fn support(&self, table: Table) -> u32 {
        (0..self.n)
            .filter(|&v| self.cofactor(table, v, false) != self.cofactor(table, v, true))
            .fold(0, |m, v| m | 1 << v)
    }

    /// The table with input `v` fixed to `value`, as a table over all entries.
    fn cofactor(&self, table: Table, v: usize, value: bool) -> Table {
        let (mask, shift) = (self.inputs[v], 1 << v);
        if value {
            let kept = table & mask;
            kept | kept >> shift
        } else {
            let kept = table & !mask;
            kept | kept << shift
        }
    }

    /// The cheapest circuit found for `table`, and its operation count: a single LOP3 once
    /// three inputs or fewer remain; otherwise the cheaper of a Shannon expansion on each input
    /// in turn and a decomposition ([`Shannon::decompose`]).
    fn synthesise(&mut self, table: Table) -> (u32, Node) {
        if let Some(found) = self.memo.get(&table) {
            return found.clone();
        }
        let n = self.n;
        let vars = self.support(table);
        let result = if table == 0 || table == ones(n) {
            (0, Node::Const(table != 0))
        } else if let Some(v) = (0..n).find(|&v| table == self.inputs[v]) {
            (0, Node::Input(v))
        } else if vars.count_ones() <= 3 {
            let inputs: Vec<usize> = (0..n).filter(|v| vars >> v & 1 == 1).collect();
            // The table's entry with the LOP3's operands as given.
            let lut = lut(|operands| {
                let entry =
                    (inputs.iter().zip(operands)).fold(0, |e, (&v, on)| e | (on as u32) << v);
                table >> entry & 1 == 1
            });
            (1, lop3(inputs.into_iter().map(Node::Input).collect(), lut))
        } else {
            let shannon = (0..n)
                .filter(|v| vars >> v & 1 == 1)
                .map(|v| {
                    let (c0, n0) = self.synthesise(self.cofactor(table, v, false));
                    let (c1, n1) = self.synthesise(self.cofactor(table, v, true));
                    (c0 + c1 + 1, Node::mux(v, n0, n1))
                })
                .min_by_key(|(cost, _)| *cost)
                .expect("a table of four or more inputs has one");
            match self.decompose(table, vars) {
                Some(found) if found.0 < shannon.0 => found,
                _ => shannon,
            }
        };
        self.memo.insert(table, result.clone());
        result
    }

    /// The cheapest way found to write `table` (of the inputs in `vars`, four or more) as a
    /// function of a few of its inputs A and one function h of the others: where fixing A
    /// leaves, for each of its values, a constant, h or its complement. With one or two inputs
    /// in A that is one LOP3 of them and h; with three, one LOP3 of A telling its two kinds of
    /// values apart and one of that and h. `x & (t | p)` of a rule's sums and predicates, for
    /// example, costs two operations this way and more as a Shannon expansion.
    fn decompose(&mut self, table: Table, vars: u32) -> Option<(u32, Node)> {
        let support: Vec<usize> = (0..self.n).filter(|v| vars >> v & 1 == 1).collect();
        let mut best: Option<(u32, Node)> = None;
        for subset in 1u32..1 << support.len() {
            let a: Vec<usize> = (0..support.len())
                .filter(|i| subset >> i & 1 == 1)
                .map(|i| support[i])
                .collect();
            if a.len() > 3 || a.len() == support.len() {
                continue;
            }
            // The table with A fixed to each of its values (value bit i: input a[i]).
            let rows: Vec<Table> = (0..1u32 << a.len())
                .map(|value| {
                    a.iter()
                        .enumerate()
                        .fold(table, |t, (i, &v)| self.cofactor(t, v, value >> i & 1 == 1))
                })
                .collect();
            let all = ones(self.n);
            let Some(&h) = rows.iter().find(|&&r| r != 0 && r != all) else {
                continue;
            };
            // Each row as a function of h: (value where h is 0, where h is 1).
            let kinds: Option<Vec<(bool, bool)>> = rows
                .iter()
                .map(|&r| match r {
                    0 => Some((false, false)),
                    r if r == all => Some((true, true)),
                    r if r == h => Some((false, true)),
                    r if r == all ^ h => Some((true, false)),
                    _ => None,
                })
                .collect();
            let Some(kinds) = kinds else {
                continue;
            };
            let found = if a.len() <= 2 {
                // One LOP3 of A's inputs and h: operand i < a.len() is a[i], then h.
                let lut = lut(|operands| {
                    let value = (0..a.len()).fold(0, |v, i| v | (operands[i] as usize) << i);
                    let (off, on) = kinds[value];
                    if operands[a.len()] {
                        on
                    } else {
                        off
                    }
                });
                let (cost, h) = self.synthesise(h);
                let mut operands: Vec<Node> = a.iter().map(|&v| Node::Input(v)).collect();
                operands.push(h);
                (cost + 1, lop3(operands, lut))
            } else {
                let first = kinds[0];
                let Some(other) = kinds.iter().copied().find(|&k| k != first) else {
                    continue;
                };
                if kinds.iter().any(|&k| k != first && k != other) {
                    continue;
                }
                // g: whether A's value makes the row of the other kind.
                let g = rows
                    .iter()
                    .zip(&kinds)
                    .enumerate()
                    .filter(|(_, (_, &k))| k == other)
                    .fold(0, |t: Table, (value, _)| {
                        t | a.iter().enumerate().fold(all, |m, (i, &v)| {
                            m & if value >> i & 1 == 1 {
                                self.inputs[v]
                            } else {
                                all ^ self.inputs[v]
                            }
                        })
                    });
                let (g_cost, g) = self.synthesise(g);
                let (h_cost, h) = self.synthesise(h);
                // One LOP3 of g and h.
                let lut = lut(|[g, h, _]| {
                    let (off, on) = if g { other } else { first };
                    if h {
                        on
                    } else {
                        off
                    }
                });
                (g_cost + h_cost + 1, lop3(vec![g, h], lut))
            };
            if best.as_ref().is_none_or(|b| found.0 < b.0) {
                best = Some(found);
            }
        }
        best
    }
}

/// The cheapest circuit over the sums, the centre and `leaves`' predicates for the rule,
/// trying both values of the don't-care entries.
fn circuit(rule: Rule, leaves: &[Leaf]) -> (u32, Node) {
    let (table, dont_care) = truth_table(rule, leaves);
    let mut shannon = Shannon::new(SUM_INPUTS + leaves.len());
    let a = shannon.synthesise(table & !dont_care);
    let b = shannon.synthesise(table | dont_care);
    if b.0 < a.0 {
        b
    } else {
        a
    }
}

/// An (alive, count) pair whose next state depends on the arrangement of the neighbours, and
/// the predicate over the cells that tells it: the next state, or its complement where
/// `inverted` (a final NOT left to the LOP3 that reads it).
#[derive(Clone, Debug)]
struct Leaf {
    alive: bool,
    count: u32,
    predicate: Circuit,
    inverted: bool,
}

/// How the kernel's `rule_next` computes the next state (see the module's documentation).
enum Route {
    /// Exact circuits over the sums, from [`EXACT`]: for the shallow kernels and the deepest.
    Exact(&'static [&'static [Gate]; 2]),
    /// The sums and the centre, with the predicates of these pairs, by Shannon expansion.
    Sums(Vec<Leaf>),
    /// The rule's whole [`Circuit`] over the nine cells.
    Cells,
}

/// The route `rule` takes.
fn route(rule: Rule) -> Route {
    if let Some(gates) = exact(rule) {
        return Route::Exact(gates);
    }
    match rule.family() {
        Family::OuterTotalistic => Route::Sums(Vec::new()),
        Family::Isotropic => {
            let leaves: Vec<Leaf> = [false, true]
                .into_iter()
                .flat_map(|alive| (0..=8).map(move |count| (alive, count)))
                .filter_map(|(alive, count)| {
                    let leaf = Circuit::leaf(&rule, alive, count);
                    let (predicate, inverted) = leaf.split_not();
                    predicate.constant().is_none().then_some(Leaf {
                        alive,
                        count,
                        predicate,
                        inverted,
                    })
                })
                .collect();
            if leaves.len() <= MAX_PREDICATES {
                Route::Sums(leaves)
            } else {
                Route::Cells
            }
        }
        Family::Hexagonal | Family::VonNeumann => Route::Cells,
    }
}

/// The exact circuits for `rule`, where [`EXACT`] has them.
fn exact(rule: Rule) -> Option<&'static [&'static [Gate]; 2]> {
    // The circuit is the cells' logic, whatever the grid's edges.
    let cells = rule.on(Topology::Torus);
    EXACT
        .iter()
        .find(|(r, _)| *r == cells)
        .map(|(_, circuits)| circuits)
}

/// Whether `rule` has an exact circuit (found offline, `EXACT`) rather than the general one.
pub fn is_exact(rule: Rule) -> bool {
    exact(rule).is_some()
}

/// Whether the kernel keeps each row's cells beside its sums for `rule`: a rule that takes
/// the sums' route with predicates over the cells. Five words a row and level (the cells
/// shifted west, in place and east, and the two sum planes) make the deepest kernel spill, so
/// these rules run at most 8 generations a launch (`source::Shape::of`).
pub fn reads_sums_and_cells(rule: Rule) -> bool {
    matches!(route(rule), Route::Sums(leaves) if !leaves.is_empty())
}

/// Operations the rule's function takes per word, from the rows' planes and cells: LOP3s where
/// the circuit is made of them (t0 and k0 among them where it reads them), and a circuit's
/// gates (each one operation or two) for the predicates and the cells' route.
pub fn operations(rule: Rule) -> u32 {
    match route(rule) {
        Route::Exact(circuits) => {
            // The deepest kernel's circuit, which long runs use.
            let gates = circuits[1];
            let reads = |signal| gates.iter().any(|(inputs, _)| inputs.contains(&signal));
            let made = MADE_SIGNALS.into_iter().filter(|&s| reads(s)).count();
            (gates.len() + made) as u32
        }
        Route::Sums(leaves) => sums_operations(circuit(rule, &leaves).0, &leaves),
        Route::Cells => Circuit::new(&rule).gates().len() as u32,
    }
}

/// Operations of the sums' route: t0, k0, u0 and u1, the `expansion`'s LOP3s and the
/// predicates' gates.
fn sums_operations(expansion: u32, leaves: &[Leaf]) -> u32 {
    let predicates: usize = leaves.iter().map(|l| l.predicate.gates().len()).sum();
    4 + expansion + predicates as u32
}

/// `FULL_MASK` and `lop3<LUT>(a, b, c)` (the PTX instruction), which the rule's source uses.
pub const PREAMBLE: &str = "#define FULL_MASK 0xffffffffu\n\
    template <unsigned int LUT>\n\
    __device__ __forceinline__ unsigned int lop3(unsigned int a, unsigned int b, unsigned int c)\n{\n\
    \x20   unsigned int d;\n\
    \x20   asm(\"lop3.b32 %0, %1, %2, %3, %4;\" : \"=r\"(d) : \"r\"(a), \"r\"(b), \"r\"(c), \"n\"(LUT));\n\
    \x20   return d;\n}\n\n";

/// The parameters of the rule's function: the sums (see the module's documentation) and the
/// nine cells, cell `3r + c` of the neighbourhood as `cell{3r+c}` (the centre `cell4`).
const PARAMETERS: &str = "unsigned int t0, unsigned int k0, unsigned int a0, unsigned int a1,\n\
    \x20   unsigned int b0, unsigned int b1, unsigned int c0, unsigned int c1,\n\
    \x20   unsigned int cell0, unsigned int cell1, unsigned int cell2, unsigned int cell3,\n\
    \x20   unsigned int cell4, unsigned int cell5, unsigned int cell6, unsigned int cell7,\n\
    \x20   unsigned int cell8";

/// CUDA source of the rule for cuda-bitsliced's kernel: `rule_next<DEEP>(t0, k0, a0, a1, b0, b1,
/// c0, c1, cell0, …, cell8)`, the next state of the centre by the rule's route (see the module),
/// by the deepest kernel's circuit where `DEEP` and an exact route has one. NVCC drops the
/// inputs a route does not read, and the kernel's work for them.
pub fn source(rule: Rule) -> String {
    let mut body = String::new();
    let mut count = 0;
    let (ops, result) = match route(rule) {
        Route::Exact([shallow, deep]) => {
            body.push_str("    unsigned int x = cell4;\n");
            let (mut shallow_body, mut deep_body) = (String::new(), String::new());
            let result = exact_statements(shallow, &mut shallow_body, &mut count);
            let deep_result = exact_statements(deep, &mut deep_body, &mut count);
            body.push_str(&format!(
                "    if constexpr (DEEP) {{\n{deep_body}        return {deep_result};\n    }}\n\
                 {shallow_body}"
            ));
            (operations(rule), result)
        }
        Route::Sums(leaves) => {
            body.push_str("    unsigned int x = cell4;\n");
            for (p, leaf) in leaves.iter().enumerate() {
                let value = gate_statements(&leaf.predicate, &format!("p{p}_"), &mut body);
                body.push_str(&format!("    unsigned int p{p} = {value};\n"));
            }
            body.push_str("    unsigned int u0 = lop3<0x96>(a1, b1, c1);\n");
            body.push_str("    unsigned int u1 = lop3<0xe8>(a1, b1, c1);\n");
            let (expansion, node) = circuit(rule, &leaves);
            let ops = sums_operations(expansion, &leaves);
            (ops, emit(&node, &mut body, &mut count))
        }
        Route::Cells => {
            let circuit = Circuit::new(&rule);
            let value = gate_statements(&circuit, "g", &mut body);
            (circuit.gates().len() as u32, value)
        }
    };
    format!(
        "{PREAMBLE}\
         // The rule {rule} in {ops} operations.\n\
         template <bool DEEP>\n\
         __device__ __forceinline__ unsigned int rule_next({PARAMETERS})\n{{\n{body}    return {result};\n}}\n"
    )
}

/// Writes a statement for each gate of an exact circuit (see [`SIGNALS`]) and returns the name
/// of its output.
fn exact_statements(gates: &[Gate], body: &mut String, count: &mut usize) -> String {
    let mut names: Vec<String> = SIGNALS.iter().map(|s| s.to_string()).collect();
    for (inputs, lut) in gates {
        let [a, b, c] = inputs.map(|i| names[i].clone());
        let expression = format!("lop3<0x{lut:02x}>({a}, {b}, {c})");
        names.push(statement(body, count, &expression));
    }
    names.pop().expect("exact circuits have gates")
}

/// Writes a statement for each gate of `circuit` over the cells (gate `i` named
/// `{prefix}{i}`; NVCC fuses them into LOP3s) and returns the name of its output.
fn gate_statements(circuit: &Circuit, prefix: &str, body: &mut String) -> String {
    let name = |s: Signal| -> String {
        match s {
            ZERO => "0u".into(),
            ONE => "FULL_MASK".into(),
            s if s < FIRST_GATE => format!("cell{s}"),
            s => format!("{prefix}{}", s - FIRST_GATE),
        }
    };
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
        body.push_str(&format!("    unsigned int {prefix}{i} = {expression};\n"));
    }
    name(circuit.output())
}

/// Writes the statements computing `node` and returns the expression naming its value.
fn emit(node: &Node, body: &mut String, count: &mut usize) -> String {
    match node {
        Node::Const(false) => "0u".into(),
        Node::Const(true) => "0xffffffffu".into(),
        Node::Input(v) => INPUTS[*v].into(),
        Node::Lop3(operands, lut) => {
            let [a, b, c] = operands.each_ref().map(|o| emit(o, body, count));
            statement(body, count, &format!("lop3<0x{lut:02x}>({a}, {b}, {c})"))
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
        match node {
            Node::Const(c) => *c,
            Node::Input(v) => entry >> v & 1 == 1,
            Node::Lop3(operands, lut) => {
                let [a, b, c] = operands.each_ref().map(|o| eval(o, entry));
                lop3(*lut, a, b, c)
            }
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
            let (table, dont_care) = truth_table(rule, &[]);
            let (_, node) = circuit(rule, &[]);
            for entry in (0..32).filter(|&e| dont_care >> e & 1 == 0) {
                assert_eq!(
                    eval(&node, entry),
                    table >> entry & 1 == 1,
                    "{text} {entry}"
                );
            }
        }
    }

    /// The kernel's whole rule function by its route, as a function of a neighbourhood:
    /// `cells` bit 3r + c is the cell in row r, column c; the centre is bit 4.
    fn rule_function(rule: Rule) -> impl Fn(u32) -> bool {
        let route = route(rule);
        let shannon = match &route {
            Route::Sums(leaves) => Some(circuit(rule, leaves).1),
            _ => None,
        };
        let whole = Circuit::new(&rule);
        move |cells: u32| {
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
            match (&route, &shannon) {
                (Route::Exact(circuits), _) => {
                    let next = circuits.map(|gates| {
                        let mut signals = vec![t0, x, k0, a0, a1, b0, b1, c0, c1];
                        for (inputs, lut) in gates.iter() {
                            let [a, b, c] = inputs.map(|i| signals[i]);
                            signals.push(lop3(*lut, a, b, c));
                        }
                        signals[signals.len() - 1]
                    });
                    assert_eq!(next[0], next[1], "the two circuits of {rule} disagree");
                    next[1]
                }
                (Route::Sums(leaves), Some(node)) => {
                    let u0 = a1 ^ b1 ^ c1;
                    let u1 = (a1 as u8 + b1 as u8 + c1 as u8) >= 2;
                    let predicates = leaves.iter().map(|l| l.predicate.eval(cells as u16));
                    let entry = [t0, u0, k0, u1, x]
                        .into_iter()
                        .chain(predicates)
                        .enumerate()
                        .fold(0, |e, (v, bit)| e | (bit as u32) << v);
                    eval(node, entry)
                }
                _ => whole.eval(cells as u16),
            }
        }
    }

    /// Every neighbourhood's next state through the kernel's rule function for `text`.
    fn check_every_neighbourhood(text: &str) {
        let rule = Rule::parse(text).unwrap();
        let next_state = rule_function(rule);
        for cells in 0..512u32 {
            assert_eq!(
                next_state(cells),
                rule.next_cells(cells as u16),
                "{text} {cells:09b}"
            );
        }
    }

    #[test]
    fn isotropic_rules_of_few_predicates_count_by_sums() {
        for text in ["B2-a/S12", "B3/S23-a", "B2e3/S23", "B2-a3/S12-a"] {
            let rule = Rule::parse(text).unwrap();
            assert!(reads_sums_and_cells(rule), "{text}");
            check_every_neighbourhood(text);
        }
        // Many predicates, or another neighbourhood: the cells' route.
        for text in ["B2ce3aeijnqry4n/S1e2-a3ae4ejqt", "B2/S34H", "B2/S013V"] {
            let rule = Rule::parse(text).unwrap();
            assert!(matches!(route(rule), Route::Cells), "{text}");
            check_every_neighbourhood(text);
        }
        // Random letter sets at one or two counts on either side.
        let mut generator = gol_core::seed::SplitMix64::new(0x9e37_79b9_7f4a_7c15u64);
        let mut next = move || generator.next();
        let mut by_sums = 0;
        for _ in 0..60 {
            let mut side = || {
                let first = 1 + next() % 6;
                let counts = [first, first + 1 + next() % (7 - first)];
                let mut text = String::new();
                for &count in &counts[..1 + (next() % 2) as usize] {
                    let letters = gol_core::rule::hensel::LETTERS[count as usize];
                    let pick: String = letters.chars().filter(|_| next() % 2 == 0).collect();
                    text.push_str(&format!("{count}{pick}"));
                }
                text
            };
            let text = format!("B{}/S{}", side(), side());
            by_sums += reads_sums_and_cells(Rule::parse(&text).unwrap()) as usize;
            check_every_neighbourhood(&text);
        }
        assert!(by_sums >= 10, "{by_sums} of 60 random rules by sums");
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
            check_every_neighbourhood(text);
        }
    }

    #[test]
    fn life_takes_six_operations_and_every_rule_at_most_eleven() {
        // t0 and Life's exact circuit; t0, k0, u0, u1 and B36/S23's expansion.
        assert_eq!(operations(Rule::LIFE), 1 + 5);
        assert_eq!(operations(Rule::parse("B36/S23").unwrap()), 4 + 5);
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
                assert!(ops <= 11, "{text}: {ops}");
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
        assert_eq!(text.matches("lop3<0x").count(), 2 * 5, "{text}");
        assert!(
            text.contains("return n4;") && text.contains("return n9;"),
            "{text}"
        );
        let text = source(Rule::parse("B36/S23").unwrap());
        assert_eq!(text.matches("lop3<0x").count(), 2 + 5, "{text}");
    }
}
