//! A rule's [`Circuit`] compiled to x86-64 machine code at run time, so that `cpu-bitsliced`
//! runs isotropic, hexagonal and von Neumann rules with the circuit's values in registers
//! instead of interpreting it a gate at a time over arrays (`program.rs`).
//!
//! The compiled function computes the next state of four words (one 256-bit AVX2 vector) of a
//! row per turn of its loop, and takes
//!
//! ```text
//! extern "sysv64" fn(above: *const u64, row: *const u64, below: *const u64,
//!                    out: *mut u64, vectors: usize, spill: *mut u64)
//! ```
//!
//! In the [`Layout::Rows`] layout, `above`, `row` and `below` point at the same word of three
//! rows. The centre column of the neighbourhood is that word; the west and east columns are the
//! word shifted by one with the edge bit of the word before or after it funnelled in, all in
//! registers. The rows are given with a word of margin on either side that makes the row's
//! ends right (see [`Compiled::rows`]).
//!
//! In the [`Layout::Columns`] layout (the infinite plane's tiles, whose words are the rows of
//! a 64-cell-wide square), the three pointers are to three columns of words instead, the
//! square's and the squares' to its west and east, each a word a row: the row above, at and
//! below are the words before, at and after, and the west and east cells come from the same
//! row of the neighbouring column (see [`Compiled::columns`]).
//!
//! Each gate becomes one to four AVX2 instructions (`vpand`, `vpor`, `vpxor`, `vpandn`,
//! `vpcmpeqq` for all ones) over `ymm0`–`ymm14`; `ymm15` is scratch for gates and cell loads.
//! For the AVX-512 path the same code is made with AVX-512VL's three-input `vpternlogq` on the
//! same registers for the gates of three inputs and NOT: one instruction, where AVX2 takes up to
//! four (and a copy first where no input of the gate is read for the last time, whose register
//! the output then takes), so a turn has about a third fewer instructions.
//! A cell is loaded when a gate first needs it. When every register is taken, the value whose
//! next use is furthest away gives up its register (Belady's choice): a cell or constant is
//! simply loaded again later, a gate's value is first stored in its own spill slot. The code
//! of one turn is straight-line, so where every value lives is known while compiling.
//!
//! Without AVX2, or off x86-64, circuits are interpreted.

// `dynasm!` converts the register numbers given to it with `.into()`, even from `u8` to `u8`.
#![allow(clippy::useless_conversion)]

use dynasmrt::x64::Assembler;
use dynasmrt::{dynasm, AssemblyOffset, DynasmApi, DynasmLabelApi, ExecutableBuffer};

use super::bitsliced::Isa;
use super::program::Layout;
use crate::rule::circuit::{Circuit, Gate, Signal, FIRST_GATE, ONE, ZERO};

/// Words a turn of the loop computes: one AVX2 vector.
pub(super) const VECTOR_WORDS: usize = 4;

/// Registers that hold values (`ymm0`..`ymm14`).
const REGISTERS: usize = 15;

/// The register gates use for their intermediate results.
const SCRATCH: u8 = 15;

/// A compiled entry point (see the module's documentation).
type Entry = extern "sysv64" fn(*const u64, *const u64, *const u64, *mut u64, usize, *mut u64);

/// The registers of the three row (or column) pointers: `rdi`, `rsi`, `rdx`.
const ROW_POINTERS: [u8; 3] = [7, 6, 2];

/// A circuit compiled for AVX2, or for AVX2 with AVX-512VL's `vpternlogq`.
pub(super) struct Compiled {
    code: ExecutableBuffer,
    entry: AssemblyOffset,
    /// Words of spill space a call needs.
    spill_words: usize,
    layout: Layout,
}

