//! A training index as named flat arrays (what an index file stores), and the
//! checks that make arrays read back from disk trustworthy before any search:
//! a checksum per array, and every structural invariant the search relies on.
//! An array that fails is reported by name; nothing is searched.

use std::collections::HashMap;

use rayon::prelude::*;
use xxhash_rust::xxh3::xxh3_64;

use crate::error::{Error, Result};
use crate::grams::GramConfig;
use crate::index::{Side, TrainingIndex};
use crate::packed::PackedLists;
use crate::pool::pool;
use crate::postings::Postings;
use crate::storage::{Array, Keeper, Plain};

/// Bumped whenever the arrays or their meaning change.
pub const FORMAT_VERSION: u32 = 2;

const SIDES: [&str; 2] = ["source", "target"];

/// The arrays of one side and their element widths in bytes, in file order.
pub const SIDE_ARRAYS: [(&str, usize); 11] = [
    ("vocab", 16),
    ("sizes", 4),
    ("local_of", 4),
    ("internal_of", 4),
    ("offsets", 8),
    ("block_first", 4),
    ("block_start", 8),
    ("packed", 1),
    ("row_hash", 16),
    ("hash_keys", 16),
    ("hash_rows", 4),
];

/// Borrowed bytes of one array as read from a file, with the checksum stored
/// beside them; `keep` holds the bytes alive and unchanged.
pub struct RawArray {
    pub ptr: *const u8,
    pub len: usize,
    pub checksum: u64,
    pub keep: Keeper,
}

// SAFETY: the bytes are immutable while `keep` lives.
unsafe impl Send for RawArray {}

fn corrupt(part: &str, message: impl Into<String>) -> Error {
    Error::CorruptIndex {
        part: part.to_string(),
        message: message.into(),
    }
}

/// The checksum of an array's bytes (XXH3-64).
pub fn checksum(bytes: &[u8]) -> u64 {
    xxh3_64(bytes)
}

impl Side {
    /// The checks read every page; let the mapped ones go until a search needs them.
    fn release_resident(&self) {
        let p = &self.postings;
        self.vocab.release_resident();
        p.sizes.release_resident();
        p.local_of.release_resident();
        p.internal_of.release_resident();
        p.lists.offsets.release_resident();
        p.lists.block_first.release_resident();
        p.lists.block_start.release_resident();
        p.lists.packed.release_resident();
        self.row_hash.release_resident();
        self.hash_keys.release_resident();
        self.hash_rows.release_resident();
    }

    fn arrays(&self) -> [&[u8]; 11] {
        let p = &self.postings;
        [
            self.vocab.as_bytes(),
            p.sizes.as_bytes(),
            p.local_of.as_bytes(),
            p.internal_of.as_bytes(),
            p.lists.offsets.as_bytes(),
            p.lists.block_first.as_bytes(),
            p.lists.block_start.as_bytes(),
            p.lists.packed.as_bytes(),
            self.row_hash.as_bytes(),
            self.hash_keys.as_bytes(),
            self.hash_rows.as_bytes(),
        ]
    }
}

struct Loader {
    arrays: HashMap<String, RawArray>,
}

impl Loader {
    fn take<T: Plain>(&mut self, side: &str, name: &str) -> Result<Array<T>> {
        let full = format!("{side}.{name}");
        let raw = self
            .arrays
            .remove(&full)
            .ok_or_else(|| corrupt(&full, "missing from the index"))?;
        // SAFETY: the caller's keeper holds `len` readable bytes at `ptr`.
        let bytes = unsafe { std::slice::from_raw_parts(raw.ptr, raw.len) };
        if checksum(bytes) != raw.checksum {
            return Err(corrupt(&full, "checksum mismatch"));
        }
        // SAFETY: as above; the keeper moves into the array.
        unsafe { Array::borrowed(&full, raw.ptr, raw.len, raw.keep) }
            .map_err(|e| corrupt(&full, e.to_string()))
    }

