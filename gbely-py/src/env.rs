//! The core of the learning environments (`gbely.env`): matches whose observations are numpy
//! arrays and whose actions are per-cell choices, over the engine's `Session` like every other
//! way a match is played.
//!
//! The arrays are made from the seat's SPEC §5 observation (the engine's typed `Observation`)
//! and nothing else, so they hold no more than an agent file would get: cells the seat neither
//! owns nor sees are "unseen", values are rounded as in the dict, and the only base marked is
//! the seat's own. Which arrays there are, and how a grid larger than the map is padded, is
//! `schema.rs`'s (the one table and writer).
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
use gbely_rules::{Command, Decide, Grid, Observation};
use gbely_world::{parse_map_file, write_map_file, Map, SeatRole};
use numpy::{PyArray3, PyArrayMethods, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};

use crate::convert::{answer_of, id_strings, obs_dict};
use crate::maps::{map_arg, PyMap};
use crate::schema::{toward, write_obs_over, Layout, ObsOut, ObsVec, Written, ATTACK, FORTIFY, KINDS, MOVE};
use crate::step::check_rounds;

/// What a step's reward is: the change of the seat's share of the map (% points), of its owned
/// cells, or its final share at the end (0 before).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Reward {
    Share,
    Cells,
    Final,
}

impl Reward {
    pub(crate) fn parse(s: &str) -> PyResult<Reward> {
        match s {
            "share" => Ok(Reward::Share),
            "cells" => Ok(Reward::Cells),
            "final" => Ok(Reward::Final),
            _ => Err(PyValueError::new_err(format!("reward={s:?}: 'share', 'cells' or 'final'"))),
        }
    }
}

/// Who plays each seat of `map` beside the learners: `None` for a learner, the Council on the
/// Council's seat of a final (SPEC §9), else `opponent` (a built-in agent's name, or `None` for
/// an opponent played from Python).
pub(crate) fn seating(map: &Map, learners: &[i64], opponent: Option<&str>) -> Result<Vec<Option<String>>, String> {
    let seats = map.seats();
    if let Some(s) = learners.iter().find(|&&s| usize::try_from(s).map_or(true, |s| s >= seats.len())) {
        return Err(format!("seat {s} does not exist: {} has {} seats", map.name(), seats.len()));
    }
    let final_ = seats.len() > 2;
    Ok(seats
        .iter()
        .enumerate()
        .map(|(k, s)| {
            if learners.contains(&(k as i64)) {
                None
            } else if final_ && s.role == SeatRole::Council {
                Some("council".to_string())
            } else {
                opponent.map(str::to_string)
            }
        })
        .collect())
}

/// Per seat of `map`, who plays it (see `seating` in the Rust code): `None` for a learner's
/// seat or a seat played from Python.
#[pyfunction(name = "seating")]
#[pyo3(signature = (map, learners, opponent = None))]
pub(crate) fn py_seating(map: &PyMap, learners: Vec<i64>, opponent: Option<String>) -> PyResult<Vec<Option<String>>> {
    seating(&map.inner, &learners, opponent.as_deref()).map_err(PyValueError::new_err)
}

