//! Replays as data (`gbely.Replay.observation`, `.commands`, `.state`, `.dataset`, and
//! `gbely.replay_dataset`): a replay re-simulated in Rust, round by round, with the GIL released.
//!
//! Per round and seat: the observation the seat received (SPEC §5, and the arrays of the
//! learning environments, written by their one writer, `schema::write_obs`), the commands it gave —
//! decoded from the file, or, for a built-in player whose commands the file leaves out
//! (`Answer::Regen`), decided again from the same observation as `gbely replay verify` does
//! (`gbely_engine::replays::resimulate_observing`) — and the state (the referee's view).
//!
//! A dataset labels each cell with the one command whose source it is, in the environment's
//! action coding: kind 0 stay, 1–4 MOVE N/S/W/E, 5–8 ATTACK N/S/W/E, 9 FORTIFY, and `fraction`
//! = amount / observed units (1 when the amount is at least the observed units, or they are 0).
//! A cell with several commands, or a command the coding cannot express (a target that is not a
//! neighbour, a source the seat does not own, an item that is no command), is `inexpressible`
//! (label kind 0). An item whose source is no cell of the map is counted per round (`unlocated`).

use std::path::PathBuf;
use std::sync::Arc;

use gbely_engine::replays::{
    answer_commands, read_replay, resimulate, resimulate_observing, within_budget, Frame, ReplayFileError, Work,
};
use gbely_engine::session::orders_of;
use gbely_engine::sim::Order;
use gbely_engine::wire::{command_to_value, parse_command};
use gbely_rules::{Cell, Command, Grid, Mode, Observation};
use gbely_world::replay::Answer;
use gbely_world::{Map, Replay, SeatRole};
use numpy::{PyArray1, PyArrayMethods};
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use serde_json::Value;

use crate::convert::{id_strings, obs_dict};
use crate::errors::ReplayError;
use crate::schema::{write_obs, Layout, ObsVec, ATTACK, FORTIFY, KINDS, MOVE};

/// A replay and its map, checked.
struct Loaded {
    replay: Replay,
    map: Arc<Map>,
}

impl Loaded {
    fn new(replay: Replay, what: &str) -> Result<Loaded, String> {
        let map = replay.check().map_err(|e| format!("{what}: {e}"))?;
        within_budget(&replay, &map, Work::Resimulate).map_err(|e| format!("{what}: {e}"))?;
        Ok(Loaded { replay, map: Arc::new(map) })
    }

    /// Whether seat `seat` plays as a finalist of a final (its action mask follows SPEC §9).
    fn finalist(&self, seat: u8) -> bool {
        self.replay.mode == Mode::Final && self.map.seats()[seat as usize].role == SeatRole::Army
    }
}

/// One seat's rounds, observed once (for `observation` and `commands` round by round).
struct Walk {
    /// Per round played: the index into `obs`, when the seat was in the game.
    at: Vec<Option<usize>>,
    obs: Vec<Observation>,
    /// The regenerated commands of a built-in seat, per observed round.
    regen: Vec<Option<Vec<Command>>>,
}

/// The direction code (0 N, 1 S, 2 W, 3 E) of a neighbour `to` of `from`, if it is one.
fn direction(grid: &Grid, from: Cell, to: Cell) -> Option<usize> {
    if from.index() >= grid.len() || to.index() >= grid.len() {
        return None;
    }
    let ((r, c), (r2, c2)) = (grid.row_col(from), grid.row_col(to));
    match (r2 as i64 - r as i64, c2 as i64 - c as i64) {
        (-1, 0) => Some(0),
        (1, 0) => Some(1),
        (0, -1) => Some(2),
        (0, 1) => Some(3),
        _ => None,
    }
}

