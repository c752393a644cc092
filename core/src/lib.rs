//! Exact character n-gram Jaccard retrieval for training-aware MT evaluation.
//!
//! For every test item: the training source most similar to its source
//! (source exposure), the training target most similar to one of its
//! references (target exposure), and the training pair maximising
//! min(source similarity, target similarity) (pair exposure), each with ties
//! broken towards the lowest training index, plus exact-overlap flags and
//! top-k neighbours. Two strategies give identical answers: a reusable
//! [`index::TrainingIndex`] and a one-pass [`streaming::StreamingAudit`].

pub mod error;
pub mod exposure;
mod fetch;
pub mod fingerprint;
pub mod grams;
pub mod index;
pub mod index_file;
pub mod normalize;
pub mod packed;
pub mod pool;
pub mod postings;
mod prefix_index;
pub mod score;
pub mod search;
pub mod storage;
pub mod streaming;
pub mod test_set;
mod vocabulary;

#[cfg(feature = "python")]
mod python;

pub use error::{Error, Result};
pub use exposure::{Exposure, TargetHit};
pub use fingerprint::Fingerprint;
pub use grams::GramConfig;
pub use index::TrainingIndex;
pub use normalize::Normalization;
pub use score::{Hit, Score};
pub use streaming::StreamingAudit;
