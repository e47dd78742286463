//! Playing a match: players (in-process or processes) around the pure [`Match`], and the replay.

use std::collections::BTreeMap;
use std::sync::Arc;

use gbely_rules::{Command, Decide, DiscardReason, Grid, Observation};
use gbely_world::replay::{
    Answer, CellChange, Discarded, FinalState, MapRecord, MatchResult, SeatRecord, SideResult, Turn, REPLAY_FORMAT,
    REPLAY_VERSION,
};
use gbely_world::{Map, Replay};
use serde_json::Value;

use crate::interrupt;
use crate::replays::ReplayWriter;
use crate::session::Session;
use crate::sim::{EndReason, Match, MatchConfig, RoundReport, SideOutcome, NEUTRAL};

pub use gbely_rules::ViolationKind;

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
}

/// How an agent process fared, for the summary's fairness notes.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AgentStats {
    /// Whether it played under a time limit.
    pub timed: bool,
    /// Processes started (1 + restarts after violations).
    pub starts: u32,
    pub answered_rounds: u32,
    /// The slowest answer in time, in seconds.
    pub max_answer_seconds: f64,
    /// CPU time and waits for a CPU while deciding (Linux).
    pub cpu: crate::process::CpuTally,
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
}

/// Plays a seat with an in-process [`Decide`].
#[derive(Debug)]
pub struct DecidePlayer<D> {
    name: String,
    agent: D,
    answer: Option<Vec<Command>>,
}

