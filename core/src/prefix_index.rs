//! The test side of the streaming strategy: test texts indexed by the
//! prefix of their gram sets that a training row must share to pass each
//! text's bar (the prefix filter of AllPairs, query side), with the prefix
//! length depending on the row's size.
//!
//! A row of `s` grams shares at least `alpha(s)` grams with a text of `n`
//! grams that it passes, and `alpha` grows with `s`, so the rows of a size
//! need a prefix of `n - alpha(s) + 1` grams only; the index keeps
//! [`SLACK`] more, so that a row must share more than `SLACK` of them before
//! the rest of the text is looked at. Each index entry keeps the largest row
//! size whose prefix holds it, and a gram's list is sorted by that size, so
//! that a row stops reading a list at the first entry too small for it.

use crate::fetch::prefetch;
use crate::score::Bar;
use crate::streaming::Text;

/// Grams indexed beyond the shortest prefix: a row must then share more
/// than `SLACK` prefix grams with a text before the text's other grams are
/// looked at, which spares that look for most texts a row reaches, at the
/// price of longer lists.
pub(crate) const SLACK: u32 = 32;

/// How many grams ahead [`PrefixIndex::probe`] fetches a list.
const AHEAD: usize = 8;

/// Fewest grams a row of `s` grams must share with a text of `n` grams to
/// pass `bar` (at least 1): with `o` shared, J = o / (n + s - o), so
/// J >= p/q when o (p + q) >= p (n + s).
pub(crate) fn min_overlap(bar: Bar, n: u32, s: u32) -> u32 {
    let (p, q) = (bar.score.overlap as u64, bar.score.union as u64);
    let need = p * (n as u64 + s as u64);
    let alpha = if bar.strict {
        need / (p + q) + 1
    } else {
        need.div_ceil(p + q)
    };
    alpha.clamp(1, u32::MAX as u64) as u32
}

/// The largest row size whose prefix for a text of `n` grams reaches the
/// gram at position `position` (rarest first), `slack` grams beyond the
/// shortest prefix: the largest `s` with
/// `min_overlap(bar, n, s) <= n - position + slack`. `None` when no row
/// reaches it.
fn largest_row(bar: Bar, n: u32, position: u32, slack: u32) -> Option<u32> {
    let (p, q) = (bar.score.overlap as u64, bar.score.union as u64);
    if p == 0 {
        return Some(u32::MAX);
    }
    let room = (n - position + slack) as u64 * (p + q);
    let most = if bar.strict { (room - 1) / p } else { room / p };
    most.checked_sub(n as u64)
        .map(|s| s.min(u32::MAX as u64) as u32)
}

/// Test texts indexed by the prefix grams a row must share to pass each
/// text's bar. A row's count for a text is then exactly the number of the
/// text's prefix grams (for the row's size) it holds; the text's other
/// grams (`rest`) complete an exact overlap.
pub(crate) struct PrefixIndex {
    /// Per gram: (text, largest row size reaching it), largest first.
    offsets: Vec<u32>,
    entries: Vec<(u32, u32)>,
    /// Each text's grams, rarest first, with its size and bar.
    order_offsets: Vec<u32>,
    order: Vec<u32>,
    texts: Vec<(u32, Bar)>,
    /// Per text: the fewest prefix grams that any row passing it shares.
    least_count: Vec<u32>,
    slack: u32,
}