impl Compiled {
    /// `circuit` compiled for `isa` (AVX2, or AVX-512 with three-input logic) and `layout`;
    /// `None` for the portable path, if this CPU lacks the instructions, if the circuit's
    /// output is a constant (nothing to compute), or if executable memory cannot be had.
    pub(super) fn new(circuit: &Circuit, isa: Isa, layout: Layout) -> Option<Compiled> {
        let ternary = match isa {
            Isa::Portable => return None,
            Isa::Avx2 => false,
            Isa::Avx512 => true,
        };
        if !Isa::available().contains(&isa) || matches!(circuit.output(), ZERO | ONE) {
            return None;
        }
        let mut ops = Assembler::new().ok()?;
        let entry = ops.offset();
        function(&mut ops, circuit, ternary, layout);
        let code = ops.finalize().ok()?;
        Some(Compiled {
            code,
            entry,
            spill_words: circuit.gates().len() * VECTOR_WORDS,
            layout,
        })
    }

    /// Words of spill space a call needs.
    pub(super) fn spill_words(&self) -> usize {
        self.spill_words
    }

    /// For code compiled for [`Layout::Rows`]: the next states of `out.len() / VECTOR_WORDS`
    /// whole vectors of a row from the row above, the row and the row below, each given with a
    /// word of margin: word `k` of `out` is computed from words `k..=k + 2` of each. On a
    /// torus, a row's margins and padding are made so that the shifts bring its other end's
    /// cells in: the word before its first has the last cell at bit 63; the padding bit just
    /// past the last cell holds the first cell, or where the row fills its last word, the word
    /// after it has the first cell at bit 0.
    pub(super) fn rows(&self, rows: [&[u64]; 3], out: &mut [u64], spill: &mut [u64]) {
        assert_eq!(self.layout, Layout::Rows);
        self.call(rows, out, spill)
    }

    /// Runs the code over `out.len() / VECTOR_WORDS` vectors, reading words `0..=k + 2` of each
    /// of `words` for word `k` of `out` (the pointers passed are to their second word).
    fn call(&self, rows: [&[u64]; 3], out: &mut [u64], spill: &mut [u64]) {
        let vectors = out.len() / VECTOR_WORDS;
        if vectors == 0 {
            return;
        }
        assert!(
            rows.iter()
                .all(|row| row.len() >= vectors * VECTOR_WORDS + 2)
                && spill.len() >= self.spill_words,
            "compiled circuit given too little memory"
        );
        // SAFETY: the buffer holds the code assembled in `new` for the `Entry` signature
        // (System V ABI, AVX2 and for the AVX-512 path AVX-512F/VL, which `new` checked the
        // CPU has), executable while `self` lives.
        let function: Entry = unsafe { std::mem::transmute(self.code.ptr(self.entry)) };
        // SAFETY: the code reads words `0..vectors * VECTOR_WORDS + 2` of each (one before
        // the pointer given, one past the last vector), writes `vectors` vectors of `out` and at
        // most `spill_words` words of `spill`, all inside (checked above).
        let [above, row, below] = rows.map(|row| unsafe { row.as_ptr().add(1) });
        function(
            above,
            row,
            below,
            out.as_mut_ptr(),
            vectors,
            spill.as_mut_ptr(),
        );
    }

    /// For code compiled for [`Layout::Columns`]: the next states of `out.len() / VECTOR_WORDS`
    /// whole vectors of words of a column; `columns` are the west, centre and east columns,
    /// each a word a row with a row of margin above and below, so that word `k` of `out` is
    /// computed from words `k..=k + 2` of each.
    pub(super) fn columns(&self, columns: [&[u64]; 3], out: &mut [u64], spill: &mut [u64]) {
        assert_eq!(self.layout, Layout::Columns);
        self.call(columns, out, spill)
    }
}

