//! The match service: the one way a match of agents is set up and played to its end.
//!
//! A [`MatchPlan`] says everything about a match: the map, who plays each seat (an agent spec
//! such as `my_agent.py`, `council` or `cmd:…`, or a ready [`Player`] such as a Python callable or
//! the human seat), the rounds, what each agent process is allowed ([`AgentLimits`]), the Python
//! interpreter, where agents work and log, and whether the replay is recorded. [`run`] checks the
//! plan, creates the replay file before any agent starts, builds the players (the one place agent
//! specs become players), plays, stops every agent process, and gives back what the match left
//! ([`Played`], with [`Played::result_json`]: the document `--json` and `gbely.play` return).
//!
//! Its callers: `gbely play` and `gbely final`, `gbely.play` / `gbely.final` (the Python
//! package), every league match (local, on a Ray worker, and A/B tests' pairs). The stepwise
//! `gbely.Match` and the learning environments drive a `Session` directly, by design.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use gbely_world::Map;
use serde_json::json;

use crate::app::runs::agent_spec::{AgentSpec, Started};
use crate::app::runs::final_match::final_table;
use crate::app::runs::folders::{timestamp, unique_dir};
use crate::app::runs::interpreter::DEFAULT_PYTHON;
use crate::app::runs::results::result_json;
use crate::app::runs::{RunError, MAX_ROUNDS};
use crate::game::{play_session, Observer};
use crate::limits::{Defaults, MemoryLimit, TimeLimit};
use crate::recorder::ReplayWriter;
use crate::runner::cores::CoreGate;
use crate::runner::player::{builtin_player, Player, PlayerAnswer};
use crate::runner::process::{ProcessConfig, ProcessPlayer};
use crate::runner::sandbox::SandboxMode;
use crate::session::{MatchRecord, Session};
use crate::sim::MatchConfig;
use gbely_world::replay::{Answer, ForkRecord};

/// What every agent process of a match gets.
#[derive(Clone, Debug, Default)]
pub struct AgentLimits {
    /// Time for a round.
    pub time: TimeLimit,
    /// Memory of each agent process.
    pub memory: MemoryLimit,
    /// The cores shared with other matches' agents (a league's), if any.
    pub cores: Option<Arc<CoreGate>>,
    /// Whether agents run in the sandbox.
    pub sandbox: SandboxMode,
}

/// Who plays a seat.
pub enum SeatAgent {
    /// An agent named by its spec (an agent file, a built-in or example agent, a command).
    Spec(AgentSpec),
    /// A player made by the caller (a Python callable, the human seat).
    Player(Box<dyn Player + Send>),
}

impl std::fmt::Debug for SeatAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SeatAgent::Spec(s) => f.debug_tuple("Spec").field(s).finish(),
            SeatAgent::Player(p) => f.debug_tuple("Player").field(&p.name()).finish(),
        }
    }
}

/// One seat of a plan: who plays it and the name it is shown under.
#[derive(Debug)]
pub struct Seat {
    pub agent: SeatAgent,
    pub name: String,
}

impl Seat {
    /// A seat played by an agent spec, shown under `name`.
    pub fn spec(spec: AgentSpec, name: impl Into<String>) -> Seat {
        Seat { agent: SeatAgent::Spec(spec), name: name.into() }
    }

    /// A seat played by a ready player, shown under its name.
    pub fn player(player: Box<dyn Player + Send>) -> Seat {
        let name = player.name();
        Seat { agent: SeatAgent::Player(player), name }
    }
}

/// Where the replay of a match goes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Recording {
    /// Not recorded.
    #[default]
    Off,
    /// Built in memory ([`MatchRecord::replay`]).
    Memory,
    /// Streamed to this file as rounds finish (`.json` or `.json.gz`).
    File(PathBuf),
}

/// Everything about a match to play (see the module documentation).
#[derive(Debug)]
pub struct MatchPlan {
    pub map: Arc<Map>,
    /// One per seat of the map, in seat order.
    pub seats: Vec<Seat>,
    pub rounds: u32,
    pub limits: AgentLimits,
    /// The interpreter of Python agents (resolved: see `runs::resolve_python`).
    pub python: String,
    /// Where agent processes work (`.seatK`) and log (`seatK-NAME.log`); `None`: a new folder
    /// in [`Defaults::RUNS_FOLDER`], made only when some seat is an agent process.
    pub run_dir: Option<PathBuf>,
    pub recording: Recording,
    /// Continue a match from this replay of its first rounds (a final cut off by a crash): those
    /// rounds are played again from the replay's answers, the agents not asked, and the agents
    /// take over from the first round the replay lacks — started afresh, their memory lost as
    /// after a violation's restart, no violation counted. The engine is deterministic and the
    /// Council decides from its observation alone (rules §11), so the state, the record and the
    /// replay of those rounds are the original's.
    pub resume: Option<Arc<gbely_world::Replay>>,
    /// With `resume`: the match is a fork of another (`runs::fork::fork_at`), and its replay
    /// says where it came from.
    pub fork: Option<ForkRecord>,
}

