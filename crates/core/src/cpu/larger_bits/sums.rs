//! [`LargerBits`](super::LargerBits)' path on AVX-512 for ranges up to [`MOST_RANGE`]: the
//! counts kept as integers, one byte or one 16-bit word a cell, instead of bit planes, so that
//! a generation costs the same number of operations a cell at every range.
//!
//! # Algorithm
//!
//! The rows stay in bits (the layout of the parent module). Down a band of rows:
//!
//! 1. A row's horizontal counts (the live cells among the 2r + 1 of the row centred on each
//!    cell), one byte a cell: the row's prefix counts Q (Q\[i\]: the live cells among its bits
//!    0..=i, ghost words included, modulo 256) differenced, Q\[x + r\] − Q\[x − r − 1\], exact
//!    modulo 256 because 2r + 1 < 256; each word's 64 made in one vector of bytes
//!    ([`prefix_counts`]).
//! 2. The square's count, one 16-bit word a cell (exact: (2r + 1)² < 2^16): a running sum
//!    down the band, the row entering adding its horizontal counts and the row leaving taking
//!    its own away; those of the 2r + 1 rows in the window are kept in a ring of rows of bytes,
//!    where the entering row's counts replace the leaving row's.
//! 3. The next state: the count compared with the bounds, 32 cells a comparison into a mask,
//!    the masks of 64 cells making the next word with the cells' own word.
//!
//! Per 64 cells a row that is about 40 vector operations at any range: on dev-2c-emr this
//! is faster than the bit planes from range [`FEWEST_RANGE`] on (BENCHMARKS.md, issue 43).
//! A band takes its rows in strips whose ring fits a core's second-level cache
//! ([`RING_BYTES`]). Tried and left out: a ring of 16-bit running sums (no widening of the
//! leaving row; 1.4× slower: twice the ring's traffic) and no ring at all, the leaving row's
//! counts made again from its bits (1.3× slower on dev-2c-emr, 1.1× on the GPU host).

use std::arch::x86_64::*;

use super::Frame;

/// The largest range counted here: 2r + 1 < 2^8 and (2r + 1)² < 2^16.
pub(super) const MOST_RANGE: u32 = 127;

/// The smallest range counted here: below it the bit planes are faster (dev-2c-emr, 2048²
/// soups, 2 threads: bits 8.7e9 and integers 8.1e9 cell updates/s at range 9, 7.5e9 and
/// 7.8e9 at range 11).
pub(super) const FEWEST_RANGE: u32 = 11;

/// A vector's byte j: the bits 0..=j % 8 of a byte.
const UP_TO_BIT: [u8; 64] = {
    let mut bits = [0u8; 64];
    let mut j = 0;
    while j < 64 {
        bits[j] = ((2u16 << (j % 8)) - 1) as u8;
        j += 1;
    }
    bits
};

/// For each word i of a vector, the index that takes its byte j / 8 into every byte j.
const BYTES_OF_WORD: [[u8; 64]; 8] = {
    let mut index = [[0u8; 64]; 8];
    let mut i = 0;
    while i < 8 {
        let mut j = 0;
        while j < 64 {
            index[i][j] = (8 * i + j / 8) as u8;
            j += 1;
        }
        i += 1;
    }
    index
};

/// For byte j of a vector, the index of its 64-bit lane's lowest byte within its 128-bit
/// lane (what `_mm512_shuffle_epi8` indexes).
const LOW_BYTE_OF_LANE: [u8; 64] = {
    let mut index = [0u8; 64];
    let mut j = 0;
    while j < 64 {
        index[j] = (8 * (j / 8 % 2)) as u8;
        j += 1;
    }
    index
};

/// Whether the CPU has what [`band`] needs beyond AVX-512 F and BW: VBMI's byte permutes,
/// BITALG's byte counts and BMI2's bit deposits (Ice Lake, Sapphire Rapids and Zen 4 on).
pub(super) fn is_here() -> bool {
    is_x86_feature_detected!("avx512vbmi")
        && is_x86_feature_detected!("avx512bitalg")
        && is_x86_feature_detected!("bmi2")
}

