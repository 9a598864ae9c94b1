//! Vectors of 64-bit words for bit-sliced inner loops written once for every instruction set:
//! a [`VectorKernel`] is generic over its [`Vector`] type, and [`Simd::run`] runs it in
//! AVX-512 (with or without VBMI2's funnel shifts), AVX2 or plain `u64` words, each compiled
//! for its instruction set. The vectors are `core::arch` registers rather than arrays of words
//! left to the compiler, which broke such arrays back into words in larger loops (issue 43's
//! record: 79% of the samples in scalar instructions).

use super::bitsliced::Isa;

/// Work generic over the vector it is done in.
pub trait VectorKernel {
    /// Does the work in vectors `V`.
    fn run<V: Vector>(self);
}

/// The vectors a [`VectorKernel`] runs in: an instruction set and, on AVX-512, whether VBMI2's
/// funnel shifts are used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Simd {
    isa: Isa,
    funnel: bool,
}

impl Simd {
    /// `isa`'s vectors, with VBMI2's funnel shifts on AVX-512 where the CPU has them.
    ///
    /// # Panics
    /// Where the CPU lacks `isa` (take it from [`Isa::detect`] or [`Isa::require`]).
    pub fn new(isa: Isa) -> Simd {
        assert!(isa.is_here(), "this CPU has no {} instructions", isa.name());
        Simd {
            isa,
            funnel: isa == Isa::Avx512 && funnel_shifts(),
        }
    }

    /// The same without VBMI2's funnel shifts.
    pub fn without_funnel(self) -> Simd {
        Simd {
            funnel: false,
            ..self
        }
    }

    /// Whether VBMI2's funnel shifts are used.
    pub fn funnel(&self) -> bool {
        self.funnel
    }

