//! `TrainingIndex`: a reusable index of a training corpus, built from texts
//! (a block at a time, reporting each to a progress callback) or opened over
//! buffers, and its arrays handed out for saving.

use std::collections::HashMap;
use std::sync::Arc;

use pyo3::buffer::PyBuffer;
use pyo3::exceptions::PyKeyError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::decontamination::matches_to_dict;
use super::errors::to_py;
use super::exposures::exposures_to_dict;
use super::interrupted;
use super::settings::PyGramSettings;
use super::texts::{TestTexts, TrainingSide};
use crate::error::invalid;
use crate::indexed::index_file::{checksum, RawArray};
use crate::test_set::check_aligned;
use crate::{Threshold, TrainingIndex};

/// A reusable index of a training corpus.
#[pyclass(name = "TrainingIndex", module = "tame_mt_core")]
pub(super) struct PyTrainingIndex {
    inner: TrainingIndex,
}

#[pymethods]
impl PyTrainingIndex {
    #[new]
    #[pyo3(signature = (sources, targets, settings, threads=0, progress=None))]
    fn new(
        py: Python<'_>,
        sources: Bound<'_, PyAny>,
        targets: Bound<'_, PyAny>,
        settings: &Bound<'_, PyGramSettings>,
        threads: usize,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<Self> {
        let config = settings.get().config.clone();
        let sides = [
            TrainingSide::new("train_sources", sources)?,
            TrainingSide::new("train_targets", targets)?,
        ];
        check_aligned(sides[0].len(), sides[1].len()).map_err(to_py)?;
        let rows = sides[0].len();
        // `progress(rows)` after each block read (a failing callback is ignored:
        // Ctrl-C is polled between blocks).
        let read = |side: usize, start: usize, end: usize| {
            let texts = sides[side].read(start, end)?;
            if let Some(callback) = &progress {
                Python::attach(|py| callback.call1(py, (end - start,)).map(drop).ok());
            }
            Ok(texts)
        };
        let inner = py
            .detach(|| TrainingIndex::build_from(config, rows, &read, threads, &interrupted))
            .map_err(to_py)?;
        Ok(PyTrainingIndex { inner })
    }

    #[pyo3(signature = (sources, references, top_k=1))]
    fn expose<'py>(
        &self,
        py: Python<'py>,
        sources: Bound<'py, PyAny>,
        references: Bound<'py, PyAny>,
        top_k: usize,
    ) -> PyResult<Bound<'py, PyDict>> {
        let test = TestTexts::new(&sources, &references)?;
        let (sources, references) = test.strs();
        let inner = &self.inner;
        let found = py
            .detach(|| inner.expose(&sources, &references, top_k, &interrupted))
            .map_err(to_py)?;
        exposures_to_dict(py, &found)
    }

    /// The training rows within the threshold of a test text on some side, as
    /// the columns `Decontaminator.feed` answers with for the whole corpus.
    fn decontaminate<'py>(
        &self,
        py: Python<'py>,
        sources: Bound<'py, PyAny>,
        references: Bound<'py, PyAny>,
        threshold_numerator: u64,
        threshold_denominator: u64,
    ) -> PyResult<Bound<'py, PyDict>> {
        let threshold =
            Threshold::new(threshold_numerator, threshold_denominator).map_err(to_py)?;
        let test = TestTexts::new(&sources, &references)?;
        let (sources, references) = test.strs();
        let inner = &self.inner;
        let found = py
            .detach(|| inner.decontaminate(&sources, &references, threshold, &interrupted))
            .map_err(to_py)?;
        matches_to_dict(py, &found)
    }

    /// `(query_postings, index_postings)`: the posting entries a search of
    /// this test set reads and the entries of the whole index.
    fn search_volume(
        &self,
        py: Python<'_>,
        sources: Bound<'_, PyAny>,
        references: Bound<'_, PyAny>,
    ) -> PyResult<(u64, u64)> {
        let test = TestTexts::new(&sources, &references)?;
        let (sources, references) = test.strs();
        let inner = &self.inner;
        let volume = py
            .detach(|| inner.search_volume(&sources, &references))
            .map_err(to_py)?;
        Ok((volume.query_postings, volume.index_postings))
    }

    #[getter]
    fn rows(&self) -> usize {
        self.inner.rows()
    }

    #[getter]
    fn nbytes(&self) -> usize {
        self.inner.nbytes()
    }

    /// `(name, element width, bytes, XXH3-64 checksum)` of every array, in file
    /// order: what an index file records and a reader trusts, so given only
    /// once every posting list passes the full check.
    fn array_info(&self, py: Python<'_>) -> PyResult<Vec<(String, usize, usize, u64)>> {
        let inner = &self.inner;
        py.detach(|| {
            inner.check_lists()?;
            Ok(inner
                .arrays()
                .into_iter()
                .map(|(name, width, bytes)| (name, width, bytes.len(), checksum(bytes)))
                .collect())
        })
        .map_err(to_py)
    }

    /// `(address, bytes)` of one array, for a zero-copy view that keeps this index
    /// alive (`pyarrow.foreign_buffer(address, bytes, base=index)`).
    fn array_address(&self, name: &str) -> PyResult<(usize, usize)> {
        let arrays = self.inner.arrays();
        let (_, _, bytes) = arrays
            .iter()
            .find(|(n, _, _)| n == name)
            .ok_or_else(|| PyKeyError::new_err(name.to_string()))?;
        Ok((bytes.as_ptr() as usize, bytes.len()))
    }

    /// An index over buffers (e.g. of a memory-mapped file), used without
    /// copying once every checksum and the structure searches read by hold;
    /// `full` also decodes every posting list. A buffer that is not
    /// contiguous is an `InvalidOptionError` naming its array.
    #[staticmethod]
    #[pyo3(signature = (arrays, rows, settings, threads=0, full=false))]
    fn from_arrays(
        py: Python<'_>,
        arrays: HashMap<String, (Bound<'_, PyAny>, u64)>,
        rows: usize,
        settings: &Bound<'_, PyGramSettings>,
        threads: usize,
        full: bool,
    ) -> PyResult<Self> {
        let config = settings.get().config.clone();
        let mut raw = HashMap::new();
        for (name, (obj, sum)) in arrays {
            let buffer = PyBuffer::<u8>::get(&obj)?;
            if !buffer.is_c_contiguous() {
                let argument = format!("arrays[{name:?}]");
                return Err(to_py(invalid(&argument, "the buffer is not contiguous")));
            }
            let ptr = buffer.buf_ptr() as *const u8;
            let len = buffer.len_bytes();
            let keep: Arc<dyn Send + Sync> = Arc::new(buffer);
            raw.insert(
                name,
                RawArray {
                    ptr,
                    len,
                    checksum: sum,
                    keep,
                },
            );
        }
        let inner = py
            .detach(|| TrainingIndex::from_arrays(config, rows, raw, threads, full))
            .map_err(to_py)?;
        Ok(PyTrainingIndex { inner })
    }
}
