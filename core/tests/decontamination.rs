//! The decontaminator against a brute-force scan of every (row, item) pair,
//! on random corpora and thresholds.

mod common;

use common::{borrowed, jaccard, never, pairs, text};

use proptest::prelude::*;
use tame_mt_core::streaming::{Decontaminator, RowMatch, Threshold};
use tame_mt_core::{GramConfig, Normalization, Score, TrainingIndex};

fn reaches(s: Score, t: (u64, u64)) -> bool {
    s.overlap as u128 * t.1 as u128 >= s.union as u128 * t.0 as u128
}

/// (score, item, reference) better than `b`: higher score, then lower item,
/// then lower reference.
fn beats(a: (Score, u32, u32), b: Option<(Score, u32, u32)>) -> bool {
    match b {
        None => true,
        Some(b) => {
            a.0.cmp_exact(b.0)
                .then(b.1.cmp(&a.1))
                .then(b.2.cmp(&a.2))
                .is_gt()
        }
    }
}

type Best = Option<(Score, u32, u32)>;

/// Each row's best source, target and pair matches at or above `t`.
fn brute_force(
    cfg: &GramConfig,
    train: &[(String, String)],
    test: &[(String, Vec<String>)],
    t: (u64, u64),
) -> Vec<(Best, Best, Best)> {
    train
        .iter()
        .map(|(u, v)| {
            let (gu, gv) = (cfg.grams(u), cfg.grams(v));
            let (mut source, mut target, mut pair): (Best, Best, Best) = (None, None, None);
            for (i, (x, refs)) in test.iter().enumerate() {
                let i = i as u32;
                let s = jaccard(&cfg.grams(x), &gu);
                if reaches(s, t) && beats((s, i, 0), source) {
                    source = Some((s, i, 0));
                }
                let mut item_best: Best = None;
                for (k, r) in refs.iter().enumerate() {
                    let st = jaccard(&cfg.grams(r), &gv);
                    if reaches(st, t) && beats((st, i, k as u32), target) {
                        target = Some((st, i, k as u32));
                    }
                    if beats((st, i, k as u32), item_best) {
                        item_best = Some((st, i, k as u32));
                    }
                }
                if let Some((st, _, k)) = item_best {
                    let m = if s.cmp_exact(st).is_le() { s } else { st };
                    if reaches(m, t) && beats((m, i, k), pair) {
                        pair = Some((m, i, k));
                    }
                }
            }
            (source, target, pair)
        })
        .collect()
}

fn same(a: Best, b: Best) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => a.0.cmp_exact(b.0).is_eq() && (a.1, a.2) == (b.1, b.2),
        _ => false,
    }
}

fn check(
    train: &[(String, String)],
    test: &[(String, Vec<String>)],
    t: (u64, u64),
    block: usize,
    threads: usize,
    counting: Option<bool>,
) {
    let cfg = GramConfig::new(&[2, 3], Normalization::default()).unwrap();
    let (ts, tt, qs, qr) = borrowed(train, test);
    let d = Decontaminator::new(
        cfg.clone(),
        &qs,
        &qr,
        Threshold::new(t.0, t.1).unwrap(),
        threads,
    )
    .unwrap()
    .with_counting(counting);
    let mut found: Vec<RowMatch> = Vec::new();
    for start in (0..ts.len()).step_by(block) {
        let end = (start + block).min(ts.len());
        found.extend(
            d.feed(&ts[start..end], &tt[start..end], start as u64, &never)
                .unwrap(),
        );
    }
    let index = TrainingIndex::build(cfg.clone(), &ts, &tt, threads, &never).unwrap();
    let searched = index
        .decontaminate(&qs, &qr, Threshold::new(t.0, t.1).unwrap(), &never)
        .unwrap();
    assert_same_matches(&searched, &found);
    let expected = brute_force(&cfg, train, test, t);
    let mut at = found.iter().peekable();
    for (j, (source, target, pair)) in expected.iter().enumerate() {
        let got = match at.peek() {
            Some(m) if m.row == j as u64 => at.next().copied(),
            _ => None,
        };
        let (s, tg, p) = match got {
            None => (None, None, None),
            Some(m) => (
                m.source.map(|x| (x.score, x.item, 0)),
                m.target.map(|x| (x.score, x.item, x.reference)),
                m.pair.map(|x| (x.score, x.item, x.reference)),
            ),
        };
        assert!(same(s, *source), "row {j} source: {s:?} vs {source:?}");
        assert!(same(tg, *target), "row {j} target: {tg:?} vs {target:?}");
        assert!(same(p, *pair), "row {j} pair: {p:?} vs {pair:?}");
        if got.is_some() {
            assert!(
                s.is_some() || tg.is_some(),
                "row {j} reported with no match"
            );
        }
    }
    assert!(at.next().is_none(), "rows reported beyond the corpus");
}

