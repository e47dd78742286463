//! The native part of the `gbely` Python package (`gbely._gbely`). Thin bindings only: every
//! behaviour lives in the Rust crates; pure-Rust work runs with the GIL released.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use gbely_council::Council;
use gbely_engine::game::{match_result, play, play_to, DecidePlayer, PlayOptions, Player, PlayerAnswer, ViolationKind};
use gbely_engine::protocol::answer_from_value;
use gbely_engine::session::Session;
use gbely_engine::sim::MatchConfig;
use gbely_engine::{cli, runs};
use gbely_rules::{Decide, Grid, Observation};
use gbely_world::{parse_map_file, render_map, write_map_file, Map, MapStats};
use pyo3::exceptions::{PyKeyboardInterrupt, PyOSError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::Value;

/// Runs the `gbely` command line (the same code as the Rust binary); returns the exit code.
#[pyfunction]
fn cli_main(py: Python<'_>, args: Vec<String>) -> u8 {
    let args: Vec<OsString> = args.into_iter().map(OsString::from).collect();
    py.allow_threads(|| cli::run_code(args))
}

/// A map: the reference map, a generated one or a map file.
#[pyclass(name = "Map", module = "gbely", frozen)]
#[derive(Clone)]
struct PyMap {
    inner: Arc<Map>,
}

fn cell_of(map: &Map, id: &str) -> PyResult<gbely_rules::Cell> {
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
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(PyMap { inner: Arc::new(map) })
    }

    /// Reads a map file.
    #[staticmethod]
    fn load(path: PathBuf) -> PyResult<Self> {
        let text = std::fs::read_to_string(&path)
            .map_err(|e| PyOSError::new_err(format!("cannot read the map {}: {e}", path.display())))?;
        let map = parse_map_file(&text).map_err(|e| PyValueError::new_err(format!("{}: {e}", path.display())))?;
        Ok(PyMap { inner: Arc::new(map) })
    }

    /// A map from the text of a map file.
    #[staticmethod]
    fn from_text(text: &str) -> PyResult<Self> {
        let map = parse_map_file(text).map_err(|e| PyValueError::new_err(e.to_string()))?;
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
        let map = gbely_world::generate_final(seed, cfg).map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(PyMap { inner: Arc::new(map) })
    }

    /// `gbely`, `seed:TEXT` or a file path, as on the command line.
    #[staticmethod]
    #[pyo3(signature = (spec, size = None))]
    fn named(spec: &str, size: Option<String>) -> PyResult<Self> {
        let map = runs::load_map(spec, size.as_deref()).map_err(|e| PyValueError::new_err(format!("{e:#}")))?;
        Ok(PyMap { inner: Arc::new(map) })
    }

    #[getter]
    fn name(&self) -> String {
        self.inner.name().to_string()
    }
    #[getter]
    fn width(&self) -> u32 {
        self.inner.width()
    }
    #[getter]
    fn height(&self) -> u32 {
        self.inner.height()
    }
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
fn map_arg(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Arc<Map>> {
    match obj {
        None => Ok(Arc::new(gbely_world::reference_map())),
        Some(o) if o.is_none() => Ok(Arc::new(gbely_world::reference_map())),
        Some(o) => {
            if let Ok(m) = o.downcast::<PyMap>() {
                return Ok(m.get().inner.clone());
            }
            let spec: String = o
                .extract()
                .map_err(|_| PyValueError::new_err("map: give a gbely.Map, `gbely`, `seed:TEXT` or a map file path"))?;
            Ok(PyMap::named(&spec, None)?.inner)
        }
    }
}

/// Python strings of every cell id of a map, made once per match.
fn id_strings(py: Python<'_>, grid: &Grid) -> Vec<Py<PyString>> {
    grid.cells().map(|c| PyString::new(py, &grid.id(c)).unbind()).collect()
}

/// The observation of SPEC §5 as a Python dict, exactly as an agent file receives it.
fn obs_dict<'py>(py: Python<'py>, obs: &Observation, ids: &[Py<PyString>]) -> PyResult<Bound<'py, PyDict>> {
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
fn to_value(o: &Bound<'_, PyAny>, depth: u32) -> Result<Value, String> {
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
fn answer_of(o: &Bound<'_, PyAny>) -> PlayerAnswer {
    match to_value(o, 0) {
        Ok(v) => match answer_from_value(v) {
            Ok(list) => PlayerAnswer::Raw(list),
            Err(e) => PlayerAnswer::Violation { kind: ViolationKind::Unreadable, detail: e.to_string() },
        },
        Err(e) => {
            PlayerAnswer::Violation { kind: ViolationKind::Unreadable, detail: format!("the answer is not JSON: {e}") }
        }
    }
}

/// A seat played by a Python callable, in-process: `decide(stav)` gets the dict of SPEC §5.
struct CallablePlayer {
    name: String,
    func: Py<PyAny>,
    ids: Arc<Vec<Py<PyString>>>,
    limit: Option<Duration>,
    pending: Option<PlayerAnswer>,
    /// A KeyboardInterrupt or SystemExit inside a callable: the match stops and it is re-raised.
    abort: Arc<Mutex<Option<PyErr>>>,
}

impl Player for CallablePlayer {
    fn name(&self) -> String {
        self.name.clone()
    }
    fn begin(&mut self, obs: &Observation, _grid: &Grid) {
        if gbely_engine::runner::interrupt::requested() {
            self.pending = Some(PlayerAnswer::Interrupted);
            return;
        }
        let answer = Python::with_gil(|py| {
            let d = match obs_dict(py, obs, &self.ids) {
                Ok(d) => d,
                Err(e) => return PlayerAnswer::Violation { kind: ViolationKind::Crash, detail: e.to_string() },
            };
            let start = Instant::now();
            let result = self.func.call1(py, (d,));
            let elapsed = start.elapsed();
            match result {
                Err(e) => {
                    if e.is_instance_of::<PyKeyboardInterrupt>(py)
                        || e.is_instance_of::<pyo3::exceptions::PySystemExit>(py)
                    {
                        self.abort.lock().expect("not poisoned").get_or_insert(e);
                        gbely_engine::runner::interrupt::request();
                        return PlayerAnswer::Interrupted;
                    }
                    let ty = e.get_type(py).name().map(|n| n.to_string()).unwrap_or_else(|_| "an exception".into());
                    let detail = format!("decide raised {ty}: {}", e.value(py));
                    e.print(py);
                    PlayerAnswer::Violation { kind: ViolationKind::Crash, detail }
                }
                Ok(v) => match self.limit {
                    Some(limit) if elapsed > limit => PlayerAnswer::Violation {
                        kind: ViolationKind::Timeout,
                        detail: format!(
                            "decide took {:.2} s (limit {:.1} s)",
                            elapsed.as_secs_f64(),
                            limit.as_secs_f64()
                        ),
                    },
                    _ => answer_of(v.bind(py)),
                },
            }
        });
        self.pending = Some(answer);
    }
    fn finish(&mut self) -> PlayerAnswer {
        self.pending.take().unwrap_or(PlayerAnswer::Raw(Vec::new()))
    }
}

/// Plays one match; each side is an agent spec (str) or a callable. Returns the result as JSON.
#[pyfunction]
#[allow(clippy::too_many_arguments)] // the keyword arguments of gbely.play
#[pyo3(signature = (agents, map = None, rounds = 150, replay = None, time_limit = Some(2.0), python = None, run_dir = None))]
fn play_match(
    py: Python<'_>,
    agents: Vec<Bound<'_, PyAny>>,
    map: Option<Bound<'_, PyAny>>,
    rounds: u32,
    replay: Option<PathBuf>,
    time_limit: Option<f64>,
    python: Option<String>,
    run_dir: Option<PathBuf>,
) -> PyResult<String> {
    let map = map_arg(map.as_ref())?;
    if agents.len() != map.seats().len() {
        return Err(PyValueError::new_err(format!(
            "the map has {} seats but {} agents were given",
            map.seats().len(),
            agents.len()
        )));
    }
    let limit = match time_limit {
        None => None,
        Some(s) => Some(runs::time_limit_seconds(s).map_err(|_| {
            PyValueError::new_err(format!(
                "time_limit={s}: seconds more than 0 and at most {}, or None for no limit",
                runs::MAX_TIME_LIMIT_S
            ))
        })?),
    };
    let py_exe = runs::python(python.as_deref());
    let ids = Arc::new(id_strings(py, map.grid()));
    // Specs first (files must exist), then the run folder only if a process agent needs one.
    let mut specs: Vec<Option<String>> = Vec::new();
    let mut names = Vec::new();
    for a in &agents {
        if let Ok(s) = a.extract::<String>() {
            runs::check_spec(&s).map_err(|e| PyValueError::new_err(format!("{e:#}")))?;
            names.push(runs::agent_name(&s));
            specs.push(Some(s));
        } else if a.is_callable() {
            let name = a
                .getattr("__qualname__")
                .or_else(|_| a.getattr("__name__"))
                .and_then(|n| n.extract::<String>())
                .unwrap_or_else(|_| "callable".into());
            names.push(name);
            specs.push(None);
        } else {
            return Err(PyValueError::new_err("an agent is a path to an agent file, `council`, `template`, `expander`, cmd:COMMAND, or a callable decide(stav)"));
        }
    }
    for k in 1..names.len() {
        if names[..k].contains(&names[k]) {
            names[k] = format!("{} (seat {k})", names[k]);
        }
    }
    let needs_dir = specs.iter().flatten().any(|s| s != "council");
    let run_dir = match run_dir {
        Some(d) => d,
        None if needs_dir => runs::unique_dir(PathBuf::from("gbely-runs").join(format!(
            "{}-{}",
            runs::timestamp(),
            runs::file_stem(specs.iter().flatten().next().map_or("agent", |s| s.as_str()))
        ))),
        None => PathBuf::new(),
    };
    // The replay file is created first: an unwritable path fails before anyone plays.
    let writer = replay
        .as_ref()
        .map(|path| {
            gbely_engine::record::ReplayWriter::create(path)
                .map_err(|e| PyOSError::new_err(format!("cannot write the replay {}: {e}", path.display())))
        })
        .transpose()?;
    let abort: Arc<Mutex<Option<PyErr>>> = Arc::new(Mutex::new(None));
    let mut players: Vec<Box<dyn Player + Send>> = Vec::new();
    let mut logs = Vec::new();
    for (seat, (spec, a)) in specs.iter().zip(&agents).enumerate() {
        match spec {
            Some(s) => {
                let (player, log) = seat_player(s, &names[seat], seat, &run_dir, limit, &py_exe)?;
                players.push(player);
                logs.push(log);
            }
            None => {
                players.push(Box::new(CallablePlayer {
                    name: names[seat].clone(),
                    func: a.clone().unbind(),
                    ids: ids.clone(),
                    limit,
                    pending: None,
                    abort: abort.clone(),
                }));
                logs.push(None);
            }
        }
    }
    let config = MatchConfig { rounds };
    // Ctrl-C (or SIGTERM) stops the match: the engine's handler is chained before Python's, so
    // the match ends cleanly (agents killed, the partial replay written) and Python then raises
    // KeyboardInterrupt as usual.
    let guard = gbely_engine::runner::interrupt::Guard::install()
        .map_err(|e| PyOSError::new_err(format!("cannot install the Ctrl-C handler: {e}")))?;
    let rec = py.allow_threads(|| {
        let mut refs: Vec<&mut dyn Player> = players.iter_mut().map(|p| p.as_mut() as &mut dyn Player).collect();
        match writer {
            Some(w) => play_to(map.clone(), &mut refs, config, w, &mut ()),
            None => play(map.clone(), &mut refs, PlayOptions { config, record: false }, &mut ()),
        }
    });
    drop(players);
    drop(guard);
    if let Some(e) = abort.lock().expect("not poisoned").take() {
        return Err(e);
    }
    if rec.interrupted() {
        py.check_signals()?;
        return Err(PyKeyboardInterrupt::new_err("the match was interrupted"));
    }
    if let Some(Err(e)) = &rec.replay_written {
        let path = replay.as_ref().map_or(String::new(), |p| p.display().to_string());
        return Err(PyOSError::new_err(format!("cannot write the replay {path}: {e}")));
    }
    let doc = runs::result_json(&map, &rec, replay.as_deref(), &logs);
    Ok(doc.to_string())
}

type SeatPlayer = (Box<dyn Player + Send>, Option<PathBuf>);

/// The player of one seat named by a spec; a process agent's files carry its seat number.
fn seat_player(
    spec: &str,
    name: &str,
    seat: usize,
    run_dir: &std::path::Path,
    limit: Option<Duration>,
    py: &str,
) -> PyResult<SeatPlayer> {
    match runs::resolve_agent(spec, run_dir, seat, py).map_err(|e| PyValueError::new_err(format!("{e:#}")))? {
        runs::AgentSpec::Council => Ok((Box::new(DecidePlayer::new(name.to_string(), Council::new())), None)),
        runs::AgentSpec::Process(cmd) => {
            let log = run_dir.join(format!("seat{seat}-{}.log", runs::file_stem(spec)));
            let mut cfg =
                gbely_engine::runner::process::ProcessConfig::new(run_dir.join(format!(".seat{seat}")), log.clone());
            cfg.time_limit = limit;
            let p = gbely_engine::runner::process::ProcessPlayer::new(name.to_string(), cmd, cfg)
                .map_err(|e| PyOSError::new_err(e.to_string()))?;
            Ok((Box::new(p), Some(log)))
        }
    }
}

/// A match played step by step: read observations, submit commands, advance a round.
/// A loop over the engine's [`Session`], like every other way a match is played.
#[pyclass(name = "Match", module = "gbely", subclass)]
struct PyMatch {
    session: Session,
    ids: Vec<Py<PyString>>,
    councils: Vec<Option<Council>>,
}

#[pymethods]
impl PyMatch {
    /// `map`: a `Map`, `gbely`, `seed:TEXT` or a map file. `council`: the seats the built-in
    /// Council plays (default: the Council's seat of the map); the other seats are yours.
    /// `record`: keep the replay in memory for `save_replay` (off makes stepping cheaper).
    #[new]
    #[pyo3(signature = (map = None, rounds = 150, council = None, names = None, record = true))]
    fn new(
        py: Python<'_>,
        map: Option<Bound<'_, PyAny>>,
        rounds: u32,
        council: Option<Vec<usize>>,
        names: Option<Vec<String>>,
        record: bool,
    ) -> PyResult<Self> {
        let map = map_arg(map.as_ref())?;
        let seats = map.seats().len();
        let council = council.unwrap_or_else(|| {
            map.seats()
                .iter()
                .enumerate()
                .filter(|(_, s)| s.role == gbely_world::SeatRole::Council)
                .map(|(k, _)| k)
                .collect()
        });
        if let Some(&bad) = council.iter().find(|&&k| k >= seats) {
            return Err(PyValueError::new_err(format!("seat {bad} does not exist: the map has {seats} seats")));
        }
        let names = match names {
            Some(n) if n.len() == seats => n,
            Some(n) => return Err(PyValueError::new_err(format!("{} names for {seats} seats", n.len()))),
            None => (0..seats)
                .map(|k| if council.contains(&k) { "council".to_string() } else { format!("seat {k}") })
                .collect(),
        };
        let ids = id_strings(py, map.grid());
        let councils = (0..seats).map(|k| council.contains(&k).then(Council::new)).collect();
        let mut session = Session::new(map, MatchConfig { rounds }, names);
        if record {
            session.record();
        }
        Ok(PyMatch { session, ids, councils })
    }

    /// The current round (0-based; the last one played once the match is over).
    #[getter]
    fn round(&self) -> u32 {
        self.session.round()
    }
    #[getter]
    fn is_over(&self) -> bool {
        self.session.is_over()
    }
    #[getter]
    fn seats(&self) -> usize {
        self.session.seats()
    }
    #[getter]
    fn map(&self) -> PyMap {
        PyMap { inner: self.session.state().map().clone() }
    }
    /// Whether a seat still plays (neither eliminated nor disqualified).
    fn is_active(&self, seat: usize) -> PyResult<bool> {
        self.check_seat(seat)?;
        Ok(self.session.is_active(seat as u8))
    }

    /// The observation of SPEC §5 for a seat, as the dict an agent gets.
    fn observation<'py>(&mut self, py: Python<'py>, seat: usize) -> PyResult<Bound<'py, PyDict>> {
        self.check_seat(seat)?;
        self.check_running()?;
        let obs = self.session.observe(seat as u8);
        obs_dict(py, &obs, &self.ids)
    }

    /// Hands in a seat's commands for this round: `{"prikazy": [...]}` or a list. Malformed
    /// commands are discarded when the round is resolved; an answer that is not a command list
    /// at all counts as an unreadable answer (a violation), as it would from an agent file.
    fn submit(&mut self, seat: usize, commands: Bound<'_, PyAny>) -> PyResult<()> {
        self.check_seat(seat)?;
        self.check_running()?;
        self.session.submit(seat as u8, answer_of(&commands));
        Ok(())
    }

    /// Records a violation for a seat this round (`timeout`, `crash` or `unreadable`).
    #[pyo3(signature = (seat, kind = "crash", detail = ""))]
    fn violation(&mut self, seat: usize, kind: &str, detail: &str) -> PyResult<()> {
        self.check_seat(seat)?;
        self.check_running()?;
        let Some(kind) = ViolationKind::from_wire(kind) else {
            return Err(PyValueError::new_err(format!("violation kind `{kind}`: timeout, crash or unreadable")));
        };
        self.session.submit(seat as u8, PlayerAnswer::Violation { kind, detail: detail.into() });
        Ok(())
    }

    /// Resolves the round: Council seats decide, the others use what was submitted (nothing
    /// submitted = no commands). Returns what happened: captures, discarded commands,
    /// violations, eliminations, and whether the match is over.
    fn advance<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        self.check_running()?;
        for s in 0..self.session.seats() {
            if let Some(council) = self.councils[s].as_mut().filter(|_| self.session.is_active(s as u8)) {
                let obs = self.session.observe(s as u8);
                self.session.submit(s as u8, PlayerAnswer::Commands(council.decide(&obs)));
            }
        }
        let session = &mut self.session;
        py.allow_threads(|| {
            session.advance();
        });
        let report = self.session.report();
        let d = PyDict::new(py);
        let g = self.session.grid();
        d.set_item("round", report.round)?;
        let caps: Vec<(u8, String, i8)> =
            report.captures.iter().map(|c| (c.seat, g.id(c.cell), gbely_engine::game::owner_code(c.from))).collect();
        d.set_item("captures", caps)?;
        let disc: Vec<(u8, u32, &str)> = report.discarded.iter().map(|x| (x.seat, x.index, x.reason.code())).collect();
        d.set_item("discarded", disc)?;
        d.set_item("violations", report.violations.clone())?;
        d.set_item("disqualified", report.disqualified.clone())?;
        d.set_item("eliminated", report.eliminated.clone())?;
        d.set_item("over", self.session.is_over())?;
        Ok(d)
    }

    /// Cells and units per seat now.
    fn figures<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let m = self.session.state();
        let seats = m.seats() as u8;
        let d = PyDict::new(py);
        d.set_item("round", m.round())?;
        d.set_item("cells", (0..seats).map(|s| m.cell_count(s)).collect::<Vec<_>>())?;
        d.set_item("units", (0..seats).map(|s| m.unit_total(s)).collect::<Vec<_>>())?;
        Ok(d)
    }

    /// The result (SPEC §10): per seat cells, score (share of the map, %), tie-break round,
    /// violations, disqualification; final once the match is over.
    fn result<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let text =
            serde_json::to_string(&match_result(self.session.state(), self.session.names())).expect("serializes");
        py.import("json")?.call_method1("loads", (text,))
    }

    /// Writes the replay of the rounds played so far.
    fn save_replay(&self, path: PathBuf) -> PyResult<()> {
        let replay = self
            .session
            .replay_so_far()
            .ok_or_else(|| PyValueError::new_err("this match is not recorded: create it with record=True"))?;
        gbely_engine::record::write_replay(&path, &replay)
            .map(|_| ())
            .map_err(|e| PyOSError::new_err(format!("cannot write {}: {e}", path.display())))
    }
}