/// Assembles the function of `circuit` for `layout`, with `vpternlogq` where `ternary`.
fn function(ops: &mut Assembler, circuit: &Circuit, ternary: bool, layout: Layout) {
    let mut turn = Turn::new(circuit, ternary, layout);
    let top = ops.new_dynamic_label();
    dynasm!(ops ; .arch x64 ; =>top);
    for (i, gate) in circuit.gates().iter().enumerate() {
        turn.gate(ops, i, gate);
    }
    let out = turn.ensure(ops, circuit.output(), circuit.gates().len(), &[]);
    dynasm!(ops
        ; .arch x64
        ; vmovdqu [rcx], Ry(out)
        ; add rdi, 32
        ; add rsi, 32
        ; add rdx, 32
        ; add rcx, 32
        ; sub r8, 1
        ; jnz =>top
        ; vzeroupper
        ; ret
    );
}

/// The register allocator's view of one turn of the loop while its code is generated.
struct Turn {
    /// For each signal, the gates that read it in order (the output counts as read by gate
    /// `gates.len()`).
    uses: Vec<Vec<usize>>,
    /// For each signal, the register holding it now.
    register: Vec<Option<u8>>,
    /// For each register, the signal it holds.
    holds: [Option<Signal>; REGISTERS],
    /// For each signal, whether its value is in its spill slot.
    spilled: Vec<bool>,
    /// Whether gates of three inputs and NOT are made with `vpternlogq`.
    ternary: bool,
    layout: Layout,
}

impl Turn {
    fn new(circuit: &Circuit, ternary: bool, layout: Layout) -> Turn {
        let signals = FIRST_GATE as usize + circuit.gates().len();
        let mut uses = vec![Vec::new(); signals];
        for (i, gate) in circuit.gates().iter().enumerate() {
            for input in gate.inputs() {
                if uses[input as usize].last() != Some(&i) {
                    uses[input as usize].push(i);
                }
            }
        }
        uses[circuit.output() as usize].push(circuit.gates().len());
        Turn {
            uses,
            register: vec![None; signals],
            holds: [None; REGISTERS],
            spilled: vec![false; signals],
            ternary,
            layout,
        }
    }

    /// The first gate after `now` that reads `signal`.
    fn next_use(&self, signal: Signal, now: usize) -> Option<usize> {
        self.uses[signal as usize]
            .iter()
            .copied()
            .find(|&gate| gate > now)
    }

    /// The code of gate `i`.
    fn gate(&mut self, ops: &mut Assembler, i: usize, gate: &Gate) {
        let mut inputs = [0u8; 3];
        let mut count = 0;
        for signal in gate.inputs() {
            inputs[count] = self.ensure(ops, signal, i, &inputs[..count]);
            count += 1;
        }
        // The function of a gate of three inputs, for `vpternlogq`.
        let three: Option<fn([bool; 3]) -> bool> = match *gate {
            _ if !self.ternary => None,
            Gate::Xor3(..) => Some(|[a, b, c]| a ^ b ^ c),
            Gate::Majority(..) => Some(|[a, b, c]| (a as u8 + b as u8 + c as u8) >= 2),
            Gate::Mux(..) => Some(|[s, one, zero]| if s { one } else { zero }),
            _ => None,
        };
        let d = if let Some(f) = three {
            // `vpternlogq d, b, c` reads d: an input read for the last time here lends its
            // register to the output; otherwise the output's register gets a copy of the first.
            let signals: Vec<Signal> = gate.inputs().collect();
            let dying = (0..3).find(|&k| self.next_use(signals[k], i).is_none());
            let k = dying.unwrap_or(0);
            let d = match dying {
                Some(k) => inputs[k],
                None => {
                    let d = self.free_register(ops, i, &inputs);
                    dynasm!(ops ; .arch x64 ; vmovdqa Ry(d), Ry(inputs[0]));
                    d
                }
            };
            let [b, c] = [(k + 1) % 3, (k + 2) % 3];
            let table = (0..8u8).fold(0, |table, at| {
                let mut values = [false; 3];
                values[k] = at & 4 != 0;
                values[b] = at & 2 != 0;
                values[c] = at & 1 != 0;
                table | (f(values) as u8) << at
            });
            dynasm!(ops ; .arch x64 ; .bytes vpternlogq(d, inputs[b], inputs[c], table).iter());
            d
        } else {
            // The output never shares a register with an input, so gates of several
            // instructions may write it before their last read of an input.
            let d = self.free_register(ops, i, &inputs[..count]);
            if self.ternary && matches!(gate, Gate::Not(..)) {
                // !b, whatever d held.
                dynasm!(ops ; .arch x64 ; .bytes vpternlogq(d, inputs[0], inputs[0], 0x33).iter());
            } else {
                self.avx2_gate(ops, gate, d, &inputs);
            }
            d
        };
        // Inputs read for the last time give up their registers.
        for signal in gate.inputs() {
            if self.next_use(signal, i).is_none() {
                if let Some(reg) = self.register[signal as usize].take() {
                    self.holds[reg as usize] = None;
                }
            }
        }
        let output = FIRST_GATE + i as Signal;
        if self.uses[output as usize].is_empty() {
            return;
        }
        self.register[output as usize] = Some(d);
        self.holds[d as usize] = Some(output);
    }

