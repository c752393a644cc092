//! A threshold join of training texts against test texts: the test texts of
//! one side indexed once by gram ([`TextIndex`]), and every test text a
//! training text reaches at or above a fixed threshold ([`Threshold`]) found
//! by prefix filtering, a size filter and the exact overlap.
//!
//! If `s(x, row) >= t` then `overlap >= ceil(t * |row|)`, so among any
//! `|row| - ceil(t * |row|) + 1` of the row's grams at least one is shared:
//! only that many are probed, grams absent from every test text first (they
//! reach nothing), then the rarest in the test texts. Whatever grams are
//! probed, the cut never changes the answer.

use crate::error::{invalid, Result};
use crate::grams::Gram;
use crate::jaccard::{overlap, Score};

use super::vocabulary::{sorted, text, Stamps, Text, Vocabulary};

/// A similarity threshold `numerator / denominator` in (0, 1], every
/// decision on integers.
#[derive(Debug, Clone, Copy)]
pub struct Threshold {
    numerator: u64,
    denominator: u64,
}

impl Threshold {
    pub fn new(numerator: u64, denominator: u64) -> Result<Threshold> {
        if numerator == 0 || denominator == 0 || numerator > denominator {
            return Err(invalid(
                "threshold",
                format!("must lie in (0, 1], got {numerator}/{denominator}"),
            ));
        }
        Ok(Threshold {
            numerator,
            denominator,
        })
    }

    /// `s >= t`, as `overlap * denominator >= union * numerator`.
    pub fn admits(&self, s: Score) -> bool {
        s.overlap as u128 * self.denominator as u128 >= s.union as u128 * self.numerator as u128
    }

    /// `ceil(t * size)`: the overlap a text of `size` grams needs with any
    /// text to reach `t`.
    fn least_overlap(&self, size: u32) -> u32 {
        let (n, d) = (self.numerator as u128, self.denominator as u128);
        ((n * size as u128).div_ceil(d)) as u32
    }

    /// `t * a <= b <= a / t`: sizes `a` and `b` can reach `t` together.
    fn sizes_fit(&self, a: u32, b: u32) -> bool {
        let (n, d) = (self.numerator as u128, self.denominator as u128);
        n * a as u128 <= d * b as u128 && n * b as u128 <= d * a as u128
    }
}

/// The test texts of one side, in the ids of their vocabulary (most frequent
/// grams the lowest ids), with the texts holding each gram.
#[derive(Debug, Clone)]
pub(crate) struct TextIndex {
    pub(crate) vocab: Vocabulary,
    texts: Vec<Text>,
    /// The texts without grams (empty after normalisation).
    empty: Vec<u32>,
    /// The texts holding gram `g`: `postings[starts[g]..starts[g + 1]]`,
    /// increasing.
    starts: Vec<u32>,
    postings: Vec<u32>,
}

impl TextIndex {
    pub(crate) fn new(sets: &[Vec<Gram>]) -> TextIndex {
        let vocab = Vocabulary::by_frequency(sets.iter());
        let texts: Vec<Text> = sets.iter().map(|s| sorted(text(&vocab, s))).collect();
        let mut starts = vec![0u32; vocab.len() + 1];
        for t in &texts {
            for &g in &t.ids {
                starts[g as usize + 1] += 1;
            }
        }
        for g in 0..vocab.len() {
            starts[g + 1] += starts[g];
        }
        let mut next = starts.clone();
        let mut postings = vec![0u32; starts[vocab.len()] as usize];
        for (x, t) in texts.iter().enumerate() {
            for &g in &t.ids {
                postings[next[g as usize] as usize] = x as u32;
                next[g as usize] += 1;
            }
        }
        let empty = (0..texts.len() as u32)
            .filter(|&x| texts[x as usize].size == 0)
            .collect();
        TextIndex {
            vocab,
            texts,
            empty,
            starts,
            postings,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.texts.len()
    }

    /// Every test text at or above `t` with `row` (its ids sorted, its size
    /// counting the grams outside the vocabulary), as (text, score) in no
    /// order. `seen` has a slot per text.
    pub(crate) fn matches(
        &self,
        row: &Text,
        t: &Threshold,
        seen: &mut Stamps,
        found: &mut Vec<(u32, Score)>,
    ) {
        found.clear();
        if row.size == 0 {
            found.extend(self.empty.iter().map(|&x| (x, Score::jaccard(0, 0, 0))));
            return;
        }
        let probed = row.size - t.least_overlap(row.size) + 1;
        let unknown = row.size - row.ids.len() as u32;
        if unknown >= probed {
            return;
        }
        // The rarest known grams have the highest ids.
        let rarest = (probed - unknown) as usize;
        seen.clear();
        for &g in &row.ids[row.ids.len() - rarest..] {
            let list = &self.postings[self.starts[g as usize] as usize..][..self.count(g)];
            for &x in list {
                if !seen.insert(x) {
                    continue;
                }
                let test = &self.texts[x as usize];
                if !t.sizes_fit(test.size, row.size) {
                    continue;
                }
                let s = Score::jaccard(overlap(&test.ids, &row.ids), test.size, row.size);
                if t.admits(s) {
                    found.push((x, s));
                }
            }
        }
    }

    fn count(&self, g: u32) -> usize {
        (self.starts[g as usize + 1] - self.starts[g as usize]) as usize
    }
}
