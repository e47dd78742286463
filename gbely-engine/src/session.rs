//! A match driven step by step: the one loop every runner is built on.
//!
//! Like OpenSpiel's `State`, a [`Session`] owns the pure [`Match`], an optional replay recorder
//! (off unless asked) and the tallies of discarded commands and violations. A round is
//! `observe` → `submit` (each active seat, in any order) → [`Session::advance`]; the match is over
//! when [`Session::is_over`] says so, and [`Session::finish`] gives the [`MatchRecord`].
//!
//! Everything that plays rounds is a loop over it: [`crate::game::play`] (agents in-process and
//! in processes), replay re-simulation and verification ([`crate::replays::resimulate`]), and the
//! Python step API (`gbely.Match`). So all of them treat every answer the same way:
//!
//! * commands (typed, or the raw JSON list as received, each item parsed on its own);
//! * a violation (SPEC §8): the round's commands are lost, the fourth one disqualifies;
//! * **nothing submitted** for an active seat: it plays no commands this round (not a violation —
//!   whoever drives the session decides what a missing answer is, as the process runner does by
//!   turning a silent agent into a timeout).

use std::collections::BTreeMap;
use std::sync::Arc;

use gbely_rules::{Cell, Command, DiscardReason, Grid, Neighbours, Notes, Observation, ViolationKind};
use gbely_world::replay::{Answer, CompactCommands, MatchResult, Violation};
use gbely_world::{Map, Replay};
use serde_json::Value;

use crate::recorder::{match_result, side_result, stopped_result, RawItems, Recorder, ReplayWriter};
use crate::runner::player::{AgentStats, Observed, PlayerAnswer};
use crate::sim::{EndReason, Match, MatchConfig, MatchState, Order, RoundReport, SideInput, SideOutcome};
use crate::text::printable;
use crate::wire::{parse_command, parse_commands};

/// Discarded commands of one seat by reason.
pub type DiscardDigest = BTreeMap<DiscardReason, u32>;

/// A round just advanced as its replay records it ([`Session::round_record`]): what an observer
/// shows of it (the live page) is then what the replay's page shows.
#[derive(Clone, Debug)]
pub struct RoundRecord<'a> {
    /// The round's turn: each seat's answer (a flood cut as the replay cuts it), the discarded
    /// commands, the notes within the replay's budget.
    pub turn: &'a gbely_world::replay::Turn,
    /// Per seat, the commands it played, in its answer's order: those of a built-in agent, which
    /// the turn leaves to readers to regenerate ([`Answer::Regen`]).
    pub played: Vec<&'a [crate::sim::Order]>,
}

/// How many of a seat's slowest answers a [`MatchRecord`] keeps.
pub const SLOWEST_KEPT: usize = 3;

/// Everything a played match leaves behind ([`Session::finish`]).
#[derive(Debug)]
pub struct MatchRecord {
    /// The players' names, per seat.
    pub names: Vec<String>,
    /// Each seat's standing at the end (cells, score, tie-break, violations; SPEC §10).
    pub outcome: Vec<SideOutcome>,
    /// The last round played; when interrupted, the round that was stopped (not played).
    pub last_round: u32,
    /// How the match ended ([`EndReason::Interrupted`] when stopped before its end).
    pub end_reason: EndReason,
    /// The round in which the Council's seat lost its last cell (the blitz record), if it did.
    pub council_fell: Option<u32>,
    /// Discarded commands per seat, counted by reason.
    pub discards: Vec<DiscardDigest>,
    /// Violations per seat: (round, kind, detail).
    pub violations: Vec<Vec<(u32, ViolationKind, String)>>,
    /// Timings of agent processes, per seat.
    pub agents: Vec<Option<AgentStats>>,
    /// Per seat, its slowest answers as (round, milliseconds), slowest first (at most
    /// [`SLOWEST_KEPT`]); empty for seats not timed.
    pub slowest: Vec<Vec<(u32, u32)>>,
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

    /// Whether the match was stopped from outside before its end ([`EndReason::Interrupted`]).
    pub fn interrupted(&self) -> bool {
        self.end_reason == EndReason::Interrupted
    }

    /// "150 rounds played (full length)", "38 rounds played (ended by elimination)" or
    /// "12 rounds played (INTERRUPTED in round 12)".
    pub fn how_it_ended(&self) -> String {
        let how = match self.end_reason {
            EndReason::Rounds => "full length".to_string(),
            EndReason::Interrupted => format!("INTERRUPTED in round {}", self.last_round),
            e => format!("ended by {}", e.wire().replace('_', " ")),
        };
        format!("{} rounds played ({how})", self.rounds_played())
    }

