//! A block of training rows as flat integer arrays: bit-packed posting lists
//! ([`PackedLists`]) over the block's distinct texts, and the rows of each.
//!
//! Rows with the same text (common in multi-way parallel corpora, where one
//! sentence is paired with many translations) are indexed once. Texts are
//! numbered by (set size, first row): internal id `i` has the `i`-th smallest
//! gram set, so the texts within a size window are one contiguous id range,
//! and every posting list (sorted by internal id) can be cut to that window
//! by a seek. Each text's rows are listed in increasing order.

use rayon::prelude::*;

use super::packed::{encode_blocks, Cursor, EncodedBlocks, PackedLists, BLOCK};
use super::storage::Array;

/// The gram ids of one text in some vocabulary, and the size of its full gram
/// set (grams missing from the vocabulary count towards the size only).
#[derive(Debug, Clone, Default)]
pub struct Query {
    pub size: u32,
    pub grams: Vec<u32>,
}

/// Rows' gram ids, flat: row `r` holds `ids[starts[r]..starts[r + 1]]`,
/// sorted, and its set size is their number.
#[derive(Debug, Clone)]
pub struct Rows {
    pub starts: Vec<u64>,
    pub ids: Vec<u32>,
}

impl Default for Rows {
    fn default() -> Rows {
        Rows::new()
    }
}

impl Rows {
    pub fn new() -> Rows {
        Rows {
            starts: vec![0],
            ids: Vec::new(),
        }
    }

    /// Append a row (its ids in any order).
    pub fn push(&mut self, ids: impl IntoIterator<Item = u32>) {
        let from = self.ids.len();
        self.ids.extend(ids);
        self.ids[from..].sort_unstable();
        self.starts.push(self.ids.len() as u64);
    }

    pub fn len(&self) -> usize {
        self.starts.len() - 1
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn row(&self, r: usize) -> &[u32] {
        &self.ids[self.starts[r] as usize..self.starts[r + 1] as usize]
    }

    /// Drop the ids from `cut` on from every row, and the memory they held.
    pub fn keep_below(&mut self, cut: u32) {
        let mut kept = 0;
        for r in 0..self.len() {
            let (a, b) = (self.starts[r] as usize, self.starts[r + 1] as usize);
            let n = self.ids[a..b].partition_point(|&g| g < cut);
            self.ids.copy_within(a..a + n, kept);
            self.starts[r] = kept as u64;
            kept += n;
        }
        let rows = self.len();
        self.starts[rows] = kept as u64;
        self.ids.truncate(kept);
        self.ids.shrink_to_fit();
    }

    /// Rename every id through `map`, keeping each row sorted.
    pub fn renumber(&mut self, map: &[u32]) {
        let mut slices: Vec<&mut [u32]> = Vec::with_capacity(self.len());
        let mut rest = self.ids.as_mut_slice();
        for w in self.starts.windows(2) {
            let (row, tail) = rest.split_at_mut((w[1] - w[0]) as usize);
            slices.push(row);
            rest = tail;
        }
        slices.par_iter_mut().for_each(|row| {
            for g in row.iter_mut() {
                *g = map[*g as usize];
            }
            row.sort_unstable();
        });
    }
}

/// Positions filled and encoded at a time: the working memory of a build is
/// this many `u32` per thread.
const FILL_POSITIONS: usize = BLOCK << 17;

#[derive(Debug, Clone, Default)]
pub struct Postings {
    /// The global index of local row 0.
    pub row_base: u64,
    /// Gram-set size by internal id (non-decreasing).
    pub(crate) sizes: Array<u32>,
    /// Internal id of each local row's text.
    pub(crate) internal_of: Array<u32>,
    /// The local rows of each text, in internal order, each text's
    /// increasing: text `i` has rows `text_rows[text_start[i]..text_start[i + 1]]`.
    pub(crate) text_start: Array<u32>,
    pub(crate) text_rows: Array<u32>,
    /// Internal ids by gram, sorted within each list.
    pub(crate) lists: PackedLists,
}

impl Postings {
    /// Build from the distinct texts of a block, numbered in the order of
    /// their first rows, and the text of each local row (row `i` is local row
    /// `i`), over a vocabulary of `vocab_len` grams. The lists are filled and
    /// packed a run of positions at a time, so no unpacked copy of them is
    /// ever whole, and the texts are let go before the runs are joined.
    pub fn build(texts: Rows, text_of_row: &[u32], vocab_len: usize, row_base: u64) -> Postings {
        Postings::build_in_runs(texts, text_of_row, vocab_len, row_base, FILL_POSITIONS)
    }

