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

use std::sync::Arc;

use rayon::prelude::*;

use crate::jaccard::Bar;

use super::fetch::prefetch;
use super::vocabulary::Text;

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
#[cfg(test)]
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

/// `largest_row` (the definition, kept for the tests) of positions `0, 1, ..`
/// of a text of `n` grams, as long as some row reaches them (at most `len`):
/// one division, then exact steps.
fn largest_rows(bar: Bar, n: u32, slack: u32, len: usize) -> impl Iterator<Item = u32> {
    let (p, q) = (bar.score.overlap as u64, bar.score.union as u64);
    // most(position) = floor(v / p), v = (n - position + slack)(p + q) - strict,
    // kept as quotient and remainder while v falls by p + q a position.
    // A text of grams has n >= 1, so a `most` worn down to 0 ends the run.
    let v = ((n as u64 + slack as u64) * (p + q)).saturating_sub(bar.strict as u64);
    // With p = 0 every row reaches every position (`most` stays at the top).
    let (mut most, mut rest) = (
        v.checked_div(p).unwrap_or(u64::MAX),
        v.checked_rem(p).unwrap_or(0),
    );
    let (step, step_rest) = (
        (p + q).checked_div(p).unwrap_or(0),
        (p + q).checked_rem(p).unwrap_or(0),
    );
    (0..len).map_while(move |_| {
        let largest = most.checked_sub(n as u64)?.min(u32::MAX as u64) as u32;
        if rest >= step_rest {
            rest -= step_rest;
            most = most.saturating_sub(step);
        } else {
            rest += p - step_rest;
            most = most.saturating_sub(step + 1);
        }
        Some(largest)
    })
}

/// One entry of a gram's list: a text and the largest row size whose prefix
/// of the text holds the gram.
trait Entry: Copy + Send + Sync {
    /// `largest` capped at `cap`: exact for rows of at most `cap` grams.
    fn new(text: u32, largest: u32, cap: u32) -> Self;
    fn text(self) -> usize;
    fn largest(self) -> u32;
}

impl Entry for (u16, u16) {
    fn new(text: u32, largest: u32, cap: u32) -> Self {
        (text as u16, largest.min(cap) as u16)
    }
    fn text(self) -> usize {
        self.0 as usize
    }
    fn largest(self) -> u32 {
        self.1 as u32
    }
}

impl Entry for (u32, u32) {
    fn new(text: u32, largest: u32, _cap: u32) -> Self {
        (text, largest)
    }
    fn text(self) -> usize {
        self.0 as usize
    }
    fn largest(self) -> u32 {
        self.1
    }
}

/// The lists' entries: test sets of at most 2^16 texts keep them in half
/// the memory, which a row's probe reads faster; the largest row sizes are
/// then capped at `rows`, and a row of more grams is counted from the
/// definition instead.
enum Lists {
    Compact { entries: Vec<(u16, u16)>, rows: u32 },
    Wide(Vec<(u32, u32)>),
}

/// The cap of compact entries' row sizes.
const COMPACT_ROWS: u32 = u16::MAX as u32;

/// The entries of every text's `reach` (the largest row size of each prefix
/// position) in its gram's list, each list sorted largest row first.
fn fill_lists<E: Entry>(
    offsets: &[u32],
    order: &GramOrder,
    reach: &[Vec<u32>],
    cap: u32,
) -> Vec<E> {
    let mut fill = offsets.to_vec();
    let mut entries =
        vec![E::new(0, 0, cap); *offsets.last().expect("one offset at least") as usize];
    for (t, reach) in reach.iter().enumerate() {
        for (&g, &s) in order.of(t).iter().zip(reach) {
            entries[fill[g as usize] as usize] = E::new(t as u32, s, cap);
            fill[g as usize] += 1;
        }
    }
    sort_lists(offsets, &mut entries);
    entries
}

