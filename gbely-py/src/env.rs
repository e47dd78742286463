//! The core of the learning environments (`gbely.env`): matches whose observations are numpy
//! arrays and whose actions are per-cell choices, over the engine's `Session` like every other
//! way a match is played.
//!
//! The arrays are made from the seat's SPEC §5 observation (the engine's typed `Observation`)
//! and nothing else, so they hold no more than an agent file would get: cells the seat neither
//! owns nor sees are "unseen", values are rounded as in the dict, and the only base marked is
//! the seat's own. The one fact beyond §5 is the arrays' shape: the map's size.
//!
//! `EnvCore` is one match for `GbelyEnv` and `parallel_env` (opponents written in Python are
//! driven from Python); `VectorCore` steps n matches against built-in opponents on threads with
//! the GIL released, writing into arrays it allocated once.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use gbely_engine::builtins::{builtin_agent, BUILTIN_AGENTS};
use gbely_engine::recorder::match_result;
use gbely_engine::runner::player::PlayerAnswer;
use gbely_engine::session::{Session, SessionState};
use gbely_engine::sim::{MatchConfig, Mode};
use gbely_rules::{Cell, Command, Decide, Grid, Observation, Owner, Terrain};
use gbely_world::{parse_map_file, write_map_file, Map, SeatRole};
use numpy::{PyArray1, PyArray2, PyArray3, PyArrayMethods, PyReadonlyArray2, PyReadonlyArray3, PyUntypedArrayMethods};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};

use crate::convert::{answer_of, id_strings, obs_dict};
use crate::maps::{map_arg, PyMap};
use crate::step::check_rounds;

/// Actions per cell: stay, MOVE north/south/west/east, ATTACK north/south/west/east, FORTIFY.
pub(crate) const KINDS: usize = 10;

/// Owner codes of the `owner` array: unseen, neutral (`hbp`), the seat itself, the Council
/// (`zastupitelstvo`); an army `armada_k` (k = 1 for the Council's view of seat 0) is `k + 2`.
const UNSEEN: i8 = -1;
const OWN: i8 = 1;
const COUNCIL: i8 = 2;

fn owner_code(o: Owner) -> i8 {
    match o {
        Owner::Neutral => 0,
        Owner::Council => COUNCIL,
        Owner::Army(k) => k as i8 + 2,
    }
}

fn terrain_code(t: Terrain) -> i8 {
    match t {
        Terrain::Meadow => 0,
        Terrain::Hill => 1,
        Terrain::River => 2,
    }
}

/// The neighbour of `c` toward N, S, W, E (`d` = 0 … 3), if on the map.
fn toward(grid: &Grid, c: Cell, d: usize) -> Option<Cell> {
    let (r, col) = grid.row_col(c);
    let (w, h) = (grid.width(), grid.height());
    match d {
        0 if r > 0 => Some(grid.cell(r - 1, col)),
        1 if r + 1 < h => Some(grid.cell(r + 1, col)),
        2 if col > 0 => Some(grid.cell(r, col - 1)),
        3 if col + 1 < w => Some(grid.cell(r, col + 1)),
        _ => None,
    }
}

/// One seat's arrays, each over the grid (row-major), `mask` with `KINDS` entries per cell.
pub(crate) struct ObsOut<'a> {
    pub terrain: &'a mut [i8],
    pub owner: &'a mut [i8],
    pub units: &'a mut [f32],
    pub fortification: &'a mut [f32],
    pub visible: &'a mut [i8],
    pub base: &'a mut [i8],
    pub round: &'a mut i32,
    pub mask: &'a mut [i8],
}

/// Writes the arrays of an observation. `finalist`: the seat is a finalist of a final (it may
/// not attack other finalists, SPEC §9), which the action mask follows.
pub(crate) fn write_obs(obs: &Observation, grid: &Grid, finalist: bool, out: ObsOut<'_>) {
    out.terrain.fill(UNSEEN);
    out.owner.fill(UNSEEN);
    out.units.fill(0.0);
    out.fortification.fill(0.0);
    out.visible.fill(0);
    out.base.fill(0);
    out.mask.fill(0);
    for k in out.mask.iter_mut().step_by(KINDS) {
        *k = 1; // staying is always possible
    }
    *out.round = obs.round as i32;
    out.base[obs.base.index()] = 1;
    for c in &obs.own {
        let i = c.cell.index();
        out.terrain[i] = terrain_code(c.terrain);
        out.owner[i] = OWN;
        out.units[i] = c.units as f32;
        out.fortification[i] = c.fortification as f32;
        out.visible[i] = 1;
    }
    for v in &obs.visible {
        let i = v.cell.index();
        out.terrain[i] = terrain_code(v.terrain);
        out.owner[i] = owner_code(v.owner);
        out.units[i] = v.garrison as f32;
        out.fortification[i] = v.fortification as f32;
        out.visible[i] = 1;
    }
    for c in &obs.own {
        if c.units <= 0.0 {
            continue;
        }
        let m = &mut out.mask[c.cell.index() * KINDS..][..KINDS];
        m[9] = 1;
        for d in 0..4 {
            let Some(n) = toward(grid, c.cell, d) else { continue };
            let o = out.owner[n.index()];
            if o == OWN {
                m[1 + d] = 1;
            } else if !finalist || o == 0 || o == COUNCIL {
                m[5 + d] = 1;
            }
        }
    }
}