    /// [`Postings::build`] with runs of `run_positions` (a multiple of [`BLOCK`]).
    fn build_in_runs(
        texts: Rows,
        text_of_row: &[u32],
        vocab_len: usize,
        row_base: u64,
        run_positions: usize,
    ) -> Postings {
        let size = |t: usize| (texts.starts[t + 1] - texts.starts[t]) as u32;
        let mut local_of: Vec<u32> = (0..texts.len() as u32).collect();
        local_of.par_sort_unstable_by_key(|&t| (size(t as usize), t));
        let mut internal_of_text = vec![0u32; texts.len()];
        for (internal, &local) in local_of.iter().enumerate() {
            internal_of_text[local as usize] = internal as u32;
        }
        let sizes: Vec<u32> = local_of.iter().map(|&t| size(t as usize)).collect();
        let internal_of: Vec<u32> = text_of_row
            .iter()
            .map(|&t| internal_of_text[t as usize])
            .collect();
        drop(internal_of_text);
        // Rows grouped by text, a counting sort that keeps rows in order.
        let mut text_start = vec![0u32; texts.len() + 1];
        for &i in &internal_of {
            text_start[i as usize + 1] += 1;
        }
        for i in 0..texts.len() {
            text_start[i + 1] += text_start[i];
        }
        let mut next = text_start.clone();
        let mut text_rows = vec![0u32; internal_of.len()];
        for (row, &i) in internal_of.iter().enumerate() {
            text_rows[next[i as usize] as usize] = row as u32;
            next[i as usize] += 1;
        }
        drop(next);
        let mut offsets = vec![0u64; vocab_len + 1];
        for &g in &texts.ids {
            offsets[g as usize + 1] += 1;
        }
        for g in 0..vocab_len {
            offsets[g + 1] += offsets[g];
        }
        let total = offsets[vocab_len] as usize;
        // Runs are filled from the last backwards, as many at a time as there
        // are threads; the texts then drop the grams whose lists are done, so
        // the packed runs grow while the texts shrink.
        let mut texts = texts;
        let mut runs: Vec<EncodedBlocks> = Vec::new();
        let mut end = total.div_ceil(run_positions);
        while end > 0 {
            let start = end.saturating_sub(rayon::current_num_threads());
            let group: Vec<EncodedBlocks> = (start..end)
                .into_par_iter()
                .map(|run| {
                    let from = run * run_positions;
                    let to = total.min(from + run_positions);
                    let values = fill(&texts, &local_of, &offsets, from as u64, to as u64);
                    encode_blocks(&offsets, from as u64, &values)
                })
                .collect();
            runs.extend(group.into_iter().rev());
            let from = (start * run_positions) as u64;
            texts.keep_below(offsets.partition_point(|&o| o < from) as u32);
            end = start;
        }
        drop(texts);
        runs.reverse();
        Postings {
            row_base,
            sizes: Array::from(sizes),
            internal_of: Array::from(internal_of),
            text_start: Array::from(text_start),
            text_rows: Array::from(text_rows),
            lists: PackedLists::from_blocks(offsets, runs),
        }
    }

    /// Rows in the block.
    pub fn rows(&self) -> usize {
        self.internal_of.len()
    }

    /// Distinct texts in the block (internal ids).
    pub fn texts(&self) -> usize {
        self.sizes.len()
    }

    pub fn df(&self, gram: u32) -> usize {
        self.lists.df(gram)
    }

    /// A reader of one gram's list of internal ids.
    pub fn list(&self, gram: u32) -> Cursor<'_> {
        self.lists.cursor(gram)
    }

    pub fn size(&self, internal: u32) -> u32 {
        self.sizes[internal as usize]
    }

    /// The global row indices of a text, increasing.
    pub fn rows_of(&self, internal: u32) -> impl Iterator<Item = u64> + '_ {
        let i = internal as usize;
        let rows = &self.text_rows[self.text_start[i] as usize..self.text_start[i + 1] as usize];
        rows.iter().map(move |&r| self.row_base + r as u64)
    }

    /// The internal id of a global row index inside this block.
    pub fn internal_of_row(&self, row: u64) -> u32 {
        self.internal_of[(row - self.row_base) as usize]
    }

    /// Internal ids `[lo, hi)` of the texts whose size lies in `[min, max]`.
    pub fn size_range(&self, min: u64, max: u64) -> (usize, usize) {
        let lo = self.sizes.partition_point(|&s| (s as u64) < min);
        let hi = self.sizes.partition_point(|&s| (s as u64) <= max);
        (lo, hi.max(lo))
    }

    /// Bytes held by the arrays.
    pub fn nbytes(&self) -> usize {
        self.sizes.nbytes()
            + self.internal_of.nbytes()
            + self.text_start.nbytes()
            + self.text_rows.nbytes()
            + self.lists.nbytes()
    }
}

