//! Character n-gram sets.
//!
//! A gram of at most [`MAX_ORDER`] characters is packed exactly into a `u128`
//! (21 bits per character, each stored as `code point + 1`), so two grams are
//! equal exactly when their keys are: no hashing, no collisions. A non-empty
//! text shorter than the smallest order is one gram: the whole text.

use crate::error::{invalid, Result};
use crate::normalize::Normalization;

/// The largest n-gram order a key can hold.
pub const MAX_ORDER: usize = 6;

/// An exact gram key.
pub type Gram = u128;

/// How texts become gram sets: normalisation plus n-gram orders.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct GramConfig {
    orders: Vec<usize>,
    pub normalization: Normalization,
}

impl GramConfig {
    /// Validate the orders: non-empty, each in `1..=MAX_ORDER`, no repeats.
    pub fn new(orders: &[i64], normalization: Normalization) -> Result<Self> {
        if orders.is_empty() {
            return Err(invalid("ngram_orders", "at least one order is needed"));
        }
        let mut checked = Vec::with_capacity(orders.len());
        for &order in orders {
            if order < 1 || order > MAX_ORDER as i64 {
                return Err(invalid(
                    "ngram_orders",
                    format!("order {order} is outside 1..={MAX_ORDER}"),
                ));
            }
            let order = order as usize;
            if checked.contains(&order) {
                return Err(invalid(
                    "ngram_orders",
                    format!("order {order} is repeated"),
                ));
            }
            checked.push(order);
        }
        checked.sort_unstable();
        Ok(GramConfig {
            orders: checked,
            normalization,
        })
    }

    pub fn orders(&self) -> &[usize] {
        &self.orders
    }

    /// Every gram of an already normalised text, repeats included, in no
    /// particular order. The key of the last [`MAX_ORDER`] characters rolls
    /// along the text; each gram ending at a character is its low bits.
    pub fn each_gram(&self, text: &str, mut visit: impl FnMut(Gram)) {
        let mut key: Gram = 0;
        let mut len = 0;
        for c in text.chars() {
            key = ((key << BITS) | (c as u32 + 1) as Gram) & low_chars(MAX_ORDER);
            len += 1;
            for &order in self.orders.iter().take_while(|&&order| order <= len) {
                visit(key & low_chars(order));
            }
        }
        if len > 0 && len < self.orders[0] {
            visit(key);
        }
    }

    /// The sorted, deduplicated gram set of an already normalised text.
    pub fn grams_of_normalized(&self, text: &str) -> Vec<Gram> {
        let mut grams = Vec::new();
        self.each_gram(text, |g| grams.push(g));
        grams.sort_unstable();
        grams.dedup();
        grams
    }

    /// Normalise, then take the gram set.
    pub fn grams(&self, text: &str) -> Vec<Gram> {
        self.grams_of_normalized(&self.normalization.apply(text))
    }
}

/// Bits per character in a key.
const BITS: usize = 21;

/// The mask of the last `chars` characters of a key.
const fn low_chars(chars: usize) -> Gram {
    (1 << (BITS * chars)) - 1
}

/// The text of a gram key (for diagnostics and tests).
pub fn unpack(mut key: Gram) -> String {
    let mut chars = Vec::new();
    while key != 0 {
        let c = (key & low_chars(1)) as u32 - 1;
        chars.push(char::from_u32(c).expect("a gram key holds valid scalar values"));
        key >>= BITS;
    }
    chars.iter().rev().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(orders: &[i64]) -> GramConfig {
        GramConfig::new(orders, Normalization::default()).unwrap()
    }

    fn texts(c: &GramConfig, s: &str) -> Vec<String> {
        let mut v: Vec<String> = c.grams(s).into_iter().map(unpack).collect();
        v.sort();
        v
    }

    #[test]
    fn orders_are_validated() {
        assert!(GramConfig::new(&[], Normalization::default()).is_err());
        assert!(GramConfig::new(&[0], Normalization::default()).is_err());
        assert!(GramConfig::new(&[3, 3], Normalization::default()).is_err());
        assert!(GramConfig::new(&[7], Normalization::default()).is_err());
        assert_eq!(cfg(&[5, 3, 4]).orders(), &[3, 4, 5]);
    }

    #[test]
    fn short_text_is_one_gram() {
        let c = cfg(&[3, 4, 5]);
        assert_eq!(texts(&c, "ab"), vec!["ab"]);
        assert!(c.grams("").is_empty());
        assert_eq!(texts(&c, "abcd"), vec!["abc", "abcd", "bcd"]);
    }

    #[test]
    fn keys_round_trip_any_scalar() {
        let c = cfg(&[2]);
        let s = "\u{10ffff}\u{0}é";
        let got = texts(&c, s);
        assert_eq!(got.len(), 2);
        assert!(got.contains(&"\u{10ffff}\u{0}".to_string()));
    }

    #[test]
    fn sets_are_deduplicated() {
        let c = cfg(&[3]);
        assert_eq!(c.grams("aaaaaa").len(), 1);
    }
}