    fn side(&mut self, side: &str) -> Result<Side> {
        Ok(Side {
            vocab: self.take(side, "vocab")?,
            postings: Postings {
                row_base: 0,
                sizes: self.take(side, "sizes")?,
                local_of: self.take(side, "local_of")?,
                internal_of: self.take(side, "internal_of")?,
                lists: PackedLists {
                    offsets: self.take(side, "offsets")?,
                    block_first: self.take(side, "block_first")?,
                    block_start: self.take(side, "block_start")?,
                    packed: self.take(side, "packed")?,
                },
            },
            row_hash: self.take(side, "row_hash")?,
            hash_keys: self.take(side, "hash_keys")?,
            hash_rows: self.take(side, "hash_rows")?,
        })
    }
}

fn ensure(ok: bool, side: &str, name: &str, message: &str) -> Result<()> {
    if ok {
        Ok(())
    } else {
        Err(corrupt(&format!("{side}.{name}"), message))
    }
}

fn strictly_increasing<T: PartialOrd + Sync>(values: &[T]) -> bool {
    values.par_windows(2).all(|w| w[0] < w[1])
}

fn non_decreasing<T: PartialOrd + Sync>(values: &[T]) -> bool {
    values.par_windows(2).all(|w| w[0] <= w[1])
}

/// Every invariant the search relies on; O(size of the index), in parallel.
fn check_side(name: &str, s: &Side, rows: usize) -> Result<()> {
    let p = &s.postings;
    let v = s.vocab.len();
    for (array, len) in [
        ("sizes", p.sizes.len()),
        ("local_of", p.local_of.len()),
        ("internal_of", p.internal_of.len()),
        ("row_hash", s.row_hash.len()),
        ("hash_keys", s.hash_keys.len()),
        ("hash_rows", s.hash_rows.len()),
    ] {
        ensure(
            len == rows,
            name,
            array,
            "length differs from the row count",
        )?;
    }
    ensure(
        p.lists.offsets.len() == v + 1,
        name,
        "offsets",
        "length is not vocabulary + 1",
    )?;
    ensure(
        strictly_increasing(&s.vocab),
        name,
        "vocab",
        "grams not strictly increasing",
    )?;
    if let Err(message) = p.lists.check_layout() {
        return Err(corrupt(&format!("{name}.packed"), message));
    }
    // Each thread decodes the lists of an equal share of the postings and
    // counts the postings of every row; the counts are then summed.
    let parts = rayon::current_num_threads().max(1);
    let total = p.lists.len();
    let cut = |k: usize| match k {
        k if k == parts => v,
        k => p.lists.offsets[..v].partition_point(|&o| o < total * k as u64 / parts as u64),
    };
    let counted: Vec<Option<Vec<u32>>> = (0..parts)
        .into_par_iter()
        .map(|k| {
            let mut counts = vec![0u32; rows];
            for g in cut(k)..cut(k + 1) {
                let mut previous: Option<u32> = None;
                let mut seen = 0;
                let mut ok = true;
                p.list(g as u32).for_each_below(u32::MAX, |r| {
                    ok &= previous.is_none_or(|q| q < r) && (r as usize) < rows;
                    previous = Some(r);
                    seen += 1;
                    if ok {
                        counts[r as usize] += 1;
                    }
                });
                if !ok || seen != p.df(g as u32) {
                    return None;
                }
            }
            Some(counts)
        })
        .collect();
    let lists_ok = counted.iter().all(Option::is_some);
    ensure(
        lists_ok,
        name,
        "packed",
        "a list is unsorted or names a row out of range",
    )?;
    ensure(non_decreasing(&p.sizes), name, "sizes", "not sorted")?;
    let permutation = p.local_of.par_iter().enumerate().all(|(internal, &local)| {
        (local as usize) < rows && p.internal_of[local as usize] as usize == internal
    });
    ensure(
        permutation,
        name,
        "local_of",
        "not the inverse of internal_of",
    )?;
    let counts: Vec<&Vec<u32>> = counted.iter().flatten().collect();
    let sizes_ok = p
        .sizes
        .par_iter()
        .enumerate()
        .all(|(r, &s)| counts.iter().map(|c| c[r] as u64).sum::<u64>() == s as u64);
    ensure(sizes_ok, name, "sizes", "differ from the postings per row")?;
    ensure(
        non_decreasing(&s.hash_keys),
        name,
        "hash_keys",
        "not sorted",
    )?;
    let mut seen = vec![false; rows];
    for (&row, &key) in s.hash_rows.iter().zip(s.hash_keys.iter()) {
        let r = row as usize;
        ensure(
            r < rows && !seen[r],
            name,
            "hash_rows",
            "not a permutation of the rows",
        )?;
        seen[r] = true;
        ensure(
            s.row_hash[r] == key,
            name,
            "hash_keys",
            "disagree with row_hash",
        )?;
    }
    Ok(())
}