    /// The AVX2 code of `gate` into register `d` from the registers `inputs`.
    fn avx2_gate(&self, ops: &mut Assembler, gate: &Gate, d: u8, inputs: &[u8; 3]) {
        let r = |k: usize| inputs[k];
        match *gate {
            Gate::And(..) => dynasm!(ops ; .arch x64 ; vpand Ry(d), Ry(r(0)), Ry(r(1))),
            Gate::Or(..) => dynasm!(ops ; .arch x64 ; vpor Ry(d), Ry(r(0)), Ry(r(1))),
            Gate::Xor(..) => dynasm!(ops ; .arch x64 ; vpxor Ry(d), Ry(r(0)), Ry(r(1))),
            // `vpandn d, x, y` is `!x & y`.
            Gate::AndNot(..) => dynasm!(ops ; .arch x64 ; vpandn Ry(d), Ry(r(1)), Ry(r(0))),
            Gate::Not(..) => dynasm!(ops
                ; .arch x64
                ; vpcmpeqq Ry(SCRATCH), Ry(SCRATCH), Ry(SCRATCH)
                ; vpxor Ry(d), Ry(r(0)), Ry(SCRATCH)
            ),
            Gate::Xor3(..) => dynasm!(ops
                ; .arch x64
                ; vpxor Ry(SCRATCH), Ry(r(0)), Ry(r(1))
                ; vpxor Ry(d), Ry(SCRATCH), Ry(r(2))
            ),
            // At least two of a, b, c: ((a ^ c) & (b ^ c)) ^ c.
            Gate::Majority(..) => dynasm!(ops
                ; .arch x64
                ; vpxor Ry(SCRATCH), Ry(r(0)), Ry(r(2))
                ; vpxor Ry(d), Ry(r(1)), Ry(r(2))
                ; vpand Ry(d), Ry(d), Ry(SCRATCH)
                ; vpxor Ry(d), Ry(d), Ry(r(2))
            ),
            // s ? one : zero, as zero ^ (s & (one ^ zero)).
            Gate::Mux(..) => dynasm!(ops
                ; .arch x64
                ; vpxor Ry(SCRATCH), Ry(r(1)), Ry(r(2))
                ; vpand Ry(SCRATCH), Ry(SCRATCH), Ry(r(0))
                ; vpxor Ry(d), Ry(SCRATCH), Ry(r(2))
            ),
        }
    }