/// The commands of per-cell actions for an observation: for each own cell (row-major) whose
/// kind is not 0 and fraction is above 0 (NaN is 0), one command of the cell's observed units
/// (`jednotky`, rounded as in SPEC §5) when the fraction is 1 or more, else of
/// `fraction × units` (the float32 fraction widened to f64, times the observed units); an amount
/// of 0 is no command, nor is a direction off the map. These are exactly the commands a
/// submission can send from its §5 dict: `gbely.codec.commands` makes the same list.
pub(crate) fn commands_of(
    obs: &Observation,
    grid: &Grid,
    kind: &[i8],
    fraction: &[f32],
    out: &mut Vec<Command>,
) -> Result<(), String> {
    out.clear();
    if let Some(i) = kind.iter().position(|&k| !(0..KINDS as i8).contains(&k)) {
        let (r, c) = grid.row_col(Cell(i as u32));
        return Err(format!("action kind {} at row {r}, col {c}: kinds are 0 to {}", kind[i], KINDS - 1));
    }
    for c in &obs.own {
        let i = c.cell.index();
        let k = kind[i] as usize;
        let f = fraction[i];
        if k == 0 || f.is_nan() || f <= 0.0 {
            continue;
        }
        let amount = if f >= 1.0 { c.units } else { f as f64 * c.units };
        if amount <= 0.0 {
            continue;
        }
        let cmd = match k {
            1..=4 => toward(grid, c.cell, k - 1).map(|to| Command::Move { from: c.cell, to, amount }),
            5..=8 => toward(grid, c.cell, k - 5).map(|to| Command::Attack { from: c.cell, to, amount }),
            _ => Some(Command::Fortify { cell: c.cell, amount }),
        };
        out.extend(cmd);
    }
    Ok(())
}

/// A match for the environments: a session, the built-in agents of some seats, scratch buffers.
pub(crate) struct Arena {
    map: Arc<Map>,
    rounds: u32,
    session: Session,
    /// Per seat, the built-in agent that plays it (by its name in `BUILTIN_AGENTS`).
    bot_names: Vec<Option<String>>,
    /// In a mutex only to be `Sync` (as a Python object must be); used through `get_mut`.
    bots: Vec<Option<Mutex<Box<dyn Decide + Send>>>>,
    obs: Observation,
    obs_seat: Option<u8>,
    cmds: Vec<Command>,
}

impl Arena {
    pub(crate) fn new(map: Arc<Map>, rounds: u32, bot_names: Vec<Option<String>>) -> Result<Arena, String> {
        if bot_names.len() != map.seats().len() {
            return Err(format!("{} opponents for {} seats", bot_names.len(), map.seats().len()));
        }
        for name in bot_names.iter().flatten() {
            if !BUILTIN_AGENTS.contains(&name.as_str()) {
                return Err(format!("`{name}` is not a built-in agent: {}", BUILTIN_AGENTS.join(", ")));
            }
        }
        let session = Self::fresh(&map, rounds, &bot_names);
        Ok(Arena {
            bots: Self::bots_of(&bot_names),
            map,
            rounds,
            session,
            bot_names,
            obs: Observation::default(),
            obs_seat: None,
            cmds: Vec::new(),
        })
    }

    fn bots_of(names: &[Option<String>]) -> Vec<Option<Mutex<Box<dyn Decide + Send>>>> {
        names.iter().map(|n| n.as_deref().and_then(builtin_agent).map(Mutex::new)).collect()
    }

    fn fresh(map: &Arc<Map>, rounds: u32, bot_names: &[Option<String>]) -> Session {
        let names =
            bot_names.iter().enumerate().map(|(k, b)| b.clone().unwrap_or_else(|| format!("seat {k}"))).collect();
        let mut s = Session::new(map.clone(), MatchConfig { rounds }, names);
        for (k, b) in bot_names.iter().enumerate() {
            s.set_builtin(k as u8, b.as_deref());
        }
        s
    }

    pub(crate) fn reset(&mut self, map: Option<Arc<Map>>) {
        if let Some(m) = map {
            self.map = m;
        }
        self.session = Self::fresh(&self.map, self.rounds, &self.bot_names);
        self.obs_seat = None;
    }

    fn finalist(&self, seat: u8) -> bool {
        self.session.state().mode() == Mode::Final && self.map.seats()[seat as usize].role == SeatRole::Army
    }

    /// The seat's observation this round (computed once per seat and round).
    fn observed(&mut self, seat: u8) -> &Observation {
        if self.obs_seat != Some(seat) {
            self.session.observe_into(seat, &mut self.obs);
            self.obs_seat = Some(seat);
        }
        &self.obs
    }

    pub(crate) fn write(&mut self, seat: u8, out: ObsOut<'_>) {
        let finalist = self.finalist(seat);
        self.observed(seat);
        write_obs(&self.obs, self.map.grid(), finalist, out);
    }

    /// Hands in a seat's per-cell actions as commands.
    pub(crate) fn act(&mut self, seat: u8, kind: &[i8], fraction: &[f32]) -> Result<(), String> {
        self.observed(seat);
        let mut cmds = std::mem::take(&mut self.cmds);
        let r = commands_of(&self.obs, self.map.grid(), kind, fraction, &mut cmds);
        if r.is_ok() {
            self.session.submit(seat, PlayerAnswer::Commands(cmds.clone()));
        }
        self.cmds = cmds;
        r
    }