/// Rows `top..top + out.len() / stride` of one generation of `frame`'s world into `out` (each
/// row's ghost words left for the caller to fill).
///
/// # Safety
/// The CPU must have AVX-512 F and BW and what [`is_here`] checks, and the world's range must be
/// at most [`MOST_RANGE`].
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx512bitalg,bmi2")]
pub(super) unsafe fn band(frame: Frame, out: &mut [u64], top: usize) {
    let world = frame.world;
    debug_assert!(world.range <= MOST_RANGE as usize);
    let span = 2 * world.range + 1;
    // Strips of whole vectors of words whose ring stays within RING_BYTES.
    let strip = (RING_BYTES / (64 * span) / 8 * 8).max(8);
    let mut scratch = SCRATCH.take();
    let bounds = Bounds::new(world.birth, world.survive);
    for from in (0..world.words).step_by(strip) {
        let words = strip.min(world.words - from);
        strip_band(frame, out, top, from..from + words, &bounds, &mut scratch);
    }
    SCRATCH.set(scratch);
}

/// The most bytes of a band's ring: the words of a row are taken in strips whose ring (2r + 1
/// rows of a byte a cell) stays within a core's second-level cache. On a 16384² torus at range
/// 100 a whole row's ring (3.3 MB) made 16 threads 3.1× slower than at range 5.
const RING_BYTES: usize = 512 << 10;

/// [`band`] over the words `inside` of each row (indices among the words inside the grid).
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx512bitalg,bmi2")]
fn strip_band(
    frame: Frame,
    out: &mut [u64],
    top: usize,
    inside: std::ops::Range<usize>,
    bounds: &Bounds,
    scratch: &mut Scratch,
) {
    let world = frame.world;
    let (r, stride, ghost) = (world.range, world.stride, world.ghost);
    let cells = 64 * inside.len();
    let span = 2 * r + 1;
    // The strip's words with `ghost` words either side: every cell within r of the strip.
    let around = inside.start..inside.end + 2 * ghost;
    let Scratch {
        ring,
        count,
        prefix,
        empty,
    } = scratch;
    for (buffer, len) in [
        (&mut *ring, span * cells),
        (&mut *prefix, 64 * around.len()),
    ] {
        buffer.clear();
        buffer.resize(len, 0);
    }
    count.clear();
    count.resize(cells, 0);
    empty.clear();
    empty.resize(stride, 0);
    let first = top as isize - r as isize;
    // Row `row` of the window enters at slot (row − first) mod 2r + 1, where the row that
    // leaves it was: 2r rows before the band's first, then one a row of the band.
    let mut slot = 0;
    let mut enter = |y: isize, next: Option<(&[u64], &mut [u64])>| {
        prefix_counts(&frame.row(y).unwrap_or(empty)[around.clone()], prefix);
        let window = &mut ring[slot * cells..][..cells];
        // The prefix counts of the horizontal window of the strip's cell x end at its bit
        // 64·ghost + x + r and start after bit 64·ghost + x − r − 1 (at least 0: the ghost
        // words are wider than r).
        let starts = &prefix[64 * ghost - r - 1..];
        let ends = &starts[2 * r + 1..];
        let at = ghost + inside.start;
        match next {
            Some((row, next)) => enter_row::<true>(
                ends,
                starts,
                window,
                count,
                bounds,
                &row[at..],
                &mut next[at..],
            ),
            None => enter_row::<false>(ends, starts, window, count, bounds, &[], &mut []),
        }
        slot = if slot + 1 == span { 0 } else { slot + 1 };
    };
    for y in first..first + 2 * r as isize {
        enter(y, None);
    }
    for (k, next) in out.chunks_mut(stride).enumerate() {
        let y = top as isize + k as isize;
        let row = frame.row(y).expect("a band's rows are inside the grid");
        enter(y + r as isize, Some((row, next)));
    }
}