    /// Runs `kernel` in these vectors.
    pub fn run<K: VectorKernel>(self, kernel: K) {
        match self.isa {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `new` checked that the CPU has the instruction set, and `funnel` is
            // only set where it reports AVX-512 VBMI2.
            Isa::Avx512 if self.funnel => unsafe { x86::run_avx512_vbmi2(kernel) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `new` checked that the CPU reports AVX-512 F, VL and BW.
            Isa::Avx512 => unsafe { x86::run_avx512(kernel) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `new` checked that the CPU reports AVX2.
            Isa::Avx2 => unsafe { x86::run_avx2(kernel) },
            _ => kernel.run::<u64>(),
        }
    }
}

/// Whether the CPU has VBMI2's funnel shifts.
fn funnel_shifts() -> bool {
    #[cfg(target_arch = "x86_64")]
    return x86::has_vbmi2();
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// A vector of words and what the inner loops do with it, for each instruction set.
pub trait Vector: Copy {
    /// Words a vector holds.
    const WORDS: usize;
    /// `word` in every word.
    fn splat(word: u64) -> Self;
    /// The first `WORDS` words of `words`.
    fn load(words: &[u64]) -> Self;
    /// Into the first `WORDS` words of `words`.
    fn store(self, words: &mut [u64]);
    /// Bitwise AND.
    fn and(self, other: Self) -> Self;
    /// Bitwise OR.
    fn or(self, other: Self) -> Self;
    /// Bitwise exclusive OR.
    fn xor(self, other: Self) -> Self;
    /// Bitwise NOT.
    #[inline(always)]
    fn not(self) -> Self {
        self.xor(Self::splat(!0))
    }
    /// Bitwise exclusive OR of three: the sum bit of a full adder.
    #[inline(always)]
    fn xor3(self, b: Self, c: Self) -> Self {
        self.xor(b).xor(c)
    }
    /// Bitwise majority of three: the carry bit of a full adder.
    #[inline(always)]
    fn majority(self, b: Self, c: Self) -> Self {
        self.and(b).or(c.and(self.xor(b)))
    }
    /// Adds three bits: (sum, carry).
    #[inline(always)]
    fn full_add(self, b: Self, c: Self) -> (Self, Self) {
        (self.xor3(b, c), self.majority(b, c))
    }
    /// The OR of the words.
    #[inline(always)]
    fn or_words(self) -> u64 {
        let mut words = [0; 8];
        self.store(&mut words);
        words[..Self::WORDS].iter().fold(0, |all, w| all | w)
    }
    /// Whether every word is 0.
    #[inline(always)]
    fn is_zero(self) -> bool {
        self.or_words() == 0
    }
    /// Each word shifted right by `s` (0..64), the low bits of `next`'s word shifted in
    /// (`(self >> s) | (next << (64 − s))`, `self` where `s` is 0).
    fn funnel(self, next: Self, s: u32) -> Self;
    /// The words after the first, then `next`'s first: words 1 ..= `WORDS` of `self` and
    /// `next` end to end.
    fn next_row(self, next: Self) -> Self;
    /// The last word, then `next`'s words but its last: words `WORDS` − 1 .. 2·`WORDS` − 1 of
    /// `self` and `next` end to end.
    fn last_row_then(self, next: Self) -> Self;
}

impl Vector for u64 {
    const WORDS: usize = 1;
    #[inline(always)]
    fn splat(word: u64) -> Self {
        word
    }
    #[inline(always)]
    fn load(words: &[u64]) -> Self {
        words[0]
    }
    #[inline(always)]
    fn store(self, words: &mut [u64]) {
        words[0] = self;
    }
    #[inline(always)]
    fn and(self, other: Self) -> Self {
        self & other
    }
    #[inline(always)]
    fn or(self, other: Self) -> Self {
        self | other
    }
    #[inline(always)]
    fn xor(self, other: Self) -> Self {
        self ^ other
    }
    #[inline(always)]
    fn funnel(self, next: Self, s: u32) -> Self {
        // `(next << 1) << (63 − s)` is `next << (64 − s)`, and 0 where s is 0.
        (self >> s) | ((next << 1) << (63 - s))
    }
    #[inline(always)]
    fn next_row(self, next: Self) -> Self {
        next
    }
    #[inline(always)]
    fn last_row_then(self, _next: Self) -> Self {
        self
    }
}

/// The AVX2 and AVX-512 vectors. Their methods use the instructions of their set without a
/// check: they are only called from the `run_*` functions below, which [`Simd::run`] calls
/// where the CPU has them.
#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use super::{Vector, VectorKernel};

    /// Runs `kernel` in AVX-512 vectors, compiled for AVX-512.
    ///
    /// # Safety
    /// The CPU must have AVX-512 F, VL and BW.
    #[target_feature(enable = "avx512f,avx512vl,avx512bw")]
    pub(super) unsafe fn run_avx512<K: VectorKernel>(kernel: K) {
        kernel.run::<Avx512<false>>()
    }

    /// Runs `kernel` in AVX-512 vectors with VBMI2's funnel shifts.
    ///
    /// # Safety
    /// The CPU must have AVX-512 F, VL, BW and VBMI2.
    #[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512vbmi2")]
    pub(super) unsafe fn run_avx512_vbmi2<K: VectorKernel>(kernel: K) {
        kernel.run::<Avx512<true>>()
    }

    /// Runs `kernel` in AVX2 vectors, compiled for AVX2.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn run_avx2<K: VectorKernel>(kernel: K) {
        kernel.run::<Avx2>()
    }

    /// Whether the CPU has AVX-512 VBMI2 (its funnel shifts).
    pub(super) fn has_vbmi2() -> bool {
        is_x86_feature_detected!("avx512vbmi2")
    }

    /// An AVX-512 vector; `FUNNEL`: with VBMI2's funnel shifts.
    #[derive(Clone, Copy)]
    pub(super) struct Avx512<const FUNNEL: bool>(__m512i);

    // SAFETY (every block below): only reached from `run_avx512` and `run_avx512_vbmi2`
    // (`FUNNEL`), whose caller checked that the CPU has AVX-512 F (and VBMI2); loads and
    // stores go through slices of at least 8 words.
    impl<const FUNNEL: bool> Vector for Avx512<FUNNEL> {
        const WORDS: usize = 8;
        #[inline(always)]
        fn splat(word: u64) -> Self {
            // SAFETY: see the note above the impl.
            Avx512(unsafe { _mm512_set1_epi64(word as i64) })
        }
        #[inline(always)]
        fn load(words: &[u64]) -> Self {
            let words = &words[..8];
            // SAFETY: see the note above the impl.
            Avx512(unsafe { _mm512_loadu_si512(words.as_ptr().cast()) })
        }
        #[inline(always)]
        fn store(self, words: &mut [u64]) {
            let words = &mut words[..8];
            // SAFETY: see the note above the impl.
            unsafe { _mm512_storeu_si512(words.as_mut_ptr().cast(), self.0) }
        }
        #[inline(always)]
        fn and(self, other: Self) -> Self {
            // SAFETY: see the note above the impl.
            Avx512(unsafe { _mm512_and_si512(self.0, other.0) })
        }
        #[inline(always)]
        fn or(self, other: Self) -> Self {
            // SAFETY: see the note above the impl.
            Avx512(unsafe { _mm512_or_si512(self.0, other.0) })
        }
        #[inline(always)]
        fn xor(self, other: Self) -> Self {
            // SAFETY: see the note above the impl.
            Avx512(unsafe { _mm512_xor_si512(self.0, other.0) })
        }
        #[inline(always)]
        fn xor3(self, b: Self, c: Self) -> Self {
            // SAFETY: see the note above the impl.
            Avx512(unsafe { _mm512_ternarylogic_epi64::<0x96>(self.0, b.0, c.0) })
        }
        #[inline(always)]
        fn majority(self, b: Self, c: Self) -> Self {
            // SAFETY: see the note above the impl.
            Avx512(unsafe { _mm512_ternarylogic_epi64::<0xe8>(self.0, b.0, c.0) })
        }
        #[inline(always)]
        fn is_zero(self) -> bool {
            // SAFETY: see the note above the impl.
            unsafe { _mm512_test_epi64_mask(self.0, self.0) == 0 }
        }
        #[inline(always)]
        fn funnel(self, next: Self, s: u32) -> Self {
            // SAFETY: see the note above the impl.
            unsafe {
                if FUNNEL {
                    // VBMI2's funnel shift: one instruction.
                    return Avx512(_mm512_shrdv_epi64(
                        self.0,
                        next.0,
                        _mm512_set1_epi64(s as i64),
                    ));
                }
                // Shifts by a vector of counts: one instruction each on Intel's port 0 (the
                // forms with the count in an XMM register take two), and 0 for a count of 64.
                let right = _mm512_srlv_epi64(self.0, _mm512_set1_epi64(s as i64));
                let left = _mm512_sllv_epi64(next.0, _mm512_set1_epi64(64 - s as i64));
                Avx512(_mm512_or_si512(right, left))
            }
        }
        #[inline(always)]
        fn next_row(self, next: Self) -> Self {
            // SAFETY: see the note above the impl.
            Avx512(unsafe { _mm512_alignr_epi64::<1>(next.0, self.0) })
        }
        #[inline(always)]
        fn last_row_then(self, next: Self) -> Self {
            // SAFETY: see the note above the impl.
            Avx512(unsafe { _mm512_alignr_epi64::<7>(next.0, self.0) })
        }
    }

    #[derive(Clone, Copy)]
    pub(super) struct Avx2(__m256i);

    // SAFETY (every block below): only reached from `run_avx2`, whose caller checked that
    // the CPU has AVX2; loads and stores go through slices of at least 4 words.
    impl Vector for Avx2 {
        const WORDS: usize = 4;
        #[inline(always)]
        fn splat(word: u64) -> Self {
            // SAFETY: see the note above the impl.
            Avx2(unsafe { _mm256_set1_epi64x(word as i64) })
        }
        #[inline(always)]
        fn load(words: &[u64]) -> Self {
            let words = &words[..4];
            // SAFETY: see the note above the impl.
            Avx2(unsafe { _mm256_loadu_si256(words.as_ptr().cast()) })
        }
        #[inline(always)]
        fn store(self, words: &mut [u64]) {
            let words = &mut words[..4];
            // SAFETY: see the note above the impl.
            unsafe { _mm256_storeu_si256(words.as_mut_ptr().cast(), self.0) }
        }
        #[inline(always)]
        fn and(self, other: Self) -> Self {
            // SAFETY: see the note above the impl.
            Avx2(unsafe { _mm256_and_si256(self.0, other.0) })
        }
        #[inline(always)]
        fn or(self, other: Self) -> Self {
            // SAFETY: see the note above the impl.
            Avx2(unsafe { _mm256_or_si256(self.0, other.0) })
        }
        #[inline(always)]
        fn xor(self, other: Self) -> Self {
            // SAFETY: see the note above the impl.
            Avx2(unsafe { _mm256_xor_si256(self.0, other.0) })
        }
        #[inline(always)]
        fn is_zero(self) -> bool {
            // SAFETY: see the note above the impl.
            unsafe { _mm256_testz_si256(self.0, self.0) != 0 }
        }
        #[inline(always)]
        fn funnel(self, next: Self, s: u32) -> Self {
            // SAFETY: see the note above the impl.
            unsafe {
                // Shifts by a vector of counts, which give 0 for a count of 64.
                let right = _mm256_srlv_epi64(self.0, _mm256_set1_epi64x(s as i64));
                let left = _mm256_sllv_epi64(next.0, _mm256_set1_epi64x(64 - s as i64));
                Avx2(_mm256_or_si256(right, left))
            }
        }
        #[inline(always)]
        fn next_row(self, next: Self) -> Self {
            // SAFETY: see the note above the impl.
            unsafe {
                // Words 2, 3 of self and 0, 1 of next; then each 128-bit lane moved a word
                // along, the words of this one behind it.
                let middle = _mm256_permute2x128_si256::<0x21>(self.0, next.0);
                Avx2(_mm256_alignr_epi8::<8>(middle, self.0))
            }
        }
        #[inline(always)]
        fn last_row_then(self, next: Self) -> Self {
            // SAFETY: see the note above the impl.
            unsafe {
                let middle = _mm256_permute2x128_si256::<0x21>(self.0, next.0);
                Avx2(_mm256_alignr_epi8::<8>(next.0, middle))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sixteen words of different bits.
    fn words() -> Vec<u64> {
        (0..16u64)
            .map(|i| (i * 0x0101_0101_0101_0101) ^ (i << 60))
            .collect()
    }

    /// The first words of [`words`] as two vectors, through `next_row`, `last_row_then`, `full_add` and
    /// `funnel`.
    struct Moves<'a>(&'a mut Vec<Vec<u64>>);

    impl VectorKernel for Moves<'_> {
        fn run<V: Vector>(self) {
            let words = words();
            let (a, b) = (V::load(&words), V::load(&words[V::WORDS..]));
            let (sum, carry) = a.full_add(b, a.funnel(b, 5));
            for v in [
                a.next_row(b),
                a.last_row_then(b),
                sum,
                carry,
                a.funnel(b, 5),
                a.funnel(b, 0),
            ] {
                let mut out = vec![0; V::WORDS];
                v.store(&mut out);
                self.0.push(out);
            }
        }
    }

    /// Whether each vector with one bit set in one word, and the vector of zeros, is zero.
    struct Zeros<'a>(&'a mut Vec<bool>);

    impl VectorKernel for Zeros<'_> {
        fn run<V: Vector>(self) {
            for word in 0..V::WORDS {
                for bit in [0, 31, 63] {
                    let mut words = vec![0; V::WORDS];
                    words[word] = 1 << bit;
                    self.0.push(V::load(&words).is_zero());
                }
            }
            self.0.push(V::splat(0).is_zero());
        }
    }

