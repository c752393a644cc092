//! Posting lists stored bit-packed, in flat arrays.
//!
//! All lists are laid end to end in one sequence of *positions* (`offsets[g]`
//! is where list `g` starts), cut into blocks of [`BLOCK`] positions whatever
//! the list boundaries. A block stores one entry per position in `w` bits,
//! `w` the width of its largest entry (0 to 32), so a block takes `16 * w`
//! bytes of `packed`. The entry at a position is
//!
//! - 0 at the first position of a block (its value is in `block_first`),
//! - else the value itself at the first position of a list,
//! - else the gap to the previous value of the same list.
//!
//! Any block can be decoded on its own from a list start or its own start,
//! and the first values of the blocks that begin inside a list are that
//! list's skip table: a search for a value jumps by binary search to the one
//! block that can hold it.

use super::storage::Array;

/// Positions per block.
pub const BLOCK: usize = 128;

/// Bytes read past a block's last entry by [`unpack`]; `packed`
/// ends with this many zero bytes.
const PADDING: usize = 8;

#[derive(Debug, Clone, Default)]
pub struct PackedLists {
    /// Start of each list in positions (one more entry than lists).
    pub(crate) offsets: Array<u64>,
    /// The value at the first position of each block.
    pub(crate) block_first: Array<u32>,
    /// Start of each block in `packed` (one more entry than blocks).
    pub(crate) block_start: Array<u64>,
    /// The entries, bit-packed, then [`PADDING`] zero bytes.
    pub(crate) packed: Array<u8>,
}

/// The blocks encoded from one run of positions starting at a block boundary.
#[derive(Debug, Default)]
pub struct EncodedBlocks {
    first: Vec<u32>,
    /// Bytes of each block.
    bytes: Vec<u64>,
    packed: Vec<u8>,
}

fn bits(v: u32) -> u32 {
    32 - v.leading_zeros()
}

/// Encode the values at positions `start .. start + values.len()` (`start` a
/// multiple of [`BLOCK`]) of the lists delimited by `offsets`.
pub fn encode_blocks(offsets: &[u64], start: u64, values: &[u32]) -> EncodedBlocks {
    debug_assert!(start.is_multiple_of(BLOCK as u64));
    let mut out = EncodedBlocks::default();
    // The first list start at or after the current position.
    let mut next_list = offsets.partition_point(|&o| o < start);
    let mut entries = [0u32; BLOCK];
    for (b, chunk) in values.chunks(BLOCK).enumerate() {
        let block_pos = start + (b * BLOCK) as u64;
        let mut width = 0;
        for (j, &v) in chunk.iter().enumerate() {
            let pos = block_pos + j as u64;
            while next_list < offsets.len() && offsets[next_list] < pos {
                next_list += 1;
            }
            let list_start = next_list < offsets.len() && offsets[next_list] == pos;
            entries[j] = if j == 0 {
                0
            } else if list_start {
                v
            } else {
                v - chunk[j - 1]
            };
            width = width.max(bits(entries[j]));
        }
        entries[chunk.len()..].fill(0);
        out.first.push(chunk[0]);
        out.bytes.push(16 * width as u64);
        let mut acc = 0u64;
        let mut held = 0;
        for &e in &entries {
            acc |= (e as u64) << held;
            held += width;
            while held >= 8 {
                out.packed.push(acc as u8);
                acc >>= 8;
                held -= 8;
            }
        }
    }
    out
}

impl PackedLists {
    /// Lists from the blocks of consecutive runs of positions, in order.
    pub fn from_blocks(offsets: Vec<u64>, runs: Vec<EncodedBlocks>) -> PackedLists {
        let blocks: usize = runs.iter().map(|r| r.first.len()).sum();
        let bytes: usize = runs.iter().map(|r| r.packed.len()).sum();
        let mut block_first = Vec::with_capacity(blocks);
        let mut block_start = Vec::with_capacity(blocks + 1);
        let mut packed = Vec::with_capacity(bytes + PADDING);
        block_start.push(0);
        for run in runs {
            block_first.extend_from_slice(&run.first);
            for b in run.bytes {
                block_start.push(block_start.last().unwrap() + b);
            }
            packed.extend_from_slice(&run.packed);
        }
        packed.extend_from_slice(&[0; PADDING]);
        PackedLists {
            offsets: Array::from(offsets),
            block_first: Array::from(block_first),
            block_start: Array::from(block_start),
            packed: Array::from(packed),
        }
    }

