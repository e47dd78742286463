//! `gbely.Map`: the reference map, generated maps and map files.

use std::path::PathBuf;
use std::sync::Arc;

use crate::errors::MapError;
use gbely_engine::app::runs::maps::load_map;
use gbely_world::{parse_map_file, render_map, write_map_file, Map, MapStats};
use pyo3::exceptions::{PyOSError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

/// A map: the reference map, a generated one or a map file. Immutable; equal when every cell,
/// seat and the name are equal; pickles as its map file text.
#[pyclass(name = "Map", module = "gbely", frozen)]
#[derive(Clone)]
pub(crate) struct PyMap {
    pub(crate) inner: Arc<Map>,
}

pub(crate) fn cell_of(map: &Map, id: &str) -> PyResult<gbely_rules::Cell> {
    map.grid().parse(id).ok_or_else(|| {
        PyValueError::new_err(format!(
            "`{id}` is not a cell of the map {} ({}×{})",
            map.name(),
            map.width(),
            map.height()
        ))
    })
}

#[pymethods]
impl PyMap {
    /// The reference map `gbely` (60×60).
    #[staticmethod]
    fn reference() -> Self {
        PyMap { inner: Arc::new(gbely_world::reference_map()) }
    }

    /// A generated duel map from any seed text.
    #[staticmethod]
    #[pyo3(signature = (seed, width = 60, height = None))]
    fn generate(seed: &str, width: u32, height: Option<u32>) -> PyResult<Self> {
        let map = gbely_world::generate_duel(seed, width, height.unwrap_or(width))
            .map_err(|e| MapError::new_err(e.to_string()))?;
        Ok(PyMap { inner: Arc::new(map) })
    }

    /// Reads a map file (`OSError` when it cannot be read, `MapError` when it is not a map).
    #[staticmethod]
    fn load(path: PathBuf) -> PyResult<Self> {
        let text = std::fs::read_to_string(&path)
            .map_err(|e| PyOSError::new_err(format!("cannot read the map {}: {e}", path.display())))?;
        let map = parse_map_file(&text).map_err(|e| MapError::new_err(format!("{}: {e}", path.display())))?;
        Ok(PyMap { inner: Arc::new(map) })
    }

    /// A map from the text of a map file.
    #[staticmethod]
    fn from_text(text: &str) -> PyResult<Self> {
        let map = parse_map_file(text).map_err(|e| MapError::new_err(e.to_string()))?;
        Ok(PyMap { inner: Arc::new(map) })
    }

    /// A final map (SPEC §9): eight seats around the Council's reinforced centre.
    #[staticmethod]
    #[pyo3(signature = (seed, size = 90, council_radius = None, council_garrison = None, extra_bases = None))]
    fn generate_final(
        seed: &str,
        size: u32,
        council_radius: Option<u32>,
        council_garrison: Option<u32>,
        extra_bases: Option<u32>,
    ) -> PyResult<Self> {
        let mut cfg = gbely_world::FinalConfig::for_size(size);
        if let Some(r) = council_radius {
            cfg.council_radius = r;
        }
        if let Some(g) = council_garrison {
            cfg.council_garrison = g;
        }
        if let Some(b) = extra_bases {
            cfg.extra_bases = b;
        }
        let map = gbely_world::generate_final(seed, cfg).map_err(|e| MapError::new_err(e.to_string()))?;
        Ok(PyMap { inner: Arc::new(map) })
    }

    /// `gbely`, `seed:TEXT` or a file path, as on the command line.
    #[staticmethod]
    #[pyo3(signature = (spec, size = None))]
    fn named(spec: &str, size: Option<String>) -> PyResult<Self> {
        let map = load_map(spec, size.as_deref()).map_err(|e| MapError::new_err(format!("{e:#}")))?;
        Ok(PyMap { inner: Arc::new(map) })
    }

    /// The map's name (`gbely`, `seed:TEXT`, or the name in its file).
    #[getter]
    fn name(&self) -> String {
        self.inner.name().to_string()
    }
    /// Columns.
    #[getter]
    fn width(&self) -> u32 {
        self.inner.width()
    }
    /// Rows.
    #[getter]
    fn height(&self) -> u32 {
        self.inner.height()
    }
    /// 16 hex digits that change whenever anything that matters for play changes (not the name).
    #[getter]
    fn fingerprint(&self) -> String {
        self.inner.fingerprint()
    }
    /// `(role, base id)` of each seat.
    #[getter]
    fn seats(&self) -> Vec<(String, String)> {
        let g = self.inner.grid();
        self.inner.seats().iter().map(|s| (s.role.wire().to_string(), g.id(s.base))).collect()
    }
    /// Every cell id, row-major.
    fn cells(&self) -> Vec<String> {
        let g = self.inner.grid();
        g.cells().map(|c| g.id(c)).collect()
    }
    /// `luka`, `vrch` or `rieka`.
    fn terrain(&self, cell: &str) -> PyResult<&'static str> {
        Ok(self.inner.terrain(cell_of(&self.inner, cell)?).wire())
    }
    /// The units a cell starts with.
    fn garrison(&self, cell: &str) -> PyResult<u32> {
        Ok(self.inner.garrison(cell_of(&self.inner, cell)?))
    }
    /// Whether the cell is a base (+5 production; a seat's home base or a neutral one).
    fn is_base(&self, cell: &str) -> PyResult<bool> {
        Ok(self.inner.is_base(cell_of(&self.inner, cell)?))
    }
    /// Neighbours north, south, west, east.
    fn neighbours(&self, cell: &str) -> PyResult<Vec<String>> {
        let g = self.inner.grid();
        Ok(g.neighbours(cell_of(&self.inner, cell)?).iter().map(|c| g.id(c)).collect())
    }
    /// The text picture of the map.
    fn render(&self) -> String {
        render_map(&self.inner)
    }
    /// The map in the map file format.
    fn to_text(&self) -> String {
        write_map_file(&self.inner)
    }
    /// Writes the map file (the text of `to_text`); `Map.load` reads it back.
    fn save(&self, path: PathBuf) -> PyResult<()> {
        std::fs::write(&path, write_map_file(&self.inner))
            .map_err(|e| PyOSError::new_err(format!("cannot write {}: {e}", path.display())))
    }
    /// Terrain counts, garrison histogram, bases, symmetry.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = MapStats::of(&self.inner);
        let d = PyDict::new(py);
        d.set_item("cells", s.cells)?;
        let t = PyDict::new(py);
        for (k, n) in gbely_rules::Terrain::ALL.iter().zip(s.terrain) {
            t.set_item(k.wire(), n)?;
        }
        d.set_item("terrain", t)?;
        d.set_item("garrisons", s.garrison_histogram.to_vec())?;
        d.set_item("bases", s.bases)?;
        d.set_item("symmetric", s.symmetric_180)?;
        Ok(d)
    }
    fn __eq__(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner) || *self.inner == *other.inner
    }
    fn __hash__(&self) -> u64 {
        // Equal maps have equal fingerprints (it covers everything but the name).
        u64::from_str_radix(&self.inner.fingerprint(), 16).unwrap_or(0)
    }
    /// Pickles as `Map.from_text(text)`: a map crosses process boundaries (multiprocessing).
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
        let from_text = slf.get_type().getattr("from_text")?;
        let args = PyTuple::new(slf.py(), [write_map_file(&slf.get().inner)])?;
        Ok((from_text, args))
    }
    fn __repr__(&self) -> String {
        format!(
            "<gbely.Map {} {}×{} {}>",
            self.inner.name(),
            self.inner.width(),
            self.inner.height(),
            self.inner.fingerprint()
        )
    }
}

/// A map argument: a `Map`, a spec string, or `None` for the reference map.
pub(crate) fn map_arg(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Arc<Map>> {
    match obj {
        None => Ok(Arc::new(gbely_world::reference_map())),
        Some(o) if o.is_none() => Ok(Arc::new(gbely_world::reference_map())),
        Some(o) => {
            if let Ok(m) = o.downcast::<PyMap>() {
                return Ok(m.get().inner.clone());
            }
            let spec: String = o
                .extract()
                .map_err(|_| PyTypeError::new_err("map: give a gbely.Map, `gbely`, `seed:TEXT` or a map file path"))?;
            Ok(PyMap::named(&spec, None)?.inner)
        }
    }
}
