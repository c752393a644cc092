//! The indexed strategy: posting lists over the whole training corpus, both
//! sides, reusable for any number of test sets. Flat arrays only: the sorted
//! gram vocabulary (`u128` keys), the bit-packed posting lists over each
//! side's distinct texts, and 128-bit XXH3 hashes of the normalised texts for
//! exact-overlap checks.
//!
//! Owns the [`TrainingIndex`] and everything it is made of: its build and
//! its answer to a test set ([`training_index`]), the posting lists of a
//! block of rows ([`postings`]) stored bit-packed ([`packed`]) in arrays
//! owned or borrowed from a mapped file ([`storage`]), the exact search of
//! one query over them ([`search`]), the exposure of one test item to a
//! block's source and target lists ([`block`]), and the named arrays of an
//! index file with the checks that make them trustworthy before any search
//! ([`index_file`]).
//!
//! Uses the shared base only (errors, grams, scores, exposures, the test
//! set's preparation, pools), never the streaming strategy.
//!
//! Invariants: texts are numbered by (gram set size, first row), so a size
//! window is one id range; every posting list is sorted by that id; an index
//! read back from arrays is trusted only after every array's checksum and
//! structure have been checked; answers equal the streaming strategy's.

pub mod block;
pub mod index_file;
pub mod packed;
pub mod postings;
pub mod search;
pub mod storage;
pub mod threshold_search;
pub mod training_index;

pub use training_index::TrainingIndex;
