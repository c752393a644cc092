//! A content fingerprint of a parallel corpus, computable in shards.
//!
//! The corpus is cut into blocks of [`BLOCK_ROWS`] pairs in row order; a block's
//! digest is XXH3-128 over its pairs, every text prefixed by its UTF-8 length
//! (so no two different corpora, or different splits of the same characters
//! into texts, feed the hash the same bytes); the fingerprint is XXH3-128 over
//! the block digests in order. Shards that start on a block boundary digest
//! their blocks independently, and [`combine`] gives the fingerprint of the
//! whole corpus, equal to the one computed on one machine.

use xxhash_rust::xxh3::{xxh3_128, Xxh3};

use crate::error::{Error, Result};

/// Pairs per block; shards of a corpus must start on a multiple of it.
pub const BLOCK_ROWS: u64 = 1 << 10;

#[derive(Clone, Default)]
pub struct Fingerprint {
    block: Xxh3,
    in_block: u64,
    digests: Vec<u128>,
    rows: u64,
}

impl Fingerprint {
    pub fn new() -> Self {
        Self::default()
    }

    /// Take in the next pairs (any number, blocks are cut here).
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
                self.block.update(&(text.len() as u64).to_le_bytes());
                self.block.update(text.as_bytes());
            }
            self.in_block += 1;
            self.rows += 1;
            if self.in_block == BLOCK_ROWS {
                self.digests.push(self.block.digest128());
                self.block = Xxh3::new();
                self.in_block = 0;
            }
        }
        Ok(())
    }

    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// The digests of the blocks taken in so far, the last one possibly partial.
    pub fn block_digests(&self) -> Vec<u128> {
        let mut out = self.digests.clone();
        if self.in_block > 0 {
            out.push(self.block.digest128());
        }
        out
    }

    pub fn digest(&self) -> u128 {
        combine(&self.block_digests())
    }
}

/// The fingerprint of a corpus from its block digests in order.
pub fn combine(block_digests: &[u128]) -> u128 {
    let bytes: Vec<u8> = block_digests.iter().flat_map(|d| d.to_le_bytes()).collect();
    xxh3_128(&bytes)
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
    fn shards_on_block_boundaries_combine_to_the_whole() {
        let rows = (BLOCK_ROWS * 2 + 7) as usize;
        let src: Vec<String> = (0..rows).map(|i| format!("s{i}")).collect();
        let tgt: Vec<String> = (0..rows).map(|i| format!("t{i}")).collect();
        let mut whole = Fingerprint::new();
        whole.update(&src, &tgt).unwrap();
        let cut = BLOCK_ROWS as usize;
        let mut digests = Vec::new();
        for (a, b) in [(0, cut), (cut, rows)] {
            let mut shard = Fingerprint::new();
            shard.update(&src[a..b], &tgt[a..b]).unwrap();
            digests.extend(shard.block_digests());
        }
        assert_eq!(combine(&digests), whole.digest());
        assert_eq!(whole.block_digests().len(), 3);
    }

    #[test]
    fn misaligned_blocks_are_refused() {
        let mut f = Fingerprint::new();
        assert!(f.update(&["a"], &[]).is_err());
        assert_eq!(f.rows(), 0);
    }
}