/// The values at positions `[from, to)` of the lists: internal ids, each list
/// in increasing order. Texts are visited in internal order (`local_of`) and
/// each gram's next free position counted from its list's start.
fn fill(texts: &Rows, local_of: &[u32], offsets: &[u64], from: u64, to: u64) -> Vec<u32> {
    // The grams whose lists meet [from, to).
    let g_lo = offsets[1..].partition_point(|&o| o <= from) as u32;
    let g_hi = (offsets.partition_point(|&o| o < to) as u32).min(offsets.len() as u32 - 1);
    let mut next: Vec<u64> = offsets[g_lo as usize..g_hi as usize].to_vec();
    let mut values = vec![0u32; (to - from) as usize];
    for (internal, &local) in local_of.iter().enumerate() {
        let text = texts.row(local as usize);
        let first = text.partition_point(|&g| g < g_lo);
        for &g in &text[first..] {
            if g >= g_hi {
                break;
            }
            let slot = &mut next[(g - g_lo) as usize];
            if (from..to).contains(slot) {
                values[(*slot - from) as usize] = internal as u32;
            }
            *slot += 1;
        }
    }
    values
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(p: &Postings, gram: u32) -> Vec<u32> {
        let mut out = Vec::new();
        p.list(gram).for_each_below(u32::MAX, |v| out.push(v));
        out
    }

    /// Each row its own text.
    fn one_text_per_row(texts: &Rows) -> Vec<u32> {
        (0..texts.len() as u32).collect()
    }

    fn rows_of(p: &Postings, internal: u32) -> Vec<u64> {
        p.rows_of(internal).collect()
    }

    #[test]
    fn texts_sorted_by_size_and_lists_sorted() {
        let mut texts = Rows::new();
        texts.push([1, 0, 3]);
        texts.push([1]);
        texts.push([2, 1]);
        let p = Postings::build(texts.clone(), &one_text_per_row(&texts), 4, 10);
        assert_eq!((p.rows(), p.texts()), (3, 3));
        assert_eq!(rows_of(&p, 0), vec![11]);
        assert_eq!(rows_of(&p, 1), vec![12]);
        assert_eq!(collect(&p, 1), vec![0, 1, 2]);
        assert_eq!(collect(&p, 0), vec![2]);
        assert_eq!(collect(&p, 2), vec![1]);
        assert_eq!(p.internal_of_row(12), 1);
        assert_eq!(p.size_range(2, 3), (1, 3));
    }

    #[test]
    fn rows_of_one_text_share_its_postings() {
        let mut texts = Rows::new();
        texts.push([1, 0, 3]);
        texts.push([1]);
        // Rows 0, 2, 5 have text 0; rows 1, 3, 4 text 1.
        let p = Postings::build(texts, &[0, 1, 0, 1, 1, 0], 4, 100);
        assert_eq!((p.rows(), p.texts()), (6, 2));
        assert_eq!(rows_of(&p, 0), vec![101, 103, 104]);
        assert_eq!(rows_of(&p, 1), vec![100, 102, 105]);
        assert_eq!(collect(&p, 1), vec![0, 1]);
        assert_eq!(collect(&p, 3), vec![1]);
        assert_eq!(p.internal_of_row(105), 1);
        assert_eq!((p.size(0), p.size(1)), (1, 3));
    }

    #[test]
    fn short_runs_pack_the_same_lists() {
        let mut rows = Rows::new();
        for r in 0..900u32 {
            rows.push((0..40).filter(|g| (r * 7 + g * 3) % (g % 5 + 2) == 0));
        }
        let each = one_text_per_row(&rows);
        let whole = Postings::build(rows.clone(), &each, 40, 0);
        for run in [BLOCK, 2 * BLOCK, 5 * BLOCK] {
            let cut = Postings::build_in_runs(rows.clone(), &each, 40, 0, run);
            assert_eq!(cut.lists.packed.as_bytes(), whole.lists.packed.as_bytes());
            assert_eq!(&cut.lists.block_first[..], &whole.lists.block_first[..]);
            assert_eq!(&cut.lists.block_start[..], &whole.lists.block_start[..]);
        }
    }

    #[test]
    fn keep_below_drops_the_higher_ids() {
        let mut rows = Rows::new();
        rows.push([5, 1, 9]);
        rows.push([7]);
        rows.push([0, 2]);
        rows.keep_below(6);
        assert_eq!(
            (rows.row(0), rows.row(1), rows.row(2)),
            (&[1, 5][..], &[][..], &[0, 2][..])
        );
    }

    #[test]
    fn fill_runs_cut_lists_anywhere() {
        // Lists longer than a run, cut at every kind of boundary.
        let mut rows = Rows::new();
        for r in 0..700u32 {
            rows.push((0..6).filter(|g| (r + g) % (g + 1) == 0));
        }
        let p = Postings::build(rows.clone(), &one_text_per_row(&rows), 6, 0);
        let whole = (0..6).map(|g| collect(&p, g)).collect::<Vec<_>>();
        // One row per text: the rows in text order are the texts' local ids.
        let local_of = &p.text_rows;
        for from in [0u64, 128, 256, 384] {
            for to in [from + 128, from + 256] {
                let values = fill(&rows, local_of, &p.lists.offsets, from, to);
                let concat: Vec<u32> = whole.concat();
                let end = (to as usize).min(concat.len());
                assert_eq!(values[..end - from as usize], concat[from as usize..end]);
            }
        }
    }
}
