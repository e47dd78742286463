//! `gbely.Match`: a match step by step, over the engine's `Session`.

use std::path::PathBuf;

use crate::convert::*;
use crate::maps::*;
use gbely_council::Council;
use gbely_engine::game::{match_result, PlayerAnswer, ViolationKind};
use gbely_engine::session::Session;
use gbely_engine::sim::MatchConfig;
use gbely_rules::Decide;
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

/// A match played step by step: read observations, submit commands, advance a round.
/// A loop over the engine's [`Session`], like every other way a match is played.
#[pyclass(name = "Match", module = "gbely", subclass)]
pub(crate) struct PyMatch {
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
        for &k in &council {
            // The built-in Council: replays regenerate its commands instead of storing them.
            session.set_builtin(k as u8, Some(gbely_engine::game::BUILTIN_COUNCIL));
        }
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
