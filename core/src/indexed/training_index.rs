//! A [`TrainingIndex`]: each side of the training corpus, read a block of
//! rows at a time, as a sorted gram vocabulary (`u128` keys), posting lists
//! over the side's distinct texts, and 128-bit XXH3 hashes of the
//! normalised texts for exact-overlap checks; and its answer to a test set,
//! item by item, the whole corpus searched as one block.

use rustc_hash::FxHashMap as HashMap;
use std::cmp::Reverse;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use rayon::prelude::*;
use rayon::ThreadPool;
use xxhash_rust::xxh3::xxh3_128;

use crate::error::{invalid, Error, Result};
use crate::exposure::Exposure;
use crate::grams::{Gram, GramConfig};
use crate::pool::pool;
use crate::test_set::{check_aligned, prepare, TestItem};

use super::block::{Block, ItemQueries};
use super::postings::{Postings, Query, Rows};
use super::search::Scratch;
use super::storage::{Array, Key128};

const BUILD_BLOCK_ROWS: usize = 1 << 14;

/// One side (sources or targets) of the training corpus.
#[derive(Debug, Clone, Default)]
pub(crate) struct Side {
    pub(crate) vocab: Array<Key128>,
    pub(crate) postings: Postings,
    /// The hashes of the distinct normalised texts, sorted, and the internal
    /// id of each: the texts equal to a given one.
    pub(crate) hash_keys: Array<Key128>,
    pub(crate) hash_texts: Array<u32>,
}

impl Side {
    pub(crate) fn query(&self, grams: &[Gram]) -> Query {
        Query {
            size: grams.len() as u32,
            grams: grams
                .iter()
                .filter_map(|&g| {
                    let i = self.vocab.binary_search(&Key128::from(g)).ok()?;
                    Some(i as u32)
                })
                .collect(),
        }
    }

    /// Internal ids of the texts equal to `text` (normalised).
    fn texts_equal_to(&self, text: &str) -> &[u32] {
        let h = Key128::from(xxh3_128(text.as_bytes()));
        let lo = self.hash_keys.partition_point(|&k| k < h);
        let hi = self.hash_keys.partition_point(|&k| k <= h);
        &self.hash_texts[lo..hi]
    }

    fn nbytes(&self) -> usize {
        self.vocab.nbytes()
            + self.postings.nbytes()
            + self.hash_keys.nbytes()
            + self.hash_texts.nbytes()
    }
}

/// Interns grams and distinct texts while rows are read, then renumbers the
/// grams in key order.
#[derive(Default)]
struct SideBuilder {
    ids: HashMap<Gram, u32>,
    /// The distinct texts' gram ids, in the order of their first rows.
    texts: Rows,
    /// Each text's hash; the first text of each hash, and the next text
    /// with the same hash after each (`u32::MAX` for none): hashes collide
    /// in theory only, but texts are told apart by their grams regardless.
    text_hash: Vec<u128>,
    first_of_hash: HashMap<u128, u32>,
    next_of_hash: Vec<u32>,
    text_of_row: Vec<u32>,
}

impl SideBuilder {
    /// Add a row: its normalised text's grams (sorted) and hash. A text
    /// already seen is kept once; texts are the same when their hashes and
    /// their grams are.
    fn add(&mut self, grams: Vec<Gram>, hash: u128) {
        let same_grams = |t: u32| {
            let ids = self.texts.row(t as usize);
            ids.len() == grams.len()
                && grams
                    .iter()
                    .zip(ids)
                    .all(|(g, &id)| self.ids.get(g) == Some(&id))
        };
        let mut same = self.first_of_hash.get(&hash).copied();
        let mut last = None;
        while let Some(t) = same {
            if same_grams(t) {
                break;
            }
            last = Some(t);
            same = Some(self.next_of_hash[t as usize]).filter(|&n| n != u32::MAX);
        }
        let text = match same {
            Some(t) => t,
            None => {
                let t = self.texts.len() as u32;
                let ids = &mut self.ids;
                // In gram order for the check above; renumbering sorts them.
                self.texts.ids.extend(grams.iter().map(|&g| {
                    let next = ids.len() as u32;
                    *ids.entry(g).or_insert(next)
                }));
                self.texts.starts.push(self.texts.ids.len() as u64);
                self.text_hash.push(hash);
                self.next_of_hash.push(u32::MAX);
                match last {
                    Some(previous) => self.next_of_hash[previous as usize] = t,
                    None => {
                        self.first_of_hash.insert(hash, t);
                    }
                }
                t
            }
        };
        self.text_of_row.push(text);
    }

