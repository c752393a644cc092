//! Probing: one thread's pass over a run of a block's training rows. Each
//! row probes the prefix indexes with its grams; the test texts it reaches
//! are checked by an upper bound ([`Marks`]), scored exactly and offered to
//! the item's top-k lists and pair (with its target's best reference), each
//! against its bar: the higher of the
//! item's bar before the block and the bar of what this run has found. In a
//! block that counts overlaps ([`BlockIndex::overlaps`]), a row instead
//! counts its exact overlap with every text ([`OverlapCounter`]) and offers
//! the texts whose bars it passes.

use crate::exposure::{Exposure, TargetHit};
use crate::jaccard::{min_score, top_k, Bar, Hit, Score};

use super::overlaps::{OverlapCounter, OverlapScratch, Thresholds, MOST_GRAMS};
use super::prefix_index::{min_overlap, PrefixIndex};
use super::test_side::TestSide;
use super::training_rows::Row;
use super::vocabulary::{Stamps, Text};

/// A row's grams marked in a vocabulary-sized array, so that the overlap of
/// a text with the row costs one lookup per gram of the text.
struct Marks(Stamps);

impl Marks {
    fn new(vocab_len: usize) -> Marks {
        Marks(Stamps::new(vocab_len))
    }

    fn mark(&mut self, row: &Text) {
        self.0.clear();
        for &g in &row.ids {
            self.0.insert(g);
        }
    }

    fn shared(&self, ids: &[u32]) -> u32 {
        ids.iter().filter(|&&g| self.0.contains(g)).count() as u32
    }

    /// The exact overlap of indexed text `t` (of `size` grams, `counted` of
    /// its prefix grams in the marked row) with the row, if the row may pass
    /// `bar`; `None` as soon as too few of the text's other grams are left.
    fn overlap_passing(
        &self,
        index: &PrefixIndex,
        t: usize,
        counted: u32,
        size: u32,
        row: &Text,
        bar: Bar,
    ) -> Option<u32> {
        let need = min_overlap(bar, size, row.size);
        if need > row.ids.len() as u32 {
            return None;
        }
        let rest = index.rest(t, row.size);
        let mut misses_left = (counted + rest.len() as u32).checked_sub(need)?;
        let mut shared = counted;
        for &g in rest {
            if self.0.contains(g) {
                shared += 1;
            } else if misses_left == 0 {
                return None;
            } else {
                misses_left -= 1;
            }
        }
        Some(shared)
    }
}

/// The bars a later row must pass to change an item's answer: its top-k
/// sources, its top-k targets, its pair.
pub(crate) fn bars(e: &Exposure, k: usize) -> [Bar; 3] {
    let target = match e.target.get(k - 1) {
        Some(t) => Bar::above(t.hit.score),
        None => Bar::OPEN,
    };
    [
        Bar::after(&e.source, k),
        target,
        e.pair
            .map_or(Bar::above(Score::ZERO), |p| Bar::above(p.hit.score)),
    ]
}

/// The bar a training source must pass to matter to an item: for its top-k
/// sources or, when it has references, as a pair candidate.
pub(crate) fn source_side(bars: [Bar; 3], has_references: bool) -> Bar {
    if has_references {
        bars[0].min(bars[2])
    } else {
        bars[0]
    }
}

/// What a block's rows are probed with: the prefix indexes of the sources
/// and the references, and whether rows that fit the overlap counters count
/// their exact overlaps instead.
pub(crate) struct BlockIndex {
    pub(crate) sources: PrefixIndex,
    pub(crate) references: PrefixIndex,
    pub(crate) overlaps: bool,
}

/// Working state of one thread over a run of rows of a block.
pub(crate) struct Probe<'a> {
    test: &'a TestSide,
    before: &'a [Exposure],
    k: usize,
    pub(crate) found: Vec<Exposure>,
    counts: Vec<u32>,
    reference_counts: Vec<u32>,
    target_best: Vec<Option<(Score, u32)>>,
    target_touched: Vec<u32>,
    /// Texts reached by the current row, with their prefix counts.
    reached: Vec<(u32, u32)>,
    source_marks: Marks,
    target_marks: Marks,
    bars: Vec<[Bar; 3]>,
    /// The current row's `reference_counts` are exact overlaps.
    exact_references: bool,
    /// Each source's and reference's bar, as the overlap counters test it
    /// (kept only where the test side has both counters).
    source_thresholds: Thresholds,
    reference_thresholds: Thresholds,
    scratch: OverlapScratch,
}