/// A seat's orders of one round, each with the item as received when it did not parse.
fn orders<'a>(answer: &'a Answer, regen: Option<&[Command]>, grid: &Grid) -> Vec<(Order, Option<&'a Value>)> {
    if let Some(cmds) = regen {
        return cmds.iter().map(|c| (Ok(*c), None)).collect();
    }
    match answer {
        Answer::Commands(list) => list.iter().map(|v| (parse_command(v, grid), Some(v))).collect(),
        Answer::Compact(c) => {
            // As `answer_commands` pairs them: an order that did not parse is the next raw item.
            let mut raw = c.raw.iter();
            orders_of(c, grid)
                .into_iter()
                .map(|o| {
                    let v = if o.is_err() { raw.next() } else { None };
                    (o, v)
                })
                .collect()
        }
        Answer::Violation(_) | Answer::Out | Answer::Regen => Vec::new(),
    }
}

/// The labels of one round (each slice over `layout`'s grid, padding 0); returns the number of
/// items whose source is no cell of the map (`unlocated`).
#[allow(clippy::too_many_arguments)]
fn label(
    obs: &Observation,
    grid: &Grid,
    layout: Layout,
    orders: &[(Order, Option<&Value>)],
    kind: &mut [i8],
    fraction: &mut [f32],
    inexpressible: &mut [bool],
    count: &mut [u16],
) -> u32 {
    kind.fill(0);
    fraction.fill(0.0);
    inexpressible.fill(false);
    count.fill(0);
    let mut unlocated = 0;
    for (order, raw) in orders {
        let (source, label) = match order {
            Ok(cmd) => {
                let (from, k, amount) = match *cmd {
                    Command::Move { from, to, amount } => (from, direction(grid, from, to).map(|d| MOVE + d), amount),
                    Command::Attack { from, to, amount } => {
                        (from, direction(grid, from, to).map(|d| ATTACK + d), amount)
                    }
                    Command::Fortify { cell, amount } => (cell, Some(FORTIFY), amount),
                };
                let own = obs.own_cell(from);
                let label = match (k, own) {
                    (Some(k), Some(c)) if amount.is_finite() && amount > 0.0 => {
                        let f = if c.units <= 0.0 || amount >= c.units { 1.0 } else { (amount / c.units) as f32 };
                        Some((k as i8, f))
                    }
                    _ => None,
                };
                (Some(from).filter(|c| c.index() < grid.len()), label)
            }
            Err(_) => {
                let id = raw.and_then(|v| v.get("z").or_else(|| v.get("pole"))).and_then(Value::as_str);
                (id.and_then(|id| grid.parse(id)), None)
            }
        };
        let Some(cell) = source else {
            unlocated += 1;
            continue;
        };
        let i = layout.at(cell);
        count[i] = count[i].saturating_add(1);
        match label {
            Some((k, f)) if count[i] == 1 => (kind[i], fraction[i]) = (k, f),
            _ => inexpressible[i] = true,
        }
    }
    for i in 0..kind.len() {
        if count[i] > 1 {
            inexpressible[i] = true;
        }
        if inexpressible[i] {
            (kind[i], fraction[i]) = (0, 0.0);
        }
    }
    unlocated
}

/// A dataset's columns, T rounds over a grid (the map at its top-left, see [`Layout`]): made
/// for every round of the replay and cut to the rounds written.
struct Columns {
    layout: Layout,
    /// Rounds written.
    t: usize,
    obs: ObsVec,
    kind: Vec<i8>,
    fraction: Vec<f32>,
    inexpressible: Vec<bool>,
    /// Sources of labels per cell, one round's (scratch).
    count: Vec<u16>,
    unlocated: Vec<i32>,
    cells: Vec<i32>,
    reward: Vec<f32>,
    discarded: Vec<i32>,
}

impl Columns {
    fn new(rounds: usize, layout: Layout) -> Columns {
        let per = layout.cells();
        Columns {
            layout,
            t: 0,
            obs: ObsVec::new(rounds, per),
            kind: vec![0; rounds * per],
            fraction: vec![0.0; rounds * per],
            inexpressible: vec![false; rounds * per],
            count: vec![0; per],
            unlocated: Vec::with_capacity(rounds),
            cells: Vec::with_capacity(rounds),
            reward: Vec::with_capacity(rounds),
            discarded: Vec::with_capacity(rounds),
        }
    }

