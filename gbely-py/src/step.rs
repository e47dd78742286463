//! `gbely.Match`: a match step by step, over the engine's `Session`.

use std::path::PathBuf;
use std::sync::Arc;

use crate::convert::*;
use crate::maps::*;
use gbely_council::Council;
use gbely_engine::app::runs;
use gbely_engine::recorder::match_result;
use gbely_engine::runner::player::PlayerAnswer;
use gbely_engine::session::{Session, SessionState};
use gbely_engine::sim::CaptureEvent;
use gbely_engine::sim::MatchConfig;
use gbely_rules::Decide;
use gbely_rules::ViolationKind;
use gbely_world::replay::owner_code;
use gbely_world::{parse_map_file, write_map_file};
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use pyo3::types::{PyDict, PyString, PyTuple, PyType};

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
    /// `record`: keep the replay in memory for `save_replay` (off by default: stepping is
    /// cheaper, and the match can be copied and pickled).
    #[new]
    #[pyo3(signature = (map = None, rounds = 150, council = None, names = None, record = false))]
    fn new(
        py: Python<'_>,
        map: Option<Bound<'_, PyAny>>,
        rounds: i64,
        council: Option<Vec<usize>>,
        names: Option<Vec<String>>,
        record: bool,
    ) -> PyResult<Self> {
        let rounds = check_rounds(rounds)?;
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
        let names = seat_names(seats, &council, names)?;
        let ids = id_strings(py, map.grid());
        let councils = (0..seats).map(|k| council.contains(&k).then(Council::new)).collect();
        let mut session = Session::new(map, MatchConfig { rounds }, names);
        for &k in &council {
            // The built-in Council: replays regenerate its commands instead of storing them.
            session.set_builtin(k as u8, Some(gbely_engine::builtins::BUILTIN_COUNCIL));
        }
        if record {
            session.record();
        }
        Ok(PyMatch { session, ids, councils })
    }

    /// The match of a replay continued from the start of `round` (a fork: `gbely play --from`):
    /// the replay's rounds before it are played again from its answers, and from `round` on
    /// every seat is yours but the Council's (`council`: the seats the built-in Council plays;
    /// default: those it played in the replay). `replay`: a `gbely.Replay` or a replay file's
    /// path (one cut short by a killed match is read up to its last round). The match's replay
    /// (`record=True`) keeps those rounds and says where it came from. A round the replay did not
    /// reach, or a replay this build plays otherwise, is a `ValueError` that says so.
    #[staticmethod]
    #[pyo3(signature = (replay, round, council = None, names = None, record = false))]
    fn from_replay(
        py: Python<'_>,
        replay: Bound<'_, PyAny>,
        round: u32,
        council: Option<Vec<usize>>,
        names: Option<Vec<String>>,
        record: bool,
    ) -> PyResult<Self> {
        let source = crate::dataset::replay_arg(&replay)?;
        let (head, fork, map) = py.allow_threads(|| crate::dataset::fork_of(&source, round))?;
        let seats = map.seats().len();
        let council = council.unwrap_or_else(|| {
            (0..seats)
                .filter(|&k| {
                    let s = &source.seats[k];
                    s.builtin.as_deref().map_or(s.name == "council", |b| b == gbely_engine::builtins::BUILTIN_COUNCIL)
                })
                .collect()
        });
        let names = seat_names(seats, &council, names)?;
        let ids = id_strings(py, map.grid());
        let councils = (0..seats).map(|k| council.contains(&k).then(Council::new)).collect();
        let session = py.allow_threads(|| {
            gbely_engine::replays::session_after(&head, map, |session| {
                session.set_names(names);
                for k in 0..seats {
                    let builtin = council.contains(&k).then_some(gbely_engine::builtins::BUILTIN_COUNCIL);
                    session.set_builtin(k as u8, builtin);
                }
                session.set_fork(fork);
                if record {
                    session.record();
                }
            })
        });
        Ok(PyMatch { session, ids, councils })
    }

    /// The current round (0-based; the last one played once the match is over).
    #[getter]
    fn round(&self) -> u32 {
        self.session.round()
    }
    /// Whether the last round was played, or every seat but one is out.
    #[getter]
    fn is_over(&self) -> bool {
        self.session.is_over()
    }
    /// The number of seats (the Council's included).
    #[getter]
    fn seats(&self) -> usize {
        self.session.seats()
    }
    /// The map being played.
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
        let grid = self.session.grid().clone();
        let (answer, notes) = crate::convert::answer_with_notes(&commands, Some(&grid));
        self.session.submit(seat as u8, answer);
        if let Some(n) = notes {
            self.session.note(seat as u8, n);
        }
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
    /// submitted = no commands). Returns a `gbely.RoundReport`: captures, failed attacks,
    /// discarded commands, violations, eliminations, and whether the match is over.
    fn advance<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
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
        let (capture, discard) = (round_class(py, "Capture")?, round_class(py, "Discard")?);
        let ids = &self.ids;
        let captures = |events: &[CaptureEvent]| -> PyResult<Bound<'py, PyTuple>> {
            let items = events
                .iter()
                .map(|c| capture.call1((c.seat, ids[c.cell.index()].bind(py), owner_code(c.from))))
                .collect::<PyResult<Vec<_>>>()?;
            PyTuple::new(py, items)
        };
        let discarded = report
            .discarded
            .iter()
            .map(|x| discard.call1((x.seat, x.index, x.reason.code())))
            .collect::<PyResult<Vec<_>>>()?;
        // Seats as a tuple of ints: a Vec<u8> would become `bytes`.
        let seats = |s: &[u8]| PyTuple::new(py, s.iter().map(|&k| u32::from(k)));
        let kwargs = PyDict::new(py);
        kwargs.set_item("round", report.round)?;
        kwargs.set_item("captures", captures(&report.captures)?)?;
        kwargs.set_item("failed_attacks", captures(&report.failed)?)?;
        kwargs.set_item("discarded", PyTuple::new(py, discarded)?)?;
        kwargs.set_item("violations", seats(&report.violations)?)?;
        kwargs.set_item("disqualified", seats(&report.disqualified)?)?;
        kwargs.set_item("eliminated", seats(&report.eliminated)?)?;
        kwargs.set_item("over", self.session.is_over())?;
        round_class(py, "RoundReport")?.call((), Some(&kwargs))
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

    fn __repr__(&self) -> String {
        let map = self.session.state().map();
        let state = if self.session.is_over() { "over after round" } else { "round" };
        format!(
            "<gbely.Match {} {}×{}, {} {} of {}, {}>",
            map.name(),
            map.width(),
            map.height(),
            state,
            self.session.round(),
            self.session.state().rounds(),
            self.session.names().join(" vs ")
        )
    }

    /// A copy to explore from (search, look-ahead): stepping it leaves this match as it is.
    /// A recorded match cannot be copied (`RuntimeError`).
    fn __copy__(&self, py: Python<'_>) -> PyResult<Self> {
        let session = self.session.try_clone().ok_or_else(|| {
            PyRuntimeError::new_err("a recorded match (record=True) cannot be copied: create it without recording")
        })?;
        Ok(PyMatch {
            session,
            ids: self.ids.iter().map(|s| s.clone_ref(py)).collect(),
            councils: self.councils.clone(),
        })
    }
    fn __deepcopy__(&self, py: Python<'_>, _memo: Bound<'_, PyAny>) -> PyResult<Self> {
        self.__copy__(py)
    }
    /// The same as `copy.copy(match)`.
    fn clone(&self, py: Python<'_>) -> PyResult<Self> {
        self.__copy__(py)
    }

    /// Pickles as the map's text and the state between rounds (answers submitted for the round
    /// not yet advanced are not kept). A recorded match cannot be pickled.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
        let me = slf.borrow();
        let state = me.session.snapshot().ok_or_else(|| {
            PyRuntimeError::new_err("a recorded match (record=True) cannot be pickled: create it without recording")
        })?;
        let text = serde_json::to_string(&state).expect("serializes");
        let council: Vec<usize> = (0..me.councils.len()).filter(|&k| me.councils[k].is_some()).collect();
        let restore = slf.py().get_type::<PyMatch>().getattr("_restore")?;
        let args = (write_map_file(me.session.state().map()), text, council);
        Ok((restore, args.into_pyobject(slf.py())?))
    }

    /// The inverse of pickling.
    #[staticmethod]
    fn _restore(py: Python<'_>, map: &str, state: &str, council: Vec<usize>) -> PyResult<Self> {
        let map = Arc::new(parse_map_file(map).map_err(|e| PyValueError::new_err(e.to_string()))?);
        let state: SessionState =
            serde_json::from_str(state).map_err(|e| PyValueError::new_err(format!("not a match state: {e}")))?;
        let session = Session::restore(map.clone(), state).map_err(PyValueError::new_err)?;
        let councils = (0..session.seats()).map(|k| council.contains(&k).then(Council::new)).collect();
        Ok(PyMatch { session, ids: id_strings(py, map.grid()), councils })
    }

    /// Writes the replay of the rounds played so far.
    fn save_replay(&self, path: PathBuf) -> PyResult<()> {
        let replay = self
            .session
            .replay_so_far()
            .ok_or_else(|| PyValueError::new_err("this match is not recorded: create it with record=True"))?;
        gbely_engine::recorder::write_replay(&path, &replay)
            .map(|_| ())
            .map_err(|e| PyOSError::new_err(format!("cannot write {}: {e}", path.display())))
    }
}

