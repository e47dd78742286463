//! `gbely.play` / `gbely.final`: whole matches, with agent files and in-process callables.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::convert::*;
use crate::errors::{AgentError, TimeLimitWarning};
use crate::maps::*;
use crate::step::check_rounds;
use gbely_engine::app::runs::{agent_spec, folders, interpreter, results};
use gbely_engine::game::{play, play_to, PlayOptions, Player, PlayerAnswer, ViolationKind};
use gbely_engine::runner::sandbox::SandboxMode;
use gbely_engine::runner::TimeLimit;
use gbely_engine::sim::MatchConfig;
use gbely_rules::{Grid, Observation};
use pyo3::exceptions::{PyKeyboardInterrupt, PyOSError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyString;

/// A seat played by a Python callable, in-process: `decide(stav)` gets the dict of SPEC §5.
pub(crate) struct CallablePlayer {
    name: String,
    func: Py<PyAny>,
    ids: Arc<Vec<Py<PyString>>>,
    limit: Option<Duration>,
    pending: Option<PlayerAnswer>,
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
                        return self.abort_with(e);
                    }
                    let ty = e.get_type(py).name().map(|n| n.to_string()).unwrap_or_else(|_| "an exception".into());
                    let detail = format!("decide raised {ty}: {}", e.value(py));
                    e.print(py);
                    PlayerAnswer::Violation { kind: ViolationKind::Crash, detail }
                }
                Ok(v) => match self.limit {
                    Some(limit) if elapsed > limit => {
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
#[pyo3(signature = (agents, map = None, rounds = 150, replay = None, time_limit = Some(2.0), python = None, run_dir = None, sandbox = "auto"))]
#[pyo3(
    text_signature = "(agents, map=None, rounds=150, replay=None, time_limit=2.0, python=None, run_dir=None, sandbox='auto')"
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
) -> PyResult<String> {
    let rounds = check_rounds(rounds)?;
    let sandbox: SandboxMode =
        sandbox.parse().map_err(|e| PyValueError::new_err(format!("sandbox={sandbox:?}: {e}")))?;
    let map = map_arg(map.as_ref())?;
    if agents.len() != map.seats().len() {
        return Err(PyValueError::new_err(format!(
            "the map has {} seats but {} agents were given",
            map.seats().len(),
            agents.len()
        )));
    }
    let limit = match time_limit {
        None => TimeLimit::OFF,
        Some(s) => TimeLimit::seconds(s).map_err(|_| {
            PyValueError::new_err(format!(
                "time_limit={s}: seconds more than 0 and at most {}, or None for no limit",
                TimeLimit::MAX_SECONDS
            ))
        })?,
    }
    .duration();
    let py_exe = interpreter::python(python.as_deref());
    let ids = Arc::new(id_strings(py, map.grid()));
    // Specs first (files must exist), then the run folder only if a process agent needs one.
    let mut specs: Vec<Option<String>> = Vec::new();
    let mut names = Vec::new();
    for a in &agents {
        if let Ok(s) = a.extract::<String>() {
            agent_spec::check_spec(&s).map_err(|e| AgentError::new_err(format!("{e:#}")))?;
            names.push(agent_spec::agent_name(&s));
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
            return Err(PyTypeError::new_err("an agent is a path to an agent file, `council`, `template`, `expander`, cmd:COMMAND, or a callable decide(stav)"));
        }
    }
    for k in 1..names.len() {
        if names[..k].contains(&names[k]) {
            names[k] = format!("{} (seat {k})", names[k]);
        }
    }
    let needs_dir = specs.iter().flatten().any(|s| agent_spec::builtin_of(s).is_none());
    let run_dir = match run_dir {
        Some(d) => d,
        None if needs_dir => folders::unique_dir(PathBuf::from("gbely-runs").join(format!(
            "{}-{}",
            folders::timestamp(),
            agent_spec::file_stem(specs.iter().flatten().next().map_or("agent", |s| s.as_str()))
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
                let (player, log) = seat_player(s, &names[seat], seat, &run_dir, limit, &py_exe, sandbox)?;
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
                    warned: false,
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
    let doc = results::result_json(&map, &rec, replay.as_deref(), &logs);
    Ok(doc.to_string())
}

type SeatPlayer = (Box<dyn Player + Send>, Option<PathBuf>);

/// The player of one seat named by a spec; a process agent's files carry its seat number.
pub(crate) fn seat_player(
    spec: &str,
    name: &str,
    seat: usize,
    run_dir: &std::path::Path,
    limit: Option<Duration>,
    py: &str,
    sandbox: SandboxMode,
) -> PyResult<SeatPlayer> {
    match agent_spec::resolve_agent(spec, run_dir, seat, py).map_err(|e| AgentError::new_err(format!("{e:#}")))? {
        agent_spec::AgentSpec::Builtin(b) => {
            Ok((gbely_engine::game::builtin_player(name, b).expect("a built-in agent"), None))
        }
        agent_spec::AgentSpec::Process(cmd) => {
            let log = run_dir.join(format!("seat{seat}-{}.log", agent_spec::file_stem(spec)));
            let mut cfg =
                gbely_engine::runner::process::ProcessConfig::new(run_dir.join(format!(".seat{seat}")), log.clone());
            cfg.time_limit = limit;
            cfg.cpu_slot = seat;
            cfg.sandbox = sandbox;
            let p = gbely_engine::runner::process::ProcessPlayer::new(name.to_string(), cmd, cfg)
                .map_err(|e| PyOSError::new_err(e.to_string()))?;
            Ok((Box::new(p), Some(log)))
        }
    }
}
