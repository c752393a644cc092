//! A content fingerprint of a parallel corpus: XXH3-128 over its pairs in row
//! order, every text prefixed by its UTF-8 length, so that no two different
//! corpora (or different splits of the same characters into texts) feed the
//! hash the same bytes. Blocks can be fed one after another.

use xxhash_rust::xxh3::Xxh3;

use crate::error::{Error, Result};

#[derive(Clone, Default)]
pub struct Fingerprint {
    hasher: Xxh3,
    rows: u64,
}

impl Fingerprint {
    pub fn new() -> Self {
        Self::default()
    }

    /// Take in the next block of pairs.
    pub fn update<S: AsRef<str>>(&mut self, sources: &[S], targets: &[S]) -> Result<()> {
        if sources.len() != targets.len() {
            return Err(Error::Misaligned {
                what: "training sources and targets".into(),
                left: sources.len(),
                right: targets.len(),
            });
        }
        for (source, target) in sources.iter().zip(targets) {
            for text in [source.as_ref(), target.as_ref()] {
                self.hasher.update(&(text.len() as u64).to_le_bytes());
                self.hasher.update(text.as_bytes());
            }
        }
        self.rows += sources.len() as u64;
        Ok(())
    }

    pub fn rows(&self) -> u64 {
        self.rows
    }

    pub fn digest(&self) -> u128 {
        self.hasher.digest128()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(blocks: &[(&[&str], &[&str])]) -> u128 {
        let mut f = Fingerprint::new();
        for (s, t) in blocks {
            f.update(s, t).unwrap();
        }
        f.digest()
    }

    #[test]
    fn blocks_do_not_matter_but_text_boundaries_do() {
        let whole = of(&[(&["a", "bc"], &["x", "y"])]);
        assert_eq!(whole, of(&[(&["a"], &["x"]), (&["bc"], &["y"])]));
        assert_ne!(whole, of(&[(&["ab", "c"], &["x", "y"])]));
        assert_ne!(whole, of(&[(&["a", "bc"], &["y", "x"])]));
        assert_ne!(of(&[(&["a"], &["b"])]), of(&[(&["b"], &["a"])]));
    }

    #[test]
    fn misaligned_blocks_are_refused() {
        let mut f = Fingerprint::new();
        assert!(f.update(&["a"], &[]).is_err());
        assert_eq!(f.rows(), 0);
    }
}
