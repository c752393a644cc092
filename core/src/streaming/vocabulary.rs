//! The test set's gram vocabulary: gram keys to dense ids, in an
//! open-addressing table (linear probing) whose slots can be fetched ahead of
//! a lookup, so that the lookups of a training row's grams overlap in memory
//! instead of waiting for one another. A [`Text`] is a text written in those
//! ids, as the prefix index, the test side and the probes all read it; the
//! sets emptied in constant time, of grams ([`GramSet`]) and of ids
//! ([`Stamps`]), serve one text at a time.

use crate::grams::Gram;

use super::fetch::prefetch;

/// One slot: a gram key (as halves) and its id; key 0 marks an empty slot,
/// as no gram has key 0.
#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    hi: u64,
    lo: u64,
    id: u32,
}

#[derive(Debug, Clone)]
pub(crate) struct Vocabulary {
    slots: Vec<Slot>,
    /// `64 - log2(slots.len())`: a hash's top bits pick the home slot.
    shift: u32,
    len: usize,
}

fn halves(g: Gram) -> (u64, u64) {
    ((g >> 64) as u64, g as u64)
}

/// Fibonacci hashing of the two halves: the top bits of the product depend
/// on every bit of the key; the top `64 - shift` of them pick a home slot.
fn home(g: Gram, shift: u32) -> usize {
    let (hi, lo) = halves(g);
    ((lo ^ hi.rotate_left(32)).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> shift) as usize
}

impl Vocabulary {
    /// The grams of `sets`, numbered in order of first appearance.
    pub(crate) fn new<'a>(sets: impl Iterator<Item = &'a Vec<Gram>>) -> Vocabulary {
        let mut vocab = Vocabulary::with_capacity(16);
        for set in sets {
            for &g in set {
                vocab.insert(g);
            }
        }
        vocab
    }

    /// The grams of `sets`, numbered by how many sets hold them, most first
    /// (ties in order of first appearance): the grams of many texts are then
    /// the lowest ids, where the overlap counter keeps bitsets.
    pub(crate) fn by_frequency<'a>(
        sets: impl Iterator<Item = &'a Vec<Gram>> + Clone,
    ) -> Vocabulary {
        let mut vocab = Vocabulary::new(sets.clone());
        let mut df = vec![0u32; vocab.len];
        for set in sets {
            for &g in set {
                df[vocab.get(g).expect("numbered above") as usize] += 1;
            }
        }
        let mut order: Vec<u32> = (0..vocab.len as u32).collect();
        order.sort_by_key(|&id| std::cmp::Reverse(df[id as usize]));
        let mut renumbered = vec![0u32; vocab.len];
        for (new, &old) in order.iter().enumerate() {
            renumbered[old as usize] = new as u32;
        }
        for slot in vocab.slots.iter_mut().filter(|s| (s.hi | s.lo) != 0) {
            slot.id = renumbered[slot.id as usize];
        }
        vocab
    }

    fn with_capacity(slots: usize) -> Vocabulary {
        Vocabulary {
            slots: vec![Slot::default(); slots],
            shift: 64 - slots.trailing_zeros(),
            len: 0,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    fn home(&self, g: Gram) -> usize {
        home(g, self.shift)
    }

    /// The slot holding `g`, or the empty slot where it would go.
    fn find(&self, g: Gram) -> usize {
        let (hi, lo) = halves(g);
        let mask = self.slots.len() - 1;
        let mut i = self.home(g);
        loop {
            let s = &self.slots[i];
            if (s.hi == hi && s.lo == lo) || (s.hi | s.lo) == 0 {
                return i;
            }
            i = (i + 1) & mask;
        }
    }

    /// The id of `g`, numbering it next if it is new.
    fn insert(&mut self, g: Gram) -> u32 {
        debug_assert!(g != 0);
        if 4 * (self.len + 1) > 3 * self.slots.len() {
            let mut grown = Vocabulary::with_capacity(2 * self.slots.len());
            for s in self.slots.iter().filter(|s| (s.hi | s.lo) != 0) {
                let i = grown.find(((s.hi as u128) << 64) | s.lo as u128);
                grown.slots[i] = *s;
            }
            grown.len = self.len;
            *self = grown;
        }
        let i = self.find(g);
        let slot = &mut self.slots[i];
        if (slot.hi | slot.lo) == 0 {
            let (hi, lo) = halves(g);
            *slot = Slot {
                hi,
                lo,
                id: self.len as u32,
            };
            self.len += 1;
        }
        slot.id
    }

    #[inline]
    pub(crate) fn get(&self, g: Gram) -> Option<u32> {
        let slot = &self.slots[self.find(g)];
        ((slot.hi | slot.lo) != 0).then_some(slot.id)
    }

    /// Fetch the home slot of `g` ahead of a [`Vocabulary::get`].
    pub(crate) fn prefetch(&self, g: Gram) {
        prefetch(&self.slots, self.home(g));
    }
}

/// A text as ids in the test vocabulary (sorted where a merge needs them),
/// and the size of its full gram set.
#[derive(Debug, Clone, Default)]
pub(crate) struct Text {
    pub(crate) size: u32,
    pub(crate) ids: Vec<u32>,
}

/// A text's ids in the vocabulary, in gram order (sort them to merge).
pub(crate) fn text(vocab: &Vocabulary, grams: &[Gram]) -> Text {
    let ids: Vec<u32> = grams.iter().filter_map(|&g| vocab.get(g)).collect();
    Text {
        size: grams.len() as u32,
        ids,
    }
}

pub(crate) fn sorted(mut t: Text) -> Text {
    t.ids.sort_unstable();
    t
}

/// A set of gram keys emptied in constant time, to count the distinct grams
/// of one text: a slot is filled when it holds the current stamp.
#[derive(Debug, Clone, Default)]
pub(crate) struct GramSet {
    slots: Vec<(u64, u64, u32)>,
    shift: u32,
    stamp: u32,
}

impl GramSet {
    /// Empty the set, with room for `most` keys at most half full.
    pub(crate) fn clear(&mut self, most: usize) {
        let wanted = (2 * most).next_power_of_two().max(64);
        if wanted > self.slots.len() {
            self.slots = vec![(0, 0, 0); wanted];
            self.shift = 64 - wanted.trailing_zeros();
            self.stamp = 0;
        }
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.slots.fill((0, 0, 0));
            self.stamp = 1;
        }
    }

    /// Add `g`; whether it was new. At most the `most` keys of the last
    /// [`GramSet::clear`] may be added.
    pub(crate) fn insert(&mut self, g: Gram) -> bool {
        let (hi, lo) = halves(g);
        let mask = self.slots.len() - 1;
        let mut i = home(g, self.shift);
        loop {
            let slot = &mut self.slots[i];
            if slot.2 != self.stamp {
                *slot = (hi, lo, self.stamp);
                return true;
            }
            if slot.0 == hi && slot.1 == lo {
                return false;
            }
            i = (i + 1) & mask;
        }
    }
}

