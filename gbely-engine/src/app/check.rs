//! The submission check (`gbely check`, a stand's agents): what the file holds, read without
//! running it, then a short test match against the Council on the reference map.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use gbely_rules::constants;
use serde_json::{json, Value};

use crate::app::inspect::{inspect_source, isolation_calls, AgentMeta};
use crate::app::runs::agent_spec::AgentSpec;
use crate::app::runs::folders::{timestamp, unique_dir};
use crate::app::runs::RunError;
use crate::app::service::{MatchPlan, Seat};
use crate::limits::TimeLimit;
use crate::runner::player::Isolation;
use crate::runner::sandbox::SandboxMode;
use gbely_rules::ViolationKind;

/// One line of the check's report: its English `text`, and what it says for a reader of another
/// language: `code` names the kind of line, `args` (a JSON object) its values, from which the
/// arena's catalogues word it again (`check-<code>`). Values that are already words (a Python
/// error, a violation's detail, how the sandbox holds an agent) are the engine's, in English.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    pub code: &'static str,
    pub args: Value,
    pub text: String,
}

/// Every code a [`Line`] of the report has (a reader in another language needs a wording of
/// each; the arena's tests hold it to that).
pub const LINE_CODES: &[&str] = &[
    "not-python-file",
    "too-big",
    "size",
    "does-not-parse",
    "name",
    "game-version",
    "no-decide",
    "other-branch",
    "decide-not-a-function",
    "decide-assigned",
    "foreign-imports",
    "optional-imports",
    "cannot-at-judge",
    "dropped-lines",
    "violation",
    "disqualified",
    "violations",
    "test-match",
    "log",
    "sandboxed",
    "not-sandboxed",
];

impl Line {
    fn new(code: &'static str, args: Value, text: String) -> Line {
        debug_assert!(LINE_CODES.contains(&code), "{code} is not in LINE_CODES");
        Line { code, args, text }
    }

    /// The line as the report's `said` lists keep it: `{"code": …, "args": {…}}`.
    pub fn said(&self) -> Value {
        json!({"code": self.code, "args": self.args})
    }
}

impl std::fmt::Display for Line {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// What the check found.
#[derive(Debug, Clone)]
pub struct CheckReport {
    pub file: String,
    /// What fails it; empty: it passes.
    pub problems: Vec<Line>,
    pub notes: Vec<Line>,
    pub warnings: Vec<Line>,
    /// Seconds per decision of the test match: max, p95, rounds answered.
    pub timing: Option<(f64, f64, usize)>,
    /// The time to the first answer (start-up), when round 0 was answered.
    pub startup: Option<f64>,
    /// The test match's slowest answers, `(round, milliseconds)` slowest first (at most
    /// [`crate::session::SLOWEST_KEPT`]), and the limit they were held to.
    pub slowest: Vec<(u32, u32)>,
    pub time_limit: TimeLimit,
    pub meta: AgentMeta,
    /// The test match's violations: (round, kind, detail).
    pub violations: Vec<(u32, ViolationKind, String)>,
    pub isolation: Isolation,
    /// The test match's run folder (its agent's log), when it was played.
    pub run_dir: Option<PathBuf>,
}

/// How the harness words a crash at import (`runner/harness.py`): the file cannot be imported.
const IMPORT_FAILED: &str = "the agent failed at import";

impl CheckReport {
    /// Whether the rules accept the file (rules §8): its size, its `decide`, that it parses and
    /// imports. Violations of the test match are warnings: a match tolerates three.
    pub fn ok(&self) -> bool {
        self.problems.is_empty()
    }

    /// [`ok`](Self::ok), and no violation in the test match either (`gbely check --strict`).
    pub fn ok_strict(&self) -> bool {
        self.ok() && self.violations.is_empty()
    }

    /// The violations of the test match as problems (`--strict`).
    pub fn strict(mut self) -> CheckReport {
        for (round, kind, detail) in &self.violations {
            let line = violation_line(*round, *kind, detail);
            if !self.problems.contains(&line) {
                self.problems.push(line);
            }
        }
        self
    }

    /// The log of the test match, when it was played.
    pub fn log(&self) -> Option<&str> {
        self.notes.iter().find(|n| n.code == "log").and_then(|n| n.args["path"].as_str())
    }

