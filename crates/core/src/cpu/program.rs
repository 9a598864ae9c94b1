//! `cpu-bitsliced`'s way of running a rule given as a [`Circuit`] (isotropic non-totalistic,
//! hexagonal and von Neumann rules): the circuit interpreted over strips of words.
//!
//! The rule is only known at run time, so its gates cannot be compiled into the inner loop.
//! Instead each gate is one loop over a strip of [`STRIP`] words: its inputs and output are
//! arrays ("slots") of that many words, small enough that all the slots in use stay in L1,
//! and each gate's loop is vectorised like any other word loop. For each output row, the nine
//! input slots get the words of the three rows above, at and below shifted west, not and east
//! (cell `3r + c` of the neighbourhood); the gates then run in order, and the output slot is the
//! next generation. Slots are reused once the last gate that reads them has run.
//!
//! On x86-64 with AVX2 the circuit is also compiled to machine code (`jit.rs`), which keeps its
//! values in registers; the AVX2 and AVX-512 paths run that (the AVX-512 one with three-input
//! logic instructions), the portable path the gates.
//!
//! [`super::Stencil`] runs a circuit the same two ways over *columns* of words, a word a row.

use super::bitsliced::{dispatch, shifted, west_east, BandWork, Frame, Isa, Kernel};
#[cfg(target_arch = "x86_64")]
use super::jit::{Compiled, VECTOR_WORDS};
use crate::grid::last_word_mask;
use crate::rule::circuit::{Circuit, Gate, FIRST_GATE, ONE, ZERO};

/// How a circuit's code finds a cell's neighbours (`jit.rs` says more).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Layout {
    /// Three rows of words, cells side by side along each (the grids).
    Rows,
    /// Three columns of words (west, centre, east), a word a row ([`super::Stencil`]).
    Columns,
}

/// Words per strip: a slot is 8 × `STRIP` bytes.
const STRIP: usize = 256;

/// One gate over slots: the output slot, then the inputs.
#[derive(Clone, Copy, Debug)]
enum Op {
    And(usize, usize, usize),
    Or(usize, usize, usize),
    Xor(usize, usize, usize),
    AndNot(usize, usize, usize),
    Not(usize, usize),
    Xor3(usize, usize, usize, usize),
    Majority(usize, usize, usize, usize),
    Mux(usize, usize, usize, usize),
}

/// Where the next state comes from.
#[derive(Clone, Copy, Debug)]
enum Output {
    Slot(usize),
    Constant(u64),
}

/// A circuit laid out over slots.
pub(super) struct Program {
    ops: Vec<Op>,
    slots: usize,
    output: Output,
    /// The circuit as machine code, where the CPU can run it: for the AVX2 path, and with
    /// three-input logic for the AVX-512 path.
    #[cfg(target_arch = "x86_64")]
    compiled: [Option<Compiled>; 2],
}