    /// The built-in agents decide, then the round is resolved.
    pub(crate) fn advance(&mut self) {
        for s in 0..self.session.seats() {
            if self.bots[s].is_some() && self.session.is_active(s as u8) {
                self.session.observe_into(s as u8, &mut self.obs);
                let cmds = self.bots[s]
                    .as_mut()
                    .map(|b| b.get_mut().unwrap_or_else(|e| e.into_inner()).decide(&self.obs))
                    .unwrap_or_default();
                self.session.submit(s as u8, PlayerAnswer::Commands(cmds));
            }
        }
        self.obs_seat = None;
        self.session.advance();
    }

    pub(crate) fn cells(&self, seat: u8) -> u32 {
        self.session.state().cell_count(seat)
    }

    /// The seat's share of the map in % (SPEC §10: `owned / cells × 100`).
    pub(crate) fn share(&self, seat: u8) -> f64 {
        self.cells(seat) as f64 / self.map.len() as f64 * 100.0
    }

    fn try_clone(&self) -> Option<Arena> {
        Some(Arena {
            map: self.map.clone(),
            rounds: self.rounds,
            session: self.session.try_clone()?,
            bot_names: self.bot_names.clone(),
            bots: Self::bots_of(&self.bot_names),
            obs: Observation::default(),
            obs_seat: None,
            cmds: Vec::new(),
        })
    }
}

/// Arrays made fresh for one seat's observation.
struct Fresh<'py> {
    terrain: Bound<'py, PyArray2<i8>>,
    owner: Bound<'py, PyArray2<i8>>,
    units: Bound<'py, PyArray2<f32>>,
    fortification: Bound<'py, PyArray2<f32>>,
    visible: Bound<'py, PyArray2<i8>>,
    base: Bound<'py, PyArray2<i8>>,
    round: Bound<'py, PyArray1<i32>>,
    mask: Bound<'py, PyArray3<i8>>,
}

/// The error of a numpy array that is not contiguous (every array here is made contiguous).
fn contiguous<T>(r: Result<T, numpy::NotContiguousError>) -> PyResult<T> {
    r.map_err(|e| PyValueError::new_err(e.to_string()))
}

/// One match for `GbelyEnv` and `parallel_env`: observations as new numpy arrays, actions as
/// arrays or command lists, the SPEC §5 dict on request. Copies with `copy.copy` and pickles.
#[pyclass(name = "EnvCore", module = "gbely._gbely")]
pub(crate) struct EnvCore {
    arena: Arena,
    ids: Vec<Py<PyString>>,
    /// Every match (the first and each after `reset`) is recorded for `save_replay`.
    record: bool,
}

#[pymethods]
impl EnvCore {
    /// `opponents`: per seat, the built-in agent that plays it (`council`, `template-rs`,
    /// `expander-rs`) or `None` for a seat played from Python. `record`: keep each match's
    /// replay for `save_replay` (a recording environment cannot be copied or pickled).
    #[new]
    #[pyo3(signature = (map, rounds, opponents, record = false))]
    fn new(
        py: Python<'_>,
        map: Option<Bound<'_, PyAny>>,
        rounds: i64,
        opponents: Vec<Option<String>>,
        record: bool,
    ) -> PyResult<Self> {
        let map = map_arg(map.as_ref())?;
        let rounds = check_rounds(rounds)?;
        let ids = id_strings(py, map.grid());
        let mut arena = Arena::new(map, rounds, opponents).map_err(PyValueError::new_err)?;
        if record {
            arena.session.record();
        }
        Ok(EnvCore { arena, ids, record })
    }

    /// A new match (on another map when given).
    #[pyo3(signature = (map = None))]
    fn reset(&mut self, py: Python<'_>, map: Option<Bound<'_, PyAny>>) -> PyResult<()> {
        let map = match map {
            Some(m) if !m.is_none() => Some(map_arg(Some(&m))?),
            _ => None,
        };
        if let Some(m) = &map {
            if m.seats().len() != self.arena.bot_names.len() {
                return Err(PyValueError::new_err(format!(
                    "the map {} has {} seats, this environment {}",
                    m.name(),
                    m.seats().len(),
                    self.arena.bot_names.len()
                )));
            }
            self.ids = id_strings(py, m.grid());
        }
        self.arena.reset(map);
        if self.record {
            self.arena.session.record();
        }
        Ok(())
    }

    #[getter]
    fn map(&self) -> PyMap {
        PyMap { inner: self.arena.map.clone() }
    }
    #[getter]
    fn round(&self) -> u32 {
        self.arena.session.round()
    }
    #[getter]
    fn rounds(&self) -> u32 {
        self.arena.rounds
    }
    #[getter]
    fn is_over(&self) -> bool {
        self.arena.session.is_over()
    }
    #[getter]
    fn seats(&self) -> usize {
        self.arena.session.seats()
    }
    fn is_active(&self, seat: u8) -> PyResult<bool> {
        self.check_seat(seat)?;
        Ok(self.arena.session.is_active(seat))
    }
    fn cells(&self, seat: u8) -> PyResult<u32> {
        self.check_seat(seat)?;
        Ok(self.arena.cells(seat))
    }
    /// The seat's share of the map now, in %.
    fn share(&self, seat: u8) -> PyResult<f64> {
        self.check_seat(seat)?;
        Ok(self.arena.share(seat))
    }

