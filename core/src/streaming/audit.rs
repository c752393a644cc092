//! The audit driver: a [`StreamingAudit`] feeds training rows through the
//! test side in blocks that grow, counts the rows holding each test gram,
//! remakes the gram orders and prefix indexes from the bars so far, merges
//! each block's answers, and merges the audits of other shards.

use std::sync::Arc;

use rayon::prelude::*;
use rayon::ThreadPool;
use rustc_hash::FxHashMap as HashMap;

use crate::error::{invalid, Error, Result};
use crate::exposure::{Exposure, TargetHit};
use crate::grams::{Gram, GramConfig};
use crate::pool::pool;
use crate::score::{min_score, overlap, top_k, Bar, Hit, Score};
use crate::test_set::{check_aligned, prepare, TestItem};

use super::prefix_index::{min_overlap, GramOrder, PrefixIndex, SLACK};
use super::vocabulary::{sorted, text, GramSet, Text, Vocabulary};

/// The first block; later blocks double up to the largest.
const FIRST_BLOCK_ROWS: usize = 512;

/// How many times the rows counted grow before the test texts' gram orders
/// are remade from the new frequencies.
const ORDER_GROWTH: u64 = 4;

/// How many grams ahead of its lookup a row's gram is fetched.
const LOOKUP_AHEAD: usize = 8;

/// A set of vocabulary ids emptied in constant time: an id is in the set
/// when its stamp is the current one. Empty it before first use.
struct Stamps {
    stamps: Vec<u32>,
    current: u32,
}

impl Stamps {
    fn new(vocab_len: usize) -> Stamps {
        Stamps {
            stamps: vec![0; vocab_len],
            current: 0,
        }
    }

    fn clear(&mut self) {
        self.current = self.current.wrapping_add(1);
        if self.current == 0 {
            self.stamps.fill(0);
            self.current = 1;
        }
    }

    /// Add `id`; whether it was new.
    fn insert(&mut self, id: u32) -> bool {
        let stamp = &mut self.stamps[id as usize];
        let new = *stamp != self.current;
        *stamp = self.current;
        new
    }

    fn contains(&self, id: u32) -> bool {
        self.stamps[id as usize] == self.current
    }
}

/// Scratch of one thread reading training texts: which vocabulary ids the
/// current text has shown, and its grams outside the vocabulary.
struct Reader {
    seen: Stamps,
    grams: Vec<Gram>,
    unknown: GramSet,
}

impl Reader {
    fn new(vocab_len: usize) -> Reader {
        Reader {
            seen: Stamps::new(vocab_len),
            grams: Vec::new(),
            unknown: GramSet::default(),
        }
    }

    /// A normalised text's ids in `vocab` (each once, in no order) and the
    /// size of its gram set (grams outside the vocabulary counted once
    /// through a set of their own).
    fn text(&mut self, config: &GramConfig, vocab: &Vocabulary, text: &str) -> Text {
        let (seen, grams, unknown) = (&mut self.seen, &mut self.grams, &mut self.unknown);
        seen.clear();
        grams.clear();
        config.each_gram(text, |g| grams.push(g));
        unknown.clear(grams.len());
        let mut ids = Vec::with_capacity(grams.len());
        let mut unknown_grams = 0;
        for (j, &g) in grams.iter().enumerate() {
            // A later gram's slot is fetched while this one is looked up.
            if let Some(&ahead) = grams.get(j + LOOKUP_AHEAD) {
                vocab.prefetch(ahead);
            }
            match vocab.get(g) {
                Some(id) => {
                    if seen.insert(id) {
                        ids.push(id);
                    }
                }
                None => unknown_grams += unknown.insert(g) as u32,
            }
        }
        Text {
            size: ids.len() as u32 + unknown_grams,
            ids,
        }
    }
}

/// The distinct texts of one side of a block, normalised and read, and the
/// text of each row.
struct SideTexts {
    texts: Vec<(String, Text)>,
    of_row: Vec<u32>,
}

impl SideTexts {
    fn of(&self, row: usize) -> &(String, Text) {
        &self.texts[self.of_row[row] as usize]
    }
}

/// One training row, read.
struct Row<'a> {
    source: &'a Text,
    target: &'a Text,
    exact: Vec<(u32, bool, bool, bool)>,
}