    fn finish(self) -> Side {
        drop((self.first_of_hash, self.next_of_hash));
        let mut keyed: Vec<(Gram, u32)> = self.ids.into_iter().collect();
        keyed.par_sort_unstable();
        let mut renumber = vec![0u32; keyed.len()];
        for (new, &(_, old)) in keyed.iter().enumerate() {
            renumber[old as usize] = new as u32;
        }
        let vocab: Vec<Key128> = keyed.into_iter().map(|(g, _)| Key128::from(g)).collect();
        let mut texts = self.texts;
        texts.renumber(&renumber);
        drop(renumber);
        let text_of_row = self.text_of_row;
        let postings = Postings::build(texts, &text_of_row, vocab.len(), 0);
        // Each text's hash, found through one of its rows.
        let mut by_hash: Vec<(u128, u32)> = (0..postings.texts() as u32)
            .map(|i| {
                let row = postings.rows_of(i).next().expect("every text has a row");
                (self.text_hash[text_of_row[row as usize] as usize], i)
            })
            .collect();
        by_hash.par_sort_unstable();
        Side {
            vocab: Array::from(vocab),
            postings,
            hash_keys: Array::from(
                by_hash
                    .iter()
                    .map(|e| Key128::from(e.0))
                    .collect::<Vec<_>>(),
            ),
            hash_texts: Array::from(by_hash.iter().map(|e| e.1).collect::<Vec<_>>()),
        }
    }

    /// One side of the corpus, read a block of rows at a time. The sides are
    /// built one after the other, so only one side's texts are ever held.
    fn build(
        config: &GramConfig,
        rows: usize,
        read: &dyn Fn(usize, usize) -> Result<Vec<String>>,
        pool: &ThreadPool,
        interrupted: &dyn Fn() -> bool,
    ) -> Result<Side> {
        let mut side = SideBuilder::default();
        for start in (0..rows).step_by(BUILD_BLOCK_ROWS) {
            if interrupted() {
                return Err(Error::Interrupted);
            }
            let texts = read(start, (start + BUILD_BLOCK_ROWS).min(rows))?;
            let rows: Vec<_> = pool.install(|| {
                texts
                    .par_iter()
                    .map(|text| {
                        let norm = config.normalization.apply(text);
                        (config.grams_of_normalized(&norm), xxh3_128(norm.as_bytes()))
                    })
                    .collect()
            });
            for (grams, hash) in rows {
                side.add(grams, hash);
            }
        }
        Ok(pool.install(|| side.finish()))
    }
}

/// The work of searching a test set in an index against that of reading
/// the whole index once ([`TrainingIndex::search_volume`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SearchVolume {
    pub query_postings: u64,
    pub index_postings: u64,
}

/// A reusable index of a training corpus.
#[derive(Debug, Clone)]
pub struct TrainingIndex {
    pub(crate) config: GramConfig,
    pub(crate) source: Side,
    pub(crate) target: Side,
    pub(crate) pool: Arc<ThreadPool>,
}

impl TrainingIndex {
    pub fn build<S: AsRef<str> + Sync>(
        config: GramConfig,
        sources: &[S],
        targets: &[S],
        threads: usize,
        interrupted: &dyn Fn() -> bool,
    ) -> Result<TrainingIndex> {
        check_aligned(sources.len(), targets.len())?;
        let sides = [sources, targets];
        let read = |side: usize, start: usize, end: usize| {
            Ok(sides[side][start..end]
                .iter()
                .map(|t| t.as_ref().to_owned())
                .collect())
        };
        TrainingIndex::build_from(config, sources.len(), &read, threads, interrupted)
    }

    /// Build from a corpus of `rows` pairs that `read(side, start, end)`
    /// hands over a block of rows at a time (side 0 the sources, 1 the
    /// targets), all sources first: only one block's texts are held at once.
    pub fn build_from(
        config: GramConfig,
        rows: usize,
        read: &dyn Fn(usize, usize, usize) -> Result<Vec<String>>,
        threads: usize,
        interrupted: &dyn Fn() -> bool,
    ) -> Result<TrainingIndex> {
        if rows == 0 {
            return Err(Error::EmptyTraining);
        }
        if rows > u32::MAX as usize {
            return Err(invalid(
                "train",
                "more than 2^32 - 1 rows; use the streaming strategy",
            ));
        }
        let pool = pool(threads)?;
        let source = SideBuilder::build(&config, rows, &|s, e| read(0, s, e), &pool, interrupted)?;
        let target = SideBuilder::build(&config, rows, &|s, e| read(1, s, e), &pool, interrupted)?;
        Ok(TrainingIndex {
            config,
            source,
            target,
            pool,
        })
    }

    pub fn config(&self) -> &GramConfig {
        &self.config
    }