/// The seats' names of a match: `names` when given (one per seat), else `council` for the
/// Council's seats and `seat K` for the others; a Council seat the map lacks is a `ValueError`.
fn seat_names(seats: usize, council: &[usize], names: Option<Vec<String>>) -> PyResult<Vec<String>> {
    if let Some(&bad) = council.iter().find(|&&k| k >= seats) {
        return Err(PyValueError::new_err(format!("seat {bad} does not exist: the map has {seats} seats")));
    }
    match names {
        Some(n) if n.len() == seats => Ok(n),
        Some(n) => Err(PyValueError::new_err(format!("{} names for {seats} seats", n.len()))),
        None => Ok((0..seats)
            .map(|k| if council.contains(&k) { "council".to_string() } else { format!("seat {k}") })
            .collect()),
    }
}

/// The classes of `gbely._round` (`Capture`, `Discard`, `RoundReport`), imported once.
fn round_class<'py>(py: Python<'py>, name: &'static str) -> PyResult<&'py Bound<'py, PyType>> {
    static CAPTURE: GILOnceCell<Py<PyType>> = GILOnceCell::new();
    static DISCARD: GILOnceCell<Py<PyType>> = GILOnceCell::new();
    static REPORT: GILOnceCell<Py<PyType>> = GILOnceCell::new();
    let cell = match name {
        "Capture" => &CAPTURE,
        "Discard" => &DISCARD,
        _ => &REPORT,
    };
    cell.import(py, "gbely._round", name)
}

/// `rounds` as the engine takes it: 1 to the most a replay may hold (a `ValueError`, not an
/// `OverflowError`, for a negative number).
pub(crate) fn check_rounds(rounds: i64) -> PyResult<u32> {
    match u32::try_from(rounds) {
        Ok(r) if (1..=runs::MAX_ROUNDS).contains(&r) => Ok(r),
        _ => Err(PyValueError::new_err(format!("rounds={rounds}: a match plays 1 to {} rounds", runs::MAX_ROUNDS))),
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
