//! `CorpusFingerprint`: the content fingerprint of a parallel corpus, fed in
//! blocks, and its combination from the block digests of shards.

use pyo3::prelude::*;

use super::errors::to_py;
use super::texts::Texts;
use crate::error::invalid;
use crate::fingerprint::combine;
use crate::Fingerprint;

/// A content fingerprint of a parallel corpus, fed in blocks.
#[pyclass(name = "CorpusFingerprint", module = "tame_mt_core")]
#[derive(Default)]
pub(super) struct PyCorpusFingerprint {
    inner: Fingerprint,
}

#[pymethods]
impl PyCorpusFingerprint {
    #[new]
    fn new() -> Self {
        Self::default()
    }

    fn update(
        &mut self,
        py: Python<'_>,
        sources: Bound<'_, PyAny>,
        targets: Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let start = self.inner.rows();
        let sources = Texts::new("train_sources", &sources, start)?;
        let targets = Texts::new("train_targets", &targets, start)?;
        let (sources, targets) = (sources.strs(), targets.strs());
        let inner = &mut self.inner;
        py.detach(|| inner.update(&sources, &targets))
            .map_err(to_py)
    }

    #[getter]
    fn rows(&self) -> u64 {
        self.inner.rows()
    }

    /// The 128-bit digest as 32 hexadecimal characters.
    fn hexdigest(&self) -> String {
        format!("{:032x}", self.inner.digest())
    }

    /// The digests of the blocks so far (32 hexadecimal characters each).
    fn block_digests(&self) -> Vec<String> {
        self.inner
            .block_digests()
            .iter()
            .map(|d| format!("{d:032x}"))
            .collect()
    }

    /// The fingerprint of a corpus from the block digests of its shards, in
    /// order; one that is not hexadecimal is an `InvalidOptionError`.
    #[staticmethod]
    fn combine(block_digests: Vec<String>) -> PyResult<String> {
        let digests = block_digests
            .iter()
            .map(|d| {
                u128::from_str_radix(d, 16).map_err(|_| {
                    to_py(invalid(
                        "block_digests",
                        format!("not a block digest: {d:?}"),
                    ))
                })
            })
            .collect::<PyResult<Vec<u128>>>()?;
        Ok(format!("{:032x}", combine(&digests)))
    }
}
