//! Exact Jaccard search of one query over one block of rows.
//!
//! Posting lists are read rarest first. While reading them the lower bounds
//! of the rows seen so far raise a bar; once the rows not yet seen cannot
//! reach it (the prefix is exhausted) no new candidate is admitted, and the
//! remaining lists only complete the counts of the surviving candidates, which
//! are pruned by their upper bounds as they go (count first, verify later).
//! A size window, narrowed as the bar rises, cuts every list by a seek.

use crate::jaccard::{top_k, Bar, Hit, Score};

use super::postings::{Postings, Query};

/// How many hits a search returns.
#[derive(Debug, Clone, Copy)]
pub enum Limit {
    /// The `k` best rows, ranked by score then row index; rows of score 0
    /// fill the list when fewer than `k` rows share a gram with the query.
    Top(usize),
    /// Every row admitted by the bar.
    All,
}

/// Per-thread working memory, reused across searches: each text's count of
/// shared grams, in 16 bits for a query of at most 65,535 grams (half the
/// cache lines of 32), and the texts counted.
#[derive(Debug, Default)]
pub struct Scratch {
    counts16: Vec<u16>,
    counts32: Vec<u32>,
    touched: Vec<u32>,
}

/// A count of shared grams, never above the query's gram count.
trait Count: Copy + Default + Into<u32> {
    fn increment(self) -> Self;
}

impl Count for u16 {
    #[inline]
    fn increment(self) -> Self {
        self + 1
    }
}

impl Count for u32 {
    #[inline]
    fn increment(self) -> Self {
        self + 1
    }
}

/// The `k` rows with the highest lower bounds seen so far.
struct Leaders {
    k: usize,
    items: Vec<(Score, u32)>,
    floor: Option<Score>,
}

impl Leaders {
    fn new(k: usize) -> Leaders {
        Leaders {
            k,
            items: Vec::new(),
            floor: None,
        }
    }

    /// Offer a row's (increased) lower bound.
    fn offer(&mut self, score: Score, row: u32) {
        if self.k == 0 {
            return;
        }
        if let Some(floor) = self.floor {
            if score.cmp_exact(floor).is_le() {
                return;
            }
        }
        if let Some(item) = self.items.iter_mut().find(|item| item.1 == row) {
            item.0 = score;
        } else if self.items.len() < self.k {
            self.items.push((score, row));
        } else {
            let weakest = self.weakest();
            self.items[weakest] = (score, row);
        }
        if self.items.len() == self.k {
            self.floor = Some(self.items[self.weakest()].0);
        }
    }

    fn weakest(&self) -> usize {
        let mut w = 0;
        for i in 1..self.items.len() {
            if self.items[i].0.cmp_exact(self.items[w].0).is_lt() {
                w = i;
            }
        }
        w
    }

    /// Counts at or below the gate cannot improve the leaders: a row sharing
    /// `c` grams with a query of size `n` scores at most `c / n`.
    fn gate(&self, n: u32) -> u32 {
        if self.k == 0 {
            return u32::MAX;
        }
        match self.floor {
            None => 0,
            Some(f) => (f.overlap as u64 * n as u64 / f.union as u64) as u32,
        }
    }

    /// The bar these lower bounds prove: the k-th best score is at least this.
    fn bar(&self) -> Option<Bar> {
        self.floor.map(Bar::at_least)
    }
}

/// Sizes `[min, max]` of the rows that can be admitted by `bar` against a
/// query of size `n`: J <= min(n, s) / max(n, s).
fn size_window(n: u32, bar: Bar) -> (u64, u64) {
    let (p, q, n) = (bar.score.overlap as u64, bar.score.union as u64, n as u64);
    let min = if bar.strict {
        p * n / q + 1
    } else {
        (p * n).div_ceil(q)
    };
    let max = if p == 0 {
        u64::MAX
    } else if bar.strict {
        (n * q).saturating_sub(1) / p
    } else {
        n * q / p
    };
    (min, max)
}

/// The best score of a row that shares at most `remaining` grams with a
/// query of size `n`: `remaining / n`, reached when the row is that overlap.
fn unseen_bound(remaining: u32, n: u32) -> Score {
    Score::bound(remaining, n, remaining)
}

