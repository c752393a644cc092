//! The Python bindings (the module `tame_mt_core`): a thin layer that converts
//! arguments, releases the GIL for corpus-sized work, polls for Ctrl-C
//! between blocks, and turns core errors into the package's typed
//! exceptions. No algorithm lives here.

use std::collections::HashMap;
use std::sync::Arc;

use pyo3::buffer::PyBuffer;
use pyo3::exceptions::{PyKeyError, PyKeyboardInterrupt, PyValueError};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::{PyDict, PyList, PyString};

use crate::error::{invalid, Error};
use crate::exposure::Exposure;
use crate::grams::{unpack, GramConfig};
use crate::indexed::index_file::{checksum, RawArray, FORMAT_VERSION};
use crate::normalize::Normalization;
use crate::pool::pool;
use crate::score::Hit;
use crate::test_set::check_aligned;
use crate::{Fingerprint, StreamingAudit, TrainingIndex};

fn to_py(err: Error) -> PyErr {
    Python::attach(|py| {
        if let Error::Interrupted = err {
            return PyKeyboardInterrupt::new_err("interrupted");
        }
        let name = match &err {
            Error::InvalidOption { .. } => "InvalidOptionError",
            Error::Misaligned { .. } => "MisalignedInputError",
            Error::InvalidText { .. } => "InputTextError",
            Error::EmptyTraining => "EmptyCorpusError",
            Error::CorruptIndex { .. } => "IndexFileError",
            Error::Interrupted => unreachable!(),
        };
        // The typed exceptions belong to the metric package, in a module that
        // imports nothing compiled; without that package a plain ValueError.
        let message = err.to_string();
        match py
            .import("tame_mt_metric.errors")
            .and_then(|m| m.getattr(name))
            .and_then(|cls| cls.call1((message.clone(),)))
        {
            Ok(exc) => PyErr::from_value(exc),
            Err(_) => PyValueError::new_err(message),
        }
    })
}

/// The strings of the sequence `items`, borrowed, item `i` named
/// `argument[start + i]` in errors: one that is not a string, or not valid
/// Unicode (a lone surrogate has no UTF-8), is an `InputTextError`.
fn texts(argument: &str, items: &Bound<'_, PyAny>, start: u64) -> PyResult<Vec<PyBackedStr>> {
    if items.is_instance_of::<PyString>() {
        return Err(to_py(invalid(
            argument,
            "expected a list of strings, got str",
        )));
    }
    items
        .try_iter()?
        .zip(start..)
        .map(|(item, index)| text(argument, &item?, index).map_err(to_py))
        .collect()
}

/// `item` as a string, or the error naming it `argument[index]`.
fn text(argument: &str, item: &Bound<'_, PyAny>, index: u64) -> Result<PyBackedStr, Error> {
    item.extract::<PyBackedStr>().map_err(|e| {
        let message = if item.is_instance_of::<PyString>() {
            format!("not valid Unicode ({})", e.value(item.py()))
        } else {
            let kind = item.get_type().name().map(|n| n.to_string());
            format!("expected a string, got {}", kind.as_deref().unwrap_or("?"))
        };
        Error::InvalidText {
            argument: argument.into(),
            index,
            message,
        }
    })
}

/// The references of each test item (`references[i]`, a list of strings).
fn reference_texts(items: &Bound<'_, PyAny>) -> PyResult<Vec<Vec<PyBackedStr>>> {
    items
        .try_iter()?
        .enumerate()
        .map(|(i, refs)| texts(&format!("references[{i}]"), &refs?, 0))
        .collect()
}

/// True once Ctrl-C (or another signal handler) has raised in Python.
fn interrupted() -> bool {
    Python::attach(|py| py.check_signals().is_err())
}

fn config(
    orders: Vec<i64>,
    lowercase: bool,
    strip_diacritics: bool,
    normalize_punctuation: bool,
) -> PyResult<GramConfig> {
    let norm = Normalization {
        lowercase,
        strip_diacritics,
        normalize_punctuation,
    };
    GramConfig::new(&orders, norm).map_err(to_py)
}

/// Normalise a text for exposure.
#[pyfunction]
#[pyo3(signature = (text, lowercase=false, strip_diacritics=false, normalize_punctuation=false))]
fn normalize(
    text: &str,
    lowercase: bool,
    strip_diacritics: bool,
    normalize_punctuation: bool,
) -> String {
    Normalization {
        lowercase,
        strip_diacritics,
        normalize_punctuation,
    }
    .apply(text)
}

/// The sorted gram set of a text (after normalisation).
#[pyfunction]
#[pyo3(signature = (text, orders, lowercase=false, strip_diacritics=false, normalize_punctuation=false))]
fn grams(
    text: &str,
    orders: Vec<i64>,
    lowercase: bool,
    strip_diacritics: bool,
    normalize_punctuation: bool,
) -> PyResult<Vec<String>> {
    let cfg = config(orders, lowercase, strip_diacritics, normalize_punctuation)?;
    let mut out: Vec<String> = cfg.grams(text).into_iter().map(unpack).collect();
    out.sort();
    Ok(out)
}

