//! What a run gives back: the result document (`--json`, the Python package), the digest of
//! discarded commands, how agents were isolated, and the notes on CPU competition.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use gbely_world::replay::SideResult;
use gbely_world::Map;
use serde_json::json;

use crate::session::MatchRecord;

/// The result of a run, as `--json` and the Python package give it: the match result in the
/// same shape as the replay's and `gbely.Match.result()` (the fields of
/// [`MatchResult`](gbely_world::replay::MatchResult); each side a [`SideResult`]), and per side
/// the run's details.
pub fn result_json(map: &Map, rec: &MatchRecord, replay: Option<&Path>, logs: &[Option<PathBuf>]) -> serde_json::Value {
    let result = rec.result();
    let sides: Vec<SideReport> = result
        .sides
        .into_iter()
        .map(|side| {
            let s = side.seat as usize;
            let details = SideDetails {
                violations: rec.violations[s]
                    .iter()
                    .map(|(round, kind, detail)| ViolationRecord { round: *round, kind: *kind, detail: detail.clone() })
                    .collect(),
                discarded: rec.discards[s].iter().map(|(r, n)| (r.code(), *n)).collect(),
                disqualified_round: rec.outcome[s].disqualified,
                log: logs[s].as_ref().map(|p| p.display().to_string()),
                timing: rec.agents[s],
            };
            SideReport { side, details }
        })
        .collect();
    json!({
        "map": map.name(),
        "fingerprint": map.fingerprint(),
        "size": [map.width(), map.height()],
        "last_round": result.last_round,
        "rounds_played": rec.rounds_played(),
        "ended_by": result.ended_by,
        "council_fell": result.council_fell,
        "sides": sides,
        "replay": replay.map(|p| p.display().to_string()),
        "replay_error": rec.replay_written.as_ref().and_then(|w| w.as_ref().err()),
        "fairness": fairness_notes(rec),
        "isolation": isolation_of(rec),
    })
}

/// One side in [`result_json`]: its [`SideResult`], and what the run adds.
#[derive(Debug, serde::Serialize)]
struct SideReport {
    #[serde(flatten)]
    side: SideResult,
    details: SideDetails,
}

#[derive(Debug, serde::Serialize)]
struct SideDetails {
    /// Each violation: round, kind, what happened.
    violations: Vec<ViolationRecord>,
    /// Discarded commands by reason code.
    discarded: BTreeMap<&'static str, u32>,
    disqualified_round: Option<u32>,
    /// The agent process's log file.
    log: Option<String>,
    /// The agent process's timings (`None` for in-process players).
    timing: Option<crate::runner::player::AgentStats>,
}

#[derive(Debug, serde::Serialize)]
struct ViolationRecord {
    round: u32,
    kind: gbely_rules::ViolationKind,
    detail: String,
}

/// How the match's agent processes were isolated (`None`: no agent process played).
pub fn isolation_of(rec: &MatchRecord) -> Option<crate::runner::player::Isolation> {
    rec.agents.iter().flatten().map(|a| a.isolation).next()
}

/// Timed agent processes in this match, and the CPUs this machine offers.
pub fn timed_agents(rec: &MatchRecord) -> usize {
    rec.agents.iter().flatten().filter(|a| a.timed).count()
}

/// What the runner saw of the competition for CPUs, for the summary: a warning when timed agents
/// outnumber the cores, and each agent that waited for a CPU while its clock ran. The judgement
/// itself is by wall time, as the judge's; these notes say when a violation may come from the
/// machine rather than from the agent.
pub fn fairness_notes(rec: &MatchRecord) -> Vec<String> {
    let mut notes = Vec::new();
    let timed = timed_agents(rec);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if timed > cores {
        notes.push(format!(
            "{timed} timed agents share {cores} CPU cores: agents that think at the same time slow each other \
             down (the judge gives each its own core); use --time-limit off or fewer agents for timing-sensitive tests"
        ));
    }
    for (s, a) in rec.agents.iter().enumerate() {
        let Some(a) = a else { continue };
        if a.cpu.starved_rounds > 0 {
            notes.push(format!(
                "{}: waited for a CPU in {} round(s) (up to {:.2} s in one round, {:.2} s in all) while its clock ran",
                rec.names[s], a.cpu.starved_rounds, a.cpu.max_wait_seconds, a.cpu.wait_seconds
            ));
        }
    }
    notes
}

/// Each agent that wrote lines after a round's answer: the runner took the first line of each
/// round as its answer and dropped the rest (docs/protocol.md, "One answer a round").
pub fn dropped_line_notes(rec: &MatchRecord) -> Vec<String> {
    rec.agents
        .iter()
        .enumerate()
        .filter_map(|(s, a)| {
            let n = a.as_ref()?.dropped_lines;
            (n > 0).then(|| {
                format!(
                    "{}: {n} line(s) written after a round's answer were dropped (one answer a round: the first line)",
                    crate::text::printable(&rec.names[s])
                )
            })
        })
        .collect()
}
