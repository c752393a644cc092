//! `ArrowTexts`: the texts of an Arrow string column, read in place from the
//! buffers of its chunks and checked once, when made.

use pyo3::buffer::PyBuffer;
use pyo3::exceptions::PyIndexError;
use pyo3::prelude::*;

use super::errors::to_py;
use crate::arrow_text::{StringChunk, StringColumn};
use crate::error::invalid;

/// The texts of an Arrow string column (`string` or `large_string`), read in
/// place from the buffers of its chunks and checked once, when made: each
/// chunk is `(offsets, data, offset, length, large)`, buffers that support
/// the buffer protocol (kept alive here), and rows are numbered from `start`
/// in errors naming `argument`.
#[pyclass(name = "ArrowTexts", module = "tame_mt_core", frozen)]
pub(super) struct PyArrowTexts {
    /// Borrows from `_buffers`, which this object holds until it is dropped.
    pub(super) column: StringColumn<'static>,
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
        let data_bytes = column.chunks().iter().map(StringChunk::data_bytes).sum();
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
            return Err(PyIndexError::new_err(i));
        }
        Ok(self.column.range(i, i + 1)[0])
    }

    /// Bytes of text data in the column.
    #[getter]
    fn data_bytes(&self) -> u64 {
        self.data_bytes
    }
}
