//! The bulk of an RLE body read 64 bytes at a time: runs of `b`, `.` and `o` whose counts have
//! at most one digit, across line ends. That is nearly every byte of a soup.
//!
//! A block's bytes are first classified with SIMD compares into bit masks (bit `k` for byte
//! `k`): digits, tags (`b`, `.`, `o`), live tags, line ends. The block is read up to its first
//! byte that is none of these, or a digit not followed by a tag: that prefix is whole tokens.
//! Each tag's count (its digit, or 1) is put in the tag's byte, and byte-wise prefix sums of
//! those give every run's end, counted from the block's first cell.
//!
//! Only the live runs are then visited. A run `[s, e)` is drawn as two toggles, bits `s` and
//! `e`; a row's cells are the prefix XOR of its toggles, since the XOR of "bits from `s` on"
//! and "bits from `e` on" is the run. Toggles are gathered in one word held in a register and
//! turned into cells when they move past it. A run of at most 9 cells spans at most two words,
//! so a word is entered inside a run only from the word just before it.

use crate::grid::WORD_BITS;

/// Bytes read at a time.
pub(super) const BLOCK: usize = 64;

/// For each of `bytes`, bit `k` set where byte `k` of `block` is that byte: SSE2 compares on
/// x86-64, a byte at a time elsewhere.
#[inline(always)]
pub(super) fn masks<const N: usize>(block: &[u8; BLOCK], bytes: [u8; N]) -> [u64; N] {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        let mut masks = [0u64; N];
        for c in 0..BLOCK / 16 {
            // SAFETY: SSE2 is part of the x86-64 baseline; the load is of 16 bytes at offset
            // 16 * c of a 64-byte array.
            unsafe {
                let v = _mm_loadu_si128(block.as_ptr().add(16 * c).cast());
                for (mask, &b) in masks.iter_mut().zip(&bytes) {
                    let equal = _mm_cmpeq_epi8(v, _mm_set1_epi8(b as i8));
                    *mask |= (_mm_movemask_epi8(equal) as u16 as u64) << (16 * c);
                }
            }
        }
        masks
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        bytewise_masks(block, bytes)
    }
}

/// [`masks`] a byte at a time.
#[cfg(any(test, not(target_arch = "x86_64")))]
fn bytewise_masks<const N: usize>(block: &[u8; BLOCK], bytes: [u8; N]) -> [u64; N] {
    bytes.map(|b| {
        let hits = block.iter().enumerate().filter(|&(_, &c)| c == b);
        hits.fold(0, |mask, (k, _)| mask | 1 << k)
    })
}

/// `bytes` in blocks of [`BLOCK`] bytes, the last padded with zeros, each with its offset.
pub(super) fn blocks(bytes: &[u8]) -> impl Iterator<Item = (usize, [u8; BLOCK])> + '_ {
    bytes.chunks(BLOCK).enumerate().map(|(k, chunk)| {
        let mut block = [0u8; BLOCK];
        block[..chunk.len()].copy_from_slice(chunk);
        (k * BLOCK, block)
    })
}

/// One block, classified.
#[derive(Debug, PartialEq, Eq)]
struct Scan {
    /// ASCII digits.
    digits: u64,
    /// `b`, `.` and `o`.
    tags: u64,
    /// `o`.
    live: u64,
    /// `\n`.
    newlines: u64,
    /// `\r`.
    returns: u64,
    /// At each byte, the sum of the counts of its 16-byte chunk's tags up to it (at most
    /// 16 × 9): at a tag, its run's end counted from the chunk's first cell.
    ends: [u8; BLOCK],
    /// At each tag, its count: the digit just before it, or 1 without one. 0 at other bytes.
    counts: [u8; BLOCK],
    /// The cells of the chunks before each chunk.
    bases: [u32; BLOCK / 16],
}

