//! A test set's exposures as the dict of columns both strategies return.

use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::exposure::Exposure;
use crate::jaccard::Hit;

/// Per side (`source`, `target`, `pair`): `{side}_rows`, `{side}_overlap` and
/// `{side}_union`, a list per item; the reference each target and pair hit
/// matched; and the three exact-match flags.
pub(super) fn exposures_to_dict<'py>(
    py: Python<'py>,
    exposures: &[Exposure],
) -> PyResult<Bound<'py, PyDict>> {
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
