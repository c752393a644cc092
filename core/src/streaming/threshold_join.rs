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
//! The probe walks the row's prefix in that order, and each index entry
//! keeps the gram's position in its text (the positional filter of PPJoin):
//! a text met at row position `i` and text position `j` with `a` grams
//! already shared can share at most `a + 1 + min(|row| - i - 1, |x| - j - 1)`,
//! every shared gram before the two positions lying in both prefixes and so
//! already met. A text whose bound falls below the overlap it needs is
//! dropped for the row; a list's texts come in increasing size, so the size
//! filter is a binary search and a stop.
//!
//! The candidates a row reaches are then scored exactly, the cheaper of two
//! ways by a cost model: each candidate's grams looked up among the row's
//! (marked while the row was read, so the row is never sorted whole), or
//! every text's overlap counted at once (`overlaps`: bitsets of the frequent
//! grams), which wins where a low threshold lets a row reach many texts.
//! Both count the same overlaps.

use crate::grams::Gram;
use crate::jaccard::Score;
use crate::threshold::Threshold;

use super::fetch::prefetch;
use super::overlaps::{OverlapCounter, OverlapScratch, MOST_GRAMS};
use super::vocabulary::{sorted, text, Stamps, Text, Vocabulary};

/// Nanoseconds of a lookup of a text's gram among the row's, and of a word
/// of a bitset summed and a text's count tested by the overlap counter (as
/// `overlaps` measures them, without AVX2's gain).
const LOOKUP_NS: u64 = 2;
const COUNTER_WORD_NS: u64 = 2;
const COUNTER_TEXT_NS: u64 = 1;

/// How many grams ahead of its probe a gram's list is fetched.
const AHEAD: usize = 8;

/// A text dropped for the row by the positional filter.
const DROPPED: u32 = u32::MAX;

/// A text holding a gram in its prefix: its size, and how many of its grams
/// follow that gram in its order.
#[derive(Debug, Clone, Copy)]
struct Entry {
    text: u32,
    size: u32,
    after: u32,
}

/// What the probe of one row knows of a text it met (`row`: the row's
/// stamp): the grams it shares with the row's probed prefix so far (or
/// [`DROPPED`]) and the overlap it needs.
#[derive(Debug, Clone, Copy, Default)]
struct Met {
    row: u32,
    shared: u32,
    need: u32,
}

