//! `gbely.play` / `gbely.final`: whole matches, with agent files and in-process callables.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::convert::*;
use crate::errors::{AgentError, TimeLimitWarning};
use crate::maps::*;
use gbely_engine::app::runs::agent_spec::AgentSpec;
use gbely_engine::app::runs::{interpreter, RunError};
use gbely_engine::app::service::{self, MatchPlan, Recording, Seat};
use gbely_engine::limits::{Defaults, TimeLimit};
use gbely_engine::runner::player::{Player, PlayerAnswer};
use gbely_rules::ViolationKind;
use gbely_rules::{Grid, Notes, Observation};
use pyo3::exceptions::{PyKeyboardInterrupt, PyOSError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyString;

/// A seat played by a Python callable, in-process: `decide(stav)` gets the dict of SPEC §5.
pub(crate) struct CallablePlayer {
    name: String,
    func: Py<PyAny>,
    ids: Arc<Vec<Py<PyString>>>,
    limit: TimeLimit,
    pending: Option<PlayerAnswer>,
    /// The notes of the last answer (its `debug` key).
    notes: Option<Notes>,
    /// A KeyboardInterrupt or SystemExit inside a callable: the match stops and it is re-raised.
    abort: Arc<Mutex<Option<PyErr>>>,
    /// Whether the `TimeLimitWarning` was issued (once per seat and match).
    warned: bool,
}

impl CallablePlayer {
    /// Stops the match and keeps `e` to raise once it has ended cleanly.
    fn abort_with(&self, e: PyErr) -> PlayerAnswer {
        self.abort.lock().expect("not poisoned").get_or_insert(e);
        gbely_engine::runner::interrupt::request();
        PlayerAnswer::Interrupted
    }

    /// A callable is timed only once it returns, so it cannot be judged like an agent process:
    /// say so the first time it is late. Under `-W error` the warning stops the match.
    fn warn_late(&mut self, py: Python<'_>, elapsed: Duration, limit: Duration) -> Option<PlayerAnswer> {
        if std::mem::replace(&mut self.warned, true) {
            return None;
        }
        let message = format!(
            "{} took {:.2} s, over the limit of {:.1} s: the round is a timeout violation. An \
             in-process callable is timed after it returns (one that hangs hangs the match) and \
             keeps its module state after a violation, where an agent file is stopped and \
             restarted; gbely.play(decide, isolate=True) plays it as the judge does",
            self.name,
            elapsed.as_secs_f64(),
            limit.as_secs_f64()
        );
        let category = py.get_type::<TimeLimitWarning>();
        let message = std::ffi::CString::new(message).unwrap_or_default();
        PyErr::warn(py, &category, &message, 2).err().map(|e| self.abort_with(e))
    }
}

impl Player for CallablePlayer {
    fn name(&self) -> String {
        self.name.clone()
    }
    fn begin(&mut self, obs: &Observation, grid: &Grid) {
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
                        return self.abort_with(e);
                    }
                    let ty = e.get_type(py).name().map(|n| n.to_string()).unwrap_or_else(|_| "an exception".into());
                    let detail = format!("decide raised {ty}: {}", e.value(py));
                    e.print(py);
                    PlayerAnswer::Violation { kind: ViolationKind::Crash, detail }
                }
                Ok(v) => match self.limit.duration() {
                    Some(limit) if self.limit.exceeded_by(elapsed) => {
                        if let Some(stop) = self.warn_late(py, elapsed, limit) {
                            return stop;
                        }
                        PlayerAnswer::Violation {
                            kind: ViolationKind::Timeout,
                            detail: format!(
                                "decide took {:.2} s (limit {:.1} s)",
                                elapsed.as_secs_f64(),
                                limit.as_secs_f64()
                            ),
                        }
                    }
                    _ => {
                        let (answer, notes) = answer_with_notes(v.bind(py), Some(grid));
                        self.notes = notes;
                        answer
                    }
                },
            }
        });
        self.pending = Some(answer);
    }
    fn finish(&mut self) -> PlayerAnswer {
        self.pending.take().unwrap_or(PlayerAnswer::Raw(Vec::new()))
    }
    fn notes(&mut self) -> Option<Notes> {
        self.notes.take()
    }
}