    /// Lists given whole (`lists[g]` sorted).
    #[cfg(test)]
    pub fn from_lists(lists: &[Vec<u32>]) -> PackedLists {
        let mut offsets = vec![0u64];
        for list in lists {
            offsets.push(offsets.last().unwrap() + list.len() as u64);
        }
        let values: Vec<u32> = lists.concat();
        let run = encode_blocks(&offsets, 0, &values);
        PackedLists::from_blocks(offsets, vec![run])
    }

    /// Values in all lists.
    pub fn len(&self) -> u64 {
        self.offsets.last().copied().unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn df(&self, list: u32) -> usize {
        let g = list as usize;
        (self.offsets[g + 1] - self.offsets[g]) as usize
    }

    pub fn cursor(&self, list: u32) -> Cursor<'_> {
        let g = list as usize;
        Cursor {
            lists: self,
            end: self.offsets[g + 1],
            bytes: &[],
            width: 0,
            j0: 0,
            buf: [0; BLOCK],
            n: 0,
            len: 0,
            i: 0,
            next: self.offsets[g],
        }
    }

    /// Block `b`'s bytes (with the padding after them) and its width.
    #[inline]
    fn block(&self, b: usize) -> (&[u8], u32) {
        let start = self.block_start[b] as usize;
        let end = self.block_start[b + 1] as usize;
        (
            &self.packed[start..end + PADDING],
            ((end - start) / 16) as u32,
        )
    }

    pub fn nbytes(&self) -> usize {
        self.offsets.nbytes()
            + self.block_first.nbytes()
            + self.block_start.nbytes()
            + self.packed.nbytes()
    }

    /// Whether the arrays fit together: lengths, block starts and widths,
    /// padding. (Whether the lists are sorted is for the caller to decode.)
    pub fn check_layout(&self) -> Result<(), &'static str> {
        let offsets = &self.offsets;
        if offsets.is_empty() || offsets[0] != 0 {
            return Err("offsets do not start at 0");
        }
        if !offsets.windows(2).all(|w| w[0] <= w[1]) {
            return Err("offsets decrease");
        }
        let blocks = self.len().div_ceil(BLOCK as u64) as usize;
        if self.block_first.len() != blocks || self.block_start.len() != blocks + 1 {
            return Err("block arrays do not match the number of values");
        }
        if self.block_start[0] != 0 {
            return Err("block starts do not start at 0");
        }
        let widths_ok = self
            .block_start
            .windows(2)
            .all(|w| w[0] <= w[1] && (w[1] - w[0]).is_multiple_of(16) && w[1] - w[0] <= 16 * 32);
        if !widths_ok {
            return Err("a block's bytes are not 16 times a width of 0 to 32 bits");
        }
        if self.packed.len() as u64 != self.block_start[blocks] + PADDING as u64 {
            return Err("packed length differs from the block starts");
        }
        Ok(())
    }
}

/// The entries `j0 .. j0 + out.len()` of a block of `width`-bit entries.
#[inline]
fn unpack(bytes: &[u8], width: u32, j0: usize, out: &mut [u32]) {
    if width == 0 {
        out.fill(0);
        return;
    }
    let mask = (1u64 << width) - 1;
    let w = width as usize;
    for (k, slot) in out.iter_mut().enumerate() {
        let bit = (j0 + k) * w;
        let at = bit / 8;
        let word = u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
        *slot = ((word >> (bit % 8)) & mask) as u32;
    }
}

/// Entries decoded at a time when a seek needs more of a block.
const GROUP: usize = 16;

/// Reads one list in increasing order, decoding a block only as far as asked.
pub struct Cursor<'a> {
    lists: &'a PackedLists,
    /// The end of the list's positions.
    end: u64,
    /// The block being read: its bytes and width, and the entry of `buf[0]`.
    bytes: &'a [u8],
    width: u32,
    j0: usize,
    /// The list's `n` values in this block, the first `len` decoded, and the
    /// index of the current one.
    buf: [u32; BLOCK],
    n: usize,
    len: usize,
    i: usize,
    /// The position after this block's values.
    next: u64,
}

