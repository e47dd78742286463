//! Playing a match: players (in-process or processes) around the pure [`Match`], and the replay.

use std::collections::BTreeMap;
use std::sync::Arc;

use gbely_rules::{Command, Decide, DiscardReason, Grid, Observation};
use gbely_world::replay::{MatchResult, SideResult};
use gbely_world::{Map, Replay};
use serde_json::Value;

use crate::record::ReplayWriter;
use crate::runner::interrupt;
use crate::session::Session;
use crate::sim::{EndReason, Match, MatchConfig, RoundReport, SideOutcome, NEUTRAL};

pub use gbely_rules::ViolationKind;

/// What the scheduler says about an agent's rounds (Linux `/proc/PID/schedstat`; zero elsewhere and in process).
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct CpuTally {
    /// Rounds measured.
    pub rounds: u32,
    /// Seconds the agent ran on a CPU while it was deciding.
    pub run_seconds: f64,
    /// Seconds it was ready to run but waited for a CPU (other agents or programs had them all).
    pub wait_seconds: f64,
    /// The longest such wait in one round.
    pub max_wait_seconds: f64,
    /// Rounds in which waiting for a CPU took more than a tenth of the round's time limit.
    pub starved_rounds: u32,
}

/// A player's answer for one round.
#[derive(Clone, Debug, PartialEq)]
pub enum PlayerAnswer {
    /// Typed commands from an in-process agent.
    Commands(Vec<Command>),
    /// The command list as received on the wire (each item parsed on its own).
    Raw(Vec<Value>),
    Violation {
        kind: ViolationKind,
        detail: String,
    },
    /// A stop was requested (Ctrl-C) while waiting for the answer: the round is not played.
    Interrupted,
    /// An answer as a replay holds it (re-simulation).
    Replayed(gbely_world::replay::Answer),
}

/// How an agent process fared, for the summary's fairness notes.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct AgentStats {
    /// Whether it played under a time limit.
    pub timed: bool,
    /// Processes started (1 + restarts after violations).
    pub starts: u32,
    pub answered_rounds: u32,
    /// The slowest answer in time, in seconds.
    pub max_answer_seconds: f64,
    /// CPU time and waits for a CPU while deciding (Linux).
    pub cpu: CpuTally,
    /// Whether it ran in the sandbox, and what held it (or why nothing did).
    pub isolation: Isolation,
}

/// How an agent process was isolated from the machine and from the other agents: in the
/// sandbox (`runner::sandbox`) or not, with one line that says how, or why not.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Isolation {
    pub sandboxed: bool,
    pub detail: &'static str,
}

impl Isolation {
    pub fn sandboxed(detail: &'static str) -> Isolation {
        Isolation { sandboxed: true, detail }
    }

    pub fn unsandboxed(detail: &'static str) -> Isolation {
        Isolation { sandboxed: false, detail }
    }

    /// The summary's line: `sandboxed (…)` or `not sandboxed: why`.
    pub fn line(&self) -> String {
        if self.sandboxed {
            self.detail.to_string()
        } else {
            format!(
                "not sandboxed: {} (agents can read your files and each other's; see docs/protocol.md)",
                self.detail
            )
        }
    }
}

/// Someone who plays a seat. Deciding is split in two so that agent processes of all seats
/// can think at the same time: `begin` hands over the observation, `finish` collects the answer.
pub trait Player {
    /// A short name for tables and replays.
    fn name(&self) -> String;
    fn begin(&mut self, obs: &Observation, grid: &Grid);
    fn finish(&mut self) -> PlayerAnswer;
    /// Called once when the match is over (agent processes are stopped here).
    fn end(&mut self) {}
    /// Timings of an agent process (`None` for in-process players).
    fn stats(&self) -> Option<AgentStats> {
        None
    }
    /// The name of a deterministic built-in agent a replay reader can run again (`council`):
    /// its commands are then regenerated on reading rather than stored.
    fn builtin(&self) -> Option<&'static str> {
        None
    }
}

/// Plays a seat with an in-process [`Decide`].
#[derive(Debug)]
pub struct DecidePlayer<D> {
    name: String,
    agent: D,
    answer: Option<Vec<Command>>,
    builtin: Option<&'static str>,
}

impl<D: Decide> DecidePlayer<D> {
    pub fn new(name: impl Into<String>, agent: D) -> Self {
        DecidePlayer { name: name.into(), agent, answer: None, builtin: None }
    }
}