impl PrefixIndex {
    /// Index `texts` (ids below `vocab_len`) for rows that must pass `bars`,
    /// each prefix `slack` grams longer than the shortest, grams ordered by
    /// `df` (rarest first).
    pub(crate) fn build(
        vocab_len: usize,
        texts: &[Text],
        bars: &[Bar],
        df: &[u64],
        slack: u32,
    ) -> PrefixIndex {
        let mut order_offsets = vec![0u32];
        let mut order = Vec::new();
        let mut offsets = vec![0u32; vocab_len + 1];
        for t in texts {
            let start = order.len();
            order.extend_from_slice(&t.ids);
            order[start..].sort_unstable_by_key(|&g| (df[g as usize], g));
            order_offsets.push(order.len() as u32);
        }
        let mut reach: Vec<Vec<(u32, u32)>> = vec![Vec::new(); texts.len()];
        for (i, (t, bar)) in texts.iter().zip(bars).enumerate() {
            let grams = &order[order_offsets[i] as usize..order_offsets[i + 1] as usize];
            for (position, &g) in grams.iter().enumerate() {
                match largest_row(*bar, t.size, position as u32, slack) {
                    Some(s) => {
                        reach[i].push((g, s));
                        offsets[g as usize + 1] += 1;
                    }
                    None => break,
                }
            }
        }
        for g in 0..vocab_len {
            offsets[g + 1] += offsets[g];
        }
        let mut fill = offsets.clone();
        let mut entries = vec![(0u32, 0u32); offsets[vocab_len] as usize];
        for (i, grams) in reach.iter().enumerate() {
            for &(g, s) in grams {
                entries[fill[g as usize] as usize] = (i as u32, s);
                fill[g as usize] += 1;
            }
        }
        for g in 0..vocab_len {
            entries[offsets[g] as usize..offsets[g + 1] as usize]
                .sort_unstable_by_key(|&(i, s)| (std::cmp::Reverse(s), i));
        }
        PrefixIndex {
            offsets,
            entries,
            order_offsets,
            order,
            texts: texts.iter().zip(bars).map(|(t, &b)| (t.size, b)).collect(),
            least_count: texts
                .iter()
                .zip(bars)
                .map(|(t, &b)| min_overlap(b, t.size, 0).min(slack + 1))
                .collect(),
            slack,
        }
    }

    /// The texts whose `counts` of prefix grams (from [`PrefixIndex::probe`])
    /// a passing row may have, with their counts, in text order; the other
    /// texts need no closer look. Compared 64 texts at a time, without
    /// branches.
    pub(crate) fn reached(&self, counts: &[u32], out: &mut Vec<(u32, u32)>) {
        out.clear();
        for (c, (counts, least)) in counts
            .chunks(64)
            .zip(self.least_count.chunks(64))
            .enumerate()
        {
            let mut mask = 0u64;
            for (j, (&n, &l)) in counts.iter().zip(least).enumerate() {
                mask |= ((n >= l) as u64) << j;
            }
            while mask != 0 {
                let j = mask.trailing_zeros() as usize;
                out.push(((c * 64 + j) as u32, counts[j]));
                mask &= mask - 1;
            }
        }
    }

    /// The grams of text `t` outside its prefix for rows of `row_size` grams.
    pub(crate) fn rest(&self, t: usize, row_size: u32) -> &[u32] {
        let grams = &self.order[self.order_offsets[t] as usize..self.order_offsets[t + 1] as usize];
        let (n, bar) = self.texts[t];
        let keep = (n + 1 + self.slack).saturating_sub(min_overlap(bar, n, row_size)) as usize;
        &grams[keep.min(grams.len())..]
    }

