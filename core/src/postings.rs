//! A block of training rows as flat integer arrays (CSR).
//!
//! Rows are renumbered by (set size, row): internal id `i` has the `i`-th
//! smallest gram set, so the rows within a size window are one contiguous id
//! range, and every posting list (sorted by internal id) can be cut to that
//! window by binary search.

use crate::storage::Array;

/// The gram ids of one text in some vocabulary, and the size of its full gram
/// set (grams missing from the vocabulary count towards the size only).
#[derive(Debug, Clone, Default)]
pub struct Query {
    pub size: u32,
    pub grams: Vec<u32>,
}

#[derive(Debug, Clone, Default)]
pub struct Postings {
    /// The global index of local row 0.
    pub row_base: u64,
    /// Gram-set size by internal id (non-decreasing).
    pub(crate) sizes: Array<u32>,
    /// Local row by internal id.
    pub(crate) local_of: Array<u32>,
    /// Internal id by local row.
    pub(crate) internal_of: Array<u32>,
    /// Start of each gram's posting list (one more entry than the vocabulary).
    pub(crate) offsets: Array<u64>,
    /// Internal ids, sorted within each list.
    pub(crate) postings: Array<u32>,
}

impl Postings {
    /// Build from the rows of a block (`rows[i]` is local row `i`).
    pub fn build(rows: &[Query], vocab_len: usize, row_base: u64) -> Postings {
        let mut local_of: Vec<u32> = (0..rows.len() as u32).collect();
        local_of.sort_by_key(|&r| (rows[r as usize].size, r));
        let mut internal_of = vec![0u32; rows.len()];
        for (internal, &local) in local_of.iter().enumerate() {
            internal_of[local as usize] = internal as u32;
        }
        let sizes: Vec<u32> = local_of.iter().map(|&r| rows[r as usize].size).collect();
        let mut offsets = vec![0u64; vocab_len + 1];
        for row in rows {
            for &g in &row.grams {
                offsets[g as usize + 1] += 1;
            }
        }
        for g in 0..vocab_len {
            offsets[g + 1] += offsets[g];
        }
        let mut fill: Vec<u64> = offsets[..vocab_len].to_vec();
        let mut postings = vec![0u32; offsets[vocab_len] as usize];
        for (internal, &local) in local_of.iter().enumerate() {
            for &g in &rows[local as usize].grams {
                postings[fill[g as usize] as usize] = internal as u32;
                fill[g as usize] += 1;
            }
        }
        Postings {
            row_base,
            sizes: Array::from(sizes),
            local_of: Array::from(local_of),
            internal_of: Array::from(internal_of),
            offsets: Array::from(offsets),
            postings: Array::from(postings),
        }
    }

    pub fn rows(&self) -> usize {
        self.sizes.len()
    }

    pub fn df(&self, gram: u32) -> usize {
        let g = gram as usize;
        (self.offsets[g + 1] - self.offsets[g]) as usize
    }

    pub fn list(&self, gram: u32) -> &[u32] {
        let g = gram as usize;
        &self.postings[self.offsets[g] as usize..self.offsets[g + 1] as usize]
    }

    pub fn size(&self, internal: u32) -> u32 {
        self.sizes[internal as usize]
    }

    /// The global row index of an internal id.
    pub fn row_of(&self, internal: u32) -> u64 {
        self.row_base + self.local_of[internal as usize] as u64
    }

    /// The internal id of a global row index inside this block.
    pub fn internal_of_row(&self, row: u64) -> u32 {
        self.internal_of[(row - self.row_base) as usize]
    }

    /// Internal ids `[lo, hi)` of the rows whose size lies in `[min, max]`.
    pub fn size_range(&self, min: u64, max: u64) -> (usize, usize) {
        let lo = self.sizes.partition_point(|&s| (s as u64) < min);
        let hi = self.sizes.partition_point(|&s| (s as u64) <= max);
        (lo, hi.max(lo))
    }

    /// Bytes held by the arrays.
    pub fn nbytes(&self) -> usize {
        self.sizes.nbytes()
            + self.local_of.nbytes()
            + self.internal_of.nbytes()
            + self.offsets.nbytes()
            + self.postings.nbytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_sorted_by_size_and_lists_sorted() {
        let rows = vec![
            Query {
                size: 3,
                grams: vec![0, 1],
            },
            Query {
                size: 1,
                grams: vec![1],
            },
            Query {
                size: 3,
                grams: vec![1, 2],
            },
        ];
        let p = Postings::build(&rows, 3, 10);
        assert_eq!(p.rows(), 3);
        assert_eq!(p.row_of(0), 11);
        assert_eq!(p.list(1), &[0, 1, 2]);
        assert_eq!(p.list(0), &[1]);
        assert_eq!(p.internal_of_row(12), 2);
        assert_eq!(p.size_range(2, 3), (1, 3));
    }
}