impl Scan {
    /// Classifies `block` with SSE2, which every x86-64 processor has, in place (a returned
    /// `Scan` was copied with `memcpy`).
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn read(&mut self, block: &[u8; BLOCK]) {
        use std::arch::x86_64::*;
        let [mut all_digits, mut all_tags, mut all_live, mut all_newlines, mut all_returns] =
            [0u64; 5];
        let mask = |v: __m128i| {
            // SAFETY: SSE2 is part of the x86-64 baseline.
            unsafe { _mm_movemask_epi8(v) as u16 as u64 }
        };
        // SAFETY: SSE2 is part of the x86-64 baseline; every load and store is of 16 bytes
        // at offset 16 * c of a 64-byte array.
        unsafe {
            let byte = |b: u8| _mm_set1_epi8(b as i8);
            let (mut before_digits, mut before_values) = (_mm_setzero_si128(), _mm_setzero_si128());
            let mut base = 0u32;
            for c in 0..BLOCK / 16 {
                let v = _mm_loadu_si128(block.as_ptr().add(16 * c).cast());
                let values = _mm_sub_epi8(v, byte(b'0'));
                let digits = _mm_cmpeq_epi8(_mm_min_epu8(values, byte(9)), values);
                let live = _mm_cmpeq_epi8(v, byte(b'o'));
                let dead =
                    _mm_or_si128(_mm_cmpeq_epi8(v, byte(b'b')), _mm_cmpeq_epi8(v, byte(b'.')));
                let tags = _mm_or_si128(live, dead);
                let newlines = _mm_cmpeq_epi8(v, byte(b'\n'));
                let returns = _mm_cmpeq_epi8(v, byte(b'\r'));
                // The byte before each: the last of the chunk before shifted in (none before
                // the block's first, which starts a token).
                let prev_digits =
                    _mm_or_si128(_mm_slli_si128(digits, 1), _mm_srli_si128(before_digits, 15));
                let prev_values =
                    _mm_or_si128(_mm_slli_si128(values, 1), _mm_srli_si128(before_values, 15));
                (before_digits, before_values) = (digits, values);
                let count = _mm_or_si128(
                    _mm_and_si128(prev_digits, prev_values),
                    _mm_andnot_si128(prev_digits, byte(1)),
                );
                let count = _mm_and_si128(tags, count);
                let mut ends = count;
                ends = _mm_add_epi8(ends, _mm_slli_si128(ends, 1));
                ends = _mm_add_epi8(ends, _mm_slli_si128(ends, 2));
                ends = _mm_add_epi8(ends, _mm_slli_si128(ends, 4));
                ends = _mm_add_epi8(ends, _mm_slli_si128(ends, 8));
                _mm_storeu_si128(self.ends.as_mut_ptr().add(16 * c).cast(), ends);
                _mm_storeu_si128(self.counts.as_mut_ptr().add(16 * c).cast(), count);
                self.bases[c] = base;
                base += u32::from(self.ends[16 * c + 15]);
                let at = 16 * c;
                all_digits |= mask(digits) << at;
                all_tags |= mask(tags) << at;
                all_live |= mask(live) << at;
                all_newlines |= mask(newlines) << at;
                all_returns |= mask(returns) << at;
            }
        }
        self.digits = all_digits;
        self.tags = all_tags;
        self.live = all_live;
        self.newlines = all_newlines;
        self.returns = all_returns;
    }

    /// The byte-wise classifier on other processors.
    #[cfg(not(target_arch = "x86_64"))]
    fn read(&mut self, block: &[u8; BLOCK]) {
        *self = Scan::bytewise(block);
    }

    /// Classifies `block` a byte at a time: the same as the SIMD classifier, for other
    /// processors (and, in the tests, to check it).
    #[cfg(any(test, not(target_arch = "x86_64")))]
    fn bytewise(block: &[u8; BLOCK]) -> Scan {
        let mut scan = Scan::empty();
        let mut end = 0u8;
        for (k, &b) in block.iter().enumerate() {
            if k % 16 == 0 {
                end = 0;
                if k > 0 {
                    scan.bases[k / 16] = scan.bases[k / 16 - 1] + u32::from(scan.ends[k - 1]);
                }
            }
            let bit = 1u64 << k;
            let is_digit = b.is_ascii_digit();
            let is_tag = matches!(b, b'b' | b'.' | b'o');
            scan.digits |= bit * u64::from(is_digit);
            scan.tags |= bit * u64::from(is_tag);
            scan.live |= bit * u64::from(b == b'o');
            scan.newlines |= bit * u64::from(b == b'\n');
            scan.returns |= bit * u64::from(b == b'\r');
            if is_tag {
                let before = k.checked_sub(1).map(|j| block[j]);
                scan.counts[k] = match before {
                    Some(d @ b'0'..=b'9') => d - b'0',
                    _ => 1,
                };
            }
            end += scan.counts[k];
            scan.ends[k] = end;
        }
        scan
    }

