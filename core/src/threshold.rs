//! A similarity threshold `t = numerator / denominator` in (0, 1], every
//! decision on integers: whether a score reaches it, the overlap a text needs
//! to reach it with any text, the prefix of a text (in any fixed global gram
//! order) that must hold a gram shared with every text reaching it, and the
//! sizes that can reach it together. Both strategies' threshold searches
//! (decontamination) decide by it, so they admit the same pairs.
//!
//! If `s(x, y) >= t` then the overlap is at least `ceil(t * |x|)`, so the first
//! `|x| - ceil(t * |x|) + 1` grams of `x`, in any global order, hold a gram of
//! `y`; and `t * |x| <= |y| <= |x| / t`.

use crate::error::{invalid, Result};
use crate::jaccard::Score;

/// A similarity threshold `numerator / denominator` in (0, 1], every
/// decision on integers.
#[derive(Debug, Clone, Copy)]
pub struct Threshold {
    numerator: u64,
    denominator: u64,
}

impl Threshold {
    pub fn new(numerator: u64, denominator: u64) -> Result<Threshold> {
        if numerator == 0 || denominator == 0 || numerator > denominator {
            return Err(invalid(
                "threshold",
                format!("must lie in (0, 1], got {numerator}/{denominator}"),
            ));
        }
        Ok(Threshold {
            numerator,
            denominator,
        })
    }

    /// `s >= t`, as `overlap * denominator >= union * numerator`.
    pub fn admits(&self, s: Score) -> bool {
        s.overlap as u128 * self.denominator as u128 >= s.union as u128 * self.numerator as u128
    }

    /// `ceil(t * size)`: the overlap a text of `size` grams needs with any
    /// text to reach `t`.
    pub fn least_overlap(&self, size: u32) -> u32 {
        let (n, d) = (self.numerator as u128, self.denominator as u128);
        ((n * size as u128).div_ceil(d)) as u32
    }

    /// `|x| - ceil(t * |x|) + 1`: how many of a text's grams, first in the
    /// global order, must hold a gram it shares with any text it reaches.
    pub fn prefix_len(&self, size: u32) -> u32 {
        size - self.least_overlap(size) + 1
    }

    /// The least overlap with which texts of sizes `a` and `b` reach `t`:
    /// `o / (a + b - o) >= t` exactly when `o * (n + d) >= n * (a + b)`.
    pub fn least_shared(&self, a: u32, b: u32) -> u32 {
        let (n, d) = (self.numerator as u128, self.denominator as u128);
        (n * (a as u128 + b as u128)).div_ceil(n + d) as u32
    }

    /// `[ceil(t * size), floor(size / t)]`: the sizes of the texts that can
    /// reach `t` with a text of `size` grams.
    pub fn size_window(&self, size: u32) -> (u64, u64) {
        let (n, d) = (self.numerator as u128, self.denominator as u128);
        let max = (d * size as u128) / n;
        (
            self.least_overlap(size) as u64,
            max.min(u64::MAX as u128) as u64,
        )
    }
}
