//! The two strategies against a brute-force scan, on random corpora.

mod common;

use common::{borrowed, jaccard, never, pairs, text};

use proptest::prelude::*;
use tame_mt_core::grams::Gram;
use tame_mt_core::{Exposure, GramConfig, Normalization, Score, StreamingAudit, TrainingIndex};

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

/// The best reference's score and index against a training target: the
/// lowest reference among equals.
fn best_reference(references: &[Vec<Gram>], target: &[Gram]) -> (Score, u32) {
    let mut best = (jaccard(&references[0], target), 0);
    for (k, r) in references.iter().enumerate().skip(1) {
        let s = jaccard(r, target);
        if s.cmp_exact(best.0).is_gt() {
            best = (s, k as u32);
        }
    }
    best
}

fn check(train: &[(String, String)], test: &[(String, Vec<String>)], k: usize, block: usize) {
    let cfg = GramConfig::new(&[2, 3], Normalization::default()).unwrap();
    let (ts, tt, qs, qr) = borrowed(train, test);

    let mut audit = StreamingAudit::new(cfg.clone(), &qs, &qr, k, block, 1 + block % 2).unwrap();
    audit.feed(&ts, &tt, 0, &never).unwrap();
    let streamed: Vec<Exposure> = audit.exposures();
    let index = TrainingIndex::build(cfg.clone(), &ts, &tt, 2, &never).unwrap();
    let indexed = index.expose(&qs, &qr, k, &never).unwrap();

    let train_grams: Vec<(Vec<Gram>, Vec<Gram>)> = train
        .iter()
        .map(|(a, b)| (cfg.grams(a), cfg.grams(b)))
        .collect();
    for (i, (s, refs)) in test.iter().enumerate() {
        let gs = cfg.grams(s);
        let gr: Vec<Vec<Gram>> = refs.iter().map(|r| cfg.grams(r)).collect();
        let src: Vec<Score> = train_grams.iter().map(|(u, _)| jaccard(&gs, u)).collect();
        let (tgt, best_ref): (Vec<Score>, Vec<u32>) = train_grams
            .iter()
            .map(|(_, v)| best_reference(&gr, v))
            .unzip();
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
            .any(|(u, v)| norm(u) == norm(s) && refs.iter().any(|r| norm(v) == norm(r)));
        for e in [&streamed[i], &indexed[i]] {
            assert_eq!(e.source.len(), k.min(train.len()));
            for (rank, h) in e.source.iter().enumerate() {
                assert_eq!(h.row, order[rank] as u64, "item {i} rank {rank}");
                assert!(same(h.score, src[order[rank]]));
            }
            let (bt, jt) = best(&tgt);
            assert_eq!(e.target[0].hit.row, jt, "target item {i}");
            assert!(same(e.target[0].hit.score, bt));
            assert_eq!(
                e.target[0].reference, best_ref[jt as usize],
                "target item {i}"
            );
            let (bp, jp) = best(&pair);
            let p = e.pair.unwrap();
            assert_eq!(p.hit.row, jp, "pair item {i}");
            assert!(same(p.hit.score, bp));
            assert_eq!(
                p.reference, best_ref[jp as usize],
                "pair reference item {i}"
            );
            assert_eq!(e.source_exact, src_exact);
            assert_eq!(e.pair_exact, pair_exact);
        }
    }
}

/// Test items of one to three references each (as many for every item).
fn items(max: usize) -> impl Strategy<Value = Vec<(String, Vec<String>)>> {
    (1usize..4).prop_flat_map(move |n| {
        proptest::collection::vec((text(), proptest::collection::vec(text(), n)), 1..max)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn strategies_agree_with_brute_force(train in pairs(40), test in items(8), k in 1usize..4, block in 1usize..12) {
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
    let refs = vec![
        vec!["x".to_string(), "number 3".to_string()],
        vec!["x".to_string(), "y".to_string()],
    ];
    let mut whole = StreamingAudit::new(cfg.clone(), &test, &refs, 3, 8, 1).unwrap();
    whole.feed(&train, &train, 0, &never).unwrap();
    let mut left = StreamingAudit::new(cfg.clone(), &test, &refs, 3, 8, 1).unwrap();
    left.feed(&train[..20], &train[..20], 0, &never).unwrap();
    let mut right = StreamingAudit::new(cfg, &test, &refs, 3, 8, 1).unwrap();
    right.feed(&train[20..], &train[20..], 20, &never).unwrap();
    right.merge(&left).unwrap();
    assert_eq!(whole.exposures()[0].pair.unwrap().reference, 1);
    for (a, b) in whole.exposures().iter().zip(&right.exposures()) {
        let rows = |e: &Exposure| e.source.iter().map(|h| h.row).collect::<Vec<_>>();
        assert_eq!(rows(a), rows(b));
        let (pa, pb) = (a.pair.unwrap(), b.pair.unwrap());
        assert_eq!((pa.hit.row, pa.reference), (pb.hit.row, pb.reference));
        assert_eq!(a.target[0].hit.row, b.target[0].hit.row);
    }
}

/// A two-reference item: its best target is the first reference's, its
/// pair's maximum the second's.
#[test]
fn the_pair_names_the_reference_that_gave_its_maximum() {
    let cfg = GramConfig::new(&[2, 3], Normalization::default()).unwrap();
    let train = [
        ("the red house", "la maison rouge"),
        ("a green tree", "un arbre vert"),
    ];
    let (ts, tt): (Vec<&str>, Vec<&str>) = train.iter().copied().unzip();
    let refs = vec![vec!["un arbre vert", "la maison rouge!"]];
    let test = ["the red house"];
    let mut audit = StreamingAudit::new(cfg.clone(), &test, &refs, 1, 2, 1).unwrap();
    audit.feed(&ts, &tt, 0, &never).unwrap();
    let index = TrainingIndex::build(cfg, &ts, &tt, 2, &never).unwrap();
    let indexed = index.expose(&test, &refs, 1, &never).unwrap();
    for e in [&audit.exposures()[0], &indexed[0]] {
        let pair = e.pair.unwrap();
        assert_eq!((pair.hit.row, pair.reference), (0, 1));
        assert_eq!((e.target[0].hit.row, e.target[0].reference), (1, 0));
    }
    let owned = |v: &[(&str, &str)]| -> Vec<(String, String)> {
        v.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    };
    let items = vec![(
        test[0].to_string(),
        refs[0].iter().map(|r| r.to_string()).collect(),
    )];
    check(&owned(&train), &items, 1, 2);
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
        (variant.clone(), vec!["x".to_string(), "y".to_string()]),
        (
            "short text".to_string(),
            vec!["q".to_string(), base.chars().take(90).collect()],
        ),
    ];
    check(&train, &test, 2, 3);
}