    /// Seat `seat`'s discarded commands by reason: "37 discarded: 30 not enough ready units,
    /// 7 target not adjacent", or "no command discarded".
    pub fn discard_line(&self, seat: usize) -> String {
        let parts = self.discards_by_count(seat);
        let total: u32 = parts.iter().map(|(n, _)| n).sum();
        if total == 0 {
            return "no command discarded".into();
        }
        let list: Vec<String> = parts.iter().map(|(n, r)| format!("{n} {r}")).collect();
        format!("{total} discarded: {}", list.join(", "))
    }

    /// Seat `seat`'s discarded commands by reason, the most frequent first (then in the
    /// reasons' order).
    pub fn discards_by_count(&self, seat: usize) -> Vec<(u32, DiscardReason)> {
        let mut parts: Vec<(u32, DiscardReason)> = self.discards[seat].iter().map(|(r, n)| (*n, *r)).collect();
        parts.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        parts
    }

    /// The body of a match's summary, each line indented by two spaces: the table of sides
    /// (share, cells, tie-break, violations), whether the Council's seat fell, and for each seat
    /// that `listed` names its discards, violations and disqualification.
    pub fn write_sides(&self, out: &mut dyn std::fmt::Write, listed: &dyn Fn(usize) -> bool) -> std::fmt::Result {
        let share = |score: Option<f64>| score.map_or("disqualified".into(), |s| format!("{s:.2} %"));
        // Names and details come from agents: shown escaped (`crate::text::printable`).
        let names: Vec<_> = self.names.iter().map(|n| printable(n)).collect();
        let width = names.iter().map(|n| n.chars().count()).max().unwrap_or(8).max(8);
        writeln!(out, "  {:<width$}  {:>12}  {:>6}  {:>10}  violations", "", "share", "cells", "tie-break")?;
        for o in &self.outcome {
            let s = o.seat as usize;
            writeln!(
                out,
                "  {:<width$}  {:>12}  {:>6}  {:>10}  {}",
                names[s],
                share(o.score),
                o.cells,
                o.tiebreak_round.map_or("-".into(), |r| format!("round {r}")),
                self.violations[s].len()
            )?;
        }
        match self.council_fell {
            Some(r) => writeln!(out, "  the Council's seat fell in round {r}")?,
            None => writeln!(out, "  the Council's seat did not fall")?,
        }
        for (s, name) in names.iter().enumerate().filter(|(s, _)| listed(*s)) {
            writeln!(out, "  {name}: {}", self.discard_line(s))?;
            for (round, kind, detail) in &self.violations[s] {
                writeln!(out, "    violation in round {round}: {} — {}", kind.wire(), printable(detail))?;
            }
            if let Some(o) = self.outcome.get(s).and_then(|o| o.disqualified) {
                let cause = self.violations[s].last().map_or(String::new(), |(_, _, d)| format!(": {}", printable(d)));
                writeln!(out, "    disqualified in round {o} (the fourth violation{cause})")?;
            }
        }
        Ok(())
    }

    /// The result of the match, as the replay writes it.
    pub fn result(&self) -> MatchResult {
        MatchResult {
            last_round: self.last_round,
            ended_by: self.end_reason,
            council_fell: self.council_fell,
            sides: self.outcome.iter().map(|o| side_result(o, &self.names[o.seat as usize])).collect(),
        }
    }
}

/// One match, step by step. See the module documentation.
#[derive(Debug)]
pub struct Session {
    m: Match,
    names: Vec<String>,
    /// What each seat submitted this round.
    submitted: Vec<Option<PlayerAnswer>>,
    inputs: Vec<SideInput>,
    report: RoundReport,
    recorder: Option<Recorder>,
    discards: Vec<DiscardDigest>,
    violations: Vec<Vec<(u32, ViolationKind, String)>>,
    /// Per seat, a built-in agent whose commands replays regenerate instead of storing.
    builtins: Vec<Option<String>>,
    /// Per seat, its notes on this round (for the replay only).
    notes: Vec<Option<Notes>>,
    /// Per seat, the milliseconds its answer this round took (for the replay).
    answer_ms: Vec<Option<u32>>,
    /// Per seat, its slowest answers so far ([`MatchRecord::slowest`]).
    slowest: Vec<Vec<(u32, u32)>>,
    /// Where the match was forked from, for its replay.
    fork: Option<gbely_world::replay::ForkRecord>,
}

impl Session {
    /// A session at the start of round 0; `names` has one entry per seat of the map.
    pub fn new(map: Arc<Map>, config: MatchConfig, names: Vec<String>) -> Session {
        let seats = map.seats().len();
        assert_eq!(names.len(), seats, "one name per seat");
        Session {
            m: Match::new(map, config),
            names,
            submitted: vec![None; seats],
            inputs: vec![SideInput::Nothing; seats],
            report: RoundReport::default(),
            recorder: None,
            discards: vec![DiscardDigest::new(); seats],
            violations: vec![Vec::new(); seats],
            builtins: vec![None; seats],
            notes: vec![None; seats],
            answer_ms: vec![None; seats],
            slowest: vec![Vec::new(); seats],
            fork: None,
        }
    }