/// The commands of per-cell actions for an observation: for each own cell (row-major) whose
/// kind is not 0 and fraction is above 0 (NaN is 0), one command of the cell's observed units
/// (`jednotky`, rounded as in SPEC §5) when the fraction is 1 or more, else of
/// `fraction × units` (the float32 fraction widened to f64, times the observed units); an amount
/// of 0 is no command, nor is a direction off the map. These are exactly the commands a
/// submission can send from its §5 dict: `gbely.codec.commands` makes the same list.
/// `kind` and `fraction` are over the map's cells, each kind 0 to `KINDS - 1` (checked by
/// [`Arena::decode`]).
fn commands_of(obs: &Observation, grid: &Grid, kind: &[i8], fraction: &[f32], out: &mut Vec<Command>) {
    out.clear();
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
            MOVE..ATTACK => toward(grid, c.cell, k - MOVE).map(|to| Command::Move { from: c.cell, to, amount }),
            ATTACK..FORTIFY => toward(grid, c.cell, k - ATTACK).map(|to| Command::Attack { from: c.cell, to, amount }),
            _ => Some(Command::Fortify { cell: c.cell, amount }),
        };
        out.extend(cmd);
    }
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
    /// The map's part of padded actions (see `decode`).
    kinds: Vec<i8>,
    fractions: Vec<f32>,
    /// Per seat, its (share, cells) before the last round resolved (for the rewards).
    before: Vec<(f64, u32)>,
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
        let mut arena = Arena {
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
            before: Vec::new(),
        };
        arena.keep_before();
        Ok(arena)
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

    /// The seats' names: a built-in agent's, else `seat K` (a seat played from Python).
    fn names_of(bot_names: &[Option<String>]) -> Vec<String> {
        bot_names.iter().enumerate().map(|(k, b)| b.clone().unwrap_or_else(|| format!("seat {k}"))).collect()
    }

    fn fresh(map: &Arc<Map>, rounds: u32, bot_names: &[Option<String>]) -> Session {
        let mut s = Session::new(map.clone(), MatchConfig { rounds }, Self::names_of(bot_names));
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
        self.keep_before();
    }

    /// A match continued from the start of round `fork.round` of a replay (`head`: its rounds
    /// before, played again from its answers), the seats then played as this environment's.
    pub(crate) fn reset_from(
        &mut self,
        head: &gbely_world::Replay,
        fork: gbely_world::replay::ForkRecord,
        map: Arc<Map>,
        record: bool,
    ) -> Result<(), String> {
        if let Some(e) = self.refuses(&map) {
            return Err(e);
        }
        let names = Self::names_of(&self.bot_names);
        let bot_names = self.bot_names.clone();
        self.session = gbely_engine::replays::session_after(head, map.clone(), |s| {
            s.set_names(names);
            for (k, b) in bot_names.iter().enumerate() {
                s.set_builtin(k as u8, b.as_deref());
            }
            s.set_fork(fork);
            if record {
                s.record();
            }
        });
        self.map = map;
        // The built-in agents start afresh at the fork, as a fork's agents do.
        self.bots = Self::bots_of(&self.bot_names);
        self.obs_seat = None;
        self.keep_before();
        Ok(())
    }

    /// Notes every seat's share and cells now, as "before" the next round.
    fn keep_before(&mut self) {
        // Reused (no allocation per round): taken out while the session is read.
        let mut before = std::mem::take(&mut self.before);
        before.clear();
        before.extend((0..self.session.seats() as u8).map(|s| (self.share(s), self.cells(s))));
        self.before = before;
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

    /// Where the map's cells are in the arrays.
    pub(crate) fn layout(&self) -> Layout {
        Layout::new(self.map.grid(), self.shape)
    }

    pub(crate) fn write(&mut self, seat: u8, out: ObsOut<'_>) {
        self.write_over(seat, out, None);
    }

    /// [`Arena::write`] into a row that holds what `written` recorded (see [`Written`]).
    pub(crate) fn write_over(&mut self, seat: u8, out: ObsOut<'_>, written: Option<&mut Written>) {
        let finalist = self.finalist(seat);
        self.observed(seat);
        write_obs_over(&self.obs, self.map.grid(), finalist, self.layout(), out, written);
    }

    /// Decodes a seat's per-cell actions, over the grid of `layout` (the arrays' or the map's),
    /// into `cmds`; the actions of padded cells are ignored (but must be kinds).
    pub(crate) fn decode(&mut self, seat: u8, kind: &[i8], fraction: &[f32], layout: Layout) -> Result<(), String> {
        check_kinds(kind, layout.grid.1)?;
        self.observed(seat);
        let kind = layout.map_part(kind, &mut self.kinds);
        let fraction = layout.map_part(fraction, &mut self.fractions);
        commands_of(&self.obs, self.map.grid(), kind, fraction, &mut self.cmds);
        Ok(())
    }

    /// Hands in a seat's per-cell actions (over the arrays' grid) as commands (see `decode`).
    pub(crate) fn act(&mut self, seat: u8, kind: &[i8], fraction: &[f32]) -> Result<(), String> {
        self.decode(seat, kind, fraction, self.layout())?;
        self.session.submit(seat, PlayerAnswer::Commands(self.cmds.clone()));
        Ok(())
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
        self.keep_before();
        self.session.advance();
    }

    /// Whether the match is over for the seat (over, or the seat out of the game).
    pub(crate) fn over(&self, seat: u8) -> bool {
        self.session.is_over() || !self.session.is_active(seat)
    }

    /// The seat's reward for the last round (since the match started, before any).
    pub(crate) fn reward(&self, seat: u8, reward: Reward) -> f64 {
        let (share0, cells0) = self.before[seat as usize];
        let (share1, cells1) = (self.share(seat), self.cells(seat));
        match reward {
            Reward::Share => share1 - share0,
            Reward::Cells => cells1 as f64 - cells0 as f64,
            Reward::Final if self.over(seat) => share1,
            Reward::Final => 0.0,
        }
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
            before: self.before.clone(),
        })
    }
}