    /// The `--json` document of `gbely check`.
    pub fn to_json(&self) -> Value {
        let texts = |lines: &[Line]| lines.iter().map(|l| l.text.clone()).collect::<Vec<_>>();
        let said = |lines: &[Line]| lines.iter().map(Line::said).collect::<Vec<_>>();
        json!({
            "file": self.file,
            "ok": self.ok(),
            "problems": texts(&self.problems),
            "notes": texts(&self.notes),
            "warnings": texts(&self.warnings),
            // The same lines as codes and values, for a reader in another language.
            "said": {"problems": said(&self.problems), "notes": said(&self.notes), "warnings": said(&self.warnings)},
            "decision_seconds": self.timing.map(|(max, p95, n)| json!({"max": max, "p95": p95, "rounds": n})),
            "startup_seconds": self.startup,
            // Where the time went: the slowest rounds, as the text words them too.
            "slowest": self.slowest.iter().map(|&(round, ms)| json!({
                "round": round,
                "seconds": f64::from(ms) / 1000.0,
                "text": self.time_limit.answer_text(round, ms),
            })).collect::<Vec<_>>(),
            "time_limit_seconds": self.time_limit.as_secs_f64(),
            "meta": self.meta,
            "violations": self.violations.len(),
            "ok_strict": self.ok_strict(),
            "isolation": self.isolation,
        })
    }
}

/// How the check's test match is played: its rounds and the sandbox. Its time limit is always
/// the judge's (SPEC §8), whoever checks: the check says how a file fares as the judge plays it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TestMatch {
    pub rounds: u32,
    pub sandbox: SandboxMode,
}