    /// The seat's observation as a dict of new arrays (see the module documentation).
    fn observe<'py>(&mut self, py: Python<'py>, seat: u8) -> PyResult<Bound<'py, PyDict>> {
        self.check_seat(seat)?;
        let (h, w) = (self.arena.map.height() as usize, self.arena.map.width() as usize);
        let a = Fresh {
            terrain: PyArray2::zeros(py, [h, w], false),
            owner: PyArray2::zeros(py, [h, w], false),
            units: PyArray2::zeros(py, [h, w], false),
            fortification: PyArray2::zeros(py, [h, w], false),
            visible: PyArray2::zeros(py, [h, w], false),
            base: PyArray2::zeros(py, [h, w], false),
            round: PyArray1::zeros(py, [1], false),
            mask: PyArray3::zeros(py, [h, w, KINDS], false),
        };
        {
            let (mut t, mut o, mut u, mut f) =
                (a.terrain.readwrite(), a.owner.readwrite(), a.units.readwrite(), a.fortification.readwrite());
            let (mut v, mut b, mut r, mut m) =
                (a.visible.readwrite(), a.base.readwrite(), a.round.readwrite(), a.mask.readwrite());
            let out = ObsOut {
                terrain: contiguous(t.as_slice_mut())?,
                owner: contiguous(o.as_slice_mut())?,
                units: contiguous(u.as_slice_mut())?,
                fortification: contiguous(f.as_slice_mut())?,
                visible: contiguous(v.as_slice_mut())?,
                base: contiguous(b.as_slice_mut())?,
                round: &mut contiguous(r.as_slice_mut())?[0],
                mask: contiguous(m.as_slice_mut())?,
            };
            self.arena.write(seat, out);
        }
        let d = PyDict::new(py);
        d.set_item("terrain", a.terrain)?;
        d.set_item("owner", a.owner)?;
        d.set_item("units", a.units)?;
        d.set_item("fortification", a.fortification)?;
        d.set_item("visible", a.visible)?;
        d.set_item("base", a.base)?;
        d.set_item("round", a.round)?;
        d.set_item("action_mask", a.mask)?;
        Ok(d)
    }

    /// The seat's observation of SPEC §5, the dict an agent file gets.
    fn observation_dict<'py>(&mut self, py: Python<'py>, seat: u8) -> PyResult<Bound<'py, PyDict>> {
        self.check_seat(seat)?;
        let obs = self.arena.observed(seat);
        obs_dict(py, obs, &self.ids)
    }

    /// Per-cell actions (`kind`: int8, `fraction`: float32, both over the grid) as this round's
    /// commands of the seat.
    fn act(&mut self, seat: u8, kind: PyReadonlyArray2<'_, i8>, fraction: PyReadonlyArray2<'_, f32>) -> PyResult<()> {
        self.check_seat(seat)?;
        self.check_running()?;
        let n = self.arena.map.len();
        if kind.len() != n || fraction.len() != n {
            return Err(PyValueError::new_err(format!(
                "actions over {} and {} cells for a map of {n}",
                kind.len(),
                fraction.len()
            )));
        }
        let (k, f) = (contiguous(kind.as_slice())?, contiguous(fraction.as_slice())?);
        self.arena.act(seat, k, f).map_err(PyValueError::new_err)
    }

    /// The commands `act` would hand in for these actions, as SPEC §6 dicts (`typ`, `z`, `na`,
    /// `pocet` or `pole`, `investicia`), without handing them in.
    fn commands<'py>(
        &mut self,
        py: Python<'py>,
        seat: u8,
        kind: PyReadonlyArray2<'_, i8>,
        fraction: PyReadonlyArray2<'_, f32>,
    ) -> PyResult<Bound<'py, PyList>> {
        self.check_seat(seat)?;
        let n = self.arena.map.len();
        if kind.len() != n || fraction.len() != n {
            return Err(PyValueError::new_err(format!(
                "actions over {} and {} cells for a map of {n}",
                kind.len(),
                fraction.len()
            )));
        }
        let (k, f) = (contiguous(kind.as_slice())?, contiguous(fraction.as_slice())?);
        self.arena.observed(seat);
        let mut cmds = Vec::new();
        commands_of(&self.arena.obs, self.arena.map.grid(), k, f, &mut cmds).map_err(PyValueError::new_err)?;
        let list = PyList::empty(py);
        for c in &cmds {
            let d = PyDict::new(py);
            match *c {
                Command::Move { from, to, amount } | Command::Attack { from, to, amount } => {
                    d.set_item("typ", if matches!(c, Command::Move { .. }) { "MOVE" } else { "ATTACK" })?;
                    d.set_item("z", self.ids[from.index()].bind(py))?;
                    d.set_item("na", self.ids[to.index()].bind(py))?;
                    d.set_item("pocet", amount)?;
                }
                Command::Fortify { cell, amount } => {
                    d.set_item("typ", "FORTIFY")?;
                    d.set_item("pole", self.ids[cell.index()].bind(py))?;
                    d.set_item("investicia", amount)?;
                }
            }
            list.append(d)?;
        }
        Ok(list)
    }

    /// Writes the replay of the rounds played so far of this match (made with `record`).
    fn save_replay(&self, path: std::path::PathBuf) -> PyResult<()> {
        let replay = self
            .arena
            .session
            .replay_so_far()
            .ok_or_else(|| PyValueError::new_err("this environment does not record: make it with record=True"))?;
        gbely_engine::recorder::write_replay(&path, &replay)
            .map(|_| ())
            .map_err(|e| pyo3::exceptions::PyOSError::new_err(format!("cannot write {}: {e}", path.display())))
    }

    /// The viewer's page (self-contained HTML) of the rounds played so far (made with `record`).
    fn viewer_html(&self, py: Python<'_>) -> PyResult<String> {
        let replay = self
            .arena
            .session
            .replay_so_far()
            .ok_or_else(|| PyValueError::new_err("this environment does not record: make it with record=True"))?;
        py.allow_threads(|| gbely_engine::replays::viewer::viewer_html(&replay)).map_err(PyValueError::new_err)
    }

    /// A command list (`{"prikazy": [...]}` or a list) as this round's answer of the seat.
    fn submit(&mut self, seat: u8, commands: Bound<'_, PyAny>) -> PyResult<()> {
        self.check_seat(seat)?;
        self.check_running()?;
        self.arena.session.submit(seat, answer_of(&commands));
        Ok(())
    }

    /// Built-in seats decide, the round is resolved (GIL released).
    fn advance(&mut self, py: Python<'_>) -> PyResult<()> {
        self.check_running()?;
        let arena = &mut self.arena;
        py.allow_threads(|| arena.advance());
        Ok(())
    }

    /// The result as `gbely.Match.result` gives it.
    fn result<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let s = &self.arena.session;
        let text = serde_json::to_string(&match_result(s.state(), s.names())).expect("serializes");
        py.import("json")?.call_method1("loads", (text,))
    }

    /// A picture of the match now (every cell, the referee's view): `height·scale × width·scale
    /// × 3` bytes of RGB in the viewer's colours (see `render::picture`).
    #[pyo3(signature = (scale = 1))]
    fn picture<'py>(&self, py: Python<'py>, scale: usize) -> PyResult<Bound<'py, PyArray3<u8>>> {
        if !(1..=64).contains(&scale) {
            return Err(PyValueError::new_err(format!("scale {scale}: 1 to 64 pixels a cell")));
        }
        let map = &self.arena.map;
        let pixels = crate::render::picture(map, self.arena.session.state(), scale);
        let shape = [map.height() as usize * scale, map.width() as usize * scale, 3];
        numpy::PyArray1::from_vec(py, pixels).reshape(shape)
    }

    fn __copy__(&self, py: Python<'_>) -> PyResult<Self> {
        let arena = self.arena.try_clone().ok_or_else(|| PyRuntimeError::new_err("a recording cannot be copied"))?;
        Ok(EnvCore { arena, ids: self.ids.iter().map(|s| s.clone_ref(py)).collect(), record: false })
    }
    fn __deepcopy__(&self, py: Python<'_>, _memo: Bound<'_, PyAny>) -> PyResult<Self> {
        self.__copy__(py)
    }

    /// Pickles as the map's text and the session's state (JSON; floats round-trip exactly).
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
        let me = slf.borrow();
        let state =
            me.arena.session.snapshot().ok_or_else(|| PyRuntimeError::new_err("a recording cannot be pickled"))?;
        let text = serde_json::to_string(&state).expect("serializes");
        let restore = slf.get_type().getattr("_restore")?;
        let args = (write_map_file(&me.arena.map), me.arena.rounds, me.arena.bot_names.clone(), text);
        Ok((restore, args.into_pyobject(slf.py())?))
    }

    /// The inverse of pickling.
    #[staticmethod]
    fn _restore(py: Python<'_>, map: &str, rounds: u32, opponents: Vec<Option<String>>, state: &str) -> PyResult<Self> {
        let map = Arc::new(parse_map_file(map).map_err(|e| PyValueError::new_err(e.to_string()))?);
        let state: SessionState =
            serde_json::from_str(state).map_err(|e| PyValueError::new_err(format!("not an environment state: {e}")))?;
        let mut arena = Arena::new(map.clone(), rounds, opponents).map_err(PyValueError::new_err)?;
        arena.session = Session::restore(map.clone(), state).map_err(PyValueError::new_err)?;
        Ok(EnvCore { arena, ids: id_strings(py, map.grid()), record: false })
    }
}

