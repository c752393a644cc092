//! Decontamination over a [`TrainingIndex`]: every training row within a
//! fixed [`Threshold`] of a test text, test sources against the training
//! sources and references against the training targets, found by searching
//! the index once per test text instead of passing over the corpus.
//!
//! A row reaching `t` with a test text `x` shares a gram with the first
//! `|x| - ceil(t * |x|) + 1` grams of `x` in any fixed global order. The
//! order here is the index's own: the grams absent from the corpus first
//! (they reach no row), then by document frequency, then by gram id. Only
//! the lists of that prefix are read, each cut to the texts whose size can
//! reach `t` (a size window is one id range), counting each text's shared
//! grams; the other lists then complete the counts of the texts that can
//! still reach `t`, and each is scored exactly. Each row's matches
//! are reduced by [`RowMatch::reduce`], as the streaming decontaminator
//! reduces them, so both answers are the same.

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::grams::Gram;
use crate::jaccard::Score;
use crate::row_match::{reference_numbers, RowMatch};
use crate::threshold::Threshold;

use super::training_index::{Side, TrainingIndex};

/// Test texts searched between two polls for interruption.
const TEXTS_PER_POLL: usize = 1024;

/// A test text's match with one training row: (row, text, score).
type Found = (u64, u32, Score);

/// One thread's working memory: each text's count of shared grams and the
/// texts counted.
#[derive(Default)]
struct Counts {
    counts: Vec<u32>,
    touched: Vec<u32>,
}

/// The distinct texts of `side` (internal ids, increasing) at or above `t`
/// with a test text of grams `grams`, with their scores. The prefix's lists
/// count each text's shared grams; the rest of the lists complete the counts
/// of the texts that can still reach `t` (count first, verify later, as
/// [`search`](super::search::search) does), dropping each as soon as the
/// lists left cannot bring it to the overlap its size needs.
fn texts_reaching(side: &Side, grams: &[Gram], t: &Threshold, c: &mut Counts) -> Vec<(u32, Score)> {
    let p = &side.postings;
    let q = side.query(grams);
    if q.size == 0 {
        // Only the empty texts reach an empty one (at similarity 1).
        let (_, end) = p.size_range(0, 0);
        return (0..end as u32)
            .map(|x| (x, Score::jaccard(0, 0, 0)))
            .collect();
    }
    let n = q.size;
    let unknown = n - q.grams.len() as u32;
    let prefix = t.prefix_len(n);
    if unknown >= prefix {
        return Vec::new();
    }
    let mut lists: Vec<(usize, u32)> = q.grams.iter().map(|&g| (p.df(g), g)).collect();
    lists.sort_unstable();
    let probed = (prefix - unknown) as usize;
    let (min, max) = t.size_window(n);
    let (lo, hi) = p.size_range(min, max);
    if c.counts.len() < p.texts() {
        c.counts.resize(p.texts(), 0);
    }
    let Counts { counts, touched } = c;
    for &(_, g) in &lists[..probed] {
        let mut list = p.list(g);
        if list.seek(lo as u32).is_some() {
            list.for_each_below(hi as u32, |x| {
                if counts[x as usize] == 0 {
                    touched.push(x);
                }
                counts[x as usize] += 1;
            });
        }
    }
    let mut remaining = (lists.len() - probed) as u32;
    let can_reach =
        |x: u32, count: u32, remaining: u32| count + remaining >= t.least_shared(n, p.size(x));
    let mut candidates: Vec<u32> = touched
        .iter()
        .copied()
        .filter(|&x| can_reach(x, counts[x as usize], remaining))
        .collect();
    candidates.sort_unstable();
    for &(_, g) in &lists[probed..] {
        if candidates.is_empty() {
            break;
        }
        remaining -= 1;
        let mut list = p.list(g);
        let mut kept = 0;
        for j in 0..candidates.len() {
            let x = candidates[j];
            if list.seek(x) == Some(x) {
                counts[x as usize] += 1;
            }
            if can_reach(x, counts[x as usize], remaining) {
                candidates[kept] = x;
                kept += 1;
            }
        }
        candidates.truncate(kept);
    }
    let found = candidates
        .iter()
        .map(|&x| (x, Score::jaccard(counts[x as usize], n, p.size(x))))
        .filter(|&(_, s)| t.admits(s))
        .collect();
    for &x in touched.iter() {
        counts[x as usize] = 0;
    }
    touched.clear();
    found
}