    #[test]
    fn every_instruction_set_finds_a_bit_in_any_word() {
        for isa in Isa::available() {
            let mut got = Vec::new();
            Simd::new(isa).run(Zeros(&mut got));
            let (zero, rest) = got.split_last().expect("a vector of zeros");
            assert!(*zero, "{isa:?}");
            assert!(rest.iter().all(|z| !z), "{isa:?}: {rest:?}");
        }
    }

    #[test]
    fn every_instruction_set_moves_rows_and_adds_as_words_do() {
        let words = words();
        for isa in Isa::available() {
            for simd in [Simd::new(isa), Simd::new(isa).without_funnel()] {
                let mut got = Vec::new();
                simd.run(Moves(&mut got));
                let w = got[0].len();
                let (a, b) = (&words[..w], &words[w..2 * w]);
                let funnel = |s: u32| -> Vec<u64> {
                    (0..w)
                        .map(|i| {
                            if s == 0 {
                                a[i]
                            } else {
                                a[i] >> s | b[i] << (64 - s)
                            }
                        })
                        .collect()
                };
                let f5 = funnel(5);
                let sum: Vec<u64> = (0..w).map(|i| a[i] ^ b[i] ^ f5[i]).collect();
                let carry: Vec<u64> = (0..w)
                    .map(|i| a[i] & b[i] | a[i] & f5[i] | b[i] & f5[i])
                    .collect();
                let want = vec![
                    words[1..=w].to_vec(),
                    words[w - 1..2 * w - 1].to_vec(),
                    sum,
                    carry,
                    f5,
                    funnel(0),
                ];
                assert_eq!(got, want, "{simd:?}");
            }
        }
    }
}
