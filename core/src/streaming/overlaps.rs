//! Every test text's exact overlap with a training row at once, for test
//! sets whose items are far from the corpus: their bars stay low, a row's
//! prefix probe then reaches most texts, and counting each list entry and
//! checking each text reached costs more than counting every shared gram
//! 64 texts to a word.
//!
//! The vocabulary numbers a side's grams most frequent first
//! ([`Vocabulary::by_frequency`](super::vocabulary::Vocabulary::by_frequency)),
//! so the grams held by many texts are the lowest ids. Each of them keeps its
//! texts as a bitset, and a row's bitsets are summed in bit-sliced counters
//! (carry-save adders, eight bitsets at a time, loops the compiler
//! vectorizes); the sums are written out as one count per text, and the
//! lists of the other grams are counted one entry at a time. A text passes
//! the row when its count reaches its bar ([`Thresholds`]), decided exactly
//! (integers that doubles hold without rounding).

use crate::jaccard::Bar;

use super::fetch::prefetch;
use super::vocabulary::Text;

/// How many lists ahead [`OverlapCounter::count`] fetches a rare gram's list.
const AHEAD: usize = 8;

/// The most grams a counted row or a test text may have: counts fit 16 bits,
/// and the products of [`Thresholds`] stay inside the 53 bits a double holds
/// exactly.
pub(crate) const MOST_GRAMS: u32 = u16::MAX as u32;

/// The most memory a side's bitsets may take: larger test sets (some tens
/// of thousands of texts) are probed by their prefixes only.
const MOST_BITSET_BYTES: usize = 64 << 20;

/// Four words, summed as one: the loops over lanes compile to vector
/// operations.
type Lane = [u64; 4];

/// Texts per lane.
const LANE_TEXTS: usize = 256;

#[inline(always)]
fn xor(a: Lane, b: Lane) -> Lane {
    std::array::from_fn(|i| a[i] ^ b[i])
}

#[inline(always)]
fn and(a: Lane, b: Lane) -> Lane {
    std::array::from_fn(|i| a[i] & b[i])
}

/// Sum and carry of three bit-sliced one-bit inputs.
#[inline(always)]
fn carry_save(a: Lane, b: Lane, c: Lane) -> (Lane, Lane) {
    let u = xor(a, b);
    (
        xor(u, c),
        std::array::from_fn(|i| (a[i] & b[i]) | (u[i] & c[i])),
    )
}

/// Add `carry` (of the weight of `planes[0]`) to the counters `planes`
/// (one lane each).
#[inline(always)]
fn ripple(planes: &mut [Lane], mut carry: Lane) {
    for plane in planes {
        let p = *plane;
        *plane = xor(p, carry);
        carry = and(carry, p);
    }
}

/// A side's test texts by gram: bitsets for the grams of many texts, lists
/// (16-bit text numbers) for the others.
#[derive(Debug, Clone)]
pub(crate) struct OverlapCounter {
    texts: usize,
    /// Lanes of a bitset.
    lanes: usize,
    /// Grams `0..frequent` have bitsets: `bits[g * lanes..(g + 1) * lanes]`.
    frequent: u32,
    bits: Vec<Lane>,
    /// Gram `frequent + j` holds texts `entries[offsets[j]..offsets[j + 1]]`.
    offsets: Vec<u32>,
    entries: Vec<u16>,
    /// The machine has AVX2 (x86_64): the word loops are compiled for it too.
    wide: bool,
}

/// One thread's scratch for [`OverlapCounter::count`].
#[derive(Default)]
pub(crate) struct OverlapScratch {
    frequent: Vec<u32>,
    rare: Vec<u32>,
    /// Plane `k` of lane `w` (counters of weight `2^k`): `planes[w * depth + k]`.
    planes: Vec<Lane>,
}