impl MatchPlan {
    /// A plan with every default: [`Defaults`]' rounds and limits, the sandbox where the machine
    /// allows it, the default interpreter, a new run folder when needed, no replay.
    pub fn new(map: Arc<Map>, seats: Vec<Seat>) -> MatchPlan {
        MatchPlan {
            map,
            seats,
            rounds: Defaults::ROUNDS,
            limits: AgentLimits::default(),
            python: DEFAULT_PYTHON.to_string(),
            run_dir: None,
            recording: Recording::Off,
            resume: None,
            fork: None,
        }
    }

    /// The agent specs of the plan's seats, in seat order (`None` for ready players).
    pub fn specs(&self) -> impl Iterator<Item = Option<&AgentSpec>> {
        self.seats.iter().map(|s| match &s.agent {
            SeatAgent::Spec(spec) => Some(spec),
            SeatAgent::Player(_) => None,
        })
    }

    /// Refuses a plan that cannot be played, saying what is wrong, before anything is written:
    /// a seat count that is not the map's, rounds out of range, an agent that cannot run.
    pub fn check(&self) -> Result<(), RunError> {
        if self.seats.len() != self.map.seats().len() {
            return Err(RunError::Seats {
                map: self.map.name().to_string(),
                seats: self.map.seats().len(),
                given: self.seats.len(),
            });
        }
        if !(1..=MAX_ROUNDS).contains(&self.rounds) {
            return Err(RunError::Rounds(self.rounds));
        }
        for spec in self.specs().flatten() {
            spec.check()?;
        }
        if self.fork.is_some() && self.resume.is_none() {
            return Err(RunError::Resume("a fork needs the replay it continues".into()));
        }
        if let Some(replay) = &self.resume {
            let theirs = replay.check().map_err(|e| RunError::Resume(e.to_string()))?;
            if theirs.fingerprint() != self.map.fingerprint() {
                return Err(RunError::Resume(format!(
                    "it was played on map {} ({}), this match is on {} ({})",
                    theirs.name(),
                    theirs.fingerprint(),
                    self.map.name(),
                    self.map.fingerprint()
                )));
            }
            if let Some(fork) = &self.fork {
                if fork.round as usize != replay.turns.len() {
                    return Err(RunError::Resume(format!(
                        "a fork at round {} needs the source's first {} rounds, not {}",
                        fork.round,
                        fork.round,
                        replay.turns.len()
                    )));
                }
            }
            if replay.rounds != self.rounds || replay.turns.len() > self.rounds as usize {
                return Err(RunError::Resume(format!(
                    "it is a match of {} rounds with {} played, this one has {}",
                    replay.rounds,
                    replay.turns.len(),
                    self.rounds
                )));
            }
        }
        Ok(())
    }
}

/// A seat of a continued match ([`MatchPlan::resume`]): the replay's answers for the rounds it
/// holds, then the seat's own player, started only then.
struct Replaying {
    inner: Box<dyn Player + Send>,
    seat: usize,
    replay: Arc<gbely_world::Replay>,
    /// The round of the last observation handed over.
    round: usize,
    notes: Option<gbely_rules::Notes>,
    /// The seat's built-in agent in the replay (the Council), when another plays it now: it
    /// decides the recorded rounds again, as replay readers do ([`Answer::Regen`]).
    regen: Option<Box<dyn Player + Send>>,
}

impl Replaying {
    fn new(inner: Box<dyn Player + Send>, seat: usize, replay: &Arc<gbely_world::Replay>) -> Replaying {
        let regen = replay.seats[seat].builtin.as_deref().and_then(|b| builtin_player(b, b));
        Replaying { inner, seat, replay: Arc::clone(replay), round: 0, notes: None, regen }
    }

    /// Whether this round's recorded answer is the built-in agent's, decided again.
    fn regenerated(&self) -> bool {
        matches!(self.recorded().and_then(|t| t.answers.get(self.seat)), Some(Answer::Regen))
    }
}

impl Replaying {
    fn recorded(&self) -> Option<&gbely_world::replay::Turn> {
        self.replay.turns.get(self.round)
    }
}

impl Player for Replaying {
    fn name(&self) -> String {
        self.inner.name()
    }

    fn begin(&mut self, obs: &gbely_rules::Observation, grid: &gbely_rules::Grid) {
        self.round = obs.round as usize;
        if self.recorded().is_none() {
            self.inner.begin(obs, grid);
        } else if self.regenerated() {
            if let Some(regen) = self.regen.as_mut() {
                regen.begin(obs, grid);
            }
        }
    }