impl EnvCore {
    fn check_seat(&self, seat: u8) -> PyResult<()> {
        let n = self.arena.session.seats();
        if seat as usize >= n {
            return Err(PyValueError::new_err(format!("seat {seat} does not exist: the match has {n} seats")));
        }
        Ok(())
    }
    fn check_running(&self) -> PyResult<()> {
        if self.arena.session.is_over() {
            return Err(PyRuntimeError::new_err("the match is over: reset it"));
        }
        Ok(())
    }
}

/// The arrays a `VectorCore` writes into: n matches' observations, rewards and ends.
struct Buffers {
    terrain: Py<PyArray3<i8>>,
    owner: Py<PyArray3<i8>>,
    units: Py<PyArray3<f32>>,
    fortification: Py<PyArray3<f32>>,
    visible: Py<PyArray3<i8>>,
    base: Py<PyArray3<i8>>,
    round: Py<PyArray1<i32>>,
    mask: Py<numpy::PyArray4<i8>>,
    reward: Py<PyArray1<f32>>,
    terminated: Py<PyArray1<bool>>,
    share: Py<PyArray1<f32>>,
}

/// One match's share of the buffers, to hand to a thread.
struct Slot<'a> {
    out: ObsOut<'a>,
    reward: &'a mut f32,
    terminated: &'a mut bool,
    share: &'a mut f32,
}

