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

use crate::arrow_text::{StringChunk, StringColumn};
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

/// Texts handed to the core: Python strings (borrowed) or an Arrow column
/// read in place ([`PyArrowTexts`]).
enum Texts<'py> {
    Python(Vec<PyBackedStr>),
    Arrow(PyRef<'py, PyArrowTexts>),
}

impl Texts<'_> {
    fn strs(&self) -> Vec<&str> {
        match self {
            Texts::Python(items) => items.iter().map(|s| &**s).collect(),
            Texts::Arrow(column) => column.column.all(),
        }
    }
}

/// The texts `items`: an `ArrowTexts`, or a sequence of strings borrowed,
/// item `i` named `argument[start + i]` in errors: one that is not a string,
/// or not valid Unicode (a lone surrogate has no UTF-8), is an
/// `InputTextError`.
fn texts<'py>(argument: &str, items: &Bound<'py, PyAny>, start: u64) -> PyResult<Texts<'py>> {
    if let Ok(column) = items.cast::<PyArrowTexts>() {
        return Ok(Texts::Arrow(column.borrow()));
    }
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
        .collect::<PyResult<Vec<_>>>()
        .map(Texts::Python)
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
fn reference_texts<'py>(items: &Bound<'py, PyAny>) -> PyResult<Vec<Texts<'py>>> {
    items
        .try_iter()?
        .enumerate()
        .map(|(i, refs)| texts(&format!("references[{i}]"), &refs?, 0))
        .collect()
}

/// The test set: its sources and the references of each item.
struct TestTexts<'py> {
    sources: Texts<'py>,
    references: Vec<Texts<'py>>,
}

impl<'py> TestTexts<'py> {
    fn new(sources: &Bound<'py, PyAny>, references: &Bound<'py, PyAny>) -> PyResult<Self> {
        Ok(TestTexts {
            sources: texts("test_sources", sources, 0)?,
            references: reference_texts(references)?,
        })
    }

    fn strs(&self) -> (Vec<&str>, Vec<Vec<&str>>) {
        let references = self.references.iter().map(Texts::strs).collect();
        (self.sources.strs(), references)
    }
}

/// One side of a corpus to index, read a block at a time: texts are copied
/// out of a list (or an Arrow column) per block, so a corpus is never held
/// twice.
enum TrainingSide {
    List(Py<PyList>, &'static str),
    Arrow(Py<PyArrowTexts>),
}

impl TrainingSide {
    fn new(argument: &'static str, items: Bound<'_, PyAny>) -> PyResult<Self> {
        if let Ok(column) = items.cast::<PyArrowTexts>() {
            return Ok(TrainingSide::Arrow(column.clone().unbind()));
        }
        let list = items.cast_into::<PyList>().map_err(|e| {
            to_py(invalid(
                argument,
                format!(
                    "expected a list of strings or ArrowTexts, got {}",
                    e.into_inner()
                        .get_type()
                        .name()
                        .map_or("?".into(), |n| n.to_string())
                ),
            ))
        })?;
        Ok(TrainingSide::List(list.unbind(), argument))
    }

    fn len(&self) -> usize {
        Python::attach(|py| match self {
            TrainingSide::List(list, _) => list.bind(py).len(),
            TrainingSide::Arrow(column) => column.get().column.len(),
        })
    }