/// A thread's buffers for [`band`], kept from band to band: a fresh ring each band cost 5–10%
/// of the time in page faults and the kernel's zeroing.
#[derive(Default)]
struct Scratch {
    /// The horizontal counts of the rows in the window (2r + 1 rows of a byte a cell).
    ring: Vec<u8>,
    /// The square's counts of the current row, in blocks of 64 cells (see [`enter_row`]).
    count: Vec<u16>,
    /// Q of the row entering.
    prefix: Vec<u8>,
    /// An empty row (with ghost words), for rows outside a bounded plane.
    empty: Vec<u64>,
}

thread_local! {
    static SCRATCH: std::cell::Cell<Scratch> = std::cell::Cell::default();
}

/// The rule's bounds on the square's count (the cell itself included), inclusive, as 16-bit
/// words in every lane; a bound past the largest count stays past it.
struct Bounds {
    birth: (__m512i, __m512i),
    survive: (__m512i, __m512i),
}

impl Bounds {
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx512bitalg,bmi2")]
    fn new(birth: (u32, u32), survive: (u32, u32)) -> Bounds {
        let word = |k: u32| _mm512_set1_epi16(k.min(u32::from(u16::MAX)) as u16 as i16);
        Bounds {
            birth: (word(birth.0), word(birth.1)),
            survive: (word(survive.0), word(survive.1)),
        }
    }
}

/// Q of the module's documentation for `row` (all its words) into `prefix`, 64 bytes a word.
///
/// Eight words at a time: their bytes' counts (one instruction), summed along each word by
/// three shifts, give each byte the cells of the bytes below it in its word; the words' own
/// counts summed across the eight by three more give the cells of the words before. Then for
/// each word, its bytes spread to the eight bytes each covers, masked to the bits up to each
/// byte's and counted, plus the count below that byte spread the same way.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx512bitalg,bmi2")]
#[inline]
fn prefix_counts(row: &[u64], prefix: &mut [u8]) {
    // SAFETY: plain loads of constant arrays of 64 bytes.
    let (up_to_bit, low_byte_of_lane, bytes_of_word) = unsafe {
        (
            _mm512_loadu_si512(UP_TO_BIT.as_ptr().cast()),
            _mm512_loadu_si512(LOW_BYTE_OF_LANE.as_ptr().cast()),
            BYTES_OF_WORD.map(|index| _mm512_loadu_si512(index.as_ptr().cast())),
        )
    };
    let zero = _mm512_setzero_si512();
    let last = _mm512_set1_epi64(7);
    // The cells of the words before the eight, in every 64-bit lane (modulo 2^64; its low
    // byte is what counts).
    let mut before = zero;
    for (words, out) in row.chunks(8).zip(prefix.chunks_mut(512)) {
        // SAFETY: a load of the chunk's words only (a row's last chunk may hold fewer than 8:
        // the lanes past it are zero and their memory is not touched).
        let cells = unsafe {
            _mm512_maskz_loadu_epi64(u8::MAX >> (8 - words.len()), words.as_ptr().cast())
        };
        let mut up_to = _mm512_popcnt_epi8(cells);
        up_to = _mm512_add_epi8(up_to, _mm512_slli_epi64::<8>(up_to));
        up_to = _mm512_add_epi8(up_to, _mm512_slli_epi64::<16>(up_to));
        up_to = _mm512_add_epi8(up_to, _mm512_slli_epi64::<32>(up_to));
        let totals = _mm512_srli_epi64::<56>(up_to);
        let mut words_before = _mm512_alignr_epi64::<7>(totals, zero);
        words_before = _mm512_add_epi64(words_before, _mm512_alignr_epi64::<7>(words_before, zero));
        words_before = _mm512_add_epi64(words_before, _mm512_alignr_epi64::<6>(words_before, zero));
        words_before = _mm512_add_epi64(words_before, _mm512_alignr_epi64::<4>(words_before, zero));
        let base = _mm512_add_epi64(before, words_before);
        let below = _mm512_add_epi8(
            _mm512_slli_epi64::<8>(up_to),
            _mm512_shuffle_epi8(base, low_byte_of_lane),
        );
        before = _mm512_permutexvar_epi64(last, _mm512_add_epi64(base, totals));
        for (index, out) in bytes_of_word.iter().zip(out.chunks_exact_mut(64)) {
            let bits = _mm512_and_si512(_mm512_permutexvar_epi8(*index, cells), up_to_bit);
            let q = _mm512_add_epi8(
                _mm512_popcnt_epi8(bits),
                _mm512_permutexvar_epi8(*index, below),
            );
            // SAFETY: `out` is a chunk of exactly 64 bytes.
            unsafe { _mm512_storeu_si512(out.as_mut_ptr().cast(), q) };
        }
    }
}