    /// Keeps the rounds written.
    fn truncate(&mut self) {
        let (t, per) = (self.t, self.layout.cells());
        self.obs.truncate(t, per);
        self.kind.truncate(t * per);
        self.fraction.truncate(t * per);
        self.inexpressible.truncate(t * per);
    }

    /// Writes the observation of the next round (and its labels, given the seat's orders).
    fn write(&mut self, obs: &Observation, grid: &Grid, finalist: bool, orders: Option<&[(Order, Option<&Value>)]>) {
        let (t, per) = (self.t, self.layout.cells());
        write_obs(obs, grid, finalist, self.layout, self.obs.row(t, per));
        let mut unlocated = 0;
        if let Some(o) = orders {
            let at = t * per..(t + 1) * per;
            let (k, f, x) = (&mut self.kind[at.clone()], &mut self.fraction[at.clone()], &mut self.inexpressible[at]);
            unlocated = label(obs, grid, self.layout, o, k, f, x, &mut self.count);
        }
        self.t += 1;
        self.unlocated.push(unlocated as i32);
    }

    /// The columns as a dict of numpy arrays (the observation's fields, then the labels).
    fn into_dict(self, py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
        let (t, (gh, gw)) = (self.t, self.layout.grid);
        let d = PyDict::new(py);
        self.obs.put(py, &d, &[t], (gh, gw))?;
        d.set_item("kind", array(py, self.kind, &[t, gh, gw])?)?;
        d.set_item("fraction", array(py, self.fraction, &[t, gh, gw])?)?;
        d.set_item("inexpressible", array(py, self.inexpressible, &[t, gh, gw])?)?;
        d.set_item("unlocated", array(py, self.unlocated, &[t])?)?;
        d.set_item("cells", array(py, self.cells, &[t])?)?;
        d.set_item("reward", array(py, self.reward, &[t])?)?;
        d.set_item("discarded", array(py, self.discarded, &[t])?)?;
        Ok(d)
    }
}

/// The dataset of seat `seat`: every round it was in the game, re-simulated.
fn dataset_of(data: &Loaded, seat: u8, grid: (usize, usize)) -> Columns {
    let g = data.map.grid();
    let n = g.len();
    let finalist = data.finalist(seat);
    let mut out = Columns::new(data.replay.turns.len(), Layout::new(g, grid));
    // Shared by the two callbacks: the round the seat was last observed and its cells then.
    let seen_round = std::cell::Cell::new(None);
    let before = std::cell::Cell::new(0usize);
    let (mut cells, mut reward, mut discarded) = (Vec::new(), Vec::new(), Vec::new());
    let total = n as f64;
    resimulate_observing(
        &data.replay,
        data.map.clone(),
        |k| k == seat,
        |r, _, obs, regen| {
            let answer = data.replay.turns[r].answers.get(seat as usize).unwrap_or(&Answer::Out);
            let o = orders(answer, regen, g);
            out.write(obs, g, finalist, Some(&o));
            seen_round.set(Some(r));
            before.set(obs.own.len());
        },
        |r, m, report| {
            if seen_round.get() == Some(r) {
                let after = m.cell_count(seat) as usize;
                cells.push(after as i32);
                // As `GbelyEnv`'s reward "share": the change of the share of the map, in % points.
                reward.push((after as f64 / total * 100.0 - before.get() as f64 / total * 100.0) as f32);
                discarded.push(report.discarded.iter().filter(|d| d.seat == seat).count() as i32);
            }
            true
        },
    );
    out.truncate();
    (out.cells, out.reward, out.discarded) = (cells, reward, discarded);
    out
}