impl OverlapCounter {
    /// The counter of `texts` (ids below `vocab_len`, numbered most frequent
    /// first), or `None` when a text number or a text's size would not fit
    /// its arithmetic (more than 65,536 texts or a text of more than
    /// [`MOST_GRAMS`] grams) or its bitsets would take more than
    /// [`MOST_BITSET_BYTES`].
    pub(crate) fn new(vocab_len: usize, texts: &[Text]) -> Option<OverlapCounter> {
        if texts.len() > 1 << 16 || texts.iter().any(|t| t.size > MOST_GRAMS) {
            return None;
        }
        let lanes = texts.len().div_ceil(LANE_TEXTS);
        let words = texts.len().div_ceil(64);
        let mut df = vec![0u32; vocab_len];
        for t in texts {
            for &g in &t.ids {
                df[g as usize] += 1;
            }
        }
        // A bitset costs `words` word operations, a list one count per entry.
        let least = (words as u32 / 2).max(1);
        // Any split counts exactly; with the most frequent grams first it
        // gives each kind the grams it counts cheaper.
        let frequent = df.partition_point(|&d| d >= least) as u32;
        if frequent as usize * lanes * std::mem::size_of::<Lane>() > MOST_BITSET_BYTES {
            return None;
        }
        let mut bits = vec![[0u64; 4]; frequent as usize * lanes];
        let mut offsets = vec![0u32; vocab_len - frequent as usize + 1];
        for (j, &d) in df[frequent as usize..].iter().enumerate() {
            offsets[j + 1] = offsets[j] + d;
        }
        let mut fill = offsets.clone();
        let mut entries = vec![0u16; *offsets.last().expect("one offset") as usize];
        for (t, text) in texts.iter().enumerate() {
            for &g in &text.ids {
                if g < frequent {
                    bits[g as usize * lanes + t / LANE_TEXTS][t / 64 % 4] |= 1 << (t % 64);
                } else {
                    let j = (g - frequent) as usize;
                    entries[fill[j] as usize] = t as u16;
                    fill[j] += 1;
                }
            }
        }
        Some(OverlapCounter {
            texts: texts.len(),
            lanes,
            frequent,
            bits,
            offsets,
            entries,
            wide: avx2(),
        })
    }

    /// The expected nanoseconds (on one core) of counting `rows` training
    /// texts of which `df[g]` held gram `g`: 0.8 ns a word of a bitset
    /// summed, 3 ns an entry of a list counted, 0.5 ns each text's count
    /// written out and tested (measured on 2,000 test texts; the word and
    /// the text 2.5 times dearer without AVX2).
    pub(crate) fn expected_ns(&self, df: &[u32], rows: u64) -> f64 {
        let slow = if self.wide { 1.0 } else { 2.5 };
        let (word_ns, entry_ns, text_ns) = (slow * 0.8, 3.0, slow * 0.5);
        let (mut words, mut entries) = (0u64, 0u64);
        for (g, &d) in df.iter().enumerate().filter(|&(_, &d)| d > 0) {
            if (g as u32) < self.frequent {
                words += d as u64 * 4 * self.lanes as u64;
            } else {
                let j = g - self.frequent as usize;
                entries += d as u64 * (self.offsets[j + 1] - self.offsets[j]) as u64;
            }
        }
        word_ns * words as f64
            + entry_ns * entries as f64
            + text_ns * (rows * self.texts as u64) as f64
    }

