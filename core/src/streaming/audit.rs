//! The audit driver: a [`StreamingAudit`] feeds training rows through the
//! test side in blocks that grow, counts the rows holding each test gram,
//! remakes the gram orders and prefix indexes from the bars so far, merges
//! each block's answers, and merges the audits of other shards.

use std::sync::Arc;

use rayon::prelude::*;
use rayon::ThreadPool;

use crate::error::{invalid, Error, Result};
use crate::exposure::{Exposure, TargetHit};
use crate::grams::GramConfig;
use crate::jaccard::{min_score, overlap, Bar, Hit};
use crate::pool::pool;
use crate::test_set::{check_aligned, prepare};

use super::prefix_index::{GramOrder, PrefixIndex, SLACK};
use super::probe::{bars, source_side, BlockIndex, Probe};
use super::test_side::TestSide;
use super::training_rows::Row;
use super::vocabulary::{sorted, Text};

/// The first block; later blocks double up to the largest.
const FIRST_BLOCK_ROWS: usize = 512;

/// How many times the rows counted grow before the test texts' gram orders
/// are remade from the new frequencies.
const ORDER_GROWTH: u64 = 4;

/// The lowest rows seen, kept to fill top-k lists with rows of score 0.
#[derive(Debug, Clone)]
struct HeadRow {
    row: u64,
    source: Text,
    target: Text,
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
    /// Whether blocks count overlaps: `None` lets the cost model decide.
    overlaps: Option<bool>,
    /// Blocks audited so far, and those of them that counted every text's
    /// overlap (the rest probed by prefixes).
    blocks: u64,
    overlap_blocks: u64,
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
            overlaps: None,
            blocks: 0,
            overlap_blocks: 0,
        })
    }

    /// Blocks audited so far, and how many of them counted every test
    /// text's overlap at once (the cost model's choice, block by block).
    pub fn blocks(&self) -> (u64, u64) {
        (self.blocks, self.overlap_blocks)
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
                e.pair = self.head.first().map(|h| {
                    let (target, reference) = target_score(i, h);
                    TargetHit {
                        hit: Hit {
                            score: min_score(source_score(i, h), target),
                            row: h.row,
                        },
                        reference,
                    }
                });
            }
        }
        out
    }

    /// The row of every item's best source neighbour over the rows fed so far.
    pub fn best_source_rows(&self) -> Vec<u64> {
        self.exposures()
            .iter()
            .map(|e| e.source.first().map_or(0, |h| h.row))
            .collect()
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
        let index = self.block_index(self.rows_fed + rows.len() as u64);
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
    fn block_index(&mut self, rows: u64) -> BlockIndex {
        let (sources, references) = self.prefix_indexes(rows);
        let overlaps = self
            .overlaps
            .unwrap_or_else(|| self.overlaps_cheaper(&sources, &references, rows));
        self.blocks += 1;
        self.overlap_blocks += u64::from(overlaps);
        BlockIndex {
            sources,
            references,
            overlaps,
        }
    }

    /// Whether counting every text's overlap is expected to cost less than
    /// the prefix probe, over rows like the `rows` counted so far (each
    /// side's cost summed over its grams, as often as those rows held them).
    fn overlaps_cheaper(&self, sources: &PrefixIndex, references: &PrefixIndex, rows: u64) -> bool {
        let test = &self.test;
        let (Some(source_counter), Some(reference_counter)) =
            (&test.source_overlaps, &test.reference_overlaps)
        else {
            return false;
        };
        let overlaps = source_counter.expected_ns(&self.source_df, rows)
            + reference_counter.expected_ns(&self.target_df, rows);
        let prefix = sources.expected_ns(&self.source_df) + references.expected_ns(&self.target_df);
        overlaps < prefix
    }

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
        self.blocks += other.blocks;
        self.overlap_blocks += other.overlap_blocks;
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

    /// The answer of a streaming audit, printed exactly (scores as fractions),
    /// blocks probed by prefixes (`overlaps` false) or counting overlaps.
    fn answer(
        slack: u32,
        overlaps: bool,
        train: &Pairs,
        test: &Pairs,
        block_rows: usize,
    ) -> String {
        let config = GramConfig::new(&[1, 2, 3], Normalization::default()).unwrap();
        let sources: Vec<&str> = test.iter().map(|p| p.0.as_str()).collect();
        let references: Vec<Vec<&str>> = test.iter().map(|p| vec![p.1.as_str()]).collect();
        let mut audit =
            StreamingAudit::new(config, &sources, &references, 2, block_rows, 1).unwrap();
        audit.slack = slack;
        audit.overlaps = Some(overlaps);
        let (s, t): (Vec<&str>, Vec<&str>) =
            train.iter().map(|p| (p.0.as_str(), p.1.as_str())).unzip();
        audit.feed(&s, &t, 0, &|| false).unwrap();
        format!("{:?}", audit.exposures())
    }

    /// Every block is counted, and counted as counting overlaps exactly
    /// when it did; merged shards add their blocks.
    #[test]
    fn blocks_are_counted_by_how_they_were_audited() {
        let config = GramConfig::new(&[1, 2, 3], Normalization::default()).unwrap();
        let train: Vec<String> = (0..100).map(|i| format!("row {i} of the corpus")).collect();
        let audit_of = |overlaps: Option<bool>| {
            let mut audit =
                StreamingAudit::new(config.clone(), &["row 7"], &[vec!["row 7"]], 1, 40, 1)
                    .unwrap();
            audit.overlaps = overlaps;
            audit.feed(&train, &train, 0, &|| false).unwrap();
            audit
        };
        let (blocks, _) = audit_of(None).blocks();
        assert!(blocks >= 3, "100 rows in blocks of at most 40: {blocks}");
        assert_eq!(audit_of(Some(true)).blocks(), (blocks, blocks));
        assert_eq!(audit_of(Some(false)).blocks(), (blocks, 0));
        let mut merged = audit_of(Some(true));
        merged.merge(&audit_of(Some(false))).unwrap();
        assert_eq!(merged.blocks(), (2 * blocks, blocks));
    }

    /// A row of more grams than the overlap counters count, in a block that
    /// counts overlaps, is probed by prefixes, with the answer of probing
    /// every row.
    #[test]
    fn rows_too_large_to_count_are_probed() {
        // 30,000 characters drawn from 20,000: some 75,000 distinct grams.
        let mut x = 1u32;
        let huge: String = (0..30_000)
            .map(|_| {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                char::from_u32(0x4E00 + (x >> 8) % 20_000).unwrap()
            })
            .collect();
        let near: String = huge.chars().take(200).collect();
        let train: Pairs = vec![
            (huge, "x y".to_string()),
            ("ab c".to_string(), "xy".to_string()),
        ];
        let test: Pairs = vec![
            (near, "x y".to_string()),
            ("ab".to_string(), "z".to_string()),
        ];
        let whole = answer(SLACK, false, &train, &test, 16);
        assert_eq!(answer(SLACK, true, &train, &test, 16), whole);
    }

    fn pairs(most: usize) -> impl Strategy<Value = Pairs> {
        vec(("[ab c]{0,40}", "[xy z]{0,40}"), 1..most)
    }

    proptest! {
        /// Prefixes cut by the row's size, with or without slack, give the
        /// answer of indexing every gram of every test text, and so does
        /// counting every text's overlap.
        #[test]
        fn prefix_cuts_never_change_the_answer(
            train in pairs(80),
            test in pairs(8),
            block_rows in 1usize..16,
        ) {
            let whole = answer(1 << 20, false, &train, &test, block_rows);
            for slack in [0, 1, 5] {
                prop_assert_eq!(&answer(slack, false, &train, &test, block_rows), &whole);
            }
            prop_assert_eq!(&answer(SLACK, true, &train, &test, block_rows), &whole);
        }
    }
}
