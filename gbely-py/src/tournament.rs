//! `gbely.league` and `gbely.ab`: the engine's typed entry points (`LeagueRequest`,
//! `AbRequest`, the same the command line builds from its flags) built from keyword arguments,
//! run with the GIL released, and their reports handed back as Python data; errors become the
//! typed exceptions `gbely.play` raises.

use std::path::PathBuf;

use gbely_engine::app::entries::LeagueError;
use gbely_engine::app::requests::{self, AbForks, AbRequest, Against, LeagueRequest, MatchSettings};
use gbely_engine::app::runs::RunError;
use gbely_engine::limits::{MemoryLimit, TimeLimit};
use gbely_engine::runner::interrupt;
use gbely_engine::runner::sandbox::SandboxMode;
use gbely_engine::tournament::ab::{EloModel, Sprt};
use pyo3::exceptions::{PyKeyboardInterrupt, PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use serde_json::Value;

use crate::errors::{agent_spec, AgentError, GbelyError, MapError};

/// A league's or an A/B test's error as the exception a Python caller expects: a bad agent is an
/// `AgentError`, a bad map a `MapError`, settings that do not go together a `ValueError`.
fn py_error(e: LeagueError) -> PyErr {
    let text = e.to_string();
    match e {
        LeagueError::Run(r) => match r {
            RunError::BadSize(_)
            | RunError::SizeOfMapFile(_)
            | RunError::MapUnreadable { .. }
            | RunError::MapFile { .. }
            | RunError::Generate(_)
            | RunError::NotAFinalMap { .. } => MapError::new_err(text),
            RunError::Rounds(_)
            | RunError::Seating(_)
            | RunError::Seats { .. }
            | RunError::Fork(_)
            | RunError::ForkPoints(_) => PyValueError::new_err(text),
            RunError::Replay { .. } | RunError::RunFolder { .. } => PyOSError::new_err(text),
            _ => AgentError::new_err(text),
        },
        LeagueError::Agent { .. } => AgentError::new_err(text),
        LeagueError::NotADuelMap { .. } => MapError::new_err(text),
        LeagueError::Request(_) | LeagueError::TooFewEntries | LeagueError::Duplicate(_) => PyValueError::new_err(text),
        LeagueError::Output { .. } => PyOSError::new_err(text),
        LeagueError::Db { .. } | LeagueError::Settings { .. } | LeagueError::Remote(_) => GbelyError::new_err(text),
    }
}

/// A JSON value as Python data (dicts, lists, str, int, float, bool, None).
pub(crate) fn to_py(py: Python<'_>, v: &Value) -> PyResult<PyObject> {
    Ok(match v {
        Value::Null => py.None(),
        Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any().unbind(),
        Value::Number(n) => match n.as_i64() {
            Some(i) => i.into_pyobject(py)?.into_any().unbind(),
            None => n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any().unbind(),
        },
        Value::String(s) => s.into_pyobject(py)?.into_any().unbind(),
        Value::Array(a) => {
            let items = a.iter().map(|x| to_py(py, x)).collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, items)?.into_any().unbind()
        }
        Value::Object(o) => {
            let d = PyDict::new(py);
            for (k, x) in o {
                d.set_item(k, to_py(py, x)?)?;
            }
            d.into_any().unbind()
        }
    })
}

/// The match settings of a Python call's keyword arguments (`gbely.play`, `gbely.final`,
/// `gbely.league`, `gbely.ab`), each refused as a `ValueError` naming the argument.
pub(crate) fn settings(
    rounds: i64,
    time_limit: Option<f64>,
    memory_limit: Option<u64>,
    sandbox: &str,
    python: Option<String>,
) -> PyResult<MatchSettings> {
    Ok(MatchSettings {
        rounds: crate::step::check_rounds(rounds)?,
        time_limit: TimeLimit::from_option(time_limit).map_err(|_| {
            PyValueError::new_err(format!(
                "time_limit={}: seconds more than 0 and at most {}, or None for no limit",
                time_limit.unwrap_or_default(),
                TimeLimit::MAX_SECONDS
            ))
        })?,
        memory_limit: MemoryLimit::from_mib(memory_limit).map_err(|e| {
            PyValueError::new_err(format!("memory_limit={}: {e} (None for no limit)", memory_limit.unwrap_or_default()))
        })?,
        sandbox: sandbox
            .parse::<SandboxMode>()
            .map_err(|e| PyValueError::new_err(format!("sandbox={sandbox:?}: {e}")))?,
        python,
    })
}

/// Runs `f` with the GIL released and Ctrl-C handled by the engine (matches stop cleanly, their
/// agents killed); an interrupted run is `KeyboardInterrupt` (what finished is kept).
fn run_interruptible<T: Send>(
    py: Python<'_>,
    f: impl FnOnce() -> Result<T, LeagueError> + Send,
    interrupted: impl FnOnce(&T) -> bool,
) -> PyResult<T> {
    let guard = interrupt::Guard::install()
        .map_err(|e| PyOSError::new_err(format!("cannot install the Ctrl-C handler: {e}")))?;
    let out = py.allow_threads(f);
    drop(guard);
    let out = out.map_err(py_error)?;
    if interrupted(&out) {
        py.check_signals()?;
        return Err(PyKeyboardInterrupt::new_err("stopped; run the same call again to go on (results are kept)"));
    }
    Ok(out)
}

