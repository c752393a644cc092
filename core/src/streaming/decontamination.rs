//! The [`Decontaminator`]: test sets (their sources and references, items
//! numbered across every set in order) indexed once, and training pairs fed
//! in blocks; each row answers on its own with its best matches at or above
//! the threshold, so rows run in parallel and the answer is order-free.

use std::sync::Arc;

use rayon::prelude::*;
use rayon::ThreadPool;

use crate::error::{Error, Result};
use crate::grams::GramConfig;
use crate::jaccard::Score;
use crate::pool::pool;
use crate::row_match::{reference_numbers, RowMatch};
use crate::test_set::check_aligned;
use crate::threshold::Threshold;

use super::threshold_join::{JoinScratch, TextIndex};
use super::training_rows::Reader;
use super::vocabulary::Text;

/// Rows answered between two polls for interruption.
const ROWS_PER_POLL: usize = 16_384;

/// Test sets against which training pairs are judged, one row at a time.
#[derive(Debug, Clone)]
pub struct Decontaminator {
    config: GramConfig,
    threshold: Threshold,
    sources: TextIndex,
    references: TextIndex,
    /// (item, reference index) of each reference text, increasing.
    reference_of: Vec<(u32, u32)>,
    pool: Arc<ThreadPool>,
    /// How candidates are scored: `None` by the cost model.
    counting: Option<bool>,
}

/// One thread's scratch: readers of each side's vocabulary, each side's
/// join scratch, and the matches found.
struct Scratch {
    source_reader: Reader,
    target_reader: Reader,
    source_join: JoinScratch,
    target_join: JoinScratch,
    source_found: Vec<(u32, Score)>,
    target_found: Vec<(u32, Score)>,
}

impl Decontaminator {
    /// `references[i]` holds item `i`'s references (any number, none
    /// included); `references` is empty when no item has any.
    pub fn new<S: AsRef<str> + Sync>(
        config: GramConfig,
        sources: &[S],
        references: &[Vec<S>],
        threshold: Threshold,
        threads: usize,
    ) -> Result<Decontaminator> {
        let reference_of = reference_numbers(sources.len(), references)?;
        let pool = pool(threads)?;
        let (sources, references) = pool.install(|| {
            let source_sets: Vec<_> = sources
                .par_iter()
                .map(|s| config.grams(s.as_ref()))
                .collect();
            let reference_sets: Vec<_> = references
                .par_iter()
                .flat_map_iter(|refs| refs.iter().map(|r| config.grams(r.as_ref())))
                .collect();
            rayon::join(
                || TextIndex::new(&source_sets, &threshold),
                || TextIndex::new(&reference_sets, &threshold),
            )
        });
        Ok(Decontaminator {
            config,
            threshold,
            sources,
            references,
            reference_of,
            pool,
            counting: None,
        })
    }

    /// Score every row's candidates one way: by counting every test text's
    /// overlap at once (`Some(true)`), by looking up each candidate's
    /// (`Some(false)`), or the cheaper by the cost model (`None`, the
    /// default). Every way gives the same answer; tests hold each to it.
    pub fn with_counting(mut self, counting: Option<bool>) -> Decontaminator {
        self.counting = counting;
        self
    }

    /// Test items (across every set).
    pub fn items(&self) -> usize {
        self.sources.len()
    }

    /// The rows among `sources`/`targets` (the first row has global index
    /// `row_base`) that reach the threshold on some side, in increasing row
    /// order. `interrupted` is polled between runs of rows.
    pub fn feed<S: AsRef<str> + Sync>(
        &self,
        sources: &[S],
        targets: &[S],
        row_base: u64,
        interrupted: &dyn Fn() -> bool,
    ) -> Result<Vec<RowMatch>> {
        check_aligned(sources.len(), targets.len())?;
        let mut found = Vec::new();
        let mut start = 0;
        while start < sources.len() {
            if interrupted() {
                return Err(Error::Interrupted);
            }
            let end = (start + ROWS_PER_POLL).min(sources.len());
            let runs: Vec<Vec<RowMatch>> = self.pool.install(|| {
                // A few runs per thread, each with its own scratch, so that a
                // slow run does not hold the others.
                let run = (end - start)
                    .div_ceil(8 * rayon::current_num_threads())
                    .max(256);
                (start..end)
                    .step_by(run)
                    .collect::<Vec<_>>()
                    .into_par_iter()
                    .map(|first| {
                        let mut scratch = self.scratch();
                        (first..(first + run).min(end))
                            .filter_map(|j| {
                                self.row(
                                    &mut scratch,
                                    sources[j].as_ref(),
                                    targets[j].as_ref(),
                                    row_base + j as u64,
                                )
                            })
                            .collect()
                    })
                    .collect()
            });
            found.extend(runs.into_iter().flatten());
            start = end;
        }
        Ok(found)
    }

    fn scratch(&self) -> Scratch {
        Scratch {
            source_reader: Reader::new(self.sources.vocab.len()),
            target_reader: Reader::new(self.references.vocab.len()),
            source_join: self.sources.scratch(),
            target_join: self.references.scratch(),
            source_found: Vec::new(),
            target_found: Vec::new(),
        }
    }

    /// A training text in an index's vocabulary, its ids in no order.
    fn read(&self, reader: &mut Reader, index: &TextIndex, text: &str) -> Text {
        let normalized = self.config.normalization.apply(text);
        reader.text(&self.config, &index.vocab, &normalized)
    }

    fn row(&self, scratch: &mut Scratch, source: &str, target: &str, row: u64) -> Option<RowMatch> {
        let t = &self.threshold;
        let mut u = self.read(&mut scratch.source_reader, &self.sources, source);
        self.sources.matches(
            &mut u,
            &scratch.source_reader.seen,
            t,
            self.counting,
            &mut scratch.source_join,
            &mut scratch.source_found,
        );
        scratch.target_found.clear();
        if self.references.len() > 0 {
            let mut v = self.read(&mut scratch.target_reader, &self.references, target);
            self.references.matches(
                &mut v,
                &scratch.target_reader.seen,
                t,
                self.counting,
                &mut scratch.target_join,
                &mut scratch.target_found,
            );
        }
        RowMatch::reduce(
            row,
            &mut scratch.source_found,
            &mut scratch.target_found,
            &self.reference_of,
        )
    }
}