impl<D: Decide> DecidePlayer<D> {
    /// A deterministic built-in agent, named as [`builtin_agent`] knows it: replays regenerate
    /// its commands from its observations instead of storing them. The agent must be what
    /// `builtin_agent(name)` makes, fresh.
    pub fn builtin(name: impl Into<String>, builtin: &'static str, agent: D) -> Self {
        debug_assert!(builtin_agent(builtin).is_some(), "unknown built-in agent `{builtin}`");
        DecidePlayer { builtin: Some(builtin), ..DecidePlayer::new(name, agent) }
    }
}

impl DecidePlayer<gbely_council::Council> {
    /// The Council as a built-in: replays regenerate its commands instead of storing them.
    pub fn council(name: impl Into<String>) -> Self {
        DecidePlayer::builtin(name, BUILTIN_COUNCIL, gbely_council::Council::new())
    }
}

/// The built-in agent name of the Council in replays.
pub const BUILTIN_COUNCIL: &str = "council";

/// The built-in agents, by the names agents are given on the command line and in replays: the
/// Council, and the Rust twins of the example agents (in-process: fast, and regenerated on
/// reading a replay).
pub const BUILTIN_AGENTS: [&str; 5] = [BUILTIN_COUNCIL, "council:easy", "council:strong", "template-rs", "expander-rs"];

/// A player of a built-in agent (see [`BUILTIN_AGENTS`]); `None` for another name.
pub fn builtin_player(name: impl Into<String>, builtin: &str) -> Option<Box<dyn Player + Send>> {
    let known = BUILTIN_AGENTS.into_iter().find(|b| *b == builtin)?;
    Some(Box::new(DecidePlayer::builtin(name, known, builtin_agent(known)?)))
}

/// A fresh built-in agent by its replay name: `council`, and the Rust twins of the example agents
/// `template-rs` and `expander-rs` (the one place their names meet their code; [`BUILTIN_AGENTS`]
/// lists them, checked by a test); `None` for a name this build does not know. Each decides from
/// its observation alone and deterministically, so its commands can be made again on reading.
pub fn builtin_agent(name: &str) -> Option<Box<dyn Decide + Send>> {
    match name {
        BUILTIN_COUNCIL => Some(Box::new(gbely_council::Council::new())),
        "council:easy" => Some(Box::new(gbely_council::Council::easy())),
        "council:strong" => Some(Box::new(gbely_council::StrongCouncil::new())),
        "template-rs" => Some(Box::new(agents::Template::default())),
        "expander-rs" => Some(Box::new(agents::Expander::default())),
        _ => None,
    }
}

impl<D: Decide> Player for DecidePlayer<D> {
    fn name(&self) -> String {
        self.name.clone()
    }
    fn begin(&mut self, obs: &Observation, _grid: &Grid) {
        self.answer = Some(self.agent.decide(obs));
    }
    fn finish(&mut self) -> PlayerAnswer {
        PlayerAnswer::Commands(self.answer.take().unwrap_or_default())
    }
    fn builtin(&self) -> Option<&'static str> {
        self.builtin
    }
}

/// Options of [`play`].
#[derive(Clone, Copy, Debug, Default)]
pub struct PlayOptions {
    pub config: MatchConfig,
    /// Build the replay document in memory while playing (see [`play_to`] to stream it to a file).
    pub record: bool,
}

/// Discarded commands of one seat by reason.
pub type DiscardDigest = BTreeMap<DiscardReason, u32>;

/// Everything a played match leaves behind.
#[derive(Debug)]
pub struct MatchRecord {
    pub names: Vec<String>,
    pub outcome: Vec<SideOutcome>,
    /// The last round played; when interrupted, the round that was stopped (not played).
    pub last_round: u32,
    /// How the match ended ([`EndReason::Interrupted`] when stopped before its end).
    pub end_reason: EndReason,
    pub council_fell: Option<u32>,
    pub discards: Vec<DiscardDigest>,
    /// Violations per seat: (round, kind, detail).
    pub violations: Vec<Vec<(u32, ViolationKind, String)>>,
    /// Timings of agent processes, per seat.
    pub agents: Vec<Option<AgentStats>>,
    /// The replay, when recorded in memory.
    pub replay: Option<Replay>,
    /// When streamed to a file: its size, or why writing it failed (the match still counts).
    pub replay_written: Option<Result<u64, String>>,
}

impl MatchRecord {
    /// Rounds actually played.
    pub fn rounds_played(&self) -> u32 {
        if !self.interrupted() {
            self.last_round + 1
        } else {
            self.last_round
        }
    }

    pub fn interrupted(&self) -> bool {
        self.end_reason == EndReason::Interrupted
    }
}