impl Program {
    /// The circuit's gates over slots: the nine cells in slots 0 to 8, each gate's output in a
    /// slot no longer read by the gates after it; compiled, where the CPU can run it, for
    /// `layout`.
    pub(super) fn new(circuit: &Circuit, layout: Layout) -> Program {
        #[cfg(not(target_arch = "x86_64"))]
        let _ = layout;
        let last = circuit.last_uses();
        let mut slot_of = vec![usize::MAX; last.len()];
        for (cell, slot) in slot_of.iter_mut().take(9).enumerate() {
            *slot = cell;
        }
        let mut slots = 9;
        let mut free: Vec<usize> = Vec::new();
        let mut ops = Vec::with_capacity(circuit.gates().len());
        for (i, gate) in circuit.gates().iter().enumerate() {
            let out = free.pop().unwrap_or_else(|| {
                slots += 1;
                slots - 1
            });
            slot_of[FIRST_GATE as usize + i] = out;
            let s = |signal: &u16| slot_of[*signal as usize];
            ops.push(match gate {
                Gate::And(a, b) => Op::And(out, s(a), s(b)),
                Gate::Or(a, b) => Op::Or(out, s(a), s(b)),
                Gate::Xor(a, b) => Op::Xor(out, s(a), s(b)),
                Gate::AndNot(a, b) => Op::AndNot(out, s(a), s(b)),
                Gate::Not(a) => Op::Not(out, s(a)),
                Gate::Xor3(a, b, c) => Op::Xor3(out, s(a), s(b), s(c)),
                Gate::Majority(a, b, c) => Op::Majority(out, s(a), s(b), s(c)),
                Gate::Mux(c, one, zero) => Op::Mux(out, s(c), s(one), s(zero)),
            });
            // Inputs read for the last time free their slots for the gates after this one.
            let mut inputs: Vec<u16> = gate.inputs().collect();
            inputs.dedup();
            for input in inputs {
                if last[input as usize] == i {
                    free.push(slot_of[input as usize]);
                }
            }
        }
        let output = match circuit.output() {
            ZERO => Output::Constant(0),
            ONE => Output::Constant(!0),
            signal => Output::Slot(slot_of[signal as usize]),
        };
        Program {
            ops,
            slots,
            output,
            #[cfg(target_arch = "x86_64")]
            compiled: [Isa::Avx2, Isa::Avx512].map(|isa| Compiled::new(circuit, isa, layout)),
        }
    }