/// Normalise every text and count its distinct grams; returns the total.
#[pyfunction]
#[pyo3(signature = (texts, orders, lowercase=false, strip_diacritics=false, normalize_punctuation=false, threads=0))]
#[allow(clippy::too_many_arguments)]
fn count_grams(
    py: Python<'_>,
    texts: Bound<'_, PyAny>,
    orders: Vec<i64>,
    lowercase: bool,
    strip_diacritics: bool,
    normalize_punctuation: bool,
    threads: usize,
) -> PyResult<u64> {
    use rayon::prelude::*;
    let cfg = config(orders, lowercase, strip_diacritics, normalize_punctuation)?;
    let texts = self::texts("texts", &texts, 0)?;
    let pool = pool(threads).map_err(to_py)?;
    Ok(py.detach(|| pool.install(|| texts.par_iter().map(|t| cfg.grams(t).len() as u64).sum())))
}

fn set_hits(d: &Bound<'_, PyDict>, side: &str, per_item: &[Vec<Hit>]) -> PyResult<()> {
    let column = |f: &dyn Fn(&Hit) -> u64| -> Vec<Vec<u64>> {
        per_item
            .iter()
            .map(|hits| hits.iter().map(f).collect())
            .collect()
    };
    d.set_item(format!("{side}_rows"), column(&|h| h.row))?;
    d.set_item(
        format!("{side}_overlap"),
        column(&|h| h.score.overlap as u64),
    )?;
    d.set_item(format!("{side}_union"), column(&|h| h.score.union as u64))?;
    Ok(())
}

fn exposures_to_dict<'py>(py: Python<'py>, exposures: &[Exposure]) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let source: Vec<Vec<Hit>> = exposures.iter().map(|e| e.source.clone()).collect();
    let target: Vec<Vec<Hit>> = exposures
        .iter()
        .map(|e| e.target.iter().map(|t| t.hit).collect())
        .collect();
    let pair: Vec<Vec<Hit>> = exposures
        .iter()
        .map(|e| e.pair.into_iter().collect())
        .collect();
    set_hits(&d, "source", &source)?;
    set_hits(&d, "target", &target)?;
    set_hits(&d, "pair", &pair)?;
    let refs: Vec<Vec<u32>> = exposures
        .iter()
        .map(|e| e.target.iter().map(|t| t.reference).collect())
        .collect();
    d.set_item("target_references", refs)?;
    let flag = |f: fn(&Exposure) -> bool| exposures.iter().map(f).collect::<Vec<bool>>();
    d.set_item("source_exact", flag(|e| e.source_exact))?;
    d.set_item("target_exact", flag(|e| e.target_exact))?;
    d.set_item("pair_exact", flag(|e| e.pair_exact))?;
    Ok(d)
}

/// One test set audited against training pairs streamed in blocks.
#[pyclass(name = "StreamingAudit", module = "tame_mt_core")]
struct PyStreamingAudit {
    inner: StreamingAudit,
}

#[pymethods]
impl PyStreamingAudit {
    #[new]
    #[pyo3(signature = (sources, references, orders, lowercase=false, strip_diacritics=false, normalize_punctuation=false, top_k=1, block_rows=65536, threads=0))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        sources: Bound<'_, PyAny>,
        references: Bound<'_, PyAny>,
        orders: Vec<i64>,
        lowercase: bool,
        strip_diacritics: bool,
        normalize_punctuation: bool,
        top_k: usize,
        block_rows: usize,
        threads: usize,
    ) -> PyResult<Self> {
        let cfg = config(orders, lowercase, strip_diacritics, normalize_punctuation)?;
        let (sources, references) = (
            texts("test_sources", &sources, 0)?,
            reference_texts(&references)?,
        );
        let inner = py
            .detach(|| StreamingAudit::new(cfg, &sources, &references, top_k, block_rows, threads))
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
        let sources = texts("train_sources", &sources, row_base)?;
        let targets = texts("train_targets", &targets, row_base)?;
        let inner = &mut self.inner;
        py.detach(|| inner.feed(&sources, &targets, row_base, &interrupted))
            .map_err(to_py)
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

    fn result<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        exposures_to_dict(py, &self.inner.exposures())
    }
}

/// A reusable index of a training corpus.
#[pyclass(name = "TrainingIndex", module = "tame_mt_core")]
struct PyTrainingIndex {
    inner: TrainingIndex,
}

