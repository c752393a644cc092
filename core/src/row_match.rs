//! A training row's matches at or above a decontamination threshold
//! ([`RowMatch`]), reduced from every test text it reaches on each side, the
//! same way whichever strategy found them: the highest score, ties to the
//! lower item, then the lower reference.

use std::cmp::Ordering;

use crate::error::{invalid, Error, Result};
use crate::jaccard::{min_score, Score};

/// The (item, index among its references) of each reference text, in
/// order, for `items` test items whose references are `references[i]` (any
/// number; `references` empty when no item has any).
pub(crate) fn reference_numbers<S>(items: usize, references: &[Vec<S>]) -> Result<Vec<(u32, u32)>> {
    if !references.is_empty() && references.len() != items {
        return Err(Error::Misaligned {
            what: "references vs sources".into(),
            left: references.len(),
            right: items,
        });
    }
    if items >= u32::MAX as usize {
        return Err(invalid("test_sources", "too many test items"));
    }
    Ok(references
        .iter()
        .enumerate()
        .flat_map(|(i, refs)| (0..refs.len() as u32).map(move |k| (i as u32, k)))
        .collect())
}

/// A test item's source reached by a training source.
#[derive(Debug, Clone, Copy)]
pub struct SourceMatch {
    pub item: u32,
    pub score: Score,
}

/// A test item reached through one of its references (`reference`, its
/// index among the item's references).
#[derive(Debug, Clone, Copy)]
pub struct TargetMatch {
    pub item: u32,
    pub reference: u32,
    pub score: Score,
}

/// One training row's best matches at or above the threshold, on each side:
/// the highest score, ties to the lower item (then the lower reference).
/// `pair` is the best `min(source, best reference's target)` over the items
/// where both reach the threshold, its reference the item's best.
#[derive(Debug, Clone, Copy)]
pub struct RowMatch {
    pub row: u64,
    pub source: Option<SourceMatch>,
    pub target: Option<TargetMatch>,
    pub pair: Option<TargetMatch>,
}

/// `a` is better than `b`: a higher score, or an equal one at a lower key.
fn better<K: Ord>(a: (Score, K), b: (Score, K)) -> bool {
    match a.0.cmp_exact(b.0) {
        Ordering::Greater => true,
        Ordering::Less => false,
        Ordering::Equal => a.1 < b.1,
    }
}

impl RowMatch {
    /// Row `row`'s matches from every test source it reaches (`sources`, as
    /// (item, score)) and every reference (`targets`, as (reference text,
    /// score), reference texts numbered by (item, reference) and
    /// `reference_of` giving each one's (item, reference index)), all at or
    /// above the threshold, in any order (both are sorted here); `None`
    /// when neither side reaches it.
    pub fn reduce(
        row: u64,
        sources: &mut [(u32, Score)],
        targets: &mut [(u32, Score)],
        reference_of: &[(u32, u32)],
    ) -> Option<RowMatch> {
        if sources.is_empty() && targets.is_empty() {
            return None;
        }
        let target_match = |text: u32, score: Score| {
            let (item, reference) = reference_of[text as usize];
            TargetMatch {
                item,
                reference,
                score,
            }
        };
        let source = sources
            .iter()
            .copied()
            .reduce(|a, b| if better((b.1, b.0), (a.1, a.0)) { b } else { a })
            .map(|(item, score)| SourceMatch { item, score });
        let target = targets
            .iter()
            .copied()
            .reduce(|a, b| if better((b.1, b.0), (a.1, a.0)) { b } else { a })
            .map(|(x, score)| target_match(x, score));
        let pair = pair(sources, targets, &target_match);
        Some(RowMatch {
            row,
            source,
            target,
            pair,
        })
    }
}

/// The best `min(source, the item's best target)` over the items found on
/// both sides.
fn pair(
    sources: &mut [(u32, Score)],
    targets: &mut [(u32, Score)],
    target_match: &dyn Fn(u32, Score) -> TargetMatch,
) -> Option<TargetMatch> {
    if sources.is_empty() || targets.is_empty() {
        return None;
    }
    sources.sort_unstable_by_key(|&(item, _)| item);
    // Reference texts are numbered by (item, reference).
    targets.sort_unstable_by_key(|&(x, _)| x);
    let mut best: Option<TargetMatch> = None;
    let mut k = 0;
    for &(item, source_score) in sources.iter() {
        while k < targets.len() && target_match(targets[k].0, targets[k].1).item < item {
            k += 1;
        }
        let mut item_best: Option<TargetMatch> = None;
        while k < targets.len() {
            let m = target_match(targets[k].0, targets[k].1);
            if m.item != item {
                break;
            }
            if item_best.is_none_or(|b| m.score.cmp_exact(b.score).is_gt()) {
                item_best = Some(m);
            }
            k += 1;
        }
        if let Some(m) = item_best {
            let score = min_score(source_score, m.score);
            let candidate = TargetMatch { score, ..m };
            if best.is_none_or(|b| better((score, item), (b.score, b.item))) {
                best = Some(candidate);
            }
        }
    }
    best
}
