//! The test side of the audit: the test set written in its source and
//! target vocabularies, with what a training row is checked against (each
//! text's ids and size, the item of each reference, the empty texts, the
//! texts of exact matches); how a block's training texts are read in those
//! vocabularies; and a row's exact scores against an item.

use rayon::prelude::*;
use rustc_hash::FxHashMap as HashMap;

use crate::grams::GramConfig;
use crate::jaccard::Score;
use crate::test_set::TestItem;

use super::overlaps::OverlapCounter;
use super::training_rows::{Reader, SideTexts};
use super::vocabulary::{sorted, text, Text, Vocabulary};

/// The test set, indexed.
#[derive(Debug, Clone)]
pub(crate) struct TestSide {
    pub(crate) items: Vec<TestItem>,
    pub(crate) source_vocab: Vocabulary,
    pub(crate) target_vocab: Vocabulary,
    pub(crate) sources: Vec<Text>,
    /// Every reference of every item, with its item and reference index.
    pub(crate) references: Vec<Text>,
    pub(crate) reference_of: Vec<(u32, u32)>,
    /// First reference slot of each item (one more entry than items).
    reference_start: Vec<u32>,
    pub(crate) empty_sources: Vec<u32>,
    pub(crate) empty_references: Vec<u32>,
    /// Each side's exact overlap counters, where its texts fit them.
    pub(crate) source_overlaps: Option<OverlapCounter>,
    pub(crate) reference_overlaps: Option<OverlapCounter>,
    source_items: HashMap<String, Vec<u32>>,
    target_items: HashMap<String, Vec<u32>>,
}

impl TestSide {
    pub(crate) fn new(items: Vec<TestItem>) -> TestSide {
        let (source_vocab, target_vocab) = rayon::join(
            || Vocabulary::by_frequency(items.iter().map(|t| &t.source_grams)),
            || Vocabulary::by_frequency(items.iter().flat_map(|t| t.reference_grams.iter())),
        );
        let sources: Vec<Text> = items
            .par_iter()
            .map(|t| sorted(text(&source_vocab, &t.source_grams)))
            .collect();
        let references: Vec<Text> = items
            .par_iter()
            .flat_map_iter(|t| t.reference_grams.iter())
            .map(|g| sorted(text(&target_vocab, g)))
            .collect();
        let mut reference_of = Vec::new();
        let mut reference_start = vec![0u32];
        let mut source_items: HashMap<String, Vec<u32>> = HashMap::default();
        let mut target_items: HashMap<String, Vec<u32>> = HashMap::default();
        for (i, t) in items.iter().enumerate() {
            source_items
                .entry(t.source.clone())
                .or_default()
                .push(i as u32);
            for (k, r) in t.references.iter().enumerate() {
                reference_of.push((i as u32, k as u32));
                let list = target_items.entry(r.clone()).or_default();
                if list.last() != Some(&(i as u32)) {
                    list.push(i as u32);
                }
            }
            reference_start.push(reference_of.len() as u32);
        }
        let empty = |texts: &[Text]| {
            (0..texts.len() as u32)
                .filter(|&i| texts[i as usize].size == 0)
                .collect()
        };
        let empty_sources = empty(&sources);
        let empty_references = empty(&references);
        let (source_overlaps, reference_overlaps) = rayon::join(
            || OverlapCounter::new(source_vocab.len(), &sources),
            || OverlapCounter::new(target_vocab.len(), &references),
        );
        TestSide {
            source_overlaps,
            reference_overlaps,
            items,
            source_vocab,
            target_vocab,
            sources,
            references,
            reference_of,
            reference_start,
            empty_sources,
            empty_references,
            source_items,
            target_items,
        }
    }

    /// One side of a block of training rows, each distinct text normalised
    /// and read once: a multi-way corpus repeats a sentence with each of its
    /// translations.
    pub(crate) fn read_side<S: AsRef<str> + Sync>(
        &self,
        config: &GramConfig,
        vocab: &Vocabulary,
        raw: &[S],
    ) -> SideTexts {
        let mut first: HashMap<&str, u32> = HashMap::default();
        let mut distinct = Vec::new();
        let of_row = raw
            .iter()
            .enumerate()
            .map(|(row, text)| {
                *first.entry(text.as_ref()).or_insert_with(|| {
                    distinct.push(row);
                    distinct.len() as u32 - 1
                })
            })
            .collect();
        // Each split allocates a vocabulary-sized scratch: keep splits large.
        let texts = distinct
            .par_iter()
            .with_min_len(256)
            .map_init(
                || Reader::new(vocab.len()),
                |reader, &row| {
                    let normalized = config.normalization.apply(raw[row].as_ref());
                    let text = reader.text(config, vocab, &normalized);
                    (normalized, text)
                },
            )
            .collect();
        SideTexts { texts, of_row }
    }

    /// The exact-overlap flags a row of normalised `source` and `target`
    /// sets: (item, source, target, pair).
    pub(crate) fn exact(&self, source: &str, target: &str) -> Vec<(u32, bool, bool, bool)> {
        let mut exact = Vec::new();
        if let Some(items) = self.source_items.get(source) {
            for &i in items {
                let pair = self.items[i as usize]
                    .references
                    .iter()
                    .any(|r| r == target);
                exact.push((i, true, false, pair));
            }
        }
        if let Some(items) = self.target_items.get(target) {
            exact.extend(items.iter().map(|&i| (i, false, true, false)));
        }
        exact
    }

    /// Reference slots of an item.
    pub(crate) fn slots(&self, item: usize) -> std::ops::Range<usize> {
        self.reference_start[item] as usize..self.reference_start[item + 1] as usize
    }

    /// The best reference's score against a training target of `size` grams
    /// (lowest reference on ties); `shared(slot)` is a reference's overlap.
    pub(crate) fn target_score(
        &self,
        item: usize,
        size: u32,
        shared: impl Fn(usize) -> u32,
    ) -> (Score, u32) {
        let mut best = (Score::ZERO, 0);
        for (k, slot) in self.slots(item).enumerate() {
            let s = Score::jaccard(shared(slot), self.references[slot].size, size);
            if k == 0 || s.cmp_exact(best.0).is_gt() {
                best = (s, k as u32);
            }
        }
        best
    }

    pub(crate) fn source_score(&self, item: usize, size: u32, shared: u32) -> Score {
        Score::jaccard(shared, self.sources[item].size, size)
    }
}
