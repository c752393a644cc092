//! The test side of an audit: normalised sources and references with their
//! gram sets, shared by both retrieval strategies.

use crate::error::{invalid, Error, Result};
use crate::grams::{Gram, GramConfig};
use rayon::prelude::*;

/// One test item, normalised.
#[derive(Debug, Clone)]
pub struct TestItem {
    pub source: String,
    pub source_grams: Vec<Gram>,
    pub references: Vec<String>,
    pub reference_grams: Vec<Vec<Gram>>,
}

/// Normalise and take the gram sets of a test set. Every item has the same
/// number of references (possibly none).
pub fn prepare<S: AsRef<str> + Sync>(
    config: &GramConfig,
    sources: &[S],
    references: &[Vec<S>],
) -> Result<Vec<TestItem>> {
    if !references.is_empty() && references.len() != sources.len() {
        return Err(Error::Misaligned {
            what: "references vs sources".into(),
            left: references.len(),
            right: sources.len(),
        });
    }
    if let Some(first) = references.first() {
        if let Some(i) = references.iter().position(|r| r.len() != first.len()) {
            return Err(invalid(
                "references",
                format!(
                    "item {i} has {} references, item 0 has {}",
                    references[i].len(),
                    first.len()
                ),
            ));
        }
    }
    Ok((0..sources.len())
        .into_par_iter()
        .map(|i| {
            let source = config.normalization.apply(sources[i].as_ref());
            let refs: Vec<String> = references
                .get(i)
                .map(|r| {
                    r.iter()
                        .map(|t| config.normalization.apply(t.as_ref()))
                        .collect()
                })
                .unwrap_or_default();
            TestItem {
                source_grams: config.grams_of_normalized(&source),
                source,
                reference_grams: refs.iter().map(|r| config.grams_of_normalized(r)).collect(),
                references: refs,
            }
        })
        .collect())
}

/// Check that two sides of a training corpus are aligned.
pub fn check_aligned(sources: usize, targets: usize) -> Result<()> {
    if sources != targets {
        return Err(Error::Misaligned {
            what: "training sources vs targets".into(),
            left: sources,
            right: targets,
        });
    }
    Ok(())
}