/// The index's rows and matches are the decontaminator's, field by field.
fn assert_same_matches(index: &[RowMatch], fed: &[RowMatch]) {
    let key = |m: &RowMatch| {
        let score = |s: Score| (s.overlap, s.union);
        (
            m.row,
            m.source.map(|x| (x.item, score(x.score))),
            m.target.map(|x| (x.item, x.reference, score(x.score))),
            m.pair.map(|x| (x.item, x.reference, score(x.score))),
        )
    };
    let index: Vec<_> = index.iter().map(key).collect();
    let fed: Vec<_> = fed.iter().map(key).collect();
    assert_eq!(index, fed, "the index's matches differ from the pass's");
}

/// Test items of zero to three references each: several test sets are one
/// list of items, numbered in order.
fn items(max: usize) -> impl Strategy<Value = Vec<(String, Vec<String>)>> {
    proptest::collection::vec((text(), proptest::collection::vec(text(), 0..4)), 1..max)
}

/// A threshold: a small fraction in (0, 1], or a score some pair reaches.
fn threshold(
    train: &[(String, String)],
    test: &[(String, Vec<String>)],
    pick: (u64, u64),
    hit: Option<usize>,
) -> (u64, u64) {
    let cfg = GramConfig::new(&[2, 3], Normalization::default()).unwrap();
    if let Some(h) = hit {
        let scores: Vec<Score> = train
            .iter()
            .flat_map(|(u, _)| test.iter().map(move |(x, _)| (x, u)))
            .map(|(x, u)| jaccard(&cfg.grams(x), &cfg.grams(u)))
            .filter(|s| s.overlap > 0)
            .collect();
        if !scores.is_empty() {
            let s = scores[h % scores.len()];
            return (s.overlap as u64, s.union as u64);
        }
    }
    let den = pick.1;
    (1 + pick.0 % den, den)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]
    #[test]
    fn decontamination_agrees_with_brute_force(
        train in pairs(40),
        test in items(10),
        pick in (0u64..100, 1u64..13),
        hit in proptest::option::of(0usize..1000),
        block in 1usize..12,
        threads in 1usize..4,
        counting in proptest::option::of(any::<bool>()),
    ) {
        let t = threshold(&train, &test, pick, hit);
        check(&train, &test, t, block, threads, counting);
    }
}