/// One row entering the window: its horizontal counts (`ends` − `starts`, bytes from the
/// prefix counts) replace the leaving row's in `window` and move `count` on; where `NEXT`, the
/// next state of the row whose window it completes, from its words `row`, into `next`.
///
/// `count` holds a block of 64 cells as the 32 counts of its even cells, then the 32 of its odd
/// ones: a vector of bytes splits into those two vectors of words by a mask and a shift, where
/// widening its halves in order would take four of the shuffle port's instructions (on Intel
/// cores the port the comparisons need too), and the masks of even and odd cells interleave
/// into a word by two bit deposits on another port.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx512bitalg,bmi2")]
#[inline]
fn enter_row<const NEXT: bool>(
    ends: &[u8],
    starts: &[u8],
    window: &mut [u8],
    count: &mut [u16],
    bounds: &Bounds,
    row: &[u64],
    next: &mut [u64],
) {
    const EVEN: u64 = 0x5555_5555_5555_5555;
    let (ends, starts) = (&ends[..window.len()], &starts[..window.len()]);
    let low_bytes = _mm512_set1_epi16(0xff);
    for (k, ((window, count), (ends, starts))) in window
        .chunks_exact_mut(64)
        .zip(count.chunks_exact_mut(64))
        .zip(ends.chunks_exact(64).zip(starts.chunks_exact(64)))
        .enumerate()
    {
        let (even, odd) = count.split_at_mut(32);
        // SAFETY: every pointer is to a chunk of exactly 64 bytes (`even` and `odd`: 32 words).
        let (even, odd) = unsafe {
            let entering = _mm512_sub_epi8(
                _mm512_loadu_si512(ends.as_ptr().cast()),
                _mm512_loadu_si512(starts.as_ptr().cast()),
            );
            let leaving = _mm512_loadu_si512(window.as_ptr().cast());
            _mm512_storeu_si512(window.as_mut_ptr().cast(), entering);
            let even_change = _mm512_sub_epi16(
                _mm512_and_si512(entering, low_bytes),
                _mm512_and_si512(leaving, low_bytes),
            );
            let odd_change = _mm512_sub_epi16(
                _mm512_srli_epi16::<8>(entering),
                _mm512_srli_epi16::<8>(leaving),
            );
            let even_total =
                _mm512_add_epi16(_mm512_loadu_si512(even.as_ptr().cast()), even_change);
            let odd_total = _mm512_add_epi16(_mm512_loadu_si512(odd.as_ptr().cast()), odd_change);
            _mm512_storeu_si512(even.as_mut_ptr().cast(), even_total);
            _mm512_storeu_si512(odd.as_mut_ptr().cast(), odd_total);
            (even_total, odd_total)
        };
        if NEXT {
            let alive = row[k];
            let (alive_even, alive_odd) = (_pext_u64(alive, EVEN), _pext_u64(alive, !EVEN));
            // Each cell's bounds chosen by its state, then one comparison a bound.
            let within = |total: __m512i, alive: u64| {
                let alive = alive as u32;
                let low = _mm512_mask_blend_epi16(alive, bounds.birth.0, bounds.survive.0);
                let high = _mm512_mask_blend_epi16(alive, bounds.birth.1, bounds.survive.1);
                let from = _mm512_cmpge_epu16_mask(total, low);
                u64::from(_mm512_mask_cmple_epu16_mask(from, total, high))
            };
            next[k] = _pdep_u64(within(even, alive_even), EVEN)
                | _pdep_u64(within(odd, alive_odd), !EVEN);
        }
    }
}
