//! The Python bindings (the module `tame_mt_core`): a thin layer that converts
//! arguments, releases the GIL for corpus-sized work, polls for Ctrl-C
//! between blocks, and turns core errors into the module's own typed
//! exceptions. No algorithm lives here; each file binds one concept.

mod arrow_texts;
mod decontamination;
mod errors;
mod exposures;
mod fingerprint;
mod grams;
mod indexed;
mod settings;
mod streaming;
mod texts;

use pyo3::prelude::*;

use crate::fingerprint::BLOCK_ROWS;
use crate::indexed::index_file::FORMAT_VERSION;

/// True once Ctrl-C (or another signal handler) has raised in Python.
fn interrupted() -> bool {
    Python::attach(|py| py.check_signals().is_err())
}

#[pymodule]
#[pyo3(name = "tame_mt_core")]
fn core_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    m.add_class::<settings::PyGramSettings>()?;
    m.add_function(wrap_pyfunction!(grams::normalize, m)?)?;
    m.add_function(wrap_pyfunction!(grams::grams, m)?)?;
    m.add_function(wrap_pyfunction!(grams::count_grams, m)?)?;
    m.add_class::<streaming::PyStreamingAudit>()?;
    m.add_class::<indexed::PyTrainingIndex>()?;
    m.add_class::<decontamination::PyDecontaminator>()?;
    m.add_class::<fingerprint::PyCorpusFingerprint>()?;
    m.add_class::<arrow_texts::PyArrowTexts>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("INDEX_FORMAT_VERSION", FORMAT_VERSION)?;
    m.add("FINGERPRINT_BLOCK_ROWS", BLOCK_ROWS)?;
    Ok(())
}
