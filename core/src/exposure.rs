//! The exposure of one test item ([`Exposure`]) and its exact merge across
//! disjoint sets of training rows (blocks, threads, shards): the higher score
//! wins, ties go to the lower row index, so the merge is associative and a
//! sharded answer equals the single-pass one.

use crate::jaccard::{top_k, Hit};

/// A hit that names the best reference for the training row's target (the
/// lowest reference index among equals): a target-side hit, or the pair.
#[derive(Debug, Clone, Copy)]
pub struct TargetHit {
    pub hit: Hit,
    pub reference: u32,
}

/// Everything known about one test item after some training rows.
#[derive(Debug, Clone, Default)]
pub struct Exposure {
    /// The best training sources, best first.
    pub source: Vec<Hit>,
    /// The best training targets (best reference each), best first.
    pub target: Vec<TargetHit>,
    /// The training pair with the highest min(source score, target score),
    /// with the best reference for its target.
    pub pair: Option<TargetHit>,
    pub source_exact: bool,
    pub target_exact: bool,
    pub pair_exact: bool,
}

pub(crate) fn rank_target(a: &TargetHit, b: &TargetHit) -> std::cmp::Ordering {
    a.hit.rank(&b.hit)
}

impl Exposure {
    /// Merge the answer of later rows (or of another shard) into this one.
    pub fn merge(&mut self, other: &Exposure, k: usize) {
        self.source.extend_from_slice(&other.source);
        self.source = top_k(std::mem::take(&mut self.source), k);
        self.target.extend_from_slice(&other.target);
        self.target.sort_by(rank_target);
        self.target.truncate(k);
        self.pair = match (self.pair, other.pair) {
            (Some(a), Some(b)) => Some(if b.hit.beats(&a.hit) { b } else { a }),
            (a, b) => a.or(b),
        };
        self.source_exact |= other.source_exact;
        self.target_exact |= other.target_exact;
        self.pair_exact |= other.pair_exact;
    }
}
