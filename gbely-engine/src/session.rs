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

use std::sync::Arc;

use gbely_rules::{Grid, Observation};
use gbely_world::replay::{Answer, Violation};
use gbely_world::{Map, Replay};

use crate::game::{match_result, DiscardDigest, MatchRecord, PlayerAnswer, ViolationKind};
use crate::protocol::{command_to_value, parse_commands};
use crate::record::Recorder;
use crate::record::ReplayWriter;
use crate::sim::{EndReason, Match, MatchConfig, RoundReport, SideInput};

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
        }
    }

    /// Records the replay in memory ([`MatchRecord::replay`]). Call before the first round.
    pub fn record(&mut self) {
        let mut r = Recorder::new();
        r.start(&self.m);
        self.recorder = Some(r);
    }

    /// Streams the replay to `writer` as rounds finish. Call before the first round.
    pub fn record_to(&mut self, writer: ReplayWriter) {
        self.recorder = Some(Recorder::streaming(writer, &self.m, &self.names));
    }

    /// The state of the match (read only: it changes through `submit` and `advance`).
    pub fn state(&self) -> &Match {
        &self.m
    }

    pub fn names(&self) -> &[String] {
        &self.names
    }

    pub fn grid(&self) -> &Grid {
        self.m.map().grid()
    }

    pub fn seats(&self) -> usize {
        self.m.seats()
    }

    /// The round being played (the last one played once the match is over).
    pub fn round(&self) -> u32 {
        self.m.round()
    }

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
        let grid = self.m.map().grid().clone();
        let recording = self.recorder.is_some();
        let mut answers = Vec::with_capacity(if recording { self.seats() } else { 0 });
        let round = self.m.round();
        for s in 0..self.seats() {
            let submitted = self.submitted[s].take();
            if !self.m.is_active(s as u8) {
                self.inputs[s] = SideInput::Nothing;
                if recording {
                    answers.push(Answer::Out);
                }
                continue;
            }
            let (input, answer) = match submitted {
                Some(PlayerAnswer::Commands(cmds)) => {
                    let answer =
                        recording.then(|| Answer::Commands(cmds.iter().map(|c| command_to_value(c, &grid)).collect()));
                    (SideInput::Orders(cmds.into_iter().map(Ok).collect()), answer)
                }
                Some(PlayerAnswer::Raw(list)) => {
                    let input = SideInput::Orders(parse_commands(&list, &grid));
                    (input, recording.then(|| Answer::Commands(list)))
                }
                Some(PlayerAnswer::Violation { kind, detail }) => {
                    let answer = recording.then(|| Answer::Violation(Violation { kind, detail: detail.clone() }));
                    self.violations[s].push((round, kind, detail));
                    (SideInput::Violation, answer)
                }
                Some(PlayerAnswer::Interrupted) | None => {
                    (SideInput::Orders(Vec::new()), recording.then(|| Answer::Commands(Vec::new())))
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
            r.after_resolution(&self.m, answers, &self.report);
        }
        &self.report
    }

    /// The replay of the rounds played so far, when recording in memory.
    pub fn replay_so_far(&self) -> Option<Replay> {
        let r = self.recorder.as_ref()?;
        Some(r.replay_so_far(&self.m, &self.names, match_result(&self.m, &self.names)))
    }

    /// Ends the session. A match that is not over is recorded as stopped before its end
    /// (`ended_by: interrupted`): the replay ends with the state after the last round played.
    pub fn finish(self) -> MatchRecord {
        let interrupted = !self.m.is_over();
        let mut result = match_result(&self.m, &self.names);
        if interrupted {
            result.ended_by = EndReason::Interrupted;
        }
        let m = &self.m;
        let (replay, replay_written) = match self.recorder {
            Some(r) if r.is_streaming() => (None, r.finish_stream(m, &result, interrupted)),
            Some(r) => (Some(r.finish(m, &self.names, result)), None),
            None => (None, None),
        };
        MatchRecord {
            outcome: m.outcome(),
            last_round: m.round(),
            end_reason: m.end_reason().unwrap_or(EndReason::Interrupted),
            council_fell: m.council_fell(),
            agents: vec![None; self.names.len()],
            names: self.names,
            discards: self.discards,
            violations: self.violations,
            replay,
            replay_written,
        }
    }

    /// Ends the session and hands back the match itself (for re-simulation).
    pub fn into_state(self) -> Match {
        self.m
    }
}
