//! Normalisation and gram sets of single texts, and gram counts of many.

use pyo3::prelude::*;
use rayon::prelude::*;

use super::errors::to_py;
use super::settings::PyGramSettings;
use super::texts::Texts;
use crate::grams::unpack;
use crate::pool::pool;

/// Normalise a text for exposure (the settings' orders play no part).
#[pyfunction]
pub(super) fn normalize(text: &str, settings: &Bound<'_, PyGramSettings>) -> String {
    settings.get().config.normalization.apply(text)
}

/// The sorted gram set of a text (after normalisation).
#[pyfunction]
pub(super) fn grams(text: &str, settings: &Bound<'_, PyGramSettings>) -> Vec<String> {
    let mut out: Vec<String> = settings
        .get()
        .config
        .grams(text)
        .into_iter()
        .map(unpack)
        .collect();
    out.sort();
    out
}

/// Normalise every text and count its distinct grams; returns the total.
#[pyfunction]
#[pyo3(signature = (texts, settings, threads=0))]
pub(super) fn count_grams(
    py: Python<'_>,
    texts: Bound<'_, PyAny>,
    settings: &Bound<'_, PyGramSettings>,
    threads: usize,
) -> PyResult<u64> {
    let config = &settings.get().config;
    let texts = Texts::new("texts", &texts, 0)?;
    let texts = texts.strs();
    let pool = pool(threads).map_err(to_py)?;
    Ok(py.detach(|| pool.install(|| texts.par_iter().map(|t| config.grams(t).len() as u64).sum())))
}