#[pymethods]
impl PyTrainingIndex {
    #[new]
    #[pyo3(signature = (sources, targets, orders, lowercase=false, strip_diacritics=false, normalize_punctuation=false, threads=0))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        sources: Bound<'_, PyList>,
        targets: Bound<'_, PyList>,
        orders: Vec<i64>,
        lowercase: bool,
        strip_diacritics: bool,
        normalize_punctuation: bool,
        threads: usize,
    ) -> PyResult<Self> {
        let cfg = config(orders, lowercase, strip_diacritics, normalize_punctuation)?;
        check_aligned(sources.len(), targets.len()).map_err(to_py)?;
        let rows = sources.len();
        // Texts are copied out of the lists a block at a time, so a corpus is
        // never held twice.
        let sides = [sources.unbind(), targets.unbind()];
        let read = |side: usize, start: usize, end: usize| {
            Python::attach(|py| {
                let list = sides[side].bind(py);
                let argument = ["train_sources", "train_targets"][side];
                (start..end)
                    .map(|i| {
                        let item = list
                            .get_item(i)
                            .map_err(|e| invalid(argument, e.to_string()))?;
                        Ok(text(argument, &item, i as u64)?.to_string())
                    })
                    .collect()
            })
        };
        let inner = py
            .detach(|| TrainingIndex::build_from(cfg, rows, &read, threads, &interrupted))
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
        let (sources, references) = (
            texts("test_sources", &sources, 0)?,
            reference_texts(&references)?,
        );
        let inner = &self.inner;
        let found = py
            .detach(|| inner.expose(&sources, &references, top_k, &interrupted))
            .map_err(to_py)?;
        exposures_to_dict(py, &found)
    }

    #[getter]
    fn rows(&self) -> usize {
        self.inner.rows()
    }

    #[getter]
    fn nbytes(&self) -> usize {
        self.inner.nbytes()
    }

    /// `(name, element width, bytes, XXH3-64 checksum)` of every array, in file order.
    fn array_info(&self, py: Python<'_>) -> Vec<(String, usize, usize, u64)> {
        let inner = &self.inner;
        py.detach(|| {
            inner
                .arrays()
                .into_iter()
                .map(|(name, width, bytes)| (name, width, bytes.len(), checksum(bytes)))
                .collect()
        })
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
    /// copying once every checksum and structural invariant holds.
    #[staticmethod]
    #[pyo3(signature = (arrays, rows, orders, lowercase=false, strip_diacritics=false, normalize_punctuation=false, threads=0))]
    #[allow(clippy::too_many_arguments)]
    fn from_arrays(
        py: Python<'_>,
        arrays: HashMap<String, (Bound<'_, PyAny>, u64)>,
        rows: usize,
        orders: Vec<i64>,
        lowercase: bool,
        strip_diacritics: bool,
        normalize_punctuation: bool,
        threads: usize,
    ) -> PyResult<Self> {
        let cfg = config(orders, lowercase, strip_diacritics, normalize_punctuation)?;
        let mut raw = HashMap::new();
        for (name, (obj, sum)) in arrays {
            let buffer = PyBuffer::<u8>::get(&obj)?;
            if !buffer.is_c_contiguous() {
                return Err(PyValueError::new_err(format!(
                    "{name}: buffer is not contiguous"
                )));
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
            .detach(|| TrainingIndex::from_arrays(cfg, rows, raw, threads))
            .map_err(to_py)?;
        Ok(PyTrainingIndex { inner })
    }
}

/// A content fingerprint of a parallel corpus, fed in blocks.
#[pyclass(name = "CorpusFingerprint", module = "tame_mt_core")]
#[derive(Default)]
struct PyCorpusFingerprint {
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
        let sources = texts("train_sources", &sources, start)?;
        let targets = texts("train_targets", &targets, start)?;
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

    /// The fingerprint of a corpus from the block digests of its shards, in order.
    #[staticmethod]
    fn combine(block_digests: Vec<String>) -> PyResult<String> {
        let digests = block_digests
            .iter()
            .map(|d| {
                u128::from_str_radix(d, 16)
                    .map_err(|_| PyValueError::new_err(format!("not a block digest: {d:?}")))
            })
            .collect::<PyResult<Vec<u128>>>()?;
        Ok(format!("{:032x}", crate::fingerprint::combine(&digests)))
    }
}

#[pymodule]
#[pyo3(name = "tame_mt_core")]
fn core_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(normalize, m)?)?;
    m.add_function(wrap_pyfunction!(grams, m)?)?;
    m.add_function(wrap_pyfunction!(count_grams, m)?)?;
    m.add_class::<PyStreamingAudit>()?;
    m.add_class::<PyTrainingIndex>()?;
    m.add_class::<PyCorpusFingerprint>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("INDEX_FORMAT_VERSION", FORMAT_VERSION)?;
    m.add("FINGERPRINT_BLOCK_ROWS", crate::fingerprint::BLOCK_ROWS)?;
    Ok(())
}