impl TrainingIndex {
    /// The training rows within `threshold` of a test text on some side, in
    /// increasing row order, each with its best matches: what a
    /// [`Decontaminator`](crate::Decontaminator) of the same test texts
    /// answers when fed the whole corpus. `references[i]` holds item `i`'s
    /// references (any number); `references` is empty when no item has any.
    /// `interrupted` is polled between runs of test texts.
    pub fn decontaminate<S: AsRef<str> + Sync>(
        &self,
        sources: &[S],
        references: &[Vec<S>],
        threshold: Threshold,
        interrupted: &dyn Fn() -> bool,
    ) -> Result<Vec<RowMatch>> {
        let reference_of = reference_numbers(sources.len(), references)?;
        let reference_texts: Vec<&str> = references
            .iter()
            .flat_map(|refs| refs.iter().map(|r| r.as_ref()))
            .collect();
        let source_texts: Vec<&str> = sources.iter().map(|s| s.as_ref()).collect();
        let mut by_source =
            self.side_matches(&self.source, &source_texts, &threshold, interrupted)?;
        let mut by_target =
            self.side_matches(&self.target, &reference_texts, &threshold, interrupted)?;
        self.pool.install(|| {
            rayon::join(
                || by_source.par_sort_unstable_by_key(|&(row, x, _)| (row, x)),
                || by_target.par_sort_unstable_by_key(|&(row, x, _)| (row, x)),
            )
        });
        Ok(by_row(&by_source, &by_target, &reference_of))
    }

    /// Every (row, test text, score) of `side` at or above `t`, in no order.
    fn side_matches(
        &self,
        side: &Side,
        texts: &[&str],
        t: &Threshold,
        interrupted: &dyn Fn() -> bool,
    ) -> Result<Vec<Found>> {
        let mut found = Vec::new();
        for (run, chunk) in texts.chunks(TEXTS_PER_POLL).enumerate() {
            if interrupted() {
                return Err(Error::Interrupted);
            }
            let first = (run * TEXTS_PER_POLL) as u32;
            let part: Vec<Vec<Found>> = self.pool.install(|| {
                chunk
                    .par_iter()
                    .enumerate()
                    .map_init(Counts::default, |counts, (k, text)| {
                        let x = first + k as u32;
                        let grams = self.config.grams(text);
                        texts_reaching(side, &grams, t, counts)
                            .into_iter()
                            .flat_map(|(internal, score)| {
                                side.postings
                                    .rows_of(internal)
                                    .map(move |row| (row, x, score))
                            })
                            .collect()
                    })
                    .collect()
            });
            found.extend(part.into_iter().flatten());
        }
        Ok(found)
    }
}

/// Each row's matches (both lists sorted by row) reduced to its
/// [`RowMatch`], in increasing row order.
fn by_row(sources: &[Found], targets: &[Found], reference_of: &[(u32, u32)]) -> Vec<RowMatch> {
    let (mut i, mut k) = (0, 0);
    let mut found = Vec::new();
    let (mut source_found, mut target_found) = (Vec::new(), Vec::new());
    while i < sources.len() || k < targets.len() {
        let row = match (sources.get(i), targets.get(k)) {
            (Some(a), Some(b)) => a.0.min(b.0),
            (Some(a), None) => a.0,
            (None, Some(b)) => b.0,
            (None, None) => unreachable!(),
        };
        source_found.clear();
        target_found.clear();
        while let Some(&(_, x, s)) = sources.get(i).filter(|f| f.0 == row) {
            source_found.push((x, s));
            i += 1;
        }
        while let Some(&(_, x, s)) = targets.get(k).filter(|f| f.0 == row) {
            target_found.push((x, s));
            k += 1;
        }
        found.extend(RowMatch::reduce(
            row,
            &mut source_found,
            &mut target_found,
            reference_of,
        ));
    }
    found
}