    fn finish(&mut self) -> PlayerAnswer {
        let replay = Arc::clone(&self.replay);
        let Some(turn) = replay.turns.get(self.round) else { return self.inner.finish() };
        if self.regenerated() {
            if let Some(regen) = self.regen.as_mut() {
                return regen.finish();
            }
        }
        self.notes = crate::replays::recorded_notes(turn, self.seat as u8);
        let answer = turn.answers.get(self.seat).and_then(crate::replays::recorded_answer);
        answer.unwrap_or(PlayerAnswer::Commands(Vec::new()))
    }

    fn end(&mut self) {
        self.inner.end();
    }

    fn stats(&self) -> Option<crate::runner::player::AgentStats> {
        self.inner.stats()
    }

    fn notes(&mut self) -> Option<gbely_rules::Notes> {
        if self.recorded().is_some() {
            self.notes.take()
        } else {
            self.inner.notes()
        }
    }

    /// A recorded round's time is the one recorded (the replay of a fork keeps the source's).
    fn answer_seconds(&self) -> Option<f64> {
        match self.recorded() {
            Some(turn) => turn.answer_ms.get(self.seat).copied().flatten().map(|ms| f64::from(ms) / 1000.0),
            None => self.inner.answer_seconds(),
        }
    }
}

/// Seat names made unique one way: every seat whose name another seat shares is shown with its
/// seat number, `name (seat k)`.
pub fn unique_names(names: &mut [String]) {
    let shared: Vec<bool> = names.iter().map(|n| names.iter().filter(|m| *m == n).count() > 1).collect();
    for (k, (name, shared)) in names.iter_mut().zip(shared).enumerate() {
        if shared {
            *name = format!("{name} (seat {k})");
        }
    }
}

/// What a played match leaves: its record, the replay file, each seat's log.
#[derive(Debug)]
pub struct Played {
    pub record: MatchRecord,
    pub map: Arc<Map>,
    /// The replay file, when one was written completely.
    pub replay: Option<PathBuf>,
    /// Each seat's log file (`None` for in-process players).
    pub logs: Vec<Option<PathBuf>>,
    /// The interpreter the Python agents ran with, when some seat was one.
    pub python: Option<String>,
}

impl Played {
    /// The result document of `--json` and the Python package (see `runs::result_json`), with
    /// the interpreter of the Python agents.
    /// A final's document also has its `table`: the finalists ranked (see `runs::final_table`).
    pub fn result_json(&self) -> serde_json::Value {
        let mut doc = result_json(&self.map, &self.record, self.replay.as_deref(), &self.logs);
        doc["python"] = json!(self.python);
        if self.map.seats().len() > 2 {
            doc["table"] = json!(final_table(&self.map, &self.record)
                .iter()
                .map(|r| json!({
                    "rank": r.rank, "seat": r.seat, "class": r.class, "name": r.name, "share": r.share,
                    "cells": r.cells, "tiebreak_round": r.tiebreak, "violations": r.violations,
                    "disqualified": r.disqualified,
                }))
                .collect::<Vec<_>>());
        }
        doc
    }
}

