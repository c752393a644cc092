//! Texts handed to the core: sequences of Python strings (borrowed) or
//! `ArrowTexts`, each item named in errors by its argument and index.

use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::{PyList, PyString};

use super::arrow_texts::PyArrowTexts;
use super::errors::to_py;
use crate::error::{invalid, Error};

/// Texts handed to the core: Python strings (borrowed) or an Arrow column
/// read in place.
pub(super) enum Texts<'py> {
    Python(Vec<PyBackedStr>),
    Arrow(PyRef<'py, PyArrowTexts>),
}

impl<'py> Texts<'py> {
    /// The texts `items`: an `ArrowTexts`, or a sequence of strings borrowed,
    /// item `i` named `argument[start + i]` in errors: one that is not a
    /// string, or not valid Unicode (a lone surrogate has no UTF-8), is an
    /// `InputTextError`.
    pub(super) fn new(argument: &str, items: &Bound<'py, PyAny>, start: u64) -> PyResult<Self> {
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

    pub(super) fn strs(&self) -> Vec<&str> {
        match self {
            Texts::Python(items) => items.iter().map(|s| &**s).collect(),
            Texts::Arrow(column) => column.column.all(),
        }
    }
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

/// The test set: its sources and the references of each item
/// (`references[i]`, a list of strings).
pub(super) struct TestTexts<'py> {
    sources: Texts<'py>,
    references: Vec<Texts<'py>>,
}

impl<'py> TestTexts<'py> {
    pub(super) fn new(
        sources: &Bound<'py, PyAny>,
        references: &Bound<'py, PyAny>,
    ) -> PyResult<Self> {
        let sources = Texts::new("test_sources", sources, 0)?;
        let references = references
            .try_iter()?
            .enumerate()
            .map(|(i, refs)| Texts::new(&format!("references[{i}]"), &refs?, 0))
            .collect::<PyResult<_>>()?;
        Ok(TestTexts {
            sources,
            references,
        })
    }

    pub(super) fn strs(&self) -> (Vec<&str>, Vec<Vec<&str>>) {
        let references = self.references.iter().map(Texts::strs).collect();
        (self.sources.strs(), references)
    }
}

/// One side of a corpus to index, read a block at a time: texts are copied
/// out of a list (or an Arrow column) per block, so a corpus is never held
/// twice.
pub(super) enum TrainingSide {
    List(Py<PyList>, &'static str),
    Arrow(Py<PyArrowTexts>),
}

impl TrainingSide {
    pub(super) fn new(argument: &'static str, items: Bound<'_, PyAny>) -> PyResult<Self> {
        if let Ok(column) = items.cast::<PyArrowTexts>() {
            return Ok(TrainingSide::Arrow(column.clone().unbind()));
        }
        let list = items.cast_into::<PyList>().map_err(|e| {
            let kind = e.into_inner().get_type().name().map(|n| n.to_string());
            to_py(invalid(
                argument,
                format!(
                    "expected a list of strings or ArrowTexts, got {}",
                    kind.as_deref().unwrap_or("?")
                ),
            ))
        })?;
        Ok(TrainingSide::List(list.unbind(), argument))
    }

    pub(super) fn len(&self) -> usize {
        Python::attach(|py| match self {
            TrainingSide::List(list, _) => list.bind(py).len(),
            TrainingSide::Arrow(column) => column.get().column.len(),
        })
    }

    pub(super) fn read(&self, start: usize, end: usize) -> Result<Vec<String>, Error> {
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