    /// Count, for every text, the grams of `row` (of `row_size` grams in all)
    /// in the text's prefix for that size.
    pub(crate) fn probe(&self, row: &[u32], row_size: u32, counts: &mut [u32]) {
        for (j, &g) in row.iter().enumerate() {
            // The list a few grams ahead is fetched while this one is read,
            // and where the list twice as far ahead starts.
            if let Some(&ahead) = row.get(j + 2 * AHEAD) {
                prefetch(&self.offsets, ahead as usize);
            }
            if let Some(&ahead) = row.get(j + AHEAD) {
                prefetch(&self.entries, self.offsets[ahead as usize] as usize);
            }
            let list = &self.entries
                [self.offsets[g as usize] as usize..self.offsets[g as usize + 1] as usize];
            for &(t, largest) in list {
                if largest < row_size {
                    break;
                }
                counts[t as usize] += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::score::Score;

    #[test]
    fn min_overlap_is_exact() {
        let half = Score::jaccard(1, 1, 2);
        // 5 of 10 and 5 of 5 give J = 5 / 10.
        assert_eq!(min_overlap(Bar::at_least(half), 10, 5), 5);
        assert_eq!(min_overlap(Bar::above(half), 10, 5), 6);
        // A row of 10 needs 7: 7 / 13 > 1/2, 6 / 14 < 1/2.
        assert_eq!(min_overlap(Bar::at_least(half), 10, 10), 7);
        assert_eq!(min_overlap(Bar::OPEN, 10, 10), 1);
    }

    fn bars() -> [Bar; 7] {
        [
            Bar::OPEN,
            Bar::above(Score::ZERO),
            Bar::at_least(Score::jaccard(1, 1, 2)),
            Bar::above(Score::jaccard(1, 1, 2)),
            Bar::at_least(Score::jaccard(2, 7, 5)),
            Bar::above(Score::jaccard(3, 4, 9)),
            Bar::above(Score::jaccard(1, 1, 1)),
        ]
    }

    #[test]
    fn min_overlap_is_the_least_passing_overlap() {
        for bar in bars() {
            for n in 1..std::hint::black_box(25u32) {
                for s in 1..25u32 {
                    let alpha = min_overlap(bar, n, s);
                    for o in 1..=n.min(s) {
                        let passes = bar.admits(Score::jaccard(o, n, s));
                        assert_eq!(passes, o >= alpha, "{bar:?} {n} {s} {o}");
                    }
                }
            }
        }
    }

    #[test]
    fn largest_row_inverts_min_overlap() {
        for (bar, slack) in bars().into_iter().flat_map(|b| [(b, 0), (b, 3)]) {
            for n in 1..std::hint::black_box(30u32) {
                for position in 0..n {
                    let largest = largest_row(bar, n, position, slack);
                    for s in 0..200u32 {
                        let reached = min_overlap(bar, n, s) <= n - position + slack;
                        assert_eq!(
                            reached,
                            largest.is_some_and(|l| s <= l),
                            "{bar:?} {n} {position} {s}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn prefix_and_rest_partition_each_text_rarest_first() {
        let texts = vec![
            Text {
                size: 4,
                ids: vec![0, 1, 2, 3],
            },
            Text {
                size: 2,
                ids: vec![1, 3],
            },
        ];
        let df = [5, 1, 3, 2];
        let half = Score::jaccard(1, 1, 2);
        let index = PrefixIndex::build(4, &texts, &[Bar::at_least(half), Bar::OPEN], &df, 0);
        // Rows of 2 grams must share 2 of text 0's 4: its 3 rarest
        // (1, 3, 2) are the prefix. Rows of 4 must share 3: (1, 3).
        assert_eq!(index.rest(0, 2), &[0]);
        assert_eq!(index.rest(0, 4), &[2, 0]);
        assert!(index.rest(1, 4).is_empty());
        let mut counts = vec![0; 2];
        index.probe(&[0, 3, 2], 2, &mut counts);
        assert_eq!(counts, vec![2, 1]);
        let mut counts = vec![0; 2];
        index.probe(&[0, 3, 2], 4, &mut counts);
        assert_eq!(counts, vec![1, 1]);
        // One gram of slack: rows of 4 also count gram 2, and must share
        // two prefix grams to pass text 0.
        let index = PrefixIndex::build(4, &texts, &[Bar::at_least(half), Bar::OPEN], &df, 1);
        assert_eq!(index.rest(0, 4), &[0]);
        let mut reached = Vec::new();
        index.reached(&[1, 1], &mut reached);
        assert_eq!(reached, vec![(1, 1)]);
        index.reached(&[2, 0], &mut reached);
        assert_eq!(reached, vec![(0, 2)]);
    }
}
