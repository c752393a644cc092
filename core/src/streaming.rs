//! The streaming strategy: the test set is indexed once (its gram
//! vocabulary), and the training corpus flows through in blocks, one pass,
//! with no training index. Each block is turned into small posting lists over
//! the test vocabulary only, searched for every test item with bars carried
//! over from earlier blocks, and merged. A block's answer merges exactly, so
//! shards of the corpus can be audited apart and combined with
//! [`StreamingAudit::merge`].

use std::collections::HashMap;
use std::sync::Arc;

use rayon::prelude::*;
use rayon::ThreadPool;

use crate::error::{invalid, Error, Result};
use crate::exposure::{Block, Exposure, ItemQueries};
use crate::grams::{Gram, GramConfig};
use crate::pool::pool;
use crate::postings::{Postings, Query};
use crate::search::Scratch;
use crate::test_set::{check_aligned, prepare, TestItem};

/// Training rows searched as one block.
pub const DEFAULT_BLOCK_ROWS: usize = 1 << 16;

fn vocabulary<'a>(sets: impl Iterator<Item = &'a Vec<Gram>>) -> HashMap<Gram, u32> {
    let mut vocab = HashMap::new();
    for set in sets {
        for &g in set {
            let next = vocab.len() as u32;
            vocab.entry(g).or_insert(next);
        }
    }
    vocab
}

fn query(vocab: &HashMap<Gram, u32>, grams: &[Gram]) -> Query {
    Query {
        size: grams.len() as u32,
        grams: grams.iter().filter_map(|g| vocab.get(g).copied()).collect(),
    }
}

/// A running audit of one test set against a stream of training pairs.
#[derive(Debug, Clone)]
pub struct StreamingAudit {
    config: GramConfig,
    k: usize,
    block_rows: usize,
    items: Vec<TestItem>,
    source_vocab: HashMap<Gram, u32>,
    target_vocab: HashMap<Gram, u32>,
    queries: Vec<ItemQueries>,
    source_items: HashMap<String, Vec<u32>>,
    target_items: HashMap<String, Vec<u32>>,
    exposures: Vec<Exposure>,
    next_row: u64,
    pool: Arc<ThreadPool>,
}

/// What one training row says about exact overlaps: (item, source, target, pair).
type ExactFlags = Vec<(u32, bool, bool, bool)>;

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
        let items = pool.install(|| prepare(&config, sources, references))?;
        let source_vocab = vocabulary(items.iter().map(|t| &t.source_grams));
        let target_vocab = vocabulary(items.iter().flat_map(|t| t.reference_grams.iter()));
        let queries = items
            .iter()
            .map(|t| ItemQueries {
                source: query(&source_vocab, &t.source_grams),
                references: t
                    .reference_grams
                    .iter()
                    .map(|g| query(&target_vocab, g))
                    .collect(),
            })
            .collect();
        let mut source_items: HashMap<String, Vec<u32>> = HashMap::new();
        let mut target_items: HashMap<String, Vec<u32>> = HashMap::new();
        for (i, t) in items.iter().enumerate() {
            source_items
                .entry(t.source.clone())
                .or_default()
                .push(i as u32);
            for r in &t.references {
                let list = target_items.entry(r.clone()).or_default();
                if list.last() != Some(&(i as u32)) {
                    list.push(i as u32);
                }
            }
        }
        Ok(StreamingAudit {
            exposures: vec![Exposure::default(); items.len()],
            config,
            k,
            block_rows,
            items,
            source_vocab,
            target_vocab,
            queries,
            source_items,
            target_items,
            next_row: 0,
            pool,
        })
    }

    /// Rows fed so far end before this index.
    pub fn next_row(&self) -> u64 {
        self.next_row
    }

    pub fn exposures(&self) -> &[Exposure] {
        &self.exposures
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
        for start in (0..sources.len()).step_by(self.block_rows) {
            if interrupted() {
                return Err(Error::Interrupted);
            }
            let end = (start + self.block_rows).min(sources.len());
            self.feed_block(
                &sources[start..end],
                &targets[start..end],
                row_base + start as u64,
            );
        }
        self.next_row = row_base + sources.len() as u64;
        Ok(())
    }

    fn read_row(&self, source: &str, target: &str) -> (Query, Query, ExactFlags) {
        let norm = &self.config.normalization;
        let (source, target) = (norm.apply(source), norm.apply(target));
        let mut flags: ExactFlags = Vec::new();
        if let Some(items) = self.source_items.get(&source) {
            for &i in items {
                let pair = self.items[i as usize].references.contains(&target);
                flags.push((i, true, false, pair));
            }
        }
        if let Some(items) = self.target_items.get(&target) {
            flags.extend(items.iter().map(|&i| (i, false, true, false)));
        }
        let source_query = query(
            &self.source_vocab,
            &self.config.grams_of_normalized(&source),
        );
        let target_query = query(
            &self.target_vocab,
            &self.config.grams_of_normalized(&target),
        );
        (source_query, target_query, flags)
    }

    fn feed_block<S: AsRef<str> + Sync>(&mut self, sources: &[S], targets: &[S], row_base: u64) {
        let pool = self.pool.clone();
        pool.install(|| self.search_block(sources, targets, row_base));
    }

    fn search_block<S: AsRef<str> + Sync>(&mut self, sources: &[S], targets: &[S], row_base: u64) {
        let rows: Vec<(Query, Query, ExactFlags)> = (0..sources.len())
            .into_par_iter()
            .map(|i| self.read_row(sources[i].as_ref(), targets[i].as_ref()))
            .collect();
        let (source_rows, target_rows): (Vec<Query>, Vec<Query>) =
            rows.iter().map(|(s, t, _)| (s.clone(), t.clone())).unzip();
        let (source, target) = rayon::join(
            || Postings::build(&source_rows, self.source_vocab.len(), row_base),
            || Postings::build(&target_rows, self.target_vocab.len(), row_base),
        );
        let block = Block {
            source: &source,
            target: &target,
        };
        let k = self.k;
        let queries = &self.queries;
        self.exposures.par_iter_mut().enumerate().for_each_init(
            Scratch::default,
            |scratch, (i, e)| {
                let found = block.expose(&queries[i], k, e, scratch);
                e.merge(&found, k);
            },
        );
        for (_, _, flags) in &rows {
            for &(i, s, t, p) in flags {
                let e = &mut self.exposures[i as usize];
                e.source_exact |= s;
                e.target_exact |= t;
                e.pair_exact |= p;
            }
        }
    }

    /// Merge the audit of other training rows (another shard) of the same
    /// test set and settings.
    pub fn merge(&mut self, other: &StreamingAudit) -> Result<()> {
        let same_items = self.items.len() == other.items.len()
            && self
                .items
                .iter()
                .zip(&other.items)
                .all(|(a, b)| a.source == b.source && a.references == b.references);
        if other.config != self.config || other.k != self.k || !same_items {
            return Err(invalid(
                "other",
                "audits of different test sets or settings",
            ));
        }
        for (e, o) in self.exposures.iter_mut().zip(&other.exposures) {
            e.merge(o, self.k);
        }
        self.next_row = self.next_row.max(other.next_row);
        Ok(())
    }
}
