//! `GramSettings`: how texts become gram sets (n-gram orders and the optional
//! normalisation steps), validated once, when made, and taken by every
//! binding whose answer depends on them.

use pyo3::prelude::*;
use pyo3::types::{PyTuple, PyType};

use super::errors::to_py;
use crate::grams::GramConfig;
use crate::normalize::Normalization;

/// The n-gram orders (1 to 6, no repeats; kept sorted) and normalisation
/// steps of the gram sets: frozen, compared and hashed by value, pickled by
/// its arguments.
#[pyclass(name = "GramSettings", module = "tame_mt_core", frozen, eq, hash)]
#[derive(PartialEq, Eq, Hash)]
pub(super) struct PyGramSettings {
    pub(super) config: GramConfig,
}

/// The arguments that make a `GramSettings` again.
type Arguments = (Vec<usize>, bool, bool, bool);

#[pymethods]
impl PyGramSettings {
    #[new]
    #[pyo3(signature = (orders, lowercase=false, strip_diacritics=false, normalize_punctuation=false))]
    fn new(
        orders: Vec<i64>,
        lowercase: bool,
        strip_diacritics: bool,
        normalize_punctuation: bool,
    ) -> PyResult<Self> {
        let normalization = Normalization {
            lowercase,
            strip_diacritics,
            normalize_punctuation,
        };
        let config = GramConfig::new(&orders, normalization).map_err(to_py)?;
        Ok(PyGramSettings { config })
    }

    /// The n-gram orders, ascending.
    #[getter]
    fn orders<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.config.orders())
    }

    #[getter]
    fn lowercase(&self) -> bool {
        self.config.normalization.lowercase
    }

    #[getter]
    fn strip_diacritics(&self) -> bool {
        self.config.normalization.strip_diacritics
    }

    #[getter]
    fn normalize_punctuation(&self) -> bool {
        self.config.normalization.normalize_punctuation
    }

    fn __repr__(&self) -> String {
        let (orders, lowercase, strip_diacritics, normalize_punctuation) = self.arguments();
        let flag = |on: bool| if on { "True" } else { "False" };
        format!(
            "GramSettings(orders={orders:?}, lowercase={}, strip_diacritics={}, \
             normalize_punctuation={})",
            flag(lowercase),
            flag(strip_diacritics),
            flag(normalize_punctuation),
        )
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> (Bound<'py, PyType>, Arguments) {
        (slf.get_type(), slf.get().arguments())
    }
}

impl PyGramSettings {
    fn arguments(&self) -> Arguments {
        let normalization = self.config.normalization;
        (
            self.config.orders().to_vec(),
            normalization.lowercase,
            normalization.strip_diacritics,
            normalization.normalize_punctuation,
        )
    }
}