/// The error of a kind out of range in `kind`, arrays `width` wide.
fn check_kinds(kind: &[i8], width: usize) -> Result<(), String> {
    match kind.iter().position(|&k| !(0..KINDS as i8).contains(&k)) {
        None => Ok(()),
        Some(i) => Err(format!(
            "action kind {} at row {}, col {}: kinds are 0 to {}",
            kind[i],
            i / width,
            i % width,
            KINDS - 1
        )),
    }
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

    /// A match continued from the start of `round` of `replay` (a `gbely.Replay` or a file's
    /// path): its rounds before are played again from its answers, the seats then played as
    /// this environment's. The replay's map must fit the environment (its grid, its seats).
    fn reset_from(&mut self, py: Python<'_>, replay: Bound<'_, PyAny>, round: u32) -> PyResult<()> {
        let source = crate::dataset::replay_arg(&replay)?;
        let (head, fork, map) = py.allow_threads(|| crate::dataset::fork_of(&source, round))?;
        if map.grid().width() != self.arena.map.width() || map.grid().height() != self.arena.map.height() {
            if let Some(e) = self.arena.refuses(&map) {
                return Err(PyValueError::new_err(e));
            }
            self.ids = id_strings(py, map.grid());
        }
        let record = self.record;
        let arena = &mut self.arena;
        py.allow_threads(|| arena.reset_from(&head, fork, map, record)).map_err(PyValueError::new_err)
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
    /// The seat's reward for the last round: `share`, `cells` or `final` (see `Reward`).
    fn reward(&self, seat: u8, kind: &str) -> PyResult<f64> {
        self.check_seat(seat)?;
        Ok(self.arena.reward(seat, Reward::parse(kind)?))
    }
    /// The seat's share of the map before the last round, in % (for a reward function).
    fn share_before(&self, seat: u8) -> PyResult<f64> {
        self.check_seat(seat)?;
        Ok(self.arena.before[seat as usize].0)
    }

    /// The seat's observation as a dict of new arrays (the fields of `schema.rs`).
    fn observe<'py>(&mut self, py: Python<'py>, seat: u8) -> PyResult<Bound<'py, PyDict>> {
        self.check_seat(seat)?;
        let shape = self.arena.shape;
        let mut arrays = ObsVec::new(1, self.arena.grid_cells());
        self.arena.write(seat, arrays.row(0, self.arena.grid_cells()));
        let d = PyDict::new(py);
        arrays.put(py, &d, &[], shape)?;
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
    /// `pocet` or `pole`, `investicia`), without handing them in. The arrays are over the grid
    /// (as for `act`) or over the map.
    fn commands<'py>(
        &mut self,
        py: Python<'py>,
        seat: u8,
        kind: PyReadonlyArray2<'_, i8>,
        fraction: PyReadonlyArray2<'_, f32>,
    ) -> PyResult<Bound<'py, PyList>> {
        self.check_seat(seat)?;
        let (map, grid) = (Layout::of_map(self.arena.map.grid()), self.arena.layout());
        let layout = match kind.len() {
            n if n == map.cells() && fraction.len() == n => map,
            n if n == grid.cells() && fraction.len() == n => grid,
            _ => {
                return Err(PyValueError::new_err(format!(
                    "actions over {} and {} cells for a map of {} (or a grid of {})",
                    kind.len(),
                    fraction.len(),
                    map.cells(),
                    grid.cells()
                )))
            }
        };
        let (k, f) = (contiguous(kind.as_slice())?, contiguous(fraction.as_slice())?);
        self.arena.decode(seat, k, f, layout).map_err(PyValueError::new_err)?;
        let cmds = &self.arena.cmds;
        let list = PyList::empty(py);
        for c in cmds {
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
        arena.keep_before();
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