    /// The next states of the words of `out` from three columns of words, as
    /// [`super::Stencil::run`] says, for a program made for [`Layout::Columns`]: by the
    /// compiled code for `isa` where there is one, else by the gates.
    pub(super) fn columns(
        &self,
        isa: Isa,
        columns: [&[u64]; 3],
        out: &mut [u64],
        scratch: &mut Vec<u64>,
    ) {
        let n = out.len();
        #[cfg(target_arch = "x86_64")]
        if let Some(compiled) = match isa {
            Isa::Portable => None,
            Isa::Avx2 => self.compiled[0].as_ref(),
            Isa::Avx512 => self.compiled[1].as_ref(),
        } {
            scratch.resize(scratch.len().max(compiled.spill_words()), 0);
            let whole = n / VECTOR_WORDS * VECTOR_WORDS;
            compiled.columns(columns, &mut out[..whole], scratch);
            if whole < n {
                // The last words, through a vector's worth of copies.
                let mut tail = [[0u64; VECTOR_WORDS + 2]; 3];
                for (t, c) in tail.iter_mut().zip(columns) {
                    t[..n - whole + 2].copy_from_slice(&c[whole..n + 2]);
                }
                let mut last = [0u64; VECTOR_WORDS];
                compiled.columns(tail.each_ref().map(|t| &t[..]), &mut last, scratch);
                out[whole..].copy_from_slice(&last[..n - whole]);
            }
            return;
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = isa;
        scratch.resize(scratch.len().max(self.slots.max(9) * STRIP), 0);
        let [west, centre, east] = columns;
        let mut start = 0;
        while start < n {
            let len = (n - start).min(STRIP);
            for r in 0..3 {
                let (w, rest) = scratch[3 * r * STRIP..].split_at_mut(STRIP);
                let (c, e) = rest.split_at_mut(STRIP);
                for k in 0..len {
                    let at = start + k + r;
                    let (to_west, to_east) = west_east(west[at], centre[at], east[at]);
                    (w[k], c[k], e[k]) = (to_west, centre[at], to_east);
                }
            }
            self.run(scratch, len);
            let target = &mut out[start..start + len];
            match self.output {
                Output::Slot(s) => target.copy_from_slice(&scratch[s * STRIP..][..len]),
                Output::Constant(c) => target.fill(c),
            }
            start += len;
        }
    }

    /// Runs the gates over the first `n` words of each slot of `slots` (`STRIP` words a slot).
    #[inline(always)]
    fn run(&self, slots: &mut [u64], n: usize) {
        assert!(n <= STRIP && slots.len() >= self.slots * STRIP);
        let base = slots.as_mut_ptr();
        for op in &self.ops {
            // SAFETY: every slot index is below `self.slots`, so each slot's `n` words lie
            // inside `slots` (checked above); an op's output slot differs from its inputs
            // (`Program::new` frees inputs only after taking the output), so the one mutable
            // slice overlaps no shared one.
            unsafe {
                let slot = |s: usize| std::slice::from_raw_parts(base.add(s * STRIP), n);
                let out = |s: usize| std::slice::from_raw_parts_mut(base.add(s * STRIP), n);
                match *op {
                    Op::And(d, a, b) => each(out(d), slot(a), slot(b), |x, y| x & y),
                    Op::Or(d, a, b) => each(out(d), slot(a), slot(b), |x, y| x | y),
                    Op::Xor(d, a, b) => each(out(d), slot(a), slot(b), |x, y| x ^ y),
                    Op::AndNot(d, a, b) => each(out(d), slot(a), slot(b), |x, y| x & !y),
                    Op::Not(d, a) => each(out(d), slot(a), slot(a), |x, _| !x),
                    Op::Xor3(d, a, b, c) => {
                        each3(out(d), slot(a), slot(b), slot(c), |x, y, z| x ^ y ^ z)
                    }
                    Op::Majority(d, a, b, c) => {
                        each3(out(d), slot(a), slot(b), slot(c), |x, y, z| {
                            (x & y) | (z & (x ^ y))
                        })
                    }
                    Op::Mux(d, s, one, zero) => {
                        each3(out(d), slot(s), slot(one), slot(zero), |s, o, z| {
                            z ^ (s & (o ^ z))
                        })
                    }
                }
            }
        }
    }
}

/// `out[k] = f(a[k], b[k])` for every word.
#[inline(always)]
fn each(out: &mut [u64], a: &[u64], b: &[u64], f: impl Fn(u64, u64) -> u64) {
    let n = out.len();
    let (a, b) = (&a[..n], &b[..n]);
    for k in 0..n {
        out[k] = f(a[k], b[k]);
    }
}

/// `out[k] = f(a[k], b[k], c[k])` for every word.
#[inline(always)]
fn each3(out: &mut [u64], a: &[u64], b: &[u64], c: &[u64], f: impl Fn(u64, u64, u64) -> u64) {
    let n = out.len();
    let (a, b, c) = (&a[..n], &b[..n], &c[..n]);
    for k in 0..n {
        out[k] = f(a[k], b[k], c[k]);
    }
}

impl BandWork for Program {
    fn band(&self, isa: Isa, frame: &Frame, out: &mut [u64], top: usize) {
        // The compiled code is its instruction set's already: nothing to dispatch.
        #[cfg(target_arch = "x86_64")]
        if let Some(compiled) = match isa {
            Isa::Portable => None,
            Isa::Avx2 => self.compiled[0].as_ref(),
            Isa::Avx512 => self.compiled[1].as_ref(),
        } {
            return compiled_band(compiled, frame, out, top);
        }
        dispatch(
            isa,
            CircuitBand {
                program: self,
                frame,
                out,
                top,
            },
        )
    }
}

/// Output rows `top..top + out.len() / words_per_row` of one generation, by the program.
struct CircuitBand<'a> {
    program: &'a Program,
    frame: &'a Frame,
    out: &'a mut [u64],
    top: usize,
}

