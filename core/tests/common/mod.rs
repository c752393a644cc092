//! What the brute-force tests share: the exact Jaccard of two gram lists, a
//! callback that never interrupts, the test data as the core takes it, and
//! random texts and training pairs.

use proptest::prelude::*;
use std::collections::HashSet;
use tame_mt_core::grams::Gram;
use tame_mt_core::Score;

pub fn never() -> bool {
    false
}

pub fn jaccard(a: &[Gram], b: &[Gram]) -> Score {
    let sa: HashSet<_> = a.iter().collect();
    let o = b.iter().filter(|g| sa.contains(g)).count() as u32;
    Score::jaccard(o, a.len() as u32, b.len() as u32)
}

/// Training and test texts borrowed as the core takes them: training sources
/// and targets, test sources, and each item's references.
pub type Borrowed<'a> = (Vec<&'a str>, Vec<&'a str>, Vec<&'a str>, Vec<Vec<&'a str>>);

pub fn borrowed<'a>(
    train: &'a [(String, String)],
    test: &'a [(String, Vec<String>)],
) -> Borrowed<'a> {
    let (ts, tt) = train.iter().map(|(a, b)| (a.as_str(), b.as_str())).unzip();
    let qs = test.iter().map(|p| p.0.as_str()).collect();
    let qr = test
        .iter()
        .map(|p| p.1.iter().map(String::as_str).collect())
        .collect();
    (ts, tt, qs, qr)
}

/// Short texts over a few letters, a space and an accented letter, so that
/// grams repeat and scores tie.
pub fn text() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![Just('a'), Just('b'), Just('c'), Just(' '), Just('é')],
        0..9,
    )
    .prop_map(|v| v.into_iter().collect())
}

/// One to `max - 1` training pairs.
pub fn pairs(max: usize) -> impl Strategy<Value = Vec<(String, String)>> {
    proptest::collection::vec((text(), text()), 1..max)
}
