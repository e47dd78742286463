//! The core of the learning environments (`gbely.env`): matches whose observations are numpy
//! arrays and whose actions are per-cell choices, over the engine's `Session` like every other
//! way a match is played.
//!
//! The arrays are made from the seat's SPEC §5 observation (the engine's typed `Observation`)
//! and nothing else, so they hold no more than an agent file would get: cells the seat neither
//! owns nor sees are "unseen", values are rounded as in the dict, and the only base marked is
//! the seat's own. The arrays are over a grid (`height × width`) that is the map's size by
//! default, or any larger one: the map sits at the top-left and every padded cell looks exactly
//! like an unseen cell (terrain and owner -1, the rest 0, action mask "stay" only), so a grid
//! larger than every map played hides the map's size.
//!
//! `EnvCore` is one match for `GbelyEnv` and `parallel_env` (opponents written in Python are
//! driven from Python); `VectorCore` (vector.rs) steps n matches on threads with the GIL
//! released, writing into arrays it allocated once.

use std::sync::{Arc, Mutex};

use gbely_engine::builtins::{builtin_agent, BUILTIN_AGENTS};
use gbely_engine::recorder::match_result;
use gbely_engine::runner::player::PlayerAnswer;
use gbely_engine::session::{Session, SessionState};
use gbely_engine::sim::{MatchConfig, Mode};
use gbely_rules::{Cell, Command, Decide, Grid, Observation, Owner, Terrain};
use gbely_world::{parse_map_file, write_map_file, Map, SeatRole};
use numpy::{PyArray1, PyArray2, PyArray3, PyArrayMethods, PyReadonlyArray2, PyUntypedArrayMethods};
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

/// One seat's arrays, each over the arrays' grid (row-major, possibly larger than the map's),
/// `mask` with `KINDS` entries per cell.
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
/// not attack other finalists, SPEC §9), which the action mask follows. `width`: the arrays'
/// row length (at least the map's): the map's row r, column c is the arrays' row r, column c,
/// and cells beyond the map are written as unseen (mask: stay only).
pub(crate) fn write_obs(obs: &Observation, grid: &Grid, finalist: bool, width: usize, out: ObsOut<'_>) {
    let padded = width != grid.width() as usize;
    let at = |c: Cell| -> usize {
        if padded {
            let (r, col) = grid.row_col(c);
            r as usize * width + col as usize
        } else {
            c.index()
        }
    };
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
    out.base[at(obs.base)] = 1;
    for c in &obs.own {
        let i = at(c.cell);
        out.terrain[i] = terrain_code(c.terrain);
        out.owner[i] = OWN;
        out.units[i] = c.units as f32;
        out.fortification[i] = c.fortification as f32;
        out.visible[i] = 1;
    }
    for v in &obs.visible {
        let i = at(v.cell);
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
        let m = &mut out.mask[at(c.cell) * KINDS..][..KINDS];
        m[9] = 1;
        for d in 0..4 {
            let Some(n) = toward(grid, c.cell, d) else { continue };
            let o = out.owner[at(n)];
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

/// The arrays' grid of a map: `grid` (rows, columns) when given, which the map must fit in,
/// else the map's own size.
pub(crate) fn grid_of(map: &Map, grid: Option<(usize, usize)>) -> Result<(usize, usize), String> {
    let own = (map.height() as usize, map.width() as usize);
    match grid {
        None => Ok(own),
        Some((h, w)) if h >= own.0 && w >= own.1 => Ok((h, w)),
        Some((h, w)) => Err(format!(
            "the map {} is {}×{} (width × height): larger than the grid of {w}×{h}",
            map.name(),
            own.1,
            own.0
        )),
    }
}

/// A match for the environments: a session, the built-in agents of some seats, scratch buffers.
pub(crate) struct Arena {
    pub(crate) map: Arc<Map>,
    /// The arrays' grid (rows, columns): the map's size or larger (padding, see `write_obs`).
    pub(crate) shape: (usize, usize),
    rounds: u32,
    pub(crate) session: Session,
    /// Per seat, the built-in agent that plays it (by its name in `BUILTIN_AGENTS`).
    bot_names: Vec<Option<String>>,
    /// In a mutex only to be `Sync` (as a Python object must be); used through `get_mut`.
    bots: Vec<Option<Mutex<Box<dyn Decide + Send>>>>,
    obs: Observation,
    obs_seat: Option<u8>,
    pub(crate) cmds: Vec<Command>,
    /// The map's part of padded actions (see `act`).
    kinds: Vec<i8>,
    fractions: Vec<f32>,
}

impl Arena {
    /// `grid`: the arrays' (rows, columns), the map's size when `None`.
    pub(crate) fn new(
        map: Arc<Map>,
        rounds: u32,
        bot_names: Vec<Option<String>>,
        grid: Option<(usize, usize)>,
    ) -> Result<Arena, String> {
        let shape = grid_of(&map, grid)?;
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
            shape,
            rounds,
            session,
            bot_names,
            obs: Observation::default(),
            obs_seat: None,
            cmds: Vec::new(),
            kinds: Vec::new(),
            fractions: Vec::new(),
        })
    }

    /// Why `map` cannot be played here, if it cannot: larger than the grid, or another seat
    /// layout (the seats' roles, which the opponents follow).
    pub(crate) fn refuses(&self, map: &Map) -> Option<String> {
        if let Err(e) = grid_of(map, Some(self.shape)) {
            return Some(e);
        }
        let roles = |m: &Map| m.seats().iter().map(|s| s.role).collect::<Vec<_>>();
        if roles(map) != roles(&self.map) {
            return Some(format!(
                "the map {} has {} seats ({}), this environment {} ({})",
                map.name(),
                map.seats().len(),
                if map.seats().len() > 2 { "a final" } else { "a duel" },
                self.map.seats().len(),
                if self.map.seats().len() > 2 { "a final" } else { "a duel" },
            ));
        }
        None
    }

    /// Cells of the arrays' grid.
    pub(crate) fn grid_cells(&self) -> usize {
        self.shape.0 * self.shape.1
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
    pub(crate) fn observed(&mut self, seat: u8) -> &Observation {
        if self.obs_seat != Some(seat) {
            self.session.observe_into(seat, &mut self.obs);
            self.obs_seat = Some(seat);
        }
        &self.obs
    }

    pub(crate) fn write(&mut self, seat: u8, out: ObsOut<'_>) {
        let finalist = self.finalist(seat);
        self.observed(seat);
        write_obs(&self.obs, self.map.grid(), finalist, self.shape.1, out);
    }

    /// Hands in a seat's per-cell actions (over the arrays' grid) as commands; the actions of
    /// padded cells are ignored (but must be kinds).
    pub(crate) fn act(&mut self, seat: u8, kind: &[i8], fraction: &[f32]) -> Result<(), String> {
        self.observed(seat);
        let (mh, mw) = (self.map.height() as usize, self.map.width() as usize);
        let (h, w) = self.shape;
        let (kind, fraction) = if w == mw {
            // The map's rows are the arrays' first rows: the rest is padding.
            if h > mh {
                check_kinds(&kind[mh * w..], w, mh)?;
            }
            (&kind[..mh * mw], &fraction[..mh * mw])
        } else {
            check_kinds(kind, w, 0)?;
            self.kinds.clear();
            self.fractions.clear();
            for r in 0..mh {
                self.kinds.extend_from_slice(&kind[r * w..][..mw]);
                self.fractions.extend_from_slice(&fraction[r * w..][..mw]);
            }
            (&self.kinds[..], &self.fractions[..])
        };
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
            shape: self.shape,
            rounds: self.rounds,
            session: self.session.try_clone()?,
            bot_names: self.bot_names.clone(),
            bots: Self::bots_of(&self.bot_names),
            obs: Observation::default(),
            obs_seat: None,
            cmds: Vec::new(),
            kinds: Vec::new(),
            fractions: Vec::new(),
        })
    }
}