/// Sort each list of `entries` (delimited by `offsets`) by largest row
/// first, the lists cut into a few runs sorted in parallel.
fn sort_lists<E: Entry>(offsets: &[u32], entries: &mut [E]) {
    let parts = 4 * rayon::current_num_threads();
    let total = entries.len();
    let mut runs = Vec::with_capacity(parts);
    let (mut rest, mut first_gram, mut first_entry) = (entries, 0usize, 0usize);
    for k in 1..=parts {
        let end_gram = if k == parts {
            offsets.len() - 1
        } else {
            offsets
                .partition_point(|&o| (o as usize) < total * k / parts)
                .max(first_gram)
        };
        let end_entry = offsets[end_gram] as usize;
        let (run, tail) = rest.split_at_mut(end_entry - first_entry);
        runs.push((run, first_gram..end_gram, first_entry));
        (rest, first_gram, first_entry) = (tail, end_gram, end_entry);
    }
    runs.into_par_iter().for_each(|(run, grams, base)| {
        for g in grams {
            let list = offsets[g] as usize - base..offsets[g + 1] as usize - base;
            run[list].sort_unstable_by_key(|&e| (std::cmp::Reverse(e.largest()), e.text()));
        }
    });
}

/// Test texts indexed by the prefix grams a row must share to pass each
/// text's bar. A row's count for a text is then exactly the number of the
/// text's prefix grams (for the row's size) it holds; the text's other
/// grams (`rest`) complete an exact overlap.
pub(crate) struct PrefixIndex {
    /// Per gram: (text, largest row size reaching it), largest first.
    offsets: Vec<u32>,
    lists: Lists,
    /// Each text's grams in prefix order, its size and its bar.
    order: Arc<GramOrder>,
    texts: Vec<(u32, Bar)>,
    /// Per text: the fewest prefix grams that any row passing it shares.
    least_count: Vec<u32>,
    slack: u32,
}

/// Each text's grams, rarest first by the document frequencies of when it
/// was made. Any order of a text's grams gives a valid prefix (a passing row
/// shares more than `slack` of any `n - alpha + 1 + slack` of them); rarest
/// first gives short lists, and an order made from older frequencies serves
/// nearly as well, so one order serves many blocks.
#[derive(Debug)]
pub(crate) struct GramOrder {
    offsets: Vec<u32>,
    grams: Vec<u32>,
}

impl GramOrder {
    pub(crate) fn new(texts: &[Text], df: &[u32]) -> GramOrder {
        let per_text: Vec<Vec<u32>> = texts
            .par_iter()
            .map(|t| {
                let mut keyed: Vec<u64> = t
                    .ids
                    .iter()
                    .map(|&g| ((df[g as usize] as u64) << 32) | g as u64)
                    .collect();
                keyed.sort_unstable();
                keyed.into_iter().map(|k| k as u32).collect()
            })
            .collect();
        let mut offsets = vec![0u32];
        let mut grams = Vec::with_capacity(per_text.iter().map(Vec::len).sum());
        for text in &per_text {
            grams.extend_from_slice(text);
            offsets.push(grams.len() as u32);
        }
        GramOrder { offsets, grams }
    }

    fn of(&self, t: usize) -> &[u32] {
        &self.grams[self.offsets[t] as usize..self.offsets[t + 1] as usize]
    }
}

impl PrefixIndex {
    /// Index `texts` (ids below `vocab_len`, their grams in `order`) for rows
    /// that must pass `bars`, each prefix `slack` grams longer than the
    /// shortest.
    pub(crate) fn build(
        vocab_len: usize,
        texts: &[Text],
        order: Arc<GramOrder>,
        bars: &[Bar],
        slack: u32,
    ) -> PrefixIndex {
        let compact = (texts.len() <= 1 << 16).then_some(COMPACT_ROWS);
        PrefixIndex::build_lists(vocab_len, texts, order, bars, slack, compact)
    }