/// n matches of one learning seat against built-in opponents, stepped in Rust on threads with
/// the GIL released; observations are written into arrays allocated once (`buffers`).
#[pyclass(name = "VectorCore", module = "gbely._gbely")]
pub(crate) struct VectorCore {
    arenas: Vec<Arena>,
    seat: u8,
    threads: usize,
    /// The worker threads when `threads` > 1 (made once, kept between steps).
    pool: Option<rayon::ThreadPool>,
    /// Counts steps; the pool's workers stay awake between steps until it changes ([`keep_warm`]).
    steps: Arc<AtomicU64>,
    bufs: Buffers,
}

#[pymethods]
impl VectorCore {
    #[new]
    #[pyo3(signature = (n, map, rounds, opponents, seat, threads))]
    fn new(
        py: Python<'_>,
        n: usize,
        map: Option<Bound<'_, PyAny>>,
        rounds: i64,
        opponents: Vec<Option<String>>,
        seat: u8,
        threads: usize,
    ) -> PyResult<Self> {
        if n == 0 {
            return Err(PyValueError::new_err("a VectorEnv needs at least one match"));
        }
        let map = map_arg(map.as_ref())?;
        let rounds = check_rounds(rounds)?;
        if seat as usize >= map.seats().len() {
            return Err(PyValueError::new_err(format!("seat {seat} does not exist on {}", map.name())));
        }
        if opponents.get(seat as usize).is_some_and(|o| o.is_some()) {
            return Err(PyValueError::new_err(format!("seat {seat} is the learner's: it has no opponent")));
        }
        if opponents.iter().enumerate().any(|(k, o)| k != seat as usize && o.is_none()) {
            return Err(PyValueError::new_err("every seat but the learner's needs a built-in opponent"));
        }
        let arenas = (0..n)
            .map(|_| Arena::new(map.clone(), rounds, opponents.clone()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(PyValueError::new_err)?;
        let (h, w) = (map.height() as usize, map.width() as usize);
        let bufs = Buffers {
            terrain: PyArray3::zeros(py, [n, h, w], false).unbind(),
            owner: PyArray3::zeros(py, [n, h, w], false).unbind(),
            units: PyArray3::zeros(py, [n, h, w], false).unbind(),
            fortification: PyArray3::zeros(py, [n, h, w], false).unbind(),
            visible: PyArray3::zeros(py, [n, h, w], false).unbind(),
            base: PyArray3::zeros(py, [n, h, w], false).unbind(),
            round: PyArray1::zeros(py, [n], false).unbind(),
            mask: numpy::PyArray4::zeros(py, [n, h, w, KINDS], false).unbind(),
            reward: PyArray1::zeros(py, [n], false).unbind(),
            terminated: PyArray1::zeros(py, [n], false).unbind(),
            share: PyArray1::zeros(py, [n], false).unbind(),
        };
        let mut core = VectorCore { arenas, seat, threads: 1, pool: None, steps: Arc::default(), bufs };
        core.set_threads(threads)?;
        core.run(py, None)?;
        Ok(core)
    }

    /// The arrays written by `reset` and `step` (the same objects every time).
    fn buffers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let b = &self.bufs;
        let d = PyDict::new(py);
        d.set_item("terrain", b.terrain.bind(py))?;
        d.set_item("owner", b.owner.bind(py))?;
        d.set_item("units", b.units.bind(py))?;
        d.set_item("fortification", b.fortification.bind(py))?;
        d.set_item("visible", b.visible.bind(py))?;
        d.set_item("base", b.base.bind(py))?;
        d.set_item("round", b.round.bind(py))?;
        d.set_item("action_mask", b.mask.bind(py))?;
        d.set_item("reward", b.reward.bind(py))?;
        d.set_item("terminated", b.terminated.bind(py))?;
        d.set_item("share", b.share.bind(py))?;
        Ok(d)
    }

    #[getter]
    fn threads(&self) -> usize {
        self.threads
    }
    #[setter]
    fn set_threads(&mut self, n: usize) -> PyResult<()> {
        let n = n.max(1);
        // The calling thread is one of the n (see `run`): the pool has the others.
        self.pool = if n > 1 {
            let pool =
                rayon::ThreadPoolBuilder::new().num_threads(n - 1).thread_name(|k| format!("gbely-env-{k}")).build();
            Some(pool.map_err(|e| PyRuntimeError::new_err(format!("cannot start {n} threads: {e}")))?)
        } else {
            None
        };
        self.threads = n;
        Ok(())
    }

    /// Starts every match again.
    fn reset(&mut self, py: Python<'_>) -> PyResult<()> {
        for a in &mut self.arenas {
            a.reset(None);
        }
        self.run(py, None)
    }

    /// One round of every match: the learner's actions (`kind` int8 and `fraction` float32, each
    /// n × height × width), the opponents', resolution; a match that ends starts again at once.
    fn step(
        &mut self,
        py: Python<'_>,
        kind: PyReadonlyArray3<'_, i8>,
        fraction: PyReadonlyArray3<'_, f32>,
    ) -> PyResult<()> {
        let n = self.arenas.len();
        let cells = self.arenas[0].map.len();
        if kind.shape() != [n, self.arenas[0].map.height() as usize, self.arenas[0].map.width() as usize]
            || fraction.shape() != kind.shape()
        {
            return Err(PyValueError::new_err(format!(
                "actions of shapes {:?} and {:?}: {n} × height × width expected",
                kind.shape(),
                fraction.shape()
            )));
        }
        let (k, f) = (contiguous(kind.as_slice())?, contiguous(fraction.as_slice())?);
        let actions: Vec<(&[i8], &[f32])> = k.chunks(cells).zip(f.chunks(cells)).collect();
        self.run(py, Some(&actions))
    }
}

impl VectorCore {
    /// Steps every match (when `actions` are given) and writes its observation, on threads.
    fn run(&mut self, py: Python<'_>, actions: Option<&[(&[i8], &[f32])]>) -> PyResult<()> {
        let b = &self.bufs;
        let cells = self.arenas[0].map.len();
        let (terrain, owner, units, fort, visible, base, round, mask, reward, term, share) = (
            b.terrain.bind(py),
            b.owner.bind(py),
            b.units.bind(py),
            b.fortification.bind(py),
            b.visible.bind(py),
            b.base.bind(py),
            b.round.bind(py),
            b.mask.bind(py),
            b.reward.bind(py),
            b.terminated.bind(py),
            b.share.bind(py),
        );
        // Borrowed for writing (numpy's borrow checking refuses a second writer), then handed to
        // the threads as plain slices while the GIL is released.
        let (mut terrain, mut owner, mut units, mut fort) =
            (terrain.readwrite(), owner.readwrite(), units.readwrite(), fort.readwrite());
        let (mut visible, mut base, mut round, mut mask) =
            (visible.readwrite(), base.readwrite(), round.readwrite(), mask.readwrite());
        let (mut reward, mut term, mut share) = (reward.readwrite(), term.readwrite(), share.readwrite());
        let slots: Vec<Slot<'_>> = {
            let mut terrain = contiguous(terrain.as_slice_mut())?.chunks_mut(cells);
            let mut owner = contiguous(owner.as_slice_mut())?.chunks_mut(cells);
            let mut units = contiguous(units.as_slice_mut())?.chunks_mut(cells);
            let mut fort = contiguous(fort.as_slice_mut())?.chunks_mut(cells);
            let mut visible = contiguous(visible.as_slice_mut())?.chunks_mut(cells);
            let mut base = contiguous(base.as_slice_mut())?.chunks_mut(cells);
            let mut round = contiguous(round.as_slice_mut())?.iter_mut();
            let mut mask = contiguous(mask.as_slice_mut())?.chunks_mut(cells * KINDS);
            let mut reward = contiguous(reward.as_slice_mut())?.iter_mut();
            let mut term = contiguous(term.as_slice_mut())?.iter_mut();
            let mut share = contiguous(share.as_slice_mut())?.iter_mut();
            (0..self.arenas.len())
                .map(|_| Slot {
                    out: ObsOut {
                        terrain: terrain.next().expect("n slots"),
                        owner: owner.next().expect("n slots"),
                        units: units.next().expect("n slots"),
                        fortification: fort.next().expect("n slots"),
                        visible: visible.next().expect("n slots"),
                        base: base.next().expect("n slots"),
                        round: round.next().expect("n slots"),
                        mask: mask.next().expect("n slots"),
                    },
                    reward: reward.next().expect("n slots"),
                    terminated: term.next().expect("n slots"),
                    share: share.next().expect("n slots"),
                })
                .collect()
        };
        let seat = self.seat;
        let acts: Vec<Option<(&[i8], &[f32])>> = match actions {
            Some(a) => a.iter().map(|&x| Some(x)).collect(),
            None => vec![None; self.arenas.len()],
        };
        let arenas = &mut self.arenas;
        let pool = &self.pool;
        // Workers still spinning after the last step stop now and pick up this one's matches.
        self.steps.fetch_add(1, Ordering::Relaxed);
        let result: Result<(), String> = py.allow_threads(|| {
            let work = arenas.iter_mut().zip(slots).zip(acts);
            match pool {
                None => work.into_iter().try_for_each(|((a, slot), act)| step_one(a, seat, act, slot)),
                // The calling thread works too, beside the pool's persistent workers (no thread
                // is started per step), and every thread takes the next match from one counter,
                // so uneven matches balance out. A step is short (a match-round is tens of µs),
                // so what counts is waking few threads: one per extra thread, and no fork-join.
                Some(pool) => {
                    let items: Vec<Mutex<Option<_>>> = work.map(|w| Mutex::new(Some(w))).collect();
                    let next = AtomicUsize::new(0);
                    let drain = || -> Result<(), String> {
                        while let Some(item) = items.get(next.fetch_add(1, Ordering::Relaxed)) {
                            let taken = item.lock().unwrap_or_else(|e| e.into_inner()).take();
                            if let Some(((a, slot), act)) = taken {
                                step_one(a, seat, act, slot)?;
                            }
                        }
                        Ok(())
                    };
                    let failed: Mutex<Option<String>> = Mutex::new(None);
                    let mine = pool.in_place_scope(|s| {
                        for _ in 0..pool.current_num_threads() {
                            s.spawn(|_| {
                                if let Err(e) = drain() {
                                    *failed.lock().unwrap_or_else(|e| e.into_inner()) = Some(e);
                                }
                            });
                        }
                        drain()
                    });
                    keep_warm(pool, &self.steps);
                    let theirs = failed.into_inner().unwrap_or_else(|e| e.into_inner());
                    mine.and(theirs.map_or(Ok(()), Err))
                }
            }
        });
        result.map_err(PyValueError::new_err)
    }
}