/// Watches a match round by round (progress bars, logs).
pub trait Observer {
    fn round_done(&mut self, _m: &Match, _report: &RoundReport) {}
}

impl Observer for () {}

/// Owner as written in replays: the seat, or -1 for neutral.
pub fn owner_code(o: u8) -> i8 {
    if o == NEUTRAL {
        -1
    } else {
        o as i8
    }
}

/// The result of a played match, as the replay writes it.
pub fn record_result(rec: &MatchRecord) -> MatchResult {
    MatchResult {
        last_round: rec.last_round,
        ended_by: rec.end_reason,
        council_fell: rec.council_fell,
        sides: rec.outcome.iter().map(|o| side_result(o, &rec.names[o.seat as usize])).collect(),
    }
}

fn side_result(o: &SideOutcome, name: &str) -> SideResult {
    SideResult {
        seat: o.seat,
        name: name.to_string(),
        cells: o.cells,
        score: o.score,
        tiebreak_round: o.tiebreak_round,
        violations: o.violations,
        disqualified: o.disqualified.is_some(),
        eliminated: o.eliminated,
    }
}

/// The result section of a replay.
pub fn match_result(m: &Match, names: &[String]) -> MatchResult {
    MatchResult {
        last_round: m.round(),
        ended_by: m.end_reason().unwrap_or(EndReason::Unfinished),
        council_fell: m.council_fell(),
        sides: m.outcome().iter().map(|o| side_result(o, &names[o.seat as usize])).collect(),
    }
}

/// Plays a whole match: one player per seat, in seat order.
pub fn play(
    map: Arc<Map>,
    players: &mut [&mut dyn Player],
    opts: PlayOptions,
    observer: &mut dyn Observer,
) -> MatchRecord {
    let mut session = Session::new(map, opts.config, players.iter().map(|p| p.name()).collect());
    for (s, p) in players.iter().enumerate() {
        session.set_builtin(s as u8, p.builtin());
    }
    if opts.record {
        session.record();
    }
    run(session, players, observer)
}

/// Plays a whole match and streams its replay to `writer` as rounds finish (memory does not grow
/// with the match). When the match is interrupted the replay still ends properly, marked
/// `interrupted`; a write error is reported in [`MatchRecord::replay_written`], not raised.
pub fn play_to(
    map: Arc<Map>,
    players: &mut [&mut dyn Player],
    config: MatchConfig,
    writer: ReplayWriter,
    observer: &mut dyn Observer,
) -> MatchRecord {
    let mut session = Session::new(map, config, players.iter().map(|p| p.name()).collect());
    for (s, p) in players.iter().enumerate() {
        session.set_builtin(s as u8, p.builtin());
    }
    session.record_to(writer);
    run(session, players, observer)
}

/// The players' loop over a [`Session`]: every seat gets its observation before any answer is
/// collected, so agent processes think at the same time, each judged against its own send time.
/// A stop request (Ctrl-C) ends the match before the round in progress is resolved.
fn run(mut session: Session, players: &mut [&mut dyn Player], observer: &mut dyn Observer) -> MatchRecord {
    let seats = session.seats();
    assert_eq!(players.len(), seats, "one player per seat");
    let grid = session.grid().clone();
    let mut obs: Vec<Observation> = vec![Observation::default(); seats];
    'rounds: while !session.is_over() {
        if interrupt::requested() {
            break;
        }
        let active: Vec<bool> = (0..seats).map(|s| session.is_active(s as u8)).collect();
        for s in (0..seats).filter(|&s| active[s]) {
            session.observe_into(s as u8, &mut obs[s]);
            players[s].begin(&obs[s], &grid);
        }
        for s in (0..seats).filter(|&s| active[s]) {
            match players[s].finish() {
                PlayerAnswer::Interrupted => break 'rounds,
                answer => session.submit(s as u8, answer),
            }
        }
        if interrupt::requested() {
            // Nobody is charged for an answer cut short by a stop: the round is not played.
            break;
        }
        session.advance();
        observer.round_done(session.state(), session.report());
    }
    for p in players.iter_mut() {
        p.end();
    }
    let mut rec = session.finish();
    rec.agents = players.iter().map(|p| p.stats()).collect();
    rec
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_built_in_agent_can_be_made_and_played() {
        for name in BUILTIN_AGENTS {
            assert!(builtin_agent(name).is_some(), "{name}");
            assert_eq!(builtin_player("x", name).and_then(|p| p.builtin()), Some(name));
        }
        assert!(builtin_agent("nobody").is_none() && builtin_player("x", "nobody").is_none());
    }
}
