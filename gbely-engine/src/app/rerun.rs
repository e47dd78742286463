//! Reproducing what the judge saw (`gbely replay rerun`): one seat's agent is fed, round by
//! round, the observations that seat received in a replay, and its answers are compared with
//! the recorded ones.
//!
//! The observations are rebuilt by re-simulating the replay with its recorded answers
//! ([`crate::replays::resimulate_observing`], the reader behind `replay show --observation`), so the
//! agent sees exactly what the engine sent, whatever it answers now. The agent runs as in a
//! match: its own process ([`ProcessPlayer`]) in the sandbox where the machine allows it, under
//! the judge's clock and memory limit, restarted before the round after a violation — its own,
//! and also one the replay records but the rerun did not repeat, so its memory is lost where the
//! judge's agent lost it. Answers are compared as the engine parses them (SPEC §6: each item a
//! command or a discard reason), never as text.

use std::cell::{Cell, RefCell};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use gbely_rules::{Command, Grid, Observation, ViolationKind};
use gbely_world::replay::Answer;
use gbely_world::Replay;
use serde_json::{json, Value};

use crate::app::runs::agent_spec::{AgentSpec, Started};
use crate::app::runs::RunError;
use crate::app::service::AgentLimits;
use crate::replays::{resimulate_observing, within_budget, Work};
use crate::runner::player::{Isolation, Player, PlayerAnswer};
use crate::runner::process::{ProcessConfig, ProcessPlayer};
use crate::session::orders_of;
use crate::sim::Order;
use crate::wire::{command_to_value, parse_commands};

/// What to rerun: a replay's seat, the agent that answers now, the rounds and the limits.
#[derive(Debug)]
pub struct RerunPlan {
    pub replay: Arc<Replay>,
    pub seat: u8,
    /// The agent: an agent file or a command (a process, as the judge runs it).
    pub agent: AgentSpec,
    /// The first and last round fed (both included); `None`: every round the seat played.
    pub rounds: Option<(u32, u32)>,
    /// The judge's by default: [`crate::limits::Defaults`], the sandbox where the machine allows.
    pub limits: AgentLimits,
    /// The interpreter of a Python agent (resolved).
    pub python: String,
    /// Where the agent works (`.rerun`) and logs (`rerun-NAME.log`).
    pub run_dir: PathBuf,
}

/// Why a rerun cannot start; each says what is wrong and where.
#[derive(Debug, thiserror::Error)]
pub enum RerunError {
    #[error("the replay cannot be re-simulated: {0}")]
    Replay(String),
    #[error("seat {seat} does not exist: the match has seats 0…{}", seats - 1)]
    NoSeat { seat: u8, seats: usize },
    #[error("rounds {first}…{last}: the replay has rounds 0…{played}")]
    Rounds { first: u32, last: u32, played: u32 },
    #[error("the replay holds no rounds")]
    Empty,
    #[error(
        "agent `{0}` is a built-in agent: rerun runs an agent file or cmd:COMMAND in its own process, as the judge does"
    )]
    Builtin(String),
    #[error(transparent)]
    Run(#[from] RunError),
}

/// What a seat did in a round: commands as the engine parsed them, or a violation.
#[derive(Clone, Debug, PartialEq)]
pub enum Did {
    Commands {
        orders: Vec<Order>,
        /// Discarded items counted, not held (a flood's: past the reader's or the replay's cut).
        left_out: u32,
        /// The recorded answer was cut here (a flood): only the items before it are compared.
        cut: Option<usize>,
    },
    Violation {
        kind: ViolationKind,
        detail: String,
    },
}

impl Did {
    fn violation(&self) -> Option<ViolationKind> {
        match self {
            Did::Violation { kind, .. } => Some(*kind),
            Did::Commands { .. } => None,
        }
    }

    /// In words, for the report: `5 commands`, `timeout: no answer within 2.0 s`.
    pub fn describe(&self) -> String {
        match self {
            Did::Commands { orders, left_out, .. } => {
                let n = orders.len() + *left_out as usize;
                format!("{n} command{}", if n == 1 { "" } else { "s" })
            }
            Did::Violation { kind, detail } => format!("{}: {}", kind.wire(), crate::text::printable(detail)),
        }
    }