/// Plays one match through the engine's match service; each side is an agent spec (str) or a
/// callable. Returns the result as JSON (the document of `gbely play --json`).
#[pyfunction]
#[allow(clippy::too_many_arguments)] // the keyword arguments of gbely.play
#[pyo3(signature = (agents, map = None, rounds = Defaults::ROUNDS as i64, replay = None, time_limit = Defaults::TIME_LIMIT.as_secs_f64(), python = None, run_dir = None, sandbox = gbely_engine::runner::sandbox::SandboxMode::DEFAULT.word(), memory_limit = Defaults::MEMORY_LIMIT.bytes().map(|b| b >> 20)))]
#[pyo3(
    text_signature = "(agents, map=None, rounds=150, replay=None, time_limit=2.0, python=None, run_dir=None, sandbox='auto', memory_limit=4096)"
)]
pub(crate) fn play_match(
    py: Python<'_>,
    agents: Vec<Bound<'_, PyAny>>,
    map: Option<Bound<'_, PyAny>>,
    rounds: i64,
    replay: Option<PathBuf>,
    time_limit: Option<f64>,
    python: Option<String>,
    run_dir: Option<PathBuf>,
    sandbox: &str,
    memory_limit: Option<u64>,
) -> PyResult<String> {
    let settings = crate::tournament::settings(rounds, time_limit, memory_limit, sandbox, python)?;
    let map = map_arg(map.as_ref())?;
    let ids = Arc::new(id_strings(py, map.grid()));
    let abort: Arc<Mutex<Option<PyErr>>> = Arc::new(Mutex::new(None));
    let mut names = Vec::new();
    let mut agents_of: Vec<Result<AgentSpec, Py<PyAny>>> = Vec::new();
    // The agents named by text, read once: a bad one is refused before any interpreter starts.
    let specs: Vec<Option<AgentSpec>> = (agents.iter())
        .map(|a| a.extract::<String>().ok().map(|s| crate::errors::agent_spec(&s)).transpose())
        .collect::<PyResult<_>>()?;
    // The interpreter, resolved once as the command line resolves it (`sys.executable`), when a
    // seat is a Python agent.
    let named = interpreter::python(settings.python.as_deref());
    let python_seat = specs.iter().flatten().any(AgentSpec::is_python);
    let py_exe = if python_seat {
        interpreter::resolve_python(&named).map_err(|e| AgentError::new_err(e.to_string()))?
    } else {
        named
    };
    for (a, spec) in agents.iter().zip(specs) {
        if let Some(s) = spec {
            // The name the command line gives it: an agent file's AGENT_NAME and AGENT_VERSION.
            let (name, warning) = gbely_engine::app::inspect::display_name(&s, &py_exe);
            if let Some(w) = warning {
                let message = std::ffi::CString::new(w).unwrap_or_default();
                PyErr::warn(py, &py.get_type::<pyo3::exceptions::PyUserWarning>(), &message, 2)?;
            }
            names.push(name);
            agents_of.push(Ok(s));
        } else if a.is_callable() {
            if is_coroutine_function(py, a)? {
                return Err(AgentError::new_err(
                    "decide is an async function: the engine calls decide(stav) and needs the commands, not a coroutine",
                ));
            }
            let name = a
                .getattr("__qualname__")
                .or_else(|_| a.getattr("__name__"))
                .and_then(|n| n.extract::<String>())
                .unwrap_or_else(|_| "callable".into());
            names.push(name);
            agents_of.push(Err(a.clone().unbind()));
        } else {
            return Err(PyTypeError::new_err("an agent is a path to an agent file, `council`, `template`, `expander`, cmd:COMMAND, or a callable decide(stav)"));
        }
    }
    service::unique_names(&mut names);
    let seats = agents_of
        .into_iter()
        .zip(names)
        .map(|(agent, name)| match agent {
            Ok(spec) => Seat::spec(spec, name),
            Err(func) => Seat::player(Box::new(CallablePlayer {
                name,
                func,
                ids: ids.clone(),
                limit: settings.time_limit,
                pending: None,
                notes: None,
                abort: abort.clone(),
                warned: false,
            })),
        })
        .collect();
    let mut plan = MatchPlan::new(map, seats);
    plan.rounds = settings.rounds;
    plan.limits = settings.limits();
    plan.python = py_exe;
    plan.run_dir = run_dir;
    plan.recording = replay.clone().map_or(Recording::Off, Recording::File);
    plan.check().map_err(|e| match e {
        RunError::Seats { .. } | RunError::Rounds(_) => PyValueError::new_err(e.to_string()),
        e => AgentError::new_err(e.to_string()),
    })?;
    // Ctrl-C (or SIGTERM) stops the match: the engine's handler is chained before Python's, so
    // the match ends cleanly (agents killed, the partial replay written) and Python then raises
    // KeyboardInterrupt as usual.
    let guard = gbely_engine::runner::interrupt::Guard::install()
        .map_err(|e| PyOSError::new_err(format!("cannot install the Ctrl-C handler: {e}")))?;
    let played = py.allow_threads(|| service::run(plan, &mut ()));
    drop(guard);
    let played = played.map_err(|e| match e {
        RunError::Replay { .. } => PyOSError::new_err(e.to_string()),
        e => AgentError::new_err(e.to_string()),
    })?;
    if let Some(e) = abort.lock().expect("not poisoned").take() {
        return Err(e);
    }
    if played.record.interrupted() {
        py.check_signals()?;
        return Err(PyKeyboardInterrupt::new_err("the match was interrupted"));
    }
    if let Some(Err(e)) = &played.record.replay_written {
        let path = replay.as_ref().map_or(String::new(), |p| p.display().to_string());
        return Err(PyOSError::new_err(format!("cannot write the replay {path}: {e}")));
    }
    Ok(played.result_json().to_string())
}

/// Whether a callable is an `async def` (its call would give a coroutine, not commands): the
/// check `gbely check` makes of an agent file's `decide`.
fn is_coroutine_function(py: Python<'_>, f: &Bound<'_, PyAny>) -> PyResult<bool> {
    py.import("inspect")?.call_method1("iscoroutinefunction", (f,))?.is_truthy()
}