/// Calls Python's `progress(*args)` (from a thread without the GIL: it takes it); an exception
/// it raises is reported as unraisable and the run goes on.
fn call_progress(progress: Option<&PyObject>, call: impl FnOnce(Python<'_>, &PyObject) -> PyResult<PyObject>) {
    if let Some(cb) = progress {
        Python::with_gil(|py| {
            if let Err(e) = call(py, cb) {
                e.write_unraisable(py, Some(cb.bind(py)));
            }
        });
    }
}

/// A league (`gbely league`), played without the command line: returns the `--json` document as
/// Python data.
#[pyfunction]
#[allow(clippy::too_many_arguments)] // the keyword arguments of gbely.league
#[pyo3(signature = (agents, *, maps, council, games, rounds, time_limit, jobs, db, seed, python, ray, replays, thinking, gauntlet, memory_limit, sandbox, progress=None))]
pub(crate) fn league(
    py: Python<'_>,
    agents: Vec<String>,
    maps: String,
    council: bool,
    games: u32,
    rounds: i64,
    time_limit: Option<f64>,
    jobs: Option<usize>,
    db: PathBuf,
    seed: String,
    python: Option<String>,
    ray: Option<String>,
    replays: bool,
    thinking: Option<u32>,
    gauntlet: bool,
    memory_limit: Option<u64>,
    sandbox: &str,
    progress: Option<PyObject>,
) -> PyResult<PyObject> {
    if !(1..=1000).contains(&games) {
        return Err(PyValueError::new_err(format!("games={games}: 1 to 1000 games per pairing and map")));
    }
    if let Some(t) = thinking.filter(|t| !(1..=4096).contains(t)) {
        return Err(PyValueError::new_err(format!("thinking={t}: 1 to 4096 agent processes")));
    }
    let req = LeagueRequest {
        maps,
        council,
        games,
        jobs,
        db,
        seed,
        ray,
        replays,
        thinking,
        gauntlet,
        settings: settings(rounds, time_limit, memory_limit, sandbox, python)?,
        ..LeagueRequest::new(agents.iter().map(|a| agent_spec(a)).collect::<PyResult<_>>()?)
    };
    let tick = |done: usize, total: usize, _: &gbely_engine::app::league::MatchRow| {
        call_progress(progress.as_ref(), |py, cb| cb.call1(py, (done, total)));
    };
    let report = run_interruptible(py, || requests::run_league(&req, &mut { tick }), |r| r.run.interrupted)?;
    to_py(py, &report.to_json())
}

/// An A/B test (`gbely ab`), run without the command line: returns the `--json` document as
/// Python data (for `against="both"`, the two tests' under `head_to_head` and `against_council`).
#[pyfunction]
#[allow(clippy::too_many_arguments)] // the keyword arguments of gbely.ab
#[pyo3(signature = (a, b, *, against, maps, elo0, elo1, elo_model, share0, share1, alpha, beta, max_pairs, rounds, time_limit, jobs, db, seed, python, memory_limit, sandbox, fill, size, from_replays=None, at=Vec::new(), seat=None, progress=None))]
pub(crate) fn ab(
    py: Python<'_>,
    a: String,
    b: String,
    against: Option<String>,
    maps: Vec<String>,
    elo0: f64,
    elo1: f64,
    elo_model: &str,
    share0: f64,
    share1: f64,
    alpha: f64,
    beta: f64,
    max_pairs: usize,
    rounds: i64,
    time_limit: Option<f64>,
    jobs: Option<usize>,
    db: PathBuf,
    seed: String,
    python: Option<String>,
    memory_limit: Option<u64>,
    sandbox: &str,
    fill: Option<String>,
    size: u32,
    from_replays: Option<PathBuf>,
    at: Vec<u32>,
    seat: Option<usize>,
    progress: Option<PyObject>,
) -> PyResult<PyObject> {
    let elo_model = match elo_model {
        "logistic" => EloModel::Logistic,
        "normalized" => EloModel::Normalized,
        other => return Err(PyValueError::new_err(format!("elo_model={other:?}: 'logistic' or 'normalized'"))),
    };
    let against = against.map(|o| o.parse::<Against>()).transpose().map_err(|e| AgentError::new_err(e.to_string()))?;
    let req = AbRequest {
        against,
        maps,
        seed,
        elo_model,
        elo0,
        elo1,
        share0,
        share1,
        alpha,
        beta,
        max_pairs,
        jobs,
        db,
        settings: settings(rounds, time_limit, memory_limit, sandbox, python)?,
        final_mode: fill.map(|f| Ok::<_, PyErr>((agent_spec(&f)?, size))).transpose()?,
        forks: from_replays.map(|dir| AbForks { dir, rounds: at, seat }),
        ..AbRequest::new(agent_spec(&a)?, agent_spec(&b)?)
    };
    let mut docs = Vec::new();
    for test in req.tests() {
        let mut line = |t: &Sprt| {
            call_progress(progress.as_ref(), |py, cb| cb.call1(py, (t.n(), max_pairs, t.llr(), t.lower, t.upper)))
        };
        let report = run_interruptible(py, || requests::run_ab(&test, &mut line), |r| r.interrupted())?;
        docs.push(report.to_json());
    }
    match <[Value; 2]>::try_from(docs) {
        Ok([h, c]) => to_py(py, &serde_json::json!({"head_to_head": h, "against_council": c})),
        Err(mut one) => to_py(py, &one.pop().unwrap_or(Value::Null)),
    }
}