fn owned(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

fn item(source: &str, refs: &[&str]) -> (String, Vec<String>) {
    (
        source.to_string(),
        refs.iter().map(|r| r.to_string()).collect(),
    )
}

#[test]
fn threshold_one_removes_exact_normalised_matches_only() {
    let train = owned(&[
        ("the  red house", "x"),
        ("the red house!", "y"),
        ("", ""),
        ("a", "b"),
    ]);
    let test = vec![item("the red house", &["b"]), item("", &[]), item("a", &[])];
    for counting in [None, Some(false), Some(true)] {
        check(&train, &test, (1, 1), 3, 2, counting);
    }
    let cfg = GramConfig::new(&[2, 3], Normalization::default()).unwrap();
    let (ts, tt, qs, qr) = borrowed(&train, &test);
    let d = Decontaminator::new(cfg, &qs, &qr, Threshold::new(1, 1).unwrap(), 1).unwrap();
    let found = d.feed(&ts, &tt, 0, &never).unwrap();
    let rows: Vec<u64> = found.iter().map(|m| m.row).collect();
    // Whitespace collapses; punctuation is kept; two empty texts are 1/1; a
    // text shorter than the smallest order is one gram, itself.
    assert_eq!(rows, vec![0, 2, 3]);
    assert_eq!(found[1].source.unwrap().item, 1);
    assert_eq!(found[2].source.unwrap().item, 2);
    assert_eq!(found[2].target.unwrap().item, 0);
}

#[test]
fn ties_go_to_the_lower_item_and_reference() {
    let train = owned(&[("abc", "xyz")]);
    let test = vec![
        item("zzz", &["q", "xyz"]),
        item("abc", &["xyz", "xyz"]),
        item("abc", &["xyz"]),
    ];
    for counting in [None, Some(false), Some(true)] {
        check(&train, &test, (1, 2), 1, 1, counting);
    }
    let cfg = GramConfig::new(&[2, 3], Normalization::default()).unwrap();
    let qs: Vec<&str> = test.iter().map(|p| p.0.as_str()).collect();
    let qr: Vec<Vec<&str>> = test
        .iter()
        .map(|p| p.1.iter().map(String::as_str).collect())
        .collect();
    let d = Decontaminator::new(cfg, &qs, &qr, Threshold::new(1, 2).unwrap(), 1).unwrap();
    let m = d.feed(&["abc"], &["xyz"], 7, &never).unwrap()[0];
    assert_eq!(m.row, 7);
    assert_eq!(m.source.unwrap().item, 1);
    assert_eq!(
        (m.target.unwrap().item, m.target.unwrap().reference),
        (0, 1)
    );
    assert_eq!((m.pair.unwrap().item, m.pair.unwrap().reference), (1, 0));
}

#[test]
fn thresholds_outside_zero_to_one_are_refused() {
    assert!(Threshold::new(0, 1).is_err());
    assert!(Threshold::new(3, 2).is_err());
    assert!(Threshold::new(1, 0).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn the_index_agrees_at_one_and_without_references(
        train in pairs(60),
        test in items(12),
        pick in (0u64..100, 1u64..13),
        threads in 1usize..4,
    ) {
        check(&train, &test, (1, 1), 7, threads, None);
        let cfg = GramConfig::new(&[2, 3], Normalization::default()).unwrap();
        let (ts, tt, qs, _) = borrowed(&train, &test);
        let none: Vec<Vec<&str>> = Vec::new();
        let t = Threshold::new(1 + pick.0 % pick.1, pick.1).unwrap();
        let fed = Decontaminator::new(cfg.clone(), &qs, &none, t, threads)
            .unwrap()
            .feed(&ts, &tt, 0, &never)
            .unwrap();
        let index = TrainingIndex::build(cfg, &ts, &tt, threads, &never).unwrap();
        assert_same_matches(&index.decontaminate(&qs, &none, t, &never).unwrap(), &fed);
    }
}

#[test]
fn the_index_refuses_misaligned_references_and_stops_when_interrupted() {
    let cfg = GramConfig::new(&[2, 3], Normalization::default()).unwrap();
    let index = TrainingIndex::build(cfg, &["abc"], &["xyz"], 1, &never).unwrap();
    let t = Threshold::new(1, 2).unwrap();
    let refs = vec![vec!["xyz"]];
    assert!(index.decontaminate(&["a", "b"], &refs, t, &never).is_err());
    let stop = || true;
    assert!(matches!(
        index.decontaminate(&["abc"], &refs, t, &stop),
        Err(tame_mt_core::Error::Interrupted)
    ));
    let found = index.decontaminate(&["abc"], &refs, t, &never).unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].pair.unwrap().item, 0);
}