    /// A register holding `signal` for gate `now`, loading it if needed, without taking any
    /// of the registers in `keep`.
    fn ensure(&mut self, ops: &mut Assembler, signal: Signal, now: usize, keep: &[u8]) -> u8 {
        if let Some(reg) = self.register[signal as usize] {
            return reg;
        }
        let reg = self.free_register(ops, now, keep);
        match signal {
            ZERO => dynasm!(ops ; .arch x64 ; vpxor Ry(reg), Ry(reg), Ry(reg)),
            ONE => dynasm!(ops ; .arch x64 ; vpcmpeqq Ry(reg), Ry(reg), Ry(reg)),
            cell if cell < 9 => self.load_cell(ops, cell, reg),
            gate => {
                assert!(
                    self.spilled[gate as usize],
                    "gate {gate} read before it is computed"
                );
                let at = spill_offset(gate);
                dynasm!(ops ; .arch x64 ; vmovdqu Ry(reg), [r9 + at]);
            }
        }
        self.register[signal as usize] = Some(reg);
        self.holds[reg as usize] = Some(signal);
        reg
    }

    /// A register free for a new value at gate `now`, none of `keep`: an empty one, or the one
    /// whose value is read again last (stored to its spill slot first if it is a gate's value
    /// not stored yet).
    fn free_register(&mut self, ops: &mut Assembler, now: usize, keep: &[u8]) -> u8 {
        let candidates = (0..REGISTERS as u8).filter(|reg| !keep.contains(reg));
        if let Some(reg) = candidates
            .clone()
            .find(|&reg| self.holds[reg as usize].is_none())
        {
            return reg;
        }
        let reg = candidates
            .max_by_key(|&reg| {
                let signal = self.holds[reg as usize].expect("every register is taken");
                self.next_use(signal, now.saturating_sub(1))
                    .unwrap_or(usize::MAX)
            })
            .expect("more registers than a gate's inputs");
        let signal = self.holds[reg as usize]
            .take()
            .expect("every register is taken");
        self.register[signal as usize] = None;
        if signal >= FIRST_GATE && !self.spilled[signal as usize] {
            let at = spill_offset(signal);
            dynasm!(ops ; .arch x64 ; vmovdqu [r9 + at], Ry(reg));
            self.spilled[signal as usize] = true;
        }
        reg
    }
}

impl Turn {
    /// Loads cell `cell` (`3r + c`: row `r` above to below, column `c` west to east) into
    /// `reg`.
    fn load_cell(&self, ops: &mut Assembler, cell: Signal, reg: u8) {
        if self.layout == Layout::Columns {
            return load_from_columns(ops, cell, reg);
        }
        let base = ROW_POINTERS[usize::from(cell / 3)];
        dynasm!(ops ; .arch x64 ; vmovdqu Ry(reg), [Rq(base)]);
        match cell % 3 {
            // West: the word shifted up by one, the word before's top bit below.
            0 => dynasm!(ops
                ; .arch x64
                ; vpsllq Ry(reg), Ry(reg), 1
                ; vmovdqu Ry(SCRATCH), [Rq(base) - 8]
                ; .bytes vpsrlq(SCRATCH, 63).iter()
                ; vpor Ry(reg), Ry(reg), Ry(SCRATCH)
            ),
            // East: the word shifted down by one, the word after's bottom bit on top.
            2 => dynasm!(ops
                ; .arch x64
                ; .bytes vpsrlq(reg, 1).iter()
                ; vmovdqu Ry(SCRATCH), [Rq(base) + 8]
                ; vpsllq Ry(SCRATCH), Ry(SCRATCH), 63
                ; vpor Ry(reg), Ry(reg), Ry(SCRATCH)
            ),
            _ => {}
        }
    }
}

