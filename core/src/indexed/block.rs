//! [`Block`] answers a test item ([`ItemQueries`]) against the posting
//! lists of a set of rows: its top-k sources, its top-k targets (each with
//! its best reference) and its exact pair exposure (with the best reference
//! of the pair's target).

use crate::exposure::{rank_target, Exposure, TargetHit};
use crate::jaccard::{min_score, Bar, Hit, Score};

use super::postings::{Postings, Query};
use super::search::{prefix_cost, scores_of, search, Limit, Scratch};

/// A test item as queries in one vocabulary: its source and its references.
#[derive(Debug, Clone, Default)]
pub struct ItemQueries {
    pub source: Query,
    pub references: Vec<Query>,
}

/// Rows whose score on one side is known: sources, or targets with their
/// best reference.
#[derive(Clone, Copy)]
enum Known<'a> {
    Sources(&'a [Hit]),
    Targets(&'a [TargetHit]),
}

/// The source and target blocks of the same training rows.
pub struct Block<'a> {
    pub source: &'a Postings,
    pub target: &'a Postings,
}

impl Block<'_> {
    /// Target scores of `rows` (global indices): the best over references,
    /// with the lowest reference index among equals.
    fn target_scores(&self, item: &ItemQueries, rows: &[u64]) -> Vec<(Score, u32)> {
        let internal: Vec<u32> = rows
            .iter()
            .map(|&r| self.target.internal_of_row(r))
            .collect();
        let mut best: Vec<(Score, u32)> = vec![(Score::ZERO, 0); rows.len()];
        for (k, reference) in item.references.iter().enumerate() {
            for (slot, score) in best
                .iter_mut()
                .zip(scores_of(self.target, reference, &internal))
            {
                if k == 0 || score.cmp_exact(slot.0).is_gt() {
                    *slot = (score, k as u32);
                }
            }
        }
        best
    }

    fn source_scores(&self, item: &ItemQueries, rows: &[u64]) -> Vec<Score> {
        let internal: Vec<u32> = rows
            .iter()
            .map(|&r| self.source.internal_of_row(r))
            .collect();
        scores_of(self.source, &item.source, &internal)
    }

    /// The best pair by min(source, target) among rows whose score on one
    /// side is known, if any passes `bar`, with the best reference of its
    /// target.
    fn best_pair(&self, item: &ItemQueries, known: Known<'_>, bar: Bar) -> Option<TargetHit> {
        fn best(pairs: impl Iterator<Item = TargetHit>, bar: Bar) -> Option<TargetHit> {
            pairs
                .filter(|p| bar.admits(p.hit.score))
                .min_by(rank_target)
        }
        match known {
            Known::Sources(hits) => {
                let rows: Vec<u64> = hits.iter().map(|h| h.row).collect();
                let pairs = hits.iter().zip(self.target_scores(item, &rows)).map(
                    |(h, (target, reference))| TargetHit {
                        hit: Hit {
                            score: min_score(h.score, target),
                            row: h.row,
                        },
                        reference,
                    },
                );
                best(pairs, bar)
            }
            Known::Targets(hits) => {
                let rows: Vec<u64> = hits.iter().map(|t| t.hit.row).collect();
                let pairs = hits
                    .iter()
                    .zip(self.source_scores(item, &rows))
                    .map(|(t, source)| TargetHit {
                        hit: Hit {
                            score: min_score(source, t.hit.score),
                            row: t.hit.row,
                        },
                        reference: t.reference,
                    });
                best(pairs, bar)
            }
        }
    }

    /// The exposure of one item to the rows of this block.
    pub fn expose(&self, item: &ItemQueries, k: usize, scratch: &mut Scratch) -> Exposure {
        let source = search(self.source, &item.source, Limit::Top(k), Bar::OPEN, scratch);

        // The k best rows of each reference hold the k best rows overall.
        let mut rows: Vec<u64> = Vec::new();
        for reference in &item.references {
            for h in search(self.target, reference, Limit::Top(k), Bar::OPEN, scratch) {
                if !rows.contains(&h.row) {
                    rows.push(h.row);
                }
            }
        }
        let mut target: Vec<TargetHit> = rows
            .iter()
            .zip(self.target_scores(item, &rows))
            .map(|(&row, (score, reference))| TargetHit {
                hit: Hit { score, row },
                reference,
            })
            .collect();
        target.sort_by(rank_target);
        target.truncate(k);

        let pair = self.expose_pair(item, &source, &target, scratch);
        Exposure {
            source,
            target,
            pair,
            ..Exposure::default()
        }
    }

    /// Exact pair exposure: seed a bar with the pair scores of the block's
    /// best source and target rows, then search the cheaper side for every
    /// row that can beat it and score min(source, target) for each.
    fn expose_pair(
        &self,
        item: &ItemQueries,
        source: &[Hit],
        target: &[TargetHit],
        scratch: &mut Scratch,
    ) -> Option<TargetHit> {
        if item.references.is_empty() {
            return None;
        }
        let seeds = [
            self.best_pair(
                item,
                Known::Sources(&source[..source.len().min(1)]),
                Bar::OPEN,
            ),
            self.best_pair(
                item,
                Known::Targets(&target[..target.len().min(1)]),
                Bar::OPEN,
            ),
        ];
        // The best pair is at least the seed's; with a seed of 0, look for any
        // positive pair, else every pair scores 0 and the first row wins.
        let seed = seeds.into_iter().flatten().min_by(rank_target);
        let zero_fill = seed.is_none_or(|s| s.hit.score.overlap == 0);
        let bar = match seed {
            Some(s) if !zero_fill => Bar::at_least(s.hit.score),
            _ => Bar::above(Score::ZERO),
        };
        let source_cost = prefix_cost(self.source, &item.source, bar);
        let target_cost: u64 = item
            .references
            .iter()
            .map(|r| prefix_cost(self.target, r, bar))
            .sum();
        let found = if source_cost <= target_cost {
            let known = search(self.source, &item.source, Limit::All, bar, scratch);
            self.best_pair(item, Known::Sources(&known), bar)
        } else {
            // Rows reaching the bar on some reference, with their best target score.
            let mut rows: Vec<u64> = Vec::new();
            for reference in &item.references {
                rows.extend(
                    search(self.target, reference, Limit::All, bar, scratch)
                        .iter()
                        .map(|h| h.row),
                );
            }
            rows.sort_unstable();
            rows.dedup();
            let known: Vec<TargetHit> = rows
                .iter()
                .zip(self.target_scores(item, &rows))
                .map(|(&row, (score, reference))| TargetHit {
                    hit: Hit { score, row },
                    reference,
                })
                .collect();
            self.best_pair(item, Known::Targets(&known), bar)
        };
        match (found, zero_fill) {
            (Some(h), _) => Some(h),
            (None, true) => {
                let first = self.source.row_base;
                let score = self.source_scores(item, &[first])[0];
                let known = [Hit { score, row: first }];
                self.best_pair(item, Known::Sources(&known), Bar::OPEN)
            }
            (None, false) => None,
        }
    }
}