    fn empty() -> Scan {
        Scan {
            digits: 0,
            tags: 0,
            live: 0,
            newlines: 0,
            returns: 0,
            ends: [0; BLOCK],
            counts: [0; BLOCK],
            bases: [0; BLOCK / 16],
        }
    }

    /// The block's bytes that are whole fast tokens: up to the first byte that is not a digit,
    /// a tag or a line end, or a digit not followed by a tag (a longer count, or one split by
    /// a blank; a digit last in the block is left for the next).
    fn fast_bytes(&self) -> usize {
        let others = !(self.digits | self.tags | self.newlines | self.returns);
        let long_counts = self.digits & !(self.tags >> 1);
        (others | long_counts).trailing_zeros() as usize
    }

    /// The end of the run of tag `k`, counted from the block's first cell.
    fn end(&self, k: usize) -> usize {
        self.bases[k / 16] as usize + usize::from(self.ends[k])
    }
}

/// A row being drawn by toggles.
pub(super) struct Toggles<'a> {
    row: &'a mut [u64],
    /// The pattern's cell 0 is the row's cell `left`.
    left: usize,
    at: Word,
}

/// The word of toggles at hand.
#[derive(Clone, Copy, Default)]
struct Word {
    /// Its index in the pattern's row.
    index: usize,
    toggles: u64,
    /// All ones where a run is open at its start.
    open: u64,
}

impl<'a> Toggles<'a> {
    pub(super) fn new(row: &'a mut [u64], left: usize) -> Toggles<'a> {
        Toggles {
            row,
            left,
            at: Word::default(),
        }
    }

    /// Toggles the cells of a run `[start, end)` that does not end in `at`'s word: ORs that
    /// word's cells into the row, and goes on from the word where the run ends.
    #[inline(never)]
    fn cross(&mut self, mut at: Word, start: usize, end: usize) -> Word {
        for cell in [start, end] {
            let index = cell / WORD_BITS;
            if index != at.index {
                self.flush(at);
                debug_assert!(at.open == 0 || index == at.index + 1, "a run past a word");
                at = Word {
                    index,
                    toggles: 0,
                    open: if at.toggles.count_ones() % 2 == 1 {
                        !at.open
                    } else {
                        at.open
                    },
                };
            }
            at.toggles ^= 1 << (cell % WORD_BITS);
        }
        at
    }

    /// ORs the cells of `at`'s word into the row: the prefix XOR of its toggles.
    fn flush(&mut self, at: Word) {
        let mut cells = at.toggles;
        for shift in [1, 2, 4, 8, 16, 32] {
            cells ^= cells << shift;
        }
        cells ^= at.open;
        if cells != 0 {
            let cell = self.left + at.index * WORD_BITS;
            let (w, shift) = (cell / WORD_BITS, cell % WORD_BITS);
            self.row[w] |= cells << shift;
            if shift != 0 {
                let high = cells >> (WORD_BITS - shift);
                if high != 0 {
                    self.row[w + 1] |= high;
                }
            }
        }
    }
}

impl Drop for Toggles<'_> {
    fn drop(&mut self) {
        self.flush(self.at);
    }
}

/// Where [`runs`] stopped.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Stop {
    /// The first byte not read.
    pub(super) at: usize,
    /// Newlines read.
    pub(super) lines: usize,
    /// Whether the last byte read was a newline (`None` where none was read).
    pub(super) after_newline: Option<bool>,
}