/// Loads cell `cell` (`3r + c`) into `reg` in the [`Layout::Columns`] layout: word `r` − 1 of
/// the centre column, shifted by one with the same word of the west or east column's edge bit
/// funnelled in.
fn load_from_columns(ops: &mut Assembler, cell: Signal, reg: u8) {
    let [west, centre, east] = ROW_POINTERS;
    let at = 8 * (i32::from(cell / 3) - 1);
    dynasm!(ops ; .arch x64 ; vmovdqu Ry(reg), [Rq(centre) + at]);
    match cell % 3 {
        // West: the word shifted up by one, the west column's top bit below.
        0 => dynasm!(ops
            ; .arch x64
            ; vpsllq Ry(reg), Ry(reg), 1
            ; vmovdqu Ry(SCRATCH), [Rq(west) + at]
            ; .bytes vpsrlq(SCRATCH, 63).iter()
            ; vpor Ry(reg), Ry(reg), Ry(SCRATCH)
        ),
        // East: the word shifted down by one, the east column's bottom bit on top.
        2 => dynasm!(ops
            ; .arch x64
            ; .bytes vpsrlq(reg, 1).iter()
            ; vmovdqu Ry(SCRATCH), [Rq(east) + at]
            ; vpsllq Ry(SCRATCH), Ry(SCRATCH), 63
            ; vpor Ry(reg), Ry(reg), Ry(SCRATCH)
        ),
        _ => {}
    }
}

/// `vpsrlq ymm(reg), ymm(reg), by`, encoded here: dynasm 5.1 encodes this form with VEX.L
/// clear, which shifts only the low 128 bits and zeroes the rest. The three-byte VEX prefix
/// `C4`: R and X unused (set, as they are stored inverted), B the register's fourth bit
/// (inverted), map `0F`; then W 0, vvvv the destination (inverted), L 1 (256 bits), pp `66`;
/// opcode `73 /2 ib` with the source in ModRM's r/m.
fn vpsrlq(reg: u8, by: u8) -> [u8; 6] {
    let b = !reg >> 3 & 1;
    [
        0xc4,
        0xc1 | b << 5,
        (!reg & 15) << 3 | 0b101,
        0x73,
        0xd0 | (reg & 7),
        by,
    ]
}

/// `vpternlogq ymm(d), ymm(b), ymm(c), table` (AVX-512F and VL), encoded here as dynasm 5.1
/// has no EVEX encodings: each bit of d becomes `table`'s bit `d << 2 | b << 1 | c` of d's, b's
/// and c's bits (registers below 16). EVEX prefix `62`; P0: R, X, B, R' (all stored inverted:
/// R and B the fourth bits of d and c, X and R' their fifth, zero here), map `0F3A`; P1: W 1,
/// vvvv the second operand b (inverted), pp `66`; P2: vector length 256, V' (b's fifth bit,
/// inverted), no masking; opcode `25 /r ib` with d in ModRM's reg and c in its r/m.
fn vpternlogq(d: u8, b: u8, c: u8, table: u8) -> [u8; 7] {
    let p0 = (!d >> 3 & 1) << 7 | 1 << 6 | (!c >> 3 & 1) << 5 | 1 << 4 | 0b11;
    let p1 = 1 << 7 | (!b & 15) << 3 | 1 << 2 | 0b01;
    let p2 = 0b0010_1000;
    [0x62, p0, p1, p2, 0x25, 0xc0 | (d & 7) << 3 | (c & 7), table]
}