    pub fn rows(&self) -> usize {
        self.source.postings.rows()
    }

    pub fn nbytes(&self) -> usize {
        self.source.nbytes() + self.target.nbytes()
    }

    /// An item's source and references as queries in the two vocabularies.
    fn queries(&self, item: &TestItem) -> ItemQueries {
        ItemQueries {
            source: self.source.query(&item.source_grams),
            references: item
                .reference_grams
                .iter()
                .map(|g| self.target.query(g))
                .collect(),
        }
    }

    /// The posting-list entries of an item's grams: what its search reads at most.
    fn volume(&self, queries: &ItemQueries) -> u64 {
        let side_volume = |side: &Side, query: &Query| -> u64 {
            query
                .grams
                .iter()
                .map(|&g| side.postings.df(g) as u64)
                .sum()
        };
        side_volume(&self.source, &queries.source)
            + queries
                .references
                .iter()
                .map(|q| side_volume(&self.target, q))
                .sum::<u64>()
    }

    fn expose_item(
        &self,
        item: &TestItem,
        queries: &ItemQueries,
        k: usize,
        scratch: &mut Scratch,
    ) -> Exposure {
        let block = Block {
            source: &self.source.postings,
            target: &self.target.postings,
        };
        let mut e = block.expose(queries, k, scratch);
        let same_source = self.source.texts_equal_to(&item.source);
        let same_target: Vec<u32> = item
            .references
            .iter()
            .flat_map(|r| self.target.texts_equal_to(r))
            .copied()
            .collect();
        e.source_exact = !same_source.is_empty();
        e.target_exact = !same_target.is_empty();
        e.pair_exact = !same_target.is_empty()
            && same_source.iter().any(|&t| {
                self.source
                    .postings
                    .rows_of(t)
                    .any(|row| same_target.contains(&self.target.postings.internal_of_row(row)))
            });
        e
    }

    /// The work a search of this test set would do, for choosing between
    /// searching the index and streaming the corpus: the posting-list
    /// entries of the items' grams (each source's on the source side, each
    /// reference's on the target side), and the entries of the whole index
    /// (what a streaming pass reads, row by row, as gram sets).
    pub fn search_volume<S: AsRef<str> + Sync>(
        &self,
        sources: &[S],
        references: &[Vec<S>],
    ) -> Result<SearchVolume> {
        let items = self
            .pool
            .install(|| prepare(&self.config, sources, references))?;
        let query_postings = self.pool.install(|| {
            items
                .par_iter()
                .map(|item| self.volume(&self.queries(item)))
                .sum()
        });
        Ok(SearchVolume {
            query_postings,
            index_postings: self.source.postings.lists.len() + self.target.postings.lists.len(),
        })
    }

    /// Exposures of a test set. `interrupted` is polled between batches.
    pub fn expose<S: AsRef<str> + Sync>(
        &self,
        sources: &[S],
        references: &[Vec<S>],
        k: usize,
        interrupted: &dyn Fn() -> bool,
    ) -> Result<Vec<Exposure>> {
        if k == 0 {
            return Err(invalid("top_k", "must be at least 1"));
        }
        let items = self
            .pool
            .install(|| prepare(&self.config, sources, references))?;
        let mut out = Vec::with_capacity(items.len());
        for batch in items.chunks(256) {
            if interrupted() {
                return Err(Error::Interrupted);
            }
            out.extend(self.expose_batch(batch, k));
        }
        Ok(out)
    }

    /// The exposures of a batch of items, in order. Each item is searched on
    /// one thread. The items with the most postings go first and every thread
    /// takes the next item as it finishes, so that a few slow items do not
    /// leave a thread idle behind a fixed split of the batch.
    fn expose_batch(&self, batch: &[TestItem], k: usize) -> Vec<Exposure> {
        let queries: Vec<ItemQueries> = self
            .pool
            .install(|| batch.par_iter().map(|item| self.queries(item)).collect());
        let mut order: Vec<usize> = (0..batch.len()).collect();
        order.sort_by_cached_key(|&i| Reverse(self.volume(&queries[i])));
        let next = AtomicUsize::new(0);
        let mut found: Vec<(usize, Exposure)> = self
            .pool
            .broadcast(|_| {
                let mut scratch = Scratch::default();
                let mut found = Vec::new();
                while let Some(&i) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
                    found.push((i, self.expose_item(&batch[i], &queries[i], k, &mut scratch)));
                }
                found
            })
            .into_iter()
            .flatten()
            .collect();
        found.sort_unstable_by_key(|&(i, _)| i);
        found.into_iter().map(|(_, e)| e).collect()
    }
}