impl<'a> Probe<'a> {
    pub(crate) fn new(test: &'a TestSide, before: &'a [Exposure], k: usize) -> Probe<'a> {
        let mut probe = Probe {
            test,
            before,
            k,
            found: vec![Exposure::default(); test.items.len()],
            counts: vec![0; test.sources.len()],
            reference_counts: vec![0; test.references.len()],
            target_best: vec![None; test.items.len()],
            target_touched: Vec::new(),
            reached: Vec::new(),
            source_marks: Marks::new(test.source_vocab.len()),
            target_marks: Marks::new(test.target_vocab.len()),
            bars: Vec::new(),
            exact_references: false,
            source_thresholds: Thresholds::default(),
            reference_thresholds: Thresholds::default(),
            scratch: OverlapScratch::default(),
        };
        probe.bars = (0..test.items.len()).map(|i| probe.bars_of(i)).collect();
        if probe.counters().is_some() {
            probe.source_thresholds = Thresholds::new(test.sources.len());
            probe.reference_thresholds = Thresholds::new(test.references.len());
            for i in 0..test.items.len() {
                probe.set_thresholds(i);
            }
        }
        probe
    }

    fn counters(&self) -> Option<(&'a OverlapCounter, &'a OverlapCounter)> {
        let test = self.test;
        test.source_overlaps
            .as_ref()
            .zip(test.reference_overlaps.as_ref())
    }

    /// Item `i`'s bars as its source's and references' thresholds.
    fn set_thresholds(&mut self, i: usize) {
        let test = self.test;
        let bars = self.bars[i];
        let source = source_side(bars, !test.items[i].references.is_empty());
        self.source_thresholds.set(i, source, test.sources[i].size);
        for slot in test.slots(i) {
            self.reference_thresholds
                .set(slot, bars[1], test.references[slot].size);
        }
    }

    /// The bars a row must pass for item `i`: source top-k, target top-k, pair.
    fn bars_of(&self, i: usize) -> [Bar; 3] {
        let (before, found) = (bars(&self.before[i], self.k), bars(&self.found[i], self.k));
        [0, 1, 2].map(|j| before[j].max(found[j]))
    }

    fn refresh(&mut self, i: usize) {
        self.bars[i] = self.bars_of(i);
        if self.counters().is_some() {
            self.set_thresholds(i);
        }
    }

    fn source_bar(&self, i: usize) -> Bar {
        self.bars[i][0]
    }

    fn target_bar(&self, i: usize) -> Bar {
        self.bars[i][1]
    }

    fn pair_bar(&self, i: usize) -> Bar {
        self.bars[i][2]
    }

    /// A reference's exact overlap with the current row's target.
    fn reference_shared(&self, references: &PrefixIndex, slot: usize, target_size: u32) -> u32 {
        if self.exact_references {
            return self.reference_counts[slot];
        }
        self.reference_counts[slot] + self.target_marks.shared(references.rest(slot, target_size))
    }

    fn offer_source(
        &mut self,
        references: &PrefixIndex,
        i: usize,
        row: u64,
        source: Score,
        target_size: u32,
    ) {
        let mut changed = false;
        if self.source_bar(i).admits(source) {
            let hits = &mut self.found[i].source;
            hits.push(Hit { score: source, row });
            *hits = top_k(std::mem::take(hits), self.k);
            changed = true;
        }
        if !self.test.items[i].references.is_empty() && self.pair_bar(i).admits(source) {
            let (target, reference) = self.test.target_score(i, target_size, |slot| {
                self.reference_shared(references, slot, target_size)
            });
            let pair = min_score(source, target);
            if self.pair_bar(i).admits(pair) {
                self.found[i].pair = Some(TargetHit {
                    hit: Hit { score: pair, row },
                    reference,
                });
                changed = true;
            }
        }
        if changed {
            self.refresh(i);
        }
    }

    fn offer_target(&mut self, i: usize, row: u64, score: Score, reference: u32) {
        if self.target_bar(i).admits(score) {
            let hits = &mut self.found[i].target;
            hits.push(TargetHit {
                hit: Hit { score, row },
                reference,
            });
            hits.sort_by(|a, b| a.hit.rank(&b.hit));
            hits.truncate(self.k);
            self.refresh(i);
        }
    }

    pub(crate) fn row(&mut self, index: &BlockIndex, row: u64, r: &Row) {
        let fits = |t: &Text| t.size <= MOST_GRAMS;
        match self.counters() {
            Some(counters) if index.overlaps && fits(r.source) && fits(r.target) => {
                self.row_by_overlaps(counters, &index.references, row, r)
            }
            _ => self.row_by_prefix(index, row, r),
        }
    }

    /// A row counted against every text: each text it passes is offered.
    fn row_by_overlaps(
        &mut self,
        (sources, references): (&OverlapCounter, &OverlapCounter),
        reference_index: &PrefixIndex,
        row: u64,
        r: &Row,
    ) {
        let test = self.test;
        self.exact_references = true;
        references.count(&r.target.ids, &mut self.scratch, &mut self.reference_counts);
        sources.count(&r.source.ids, &mut self.scratch, &mut self.counts);
        let mut passing = std::mem::take(&mut self.reached);
        self.source_thresholds
            .passing(&self.counts, r.source.size, &mut passing);
        self.counts.fill(0);
        for &(i, shared) in &passing {
            let score = test.source_score(i as usize, r.source.size, shared);
            self.offer_source(reference_index, i as usize, row, score, r.target.size);
        }
        self.offer_empty_sources(reference_index, row, r);
        self.reference_thresholds
            .passing(&self.reference_counts, r.target.size, &mut passing);
        if r.target.size == 0 {
            passing.extend(test.empty_references.iter().map(|&slot| (slot, 0)));
        }
        for &(slot, _) in &passing {
            self.best_reference(reference_index, slot as usize, r.target.size);
        }
        self.reached = passing;
        self.finish_targets(row);
    }

    /// An empty training source passes the empty test sources (J = 1).
    fn offer_empty_sources(&mut self, references: &PrefixIndex, row: u64, r: &Row) {
        if r.source.size == 0 {
            for &i in &self.test.empty_sources {
                let score = Score::jaccard(0, 0, 0);
                self.offer_source(references, i as usize, row, score, r.target.size);
            }
        }
    }

    /// The best reference of the item of `slot`, which the row's target
    /// passes, kept to be offered once the row's references are all seen.
    fn best_reference(&mut self, references: &PrefixIndex, slot: usize, target_size: u32) {
        let test = self.test;
        let i = test.reference_of[slot].0 as usize;
        if self.target_best[i].is_none() {
            let best = test.target_score(i, target_size, |slot| {
                self.reference_shared(references, slot, target_size)
            });
            self.target_best[i] = Some(best);
            self.target_touched.push(i as u32);
        }
    }

    /// Offer the row's target to every item it passed.
    fn finish_targets(&mut self, row: u64) {
        self.reference_counts.fill(0);
        for i in std::mem::take(&mut self.target_touched) {
            if let Some((score, reference)) = self.target_best[i as usize].take() {
                self.offer_target(i as usize, row, score, reference);
            }
        }
    }

    fn row_by_prefix(&mut self, index: &BlockIndex, row: u64, r: &Row) {
        let test = self.test;
        let (sources, references) = (&index.sources, &index.references);
        self.exact_references = false;
        self.source_marks.mark(r.source);
        self.target_marks.mark(r.target);
        // Reference counts first: pair candidates need them.
        references.probe(&r.target.ids, r.target.size, &mut self.reference_counts);
        // Source side: source exposure and pair candidates.
        sources.probe(&r.source.ids, r.source.size, &mut self.counts);
        let mut reached = std::mem::take(&mut self.reached);
        sources.reached(&self.counts, &mut reached);
        self.counts.fill(0);
        for &(i, counted) in &reached {
            let i = i as usize;
            let bar = source_side(self.bars[i], !test.items[i].references.is_empty());
            let size = test.sources[i].size;
            let passing = self
                .source_marks
                .overlap_passing(sources, i, counted, size, r.source, bar);
            if let Some(shared) = passing {
                let score = test.source_score(i, r.source.size, shared);
                self.offer_source(references, i, row, score, r.target.size);
            }
        }
        self.offer_empty_sources(references, row, r);
        // Target side: the best reference of each item reached.
        references.reached(&self.reference_counts, &mut reached);
        if r.target.size == 0 {
            // An empty reference passes an empty target (J = 1) on no count.
            reached.extend(test.empty_references.iter().map(|&slot| (slot, 0)));
        }
        for &(slot, counted) in &reached {
            let slot = slot as usize;
            let i = test.reference_of[slot].0 as usize;
            if self.target_best[i].is_some() {
                continue;
            }
            let reference = &test.references[slot];
            let bar = self.target_bar(i);
            let both_empty = reference.size == 0 && r.target.size == 0;
            if both_empty
                || self
                    .target_marks
                    .overlap_passing(references, slot, counted, reference.size, r.target, bar)
                    .is_some()
            {
                self.best_reference(references, slot, r.target.size);
            }
        }
        self.reached = reached;
        self.finish_targets(row);
    }
}