/// Checks the agent file `path` with the interpreter `py` (resolved): its source, then (when
/// the source passes) the `test` match against the Council, played in a new folder of `runs`.
pub fn check_agent(path: &Path, py: &str, test: TestMatch, runs: &Path) -> Result<CheckReport, RunError> {
    let shown = path.display().to_string();
    let unreadable = |why: String| RunError::Inspect { path: shown.clone(), why };
    let mut problems: Vec<Line> = Vec::new();
    let mut notes: Vec<Line> = Vec::new();
    let meta = std::fs::metadata(path).map_err(|e| unreadable(e.to_string()))?;
    // A named pipe or a device (a link to /dev/zero) would hang the check: refused unopened.
    crate::files::check_regular(path).map_err(|e| unreadable(e.to_string()))?;
    if path.extension().and_then(|e| e.to_str()) != Some("py") {
        let file = path.display().to_string();
        let text = format!("{file} is not a .py file: the submission is one Python file");
        problems.push(Line::new("not-python-file", json!({"file": file}), text));
    }
    if meta.len() > constants::MAX_SUBMISSION_BYTES {
        let (bytes, limit) = (meta.len(), constants::MAX_SUBMISSION_BYTES);
        let text = format!("the file has {bytes} bytes; the limit is {limit} (512 KiB)");
        problems.push(Line::new("too-big", json!({"bytes": bytes, "limit": limit}), text));
    } else {
        let (bytes, limit) = (meta.len(), constants::MAX_SUBMISSION_BYTES);
        notes.push(Line::new(
            "size",
            json!({"bytes": bytes, "limit": limit}),
            format!("size {bytes} bytes of {limit} allowed"),
        ));
    }
    let inspect = inspect_source(py, path)?;
    if let Some(err) = inspect.get("syntax_error").and_then(|v| v.as_str()) {
        problems.push(Line::new("does-not-parse", json!({"error": err}), format!("the file does not parse: {err}")));
    }
    let mut warnings: Vec<Line> = Vec::new();
    let meta = AgentMeta::of(&inspect);
    let file_name = AgentSpec::File(path.to_path_buf()).display_name();
    if meta.name.is_some() || meta.version.is_some() {
        let name = meta.display_name(&file_name);
        let text = format!("name {name} (AGENT_NAME / AGENT_VERSION)");
        notes.push(Line::new("name", json!({"name": name}), text));
    }
    if let Some(text) = meta.game_version_warning(&file_name) {
        let args = json!({"file": file_name, "version": meta.game_version, "engine": constants::GAME_VERSION});
        warnings.push(Line::new("game-version", args, text));
    }
    match inspect.get("decide").filter(|d| !d.is_null()) {
        None if inspect["syntax_error"].is_null() => {
            problems.push(Line::new(
                "no-decide",
                json!({}),
                "the file defines no top-level function decide(stav)".into(),
            ));
        }
        None => {}
        Some(d) => {
            // What decide may be on another branch: the inspector's words, and the kind and line
            // of each (`maybe_kinds`; `undefined`: not bound at all).
            let kinds = d["maybe_kinds"].as_array().cloned().unwrap_or_default();
            for (k, other) in d["maybe"].as_array().into_iter().flatten().filter_map(|m| m.as_str()).enumerate() {
                let of = |i: usize| kinds.get(k).map_or(Value::Null, |x| x[i].clone());
                let args = json!({"kind": of(0), "line": of(1), "type": of(2)});
                warnings.push(Line::new("other-branch", args, format!("on another branch: {other}")));
            }
            if let Some(p) = d["problem"].as_str() {
                problems.push(Line::new(
                    "decide-not-a-function",
                    json!({"kind": d["kind"], "line": d["line"], "type": d["type"]}),
                    p.to_string(),
                ));
            } else if d["kind"] == "assigned" {
                let text = format!(
                    "decide (line {}) is assigned the result of an expression: the check cannot see that it is a function",
                    d["line"]
                );
                warnings.push(Line::new("decide-assigned", json!({"line": d["line"]}), text));
            }
        }
    }
    let foreign: Vec<String> = inspect
        .get("non_stdlib")
        .and_then(|v| v.as_array())
        .map(|l| l.iter().filter_map(|x| x.as_str().map(String::from)).collect())
        .unwrap_or_default();
    if !foreign.is_empty() {
        let modules = foreign.join(", ");
        let text = format!("imports outside the standard library (the judge will not have them): {modules}");
        problems.push(Line::new("foreign-imports", json!({"modules": modules}), text));
    }
    let optional: Vec<&str> =
        inspect["optional"].as_array().map(|l| l.iter().filter_map(|x| x.as_str()).collect()).unwrap_or_default();
    if !optional.is_empty() {
        let modules = optional.join(", ");
        let text = format!(
            "optional imports outside the standard library, guarded by try/except ImportError: {modules} \
             (the judge will not have them: your fallback will run)"
        );
        warnings.push(Line::new("optional-imports", json!({"modules": modules}), text));
    }
    // Warnings, not failures: the call may sit on a path the agent never takes at the judge.
    for call in isolation_calls(&inspect) {
        let args = json!({"imports": call.imports, "name": call.name, "network": call.network,
            "count": call.lines.len(), "lines": call.shown_lines(), "more": call.lines.len().saturating_sub(5)});
        warnings.push(Line::new("cannot-at-judge", args, call.text()));
    }
    let mut timing = None;
    let mut startup = None;
    let mut slowest = Vec::new();
    let time_limit = TimeLimit::default();
    let mut violations = Vec::new();
    let mut checked_in = None;
    if problems.is_empty() {
        let run_dir =
            unique_dir(runs.join(format!("{}-check-{}", timestamp(), AgentSpec::File(path.to_path_buf()).stem())));
        std::fs::create_dir_all(&run_dir)
            .map_err(|error| RunError::RunFolder { dir: run_dir.display().to_string(), error })?;
        let spec = AgentSpec::File(path.to_path_buf());
        let name = spec.display_name();
        let seats = vec![Seat::spec(spec, name), Seat::spec(AgentSpec::COUNCIL, "council")];
        let mut plan = MatchPlan::new(Arc::new(gbely_world::reference_map()), seats);
        plan.rounds = test.rounds;
        plan.limits.sandbox = test.sandbox;
        plan.limits.time = time_limit;
        plan.python = py.to_string();
        plan.run_dir = Some(run_dir.clone());
        checked_in = Some(run_dir);
        let played = crate::app::service::run(plan, &mut ())?;
        let rec = &played.record;
        let stats = rec.agents[0].unwrap_or_default();
        timing = Some((stats.max_answer_seconds, stats.p95_answer_seconds, stats.answered_rounds as usize));
        violations = rec.violations[0].clone();
        slowest = rec.slowest[0].clone();
        // SPEC §8: the process starts just before its first observation, so the time to answer
        // round 0 is the start-up (interpreter, imports, the first decide) the 2 s limit counts.
        if !violations.iter().any(|(round, _, _)| *round == 0) {
            startup = stats.first_answer_seconds;
        }
        if stats.dropped_lines > 0 {
            let count = stats.dropped_lines;
            let lines = if count == 1 {
                "line written after a round's answer was"
            } else {
                "lines written after a round's answer were"
            };
            let text = format!(
                "{count} {lines} dropped: the first line after an observation is the answer, one a round (print to \
                 stderr, not stdout)"
            );
            warnings.push(Line::new("dropped-lines", json!({"count": count}), text));
        }
        // The rules refuse a file, not a way of playing (§8): a violation is a warning, as a
        // match tolerates three, unless the file cannot even be imported.
        for (round, kind, detail) in &violations {
            let line = violation_line(*round, *kind, detail);
            if *kind == ViolationKind::Crash && detail.starts_with(IMPORT_FAILED) {
                if !problems.contains(&line) {
                    problems.push(line);
                }
            } else {
                warnings.push(line);
            }
        }
        if let Some(round) = rec.outcome[0].disqualified {
            let text = format!(
                "the test match disqualified the agent in round {round} (its fourth violation): a match at the judge \
                 would end the same way"
            );
            warnings.push(Line::new("disqualified", json!({"round": round}), text));
        } else if !violations.is_empty() {
            let count = violations.len();
            let violations = if count == 1 { "violation" } else { "violations" };
            let text = format!(
                "{count} {violations} in the test match: a match tolerates three, the fourth disqualifies (rules §8)"
            );
            warnings.push(Line::new("violations", json!({"count": count}), text));
        }
        let (rounds, cells) = (rec.last_round + 1, rec.outcome[0].cells);
        let by_reason = rec.discards_by_count(0);
        let discarded: u32 = by_reason.iter().map(|(n, _)| n).sum();
        let discards: Vec<Value> = by_reason.iter().map(|(n, r)| json!([r.code(), n])).collect();
        let text = format!(
            "test match: {rounds} rounds against the Council on the reference map; {cells} cells at the end; {}",
            rec.discard_line(0)
        );
        notes.push(Line::new(
            "test-match",
            json!({"rounds": rounds, "cells": cells, "discarded": discarded, "discards": discards}),
            text,
        ));
        if let Some(log) = &played.logs[0] {
            let path = log.display().to_string();
            notes.push(Line::new("log", json!({"path": path}), format!("log: {path}")));
        }
    }
    // Whether the test match ran as at the judge (no network, no other files), in one line.
    let isolation = crate::runner::sandbox::isolation(test.sandbox);
    if checked_in.is_none() {
        // No test match was played: nothing to say of where it ran.
    } else if isolation.sandboxed {
        let text = format!("test match {}: as at the judge, no network and no files but its own", isolation.line());
        notes.push(Line::new("sandboxed", json!({"how": isolation.detail}), text));
    } else {
        let text = format!("the test match ran {}", isolation.line());
        warnings.push(Line::new("not-sandboxed", json!({"why": isolation.detail}), text));
    }
    Ok(CheckReport {
        file: shown,
        problems,
        notes,
        warnings,
        timing,
        startup,
        slowest,
        time_limit,
        meta,
        violations,
        isolation,
        run_dir: checked_in,
    })
}

/// A violation of the test match, as the report words it.
fn violation_line(round: u32, kind: ViolationKind, detail: &str) -> Line {
    let text = format!("violation in round {round}: {} — {detail}", kind.wire());
    Line::new("violation", json!({"round": round, "kind": kind.wire(), "detail": detail}), text)
}

#[cfg(test)]
mod tests {
    use super::LINE_CODES;

    /// The list of codes is the codes the report's lines are made with, no more, no fewer.
    #[test]
    fn line_codes_are_the_codes_the_report_uses() {
        let whole = include_str!("check.rs");
        let source = &whole[..whole.find("#[cfg(test)]").expect("this module")];
        // `Line::new(` then the code's literal (on the next line when rustfmt breaks the call).
        let mut used: Vec<&str> = source
            .match_indices("Line::new(")
            .filter_map(|(at, m)| source[at + m.len()..].trim_start().strip_prefix('"'))
            .map(|rest| rest.split('"').next().expect("a code"))
            .collect();
        used.sort_unstable();
        used.dedup();
        let mut listed = LINE_CODES.to_vec();
        listed.sort_unstable();
        assert_eq!(used, listed);
    }
}
