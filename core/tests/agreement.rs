//! The two strategies against a brute-force scan, on random corpora.

use proptest::prelude::*;
use std::collections::HashSet;
use tame_mt_core::grams::Gram;
use tame_mt_core::{Exposure, GramConfig, Normalization, Score, StreamingAudit, TrainingIndex};

fn never() -> bool {
    false
}

fn jaccard(a: &[Gram], b: &[Gram]) -> Score {
    let sa: HashSet<_> = a.iter().collect();
    let o = b.iter().filter(|g| sa.contains(g)).count() as u32;
    Score::jaccard(o, a.len() as u32, b.len() as u32)
}

/// (score, row) of the best row, scanning all of them.
fn best(scores: &[Score]) -> (Score, u64) {
    let mut b = 0;
    for j in 1..scores.len() {
        if scores[j].cmp_exact(scores[b]).is_gt() {
            b = j;
        }
    }
    (scores[b], b as u64)
}

fn same(a: Score, b: Score) -> bool {
    a.cmp_exact(b).is_eq()
}

fn check(train: &[(String, String)], test: &[(String, String)], k: usize, block: usize) {
    let cfg = GramConfig::new(&[2, 3], Normalization::default()).unwrap();
    let (ts, tt): (Vec<&str>, Vec<&str>) =
        train.iter().map(|(a, b)| (a.as_str(), b.as_str())).unzip();
    let qs: Vec<&str> = test.iter().map(|p| p.0.as_str()).collect();
    let qr: Vec<Vec<&str>> = test.iter().map(|p| vec![p.1.as_str()]).collect();

    let mut audit = StreamingAudit::new(cfg.clone(), &qs, &qr, k, block, 1 + block % 2).unwrap();
    audit.feed(&ts, &tt, 0, &never).unwrap();
    let streamed: Vec<Exposure> = audit.exposures();
    let index = TrainingIndex::build(cfg.clone(), &ts, &tt, 2, &never).unwrap();
    let indexed = index.expose(&qs, &qr, k, &never).unwrap();

    let train_grams: Vec<(Vec<Gram>, Vec<Gram>)> = train
        .iter()
        .map(|(a, b)| (cfg.grams(a), cfg.grams(b)))
        .collect();
    for (i, (s, r)) in test.iter().enumerate() {
        let (gs, gr) = (cfg.grams(s), cfg.grams(r));
        let src: Vec<Score> = train_grams.iter().map(|(u, _)| jaccard(&gs, u)).collect();
        let tgt: Vec<Score> = train_grams.iter().map(|(_, v)| jaccard(&gr, v)).collect();
        let pair: Vec<Score> = src
            .iter()
            .zip(&tgt)
            .map(|(&a, &b)| if a.cmp_exact(b).is_le() { a } else { b })
            .collect();
        let mut order: Vec<usize> = (0..train.len()).collect();
        order.sort_by(|&a, &b| src[b].cmp_exact(src[a]).then(a.cmp(&b)));
        let norm = |t: &str| cfg.normalization.apply(t);
        let src_exact = train.iter().any(|(u, _)| norm(u) == norm(s));
        let pair_exact = train
            .iter()
            .any(|(u, v)| norm(u) == norm(s) && norm(v) == norm(r));
        for e in [&streamed[i], &indexed[i]] {
            assert_eq!(e.source.len(), k.min(train.len()));
            for (rank, h) in e.source.iter().enumerate() {
                assert_eq!(h.row, order[rank] as u64, "item {i} rank {rank}");
                assert!(same(h.score, src[order[rank]]));
            }
            let (bt, jt) = best(&tgt);
            assert_eq!(e.target[0].hit.row, jt, "target item {i}");
            assert!(same(e.target[0].hit.score, bt));
            let (bp, jp) = best(&pair);
            let p = e.pair.unwrap();
            assert_eq!(p.row, jp, "pair item {i}");
            assert!(same(p.score, bp));
            assert_eq!(e.source_exact, src_exact);
            assert_eq!(e.pair_exact, pair_exact);
        }
    }
}

fn text() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![Just('a'), Just('b'), Just('c'), Just(' '), Just('é')],
        0..9,
    )
    .prop_map(|v| v.into_iter().collect())
}

fn pairs(max: usize) -> impl Strategy<Value = Vec<(String, String)>> {
    proptest::collection::vec((text(), text()), 1..max)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn strategies_agree_with_brute_force(train in pairs(40), test in pairs(8), k in 1usize..4, block in 1usize..12) {
        check(&train, &test, k, block);
    }
}

#[test]
fn shards_merge_to_the_single_pass_answer() {
    let cfg = GramConfig::new(&[3, 4, 5], Normalization::default()).unwrap();
    let train: Vec<String> = (0..50)
        .map(|i| format!("sentence number {} of {}", i % 7, i % 3))
        .collect();
    let test = vec!["sentence number 3 of 1".to_string(), "other".to_string()];
    let refs = vec![vec!["number 3".to_string()], vec!["x".to_string()]];
    let mut whole = StreamingAudit::new(cfg.clone(), &test, &refs, 3, 8, 1).unwrap();
    whole.feed(&train, &train, 0, &never).unwrap();
    let mut left = StreamingAudit::new(cfg.clone(), &test, &refs, 3, 8, 1).unwrap();
    left.feed(&train[..20], &train[..20], 0, &never).unwrap();
    let mut right = StreamingAudit::new(cfg, &test, &refs, 3, 8, 1).unwrap();
    right.feed(&train[20..], &train[20..], 20, &never).unwrap();
    right.merge(&left).unwrap();
    for (a, b) in whole.exposures().iter().zip(&right.exposures()) {
        let rows = |e: &Exposure| e.source.iter().map(|h| h.row).collect::<Vec<_>>();
        assert_eq!(rows(a), rows(b));
        assert_eq!(a.pair.unwrap().row, b.pair.unwrap().row);
        assert_eq!(a.target[0].hit.row, b.target[0].hit.row);
    }
}

/// Text of `len` characters drawn from 3,000 CJK ideographs: about as many
/// distinct 2- and 3-grams as characters each.
fn long_text(seed: u64, len: usize) -> String {
    let mut x = seed;
    (0..len)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            char::from_u32(0x4E00 + ((x >> 33) % 3000) as u32).unwrap()
        })
        .collect()
}

#[test]
fn queries_and_rows_of_more_than_65535_grams_are_counted_exactly() {
    let base = long_text(1, 40_000);
    let variant: String = base
        .chars()
        .enumerate()
        .map(|(i, c)| if i % 50 == 0 { 'a' } else { c })
        .collect();
    let cfg = GramConfig::new(&[2, 3], Normalization::default()).unwrap();
    assert!(cfg.grams(&variant).len() > u16::MAX as usize);
    let train = vec![
        (base.clone(), "x".to_string()),
        (variant.chars().take(30_000).collect(), "y".to_string()),
        (long_text(2, 40_000), "z".to_string()),
        ("short".to_string(), base.chars().take(100).collect()),
    ];
    let test = vec![
        (variant.clone(), "x".to_string()),
        ("short text".to_string(), base.chars().take(90).collect()),
    ];
    check(&train, &test, 2, 3);
}