/// How long the workers stay awake after a step, waiting for the next.
const WARM: Duration = Duration::from_millis(1);

/// Keeps the pool's workers spinning for up to [`WARM`] after a step, until the next step
/// starts. A learner steps again within microseconds to milliseconds, and a worker that went
/// to sleep takes long to wake (hundreds of µs on a virtual machine whose idle CPU was halted):
/// longer than a step of a few matches, so the calling thread would do the whole step alone.
/// At most [`WARM`] of a core is spent per step and worker while the learner does other work.
fn keep_warm(pool: &rayon::ThreadPool, steps: &Arc<AtomicU64>) {
    let step = steps.load(Ordering::Relaxed);
    for _ in 0..pool.current_num_threads() {
        let steps = Arc::clone(steps);
        pool.spawn(move || {
            let start = Instant::now();
            'warm: loop {
                for _ in 0..64 {
                    if steps.load(Ordering::Relaxed) != step {
                        break 'warm;
                    }
                    std::hint::spin_loop();
                }
                if start.elapsed() >= WARM {
                    break;
                }
            }
        });
    }
}

/// One match's round: actions, resolution, reward, a new match when it ended, the observation.
fn step_one(arena: &mut Arena, seat: u8, actions: Option<(&[i8], &[f32])>, slot: Slot<'_>) -> Result<(), String> {
    *slot.reward = 0.0;
    *slot.terminated = false;
    if let Some((kind, fraction)) = actions {
        let before = arena.share(seat);
        arena.act(seat, kind, fraction)?;
        arena.advance();
        let after = arena.share(seat);
        *slot.reward = (after - before) as f32;
        *slot.share = after as f32;
        if arena.session.is_over() || !arena.session.is_active(seat) {
            *slot.terminated = true;
            arena.reset(None);
        }
    } else {
        *slot.share = arena.share(seat) as f32;
    }
    arena.write(seat, slot.out);
    Ok(())
}