/// The query's posting lists in this block, rarest first, as (df, gram).
fn lists_rarest_first(p: &Postings, q: &Query) -> Vec<(usize, u32)> {
    let mut lists: Vec<(usize, u32)> = q
        .grams
        .iter()
        .map(|&g| (p.df(g), g))
        .filter(|&(df, _)| df > 0)
        .collect();
    lists.sort_unstable();
    lists
}

/// Postings a search at `bar` would read while admitting candidates: a cost
/// estimate for choosing which side of a pair to search.
pub fn prefix_cost(p: &Postings, q: &Query, bar: Bar) -> u64 {
    if q.size == 0 {
        return 0;
    }
    let lists = lists_rarest_first(p, q);
    let m = lists.len();
    let mut cost = 0;
    for (i, &(df, _)) in lists.iter().enumerate() {
        if !bar.admits(unseen_bound((m - i) as u32, q.size)) {
            break;
        }
        cost += df as u64;
    }
    cost
}

/// Exact scores of the given texts (internal ids of `p`, repeats allowed) against `q`.
pub fn scores_of(p: &Postings, q: &Query, texts: &[u32]) -> Vec<Score> {
    let mut order: Vec<usize> = (0..texts.len()).collect();
    order.sort_unstable_by_key(|&i| texts[i]);
    let sorted: Vec<u32> = order.iter().map(|&i| texts[i]).collect();
    let mut overlap = vec![0u32; texts.len()];
    for &g in &q.grams {
        let mut list = p.list(g);
        for (j, &r) in sorted.iter().enumerate() {
            match list.seek(r) {
                None => break,
                Some(v) if v == r => overlap[j] += 1,
                Some(_) => {}
            }
        }
    }
    let mut scores = vec![Score::ZERO; texts.len()];
    for (j, &i) in order.iter().enumerate() {
        scores[i] = Score::jaccard(overlap[j], q.size, p.size(sorted[j]));
    }
    scores
}

/// Rows of score 0 with the lowest indices, not already in `hits`, until
/// `hits` holds `k` rows.
fn fill_with_zeros(p: &Postings, q: &Query, hits: &mut Vec<Hit>, k: usize) {
    let mut local = 0u64;
    while hits.len() < k && (local as usize) < p.rows() {
        let row = p.row_base + local;
        if !hits.iter().any(|h| h.row == row) {
            let size = p.size(p.internal_of_row(row));
            hits.push(Hit {
                score: Score::jaccard(0, q.size, size),
                row,
            });
        }
        local += 1;
    }
}

/// The `k` best hits, completed with rows of score 0 when `bar` admits them.
fn top_with_zeros(p: &Postings, q: &Query, hits: Vec<Hit>, k: usize, bar: Bar) -> Vec<Hit> {
    let mut hits = top_k(hits, k);
    if bar.admits(Score::ZERO) {
        fill_with_zeros(p, q, &mut hits, k);
    }
    hits
}

/// The empty query: rows with an empty gram set score 1, all others 0.
fn search_empty(p: &Postings, q: &Query, limit: Limit, bar: Bar) -> Vec<Hit> {
    let (_, empty_end) = p.size_range(0, 0);
    let hits_of = |texts: std::ops::Range<u32>| {
        texts.flat_map(|t| {
            let score = Score::jaccard(0, 0, p.size(t));
            p.rows_of(t).map(move |row| Hit { score, row })
        })
    };
    let mut hits: Vec<Hit> = Vec::new();
    if bar.admits(Score::jaccard(0, 0, 0)) {
        hits.extend(hits_of(0..empty_end as u32));
    }
    match limit {
        Limit::Top(k) => top_with_zeros(p, q, hits, k, bar),
        Limit::All => {
            if bar.admits(Score::ZERO) {
                hits.extend(hits_of(empty_end as u32..p.texts() as u32));
            }
            hits
        }
    }
}

/// Search one block: the rows admitted by `bar0`, limited by `limit`.
pub fn search(p: &Postings, q: &Query, limit: Limit, bar0: Bar, scratch: &mut Scratch) -> Vec<Hit> {
    if q.size == 0 {
        return search_empty(p, q, limit, bar0);
    }
    let Scratch {
        counts16,
        counts32,
        touched,
    } = scratch;
    if q.grams.len() <= u16::MAX as usize {
        counted(p, q, limit, bar0, counts16, touched)
    } else {
        counted(p, q, limit, bar0, counts32, touched)
    }
}

