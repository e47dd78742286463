//! Between Python values and the engine's: observations as dicts, answers as JSON.

use gbely_engine::runner::player::PlayerAnswer;
use gbely_engine::wire::{answer_from_value, notes_from_value};
use gbely_rules::{Grid, Observation};
use gbely_rules::{Notes, ViolationKind};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::Value;

/// Python strings of every cell id of a map, made once per match.
pub(crate) fn id_strings(py: Python<'_>, grid: &Grid) -> Vec<Py<PyString>> {
    grid.cells().map(|c| PyString::new(py, &grid.id(c)).unbind()).collect()
}

/// The observation of SPEC §5 as a Python dict, exactly as an agent file receives it.
pub(crate) fn obs_dict<'py>(py: Python<'py>, obs: &Observation, ids: &[Py<PyString>]) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item(intern!(py, "kolo"), obs.round)?;
    d.set_item(intern!(py, "moja_zakladna"), ids[obs.base.index()].bind(py))?;
    let own = PyList::empty(py);
    for c in &obs.own {
        let cd = PyDict::new(py);
        cd.set_item(intern!(py, "id"), ids[c.cell.index()].bind(py))?;
        cd.set_item(intern!(py, "typ"), PyString::intern(py, c.terrain.wire()))?;
        cd.set_item(intern!(py, "jednotky"), PyFloat::new(py, c.units))?;
        cd.set_item(intern!(py, "opevnenie"), PyFloat::new(py, c.fortification))?;
        let n = PyList::new(py, c.neighbours.as_slice().iter().map(|x| ids[x.index()].bind(py)))?;
        cd.set_item(intern!(py, "susedia"), n)?;
        own.append(cd)?;
    }
    d.set_item(intern!(py, "moje_pola"), own)?;
    let vis = PyList::empty(py);
    for v in &obs.visible {
        let vd = PyDict::new(py);
        vd.set_item(intern!(py, "id"), ids[v.cell.index()].bind(py))?;
        vd.set_item(intern!(py, "vlastnik"), PyString::intern(py, v.owner.wire()))?;
        vd.set_item(intern!(py, "posadka"), PyFloat::new(py, v.garrison))?;
        vd.set_item(intern!(py, "opevnenie"), PyFloat::new(py, v.fortification))?;
        vd.set_item(intern!(py, "typ"), PyString::intern(py, v.terrain.wire()))?;
        vis.append(vd)?;
    }
    d.set_item(intern!(py, "viditelne_susedne_pola"), vis)?;
    Ok(d)
}

/// A Python value as JSON; `Err` says why it is not JSON (NaN, a set, a non-string key, …).
pub(crate) fn to_value(o: &Bound<'_, PyAny>, depth: u32) -> Result<Value, String> {
    if depth > 64 {
        return Err("nested too deeply".into());
    }
    if o.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = o.downcast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if let Ok(i) = o.downcast::<PyInt>() {
        if let Ok(v) = i.extract::<i64>() {
            return Ok(Value::from(v));
        }
        // A huge integer keeps its digits (like JSON text would); it is not a finite amount.
        let digits = i.str().map_err(|e| e.to_string())?.to_string();
        return serde_json::from_str(&digits).map_err(|e| e.to_string());
    }
    if let Ok(f) = o.downcast::<PyFloat>() {
        let x = f.value();
        return serde_json::Number::from_f64(x)
            .map(Value::Number)
            .ok_or_else(|| format!("{x} is not JSON (NaN and Infinity are not numbers in JSON)"));
    }
    if let Ok(s) = o.downcast::<PyString>() {
        return s.extract::<String>().map(Value::String).map_err(|e| e.to_string());
    }
    if let Ok(d) = o.downcast::<PyDict>() {
        let mut m = serde_json::Map::new();
        for (k, v) in d.iter() {
            let k: String = k.extract().map_err(|_| "a dict key that is not a string".to_string())?;
            m.insert(k, to_value(&v, depth + 1)?);
        }
        return Ok(Value::Object(m));
    }
    if let Ok(l) = o.downcast::<PyList>() {
        return l.iter().map(|x| to_value(&x, depth + 1)).collect::<Result<Vec<_>, _>>().map(Value::Array);
    }
    if let Ok(t) = o.downcast::<PyTuple>() {
        return t.iter().map(|x| to_value(&x, depth + 1)).collect::<Result<Vec<_>, _>>().map(Value::Array);
    }
    let ty = o.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "object".into());
    Err(format!("a {ty} is not JSON"))
}

/// What a callable's answer means: commands, or an unreadable answer (a violation).
pub(crate) fn answer_of(o: &Bound<'_, PyAny>) -> PlayerAnswer {
    answer_with_notes(o, None).0
}

/// An answer and its notes (its `debug` key: see `gbely_engine::wire::notes_from_value`), the
/// notes' cells read on `grid`.
pub(crate) fn answer_with_notes(o: &Bound<'_, PyAny>, grid: Option<&Grid>) -> (PlayerAnswer, Option<Notes>) {
    let value = to_value(o, 0);
    let notes = match (&value, grid) {
        (Ok(v), Some(g)) => notes_from_value(v, g),
        _ => None,
    };
    let answer = match value {
        Ok(v) => match answer_from_value(v) {
            Ok(list) => PlayerAnswer::Raw(list),
            Err(e) => PlayerAnswer::Violation { kind: ViolationKind::Unreadable, detail: e.to_string() },
        },
        Err(e) => {
            PlayerAnswer::Violation { kind: ViolationKind::Unreadable, detail: format!("the answer is not JSON: {e}") }
        }
    };
    (answer, notes)
}