impl<'a> Cursor<'a> {
    /// Start reading at position `from` (the list start or a block start
    /// inside the list), up to the end of its block or of the list.
    fn start_block(&mut self, from: u64) {
        let lists: &'a PackedLists = self.lists;
        let b = (from / BLOCK as u64) as usize;
        let to = self.end.min((b as u64 + 1) * BLOCK as u64);
        let (bytes, width) = lists.block(b);
        self.bytes = bytes;
        self.width = width;
        self.j0 = (from % BLOCK as u64) as usize;
        if self.j0 == 0 {
            self.buf[0] = lists.block_first[b];
        } else {
            unpack(bytes, width, self.j0, &mut self.buf[..1]);
        }
        self.n = (to - from) as usize;
        self.len = 1;
        self.i = 0;
        self.next = to;
    }

    /// Decode this block's values up to index `upto` (at most `n`).
    fn decode_to(&mut self, upto: usize) {
        let upto = upto.min(self.n);
        let from = self.len;
        unpack(
            self.bytes,
            self.width,
            self.j0 + from,
            &mut self.buf[from..upto],
        );
        for k in from..upto {
            self.buf[k] = self.buf[k].wrapping_add(self.buf[k - 1]);
        }
        self.len = upto;
    }

    /// The current value, decoding more when needed.
    #[inline]
    pub fn current(&mut self) -> Option<u32> {
        if self.i == self.len {
            if self.len < self.n {
                self.decode_to(self.len + GROUP);
            } else if self.next >= self.end {
                return None;
            } else {
                self.start_block(self.next);
            }
        }
        Some(self.buf[self.i])
    }

    /// Move to the first value at least `target` (at or after the current
    /// one) and return it; `None` when the list has no such value.
    pub fn seek(&mut self, target: u32) -> Option<u32> {
        loop {
            while self.len < self.n && (self.len == self.i || self.buf[self.len - 1] < target) {
                self.decode_to(self.len + GROUP);
            }
            if self.i < self.len && self.buf[self.len - 1] >= target {
                self.i += self.buf[self.i..self.len].partition_point(|&v| v < target);
                return Some(self.buf[self.i]);
            }
            if self.next >= self.end {
                self.n = self.len;
                self.i = self.len;
                return None;
            }
            // Blocks that begin inside the list from here on: jump to the
            // last whose first value is at most the target.
            let b0 = self.next.div_ceil(BLOCK as u64) as usize;
            let b_last = ((self.end - 1) / BLOCK as u64) as usize;
            let mut from = self.next;
            if b0 <= b_last && self.lists.block_first[b0] <= target {
                let k = self.lists.block_first[b0..=b_last].partition_point(|&v| v <= target);
                from = ((b0 + k - 1) * BLOCK) as u64;
            }
            self.start_block(from);
        }
    }