/// Seat `seat`'s observations of every round it played (see [`Walk`]).
fn walk_of(data: &Loaded, seat: u8) -> Walk {
    let mut w = Walk { at: vec![None; data.replay.turns.len()], obs: Vec::new(), regen: Vec::new() };
    resimulate_observing(
        &data.replay,
        data.map.clone(),
        |k| k == seat,
        |r, _, obs, regen| {
            w.at[r] = Some(w.obs.len());
            w.obs.push(obs.clone());
            w.regen.push(regen.map(<[Command]>::to_vec));
        },
        |_, _, _| true,
    );
    w
}

/// A replay read for its data: the observations, commands, states and datasets of its seats.
/// What `gbely.Replay` and `gbely.replay_dataset` use; not part of the public API.
#[pyclass(name = "ReplayCore", module = "gbely._gbely")]
pub(crate) struct ReplayCore {
    data: Arc<Loaded>,
    ids: Vec<Py<PyString>>,
    walks: Vec<Option<Walk>>,
}

fn file_error(e: ReplayFileError) -> PyErr {
    match e {
        ReplayFileError::Io { .. } => PyOSError::new_err(e.to_string()),
        e => ReplayError::new_err(e.to_string()),
    }
}

impl ReplayCore {
    fn of(py: Python<'_>, data: Loaded) -> ReplayCore {
        let seats = data.map.seats().len();
        let ids = id_strings(py, data.map.grid());
        ReplayCore { data: Arc::new(data), ids, walks: (0..seats).map(|_| None).collect() }
    }

    fn check_seat(&self, seat: usize) -> PyResult<u8> {
        let n = self.data.map.seats().len();
        if seat >= n {
            return Err(PyValueError::new_err(format!("seat {seat} does not exist: the match has {n} seats")));
        }
        Ok(seat as u8)
    }

    fn check_round(&self, round: i64) -> PyResult<usize> {
        let n = self.data.replay.turns.len();
        match usize::try_from(round) {
            Ok(r) if r < n => Ok(r),
            _ => Err(PyValueError::new_err(format!(
                "round {round} was not played: the replay has rounds 0…{}",
                n.saturating_sub(1)
            ))),
        }
    }

    /// The index of the seat's observation in `round` in its walk (None when it was out of the
    /// game), walking the replay for that seat the first time.
    fn observed(&mut self, py: Python<'_>, round: i64, seat: usize) -> PyResult<Option<usize>> {
        let (r, s) = (self.check_round(round)?, self.check_seat(seat)?);
        if self.walks[seat].is_none() {
            // Every round's observation is kept, for each seat walked so far.
            let seats = self.walks.iter().filter(|w| w.is_some()).count() + 1;
            within_budget(&self.data.replay, &self.data.map, Work::Observations(seats))
                .map_err(ReplayError::new_err)?;
            let data = self.data.clone();
            self.walks[seat] = Some(py.allow_threads(|| walk_of(&data, s)));
        }
        Ok(self.walk(seat).at[r])
    }

    fn walk(&self, seat: usize) -> &Walk {
        self.walks[seat].as_ref().expect("walked")
    }

    fn grid_arg(&self, grid: Option<(i64, i64)>) -> PyResult<(usize, usize)> {
        let (h, w) = (self.data.map.height() as usize, self.data.map.width() as usize);
        match grid {
            None => Ok((h, w)),
            Some((gh, gw)) if gh >= h as i64 && gw >= w as i64 => Ok((gh as usize, gw as usize)),
            Some((gh, gw)) => Err(PyValueError::new_err(format!(
                "grid=({gh}, {gw}) is smaller than the map {} ({h} × {w})",
                self.data.map.name()
            ))),
        }
    }
}

/// A flat vector as a numpy array of `shape` (no copy).
fn array<'py, T: numpy::Element>(py: Python<'py>, v: Vec<T>, shape: &[usize]) -> PyResult<Bound<'py, PyAny>> {
    Ok(PyArray1::from_vec(py, v).reshape(shape)?.into_any())
}