impl TrainingIndex {
    /// Every array as `(name, element width, bytes)`, in file order.
    pub fn arrays(&self) -> Vec<(String, usize, &[u8])> {
        let mut out = Vec::new();
        for (side, s) in SIDES.iter().zip([&self.source, &self.target]) {
            for ((name, width), bytes) in SIDE_ARRAYS.iter().zip(s.arrays()) {
                out.push((format!("{side}.{name}"), *width, bytes));
            }
        }
        out
    }

    /// An index over borrowed arrays (every name of [`TrainingIndex::arrays`]),
    /// trusted only once every checksum and invariant holds.
    pub fn from_arrays(
        config: GramConfig,
        rows: usize,
        arrays: HashMap<String, RawArray>,
        threads: usize,
    ) -> Result<TrainingIndex> {
        let pool = pool(threads)?;
        let mut loader = Loader { arrays };
        let source = loader.side("source")?;
        let target = loader.side("target")?;
        if let Some(extra) = loader.arrays.keys().next() {
            return Err(corrupt(extra, "not an array of this index format"));
        }
        pool.install(|| {
            check_side("source", &source, rows)?;
            check_side("target", &target, rows)
        })?;
        for side in [&source, &target] {
            side.release_resident();
        }
        Ok(TrainingIndex {
            config,
            source,
            target,
            pool,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::normalize::Normalization;
    use std::sync::Arc;

    fn config() -> GramConfig {
        GramConfig::new(&[3, 4, 5], Normalization::default()).unwrap()
    }

    fn built() -> TrainingIndex {
        let src = [
            "the small house",
            "a tree by the river",
            "the small house",
            "x",
        ];
        let tgt = ["das kleine Haus", "ein Baum am Fluss", "das Haus", "y"];
        TrainingIndex::build(config(), &src, &tgt, 1, &|| false).unwrap()
    }

    /// Copies of the arrays in 16-byte aligned memory, as a file mapping gives.
    fn copies(index: &TrainingIndex) -> Vec<(String, Vec<u128>, usize, u64)> {
        index
            .arrays()
            .into_iter()
            .map(|(name, _, bytes)| {
                let mut store = vec![0u128; bytes.len().div_ceil(16)];
                let raw = store.as_mut_ptr() as *mut u8;
                unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), raw, bytes.len()) };
                (name, store, bytes.len(), checksum(bytes))
            })
            .collect()
    }

    fn reload(parts: Vec<(String, Vec<u128>, usize, u64)>) -> Result<TrainingIndex> {
        let arrays = parts
            .into_iter()
            .map(|(name, store, len, checksum)| {
                let keep = Arc::new(store);
                let raw = RawArray {
                    ptr: keep.as_ptr() as *const u8,
                    len,
                    checksum,
                    keep,
                };
                (name, raw)
            })
            .collect();
        TrainingIndex::from_arrays(config(), 4, arrays, 1)
    }