    /// Names the seats' players anew (a fork's, `replays::session_after`); one name per seat.
    /// Call before recording starts.
    pub fn set_names(&mut self, names: Vec<String>) {
        assert_eq!(names.len(), self.names.len(), "one name per seat");
        self.names = names;
    }

    /// Marks the match as a fork of another (its replay says so, [`gbely_world::Replay::fork`]).
    /// Call before recording starts.
    pub fn set_fork(&mut self, fork: gbely_world::replay::ForkRecord) {
        self.fork = Some(fork);
    }

    /// Marks `seat` as played by the deterministic built-in agent `name` (see
    /// [`crate::builtins::builtin_agent`]): the replay records that name, and its commands are
    /// regenerated on reading rather than stored. Call before recording starts.
    pub fn set_builtin(&mut self, seat: u8, name: Option<&str>) {
        if let Some(b) = self.builtins.get_mut(seat as usize) {
            *b = name.map(str::to_string);
        }
    }

    /// Records the replay in memory ([`MatchRecord::replay`]). Call before the first round.
    pub fn record(&mut self) {
        let mut r = Recorder::new();
        r.set_builtins(&self.builtins);
        r.set_fork(self.fork.clone());
        r.start(&self.m);
        self.recorder = Some(r);
    }

    /// Records in memory with every round's cell changes (what readers of a version 2 file
    /// rebuild). Call before the first round.
    pub fn record_with_changes(&mut self) {
        self.record();
        if let Some(r) = self.recorder.as_mut() {
            r.keep_changes();
        }
    }

    /// Streams the replay to `writer` as rounds finish. Call before the first round.
    pub fn record_to(&mut self, writer: ReplayWriter) {
        self.recorder = Some(Recorder::streaming(writer, &self.m, &self.names, &self.builtins, self.fork.clone()));
    }

    /// Keeps each round's record for an observer ([`Session::round_record`]) without recording
    /// the match when it is not recorded otherwise (a live page of a match played without a
    /// replay). Call before the first round.
    pub fn keep_rounds(&mut self) {
        if self.recorder.is_none() {
            let mut r = Recorder::observing(&self.builtins);
            r.start(&self.m);
            self.recorder = Some(r);
        }
    }