#[pymethods]
impl ReplayCore {
    /// Reads a replay file (plain or gzip) in Rust, with the GIL released.
    #[staticmethod]
    fn load(py: Python<'_>, path: PathBuf) -> PyResult<ReplayCore> {
        let what = path.display().to_string();
        let data = py.allow_threads(|| -> PyResult<Loaded> {
            let replay = read_replay(&path).map_err(file_error)?;
            Loaded::new(replay, &what).map_err(ReplayError::new_err)
        })?;
        Ok(ReplayCore::of(py, data))
    }

    /// A replay from its JSON text.
    #[staticmethod]
    fn from_json(py: Python<'_>, text: String) -> PyResult<ReplayCore> {
        let data = py.allow_threads(|| -> Result<Loaded, String> {
            let replay = Replay::from_json(&text).map_err(|e| e.to_string())?;
            Loaded::new(replay, "the replay")
        });
        Ok(ReplayCore::of(py, data.map_err(ReplayError::new_err)?))
    }

    #[getter]
    fn seats(&self) -> usize {
        self.data.map.seats().len()
    }
    #[getter]
    fn names(&self) -> Vec<String> {
        (0..self.seats()).map(|s| self.data.replay.seats.get(s).map_or_else(String::new, |r| r.name.clone())).collect()
    }
    #[getter]
    fn rounds_played(&self) -> usize {
        self.data.replay.turns.len()
    }
    #[getter]
    fn shape(&self) -> (u32, u32) {
        (self.data.map.height(), self.data.map.width())
    }
    /// Per seat, the rounds it was in the game (it received an observation).
    fn active_rounds(&mut self, py: Python<'_>, seat: usize) -> PyResult<Vec<usize>> {
        self.observed(py, 0, seat)?;
        let w = self.walk(seat);
        Ok(w.at.iter().enumerate().filter(|(_, a)| a.is_some()).map(|(r, _)| r).collect())
    }