impl<D: Decide> DecidePlayer<D> {
    pub fn new(name: impl Into<String>, agent: D) -> Self {
        DecidePlayer { name: name.into(), agent, answer: None }
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

/// Builds a replay while a match is played: in memory, or streamed to a file round by round.
#[derive(Debug)]
pub struct Recorder {
    after_production: (Vec<u8>, Vec<f64>, Vec<f64>),
    /// The state at the end of the last round recorded: the final state of an interrupted match.
    end_state: FinalState,
    turns: Vec<Turn>,
    stream: Option<Stream>,
}

/// A replay being written to its file, and the first error writing it, if any (the match goes
/// on without the file rather than failing).
#[derive(Debug)]
struct Stream {
    writer: ReplayWriter,
    error: Option<String>,
}

impl Recorder {
    /// Records in memory ([`Recorder::finish`] gives the [`Replay`]).
    pub fn new() -> Recorder {
        Recorder {
            after_production: (Vec::new(), Vec::new(), Vec::new()),
            end_state: FinalState { owner: Vec::new(), units: Vec::new(), fortification: Vec::new() },
            turns: Vec::new(),
            stream: None,
        }
    }

    /// Streams to `writer`, starting with the replay's head (map, seats); call before round 0.
    pub fn streaming(mut writer: ReplayWriter, m: &Match, names: &[String]) -> Recorder {
        let mut r = Recorder::new();
        r.start(m);
        let head = r.document(m, names, match_result(m, names), Vec::new());
        let error = writer.head(&head).err().map(|e| e.to_string());
        r.stream = Some(Stream { writer, error });
        r
    }

    fn snapshot_end(&mut self, m: &Match) {
        let e = &mut self.end_state;
        e.owner.clear();
        e.owner.extend(m.owners().iter().map(|&o| owner_code(o)));
        e.units.clear();
        e.units.extend_from_slice(m.all_units());
        e.fortification.clear();
        e.fortification.extend_from_slice(m.all_fortifications());
    }

    /// Call once before round 0 (the state an interrupted match ends with if no round was played).
    pub fn start(&mut self, m: &Match) {
        self.snapshot_end(m);
    }

    pub fn is_streaming(&self) -> bool {
        self.stream.is_some()
    }

    /// Call after production, before resolution.
    pub fn before_resolution(&mut self, m: &Match) {
        let (o, u, f) = &mut self.after_production;
        o.clear();
        o.extend_from_slice(m.owners());
        u.clear();
        u.extend_from_slice(m.all_units());
        f.clear();
        f.extend_from_slice(m.all_fortifications());
    }

    /// Call after resolution with the answers as received.
    pub fn after_resolution(&mut self, m: &Match, answers: Vec<Answer>, report: &RoundReport) {
        let (o, u, f) = &self.after_production;
        let mut changes = Vec::new();
        for i in 0..o.len() {
            let (no, nu, nf) = (m.owners()[i], m.all_units()[i], m.all_fortifications()[i]);
            if no != o[i] || nu.to_bits() != u[i].to_bits() || nf.to_bits() != f[i].to_bits() {
                changes.push(CellChange(i as u32, owner_code(no), nu, nf));
            }
        }
        let seats = m.seats() as u8;
        let turn = Turn {
            round: report.round,
            answers,
            discarded: report
                .discarded
                .iter()
                .map(|d| Discarded { seat: d.seat, index: d.index, reason: d.reason.code().to_string() })
                .collect(),
            cells: (0..seats).map(|s| m.cell_count(s)).collect(),
            units: (0..seats).map(|s| m.unit_total(s)).collect(),
            changes,
        };
        // An interrupted match ends with the state at the end of its last round, not with the
        // production of the round it stopped in.
        self.snapshot_end(m);
        match &mut self.stream {
            Some(s) => {
                if s.error.is_none() {
                    s.error = s.writer.turn(&turn).err().map(|e| e.to_string());
                }
            }
            None => self.turns.push(turn),
        }
    }

    fn document(&self, m: &Match, names: &[String], result: MatchResult, turns: Vec<Turn>) -> Replay {
        let map = m.map();
        Replay {
            format: REPLAY_FORMAT.to_string(),
            version: REPLAY_VERSION,
            engine: format!("gbely-engine {}", env!("CARGO_PKG_VERSION")),
            map: MapRecord::of(map),
            mode: m.mode().wire().to_string(),
            rounds: m.rounds(),
            seats: map
                .seats()
                .iter()
                .enumerate()
                .map(|(k, s)| SeatRecord {
                    seat: k as u8,
                    name: names[k].clone(),
                    role: s.role.wire().to_string(),
                    base: map.grid().id(s.base),
                })
                .collect(),
            turns,
            final_state: FinalState {
                owner: m.owners().iter().map(|&o| owner_code(o)).collect(),
                units: m.all_units().to_vec(),
                fortification: m.all_fortifications().to_vec(),
            },
            result,
        }
    }

    /// The replay recorded in memory.
    pub fn finish(mut self, m: &Match, names: &[String], result: MatchResult) -> Replay {
        let interrupted = result.ended_by == EndReason::Interrupted.wire();
        let turns = std::mem::take(&mut self.turns);
        let mut doc = self.document(m, names, result, turns);
        if interrupted {
            doc.final_state = self.end_state;
        }
        doc
    }

    /// The replay of the rounds recorded in memory so far, the recorder going on.
    pub fn replay_so_far(&self, m: &Match, names: &[String], result: MatchResult) -> Replay {
        self.document(m, names, result, self.turns.clone())
    }

    /// Ends a streamed replay: the final state (the state after the last round recorded when the
    /// match was interrupted) and the result. Returns the file's size, or what went wrong.
    pub(crate) fn finish_stream(
        mut self,
        m: &Match,
        result: &MatchResult,
        interrupted: bool,
    ) -> Option<Result<u64, String>> {
        let mut s = self.stream.take()?;
        if let Some(e) = s.error {
            return Some(Err(e));
        }
        if !interrupted {
            self.snapshot_end(m);
        }
        Some(s.writer.finish(&self.end_state, result).map_err(|e| e.to_string()))
    }
}

impl Default for Recorder {
    fn default() -> Self {
        Recorder::new()
    }
}

/// Owner as written in replays: the seat, or -1 for neutral.
pub fn owner_code(o: u8) -> i8 {
    if o == NEUTRAL {
        -1
    } else {
        o as i8
    }
}

/// The result section of a replay.
pub fn match_result(m: &Match, names: &[String]) -> MatchResult {
    MatchResult {
        last_round: m.round(),
        ended_by: m.end_reason().map_or("unfinished", |e| e.wire()).to_string(),
        council_fell: m.council_fell(),
        sides: m
            .outcome()
            .into_iter()
            .map(|o| SideResult {
                seat: o.seat,
                name: names[o.seat as usize].clone(),
                cells: o.cells,
                score: o.score,
                tiebreak_round: o.tiebreak_round,
                violations: o.violations,
                disqualified: o.disqualified.is_some(),
                eliminated: o.eliminated,
            })
            .collect(),
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