    fn to_json(&self) -> Value {
        match self {
            Did::Commands { orders, left_out, .. } => json!({ "commands": orders.len() + *left_out as usize }),
            Did::Violation { kind, detail } => json!({ "violation": kind.wire(), "detail": detail }),
        }
    }
}

/// Where an answer first differs from the recorded one: the item's index and each side's item
/// (a command in its wire form, a discard reason's code, or nothing: the list ended).
#[derive(Clone, Debug, PartialEq)]
pub struct Difference {
    pub index: usize,
    pub recorded: Option<Value>,
    pub now: Option<Value>,
}

/// One round of a rerun.
#[derive(Clone, Debug)]
pub struct RerunRound {
    pub round: u32,
    pub recorded: Did,
    pub now: Did,
    /// Where the commands differ; `None` when they are the same or either side is a violation.
    pub difference: Option<Difference>,
    /// Seconds from sending the observation to the answer (the runner's clock when it answered;
    /// else until the runner gave up on it).
    pub seconds: f64,
    /// The seconds the recorded answer took (the replay's `answer_ms`, version 4); `None` when
    /// the replay has no time for it.
    pub recorded_seconds: Option<f64>,
    /// The agent was started afresh for this round (its first, or after a violation).
    pub started: bool,
}

impl RerunRound {
    /// The answer is the recorded one: the same commands, or a violation of the same kind.
    pub fn same(&self) -> bool {
        match (&self.recorded, &self.now) {
            (Did::Violation { kind: a, .. }, Did::Violation { kind: b, .. }) => a == b,
            (Did::Commands { .. }, Did::Commands { .. }) => self.difference.is_none(),
            _ => false,
        }
    }
}

/// The report of a rerun.
#[derive(Clone, Debug)]
pub struct RerunReport {
    pub seat: u8,
    /// The seat's name in the replay.
    pub recorded_name: String,
    /// The agent that answered now.
    pub agent: String,
    pub rounds: Vec<RerunRound>,
    pub time_limit: Option<f64>,
    pub isolation: Isolation,
    pub log: PathBuf,
    /// Stopped by Ctrl-C before the last round.
    pub interrupted: bool,
}

impl RerunReport {
    /// The rounds whose answer violates now.
    pub fn violations(&self) -> impl Iterator<Item = &RerunRound> {
        self.rounds.iter().filter(|r| r.now.violation().is_some())
    }

    /// The recorded violations among the rounds rerun.
    pub fn recorded_violations(&self) -> impl Iterator<Item = &RerunRound> {
        self.rounds.iter().filter(|r| r.recorded.violation().is_some())
    }

    /// The first round whose answer is not the recorded one.
    pub fn first_difference(&self) -> Option<&RerunRound> {
        self.rounds.iter().find(|r| !r.same())
    }

    /// The round in which the agent would now be disqualified (its fourth violation, SPEC §8).
    pub fn disqualified_at(&self) -> Option<u32> {
        self.violations().nth(gbely_rules::constants::ALLOWED_VIOLATIONS as usize).map(|r| r.round)
    }