/// A set of vocabulary ids emptied in constant time: an id is in the set
/// when its stamp is the current one. Empty it before first use.
pub(crate) struct Stamps {
    stamps: Vec<u32>,
    current: u32,
}

impl Stamps {
    pub(crate) fn new(vocab_len: usize) -> Stamps {
        Stamps {
            stamps: vec![0; vocab_len],
            current: 0,
        }
    }

    pub(crate) fn clear(&mut self) {
        self.current = self.current.wrapping_add(1);
        if self.current == 0 {
            self.stamps.fill(0);
            self.current = 1;
        }
    }

    /// Add `id`; whether it was new.
    pub(crate) fn insert(&mut self, id: u32) -> bool {
        let stamp = &mut self.stamps[id as usize];
        let new = *stamp != self.current;
        *stamp = self.current;
        new
    }

    pub(crate) fn contains(&self, id: u32) -> bool {
        self.stamps[id as usize] == self.current
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn ids_follow_first_appearance_and_survive_growth() {
        // Keys with shared halves, as grams of one text have.
        let keys: Vec<Gram> = (1..5000u128)
            .map(|i| ((i % 97) << 84) | ((i % 13) << 64) | (i * 2_097_153))
            .collect();
        let sets = [keys[..3000].to_vec(), keys[2000..].to_vec(), keys.clone()];
        let vocab = Vocabulary::new(sets.iter());
        let mut want: HashMap<Gram, u32> = HashMap::new();
        for &g in sets.iter().flatten() {
            let next = want.len() as u32;
            want.entry(g).or_insert(next);
        }
        assert_eq!(vocab.len(), want.len());
        for (&g, &id) in &want {
            assert_eq!(vocab.get(g), Some(id));
        }
        assert_eq!(vocab.get(7 << 100), None);
        assert_eq!(vocab.get(u128::MAX), None);
    }

    #[test]
    fn ids_by_frequency_number_the_most_held_grams_first() {
        let sets = [vec![5u128, 7, 9], vec![7, 9, 11], vec![9, 13]];
        let vocab = Vocabulary::by_frequency(sets.iter());
        let ids: Vec<Option<u32>> = [9u128, 7, 5, 11, 13, 4]
            .iter()
            .map(|&g| vocab.get(g))
            .collect();
        assert_eq!(ids, [Some(0), Some(1), Some(2), Some(3), Some(4), None]);
        assert_eq!(vocab.len(), 5);
    }

    #[test]
    fn gram_sets_count_distinct_keys_across_clears() {
        let mut set = GramSet::default();
        for round in 0..300u128 {
            let keys: Vec<Gram> = (0..round % 150)
                .map(|i| (i % 37) << (i % 90) | round)
                .collect();
            set.clear(keys.len());
            let want: std::collections::HashSet<Gram> = keys.iter().copied().collect();
            let got = keys.iter().filter(|&&g| set.insert(g)).count();
            assert_eq!(got, want.len(), "round {round}");
        }
    }
}