/// Plays a plan to its end (or to a stop: Ctrl-C, when the caller installed the handler).
///
/// The replay file is created before any agent starts, so an unwritable path fails first; a
/// write error during the match is kept in [`MatchRecord::replay_written`] (the match still
/// counts). Every agent process is stopped before this returns.
pub fn run(plan: MatchPlan, observer: &mut dyn Observer) -> Result<Played, RunError> {
    plan.check()?;
    let MatchPlan { map, seats, rounds, limits, python, run_dir, recording, resume, fork } = plan;
    let writer = match &recording {
        Recording::File(path) => Some(
            ReplayWriter::create(path).map_err(|error| RunError::Replay { path: path.display().to_string(), error })?,
        ),
        _ => None,
    };
    let processes = seats.iter().any(|s| matches!(&s.agent, SeatAgent::Spec(spec) if spec.is_process()));
    let run_dir = match run_dir {
        Some(d) => d,
        None => {
            let first = seats.iter().find_map(|s| match &s.agent {
                SeatAgent::Spec(spec) if spec.is_process() => Some(spec),
                _ => None,
            });
            let stem = first.map_or_else(|| "agent".to_string(), AgentSpec::stem);
            unique_dir(Path::new(Defaults::RUNS_FOLDER).join(format!("{}-{stem}", timestamp())))
        }
    };
    let python_used =
        seats.iter().any(|s| matches!(&s.agent, SeatAgent::Spec(spec) if spec.is_python())).then(|| python.clone());
    if processes {
        std::fs::create_dir_all(&run_dir)
            .map_err(|error| RunError::RunFolder { dir: run_dir.display().to_string(), error })?;
    }
    let mut players: Vec<Box<dyn Player + Send>> = Vec::with_capacity(seats.len());
    let mut logs = Vec::with_capacity(seats.len());
    for (seat, Seat { agent, name }) in seats.into_iter().enumerate() {
        let (player, log) = match agent {
            SeatAgent::Player(p) => (p, None),
            SeatAgent::Spec(spec) => seat_player(&spec, name, seat, &run_dir, &limits, &python)?,
        };
        // A continued match: the replay's answers first, except for the built-in agent that
        // played the seat there, which decides them again from the same observations.
        let player = match &resume {
            Some(replay) if player.builtin().is_none() || player.builtin() != replay.seats[seat].builtin.as_deref() => {
                Box::new(Replaying::new(player, seat, replay)) as Box<dyn Player + Send>
            }
            _ => player,
        };
        players.push(player);
        logs.push(log);
    }
    let config = MatchConfig { rounds };
    let mut refs: Vec<&mut dyn Player> = players.iter_mut().map(|p| p.as_mut() as &mut dyn Player).collect();
    let replay_path = writer.as_ref().map(|w| w.path().to_path_buf());
    let mut session = Session::new(map.clone(), config, refs.iter().map(|p| p.name()).collect());
    for (s, p) in refs.iter().enumerate() {
        session.set_builtin(s as u8, p.builtin());
    }
    if let Some(fork) = fork {
        session.set_fork(fork);
    }
    match writer {
        Some(w) => session.record_to(w),
        None if recording == Recording::Memory => session.record(),
        None => {}
    }
    let record = play_session(session, &mut refs, observer);
    drop(refs);
    // Stops every agent process (and all they started) before the result is handed back.
    drop(players);
    let replay = replay_path.filter(|_| matches!(record.replay_written, Some(Ok(_))));
    Ok(Played { record, map, replay, logs, python: python_used })
}

/// The player of one seat named by a spec; a process agent works in `run_dir/.seatK` and logs
/// to `run_dir/seatK-NAME.log`.
fn seat_player(
    spec: &AgentSpec,
    name: String,
    seat: usize,
    run_dir: &Path,
    limits: &AgentLimits,
    python: &str,
) -> Result<(Box<dyn Player + Send>, Option<PathBuf>), RunError> {
    match spec.start(run_dir, seat, python)? {
        Started::Builtin(b) => Ok((builtin_player(name, b).expect("a built-in agent"), None)),
        Started::Process(cmd) => {
            let log = run_dir.join(format!("seat{seat}-{}.log", spec.stem()));
            let work_dir = run_dir.join(format!(".seat{seat}"));
            let prepare =
                |error| RunError::Prepare { spec: spec.to_string(), dir: run_dir.display().to_string(), error };
            empty_seat_dir(&work_dir).map_err(prepare)?;
            let mut cfg = ProcessConfig::new(work_dir, log.clone());
            cfg.time_limit = limits.time;
            cfg.memory_limit = limits.memory;
            cfg.cores = limits.cores.clone();
            cfg.sandbox = limits.sandbox;
            cfg.cpu_slot = seat;
            let p = ProcessPlayer::new(name, cmd, cfg).map_err(prepare)?;
            Ok((Box::new(p), Some(log)))
        }
    }
}

/// Removes what an earlier match left in a seat's folder (a run folder reused: `--run-dir`, the
/// judge's workers), so that every match starts from a clean one: an agent never sees the files
/// of the one before, and the sandbox's folder holds this agent's file only. The folder is
/// gbely's own (`.seatK`); a link in its place is removed itself, never followed, and nothing
/// inside is followed either (`remove_dir_all` removes links, not what they name).
fn empty_seat_dir(dir: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(dir) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(dir),
        Ok(_) => std::fs::remove_file(dir),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_names_get_their_seat_numbers_and_others_stay() {
        let mut names: Vec<String> = ["expander", "bot", "expander", "council"].map(String::from).to_vec();
        unique_names(&mut names);
        assert_eq!(names, ["expander (seat 0)", "bot", "expander (seat 2)", "council"]);
    }

    #[test]
    fn a_plan_with_the_wrong_seat_count_or_rounds_is_refused_before_anything_runs() {
        let map = Arc::new(gbely_world::reference_map());
        let plan = MatchPlan::new(map.clone(), vec![Seat::spec(AgentSpec::COUNCIL, "council")]);
        assert!(matches!(plan.check(), Err(RunError::Seats { seats: 2, given: 1, .. })));
        let mut plan =
            MatchPlan::new(map, vec![Seat::spec(AgentSpec::COUNCIL, "a"), Seat::spec(AgentSpec::COUNCIL, "b")]);
        plan.rounds = 0;
        assert!(matches!(plan.check(), Err(RunError::Rounds(0))));
    }
}
