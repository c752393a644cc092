//! A training index as named flat arrays (what an index file stores), and the
//! checks that make arrays read back from disk trustworthy before any search:
//! a checksum per array (the bytes are those written), the structure every
//! read of the search relies on (on every open), and the posting lists decoded
//! whole (before writing, and on a full verification). An array that fails is
//! reported by name; nothing is searched.

use std::collections::HashMap;

use rayon::prelude::*;
use xxhash_rust::xxh3::xxh3_64;

use crate::error::{Error, Result};
use crate::grams::GramConfig;
use crate::pool::pool;

use super::packed::PackedLists;
use super::postings::Postings;
use super::storage::{Array, Keeper, Plain};
use super::training_index::{Side, TrainingIndex};

/// Bumped whenever the arrays or their meaning change.
pub const FORMAT_VERSION: u32 = 4;

const SIDES: [&str; 2] = ["source", "target"];

/// The arrays of one side and their element widths in bytes, in file order.
pub const SIDE_ARRAYS: [(&str, usize); 11] = [
    ("vocab", 16),
    ("sizes", 4),
    ("internal_of", 4),
    ("text_start", 4),
    ("text_rows", 4),
    ("offsets", 8),
    ("block_first", 4),
    ("block_start", 8),
    ("packed", 1),
    ("hash_keys", 16),
    ("hash_texts", 4),
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
// SAFETY: as above: shared references only read the bytes.
unsafe impl Sync for RawArray {}

impl RawArray {
    fn bytes(&self) -> &[u8] {
        // SAFETY: the caller's keeper holds `len` readable bytes at `ptr`.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

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
        p.internal_of.release_resident();
        p.text_start.release_resident();
        p.text_rows.release_resident();
        p.lists.offsets.release_resident();
        p.lists.block_first.release_resident();
        p.lists.block_start.release_resident();
        p.lists.packed.release_resident();
        self.hash_keys.release_resident();
        self.hash_texts.release_resident();
    }

    fn arrays(&self) -> [&[u8]; 11] {
        let p = &self.postings;
        [
            self.vocab.as_bytes(),
            p.sizes.as_bytes(),
            p.internal_of.as_bytes(),
            p.text_start.as_bytes(),
            p.text_rows.as_bytes(),
            p.lists.offsets.as_bytes(),
            p.lists.block_first.as_bytes(),
            p.lists.block_start.as_bytes(),
            p.lists.packed.as_bytes(),
            self.hash_keys.as_bytes(),
            self.hash_texts.as_bytes(),
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
        // SAFETY: `from_arrays` compared every checksum already; the caller's
        // keeper holds `len` readable bytes at `ptr` and moves into the array.
        unsafe { Array::borrowed(&full, raw.ptr, raw.len, raw.keep) }
            .map_err(|e| corrupt(&full, e.to_string()))
    }

    fn side(&mut self, side: &str) -> Result<Side> {
        Ok(Side {
            vocab: self.take(side, "vocab")?,
            postings: Postings {
                row_base: 0,
                sizes: self.take(side, "sizes")?,
                internal_of: self.take(side, "internal_of")?,
                text_start: self.take(side, "text_start")?,
                text_rows: self.take(side, "text_rows")?,
                lists: PackedLists {
                    offsets: self.take(side, "offsets")?,
                    block_first: self.take(side, "block_first")?,
                    block_start: self.take(side, "block_start")?,
                    packed: self.take(side, "packed")?,
                },
            },
            hash_keys: self.take(side, "hash_keys")?,
            hash_texts: self.take(side, "hash_texts")?,
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

/// The invariants that keep every read of the search in bounds and every map
/// between rows and texts exact: lengths, block layout, the sorted vocabulary
/// and sizes, the rows of each text, the hash tables. O(rows + vocabulary +
/// blocks), in parallel; checked on every open.
fn check_side(name: &str, s: &Side, rows: usize) -> Result<()> {
    let p = &s.postings;
    let v = s.vocab.len();
    let texts = p.sizes.len();
    for (array, len, expected, what) in [
        ("internal_of", p.internal_of.len(), rows, "the row count"),
        ("text_rows", p.text_rows.len(), rows, "the row count"),
        ("text_start", p.text_start.len(), texts + 1, "sizes + 1"),
        ("hash_keys", s.hash_keys.len(), texts, "sizes"),
        ("hash_texts", s.hash_texts.len(), texts, "sizes"),
        ("offsets", p.lists.offsets.len(), v + 1, "vocabulary + 1"),
    ] {
        ensure(
            len == expected,
            name,
            array,
            &format!("length differs from {what}"),
        )?;
    }
    ensure(
        strictly_increasing(&s.vocab),
        name,
        "vocab",
        "grams not strictly increasing",
    )?;
    if let Err(message) = p.lists.check_layout() {
        return Err(corrupt(&format!("{name}.packed"), message));
    }
    ensure(non_decreasing(&p.sizes), name, "sizes", "not sorted")?;
    // Every text has rows, in increasing order, each naming the text back:
    // then the groups are disjoint, and `rows` entries in all make them a
    // partition of the rows.
    let starts_ok = p.text_start[0] == 0
        && p.text_start[texts] as usize == rows
        && strictly_increasing(&p.text_start);
    ensure(
        starts_ok,
        name,
        "text_start",
        "not increasing from 0 to the row count",
    )?;
    let groups_ok = (0..texts).into_par_iter().all(|t| {
        let group = &p.text_rows[p.text_start[t] as usize..p.text_start[t + 1] as usize];
        group.windows(2).all(|w| w[0] < w[1])
            && group
                .iter()
                .all(|&r| (r as usize) < rows && p.internal_of[r as usize] as usize == t)
    });
    ensure(
        groups_ok,
        name,
        "text_rows",
        "not the rows of each text in increasing order",
    )?;
    ensure(
        non_decreasing(&s.hash_keys),
        name,
        "hash_keys",
        "not sorted",
    )?;
    let mut seen = vec![false; texts];
    for &t in s.hash_texts.iter() {
        let t = t as usize;
        ensure(
            t < texts && !seen[t],
            name,
            "hash_texts",
            "not a permutation of the texts",
        )?;
        seen[t] = true;
    }
    Ok(())
}

/// The invariants of the posting lists themselves, O(postings): every list
/// sorted, naming texts in range, as long as its offsets say, and each text in
/// as many lists as its set size. Run before an index is written and by a full
/// verification; the checksums then prove that the lists read back are those.
fn check_lists(name: &str, s: &Side) -> Result<()> {
    let p = &s.postings;
    let v = s.vocab.len();
    let texts = p.sizes.len();
    // Each thread decodes the lists of an equal share of the postings and
    // counts the postings of every text; the counts are then summed.
    let parts = rayon::current_num_threads().max(1);
    let total = p.lists.len();
    let cut = |k: usize| match k {
        k if k == parts => v,
        k => p.lists.offsets[..v].partition_point(|&o| o < total * k as u64 / parts as u64),
    };
    let counted: Vec<Option<Vec<u32>>> = (0..parts)
        .into_par_iter()
        .map(|k| {
            let mut counts = vec![0u32; texts];
            for g in cut(k)..cut(k + 1) {
                let mut previous: Option<u32> = None;
                let mut seen = 0;
                let mut ok = true;
                p.list(g as u32).for_each_below(u32::MAX, |t| {
                    ok &= previous.is_none_or(|q| q < t) && (t as usize) < texts;
                    previous = Some(t);
                    seen += 1;
                    if ok {
                        counts[t as usize] += 1;
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
        "a list is unsorted or names a text out of range",
    )?;
    let counts: Vec<&Vec<u32>> = counted.iter().flatten().collect();
    let sizes_ok = p
        .sizes
        .par_iter()
        .enumerate()
        .all(|(t, &s)| counts.iter().map(|c| c[t] as u64).sum::<u64>() == s as u64);
    ensure(sizes_ok, name, "sizes", "differ from the postings per text")?;
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

    /// The invariants of the posting lists of both sides ([`check_lists`]).
    pub fn check_lists(&self) -> Result<()> {
        self.pool.install(|| {
            check_lists("source", &self.source)?;
            check_lists("target", &self.target)
        })
    }

    /// An index over borrowed arrays (every name of [`TrainingIndex::arrays`]),
    /// trusted once every checksum holds (the bytes are those written, whose
    /// lists were checked before writing) and the structure they are read by
    /// holds ([`check_side`]); `full` also decodes every list ([`check_lists`]).
    pub fn from_arrays(
        config: GramConfig,
        rows: usize,
        arrays: HashMap<String, RawArray>,
        threads: usize,
        full: bool,
    ) -> Result<TrainingIndex> {
        let pool = pool(threads)?;
        // Every checksum first, the arrays hashed side by side (the first
        // mismatch by name is reported).
        let mut named: Vec<(&String, &RawArray)> = arrays.iter().collect();
        named.sort_by_key(|(name, _)| name.as_str());
        let mismatch = pool.install(|| {
            named.par_iter().find_map_first(|(name, raw)| {
                (checksum(raw.bytes()) != raw.checksum).then_some(*name)
            })
        });
        if let Some(name) = mismatch {
            return Err(corrupt(name, "checksum mismatch"));
        }
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
        let index = TrainingIndex {
            config,
            source,
            target,
            pool,
        };
        if full {
            index.check_lists()?;
        }
        for side in [&index.source, &index.target] {
            side.release_resident();
        }
        Ok(index)
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

    fn reload(parts: Vec<(String, Vec<u128>, usize, u64)>, full: bool) -> Result<TrainingIndex> {
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
        TrainingIndex::from_arrays(config(), 4, arrays, 1, full)
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
        let again = reload(copies(&index), false).unwrap();
        assert!(again.source.postings.lists.packed.is_borrowed());
        assert_eq!(exposures(&index), exposures(&again));
        assert_eq!(index.nbytes(), again.nbytes());
    }

    #[test]
    fn a_changed_byte_fails_its_checksum() {
        let mut parts = copies(&built());
        let packed = parts.iter_mut().find(|p| p.0 == "target.packed").unwrap();
        packed.1[0] ^= 1;
        let err = reload(parts, false).unwrap_err();
        assert_eq!(
            err.to_string(),
            "index array target.packed: checksum mismatch"
        );
    }

    /// The error of opening the index with one array changed and its checksum
    /// made to match, so that only the invariants can tell; `full` or not.
    fn tampered(name: &str, full: bool, change: impl Fn(&mut [u8])) -> Result<TrainingIndex> {
        let mut parts = copies(&built());
        let part = parts.iter_mut().find(|p| p.0 == name).unwrap();
        let len = part.2;
        let bytes = unsafe { std::slice::from_raw_parts_mut(part.1.as_mut_ptr() as *mut u8, len) };
        change(bytes);
        part.3 = checksum(bytes);
        reload(parts, full)
    }

    #[test]
    fn broken_invariants_are_named() {
        let swap_first_two_u32 = |b: &mut [u8]| {
            let (x, y) = (b[0..4].to_vec(), b[4..8].to_vec());
            b[0..4].copy_from_slice(&y);
            b[4..8].copy_from_slice(&x);
        };
        let duplicate_first_row = |b: &mut [u8]| {
            let second = b[4..8].to_vec();
            b[0..4].copy_from_slice(&second);
        };
        type Change = Box<dyn Fn(&mut [u8])>;
        let on_every_open: [(&str, Change, &str); 7] = [
            (
                "source.vocab",
                Box::new(|b| b[0..16].copy_from_slice(&[0xff; 16])),
                "vocab",
            ),
            (
                "target.block_start",
                Box::new(|b| b[8..16].copy_from_slice(&[0xff; 8])),
                "target.packed: a block's bytes",
            ),
            (
                "target.text_rows",
                Box::new(swap_first_two_u32),
                "text_rows",
            ),
            (
                "source.internal_of",
                Box::new(swap_first_two_u32),
                "text_rows",
            ),
            (
                "source.text_start",
                Box::new(|b| b[4..8].copy_from_slice(&[0; 4])),
                "text_start",
            ),
            (
                "source.offsets",
                Box::new(|b| b[8..16].copy_from_slice(&[0xff; 8])),
                "offsets",
            ),
            (
                "target.hash_texts",
                Box::new(duplicate_first_row),
                "target.hash_texts",
            ),
        ];
        for (name, change, message) in on_every_open {
            for full in [false, true] {
                let err = tampered(name, full, &change).unwrap_err().to_string();
                assert!(err.contains(message), "{name} (full {full}): {err}");
            }
        }
    }

    #[test]
    fn broken_lists_are_found_by_the_full_check_and_searched_without_panic() {
        let unsorted = |b: &mut [u8]| b[0..4].copy_from_slice(&[0xff; 4]);
        let err = tampered("source.block_first", true, unsorted).unwrap_err();
        assert!(err
            .to_string()
            .contains("source.packed: a list is unsorted"));
        // Opened without the full check, such a file (its checksums forged) is
        // searched in bounds: wrong lists give wrong neighbours, never a panic.
        let index = tampered("source.block_first", false, unsorted).unwrap();
        exposures(&index);
        assert!(index.check_lists().is_err());
        assert!(built().check_lists().is_ok());
    }

    #[test]
    fn missing_and_unknown_arrays_are_refused() {
        let mut parts = copies(&built());
        parts.retain(|p| p.0 != "source.sizes");
        assert!(reload(parts, false)
            .unwrap_err()
            .to_string()
            .contains("source.sizes: missing"));
        let mut parts = copies(&built());
        let extra = parts[0].clone();
        parts.push(("source.extra".into(), extra.1, extra.2, extra.3));
        assert!(reload(parts, false)
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
        assert!(reload(parts, false)
            .unwrap_err()
            .to_string()
            .contains("whole number"));
    }
}
