//! The test side of the streaming strategy: test texts indexed by the
//! prefix of their gram sets that a training row must share to pass each
//! text's bar (the prefix filter of AllPairs, query side).

use crate::score::Bar;
use crate::streaming::Text;

/// Fewest grams a row must share with a text of `n` grams to pass `bar`:
/// J <= overlap / n.
fn min_overlap(bar: Bar, n: u32) -> u32 {
    let (p, q, n) = (bar.score.overlap as u64, bar.score.union as u64, n as u64);
    let alpha = if bar.strict {
        p * n / q + 1
    } else {
        (p * n).div_ceil(q)
    };
    alpha as u32
}

/// Test texts indexed by the prefix grams a row must share to pass each
/// text's bar. A row's count for a text is then exactly the number of the
/// text's prefix grams it holds; the text's other grams (`rest`) complete an
/// exact overlap.
pub(crate) struct PrefixIndex {
    offsets: Vec<u32>,
    texts: Vec<u32>,
    rest_offsets: Vec<u32>,
    rest: Vec<u32>,
}

impl PrefixIndex {
    pub(crate) fn build(vocab_len: usize, texts: &[Text], bars: &[Bar], df: &[u64]) -> PrefixIndex {
        let mut chosen: Vec<Vec<u32>> = Vec::with_capacity(texts.len());
        let mut rest_offsets = vec![0u32];
        let mut rest = Vec::new();
        for (t, bar) in texts.iter().zip(bars) {
            let alpha = min_overlap(*bar, t.size).max(1);
            let keep = (t.size + 1).saturating_sub(alpha).min(t.ids.len() as u32) as usize;
            let mut order = t.ids.clone();
            order.sort_unstable_by_key(|&g| (df[g as usize], g));
            rest.extend_from_slice(&order[keep..]);
            rest_offsets.push(rest.len() as u32);
            order.truncate(keep);
            chosen.push(order);
        }
        let mut offsets = vec![0u32; vocab_len + 1];
        for grams in &chosen {
            for &g in grams {
                offsets[g as usize + 1] += 1;
            }
        }
        for g in 0..vocab_len {
            offsets[g + 1] += offsets[g];
        }
        let mut fill = offsets.clone();
        let mut entries = vec![0u32; offsets[vocab_len] as usize];
        for (t, grams) in chosen.iter().enumerate() {
            for &g in grams {
                entries[fill[g as usize] as usize] = t as u32;
                fill[g as usize] += 1;
            }
        }
        PrefixIndex {
            offsets,
            texts: entries,
            rest_offsets,
            rest,
        }
    }

    /// The grams of text `t` outside its prefix.
    pub(crate) fn rest(&self, t: usize) -> &[u32] {
        &self.rest[self.rest_offsets[t] as usize..self.rest_offsets[t + 1] as usize]
    }

    fn list(&self, gram: u32) -> &[u32] {
        &self.texts[self.offsets[gram as usize] as usize..self.offsets[gram as usize + 1] as usize]
    }

    /// Count, for every text, the grams of `row` in the text's prefix.
    pub(crate) fn probe(&self, row: &[u32], counts: &mut [u32]) {
        for &g in row {
            for &t in self.list(g) {
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
        assert_eq!(min_overlap(Bar::at_least(half), 10), 5);
        assert_eq!(min_overlap(Bar::above(half), 10), 6);
        assert_eq!(min_overlap(Bar::OPEN, 10), 0);
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
        // Text 0 must share 2 of 4 grams: its 3 rarest (1, 3, 2) are indexed.
        let index = PrefixIndex::build(4, &texts, &[Bar::at_least(half), Bar::OPEN], &df);
        assert_eq!(index.rest(0), &[0]);
        assert!(index.rest(1).is_empty());
        let mut counts = vec![0; 2];
        index.probe(&[0, 3], &mut counts);
        assert_eq!(counts, vec![1, 1]);
    }
}