    /// The SPEC §5 dict seat `seat` received in `round`; None when it was out of the game.
    fn observation<'py>(&mut self, py: Python<'py>, round: i64, seat: usize) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(i) = self.observed(py, round, seat)? else { return Ok(None) };
        Ok(Some(obs_dict(py, &self.walk(seat).obs[i], &self.ids)?))
    }

    /// The environment's arrays of that observation (on a `grid` padded as `dataset` pads).
    #[pyo3(signature = (round, seat, grid = None))]
    fn observation_arrays<'py>(
        &mut self,
        py: Python<'py>,
        round: i64,
        seat: usize,
        grid: Option<(i64, i64)>,
    ) -> PyResult<Option<Bound<'py, PyDict>>> {
        let (gh, gw) = self.grid_arg(grid)?;
        let finalist = self.data.finalist(self.check_seat(seat)?);
        let g = self.data.map.grid().clone();
        let Some(i) = self.observed(py, round, seat)? else { return Ok(None) };
        let mut c = Columns::new(1, Layout::new(&g, (gh, gw)));
        c.write(&self.walk(seat).obs[i], &g, finalist, None);
        let d = PyDict::new(py);
        c.obs.put(py, &d, &[], (gh, gw))?;
        Ok(Some(d))
    }

    /// The commands seat `seat` gave in `round` as SPEC §6 dicts, as JSON text (items that were
    /// no commands as received); None for a violation or a seat out of the game.
    fn commands_json(&mut self, py: Python<'_>, round: i64, seat: usize) -> PyResult<Option<String>> {
        let r = self.check_round(round)?;
        self.check_seat(seat)?;
        let data = self.data.clone();
        let g = data.map.grid();
        let answer = data.replay.turns[r].answers.get(seat).cloned().unwrap_or(Answer::Out);
        let list = match answer {
            Answer::Regen => match self.observed(py, round, seat)? {
                Some(i) => self.walk(seat).regen[i]
                    .as_ref()
                    .map(|cmds| cmds.iter().map(|c| command_to_value(c, g)).collect::<Vec<_>>()),
                None => None,
            },
            a => answer_commands(&a, g),
        };
        Ok(list.map(|l| serde_json::to_string(&l).expect("serializes")))
    }

    /// The recorded answer's kind in `round`: `commands`, `regen`, `violation` or `out`, and a
    /// violation's kind and detail.
    fn answer_kind(&self, round: i64, seat: usize) -> PyResult<(String, Option<(String, String)>)> {
        let r = self.check_round(round)?;
        self.check_seat(seat)?;
        Ok(match self.data.replay.turns[r].answers.get(seat).unwrap_or(&Answer::Out) {
            Answer::Commands(_) | Answer::Compact(_) => ("commands".into(), None),
            Answer::Regen => ("regen".into(), None),
            Answer::Out => ("out".into(), None),
            Answer::Violation(v) => ("violation".into(), Some((v.kind.wire().to_string(), v.detail.clone()))),
        })
    }

    /// The state at the end of `round` (the referee's view): `owner` (seat, or -1 neutral) int8,
    /// `units` and `fortification` float64, each height × width.
    fn state<'py>(&self, py: Python<'py>, round: i64) -> PyResult<Bound<'py, PyDict>> {
        let r = self.check_round(round)?;
        let data = self.data.clone();
        let f = py.allow_threads(|| Frame::of(&resimulate(&data.replay, data.map.clone(), |k, _, _| k < r)));
        let (h, w) = (data.map.height() as usize, data.map.width() as usize);
        let d = PyDict::new(py);
        d.set_item("owner", array(py, f.owner, &[h, w])?)?;
        d.set_item("units", array(py, f.units, &[h, w])?)?;
        d.set_item("fortification", array(py, f.fortification, &[h, w])?)?;
        Ok(d)
    }

    /// Seat `seat`'s dataset: every round it was in the game (see the module documentation).
    #[pyo3(signature = (seat, grid = None))]
    fn dataset<'py>(&self, py: Python<'py>, seat: usize, grid: Option<(i64, i64)>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.check_seat(seat)?;
        let (gh, gw) = self.grid_arg(grid)?;
        // The arrays of every round, built here and copied into numpy's.
        let bytes =
            (self.data.replay.turns.len() + 1).saturating_mul(gh.saturating_mul(gw)).saturating_mul(2 * (18 + KINDS));
        within_budget(&self.data.replay, &self.data.map, Work::Extra(bytes, "building the data set"))
            .map_err(ReplayError::new_err)?;
        let data = self.data.clone();
        py.allow_threads(|| dataset_of(&data, s, (gh, gw))).into_dict(py)
    }
}

/// A replay given from Python: a `gbely.Replay`, or the path of a replay file (one cut short by
/// a killed match is read up to its last round).
pub(crate) fn replay_arg(obj: &Bound<'_, PyAny>) -> PyResult<Replay> {
    if let Ok(doc) = obj.getattr("doc") {
        let text: String = obj.py().import("json")?.call_method1("dumps", (doc,))?.extract()?;
        return Replay::from_json(&text).map_err(|e| ReplayError::new_err(e.to_string()));
    }
    let path: PathBuf = obj
        .extract()
        .map_err(|_| pyo3::exceptions::PyTypeError::new_err("replay: give a gbely.Replay or a replay file's path"))?;
    let read = obj.py().allow_threads(|| gbely_engine::replays::read_replay_or_cut(&path)).map_err(file_error)?;
    Ok(read.replay)
}

/// A fork of `source` at the start of `round` (`gbely_engine::app::runs::fork`): its head, where
/// it came from, its map. A round not played, or a replay this build plays otherwise, is a
/// `ValueError` that says so.
pub(crate) fn fork_of(
    source: &Replay,
    round: u32,
) -> PyResult<(Arc<Replay>, gbely_world::replay::ForkRecord, Arc<Map>)> {
    gbely_engine::app::runs::fork::fork_at(source, round).map_err(|e| PyValueError::new_err(e.to_string()))
}
