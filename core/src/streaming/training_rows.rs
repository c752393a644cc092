//! Training rows read against the test vocabularies: a thread's [`Reader`]
//! writes a normalised training text in vocabulary ids (grams outside the
//! vocabulary only counted), [`SideTexts`] holds the distinct texts of one
//! side of a block, and a [`Row`] is one training pair, read, with the test
//! items it matches exactly.

use crate::grams::{Gram, GramConfig};

use super::vocabulary::{GramSet, Stamps, Text, Vocabulary};

/// How many grams ahead of its lookup a row's gram is fetched.
const LOOKUP_AHEAD: usize = 8;

/// Scratch of one thread reading training texts: which vocabulary ids the
/// current text has shown, and its grams outside the vocabulary.
pub(crate) struct Reader {
    /// The ids of the text read last.
    pub(crate) seen: Stamps,
    grams: Vec<Gram>,
    unknown: GramSet,
}

impl Reader {
    pub(crate) fn new(vocab_len: usize) -> Reader {
        Reader {
            seen: Stamps::new(vocab_len),
            grams: Vec::new(),
            unknown: GramSet::default(),
        }
    }

    /// A normalised text's ids in `vocab` (each once, in no order) and the
    /// size of its gram set (grams outside the vocabulary counted once
    /// through a set of their own).
    pub(crate) fn text(&mut self, config: &GramConfig, vocab: &Vocabulary, text: &str) -> Text {
        let (seen, grams, unknown) = (&mut self.seen, &mut self.grams, &mut self.unknown);
        seen.clear();
        grams.clear();
        config.each_gram(text, |g| grams.push(g));
        unknown.clear(grams.len());
        let mut ids = Vec::with_capacity(grams.len());
        let mut unknown_grams = 0;
        for (j, &g) in grams.iter().enumerate() {
            // A later gram's slot is fetched while this one is looked up.
            if let Some(&ahead) = grams.get(j + LOOKUP_AHEAD) {
                vocab.prefetch(ahead);
            }
            match vocab.get(g) {
                Some(id) => {
                    if seen.insert(id) {
                        ids.push(id);
                    }
                }
                None => unknown_grams += unknown.insert(g) as u32,
            }
        }
        Text {
            size: ids.len() as u32 + unknown_grams,
            ids,
        }
    }
}

/// The distinct texts of one side of a block, normalised and read, and the
/// text of each row.
pub(crate) struct SideTexts {
    pub(crate) texts: Vec<(String, Text)>,
    pub(crate) of_row: Vec<u32>,
}

impl SideTexts {
    pub(crate) fn of(&self, row: usize) -> &(String, Text) {
        &self.texts[self.of_row[row] as usize]
    }
}

/// One training row, read.
pub(crate) struct Row<'a> {
    pub(crate) source: &'a Text,
    pub(crate) target: &'a Text,
    pub(crate) exact: Vec<(u32, bool, bool, bool)>,
}