    /// Add to `counts` (one per text) the number of `row`'s grams (at most
    /// [`MOST_GRAMS`], each once) that each text holds.
    pub(crate) fn count(&self, row: &[u32], scratch: &mut OverlapScratch, counts: &mut [u32]) {
        debug_assert!(row.len() <= MOST_GRAMS as usize && counts.len() == self.texts);
        scratch.frequent.clear();
        scratch.rare.clear();
        for &g in row {
            if g < self.frequent {
                scratch.frequent.push(g);
            } else {
                scratch.rare.push(g - self.frequent);
            }
        }
        #[cfg(target_arch = "x86_64")]
        if self.wide {
            // SAFETY: `wide` is set only where the processor has AVX2.
            unsafe { self.sum_bitsets_avx2(scratch, counts) };
        } else {
            self.sum_bitsets(scratch, counts);
        }
        #[cfg(not(target_arch = "x86_64"))]
        self.sum_bitsets(scratch, counts);
        let rare = &scratch.rare;
        for (j, &g) in rare.iter().enumerate() {
            if let Some(&ahead) = rare.get(j + AHEAD) {
                prefetch(&self.entries, self.offsets[ahead as usize] as usize);
            }
            let (start, end) = (self.offsets[g as usize], self.offsets[g as usize + 1]);
            for &t in &self.entries[start as usize..end as usize] {
                counts[t as usize] += 1;
            }
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn sum_bitsets_avx2(&self, scratch: &mut OverlapScratch, counts: &mut [u32]) {
        self.sum_bitsets(scratch, counts)
    }

    /// Add the texts of the row's frequent grams' bitsets to `counts`.
    #[inline(always)]
    fn sum_bitsets(&self, scratch: &mut OverlapScratch, counts: &mut [u32]) {
        let lanes = self.lanes;
        let grams = &scratch.frequent;
        if grams.is_empty() {
            return;
        }
        // Enough planes to hold the number of grams, and the adders' three.
        let depth = (usize::BITS - grams.len().leading_zeros()).max(3) as usize;
        let planes = &mut scratch.planes;
        planes.clear();
        planes.resize(depth * lanes, [0; 4]);
        let bitset = |g: u32| &self.bits[g as usize * lanes..(g as usize + 1) * lanes];
        let mut eights = grams.chunks_exact(8);
        for x in &mut eights {
            let b: [&[Lane]; 8] = std::array::from_fn(|k| bitset(x[k]));
            for (w, counter) in planes.chunks_exact_mut(depth).enumerate() {
                let (o, a) = carry_save(counter[0], b[0][w], b[1][w]);
                let (o, c) = carry_save(o, b[2][w], b[3][w]);
                let (t, fours_a) = carry_save(counter[1], a, c);
                let (o, a) = carry_save(o, b[4][w], b[5][w]);
                let (o, c) = carry_save(o, b[6][w], b[7][w]);
                let (t, fours_b) = carry_save(t, a, c);
                let (f, eights) = carry_save(counter[2], fours_a, fours_b);
                counter[0] = o;
                counter[1] = t;
                counter[2] = f;
                ripple(&mut counter[3..], eights);
            }
        }
        for &g in eights.remainder() {
            for (counter, &b) in planes.chunks_exact_mut(depth).zip(bitset(g)) {
                ripple(counter, b);
            }
        }
        #[cfg(target_arch = "x86_64")]
        if self.wide {
            // SAFETY: `wide` is set only where the processor has AVX2.
            return unsafe { add_counts_avx2(planes, depth, counts) };
        }
        add_counts(planes, depth, counts);
    }
}

/// The bit of each of 16 texts in a 16-bit piece of a plane.
const TEXT_BITS: [u16; 16] = {
    let mut bit = [0u16; 16];
    let mut l = 0;
    while l < 16 {
        bit[l] = 1 << l;
        l += 1;
    }
    bit
};

/// Add each text's count, read from its bit in every plane (`depth` planes
/// a lane), to `counts`: 16 texts a step, the planes highest first, a count
/// doubling and then taking its bit.
#[inline(always)]
fn add_counts(planes: &[Lane], depth: usize, counts: &mut [u32]) {
    for (counter, counts) in planes
        .chunks_exact(depth)
        .zip(counts.chunks_mut(LANE_TEXTS))
    {
        for (j, counts) in counts.chunks_mut(16).enumerate() {
            let mut sums = [0u16; 16];
            for plane in counter.iter().rev() {
                let bits = (plane[j / 4] >> (16 * (j % 4))) as u16;
                for l in 0..16 {
                    sums[l] = (sums[l] << 1) | (bits & TEXT_BITS[l] != 0) as u16;
                }
            }
            for (count, &sum) in counts.iter_mut().zip(&sums) {
                *count += sum as u32;
            }
        }
    }
}

/// [`add_counts`] in AVX2 registers: the 16 counts of a step are one
/// register of 16-bit lanes (a text's bit of a plane tested by comparing
/// the plane's 16 bits, broadcast, with the lane's own bit), widened to
/// 32 bits as they are added.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn add_counts_avx2(planes: &[Lane], depth: usize, counts: &mut [u32]) {
    use std::arch::x86_64::*;
    // SAFETY: `TEXT_BITS` holds the 32 bytes read.
    let bit = unsafe { _mm256_loadu_si256(TEXT_BITS.as_ptr().cast()) };
    for (counter, counts) in planes
        .chunks_exact(depth)
        .zip(counts.chunks_mut(LANE_TEXTS))
    {
        for (j, counts) in counts.chunks_mut(16).enumerate() {
            let mut sums = _mm256_setzero_si256();
            for plane in counter.iter().rev() {
                let bits = _mm256_set1_epi16((plane[j / 4] >> (16 * (j % 4))) as u16 as i16);
                let set = _mm256_cmpeq_epi16(_mm256_and_si256(bits, bit), bit);
                // Doubled, then 1 more where the bit is set (`set` is -1 there).
                sums = _mm256_sub_epi16(_mm256_add_epi16(sums, sums), set);
            }
            if let Ok(counts) = <&mut [u32; 16]>::try_from(&mut *counts) {
                let low = _mm256_cvtepu16_epi32(_mm256_castsi256_si128(sums));
                let high = _mm256_cvtepu16_epi32(_mm256_extracti128_si256::<1>(sums));
                let (first, second) = counts.split_at_mut(8);
                // SAFETY: each half holds the 32 bytes read and written.
                unsafe {
                    let a = _mm256_loadu_si256(first.as_ptr().cast());
                    let b = _mm256_loadu_si256(second.as_ptr().cast());
                    _mm256_storeu_si256(first.as_mut_ptr().cast(), _mm256_add_epi32(a, low));
                    _mm256_storeu_si256(second.as_mut_ptr().cast(), _mm256_add_epi32(b, high));
                }
            } else {
                let mut out = [0u16; 16];
                // SAFETY: `out` holds the 32 bytes written.
                unsafe { _mm256_storeu_si256(out.as_mut_ptr().cast(), sums) };
                for (count, &sum) in counts.iter_mut().zip(&out) {
                    *count += sum as u32;
                }
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
fn avx2() -> bool {
    std::is_x86_feature_detected!("avx2")
}

#[cfg(not(target_arch = "x86_64"))]
fn avx2() -> bool {
    false
}

/// Each text's bar as the terms of an exact test: a row of `s` grams
/// sharing `o` with a text of `n` passes the bar `p / q` when `o >= 1` and
/// `o (p + q) >= p (n + s)` (`>` for a strict bar), as
/// [`min_overlap`](super::prefix_index::min_overlap) decides. With `o`, `n`,
/// `s` and `p` (an overlap with a text of either side) at most
/// [`MOST_GRAMS`], and `q` below 2^33, every term and product is an integer
/// below 2^50, which a double holds exactly: the test is exact in floating
/// point, and vectorizes.
#[derive(Clone, Default)]
pub(crate) struct Thresholds {
    /// `p + q`
    weight: Vec<f64>,
    /// `p n`, plus 1 for a strict bar
    base: Vec<f64>,
    /// `p`
    per_row_gram: Vec<f64>,
    /// The machine has AVX2 (x86_64).
    wide: bool,
}

impl Thresholds {
    pub(crate) fn new(texts: usize) -> Thresholds {
        Thresholds {
            weight: vec![0.0; texts],
            base: vec![0.0; texts],
            per_row_gram: vec![0.0; texts],
            wide: avx2(),
        }
    }

    /// Text `t` of `n` grams must pass `bar`.
    pub(crate) fn set(&mut self, t: usize, bar: Bar, n: u32) {
        let (p, q) = (bar.score.overlap as u64, bar.score.union as u64);
        debug_assert!(n <= MOST_GRAMS && p <= MOST_GRAMS as u64);
        self.weight[t] = (p + q) as f64;
        self.base[t] = (p * n as u64 + bar.strict as u64) as f64;
        self.per_row_gram[t] = p as f64;
    }

    /// The texts (with their counts) that a row of `row_size` grams (at most
    /// [`MOST_GRAMS`]) passes, given each text's exact overlap with it, in
    /// text order. Tested 64 texts at a time, without branches.
    pub(crate) fn passing(&self, counts: &[u32], row_size: u32, out: &mut Vec<(u32, u32)>) {
        #[cfg(target_arch = "x86_64")]
        if self.wide {
            // SAFETY: `wide` is set only where the processor has AVX2.
            return unsafe { self.passing_avx2(counts, row_size, out) };
        }
        self.passing_on(counts, row_size, out)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn passing_avx2(&self, counts: &[u32], row_size: u32, out: &mut Vec<(u32, u32)>) {
        self.passing_on(counts, row_size, out)
    }

    #[inline(always)]
    fn passing_on(&self, counts: &[u32], row_size: u32, out: &mut Vec<(u32, u32)>) {
        out.clear();
        let s = row_size as f64;
        let chunks = counts
            .chunks(64)
            .zip(self.weight.chunks(64))
            .zip(self.base.chunks(64).zip(self.per_row_gram.chunks(64)));
        for (c, ((counts, weight), (base, per))) in chunks.enumerate() {
            let mut mask = 0u64;
            for j in 0..counts.len() {
                let o = counts[j] as f64;
                let passes = (o >= 1.0) & (o * weight[j] >= base[j] + per[j] * s);
                mask |= (passes as u64) << j;
            }
            while mask != 0 {
                let j = mask.trailing_zeros() as usize;
                out.push(((c * 64 + j) as u32, counts[j]));
                mask &= mask - 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::prefix_index::min_overlap;
    use super::super::vocabulary::Vocabulary;
    use super::*;
    use crate::grams::Gram;
    use crate::jaccard::Score;
    use proptest::collection::{btree_set, vec};
    use proptest::prelude::*;

    /// Sets of grams (small numbers, as gram keys) written in the ids of
    /// their vocabulary, numbered most frequent first.
    fn in_vocabulary(
        sets: &[std::collections::BTreeSet<u32>],
        row: std::collections::BTreeSet<u32>,
    ) -> (usize, Vec<Text>, Vec<u32>) {
        let key = |g: u32| g as Gram + 1;
        let keys: Vec<Vec<Gram>> = sets
            .iter()
            .map(|t| t.iter().map(|&g| key(g)).collect())
            .collect();
        let vocab = Vocabulary::by_frequency(keys.iter());
        let ids = |keys: &[Gram]| keys.iter().filter_map(|&g| vocab.get(g)).collect();
        let texts = keys
            .iter()
            .map(|k| Text {
                size: k.len() as u32,
                ids: ids(k),
            })
            .collect();
        let row: Vec<Gram> = row.into_iter().map(key).collect();
        (vocab.len(), texts, ids(&row))
    }

    fn counts_of(counter: &OverlapCounter, row: &[u32], wide: bool) -> Vec<u32> {
        let mut scratch = OverlapScratch::default();
        let mut counts = vec![0u32; counter.texts];
        let counter = OverlapCounter {
            wide: wide && counter.wide,
            bits: counter.bits.clone(),
            offsets: counter.offsets.clone(),
            entries: counter.entries.clone(),
            ..*counter
        };
        counter.count(row, &mut scratch, &mut counts);
        counts
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(600))]

        /// Every text's count is its exact overlap with the row, whichever
        /// grams have bitsets (many texts make words of every kind; a few
        /// grams are common, most are rare and counted from lists) and on
        /// either loop of the machine.
        #[test]
        fn counts_are_exact_overlaps(
            texts in vec(btree_set(prop_oneof![0u32..16, 16u32..3000], 0..30), 1..300),
            row in btree_set(prop_oneof![0u32..16, 16u32..3000], 0..200),
        ) {
            let (vocab_len, texts, row) = in_vocabulary(&texts, row);
            let counter = OverlapCounter::new(vocab_len, &texts).expect("small texts");
            for wide in [false, true] {
                let counts = counts_of(&counter, &row, wide);
                for (t, text) in texts.iter().enumerate() {
                    let shared = text.ids.iter().filter(|g| row.contains(g)).count() as u32;
                    prop_assert_eq!(counts[t], shared, "text {} wide {}", t, wide);
                }
            }
        }

        /// A text passes exactly when its overlap reaches `min_overlap`, on
        /// either loop of the machine.
        #[test]
        fn thresholds_decide_as_min_overlap(
            cases in vec((0u32..300, 1u32..400, any::<bool>(), 0u32..300, 0u32..300, 0u32..300), 1..70),
        ) {
            let mut thresholds = Thresholds::new(cases.len());
            let mut counts = Vec::new();
            let row_size = cases[0].4 + 1;
            for (t, &(p, extra, strict, n, _, o)) in cases.iter().enumerate() {
                let score = Score { overlap: p.min(n.max(1)), union: p.min(n.max(1)) + extra };
                let bar = if strict { Bar::above(score) } else { Bar::at_least(score) };
                thresholds.set(t, bar, n);
                counts.push(o.min(n).min(row_size));
            }
            let want: Vec<(u32, u32)> = cases
                .iter()
                .enumerate()
                .filter(|&(t, &(p, extra, strict, n, _, _))| {
                    let score = Score { overlap: p.min(n.max(1)), union: p.min(n.max(1)) + extra };
                    let bar = if strict { Bar::above(score) } else { Bar::at_least(score) };
                    counts[t] >= min_overlap(bar, n, row_size)
                })
                .map(|(t, _)| (t as u32, counts[t]))
                .collect();
            let wide = thresholds.wide;
            for on in [false, wide] {
                thresholds.wide = on;
                let mut out = Vec::new();
                thresholds.passing(&counts, row_size, &mut out);
                prop_assert_eq!(&out, &want, "wide {}", on);
            }
        }
    }

    #[test]
    fn large_texts_and_test_sets_have_no_counter() {
        let big = Text {
            size: MOST_GRAMS + 1,
            ids: vec![0],
        };
        assert!(OverlapCounter::new(1, &[big]).is_none());
        let many = vec![Text::default(); (1 << 16) + 1];
        assert!(OverlapCounter::new(1, &many).is_none());
        assert!(OverlapCounter::new(1, &many[..1 << 16]).is_some());
    }
}