/// The lowest rows seen, kept to fill top-k lists with rows of score 0.
#[derive(Debug, Clone)]
struct HeadRow {
    row: u64,
    source: Text,
    target: Text,
}

/// The test set, indexed.
#[derive(Debug, Clone)]
struct TestSide {
    items: Vec<TestItem>,
    source_vocab: Vocabulary,
    target_vocab: Vocabulary,
    sources: Vec<Text>,
    /// Every reference of every item, with its item and reference index.
    references: Vec<Text>,
    reference_of: Vec<(u32, u32)>,
    /// First reference slot of each item (one more entry than items).
    reference_start: Vec<u32>,
    empty_sources: Vec<u32>,
    empty_references: Vec<u32>,
    source_items: HashMap<String, Vec<u32>>,
    target_items: HashMap<String, Vec<u32>>,
}

impl TestSide {
    fn new(items: Vec<TestItem>) -> TestSide {
        let (source_vocab, target_vocab) = rayon::join(
            || Vocabulary::new(items.iter().map(|t| &t.source_grams)),
            || Vocabulary::new(items.iter().flat_map(|t| t.reference_grams.iter())),
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
        TestSide {
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
    fn read_side<S: AsRef<str> + Sync>(
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
    fn exact(&self, source: &str, target: &str) -> Vec<(u32, bool, bool, bool)> {
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
    fn slots(&self, item: usize) -> std::ops::Range<usize> {
        self.reference_start[item] as usize..self.reference_start[item + 1] as usize
    }

    /// The best reference's score against a training target of `size` grams
    /// (lowest reference on ties); `shared(slot)` is a reference's overlap.
    fn target_score(&self, item: usize, size: u32, shared: impl Fn(usize) -> u32) -> (Score, u32) {
        let mut best = (Score::ZERO, 0);
        for (k, slot) in self.slots(item).enumerate() {
            let s = Score::jaccard(shared(slot), self.references[slot].size, size);
            if k == 0 || s.cmp_exact(best.0).is_gt() {
                best = (s, k as u32);
            }
        }
        best
    }

    fn source_score(&self, item: usize, size: u32, shared: u32) -> Score {
        Score::jaccard(shared, self.sources[item].size, size)
    }
}

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
fn bars(e: &Exposure, k: usize) -> [Bar; 3] {
    let target = match e.target.get(k - 1) {
        Some(t) => Bar::above(t.hit.score),
        None => Bar::OPEN,
    };
    [
        Bar::after(&e.source, k),
        target,
        e.pair
            .map_or(Bar::above(Score::ZERO), |h| Bar::above(h.score)),
    ]
}

/// The bar a training source must pass to matter to an item: for its top-k
/// sources or, when it has references, as a pair candidate.
fn source_side(bars: [Bar; 3], has_references: bool) -> Bar {
    if has_references {
        bars[0].min(bars[2])
    } else {
        bars[0]
    }
}

/// Working state of one thread over a run of rows of a block.
struct Probe<'a> {
    test: &'a TestSide,
    before: &'a [Exposure],
    k: usize,
    found: Vec<Exposure>,
    counts: Vec<u32>,
    reference_counts: Vec<u32>,
    target_best: Vec<Option<(Score, u32)>>,
    target_touched: Vec<u32>,
    /// Texts reached by the current row, with their prefix counts.
    reached: Vec<(u32, u32)>,
    source_marks: Marks,
    target_marks: Marks,
    bars: Vec<[Bar; 3]>,
}

impl<'a> Probe<'a> {
    fn new(test: &'a TestSide, before: &'a [Exposure], k: usize) -> Probe<'a> {
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
        };
        probe.bars = (0..test.items.len()).map(|i| probe.bars_of(i)).collect();
        probe
    }

    /// The bars a row must pass for item `i`: source top-k, target top-k, pair.
    fn bars_of(&self, i: usize) -> [Bar; 3] {
        let (before, found) = (bars(&self.before[i], self.k), bars(&self.found[i], self.k));
        [0, 1, 2].map(|j| before[j].max(found[j]))
    }

    fn refresh(&mut self, i: usize) {
        self.bars[i] = self.bars_of(i);
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
            let target = self
                .test
                .target_score(i, target_size, |slot| {
                    self.reference_shared(references, slot, target_size)
                })
                .0;
            let pair = min_score(source, target);
            if self.pair_bar(i).admits(pair) {
                self.found[i].pair = Some(Hit { score: pair, row });
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

    fn row(&mut self, index: &(PrefixIndex, PrefixIndex), row: u64, r: &Row) {
        let test = self.test;
        let (sources, references) = index;
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
        if r.source.size == 0 {
            for &i in &test.empty_sources {
                let score = Score::jaccard(0, 0, 0);
                self.offer_source(references, i as usize, row, score, r.target.size);
            }
        }
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
                let best = test.target_score(i, r.target.size, |slot| {
                    self.reference_shared(references, slot, r.target.size)
                });
                self.target_best[i] = Some(best);
                self.target_touched.push(i as u32);
            }
        }
        self.reached = reached;
        self.reference_counts.fill(0);
        for i in std::mem::take(&mut self.target_touched) {
            if let Some((score, reference)) = self.target_best[i as usize].take() {
                self.offer_target(i as usize, row, score, reference);
            }
        }
    }
}

/// Count one more row holding each gram of `text` (saturating: the counts
/// only order the grams).
fn count_rows(df: &mut [u32], text: &Text) {
    for &g in &text.ids {
        df[g as usize] = df[g as usize].saturating_add(1);
    }
}

/// A running audit of one test set against a stream of training pairs.
#[derive(Debug, Clone)]
pub struct StreamingAudit {
    config: GramConfig,
    k: usize,
    block_rows: usize,
    test: Arc<TestSide>,
    /// Training rows so far holding each test gram (saturating: they only
    /// order the grams).
    source_df: Vec<u32>,
    target_df: Vec<u32>,
    exposures: Vec<Exposure>,
    head: Vec<HeadRow>,
    next_row: u64,
    rows_fed: u64,
    pool: Arc<ThreadPool>,
    /// The test texts' gram orders for prefixes, and the rows fed when they
    /// were made: they are remade when those have grown [`ORDER_GROWTH`]
    /// times.
    orders: Option<(Arc<GramOrder>, Arc<GramOrder>)>,
    ordered_at: u64,
    /// Prefix grams indexed beyond the shortest prefix ([`SLACK`]).
    slack: u32,
}

impl StreamingAudit {
    pub fn new<S: AsRef<str> + Sync>(
        config: GramConfig,
        sources: &[S],
        references: &[Vec<S>],
        k: usize,
        block_rows: usize,
        threads: usize,
    ) -> Result<StreamingAudit> {
        if k == 0 {
            return Err(invalid("top_k", "must be at least 1"));
        }
        if block_rows == 0 {
            return Err(invalid("block_rows", "must be at least 1"));
        }
        let pool = pool(threads)?;
        let test = pool.install(|| prepare(&config, sources, references).map(TestSide::new))?;
        Ok(StreamingAudit {
            source_df: vec![0; test.source_vocab.len()],
            target_df: vec![0; test.target_vocab.len()],
            exposures: vec![Exposure::default(); test.items.len()],
            test: Arc::new(test),
            config,
            k,
            block_rows,
            head: Vec::new(),
            next_row: 0,
            rows_fed: 0,
            pool,
            orders: None,
            ordered_at: 0,
            slack: SLACK,
        })
    }

    /// Rows fed so far end before this index.
    pub fn next_row(&self) -> u64 {
        self.next_row
    }

    /// Rows fed to this audit and to the audits merged into it.
    pub fn rows_fed(&self) -> u64 {
        self.rows_fed
    }

    /// The answer over the rows fed so far; top-k lists that found fewer
    /// than k rows sharing a gram are completed with the lowest rows.
    pub fn exposures(&self) -> Vec<Exposure> {
        let test = &self.test;
        let source_score = |i: usize, h: &HeadRow| {
            test.source_score(
                i,
                h.source.size,
                overlap(&test.sources[i].ids, &h.source.ids),
            )
        };
        let target_score = |i: usize, h: &HeadRow| {
            test.target_score(i, h.target.size, |slot| {
                overlap(&test.references[slot].ids, &h.target.ids)
            })
        };
        let mut out = self.exposures.clone();
        for (i, e) in out.iter_mut().enumerate() {
            for h in &self.head {
                if e.source.len() >= self.k {
                    break;
                }
                if !e.source.iter().any(|x| x.row == h.row) {
                    e.source.push(Hit {
                        score: source_score(i, h),
                        row: h.row,
                    });
                }
            }
            if test.items[i].references.is_empty() {
                continue;
            }
            for h in &self.head {
                if e.target.len() >= self.k {
                    break;
                }
                if !e.target.iter().any(|x| x.hit.row == h.row) {
                    let (score, reference) = target_score(i, h);
                    e.target.push(TargetHit {
                        hit: Hit { score, row: h.row },
                        reference,
                    });
                }
            }
            if e.pair.is_none() {
                e.pair = self.head.first().map(|h| Hit {
                    score: min_score(source_score(i, h), target_score(i, h).0),
                    row: h.row,
                });
            }
        }
        out
    }

    /// Feed training pairs whose first row has global index `row_base`; feeds
    /// must come in increasing row order. `interrupted` is polled between
    /// blocks.
    pub fn feed<S: AsRef<str> + Sync>(
        &mut self,
        sources: &[S],
        targets: &[S],
        row_base: u64,
        interrupted: &dyn Fn() -> bool,
    ) -> Result<()> {
        check_aligned(sources.len(), targets.len())?;
        if row_base < self.next_row {
            return Err(invalid(
                "row_base",
                format!("rows must arrive in order: {row_base} < {}", self.next_row),
            ));
        }
        let mut start = 0;
        while start < sources.len() {
            if interrupted() {
                return Err(Error::Interrupted);
            }
            // Each block as large as all rows before it: bars rise early.
            let size = (self.rows_fed as usize)
                .max(FIRST_BLOCK_ROWS)
                .min(self.block_rows);
            let end = (start + size).min(sources.len());
            let pool = self.pool.clone();
            pool.install(|| {
                self.feed_block(
                    &sources[start..end],
                    &targets[start..end],
                    row_base + start as u64,
                )
            });
            self.next_row = row_base + end as u64;
            self.rows_fed += (end - start) as u64;
            start = end;
        }
        self.next_row = self.next_row.max(row_base + sources.len() as u64);
        Ok(())
    }

    fn feed_block<S: AsRef<str> + Sync>(&mut self, sources: &[S], targets: &[S], row_base: u64) {
        let test = Arc::clone(&self.test);
        let config = &self.config;
        let (source_texts, target_texts) = rayon::join(
            || test.read_side(config, &test.source_vocab, sources),
            || test.read_side(config, &test.target_vocab, targets),
        );
        let rows: Vec<Row> = (0..sources.len())
            .into_par_iter()
            .with_min_len(1024)
            .map(|i| {
                let (source, target) = (source_texts.of(i), target_texts.of(i));
                Row {
                    source: &source.1,
                    target: &target.1,
                    exact: test.exact(&source.0, &target.0),
                }
            })
            .collect();
        let (source_df, target_df) = (&mut self.source_df, &mut self.target_df);
        rayon::join(
            || rows.iter().for_each(|r| count_rows(source_df, r.source)),
            || rows.iter().for_each(|r| count_rows(target_df, r.target)),
        );
        let index = self.prefix_indexes(self.rows_fed + rows.len() as u64);
        let k = self.k;
        let before = &self.exposures;
        // A few runs per thread, so that a slow run does not hold the block.
        let run = rows
            .len()
            .div_ceil(8 * rayon::current_num_threads())
            .max(256);
        let found: Vec<Vec<Exposure>> = rows
            .par_chunks(run)
            .enumerate()
            .map(|(c, chunk)| {
                let mut probe = Probe::new(&test, before, k);
                for (j, r) in chunk.iter().enumerate() {
                    probe.row(&index, row_base + (c * run + j) as u64, r);
                }
                probe.found
            })
            .collect();
        for part in found {
            for (e, f) in self.exposures.iter_mut().zip(&part) {
                e.merge(f, k);
            }
        }
        for (j, r) in rows.into_iter().enumerate() {
            for &(i, s, t, p) in &r.exact {
                let e = &mut self.exposures[i as usize];
                e.source_exact |= s;
                e.target_exact |= t;
                e.pair_exact |= p;
            }
            if self.head.len() < 2 * k {
                self.head.push(HeadRow {
                    row: row_base + j as u64,
                    source: sorted(r.source.clone()),
                    target: sorted(r.target.clone()),
                });
            }
        }
    }

    /// The test index for the next block, from the bars so far; `rows` have
    /// been counted in the document frequencies.
    fn prefix_indexes(&mut self, rows: u64) -> (PrefixIndex, PrefixIndex) {
        let test = &self.test;
        let k = self.k;
        if self.orders.is_none() || rows >= ORDER_GROWTH * self.ordered_at {
            let (sources, targets) = rayon::join(
                || GramOrder::new(&test.sources, &self.source_df),
                || GramOrder::new(&test.references, &self.target_df),
            );
            self.orders = Some((Arc::new(sources), Arc::new(targets)));
            self.ordered_at = rows;
        }
        let (source_order, target_order) = self.orders.clone().expect("made above");
        let source_bars: Vec<Bar> = self
            .exposures
            .iter()
            .zip(&test.items)
            .map(|(e, item)| source_side(bars(e, k), !item.references.is_empty()))
            .collect();
        let target_bars: Vec<Bar> = test
            .reference_of
            .iter()
            .map(|&(i, _)| bars(&self.exposures[i as usize], k)[1])
            .collect();
        rayon::join(
            || {
                PrefixIndex::build(
                    test.source_vocab.len(),
                    &test.sources,
                    source_order,
                    &source_bars,
                    self.slack,
                )
            },
            || {
                PrefixIndex::build(
                    test.target_vocab.len(),
                    &test.references,
                    target_order,
                    &target_bars,
                    self.slack,
                )
            },
        )
    }

    /// Merge the audit of other training rows (another shard) of the same
    /// test set and settings.
    pub fn merge(&mut self, other: &StreamingAudit) -> Result<()> {
        let (a, b) = (&self.test.items, &other.test.items);
        let same_items = a.len() == b.len()
            && a.iter()
                .zip(b)
                .all(|(x, y)| x.source == y.source && x.references == y.references);
        if other.config != self.config || other.k != self.k || !same_items {
            return Err(invalid(
                "other",
                "audits of different test sets or settings",
            ));
        }
        for (e, o) in self.exposures.iter_mut().zip(&other.exposures) {
            e.merge(o, self.k);
        }
        self.head.extend(other.head.iter().cloned());
        self.head.sort_by_key(|h| h.row);
        self.head.truncate(2 * self.k);
        self.next_row = self.next_row.max(other.next_row);
        self.rows_fed += other.rows_fed;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::normalize::Normalization;
    use proptest::collection::vec;
    use proptest::prelude::*;

    type Pairs = Vec<(String, String)>;

    /// The answer of a streaming audit, printed exactly (scores as fractions).
    fn answer(slack: u32, train: &Pairs, test: &Pairs, block_rows: usize) -> String {
        let config = GramConfig::new(&[1, 2, 3], Normalization::default()).unwrap();
        let sources: Vec<&str> = test.iter().map(|p| p.0.as_str()).collect();
        let references: Vec<Vec<&str>> = test.iter().map(|p| vec![p.1.as_str()]).collect();
        let mut audit =
            StreamingAudit::new(config, &sources, &references, 2, block_rows, 1).unwrap();
        audit.slack = slack;
        let (s, t): (Vec<&str>, Vec<&str>) =
            train.iter().map(|p| (p.0.as_str(), p.1.as_str())).unzip();
        audit.feed(&s, &t, 0, &|| false).unwrap();
        format!("{:?}", audit.exposures())
    }

    fn pairs(most: usize) -> impl Strategy<Value = Pairs> {
        vec(("[ab c]{0,40}", "[xy z]{0,40}"), 1..most)
    }

    proptest! {
        /// Prefixes cut by the row's size, with or without slack, give the
        /// answer of indexing every gram of every test text.
        #[test]
        fn prefix_cuts_never_change_the_answer(
            train in pairs(80),
            test in pairs(8),
            block_rows in 1usize..16,
        ) {
            let whole = answer(1 << 20, &train, &test, block_rows);
            for slack in [0, 1, 5] {
                prop_assert_eq!(&answer(slack, &train, &test, block_rows), &whole);
            }
        }
    }
}