    fn exposures(index: &TrainingIndex) -> String {
        let found = index
            .expose(
                &["the small houses", "a tree"],
                &[vec!["das kleine Haus"], vec!["ein Baum"]],
                2,
                &|| false,
            )
            .unwrap();
        format!("{found:?}")
    }

    #[test]
    fn reloaded_arrays_answer_the_same() {
        let index = built();
        let again = reload(copies(&index)).unwrap();
        assert!(again.source.postings.lists.packed.is_borrowed());
        assert_eq!(exposures(&index), exposures(&again));
        assert_eq!(index.nbytes(), again.nbytes());
    }

    #[test]
    fn a_changed_byte_fails_its_checksum() {
        let mut parts = copies(&built());
        let packed = parts.iter_mut().find(|p| p.0 == "target.packed").unwrap();
        packed.1[0] ^= 1;
        let err = reload(parts).unwrap_err();
        assert_eq!(
            err.to_string(),
            "index array target.packed: checksum mismatch"
        );
    }

    fn tampered(name: &str, change: impl Fn(&mut [u8])) -> String {
        let mut parts = copies(&built());
        let part = parts.iter_mut().find(|p| p.0 == name).unwrap();
        let len = part.2;
        let bytes = unsafe { std::slice::from_raw_parts_mut(part.1.as_mut_ptr() as *mut u8, len) };
        change(bytes);
        part.3 = checksum(bytes); // a consistent checksum: only the invariants can tell
        reload(parts).unwrap_err().to_string()
    }

    #[test]
    fn broken_invariants_are_named() {
        let swap_first_two_u32 = |b: &mut [u8]| {
            let (x, y) = (b[0..4].to_vec(), b[4..8].to_vec());
            b[0..4].copy_from_slice(&y);
            b[4..8].copy_from_slice(&x);
        };
        assert!(
            tampered("source.vocab", |b| b[0..16].copy_from_slice(&[0xff; 16])).contains("vocab")
        );
        assert!(tampered("source.block_first", |b| b[0..4]
            .copy_from_slice(&[0xff; 4]))
        .contains("source.packed: a list is unsorted"));
        assert!(tampered("target.block_start", |b| b[8..16]
            .copy_from_slice(&[0xff; 8]))
        .contains("target.packed: a block's bytes"));
        assert!(tampered("target.local_of", swap_first_two_u32).contains("local_of"));
        assert!(
            tampered("source.offsets", |b| b[8..16].copy_from_slice(&[0xff; 8]))
                .contains("offsets")
        );
        let duplicate_first_row = |b: &mut [u8]| {
            let second = b[4..8].to_vec();
            b[0..4].copy_from_slice(&second);
        };
        assert!(tampered("target.hash_rows", duplicate_first_row).contains("target.hash_"));
    }

    #[test]
    fn missing_and_unknown_arrays_are_refused() {
        let mut parts = copies(&built());
        parts.retain(|p| p.0 != "source.sizes");
        assert!(reload(parts)
            .unwrap_err()
            .to_string()
            .contains("source.sizes: missing"));
        let mut parts = copies(&built());
        let extra = parts[0].clone();
        parts.push(("source.extra".into(), extra.1, extra.2, extra.3));
        assert!(reload(parts)
            .unwrap_err()
            .to_string()
            .contains("source.extra"));
    }

    #[test]
    fn truncated_arrays_are_refused() {
        let mut parts = copies(&built());
        let vocab = parts.iter_mut().find(|p| p.0 == "source.vocab").unwrap();
        vocab.2 -= 3;
        let bytes = unsafe { std::slice::from_raw_parts(vocab.1.as_ptr() as *const u8, vocab.2) };
        vocab.3 = checksum(bytes);
        assert!(reload(parts)
            .unwrap_err()
            .to_string()
            .contains("whole number"));
    }
}
