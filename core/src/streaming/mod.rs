//! The streaming strategy: the test set is indexed, and the training corpus
//! flows through it once, in blocks, with no training index.
//!
//! For every block the test items are indexed by the prefix of their gram
//! sets (rarest grams first, by the training frequencies of when the order
//! was last made, remade as the rows grow fourfold) that a row must share to
//! pass the item's current bar. Each training row probes that
//! index with its grams; the items it reaches are checked by an upper bound
//! and then scored exactly. Bars only rise, so an index built at the start of
//! a block stays valid through it. Blocks start small and grow, so that bars
//! rise before the large blocks come. Where the items are far from the corpus
//! the bars stay low and a row reaches most items anyway; a block then counts
//! each row's exact overlap with every item at once instead (bitsets of the
//! frequent grams, 64 items to a word), when a cost model of the rows so far
//! expects it to be cheaper.
//!
//! Rows arrive in increasing order, so a row must beat an equal score to
//! displace it. Partial answers (blocks, threads, shards) merge exactly
//! ([`Exposure::merge`](crate::Exposure::merge)), so a sharded corpus can be
//! audited apart and combined with [`StreamingAudit::merge`].
//!
//! Owns the [`StreamingAudit`] and what only it needs: the audit driver
//! (`audit`: blocks, document frequencies, gram orders, bars, merging
//! audits), the test side (`test_side`), training rows read in the test
//! vocabularies (`training_rows`), one thread's probe of a run of rows
//! (`probe`), the prefix indexes of the test texts (`prefix_index`), every
//! text's overlap with a row counted at once (`overlaps`), the
//! test vocabulary and texts written in its ids (`vocabulary`), and the
//! memory prefetch hint (`fetch`). Only [`StreamingAudit`] and the
//! decontaminator's types are seen outside: the submodules are private.
//!
//! The same pass answers decontamination: a [`Decontaminator`] indexes
//! every test set's sources and references once (`threshold_join`: texts by
//! gram, a [`Threshold`]) and judges each training row on its own, probing
//! only the prefix of its grams that a match at the fixed threshold must
//! share (`decontamination`: its best match on each side and for the pair).
//!
//! Uses the shared base only (errors, grams, scores, exposures, the test
//! set's preparation, pools), never the indexed strategy.
//!
//! Invariants: whatever order a text's grams were ranked in (stale
//! frequencies included) and whatever the slack, the prefix cut never
//! changes the answer; counting overlaps gives the same answer; partial
//! answers merge exactly; the answers equal the indexed strategy's.

mod audit;
mod decontamination;
mod fetch;
mod overlaps;
mod prefix_index;
mod probe;
mod test_side;
mod threshold_join;
mod training_rows;
mod vocabulary;

pub use crate::row_match::{RowMatch, SourceMatch, TargetMatch};
pub use crate::threshold::Threshold;
pub use audit::StreamingAudit;
pub use decontamination::Decontaminator;