    /// The last round advanced as its replay records it, when the session records or keeps its
    /// rounds ([`Session::keep_rounds`]); `None` before the first round.
    pub fn round_record(&self) -> Option<RoundRecord<'_>> {
        let turn = self.recorder.as_ref()?.last_turn()?;
        let played = self
            .inputs
            .iter()
            .map(|i| match i {
                SideInput::Orders(orders) => orders.as_slice(),
                SideInput::Violation | SideInput::Nothing => &[],
            })
            .collect();
        Some(RoundRecord { turn, played })
    }

    /// The state of the match (read only: it changes through `submit` and `advance`).
    pub fn state(&self) -> &Match {
        &self.m
    }

    /// The players' names, per seat.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The map's geometry (cells numbered by the map's width).
    pub fn grid(&self) -> &Grid {
        self.m.map().grid()
    }

    /// Number of seats.
    pub fn seats(&self) -> usize {
        self.m.seats()
    }

    /// The round being played (the last one played once the match is over).
    pub fn round(&self) -> u32 {
        self.m.round()
    }

    /// Whether the match has ended: no more rounds to play.
    pub fn is_over(&self) -> bool {
        self.m.is_over()
    }

    /// Whether a seat still plays this round (neither eliminated nor disqualified).
    pub fn is_active(&self, seat: u8) -> bool {
        self.m.is_active(seat)
    }

    /// What happened in the last round advanced.
    pub fn report(&self) -> &RoundReport {
        &self.report
    }

    /// The observation of SPEC §5 for `seat` this round, into a reused buffer.
    pub fn observe_into(&mut self, seat: u8, obs: &mut Observation) {
        self.m.observe_into(seat, obs);
    }

    /// The observation of SPEC §5 for `seat` this round.
    pub fn observe(&mut self, seat: u8) -> Observation {
        self.m.observe(seat)
    }

    /// Hands in `seat`'s answer for this round (a later call replaces an earlier one). Answers of
    /// seats that are out of the game are ignored; [`PlayerAnswer::Interrupted`] counts as
    /// nothing submitted.
    pub fn submit(&mut self, seat: u8, answer: PlayerAnswer) {
        if let Some(slot) = self.submitted.get_mut(seat as usize) {
            *slot = Some(answer);
        }
    }

    /// Hands in `seat`'s notes on this round (see [`Notes`]): recorded in the replay within
    /// their bounds, never seen by the rules. A later call replaces an earlier one.
    pub fn note(&mut self, seat: u8, notes: Notes) {
        if let Some(slot) = self.notes.get_mut(seat as usize) {
            *slot = Some(notes.bounded());
        }
    }

    /// Hands in how long `seat`'s answer this round took, in seconds (recorded in the replay in
    /// whole milliseconds, [`gbely_world::replay::Turn::answer_ms`]; never seen by the rules).
    pub fn time(&mut self, seat: u8, seconds: f64) {
        let ms = (seconds.max(0.0) * 1000.0).round().min(u32::MAX as f64) as u32;
        if let (Some(slot), Some(slowest)) =
            (self.answer_ms.get_mut(seat as usize), self.slowest.get_mut(seat as usize))
        {
            *slot = Some(ms);
            // Slowest first; of equal times the earlier round.
            let at = slowest.iter().position(|&(_, t)| t < ms).unwrap_or(slowest.len());
            if at < SLOWEST_KEPT {
                slowest.insert(at, (self.m.round(), ms));
                slowest.truncate(SLOWEST_KEPT);
            }
        }
    }

    /// Resolves the round with what was submitted (SPEC §4, §6) and records it.
    ///
    /// # Panics
    /// When the match is over.
    pub fn advance(&mut self) -> &RoundReport {
        assert!(!self.m.is_over(), "the match is over: nothing to advance");
        self.m.start_round();
        if let Some(r) = self.recorder.as_mut() {
            r.before_resolution(&self.m);
        }
        // The map, not a copy of its grid (a copy per round was a 72 kB memcpy at 60×60).
        let map = Arc::clone(self.m.map());
        let grid = map.grid();
        let recording = self.recorder.is_some();
        // What each seat's record will be; a seat's commands are recorded after the round is
        // resolved, when it is known which of them were discarded (see `Recorder::compact`).
        let mut answers: Vec<Record> = Vec::with_capacity(if recording { self.seats() } else { 0 });
        let round = self.m.round();
        for s in 0..self.seats() {
            let submitted = self.submitted[s].take();
            if !self.m.is_active(s as u8) {
                self.inputs[s] = SideInput::Nothing;
                if recording {
                    answers.push(Record::Done(Answer::Out));
                }
                continue;
            }
            let builtin = self.builtins[s].is_some();
            let (input, answer) = match submitted {
                Some(PlayerAnswer::Commands(cmds)) => {
                    let answer =
                        recording.then(|| if builtin { Record::Done(Answer::Regen) } else { Record::Commands(None) });
                    (SideInput::Orders(cmds.into_iter().map(Ok).collect()), answer)
                }
                Some(PlayerAnswer::Raw(list)) => {
                    let orders = parse_commands(&list, grid);
                    (SideInput::Orders(orders), recording.then_some(Record::Commands(Some(list))))
                }
                Some(PlayerAnswer::Read(read)) => {
                    // The items a flood's reader counted rather than held are discards too.
                    for (reason, n) in &read.left_out {
                        *self.discards[s].entry(*reason).or_default() += n;
                    }
                    let record = recording.then(|| Record::Read(read.discarded_items, read.left_out));
                    (SideInput::Orders(read.orders), record)
                }
                Some(PlayerAnswer::Violation { kind, detail }) => {
                    let answer =
                        recording.then(|| Record::Done(Answer::Violation(Violation { kind, detail: detail.clone() })));
                    self.violations[s].push((round, kind, detail));
                    (SideInput::Violation, answer)
                }
                Some(PlayerAnswer::Replayed(a)) => {
                    let input = match &a {
                        Answer::Commands(list) => SideInput::Orders(parse_commands(list, grid)),
                        Answer::Compact(c) => {
                            // What an answer's record left out after its cut still counts.
                            for (reason, n) in c.cut.iter().flat_map(|cut| &cut.left_out) {
                                *self.discards[s].entry(*reason).or_default() += n;
                            }
                            SideInput::Orders(orders_of(c, grid))
                        }
                        Answer::Violation(v) => {
                            self.violations[s].push((round, v.kind, v.detail.clone()));
                            SideInput::Violation
                        }
                        Answer::Out | Answer::Regen => SideInput::Orders(Vec::new()),
                    };
                    // Recorded in this version's form (a fork of an older replay).
                    let a = match a {
                        Answer::Compact(mut c) => {
                            c.form = gbely_world::replay::CellsForm::of_version(gbely_world::replay::REPLAY_VERSION);
                            Answer::Compact(c)
                        }
                        a => a,
                    };
                    (input, recording.then_some(Record::Done(a)))
                }
                Some(PlayerAnswer::Interrupted) | None => {
                    let answer = recording.then(|| {
                        Record::Done(if builtin { Answer::Regen } else { Answer::Compact(Default::default()) })
                    });
                    (SideInput::Orders(Vec::new()), answer)
                }
            };
            self.inputs[s] = input;
            answers.extend(answer);
        }
        self.m.resolve_round(&self.inputs, &mut self.report);
        for d in &self.report.discarded {
            *self.discards[d.seat as usize].entry(d.reason).or_default() += 1;
        }
        if let Some(r) = self.recorder.as_mut() {
            let mut discarded = vec![Vec::new(); answers.len()];
            for d in &self.report.discarded {
                discarded[d.seat as usize].push((d.index, d.reason));
            }
            let answers = answers
                .into_iter()
                .enumerate()
                .map(|(s, record)| match record {
                    Record::Done(a) => a,
                    Record::Commands(raw) => {
                        let orders = match &self.inputs[s] {
                            SideInput::Orders(orders) => orders.as_slice(),
                            _ => &[],
                        };
                        let raw = raw.as_deref().map_or(RawItems::None, RawItems::ByIndex);
                        Answer::Compact(r.compact(s, orders, raw, &discarded[s], &BTreeMap::new()))
                    }
                    Record::Read(items, left_out) => {
                        let orders = match &self.inputs[s] {
                            SideInput::Orders(orders) => orders.as_slice(),
                            _ => &[],
                        };
                        Answer::Compact(r.compact(s, orders, RawItems::OfDiscarded(&items), &discarded[s], &left_out))
                    }
                })
                .collect();
            let notes = self.notes.iter_mut().enumerate().filter_map(|(s, n)| Some((s as u8, n.take()?))).collect();
            let answer_ms = self.answer_ms.iter_mut().map(Option::take).collect();
            r.after_resolution(&self.m, answers, notes, answer_ms, &self.report);
        }
        &self.report
    }

    /// The replay of the rounds played so far, when recording in memory.
    pub fn replay_so_far(&self) -> Option<Replay> {
        let r = self.recorder.as_ref().filter(|r| !r.is_observing())?;
        Some(r.replay_so_far(&self.m, &self.names, match_result(&self.m, &self.names)))
    }

    /// Ends the session. A match that is not over is recorded as stopped before its end
    /// (`ended_by: interrupted`): the replay ends with the state after the last round played.
    pub fn finish(self) -> MatchRecord {
        let interrupted = !self.m.is_over();
        let result = stopped_result(&self.m, &self.names);
        let end_reason = result.ended_by;
        let m = &self.m;
        let (replay, replay_written) = match self.recorder {
            Some(r) if r.is_observing() => (None, None),
            Some(r) if r.is_streaming() => (None, r.finish_stream(m, &result, interrupted)),
            Some(r) => (Some(r.finish(m, &self.names, result)), None),
            None => (None, None),
        };
        MatchRecord {
            outcome: m.outcome(),
            last_round: m.round(),
            end_reason,
            council_fell: m.council_fell(),
            agents: vec![None; self.names.len()],
            slowest: self.slowest,
            names: self.names,
            discards: self.discards,
            violations: self.violations,
            replay,
            replay_written,
        }
    }

    /// A copy of the session (for search: try a line of play on the copy), or `None` when it
    /// records a replay or keeps its rounds (a recording belongs to one match). Answers already
    /// submitted this round are copied too.
    pub fn try_clone(&self) -> Option<Session> {
        if self.recorder.is_some() {
            return None;
        }
        Some(Session {
            m: self.m.clone(),
            names: self.names.clone(),
            submitted: self.submitted.clone(),
            inputs: self.inputs.clone(),
            report: self.report.clone(),
            recorder: None,
            discards: self.discards.clone(),
            violations: self.violations.clone(),
            builtins: self.builtins.clone(),
            notes: self.notes.clone(),
            answer_ms: self.answer_ms.clone(),
            slowest: self.slowest.clone(),
            fork: self.fork.clone(),
        })
    }

    /// The session between rounds, to restore with [`Session::restore`] (pickling); `None` when it
    /// records a replay or keeps its rounds. Answers submitted for the round not yet advanced are
    /// not part of it.
    pub fn snapshot(&self) -> Option<SessionState> {
        if self.recorder.is_some() {
            return None;
        }
        Some(SessionState {
            state: self.m.snapshot(),
            names: self.names.clone(),
            builtins: self.builtins.clone(),
            discards: self
                .discards
                .iter()
                .map(|d| d.iter().map(|(r, n)| (r.code().to_string(), *n)).collect())
                .collect(),
            violations: self.violations.clone(),
        })
    }

    /// The session of a [`SessionState`] on its map (not recording); a state that does not fit
    /// the map is refused with what is wrong.
    pub fn restore(map: Arc<Map>, s: SessionState) -> Result<Session, String> {
        let seats = map.seats().len();
        if s.names.len() != seats
            || s.builtins.len() != seats
            || s.discards.len() != seats
            || s.violations.len() != seats
        {
            return Err(format!("the state's seats do not match the map's {seats}"));
        }
        let m = Match::restore(map, s.state)?;
        let mut discards = vec![DiscardDigest::new(); seats];
        for (d, list) in discards.iter_mut().zip(s.discards) {
            for (code, n) in list {
                let reason = gbely_rules::DiscardReason::ALL
                    .into_iter()
                    .find(|r| r.code() == code)
                    .ok_or_else(|| format!("unknown discard reason `{code}`"))?;
                d.insert(reason, n);
            }
        }
        Ok(Session {
            m,
            names: s.names,
            submitted: vec![None; seats],
            inputs: vec![SideInput::Nothing; seats],
            report: RoundReport::default(),
            recorder: None,
            discards,
            violations: s.violations,
            builtins: s.builtins,
            notes: vec![None; seats],
            answer_ms: vec![None; seats],
            slowest: vec![Vec::new(); seats],
            fork: None,
        })
    }

    /// Whether `seat` is played by a built-in agent, and which.
    pub fn builtin(&self, seat: u8) -> Option<&str> {
        self.builtins.get(seat as usize)?.as_deref()
    }

    /// Ends the session and hands back the match itself (for re-simulation).
    pub fn into_state(self) -> Match {
        self.m
    }
}