/// [`search`] with counts of type `C`, which must hold the query's gram count.
fn counted<C: Count>(
    p: &Postings,
    q: &Query,
    limit: Limit,
    bar0: Bar,
    counts: &mut Vec<C>,
    touched: &mut Vec<u32>,
) -> Vec<Hit> {
    let n = q.size;
    let lists = lists_rarest_first(p, q);
    let m = lists.len();
    if counts.len() < p.texts() {
        counts.resize(p.texts(), C::default());
    }
    let count = |counts: &[C], r: u32| -> u32 { counts[r as usize].into() };
    let mut leaders = Leaders::new(match limit {
        Limit::Top(k) => k,
        Limit::All => 0,
    });
    let mut bar = bar0;
    let mut gate = leaders.gate(n);

    // Prefix: admit new candidates while an unseen row could still pass.
    let mut i = 0;
    while i < m {
        if !bar.admits(unseen_bound((m - i) as u32, n)) {
            break;
        }
        let (min, max) = size_window(n, bar);
        let (lo, hi) = p.size_range(min, max);
        let mut list = p.list(lists[i].1);
        if list.seek(lo as u32).is_some() {
            list.for_each_below(hi as u32, |r| {
                let c = counts[r as usize].increment();
                counts[r as usize] = c;
                let c: u32 = c.into();
                if c == 1 {
                    touched.push(r);
                }
                if c > gate {
                    leaders.offer(Score::jaccard(c, n, p.size(r)), r);
                    gate = leaders.gate(n);
                }
            });
        }
        if let Some(b) = leaders.bar() {
            bar = bar.max(b);
        }
        i += 1;
    }

    // Verify: complete the counts of the candidates that can still pass.
    let mut remaining = (m - i) as u32;
    let (min, max) = size_window(n, bar);
    let (lo, hi) = p.size_range(min, max);
    let mut candidates: Vec<u32> = touched
        .iter()
        .copied()
        .filter(|&r| {
            (lo..hi).contains(&(r as usize))
                && bar.admits(Score::bound(count(counts, r) + remaining, n, p.size(r)))
        })
        .collect();
    candidates.sort_unstable();
    for &(_, gram) in &lists[i..] {
        if candidates.is_empty() {
            break;
        }
        remaining -= 1;
        let mut list = p.list(gram);
        let mut kept = 0;
        for j in 0..candidates.len() {
            let r = candidates[j];
            if list.seek(r) == Some(r) {
                counts[r as usize] = counts[r as usize].increment();
                leaders.offer(Score::jaccard(count(counts, r), n, p.size(r)), r);
            }
            if bar.admits(Score::bound(count(counts, r) + remaining, n, p.size(r))) {
                candidates[kept] = r;
                kept += 1;
            }
        }
        candidates.truncate(kept);
        if let Some(b) = leaders.bar() {
            bar = bar.max(b);
        }
    }

    // Each text's rows share its score; of them only the k lowest can be
    // among the k best.
    let per_text = match limit {
        Limit::Top(k) => k,
        Limit::All => usize::MAX,
    };
    let hits: Vec<Hit> = candidates
        .iter()
        .map(|&r| (r, Score::jaccard(count(counts, r), n, p.size(r))))
        .filter(|&(_, score)| bar.admits(score))
        .flat_map(|(r, score)| {
            p.rows_of(r)
                .take(per_text)
                .map(move |row| Hit { score, row })
        })
        .collect();
    for &r in touched.iter() {
        counts[r as usize] = C::default();
    }
    touched.clear();

    match limit {
        Limit::Top(k) => top_with_zeros(p, q, hits, k, bar0),
        Limit::All => hits,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_window_is_exact() {
        let half = Score::jaccard(1, 1, 2);
        assert_eq!(size_window(10, Bar::at_least(half)), (5, 20));
        assert_eq!(size_window(10, Bar::above(half)), (6, 19));
        assert_eq!(size_window(10, Bar::OPEN), (0, u64::MAX));
    }
}