/// Reads fast tokens (see the module's notes) of `bytes[at..]`, which starts a token, a block
/// at a time, advancing `*x` and drawing live runs into `draw` where given. Stops at the first
/// block that is not all fast tokens, after its fast ones, or before a block whose runs pass
/// `width`, or holds a live run where `alive` is false; the byte decoder takes over there (and
/// reports any error from the right place).
#[inline(always)]
pub(super) fn runs(
    bytes: &[u8],
    at: usize,
    x: &mut usize,
    (width, alive): (usize, bool),
    mut draw: Option<&mut Toggles>,
) -> Stop {
    let mut scan = Scan::empty();
    let mut stop = Stop {
        at,
        lines: 0,
        after_newline: None,
    };
    while let Some(block) = bytes.get(stop.at..stop.at + BLOCK) {
        scan.read(block.try_into().expect("a block"));
        let fast = scan.fast_bytes();
        let mine = if fast == BLOCK {
            !0
        } else {
            (1u64 << fast) - 1
        };
        let tags = scan.tags & mine;
        let cells = match tags {
            0 => 0,
            _ => scan.end(63 - tags.leading_zeros() as usize),
        };
        let live = scan.live & mine;
        if *x + cells > width || (live != 0 && !alive) {
            break;
        }
        if let Some(draw) = draw.as_deref_mut() {
            // Chunk by chunk, with the word at hand in registers.
            let mut at = draw.at;
            for (c, &base) in scan.bases.iter().enumerate() {
                let base = *x + base as usize;
                let mut live = (live >> (16 * c)) as u16;
                while live != 0 {
                    let k = 16 * c + live.trailing_zeros() as usize;
                    live &= live - 1;
                    let end = base + usize::from(scan.ends[k]);
                    let start = end - usize::from(scan.counts[k]);
                    if end / WORD_BITS == at.index {
                        at.toggles ^= 1 << (start % WORD_BITS) ^ 1 << (end % WORD_BITS);
                    } else {
                        at = draw.cross(at, start, end);
                    }
                }
            }
            draw.at = at;
        }
        *x += cells;
        if fast > 0 {
            stop.lines += (scan.newlines & mine).count_ones() as usize;
            stop.after_newline = Some(scan.newlines >> (fast - 1) & 1 == 1);
        }
        stop.at += fast;
        if fast < BLOCK {
            break;
        }
    }
    stop
}

#[cfg(test)]
mod test {
    use super::*;
    use proptest::prelude::*;

    /// A block of RLE body bytes, or of any bytes.
    fn some_blocks() -> impl Strategy<Value = Vec<u8>> {
        let body = proptest::sample::select(b"0123456789bo.$!\n\r #xA".to_vec());
        let byte = prop_oneof![3 => body, 1 => any::<u8>()];
        proptest::collection::vec(byte, BLOCK)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]
        #[test]
        fn simd_classes_are_the_bytewise_ones(block in some_blocks()) {
            let block: &[u8; BLOCK] = block.as_slice().try_into().unwrap();
            let mut scan = Scan::empty();
            scan.read(block);
            prop_assert_eq!(scan, Scan::bytewise(block));
        }
    }

    proptest! {
        #[test]
        fn simd_masks_are_the_bytewise_ones(block in some_blocks()) {
            let block: &[u8; BLOCK] = block.as_slice().try_into().unwrap();
            let bytes = *b"$!\n#o";
            prop_assert_eq!(masks(block, bytes), bytewise_masks(block, bytes));
        }
    }

    #[test]
    fn toggles_draw_runs_across_words_at_any_offset() {
        for left in [0, 1, 5, 63, 64, 100] {
            let runs = [(0, 1), (3, 9), (60, 68), (68, 70), (127, 128), (190, 199)];
            let mut row = vec![0u64; 5];
            {
                let mut toggles = Toggles::new(&mut row, left);
                for (s, e) in runs {
                    toggles.at = toggles.cross(toggles.at, s, e);
                }
            }
            let mut want = vec![0u64; 5];
            for (s, e) in runs {
                crate::grid::fill_row_run(&mut want, left + s, e - s);
            }
            assert_eq!(row, want, "left {left}");
        }
    }
}