/// Where gate signal `signal`'s value is spilled, in bytes from the spill area's start.
fn spill_offset(signal: Signal) -> i32 {
    i32::from(signal - FIRST_GATE) * (VECTOR_WORDS as i32 * 8)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rule::{Family, Rule};

    /// Rules whose circuits range from a few gates to more values than registers.
    const RULES: [&str; 7] = [
        "B3/S23-a",
        "B2-a/S12",
        "B2/S34H",
        "B2/S013V",
        "B2ce3aeijnqry4n/S1e2-a3ae4ejqt",
        "B1c2ace3aeijnqry4cekn5-ai6ak7c/S0123-k4aeijkntwz5-ey6cn8",
        "B3-jk4eikt6k/S1e2-a3ey4cirt5ky6ci7",
    ];

    /// Random words from `seed`.
    fn random_words(seed: u64) -> impl FnMut() -> u64 {
        let mut generator = crate::seed::SplitMix64::new(seed);
        move || generator.next()
    }

    #[test]
    fn compiled_circuits_give_every_cell_its_next_state() {
        let isas: Vec<Isa> = Isa::available()
            .into_iter()
            .filter(|&isa| isa != Isa::Portable)
            .collect();
        if isas.is_empty() {
            eprintln!("skipped: this CPU has no AVX2");
            return;
        }
        for isa in isas {
            every_cell_its_next_state(isa);
        }
    }

    /// [`compiled_circuits_give_every_cell_its_next_state`] for the code made for `isa`.
    fn every_cell_its_next_state(isa: Isa) {
        // Three random rows of 34 words; words 1..=32 are computed (eight vectors), each cell's
        // neighbours read bit by bit from the rows. Sixteen such rounds meet every one of the
        // 512 neighbourhoods (asserted).
        let words = 34;
        let mut random = random_words(0x9e37_79b9_7f4a_7c15);
        let mut spilled = false;
        // The named rules, then 60 random ones of the three families that run as circuits.
        let mut draw = random_words(0x2545_f491_4f6c_dd1d);
        let random_rules: Vec<Rule> = (0..60)
            .map(|i| Rule::random(Family::ALL[1 + i % 3], &mut draw))
            .collect();
        let rules = RULES
            .iter()
            .map(|rule| rule.parse::<Rule>().unwrap())
            .chain(random_rules);
        for rule in rules {
            let circuit = Circuit::new(&rule);
            if matches!(circuit.output(), ZERO | ONE) {
                continue;
            }
            let compiled =
                Compiled::new(&circuit, isa, Layout::Rows).expect("the CPU has the instructions");
            let mut spill = vec![!0u64; compiled.spill_words()];
            let mut met = [false; 512];
            for _ in 0..16 {
                let rows: Vec<Vec<u64>> = (0..3)
                    .map(|_| (0..words).map(|_| random()).collect())
                    .collect();
                let mut out = vec![0u64; words - 2];
                compiled.rows([&rows[0], &rows[1], &rows[2]], &mut out, &mut spill);
                let bit = |r: usize, x: usize| rows[r][x / 64] >> (x % 64) & 1;
                for x in 64..64 * (words - 1) {
                    let mut cells = 0u16;
                    for (r, c) in (0..3).flat_map(|r| (0..3).map(move |c| (r, c))) {
                        cells |= (bit(r, x + c - 1) as u16) << (3 * r + c);
                    }
                    met[cells as usize] = true;
                    let got = out[x / 64 - 1] >> (x % 64) & 1 == 1;
                    assert_eq!(got, circuit.eval(cells), "{rule}, cell {x}, {isa:?}");
                }
            }
            assert!(
                met.iter().all(|&m| m),
                "{rule}: some neighbourhoods were not met"
            );
            // The spill slots start all ones; a circuit that spilled changed them.
            spilled |= spill.iter().any(|&word| word != !0);
        }
        assert!(spilled, "no circuit here used the spill slots ({isa:?})");
    }

    #[test]
    fn ternary_logic_is_encoded_as_the_manual_says() {
        // vpternlogq ymm1, ymm2, ymm3, 0x96 and ymm9, ymm14, ymm11, 0xe8 (as an assembler
        // writes them).
        assert_eq!(
            vpternlogq(1, 2, 3, 0x96),
            [0x62, 0xf3, 0xed, 0x28, 0x25, 0xcb, 0x96]
        );
        assert_eq!(
            vpternlogq(9, 14, 11, 0xe8),
            [0x62, 0x53, 0x8d, 0x28, 0x25, 0xcb, 0xe8]
        );
    }

    #[test]
    fn constant_circuits_are_not_compiled() {
        let dead = Circuit::new(&"B/SV".parse::<Rule>().unwrap());
        assert_eq!(dead.output(), ZERO);
        assert!(Compiled::new(&dead, Isa::Avx2, Layout::Rows).is_none());
        let friends = Circuit::new(&"B2-a/S12".parse::<Rule>().unwrap());
        assert!(Compiled::new(&friends, Isa::Portable, Layout::Rows).is_none());
    }
}