    /// [`PrefixIndex::build`], with compact lists capped at `compact` rows
    /// or wide lists.
    fn build_lists(
        vocab_len: usize,
        texts: &[Text],
        order: Arc<GramOrder>,
        bars: &[Bar],
        slack: u32,
        compact: Option<u32>,
    ) -> PrefixIndex {
        // The largest row reaching each prefix position of each text: the
        // texts are independent, so done in parallel.
        let reach: Vec<Vec<u32>> = (0..texts.len())
            .into_par_iter()
            .map(|t| largest_rows(bars[t], texts[t].size, slack, order.of(t).len()).collect())
            .collect();
        let mut offsets = vec![0u32; vocab_len + 1];
        for (t, reach) in reach.iter().enumerate() {
            for &g in &order.of(t)[..reach.len()] {
                offsets[g as usize + 1] += 1;
            }
        }
        for g in 0..vocab_len {
            offsets[g + 1] += offsets[g];
        }
        let lists = match compact {
            Some(rows) => Lists::Compact {
                entries: fill_lists(&offsets, &order, &reach, rows),
                rows,
            },
            None => Lists::Wide(fill_lists(&offsets, &order, &reach, u32::MAX)),
        };
        PrefixIndex {
            offsets,
            lists,
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

    /// The expected nanoseconds (on one core) of probing training texts of
    /// which `df[g]` held gram `g`: each reads at most the whole list of
    /// each of its grams, and an entry a row may read costs 0.6 ns, its
    /// count and its share of the checks of the texts reached (measured on
    /// 2,000 test texts, far and near).
    pub(crate) fn expected_ns(&self, df: &[u32]) -> f64 {
        let entries: u64 = df
            .iter()
            .zip(self.offsets.windows(2))
            .map(|(&d, list)| d as u64 * (list[1] - list[0]) as u64)
            .sum();
        0.6 * entries as f64
    }

    /// The length of text `t`'s prefix for rows of `row_size` grams.
    fn prefix_len(&self, t: usize, row_size: u32) -> usize {
        let (n, bar) = self.texts[t];
        let keep = (n + 1 + self.slack).saturating_sub(min_overlap(bar, n, row_size)) as usize;
        keep.min(self.order.of(t).len())
    }

    /// The grams of text `t` outside its prefix for rows of `row_size` grams.
    pub(crate) fn rest(&self, t: usize, row_size: u32) -> &[u32] {
        &self.order.of(t)[self.prefix_len(t, row_size)..]
    }

    /// Count, for every text, the grams of `row` (of `row_size` grams in all)
    /// in the text's prefix for that size.
    pub(crate) fn probe(&self, row: &[u32], row_size: u32, counts: &mut [u32]) {
        match &self.lists {
            Lists::Compact { entries, rows } if row_size <= *rows => {
                self.probe_lists(entries, row, row_size, counts)
            }
            Lists::Compact { .. } => self.probe_by_definition(row, row_size, counts),
            Lists::Wide(entries) => self.probe_lists(entries, row, row_size, counts),
        }
    }

    /// [`PrefixIndex::probe`] from each text's prefix, for rows too large
    /// for the compact lists' capped sizes (some 20,000 characters or more).
    fn probe_by_definition(&self, row: &[u32], row_size: u32, counts: &mut [u32]) {
        let held: rustc_hash::FxHashSet<u32> = row.iter().copied().collect();
        for (t, count) in counts.iter_mut().enumerate() {
            let prefix = &self.order.of(t)[..self.prefix_len(t, row_size)];
            *count += prefix.iter().filter(|g| held.contains(g)).count() as u32;
        }
    }

    fn probe_lists<E: Entry>(&self, entries: &[E], row: &[u32], row_size: u32, counts: &mut [u32]) {
        for (j, &g) in row.iter().enumerate() {
            // The list a few grams ahead is fetched while this one is read,
            // and where the list twice as far ahead starts.
            if let Some(&ahead) = row.get(j + 2 * AHEAD) {
                prefetch(&self.offsets, ahead as usize);
            }
            if let Some(&ahead) = row.get(j + AHEAD) {
                prefetch(entries, self.offsets[ahead as usize] as usize);
            }
            let list =
                &entries[self.offsets[g as usize] as usize..self.offsets[g as usize + 1] as usize];
            // Largest first: when the last of a chunk reaches the row, all do.
            let mut chunks = list.chunks_exact(8);
            let mut last = None;
            for chunk in &mut chunks {
                if chunk[7].largest() < row_size {
                    last = Some(chunk);
                    break;
                }
                for e in chunk {
                    counts[e.text()] += 1;
                }
            }
            for e in last.unwrap_or(chunks.remainder()) {
                if e.largest() < row_size {
                    break;
                }
                counts[e.text()] += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jaccard::Score;
    use proptest::collection::{btree_set, vec};
    use proptest::prelude::*;

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
    fn largest_rows_steps_exactly() {
        for (bar, slack) in bars().into_iter().flat_map(|b| [(b, 0), (b, 3), (b, 32)]) {
            for n in 1..std::hint::black_box(60u32) {
                let want: Vec<u32> = (0..n)
                    .map_while(|position| largest_row(bar, n, position, slack))
                    .collect();
                let got: Vec<u32> = largest_rows(bar, n, slack, n as usize).collect();
                assert_eq!(got, want, "{bar:?} {n} {slack}");
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        /// Whatever the document frequencies that ordered the texts (stale
        /// ones included) and whatever the lists (compact, rows above their
        /// cap counted from the definition, or wide), a row's prefix count
        /// plus its share of the rest is the exact overlap, and every text
        /// the row passes is reached.
        #[test]
        fn any_gram_order_counts_exactly_and_reaches_every_pass(
            texts in vec(btree_set(0u32..16, 1..14), 1..6),
            row in btree_set(0u32..16, 0..16),
            outside in 0u32..4,
            df in vec(0u32..50, 16),
            bars in vec((0u32..6, 1u32..6, any::<bool>()), 6),
            slack in 0u32..4,
            compact in proptest::option::of(0u32..24),
        ) {
            let texts: Vec<Text> = texts
                .into_iter()
                .map(|ids| Text { size: ids.len() as u32, ids: ids.into_iter().collect() })
                .collect();
            let bars: Vec<Bar> = bars[..texts.len()]
                .iter()
                .map(|&(o, extra, strict)| {
                    let score = Score::jaccard(o, o + extra, o + extra);
                    if strict { Bar::above(score) } else { Bar::at_least(score) }
                })
                .collect();
            let order = Arc::new(GramOrder::new(&texts, &df));
            let index = PrefixIndex::build_lists(16, &texts, order, &bars, slack, compact);
            let row: Vec<u32> = row.into_iter().collect();
            let row_size = row.len() as u32 + outside;
            let mut counts = vec![0; texts.len()];
            index.probe(&row, row_size, &mut counts);
            let mut reached = Vec::new();
            index.reached(&counts, &mut reached);
            for (t, text) in texts.iter().enumerate() {
                let shared = text.ids.iter().filter(|g| row.contains(g)).count() as u32;
                let in_rest = index.rest(t, row_size).iter().filter(|g| row.contains(g)).count();
                prop_assert_eq!(counts[t] + in_rest as u32, shared);
                let passes = shared > 0 && bars[t].admits(Score::jaccard(shared, text.size, row_size));
                if passes {
                    prop_assert!(reached.contains(&(t as u32, counts[t])));
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
        let order = Arc::new(GramOrder::new(&texts, &df));
        let bars = [Bar::at_least(half), Bar::OPEN];
        let index = PrefixIndex::build(4, &texts, Arc::clone(&order), &bars, 0);
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
        let index = PrefixIndex::build(4, &texts, order, &bars, 1);
        assert_eq!(index.rest(0, 4), &[0]);
        let mut reached = Vec::new();
        index.reached(&[1, 1], &mut reached);
        assert_eq!(reached, vec![(1, 1)]);
        index.reached(&[2, 0], &mut reached);
        assert_eq!(reached, vec![(0, 2)]);
    }
}