/// The error of a kind out of range in `kind`, a part of arrays `width` wide starting at row
/// `row0`.
fn check_kinds(kind: &[i8], width: usize, row0: usize) -> Result<(), String> {
    match kind.iter().position(|&k| !(0..KINDS as i8).contains(&k)) {
        None => Ok(()),
        Some(i) => Err(format!(
            "action kind {} at row {}, col {}: kinds are 0 to {}",
            kind[i],
            row0 + i / width,
            i % width,
            KINDS - 1
        )),
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
pub(crate) fn contiguous<T>(r: Result<T, numpy::NotContiguousError>) -> PyResult<T> {
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
    /// `expander-rs`) or `None` for a seat played from Python. `grid`: the arrays' (rows,
    /// columns), at least the map's size (the default). `record`: keep each match's replay for
    /// `save_replay` (a recording environment cannot be copied or pickled).
    #[new]
    #[pyo3(signature = (map, rounds, opponents, grid = None, record = false))]
    fn new(
        py: Python<'_>,
        map: Option<Bound<'_, PyAny>>,
        rounds: i64,
        opponents: Vec<Option<String>>,
        grid: Option<(usize, usize)>,
        record: bool,
    ) -> PyResult<Self> {
        let map = map_arg(map.as_ref())?;
        let rounds = check_rounds(rounds)?;
        let ids = id_strings(py, map.grid());
        let mut arena = Arena::new(map, rounds, opponents, grid).map_err(PyValueError::new_err)?;
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
            if let Some(e) = self.arena.refuses(m) {
                return Err(PyValueError::new_err(e));
            }
            if m.grid().width() != self.arena.map.width() || m.grid().height() != self.arena.map.height() {
                self.ids = id_strings(py, m.grid());
            }
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
    /// The arrays' (rows, columns).
    #[getter]
    fn grid(&self) -> (usize, usize) {
        self.arena.shape
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
        let (h, w) = self.arena.shape;
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
        let n = self.arena.grid_cells();
        if kind.len() != n || fraction.len() != n {
            return Err(PyValueError::new_err(format!(
                "actions over {} and {} cells for a grid of {n}",
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
        let args = (write_map_file(&me.arena.map), me.arena.rounds, me.arena.bot_names.clone(), text, me.arena.shape);
        Ok((restore, args.into_pyobject(slf.py())?))
    }

    /// The inverse of pickling.
    #[staticmethod]
    #[pyo3(signature = (map, rounds, opponents, state, grid = None))]
    fn _restore(
        py: Python<'_>,
        map: &str,
        rounds: u32,
        opponents: Vec<Option<String>>,
        state: &str,
        grid: Option<(usize, usize)>,
    ) -> PyResult<Self> {
        let map = Arc::new(parse_map_file(map).map_err(|e| PyValueError::new_err(e.to_string()))?);
        let state: SessionState =
            serde_json::from_str(state).map_err(|e| PyValueError::new_err(format!("not an environment state: {e}")))?;
        let mut arena = Arena::new(map.clone(), rounds, opponents, grid).map_err(PyValueError::new_err)?;
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
