//! `Decontaminator`: test sets against which training pairs, fed in blocks,
//! are judged at a fixed threshold, with the GIL released and Ctrl-C polled
//! between runs of rows.

use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::errors::to_py;
use super::interrupted;
use super::settings::PyGramSettings;
use super::texts::{TestTexts, Texts};
use crate::{Decontaminator, RowMatch, Threshold};

/// Every test set's items (in order) indexed once; `feed` answers a block.
#[pyclass(name = "Decontaminator", module = "tame_mt_core", frozen)]
pub(super) struct PyDecontaminator {
    inner: Decontaminator,
}

#[pymethods]
impl PyDecontaminator {
    #[new]
    #[pyo3(signature = (sources, references, settings, threshold_numerator, threshold_denominator, threads=0))]
    fn new(
        py: Python<'_>,
        sources: Bound<'_, PyAny>,
        references: Bound<'_, PyAny>,
        settings: &Bound<'_, PyGramSettings>,
        threshold_numerator: u64,
        threshold_denominator: u64,
        threads: usize,
    ) -> PyResult<Self> {
        let config = settings.get().config.clone();
        let threshold =
            Threshold::new(threshold_numerator, threshold_denominator).map_err(to_py)?;
        let test = TestTexts::new(&sources, &references)?;
        let (sources, references) = test.strs();
        let inner = py
            .detach(|| Decontaminator::new(config, &sources, &references, threshold, threads))
            .map_err(to_py)?;
        Ok(PyDecontaminator { inner })
    }

    /// The rows of this block (the first is global row `row_base`) that reach
    /// the threshold on some side, as columns: `rows`; per side (`source`,
    /// `target`, `pair`) `{side}_item`, `{side}_overlap`, `{side}_union`
    /// (-1 where the side does not reach it); `target_reference` and
    /// `pair_reference`.
    fn feed<'py>(
        &self,
        py: Python<'py>,
        sources: Bound<'py, PyAny>,
        targets: Bound<'py, PyAny>,
        row_base: u64,
    ) -> PyResult<Bound<'py, PyDict>> {
        let sources = Texts::new("train_sources", &sources, row_base)?;
        let targets = Texts::new("train_targets", &targets, row_base)?;
        let (sources, targets) = (sources.strs(), targets.strs());
        let inner = &self.inner;
        let found = py
            .detach(|| inner.feed(&sources, &targets, row_base, &interrupted))
            .map_err(to_py)?;
        matches_to_dict(py, &found)
    }

    #[getter]
    fn items(&self) -> usize {
        self.inner.items()
    }
}

/// Rows' matches as the columns `feed` answers with (shared by the index's
/// `decontaminate`).
pub(super) fn matches_to_dict<'py>(
    py: Python<'py>,
    found: &[RowMatch],
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let column = |f: &dyn Fn(&RowMatch) -> Option<i64>| -> Vec<i64> {
        found.iter().map(|m| f(m).unwrap_or(-1)).collect()
    };
    d.set_item("rows", found.iter().map(|m| m.row).collect::<Vec<u64>>())?;
    d.set_item("source_item", column(&|m| m.source.map(|s| s.item as i64)))?;
    d.set_item(
        "source_overlap",
        column(&|m| m.source.map(|s| s.score.overlap as i64)),
    )?;
    d.set_item(
        "source_union",
        column(&|m| m.source.map(|s| s.score.union as i64)),
    )?;
    for (side, get) in [
        ("target", (|m: &RowMatch| m.target) as fn(&RowMatch) -> _),
        ("pair", |m: &RowMatch| m.pair),
    ] {
        d.set_item(
            format!("{side}_item"),
            column(&|m| get(m).map(|s| s.item as i64)),
        )?;
        d.set_item(
            format!("{side}_reference"),
            column(&|m| get(m).map(|s| s.reference as i64)),
        )?;
        d.set_item(
            format!("{side}_overlap"),
            column(&|m| get(m).map(|s| s.score.overlap as i64)),
        )?;
        d.set_item(
            format!("{side}_union"),
            column(&|m| get(m).map(|s| s.score.union as i64)),
        )?;
    }
    Ok(d)
}