    /// Call `f` on every value from the current one up to (not including) `hi`.
    #[inline]
    pub fn for_each_below(&mut self, hi: u32, mut f: impl FnMut(u32)) {
        while let Some(first) = self.current() {
            if first >= hi {
                return;
            }
            self.decode_to(self.n);
            let block = &self.buf[self.i..self.len];
            let n = block.partition_point(|&v| v < hi);
            for &v in &block[..n] {
                f(v);
            }
            self.i += n;
            if self.i < self.len {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decoded(p: &PackedLists, g: u32) -> Vec<u32> {
        let mut out = Vec::new();
        p.cursor(g).for_each_below(u32::MAX, |v| out.push(v));
        out
    }

    fn lists_of(seed: u64, count: usize) -> Vec<Vec<u32>> {
        // A small linear congruential generator: lists of many lengths and gaps.
        let mut state = seed;
        let mut next = move || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) as u32
        };
        (0..count)
            .map(|_| {
                let len = [0, 1, 2, 127, 128, 129, 300][next() as usize % 7];
                let step = 1 + next() % [1, 3, 1000, 1 << 20][next() as usize % 4];
                let mut v = next() % 50;
                (0..len)
                    .map(|_| {
                        v += 1 + next() % step;
                        v
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn lists_decode_to_what_was_encoded() {
        for seed in 0..20 {
            let lists = lists_of(seed, 40);
            let p = PackedLists::from_lists(&lists);
            p.check_layout().unwrap();
            for (g, list) in lists.iter().enumerate() {
                assert_eq!(p.df(g as u32), list.len());
                assert_eq!(&decoded(&p, g as u32), list, "seed {seed} list {g}");
            }
        }
    }

    #[test]
    fn runs_encoded_apart_equal_one_run() {
        let lists = lists_of(7, 60);
        let whole = PackedLists::from_lists(&lists);
        let mut offsets = vec![0u64];
        for list in &lists {
            offsets.push(offsets.last().unwrap() + list.len() as u64);
        }
        let values = lists.concat();
        let runs = values
            .chunks(2 * BLOCK)
            .enumerate()
            .map(|(i, c)| encode_blocks(&offsets, (i * 2 * BLOCK) as u64, c))
            .collect();
        let split = PackedLists::from_blocks(offsets, runs);
        assert_eq!(whole.packed.as_bytes(), split.packed.as_bytes());
        assert_eq!(&whole.block_start[..], &split.block_start[..]);
    }

    #[test]
    fn seek_finds_the_first_value_not_less() {
        for seed in 0..10 {
            let lists = lists_of(seed, 30);
            let p = PackedLists::from_lists(&lists);
            for (g, list) in lists.iter().enumerate() {
                let top = list.last().copied().unwrap_or(0) + 2;
                // Increasing targets from one cursor, as a merge does.
                let mut cursor = p.cursor(g as u32);
                let mut target = 0;
                while target < top {
                    let want = list.iter().copied().find(|&v| v >= target);
                    assert_eq!(
                        cursor.seek(target),
                        want,
                        "seed {seed} list {g} target {target}"
                    );
                    target += 1 + target / 3;
                }
                // A scan of a window, as the size window cuts a list.
                let (lo, hi) = (top / 3, 2 * top / 3);
                let mut cursor = p.cursor(g as u32);
                let mut seen = Vec::new();
                if cursor.seek(lo).is_some() {
                    cursor.for_each_below(hi, |v| seen.push(v));
                }
                let want: Vec<u32> = list
                    .iter()
                    .copied()
                    .filter(|&v| v >= lo && v < hi)
                    .collect();
                assert_eq!(seen, want);
            }
        }
    }

    /// Sorted lists of distinct values from `(start, gap)` draws.
    fn sorted_lists() -> impl proptest::strategy::Strategy<Value = Vec<Vec<u32>>> {
        use proptest::prelude::*;
        let gaps = prop_oneof![1u32..3, 1u32..300, 1u32..1_000_000];
        let list = (0u32..1000, prop::collection::vec(gaps, 0..400)).prop_map(|(start, gaps)| {
            let mut v = start;
            gaps.iter()
                .map(|g| {
                    v = v.saturating_add(*g);
                    v
                })
                .collect::<Vec<u32>>()
        });
        prop::collection::vec(list, 1..12).prop_map(|lists| {
            lists
                .into_iter()
                .map(|mut l| {
                    l.dedup();
                    l
                })
                .collect()
        })
    }

    proptest::proptest! {
        #[test]
        fn seeks_and_scans_agree_with_the_plain_lists(
            lists in sorted_lists(),
            targets in proptest::collection::vec(0u32..2_000_000, 1..40),
        ) {
            let p = PackedLists::from_lists(&lists);
            p.check_layout().unwrap();
            let mut targets = targets;
            targets.sort_unstable();
            for (g, list) in lists.iter().enumerate() {
                proptest::prop_assert_eq!(&decoded(&p, g as u32), list);
                let mut cursor = p.cursor(g as u32);
                for &t in &targets {
                    let want = list.iter().copied().find(|&v| v >= t);
                    proptest::prop_assert_eq!(cursor.seek(t), want);
                }
                let (lo, hi) = (targets[0], targets[targets.len() / 2]);
                let mut cursor = p.cursor(g as u32);
                let mut seen = Vec::new();
                if cursor.seek(lo).is_some() {
                    cursor.for_each_below(hi, |v| seen.push(v));
                }
                let want: Vec<u32> = list.iter().copied().filter(|&v| v >= lo && v < hi).collect();
                proptest::prop_assert_eq!(seen, want);
            }
        }
    }

    #[test]
    fn widths_follow_the_gaps() {
        let dense: Vec<u32> = (0..256).collect();
        let p = PackedLists::from_lists(&[dense]);
        // Gaps of 1 take one bit: 16 bytes per block of 128.
        assert_eq!(&p.block_start[..], &[0, 16, 32]);
        let p = PackedLists::from_lists(&[vec![], vec![5], vec![], vec![u32::MAX - 1]]);
        assert_eq!(decoded(&p, 3), vec![u32::MAX - 1]);
        assert_eq!(decoded(&p, 0), Vec::<u32>::new());
    }
}
