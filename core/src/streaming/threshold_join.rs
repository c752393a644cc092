//! A threshold join of training texts against test texts: the test texts of
//! one side indexed once by the prefix of their grams ([`TextIndex`]), and
//! every test text a training text reaches at or above a fixed threshold
//! ([`Threshold`]) found by prefix filtering, a size filter and the exact
//! overlap.
//!
//! If `s(x, row) >= t` then the overlap is at least `ceil(t * |x|)` and
//! `ceil(t * |row|)`. Order every gram by one global order (grams absent
//! from every test text first, then the rarest in the test texts: the
//! highest ids): the first shared gram in that order lies within the first
//! `|x| - ceil(t * |x|) + 1` grams of `x` and the first
//! `|row| - ceil(t * |row|) + 1` of the row. So only those prefixes are
//! indexed and probed, and the cut never changes the answer.
//!
//! The candidates a row reaches are then scored exactly, the cheaper of two
//! ways by a cost model: each candidate's overlap merged from the two id
//! lists, or every text's overlap counted at once (`overlaps`: bitsets of
//! the frequent grams), which wins where a low threshold lets a row reach
//! many texts. Both count the same overlaps.

use crate::grams::Gram;
use crate::jaccard::Score;
use crate::threshold::Threshold;

use super::overlaps::{OverlapCounter, OverlapScratch, MOST_GRAMS};
use super::vocabulary::{sorted, text, Stamps, Text, Vocabulary};

/// Nanoseconds of a step of a merge of two id lists, and of a word of a
/// bitset summed and a text's count tested by the overlap counter (as
/// `overlaps` measures them, without AVX2's gain).
const MERGE_STEP_NS: u64 = 2;
const COUNTER_WORD_NS: u64 = 2;
const COUNTER_TEXT_NS: u64 = 1;

/// One thread's scratch for [`TextIndex::matches`].
pub(crate) struct JoinScratch {
    seen: Stamps,
    candidates: Vec<u32>,
    counts: Vec<u32>,
    overlaps: OverlapScratch,
}

/// The test texts of one side, in the ids of their vocabulary (most frequent
/// grams the lowest ids), with the texts holding each gram in their prefix
/// for the threshold.
#[derive(Debug, Clone)]
pub(crate) struct TextIndex {
    pub(crate) vocab: Vocabulary,
    texts: Vec<Text>,
    /// The texts without grams (empty after normalisation).
    empty: Vec<u32>,
    /// The texts holding gram `g` in their prefix:
    /// `postings[starts[g]..starts[g + 1]]`, increasing.
    starts: Vec<u32>,
    postings: Vec<u32>,
    /// Every text's overlap with a row at once, where the texts fit it.
    counter: Option<OverlapCounter>,
}

impl TextIndex {
    pub(crate) fn new(sets: &[Vec<Gram>], t: &Threshold) -> TextIndex {
        let vocab = Vocabulary::by_frequency(sets.iter());
        let texts: Vec<Text> = sets.iter().map(|s| sorted(text(&vocab, s))).collect();
        let mut starts = vec![0u32; vocab.len() + 1];
        for x in &texts {
            for &g in prefix(t, x) {
                starts[g as usize + 1] += 1;
            }
        }
        for g in 0..vocab.len() {
            starts[g + 1] += starts[g];
        }
        let mut next = starts.clone();
        let mut postings = vec![0u32; starts[vocab.len()] as usize];
        for (i, x) in texts.iter().enumerate() {
            for &g in prefix(t, x) {
                postings[next[g as usize] as usize] = i as u32;
                next[g as usize] += 1;
            }
        }
        let empty = (0..texts.len() as u32)
            .filter(|&x| texts[x as usize].size == 0)
            .collect();
        let counter = OverlapCounter::new(vocab.len(), &texts);
        TextIndex {
            vocab,
            texts,
            empty,
            starts,
            postings,
            counter,
        }
    }

