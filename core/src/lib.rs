//! Exact character n-gram Jaccard retrieval for training-aware MT evaluation.
//!
//! For every test item: the training source most similar to its source
//! (source exposure), the training target most similar to one of its
//! references (target exposure), and the training pair maximising
//! min(source similarity, target similarity) (pair exposure), each with ties
//! broken towards the lowest training index, plus exact-overlap flags and
//! top-k neighbours. Two strategies give identical answers: a reusable
//! [`TrainingIndex`] ([`indexed`]) and a one-pass [`StreamingAudit`]
//! ([`streaming`]).
//!
//! The modules at the top level are the shared base: text normalisation,
//! gram sets, exact scores, the exposure of a test item and its merge, the
//! test set's preparation, errors, corpus fingerprints and worker pools. The
//! base uses nothing else in the crate. Each strategy is a folder that uses
//! the base and never the other strategy. The Python bindings (`python`, behind the `python` feature) sit
//! on top and hold no algorithm.

// The shared base.
pub mod arrow_text;
pub mod error;
pub mod exposure;
pub mod fingerprint;
pub mod grams;
pub mod jaccard;
pub mod normalize;
pub mod pool;
pub mod row_match;
pub mod test_set;
pub mod threshold;

// The two strategies.
pub mod indexed;
pub mod streaming;

#[cfg(feature = "python")]
mod python;

pub use error::{Error, Result};
pub use exposure::{Exposure, TargetHit};
pub use fingerprint::Fingerprint;
pub use grams::GramConfig;
pub use indexed::TrainingIndex;
pub use jaccard::{Hit, Score};
pub use normalize::Normalization;
pub use row_match::RowMatch;
pub use streaming::{Decontaminator, StreamingAudit};
pub use threshold::Threshold;
