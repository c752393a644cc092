//! The Jaccard similarity of gram sets as exact fractions, and the ranking of
//! neighbours by it.

use std::cmp::Ordering;

/// `overlap / union`, compared by cross-multiplication, never as floats.
#[derive(Debug, Clone, Copy)]
pub struct Score {
    pub overlap: u32,
    pub union: u32,
}

impl Score {
    pub const ZERO: Score = Score {
        overlap: 0,
        union: 1,
    };

    /// Jaccard of two sets of sizes `a` and `b` sharing `overlap` elements;
    /// two empty sets have similarity 1.
    pub fn jaccard(overlap: u32, a: u32, b: u32) -> Score {
        if a == 0 && b == 0 {
            Score {
                overlap: 1,
                union: 1,
            }
        } else {
            Score {
                overlap,
                union: a + b - overlap,
            }
        }
    }

    /// The highest Jaccard a row of size `b` can reach with a query of size `a`
    /// when they share at most `max_overlap` grams.
    pub fn bound(max_overlap: u32, a: u32, b: u32) -> Score {
        let o = max_overlap.min(a).min(b);
        Score::jaccard(o, a, b)
    }

    pub fn value(self) -> f64 {
        self.overlap as f64 / self.union as f64
    }

    pub fn cmp_exact(self, other: Score) -> Ordering {
        let left = self.overlap as u64 * other.union as u64;
        let right = other.overlap as u64 * self.union as u64;
        left.cmp(&right)
    }
}

/// A training row and its score. The better of two hits has the higher score,
/// then the lower row index.
#[derive(Debug, Clone, Copy)]
pub struct Hit {
    pub score: Score,
    pub row: u64,
}

impl Hit {
    pub fn rank(&self, other: &Hit) -> Ordering {
        other
            .score
            .cmp_exact(self.score)
            .then(self.row.cmp(&other.row))
    }

    pub fn beats(&self, other: &Hit) -> bool {
        self.rank(other) == Ordering::Less
    }
}

/// The lower of two scores; the first on ties (pair exposure takes the
/// source side's fraction when both sides are equal).
pub fn min_score(a: Score, b: Score) -> Score {
    if a.cmp_exact(b).is_le() {
        a
    } else {
        b
    }
}

/// Size of the intersection of two sorted id lists.
pub fn overlap(a: &[u32], b: &[u32]) -> u32 {
    let (mut i, mut j, mut o) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            Ordering::Less => i += 1,
            Ordering::Greater => j += 1,
            Ordering::Equal => {
                o += 1;
                i += 1;
                j += 1;
            }
        }
    }
    o
}

/// Keep the `k` best hits of `hits` (best first).
pub fn top_k(mut hits: Vec<Hit>, k: usize) -> Vec<Hit> {
    hits.sort_by(Hit::rank);
    hits.truncate(k);
    hits
}

/// Which scores still matter: above `score`, or equal to it when not `strict`.
#[derive(Debug, Clone, Copy)]
pub struct Bar {
    pub score: Score,
    pub strict: bool,
}

impl Bar {
    /// Every score matters, zero included.
    pub const OPEN: Bar = Bar {
        score: Score::ZERO,
        strict: false,
    };

    pub fn above(score: Score) -> Bar {
        Bar {
            score,
            strict: true,
        }
    }

    pub fn at_least(score: Score) -> Bar {
        Bar {
            score,
            strict: false,
        }
    }

    pub fn admits(&self, s: Score) -> bool {
        match s.cmp_exact(self.score) {
            Ordering::Greater => true,
            Ordering::Equal => !self.strict,
            Ordering::Less => false,
        }
    }

    /// The tighter of two bars.
    pub fn max(self, other: Bar) -> Bar {
        match self.score.cmp_exact(other.score) {
            Ordering::Greater => self,
            Ordering::Less => other,
            Ordering::Equal => Bar {
                score: self.score,
                strict: self.strict || other.strict,
            },
        }
    }

    /// The looser of two bars.
    pub fn min(self, other: Bar) -> Bar {
        match self.score.cmp_exact(other.score) {
            Ordering::Less => self,
            Ordering::Greater => other,
            Ordering::Equal => Bar {
                score: self.score,
                strict: self.strict && other.strict,
            },
        }
    }

    /// The bar that a new block of rows (all after the rows behind `hits`)
    /// must pass to change a top-`k` list.
    pub fn after(hits: &[Hit], k: usize) -> Bar {
        if hits.len() >= k {
            Bar::above(hits[k - 1].score)
        } else {
            Bar::OPEN
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_comparison() {
        let a = Score::jaccard(1, 3, 3); // 1/5
        let b = Score::jaccard(2, 6, 6); // 2/10
        assert_eq!(a.cmp_exact(b), Ordering::Equal);
        assert_eq!(Score::jaccard(0, 0, 0).value(), 1.0);
        assert_eq!(Score::jaccard(0, 0, 4).value(), 0.0);
    }

    #[test]
    fn ties_go_to_the_lower_row() {
        let s = Score::jaccard(1, 2, 2);
        let hits = vec![Hit { score: s, row: 9 }, Hit { score: s, row: 3 }];
        assert_eq!(top_k(hits, 1)[0].row, 3);
    }

    #[test]
    fn bars() {
        let half = Score::jaccard(1, 1, 2);
        assert!(!Bar::above(half).admits(half));
        assert!(Bar::at_least(half).admits(half));
        assert!(Bar::OPEN.admits(Score::ZERO));
        let m = Bar::at_least(half).max(Bar::above(half));
        assert!(m.strict);
    }
}