/// The summary the command line prints: who played, how it ended, the table of sides, and the
/// discards and violations of every seat that had any.
///
/// ```
/// use std::sync::Arc;
/// use gbely_engine::game::{play, PlayOptions};
/// use gbely_engine::runner::player::{builtin_player, Player};
///
/// let map = Arc::new(gbely_world::reference_map());
/// let (mut a, mut b) = (builtin_player("template-rs", "template-rs").unwrap(), builtin_player("council", "council").unwrap());
/// let mut players: [&mut dyn Player; 2] = [a.as_mut(), b.as_mut()];
/// let opts = PlayOptions { config: gbely_engine::MatchConfig { rounds: 10 }, record: false };
/// let summary = play(map, &mut players, opts, &mut ()).to_string();
/// assert!(summary.starts_with("template-rs vs council: 10 rounds played (full length)\n"));
/// assert!(summary.contains("the Council's seat did not fall"));
/// ```
/// The players' loop observes through the session ([`Player::observe_and_begin`]).
///
/// [`Player::observe_and_begin`]: crate::runner::player::Player::observe_and_begin
impl Observed for Session {
    fn map(&self) -> &Arc<Map> {
        self.m.map()
    }
    fn observe_into(&mut self, seat: u8, obs: &mut Observation) {
        self.m.observe_into(seat, obs);
    }
    fn observe_renumbered_into(&mut self, seat: u8, obs: &mut Observation, table: &[(Cell, Neighbours)]) {
        self.m.observe_numbered_into(seat, obs, |c| table[c.index()]);
    }
}