impl Kernel for CircuitBand<'_> {
    #[inline(always)]
    fn run(self) {
        let CircuitBand {
            program,
            frame,
            out,
            top,
        } = self;
        let wpr = frame.words_per_row;
        let mut slots = vec![0u64; program.slots.max(9) * STRIP];
        for (r, row_out) in out.chunks_exact_mut(wpr).enumerate() {
            let y = top + r;
            let [above, below] = frame.around(y);
            let rows = [above, Some(y), below];
            let mut left = 0;
            while left < wpr {
                let right = (left + STRIP).min(wpr);
                let n = right - left;
                for (r, &row) in rows.iter().enumerate() {
                    let (west, rest) = slots[3 * r * STRIP..].split_at_mut(STRIP);
                    let (centre, east) = rest.split_at_mut(STRIP);
                    let Some(row) = row else {
                        // A dead row past a bounded plane's edge.
                        for words in [west, centre, east] {
                            words[..n].fill(0);
                        }
                        continue;
                    };
                    shifted(frame, row, left, right, |k, w, c, e| {
                        west[k] = w;
                        centre[k] = c;
                        east[k] = e;
                    });
                }
                program.run(&mut slots, n);
                let target = &mut row_out[left..right];
                match program.output {
                    Output::Slot(s) => target.copy_from_slice(&slots[s * STRIP..][..n]),
                    Output::Constant(c) => target.fill(c),
                }
                left = right;
            }
            row_out[wpr - 1] &= last_word_mask(frame.width);
        }
    }
}

/// Output rows `top..top + out.len() / words_per_row` of one generation, by the compiled
/// circuit, each row from three rows copied with the margins [`Compiled::rows`] asks for (a
/// window of three such copies slides down the band, so each row is copied once or twice).
#[cfg(target_arch = "x86_64")]
fn compiled_band(compiled: &Compiled, frame: &Frame, out: &mut [u64], top: usize) {
    let wpr = frame.words_per_row;
    let whole = wpr / VECTOR_WORDS * VECTOR_WORDS;
    let len = wpr.next_multiple_of(VECTOR_WORDS) + 2;
    let mut spill = vec![0u64; compiled.spill_words()];
    let dead = vec![0u64; len];
    // Three copies with margins, and the row each holds.
    let mut copies = vec![0u64; 3 * len];
    let mut holds: [Option<usize>; 3] = [None; 3];
    for (r, row_out) in out.chunks_exact_mut(wpr).enumerate() {
        let y = top + r;
        let [above, below] = frame.around(y);
        let rows = [above, Some(y), below];
        for row in rows.into_iter().flatten() {
            if !holds.contains(&Some(row)) {
                let spare = (0..3)
                    .find(|&i| !matches!(holds[i], Some(held) if rows.contains(&Some(held))))
                    .expect("three copies for three rows");
                with_margins(frame, row, &mut copies[spare * len..][..len]);
                holds[spare] = Some(row);
            }
        }
        let copy = |row: Option<usize>| match row {
            Some(row) => {
                let i = holds
                    .iter()
                    .position(|&held| held == Some(row))
                    .expect("copied above");
                &copies[i * len..][..len]
            }
            None => &dead[..],
        };
        let rows = rows.map(copy);
        compiled.rows(rows, &mut row_out[..whole], &mut spill);
        if whole < wpr {
            let mut tail = [0u64; VECTOR_WORDS];
            compiled.rows(rows.map(|row| &row[whole..]), &mut tail, &mut spill);
            row_out[whole..].copy_from_slice(&tail[..wpr - whole]);
        }
        row_out[wpr - 1] &= last_word_mask(frame.width);
    }
}

/// Row `y` of `frame` copied into `copy[1..=wpr]` with the margins [`Compiled::rows`] asks for:
/// on a torus, the last cell at bit 63 of `copy[0]`, and the first cell in the padding bit past
/// the last cell or, where the row fills its last word, at bit 0 of `copy[wpr + 1]`; on a
/// bounded plane, dead margins.
#[cfg(target_arch = "x86_64")]
fn with_margins(frame: &Frame, y: usize, copy: &mut [u64]) {
    let wpr = frame.words_per_row;
    let row = &frame.words[y * wpr..][..wpr];
    copy[1..=wpr].copy_from_slice(row);
    copy[0] = 0;
    copy[wpr + 1] = 0;
    if frame.wraps_columns {
        let first = row[0] & 1;
        let last = row[wpr - 1] >> ((frame.width - 1) % 64) & 1;
        copy[0] = last << 63;
        match frame.width % 64 {
            0 => copy[wpr + 1] = first,
            past => copy[wpr] |= first << past,
        }
    }
}