    /// The `--json` document.
    pub fn to_json(&self) -> Value {
        let rounds: Vec<Value> = self
            .rounds
            .iter()
            .map(|r| {
                json!({
                    "round": r.round,
                    "same": r.same(),
                    "recorded": r.recorded.to_json(),
                    "now": r.now.to_json(),
                    "difference": r.difference.as_ref().map(|d| json!({
                        "index": d.index, "recorded": d.recorded, "now": d.now,
                    })),
                    "seconds": r.seconds,
                    "recorded_seconds": r.recorded_seconds,
                    "started": r.started,
                })
            })
            .collect();
        let times: Vec<f64> = self.rounds.iter().map(|r| r.seconds).collect();
        json!({
            "seat": self.seat,
            "recorded_name": self.recorded_name,
            "agent": self.agent,
            "time_limit": self.time_limit,
            "sandboxed": self.isolation.sandboxed,
            "isolation": self.isolation.line(),
            "log": self.log.display().to_string(),
            "interrupted": self.interrupted,
            "summary": {
                "rounds": self.rounds.len(),
                "same": self.rounds.iter().filter(|r| r.same()).count(),
                "first_difference": self.first_difference().map(|r| r.round),
                "violations": self.violations().map(|r| json!({"round": r.round, "kind": r.now.violation().map(ViolationKind::wire), "recorded": r.recorded.violation().map(ViolationKind::wire)})).collect::<Vec<_>>(),
                "recorded_violations": self.recorded_violations().map(|r| json!({"round": r.round, "kind": r.recorded.violation().map(ViolationKind::wire), "now": r.now.violation().map(ViolationKind::wire)})).collect::<Vec<_>>(),
                "disqualified_at": self.disqualified_at(),
                "max_seconds": times.iter().copied().fold(0.0, f64::max),
                "p95_seconds": crate::runner::player::p95(&times),
            },
            "rounds": rounds,
        })
    }

    /// The report for a terminal: a line per round that differs, violates or was slow against
    /// the limit (now or as recorded), with the recorded time beside the new one where the
    /// replay has it, then the summary.
    pub fn text(&self) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        let limit = self.time_limit.map_or("no time limit".to_string(), |l| format!("{l:.1} s a round"));
        let _ = writeln!(
            s,
            "seat {} ({}) rerun with {}: {} round{}, {limit}, {}",
            self.seat,
            crate::text::printable(&self.recorded_name),
            self.agent,
            self.rounds.len(),
            if self.rounds.len() == 1 { "" } else { "s" },
            self.isolation.line()
        );
        for r in &self.rounds {
            let slow =
                self.time_limit.is_some_and(|l| r.seconds > 0.8 * l || r.recorded_seconds.is_some_and(|t| t > 0.8 * l));
            if r.same() && r.now.violation().is_none() && !slow {
                continue;
            }
            let what = match (&r.now, r.recorded.violation()) {
                (Did::Violation { .. }, Some(k)) if r.same() => {
                    format!("{} (recorded too: {})", r.now.describe(), k.wire())
                }
                (Did::Violation { .. }, _) => format!("{} (recorded: {})", r.now.describe(), r.recorded.describe()),
                (Did::Commands { .. }, Some(_)) => {
                    format!("answered, {} (recorded: {})", r.now.describe(), r.recorded.describe())
                }
                (Did::Commands { .. }, None) => match &r.difference {
                    Some(d) => format!(
                        "differs at command {}: recorded {}, now {}",
                        d.index,
                        item_text(d.recorded.as_ref()),
                        item_text(d.now.as_ref())
                    ),
                    None => "same".to_string(),
                },
            };
            let started = if r.started && r.round > self.rounds[0].round { ", restarted" } else { "" };
            let then = r.recorded_seconds.map_or(String::new(), |t| format!(" (recorded {t:.3} s)"));
            let _ = writeln!(s, "round {:>4}  {:>6.3} s{then}{started}  {what}", r.round, r.seconds);
        }
        let same = self.rounds.iter().filter(|r| r.same()).count();
        let _ = writeln!(s, "same answer as recorded: {same} of {} rounds", self.rounds.len());
        if let Some(r) = self.first_difference() {
            let _ = writeln!(s, "first difference: round {}", r.round);
        }
        let listed = |rounds: Vec<&RerunRound>, did: fn(&RerunRound) -> &Did| {
            rounds
                .iter()
                .map(|r| format!("{} in round {}", did(r).violation().map_or("?", ViolationKind::wire), r.round))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let now: Vec<&RerunRound> = self.violations().collect();
        let recorded: Vec<&RerunRound> = self.recorded_violations().collect();
        let _ = writeln!(
            s,
            "violations now: {}",
            if now.is_empty() { "none".to_string() } else { listed(now, |r| &r.now) }
        );
        let _ = writeln!(
            s,
            "violations recorded: {}",
            if recorded.is_empty() { "none".to_string() } else { listed(recorded, |r| &r.recorded) }
        );
        if let Some(round) = self.disqualified_at() {
            let _ = writeln!(s, "the agent would now be disqualified in round {round} (its fourth violation)");
        }
        let mut slowest: Vec<&RerunRound> = self.rounds.iter().collect();
        slowest.sort_by(|a, b| b.seconds.total_cmp(&a.seconds).then(a.round.cmp(&b.round)));
        let slowest: Vec<String> =
            slowest.iter().take(3).map(|r| format!("round {} {:.3} s", r.round, r.seconds)).collect();
        let times: Vec<f64> = self.rounds.iter().map(|r| r.seconds).collect();
        let _ = writeln!(
            s,
            "time: slowest {}; 95th percentile {:.3} s",
            slowest.join(", "),
            crate::runner::player::p95(&times)
        );
        if self.interrupted {
            let _ = writeln!(s, "INTERRUPTED: the rounds after the last one listed were not rerun");
        }
        let _ = writeln!(s, "the agent's log: {}", self.log.display());
        s
    }
}

