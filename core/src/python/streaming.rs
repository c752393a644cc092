//! `StreamingAudit`: one test set audited against training pairs fed in
//! blocks, with the GIL released and Ctrl-C polled while a block is audited.

use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::errors::to_py;
use super::exposures::exposures_to_dict;
use super::interrupted;
use super::settings::PyGramSettings;
use super::texts::{TestTexts, Texts};
use crate::StreamingAudit;

/// One test set audited against training pairs streamed in blocks.
#[pyclass(name = "StreamingAudit", module = "tame_mt_core")]
pub(super) struct PyStreamingAudit {
    inner: StreamingAudit,
}

#[pymethods]
impl PyStreamingAudit {
    #[new]
    #[pyo3(signature = (sources, references, settings, top_k=1, block_rows=65536, threads=0))]
    fn new(
        py: Python<'_>,
        sources: Bound<'_, PyAny>,
        references: Bound<'_, PyAny>,
        settings: &Bound<'_, PyGramSettings>,
        top_k: usize,
        block_rows: usize,
        threads: usize,
    ) -> PyResult<Self> {
        let config = settings.get().config.clone();
        let test = TestTexts::new(&sources, &references)?;
        let (sources, references) = test.strs();
        let inner = py
            .detach(|| {
                StreamingAudit::new(config, &sources, &references, top_k, block_rows, threads)
            })
            .map_err(to_py)?;
        Ok(PyStreamingAudit { inner })
    }

    /// Feed training pairs starting at global row `row_base`.
    fn feed(
        &mut self,
        py: Python<'_>,
        sources: Bound<'_, PyAny>,
        targets: Bound<'_, PyAny>,
        row_base: u64,
    ) -> PyResult<()> {
        let sources = Texts::new("train_sources", &sources, row_base)?;
        let targets = Texts::new("train_targets", &targets, row_base)?;
        let (sources, targets) = (sources.strs(), targets.strs());
        let inner = &mut self.inner;
        py.detach(|| inner.feed(&sources, &targets, row_base, &interrupted))
            .map_err(to_py)
    }

    /// The training row of every item's best source neighbour so far (what
    /// the TM baseline reuses), for fetching its target while the row is at
    /// hand.
    fn best_source_rows(&self, py: Python<'_>) -> Vec<u64> {
        let inner = &self.inner;
        py.detach(|| inner.best_source_rows())
    }

    /// Merge the audit of another shard of the training corpus.
    fn merge(&mut self, other: PyRef<'_, PyStreamingAudit>) -> PyResult<()> {
        self.inner.merge(&other.inner).map_err(to_py)
    }

    #[getter]
    fn next_row(&self) -> u64 {
        self.inner.next_row()
    }

    #[getter]
    fn rows_fed(&self) -> u64 {
        self.inner.rows_fed()
    }

    /// (blocks audited, those that counted every test text's overlap).
    #[getter]
    fn blocks(&self) -> (u64, u64) {
        self.inner.blocks()
    }

    fn result<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        exposures_to_dict(py, &self.inner.exposures())
    }
}