    fn read(&self, start: usize, end: usize) -> Result<Vec<String>, Error> {
        match self {
            TrainingSide::Arrow(column) => Ok(column
                .get()
                .column
                .range(start, end)
                .into_iter()
                .map(str::to_string)
                .collect()),
            TrainingSide::List(list, argument) => Python::attach(|py| {
                let list = list.bind(py);
                (start..end)
                    .map(|i| {
                        let item = list
                            .get_item(i)
                            .map_err(|e| invalid(argument, e.to_string()))?;
                        Ok(text(argument, &item, i as u64)?.to_string())
                    })
                    .collect()
            }),
        }
    }
}

/// The texts of an Arrow string column (`string` or `large_string`), read in
/// place from the buffers of its chunks and checked once, when made: each
/// chunk is `(offsets, data, offset, length, large)`, buffers that support
/// the buffer protocol (kept alive here), and rows are numbered from `start`
/// in errors naming `argument`.
#[pyclass(name = "ArrowTexts", module = "tame_mt_core", frozen)]
struct PyArrowTexts {
    /// Borrows from `_buffers`, which this object holds until it is dropped.
    column: StringColumn<'static>,
    data_bytes: u64,
    _buffers: Vec<PyBuffer<u8>>,
}

type ChunkBuffers<'py> = (Bound<'py, PyAny>, Bound<'py, PyAny>, usize, usize, bool);

#[pymethods]
impl PyArrowTexts {
    #[new]
    #[pyo3(signature = (chunks, argument="texts", start=0))]
    fn new(
        py: Python<'_>,
        chunks: Vec<ChunkBuffers<'_>>,
        argument: &str,
        start: u64,
    ) -> PyResult<Self> {
        let mut buffers = Vec::with_capacity(2 * chunks.len());
        let mut spans = Vec::with_capacity(chunks.len());
        for (offsets, data, offset, length, large) in &chunks {
            for obj in [offsets, data] {
                let buffer = PyBuffer::<u8>::get(obj)?;
                if !buffer.is_c_contiguous() {
                    return Err(to_py(invalid(
                        argument,
                        "an Arrow buffer is not contiguous",
                    )));
                }
                buffers.push(buffer);
            }
            spans.push((*offset, *length, *large));
        }
        let column = py
            .detach(|| {
                let mut row = start;
                let mut checked = Vec::with_capacity(spans.len());
                for (pair, &(offset, length, large)) in buffers.chunks(2).zip(&spans) {
                    // SAFETY: each PyBuffer keeps its exporter's memory in
                    // place, unchanged, until it is released; they live in
                    // this object as long as the slices do.
                    let [offsets, data] = [&pair[0], &pair[1]].map(|b| unsafe {
                        std::slice::from_raw_parts::<'static, u8>(
                            b.buf_ptr() as *const u8,
                            b.len_bytes(),
                        )
                    });
                    checked.push(StringChunk::new(
                        offsets, data, offset, length, large, argument, row,
                    )?);
                    row += length as u64;
                }
                Ok(StringColumn::new(checked))
            })
            .map_err(to_py)?;
        let data_bytes = column_bytes(&column);
        Ok(PyArrowTexts {
            column,
            data_bytes,
            _buffers: buffers,
        })
    }

    fn __len__(&self) -> usize {
        self.column.len()
    }

    /// Text `i` of the column (numbered from 0, whatever `start` was).
    fn __getitem__(&self, i: usize) -> PyResult<&str> {
        if i >= self.column.len() {
            return Err(pyo3::exceptions::PyIndexError::new_err(i));
        }
        Ok(self.column.range(i, i + 1)[0])
    }

    /// Bytes of text data in the column.
    #[getter]
    fn data_bytes(&self) -> u64 {
        self.data_bytes
    }
}

fn column_bytes(column: &StringColumn<'_>) -> u64 {
    column.chunks().iter().map(StringChunk::data_bytes).sum()
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
    let texts = texts.strs();
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
        .map(|e| e.pair.iter().map(|p| p.hit).collect())
        .collect();
    set_hits(&d, "source", &source)?;
    set_hits(&d, "target", &target)?;
    set_hits(&d, "pair", &pair)?;
    let refs: Vec<Vec<u32>> = exposures
        .iter()
        .map(|e| e.target.iter().map(|t| t.reference).collect())
        .collect();
    d.set_item("target_references", refs)?;
    let pair_refs: Vec<Vec<u32>> = exposures
        .iter()
        .map(|e| e.pair.iter().map(|p| p.reference).collect())
        .collect();
    d.set_item("pair_references", pair_refs)?;
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
        let test = TestTexts::new(&sources, &references)?;
        let (sources, references) = test.strs();
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

/// A reusable index of a training corpus.
#[pyclass(name = "TrainingIndex", module = "tame_mt_core")]
struct PyTrainingIndex {
    inner: TrainingIndex,
}

#[pymethods]
impl PyTrainingIndex {
    #[new]
    #[pyo3(signature = (sources, targets, orders, lowercase=false, strip_diacritics=false, normalize_punctuation=false, threads=0, progress=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        sources: Bound<'_, PyAny>,
        targets: Bound<'_, PyAny>,
        orders: Vec<i64>,
        lowercase: bool,
        strip_diacritics: bool,
        normalize_punctuation: bool,
        threads: usize,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<Self> {
        let cfg = config(orders, lowercase, strip_diacritics, normalize_punctuation)?;
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
        let test = TestTexts::new(&sources, &references)?;
        let (sources, references) = test.strs();
        let inner = &self.inner;
        let found = py
            .detach(|| inner.expose(&sources, &references, top_k, &interrupted))
            .map_err(to_py)?;
        exposures_to_dict(py, &found)
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
    /// `full` also decodes every posting list.
    #[staticmethod]
    #[pyo3(signature = (arrays, rows, orders, lowercase=false, strip_diacritics=false, normalize_punctuation=false, threads=0, full=false))]
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
        full: bool,
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
            .detach(|| TrainingIndex::from_arrays(cfg, rows, raw, threads, full))
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
    m.add_class::<PyArrowTexts>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("INDEX_FORMAT_VERSION", FORMAT_VERSION)?;
    m.add("FINGERPRINT_BLOCK_ROWS", crate::fingerprint::BLOCK_ROWS)?;
    Ok(())
}