/// For the benchmark: the seconds the engine itself takes for the rounds a `VectorCore` plays
/// with these actions (`kind`, `fraction`: rounds × n × height × width), one thread: per round
/// and match the learner's observation, its commands (decoded beforehand, not timed), the
/// opponents' observations and decisions, production and resolution, through a plain `Session`.
#[pyfunction]
#[pyo3(signature = (map, rounds, opponents, seat, kind, fraction))]
pub(crate) fn engine_round_seconds(
    py: Python<'_>,
    map: Option<Bound<'_, PyAny>>,
    rounds: i64,
    opponents: Vec<Option<String>>,
    seat: u8,
    kind: numpy::PyReadonlyArray4<'_, i8>,
    fraction: numpy::PyReadonlyArray4<'_, f32>,
) -> PyResult<(f64, usize)> {
    let map = map_arg(map.as_ref())?;
    let rounds = check_rounds(rounds)?;
    let shape = kind.shape().to_vec();
    let cells = map.len();
    if shape.len() != 4 || shape[2] * shape[3] != cells || fraction.shape() != shape.as_slice() {
        return Err(PyValueError::new_err("actions: rounds × n × height × width"));
    }
    let (steps, n) = (shape[0], shape[1]);
    let (k, f) = (contiguous(kind.as_slice())?, contiguous(fraction.as_slice())?);
    // The learner's commands of every round, as a VectorCore plays them (a new match on the end).
    // plan[t][m]: match m's commands in round t.
    let mut plan: Vec<Vec<Vec<Command>>> = vec![Vec::with_capacity(n); steps];
    for m in 0..n {
        let mut a = Arena::new(map.clone(), rounds, opponents.clone()).map_err(PyValueError::new_err)?;
        for (t, round) in plan.iter_mut().enumerate() {
            let at = (t * n + m) * cells;
            a.act(seat, &k[at..at + cells], &f[at..at + cells]).map_err(PyValueError::new_err)?;
            round.push(a.cmds.clone());
            a.advance();
            if a.session.is_over() || !a.session.is_active(seat) {
                a.reset(None);
            }
        }
    }
    let seconds = py.allow_threads(|| {
        let mut arenas: Vec<Arena> =
            (0..n).map(|_| Arena::new(map.clone(), rounds, opponents.clone()).expect("checked above")).collect();
        let mut obs = Observation::default();
        let start = std::time::Instant::now();
        for round in &plan {
            for (a, cmds) in arenas.iter_mut().zip(round) {
                a.session.observe_into(seat, &mut obs);
                a.session.submit(seat, PlayerAnswer::Commands(cmds.clone()));
                a.advance();
                if a.session.is_over() || !a.session.is_active(seat) {
                    a.reset(None);
                }
            }
        }
        start.elapsed().as_secs_f64()
    });
    Ok((seconds, steps * n))
}
