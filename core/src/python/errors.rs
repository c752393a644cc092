//! The core's exceptions, created with the module: `TameError`, the root of
//! every error the project raises, and a leaf per kind of [`Error`] that is
//! also a `ValueError`, so that `except ValueError` keeps working. The metric
//! package defines its own errors on this root.

use pyo3::exceptions::{PyException, PyKeyboardInterrupt, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};

use crate::error::Error;

const MODULE: &str = "tame_mt_core";

const ROOT: (&str, &str) = ("TameError", "Root of every error raised by tame_mt_metric.");

/// A leaf: its name and its docstring.
struct Leaf {
    name: &'static str,
    doc: &'static str,
}

/// The leaves, each a `TameError` and a `ValueError`.
const LEAVES: [Leaf; 5] = [
    Leaf {
        name: "InvalidOptionError",
        doc: "An option or argument has a value outside its domain.",
    },
    Leaf {
        name: "MisalignedInputError",
        doc: "Inputs that must be aligned differ: line-aligned inputs have different lengths,\n\
              or keyed inputs (directions) cover different keys.",
    },
    Leaf {
        name: "InputTextError",
        doc: "An input item is not text (None, bytes, a number), a file is not valid UTF-8,\n\
              or a row of a score table is malformed (wrong column count, a score out of\n\
              range, an empty field, a repeated rating).",
    },
    Leaf {
        name: "EmptyCorpusError",
        doc: "The training corpus has no rows.",
    },
    Leaf {
        name: "IndexFileError",
        doc: "A saved index is missing, truncated, corrupted, foreign or of another format.",
    },
];

/// The classes, made once per process.
struct Classes {
    root: Py<PyType>,
    leaves: Vec<Py<PyType>>,
}

static CLASSES: PyOnceLock<Classes> = PyOnceLock::new();

fn classes(py: Python<'_>) -> PyResult<&'static Classes> {
    CLASSES.get_or_try_init(py, || {
        let root = new_class(py, ROOT, &[py.get_type::<PyException>()])?;
        let bases = [root.bind(py).clone(), py.get_type::<PyValueError>()];
        let leaves = LEAVES
            .iter()
            .map(|leaf| new_class(py, (leaf.name, leaf.doc), &bases))
            .collect::<PyResult<_>>()?;
        Ok(Classes { root, leaves })
    })
}

/// `class name(*bases)` of this module, documented by `doc`.
fn new_class(
    py: Python<'_>,
    (name, doc): (&str, &str),
    bases: &[Bound<'_, PyType>],
) -> PyResult<Py<PyType>> {
    let namespace = PyDict::new(py);
    namespace.set_item("__module__", MODULE)?;
    namespace.set_item("__doc__", doc)?;
    let class = py
        .get_type::<PyType>()
        .call1((name, PyTuple::new(py, bases)?, namespace))?;
    Ok(class.cast_into::<PyType>()?.unbind())
}

/// Adds the classes to the module under their names.
pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    let made = classes(py)?;
    m.add(ROOT.0, made.root.bind(py))?;
    for (leaf, class) in LEAVES.iter().zip(&made.leaves) {
        m.add(leaf.name, class.bind(py))?;
    }
    Ok(())
}

/// The leaf in [`LEAVES`] that reports `err`; none for an interruption. A
/// new kind of error fails to compile here until it is given one.
fn leaf_of(err: &Error) -> Option<usize> {
    Some(match err {
        Error::InvalidOption { .. } => 0,
        Error::Misaligned { .. } => 1,
        Error::InvalidText { .. } => 2,
        Error::EmptyTraining => 3,
        Error::CorruptIndex { .. } => 4,
        Error::Interrupted => return None,
    })
}

/// The Python exception of a core error: its leaf, or Python's own
/// `KeyboardInterrupt` for an interruption.
pub(super) fn to_py(err: Error) -> PyErr {
    let Some(index) = leaf_of(&err) else {
        return PyKeyboardInterrupt::new_err(err.to_string());
    };
    Python::attach(|py| match classes(py) {
        Ok(made) => PyErr::from_type(made.leaves[index].bind(py).clone(), err.to_string()),
        Err(failed) => failed,
    })
}