impl PyMatch {
    fn check_seat(&self, seat: usize) -> PyResult<()> {
        if seat >= self.session.seats() {
            return Err(PyValueError::new_err(format!(
                "seat {seat} does not exist: the match has {} seats",
                self.session.seats()
            )));
        }
        Ok(())
    }
    fn check_running(&self) -> PyResult<()> {
        if self.session.is_over() {
            return Err(pyo3::exceptions::PyRuntimeError::new_err("the match is over"));
        }
        Ok(())
    }
}

/// The viewer page (one self-contained HTML file) for a replay given as JSON text.
#[pyfunction]
fn replay_html(py: Python<'_>, text: String) -> PyResult<String> {
    let replay = gbely_world::Replay::from_json(&text).map_err(|e| PyValueError::new_err(e.to_string()))?;
    py.allow_threads(|| gbely_engine::viewer::viewer_html(&replay)).map_err(PyValueError::new_err)
}

/// Re-simulates a replay given as JSON text; `None` when it matches, else where it differs.
#[pyfunction]
fn replay_verify(py: Python<'_>, text: String) -> PyResult<Option<String>> {
    let replay = gbely_world::Replay::from_json(&text).map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok(py.allow_threads(|| gbely_engine::replays::verify(&replay).err().map(|m| m.to_string())))
}

/// For each finalist seat, the index of the entry that plays it (see `gbely final`).
#[pyfunction]
#[pyo3(signature = (map, pinned = Vec::new()))]
fn final_seating(map: &PyMap, pinned: Vec<u8>) -> PyResult<Vec<usize>> {
    runs::final_seating(&map.inner, &pinned).map_err(|e| PyValueError::new_err(format!("{e:#}")))
}

/// The `pravidla` module text (SPEC §12), to check the Python copy against.
#[pyfunction]
fn pravidla_source() -> &'static str {
    gbely_rules::constants::PRAVIDLA_PY
}

#[pymodule]
fn _gbely(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(cli_main, m)?)?;
    m.add_function(wrap_pyfunction!(play_match, m)?)?;
    m.add_function(wrap_pyfunction!(pravidla_source, m)?)?;
    m.add_function(wrap_pyfunction!(replay_html, m)?)?;
    m.add_function(wrap_pyfunction!(replay_verify, m)?)?;
    m.add_function(wrap_pyfunction!(final_seating, m)?)?;
    m.add_class::<PyMap>()?;
    m.add_class::<PyMatch>()?;
    Ok(())
}