/// A command list's item for the report: the command's wire JSON, a discard reason, or `nothing`.
fn item_text(item: Option<&Value>) -> String {
    match item {
        Some(Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
        None => "nothing (the list ended)".to_string(),
    }
}

/// The recorded answer as the engine resolved it; `regenerated`: a built-in seat's commands,
/// decided again.
fn recorded_did(answer: &Answer, grid: &Grid, regenerated: Option<&[Command]>) -> Did {
    match answer {
        Answer::Commands(list) => Did::Commands { orders: parse_commands(list, grid), left_out: 0, cut: None },
        Answer::Compact(c) => Did::Commands {
            orders: orders_of(c, grid),
            left_out: c.cut.as_ref().map_or(0, |cut| cut.left_out.values().sum()),
            cut: c.cut.as_ref().map(|cut| cut.at as usize),
        },
        Answer::Violation(v) => Did::Violation { kind: v.kind, detail: v.detail.clone() },
        Answer::Regen | Answer::Out => Did::Commands {
            orders: regenerated.unwrap_or_default().iter().cloned().map(Ok).collect(),
            left_out: 0,
            cut: None,
        },
    }
}

/// An answer now, as the engine would resolve it.
fn answer_did(answer: PlayerAnswer, grid: &Grid) -> Did {
    match answer {
        PlayerAnswer::Read(read) => {
            Did::Commands { orders: read.orders, left_out: read.left_out.values().sum(), cut: None }
        }
        PlayerAnswer::Raw(list) => Did::Commands { orders: parse_commands(&list, grid), left_out: 0, cut: None },
        PlayerAnswer::Commands(c) => Did::Commands { orders: c.into_iter().map(Ok).collect(), left_out: 0, cut: None },
        PlayerAnswer::Violation { kind, detail } => Did::Violation { kind, detail },
        PlayerAnswer::Replayed(a) => recorded_did(&a, grid, None),
        PlayerAnswer::Interrupted => Did::Commands { orders: Vec::new(), left_out: 0, cut: None },
    }
}

/// Where two command lists first differ (a recorded list cut by the replay compares up to its cut).
fn difference(recorded: &Did, now: &Did, grid: &Grid) -> Option<Difference> {
    let (Did::Commands { orders: a, left_out: la, cut }, Did::Commands { orders: b, left_out: lb, .. }) =
        (recorded, now)
    else {
        return None;
    };
    let item = |o: Option<&Order>| {
        o.map(|o| match o {
            Ok(c) => command_to_value(c, grid),
            Err(r) => Value::String(format!("discarded: {}", r.code())),
        })
    };
    let compared = cut.map_or(a.len().max(b.len()), |at| at);
    if let Some(i) = (0..compared).find(|&i| a.get(i) != b.get(i)) {
        return Some(Difference { index: i, recorded: item(a.get(i)), now: item(b.get(i)) });
    }
    if cut.is_none() && la != lb {
        let index = a.len();
        let counted = |n: u32| Some(Value::String(format!("{n} discarded items counted")));
        return Some(Difference { index, recorded: counted(*la), now: counted(*lb) });
    }
    None
}

/// The first and last round of a `--rounds` value: `A..B` (both included), `A..`, `..B` or `A`.
pub fn parse_round_range(s: &str) -> Result<(Option<u32>, Option<u32>), String> {
    let bad = || format!("`{s}`: give rounds as A..B (both included), A.., ..B or one round A");
    let num = |t: &str| -> Result<Option<u32>, String> {
        if t.is_empty() {
            Ok(None)
        } else {
            t.trim().parse().map(Some).map_err(|_| bad())
        }
    };
    match s.split_once("..") {
        Some((a, b)) => {
            let (a, b) = (num(a)?, num(b)?);
            if let (Some(a), Some(b)) = (a, b) {
                if a > b {
                    return Err(format!("`{s}`: the first round is after the last"));
                }
            }
            Ok((a, b))
        }
        None => {
            let a = num(s)?.ok_or_else(bad)?;
            Ok((Some(a), Some(a)))
        }
    }
}

/// Checks a plan's seat and rounds against its replay, before any agent starts: the rounds fed.
fn check(plan: &RerunPlan) -> Result<(u32, u32), RerunError> {
    let map = plan.replay.check().map_err(|e| RerunError::Replay(e.to_string()))?;
    within_budget(&plan.replay, &map, Work::Resimulate).map_err(RerunError::Replay)?;
    let seats = map.seats().len();
    if plan.seat as usize >= seats {
        return Err(RerunError::NoSeat { seat: plan.seat, seats });
    }
    let played = plan.replay.turns.len() as u32;
    let last_played = played.checked_sub(1).ok_or(RerunError::Empty)?;
    let (first, last) = plan.rounds.unwrap_or((0, last_played));
    if first > last_played || first > last {
        return Err(RerunError::Rounds { first, last, played: last_played });
    }
    Ok((first, last.min(last_played)))
}

/// Reruns a plan: feeds the seat's observations to the agent, round by round, and compares its
/// answers with the recorded ones. `progress` is told each round done (the round and the last
/// round to rerun). A stop request (Ctrl-C) ends it after the round in progress, marked
/// [`RerunReport::interrupted`].
pub fn rerun(plan: RerunPlan, progress: &mut dyn FnMut(&RerunRound, u32)) -> Result<RerunReport, RerunError> {
    let (first, last) = check(&plan)?;
    let map = Arc::new(plan.replay.check().map_err(|e| RerunError::Replay(e.to_string()))?);
    let grid = map.grid().clone();
    let seat = plan.seat;
    let name = plan.agent.display_name();
    let cmd = match plan.agent.start(&plan.run_dir, seat as usize, &plan.python)? {
        Started::Builtin(_) => return Err(RerunError::Builtin(plan.agent.to_string())),
        Started::Process(cmd) => cmd,
    };
    // The agent's folder and log as a match's seat has them (`service::run`).
    let log = plan.run_dir.join(format!("rerun-{}.log", plan.agent.stem()));
    let prepare =
        |error| RunError::Prepare { spec: plan.agent.to_string(), dir: plan.run_dir.display().to_string(), error };
    let mut config = ProcessConfig::new(plan.run_dir.join(".rerun"), &log);
    config.time_limit = plan.limits.time;
    config.memory_limit = plan.limits.memory;
    config.cores = plan.limits.cores.clone();
    config.sandbox = plan.limits.sandbox;
    config.cpu_slot = seat as usize;
    let player = RefCell::new(ProcessPlayer::new(name.clone(), cmd, config).map_err(prepare)?);
    let isolation = player.borrow().isolation();

    let replay = Arc::clone(&plan.replay);
    let rounds = RefCell::new(Vec::new());
    let stopped = Cell::new(false);
    // Whether the judge restarted the agent before the next round (a recorded violation), and
    // whether the rerun's own violation already did.
    let judge_restarts = Cell::new(false);
    let restarted_now = Cell::new(true);
    let seen = |r: usize, s: u8, obs: &Observation, regenerated: Option<&[Command]>| {
        let round = r as u32;
        if s != seat || stopped.get() || round < first || round > last {
            return;
        }
        let recorded_answer = replay.turns[r].answers.get(seat as usize).cloned().unwrap_or(Answer::Out);
        let recorded = recorded_did(&recorded_answer, &grid, regenerated);
        let mut player = player.borrow_mut();
        if judge_restarts.get() && !restarted_now.get() {
            player.restart(&format!("the replay records a violation of round {}", round.saturating_sub(1)));
            restarted_now.set(true);
        }
        let started = restarted_now.get();
        let answered_before = player.stats.round_seconds.len();
        let sent = Instant::now();
        player.begin(obs, &grid);
        let answer = player.finish();
        let waited = sent.elapsed().as_secs_f64();
        if answer == PlayerAnswer::Interrupted || crate::runner::interrupt::requested() {
            stopped.set(true);
            return;
        }
        let seconds = player
            .stats
            .round_seconds
            .get(answered_before)
            .copied()
            .filter(|_| player.stats.round_seconds.len() > answered_before)
            .unwrap_or(waited);
        let now = answer_did(answer, &grid);
        judge_restarts.set(recorded.violation().is_some());
        restarted_now.set(now.violation().is_some());
        let difference = difference(&recorded, &now, &grid);
        let recorded_seconds =
            replay.turns[r].answer_ms.get(seat as usize).copied().flatten().map(|ms| f64::from(ms) / 1000.0);
        let row = RerunRound { round, recorded, now, difference, seconds, recorded_seconds, started };
        progress(&row, last);
        rounds.borrow_mut().push(row);
    };
    // Every observation is built from the recorded answers (`replays::resimulate_observing`);
    // the seat is watched only while it is in the game, as the engine asked it only then.
    resimulate_observing(&replay, map, |s| s == seat, seen, |r, _, _| !stopped.get() && (r as u32) < last);
    let mut player = player.into_inner();
    player.end();
    let rounds = rounds.into_inner();
    let interrupted = stopped.get();
    Ok(RerunReport {
        seat,
        recorded_name: replay.seats.get(seat as usize).map_or_else(String::new, |s| s.name.clone()),
        agent: name,
        rounds,
        time_limit: plan.limits.time.as_secs_f64(),
        isolation,
        log,
        interrupted,
    })
}

/// The run folder of a rerun when none is given: `gbely-runs/<time>-rerun-<agent>`.
pub fn default_run_dir(agent: &AgentSpec) -> PathBuf {
    use crate::app::runs::folders::{timestamp, unique_dir};
    unique_dir(Path::new(crate::limits::Defaults::RUNS_FOLDER).join(format!("{}-rerun-{}", timestamp(), agent.stem())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_ranges_read_as_the_help_says() {
        assert_eq!(parse_round_range("3..7"), Ok((Some(3), Some(7))));
        assert_eq!(parse_round_range("3.."), Ok((Some(3), None)));
        assert_eq!(parse_round_range("..7"), Ok((None, Some(7))));
        assert_eq!(parse_round_range("5"), Ok((Some(5), Some(5))));
        assert!(parse_round_range("7..3").is_err());
        assert!(parse_round_range("x").is_err());
    }

    #[test]
    fn a_recorded_list_cut_by_the_replay_is_compared_up_to_its_cut() {
        let grid = gbely_world::reference_map().grid().clone();
        let fortify = |n: f64| Ok(Command::Fortify { cell: gbely_rules::Cell(0), amount: n });
        let a = Did::Commands { orders: vec![fortify(1.0), fortify(2.0)], left_out: 5, cut: Some(1) };
        let b = Did::Commands { orders: vec![fortify(1.0), fortify(3.0)], left_out: 0, cut: None };
        assert_eq!(difference(&a, &b, &grid), None);
        let c = Did::Commands { orders: vec![fortify(2.0)], left_out: 0, cut: None };
        assert_eq!(difference(&a, &c, &grid).map(|d| d.index), Some(0));
        let d = Did::Commands { orders: vec![fortify(1.0)], left_out: 0, cut: None };
        let e = Did::Commands { orders: vec![fortify(1.0), fortify(1.0)], left_out: 0, cut: None };
        let diff = difference(&d, &e, &grid).unwrap();
        assert_eq!((diff.index, diff.recorded), (1, None));
    }
}