impl std::fmt::Display for MatchRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "{}: {}", self.names.join(" vs "), self.how_it_ended())?;
        self.write_sides(f, &|s| !self.discards[s].is_empty() || !self.violations[s].is_empty())
    }
}

/// A [`Session`] between rounds, serializable (see [`Session::snapshot`]).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SessionState {
    /// The match's state.
    pub state: MatchState,
    /// The players' names, per seat.
    pub names: Vec<String>,
    /// Per seat, the built-in agent whose commands replays regenerate, if it is one.
    pub builtins: Vec<Option<String>>,
    /// Per seat, discarded commands by reason code.
    pub discards: Vec<Vec<(String, u32)>>,
    /// Per seat, its violations: round, kind, detail.
    pub violations: Vec<Vec<(u32, ViolationKind, String)>>,
}

/// A seat's answer on its way into the replay.
enum Record {
    Done(Answer),
    /// Commands, recorded once the round is resolved; with the list as received when it came as
    /// JSON (its unparsable items are kept as they were).
    Commands(Option<Vec<Value>>),
    /// Commands read from an answer line: the items of its discarded commands, in order, and
    /// the discarded items it left out.
    Read(Vec<Value>, BTreeMap<DiscardReason, u32>),
}

/// The orders of a compact command list, as the engine resolves them: commands as they were
/// parsed, raw items parsed again (giving the same discard reasons).
pub fn orders_of(c: &CompactCommands, grid: &gbely_rules::Grid) -> Vec<Order> {
    let (mut cells, mut amounts, mut raw) = (c.cells.iter(), c.amounts.iter(), c.raw.iter());
    let mut cell = || Cell(cells.next().copied().unwrap_or(u32::MAX));
    let mut out = Vec::with_capacity(c.kinds.len());
    for k in c.kinds.chars() {
        let order = match k {
            'M' => {
                let (from, to) = (cell(), cell());
                Ok(Command::Move { from, to, amount: amounts.next().copied().unwrap_or(0.0) })
            }
            'A' => {
                let (from, to) = (cell(), cell());
                Ok(Command::Attack { from, to, amount: amounts.next().copied().unwrap_or(0.0) })
            }
            'F' => {
                let at = cell();
                Ok(Command::Fortify { cell: at, amount: amounts.next().copied().unwrap_or(0.0) })
            }
            _ => parse_command(raw.next().unwrap_or(&Value::Null), grid),
        };
        out.push(order);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{play, PlayOptions};
    use crate::runner::player::{DecidePlayer, Player};

    /// Notes where it is, and on its base, every round.
    #[derive(Default)]
    struct Chatty {
        round: u32,
        base: Cell,
    }

    impl gbely_rules::Decide for Chatty {
        fn decide(&mut self, obs: &Observation) -> Vec<Command> {
            (self.round, self.base) = (obs.round, obs.base);
            Vec::new()
        }
        fn notes(&mut self) -> Option<Notes> {
            let mut n = Notes::text(format!("round {}", self.round));
            n.cells.push((self.base, "home".into()));
            n.draw.push(gbely_rules::Drawing { shape: gbely_rules::Shape::Dot(self.base), color: None });
            Some(n)
        }
    }

    #[test]
    fn an_agents_notes_are_in_the_replay_on_the_maps_cells() {
        let map = Arc::new(gbely_world::generate_duel("notes", 24, 18).unwrap());
        let base = map.seats()[0].base;
        let mut a = DecidePlayer::new("chatty", Chatty::default());
        let mut b = DecidePlayer::council("council");
        let mut players: [&mut dyn Player; 2] = [&mut a, &mut b];
        let opts = PlayOptions { config: MatchConfig { rounds: 5 }, record: true };
        let replay = play(map, &mut players, opts, &mut ()).replay.unwrap();
        for (r, t) in replay.turns.iter().enumerate() {
            // The agent numbered its base on its own grid; the replay has the map's cell, in its
            // cell notes and its drawings.
            let want = gbely_world::replay::SeatNotes {
                seat: 0,
                text: format!("round {r}"),
                cells: vec![(base.0, "home".into())],
                draw: vec![gbely_world::replay::Drawn { dot: Some(base.0), ..Default::default() }],
            };
            assert_eq!(t.notes, [want]);
        }
        let text = serde_json::to_string(&replay).unwrap();
        assert!(text.contains(r#""notes":[{"seat":0,"text":"round 0","cells":[["#), "{}", &text[..200]);
        assert_eq!(gbely_world::Replay::from_json(&text).unwrap(), replay, "notes read back");
    }

    /// Notes at their bounds: 2 000 characters and 64 cell notes of 200, 2 000 + 64 × (200 + 8)
    /// = 15 312 bytes against the allowance.
    fn full_notes() -> Notes {
        let cells = (0..64).map(|k| (Cell(k), "c".repeat(200))).collect();
        Notes { text: "n".repeat(Notes::MAX_TEXT), cells, draw: Vec::new() }
    }

    fn noted_match(rounds: u32, write: impl Fn(u32) -> Option<Notes>) -> Vec<Vec<gbely_world::replay::SeatNotes>> {
        let map = Arc::new(gbely_world::generate_duel("notes", 24, 18).unwrap());
        let mut s = Session::new(map, MatchConfig { rounds }, vec!["a".into(), "b".into()]);
        s.record();
        while !s.is_over() {
            if let Some(n) = write(s.round()) {
                s.note(0, n);
            }
            s.advance();
        }
        s.finish().replay.unwrap().turns.into_iter().map(|t| t.notes).collect()
    }

    #[test]
    fn drawings_are_in_the_replays_notes_and_a_bad_one_is_refused() {
        use gbely_rules::{Drawing, Shape};
        let draw = vec![
            Drawing { shape: Shape::Dot(Cell(5)), color: Some([255, 0, 255]) },
            Drawing { shape: Shape::Line(Cell(5), Cell(30)), color: None },
            Drawing { shape: Shape::Label(Cell(30), "go".into()), color: None },
        ];
        let turns = noted_match(2, |_| Some(Notes { draw: draw.clone(), ..Notes::default() }));
        let want = [
            gbely_world::replay::Drawn { dot: Some(5), color: "#ff00ff".into(), ..Default::default() },
            gbely_world::replay::Drawn { line: Some([5, 30]), ..Default::default() },
            gbely_world::replay::Drawn { label: Some(30), text: "go".into(), ..Default::default() },
        ];
        assert!(turns.iter().all(|t| t.len() == 1 && t[0].draw == want && t[0].text.is_empty()), "{turns:?}");
        let map = Arc::new(gbely_world::generate_duel("notes", 24, 18).unwrap());
        let mut s = Session::new(map, MatchConfig { rounds: 1 }, vec!["a".into(), "b".into()]);
        s.record();
        s.note(0, Notes { draw, ..Notes::default() });
        s.advance();
        let text = serde_json::to_string(&s.finish().replay.unwrap()).unwrap();
        assert!(
            text.contains(r##""draw":[{"dot":5,"color":"#ff00ff"},{"line":[5,30]},{"label":30,"text":"go"}]"##),
            "{text}"
        );
        gbely_world::Replay::from_json(&text).expect("read back");
        for (from, to, why) in [
            (r#""dot":5"#, r#""dot":432"#, "a drawing on cell #432, which is not on the 432-cell map"),
            (r##""#ff00ff""##, r#""pink""#, "a drawing's colour \"pink\" is not #rrggbb"),
            (r#"{"line":[5,30]}"#, r#"{"line":[5,30],"dot":1}"#, "a drawing is not one of dot, fill, line and label"),
            (r#""text":"go""#, r#""text":"seventeen letters""#, "a drawing's text is over its bound"),
        ] {
            let err = gbely_world::Replay::from_json(&text.replacen(from, to, 1)).unwrap_err().to_string();
            assert!(err.contains(why), "{err}");
        }
    }

    /// Issue 35: 64 KiB a seat a match ran out at round 46 for an agent writing 1.5 KB a round.
    #[test]
    fn an_agent_writing_1_5_kb_of_notes_a_round_keeps_them_in_every_round_of_150() {
        let text = "x".repeat(1536);
        let turns = noted_match(150, |_| Some(Notes::text(text.clone())));
        assert_eq!(turns.len(), 150);
        for (r, notes) in turns.iter().enumerate() {
            assert_eq!(notes.len(), 1, "round {r}");
            assert_eq!(notes[0].text, text, "round {r}");
        }
    }

    #[test]
    fn a_round_over_the_allowance_is_cut_and_later_rounds_are_kept_again() {
        // Round 0: 15 312 of the 16 KiB at the start. Round 1: 16 384 + 2 048 = 18 432 allowed,
        // 3 120 left: cut, the mark (66 bytes) counted. Round 7: 16 384 + 7 × 2 048 = 30 720
        // allowed, 15 312 + 66 spent: 15 342 left, the round's 15 312 fit.
        let turns = noted_match(10, |r| [0, 1, 7].contains(&r).then(full_notes));
        let full = full_notes();
        let mark = "[notes cut: 15312 bytes, more than the 3120 left of 2 KiB a round]";
        assert_eq!(mark.len(), 66);
        for (r, notes) in turns.iter().enumerate() {
            match r {
                0 | 7 => {
                    assert_eq!(notes.len(), 1, "round {r}");
                    assert_eq!(notes[0].text, full.text);
                    assert_eq!(notes[0].cells.len(), 64);
                }
                1 => assert_eq!(notes.iter().map(|n| n.text.as_str()).collect::<Vec<_>>(), [mark]),
                _ => assert!(notes.is_empty(), "round {r}"),
            }
        }
    }

    #[test]
    fn a_seats_notes_over_the_matchs_budget_are_cut_with_one_mark() {
        // Notes at their bounds every round: kept when the allowance has grown enough (about one
        // round in seven), until the match's 1 MiB, at about round 500, then one mark.
        let turns = noted_match(800, |_| Some(full_notes()));
        let kept: Vec<(usize, &gbely_world::replay::SeatNotes)> =
            turns.iter().enumerate().flat_map(|(r, t)| t.iter().map(move |n| (r, n))).collect();
        let last = "[notes cut: the match's 1024 KiB for notes are used]";
        let ends: Vec<usize> = kept.iter().filter(|(_, n)| n.text == last).map(|(r, _)| *r).collect();
        assert_eq!(ends.len(), 1, "one mark");
        assert_eq!(kept.last().unwrap().0, ends[0], "nothing after it");
        // The allowance reaches 1 MiB less a round's notes at 16 384 + 2 048 r ≥ 1 048 576 − 15 312:
        // r ≥ 497.
        assert!((497..520).contains(&ends[0]), "{}", ends[0]);
        let bytes: usize =
            kept.iter().map(|(_, n)| n.text.len() + n.cells.iter().map(|c| c.1.len() + 8).sum::<usize>()).sum();
        let full = kept.iter().filter(|(_, n)| n.cells.len() == 64).count();
        assert!(bytes - last.len() <= 1 << 20 && bytes - last.len() + 15_312 > 1 << 20, "{bytes}");
        // At most ⌊1 MiB / 15 312⌋ = 68 rounds of notes at their bounds, fewer by the marks of the
        // rounds cut in between (about 430 of 66 bytes: 28 KiB, two rounds' worth).
        assert!((64..=68).contains(&full), "{full}");
    }
}
