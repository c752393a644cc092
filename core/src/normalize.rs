//! Text normalisation for exposure: NFKC, then the optional steps, then
//! whitespace (strip and collapse runs to one space).
//!
//! Every step is defined character by character so that the plain-Python
//! reference can follow it exactly:
//! * `lowercase`: each character is replaced by its full Unicode lowercase
//!   mapping, without context (capital sigma always becomes `σ`).
//! * `strip_diacritics`: canonical decomposition (NFD), removal of every
//!   character whose canonical combining class is not 0, then NFC.
//! * `normalize_punctuation`: the typographic quotes, primes, guillemets and
//!   dashes of [`punctuation`] are mapped to ASCII `'`, `"` and `-`.
//! * whitespace: the characters Python's `str.isspace()` accepts; leading and
//!   trailing ones are removed, inner runs become one U+0020.

use unicode_normalization::char::canonical_combining_class;
use unicode_normalization::{is_nfkc_quick, IsNormalized, UnicodeNormalization};

/// The optional normalisation steps (NFKC and whitespace are always applied).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Normalization {
    pub lowercase: bool,
    pub strip_diacritics: bool,
    pub normalize_punctuation: bool,
}

/// Whitespace as Python's `str.isspace()` defines it.
pub fn is_space(c: char) -> bool {
    matches!(
        c,
        '\u{9}'..='\u{d}'
            | '\u{1c}'..='\u{20}'
            | '\u{85}'
            | '\u{a0}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200a}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202f}'
            | '\u{205f}'
            | '\u{3000}'
    )
}

/// The ASCII replacement of a typographic punctuation mark, if it has one.
pub fn punctuation(c: char) -> Option<char> {
    match c {
        '\u{2018}' | '\u{2019}' | '\u{201a}' | '\u{201b}' | '\u{2032}' | '\u{2035}'
        | '\u{2039}' | '\u{203a}' => Some('\''),
        '\u{201c}' | '\u{201d}' | '\u{201e}' | '\u{201f}' | '\u{2033}' | '\u{2036}' | '\u{ab}'
        | '\u{bb}' => Some('"'),
        '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2015}'
        | '\u{2212}' => Some('-'),
        _ => None,
    }
}

impl Normalization {
    /// Normalise one text.
    pub fn apply(&self, text: &str) -> String {
        // Most text (all ASCII, for one) is in NFKC already: a quick check
        // that answers yes spares the decomposition.
        let mut s: String = match is_nfkc_quick(text.chars()) {
            IsNormalized::Yes => text.to_owned(),
            _ => text.nfkc().collect(),
        };
        if self.lowercase {
            s = s.chars().flat_map(char::to_lowercase).collect();
        }
        if self.strip_diacritics {
            s = s
                .nfd()
                .filter(|&c| canonical_combining_class(c) == 0)
                .nfc()
                .collect();
        }
        if self.normalize_punctuation {
            s = s.chars().map(|c| punctuation(c).unwrap_or(c)).collect();
        }
        collapse_spaces(&s)
    }

    /// A short name for signatures, e.g. `nfkc_ws` or `nfkc_ws_lc_nodia_punct`.
    pub fn name(&self) -> String {
        let mut name = String::from("nfkc_ws");
        if self.lowercase {
            name.push_str("_lc");
        }
        if self.strip_diacritics {
            name.push_str("_nodia");
        }
        if self.normalize_punctuation {
            name.push_str("_punct");
        }
        name
    }
}

fn collapse_spaces(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for word in s.split(is_space).filter(|w| !w.is_empty()) {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_nfkc_and_whitespace_only() {
        let n = Normalization::default();
        assert_eq!(n.apply("  ＡＢ\u{3000}c \t\n d  "), "AB c d");
        assert_eq!(n.apply("Élan “quoted”"), "Élan “quoted”");
        assert_eq!(n.apply(" \u{1c} "), "");
    }

    #[test]
    fn optional_steps() {
        let all = Normalization {
            lowercase: true,
            strip_diacritics: true,
            normalize_punctuation: true,
        };
        assert_eq!(all.apply("Élan “Quoted” — ΣΑΣ"), "elan \"quoted\" - σασ");
    }
}