    pub(crate) fn scratch(&self) -> JoinScratch {
        JoinScratch {
            seen: Stamps::new(self.texts.len()),
            candidates: Vec::new(),
            counts: vec![
                0;
                if self.counter.is_some() {
                    self.texts.len()
                } else {
                    0
                }
            ],
            overlaps: OverlapScratch::default(),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.texts.len()
    }

    /// Every test text at or above `t` with `row` (its ids sorted, its size
    /// counting the grams outside the vocabulary), as (text, score) in no
    /// order. `counting`: count every text's overlap (`Some(true)`, where
    /// the texts fit the counter), merge each candidate's (`Some(false)`), or
    /// whichever the cost model expects to be cheaper (`None`).
    pub(crate) fn matches(
        &self,
        row: &Text,
        t: &Threshold,
        counting: Option<bool>,
        scratch: &mut JoinScratch,
        found: &mut Vec<(u32, Score)>,
    ) {
        found.clear();
        if row.size == 0 {
            found.extend(self.empty.iter().map(|&x| (x, Score::jaccard(0, 0, 0))));
            return;
        }
        let probed = t.prefix_len(row.size);
        let unknown = row.size - row.ids.len() as u32;
        if unknown >= probed {
            return;
        }
        // The row's prefix: its unknown grams (indexed nowhere), then its
        // rarest known grams, the highest ids.
        let rarest = (probed - unknown) as usize;
        let JoinScratch {
            seen,
            candidates,
            counts,
            overlaps,
        } = scratch;
        seen.clear();
        candidates.clear();
        let mut merge_steps = 0u64;
        for &g in &row.ids[row.ids.len() - rarest..] {
            let list = &self.postings[self.starts[g as usize] as usize..][..self.count(g)];
            for &x in list {
                let size = self.texts[x as usize].size;
                if seen.insert(x) && t.sizes_fit(size, row.size) {
                    candidates.push(x);
                    merge_steps += (size as usize + row.ids.len()) as u64;
                }
            }
        }
        let score = |x: u32, o: u32| Score::jaccard(o, self.texts[x as usize].size, row.size);
        match &self.counter {
            Some(counter)
                if row.ids.len() <= MOST_GRAMS as usize
                    && counting.unwrap_or_else(|| self.counting_is_cheaper(merge_steps, row)) =>
            {
                counts.fill(0);
                counter.count(&row.ids, overlaps, counts);
                found.extend(
                    candidates
                        .iter()
                        .map(|&x| (x, score(x, counts[x as usize])))
                        .filter(|&(_, s)| t.admits(s)),
                );
            }
            _ => found.extend(
                candidates
                    .iter()
                    .map(|&x| {
                        let ids = &self.texts[x as usize].ids;
                        let need = t.least_shared(ids.len() as u32, row.size);
                        (x, score(x, overlap_reaching(ids, &row.ids, need)))
                    })
                    .filter(|&(_, s)| t.admits(s)),
            ),
        }
    }

    /// Counting every text's overlap with `row` costs less than the
    /// candidates' `merge_steps`.
    fn counting_is_cheaper(&self, merge_steps: u64, row: &Text) -> bool {
        let texts = self.texts.len() as u64;
        let words = row.ids.len() as u64 * texts.div_ceil(64);
        COUNTER_WORD_NS * words + COUNTER_TEXT_NS * texts < MERGE_STEP_NS * merge_steps
    }

    fn count(&self, g: u32) -> usize {
        (self.starts[g as usize + 1] - self.starts[g as usize]) as usize
    }
}

/// A test text's prefix for `t` (its ids sorted, all in the vocabulary): its
/// rarest grams, the highest ids; empty for an empty text.
fn prefix<'a>(t: &Threshold, x: &'a Text) -> &'a [u32] {
    if x.size == 0 {
        return &[];
    }
    &x.ids[x.ids.len() - t.prefix_len(x.size) as usize..]
}

/// The overlap of two sorted id lists, or some count below `need` as soon as
/// the ids left cannot bring it to `need`.
fn overlap_reaching(a: &[u32], b: &[u32], need: u32) -> u32 {
    let (mut i, mut j, mut o) = (0, 0, 0u32);
    while i < a.len() && j < b.len() {
        if o as usize + (a.len() - i).min(b.len() - j) < need as usize {
            return o;
        }
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                o += 1;
                i += 1;
                j += 1;
            }
        }
    }
    o
}