/// One thread's scratch for [`TextIndex::matches`].
pub(crate) struct JoinScratch {
    /// The stamp of the row probed now, and each text's [`Met`].
    row: u32,
    met: Vec<Met>,
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
    /// `postings[starts[g]..starts[g + 1]]`, by increasing size (then text).
    starts: Vec<u32>,
    postings: Vec<Entry>,
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
        let unset = Entry {
            text: 0,
            size: 0,
            after: 0,
        };
        let mut postings = vec![unset; starts[vocab.len()] as usize];
        let mut by_size: Vec<u32> = (0..texts.len() as u32).collect();
        by_size.sort_by_key(|&x| (texts[x as usize].size, x));
        for x in by_size {
            let size = texts[x as usize].size;
            let head = prefix(t, &texts[x as usize]);
            // The prefix's ids increase: its k-th is followed in the text's
            // order (rarest first) by its `k` lower ids and the rest.
            let rest = size - head.len() as u32;
            for (k, &g) in head.iter().enumerate() {
                postings[next[g as usize] as usize] = Entry {
                    text: x,
                    size,
                    after: rest + k as u32,
                };
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
            row: 0,
            met: vec![Met::default(); self.texts.len()],
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

    /// Every test text at or above `t` with `row` (its ids in any order,
    /// which this reorders; its size counting the grams outside the
    /// vocabulary; `holds`: its ids marked), as (text, score) in no order.
    /// Only the row's prefix is sorted: a text that passes the probe has its
    /// overlap counted by looking its ids up in `holds`. `counting`: count
    /// every text's overlap (`Some(true)`, where the texts fit the counter),
    /// look up each candidate's (`Some(false)`), or whichever the cost model
    /// expects to be cheaper (`None`).
    pub(crate) fn matches(
        &self,
        row: &mut Text,
        holds: &Stamps,
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
        // The row's prefix: its unknown grams (indexed nowhere, positions
        // `0..unknown`), then its rarest known grams, the highest ids, taken
        // rarest first.
        let rarest = (probed - unknown) as usize;
        let cut = row.ids.len() - rarest;
        if cut > 0 {
            row.ids.select_nth_unstable(cut);
        }
        row.ids[cut..].sort_unstable();
        let JoinScratch {
            row: stamp,
            met,
            candidates,
            counts,
            overlaps,
        } = scratch;
        *stamp = stamp.wrapping_add(1);
        if *stamp == 0 {
            met.fill(Met::default());
            *stamp = 1;
        }
        candidates.clear();
        let (least, most) = t.size_window(row.size);
        let prefix = &row.ids[cut..];
        // The gram probed `d` after the `k`-th (rarest first), if any.
        let later = |k: usize, d: usize| prefix.len().checked_sub(k + 1 + d).map(|i| prefix[i]);
        for (k, &g) in prefix.iter().rev().enumerate() {
            // The lists of later grams are fetched while this one is read:
            // first where a list starts, then (once that is at hand) its
            // first entries.
            if let Some(ahead) = later(k, 2 * AHEAD) {
                prefetch(&self.starts, ahead as usize);
            }
            if let Some(ahead) = later(k, AHEAD) {
                prefetch(&self.postings, self.starts[ahead as usize] as usize);
            }
            let after_row = row.size - (unknown + k as u32) - 1;
            let list = &self.postings[self.starts[g as usize] as usize..]
                [..(self.starts[g as usize + 1] - self.starts[g as usize]) as usize];
            let first = list.partition_point(|e| (e.size as u64) < least);
            for e in &list[first..] {
                if e.size as u64 > most {
                    break;
                }
                let m = &mut met[e.text as usize];
                if m.row != *stamp {
                    *m = Met {
                        row: *stamp,
                        shared: 0,
                        need: t.least_shared(e.size, row.size),
                    };
                } else if m.shared == DROPPED {
                    continue;
                }
                if m.shared + 1 + after_row.min(e.after) < m.need {
                    m.shared = DROPPED;
                    continue;
                }
                if m.shared == 0 {
                    candidates.push(e.text);
                }
                m.shared += 1;
            }
        }
        candidates.retain(|&x| met[x as usize].shared != DROPPED);
        if candidates.is_empty() {
            return;
        }
        let lookups: u64 = candidates
            .iter()
            .map(|&x| self.texts[x as usize].size as u64)
            .sum();
        let score = |x: u32, o: u32| Score::jaccard(o, self.texts[x as usize].size, row.size);
        match &self.counter {
            Some(counter)
                if row.ids.len() <= MOST_GRAMS as usize
                    && counting.unwrap_or_else(|| self.counting_is_cheaper(lookups, row)) =>
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
                        (
                            x,
                            score(x, overlap_reaching(ids, holds, met[x as usize].need)),
                        )
                    })
                    .filter(|&(_, s)| t.admits(s)),
            ),
        }
    }

    /// Counting every text's overlap with `row` costs less than the
    /// candidates' `lookups`.
    fn counting_is_cheaper(&self, lookups: u64, row: &Text) -> bool {
        let texts = self.texts.len() as u64;
        let words = row.ids.len() as u64 * texts.div_ceil(64);
        COUNTER_WORD_NS * words + COUNTER_TEXT_NS * texts < LOOKUP_NS * lookups
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

/// How many of `ids` the row `holds`, or some count below `need` as soon as
/// the ids left cannot bring it to `need`.
fn overlap_reaching(ids: &[u32], holds: &Stamps, need: u32) -> u32 {
    // The misses `ids` can afford and still reach `need`.
    let Some(mut spare) = (ids.len() as u32).checked_sub(need) else {
        return 0;
    };
    let mut overlap = 0;
    for &g in ids {
        if holds.contains(g) {
            overlap += 1;
        } else if spare == 0 {
            return overlap;
        } else {
            spare -= 1;
        }
    }
    overlap
}
