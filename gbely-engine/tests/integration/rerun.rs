//! `gbely replay rerun`: a replay's observations fed again to an agent, under the judge's clock.
//! A recorded timeout and crash recur at their rounds, an identical agent answers the same in
//! every round, a changed one differs from the round it changed, and the agent is restarted
//! where the judge restarted it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::common::scratch;

/// A second a round: room for the interpreter's start under a loaded machine, and a sleep of
/// 1.6 s is a timeout for sure.
const LIMIT: &str = "1";

fn gbely(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gbely")).args(args).current_dir(dir).output().expect("runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The example expander (it keeps no memory between rounds), with `prologue` run first in
/// every `decide`.
fn expander_with(dir: &Path, file: &str, prologue: &str) -> PathBuf {
    let src = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../agents/expander.py")).unwrap();
    assert!(src.contains("def decide(stav):\n"));
    let path = dir.join(file);
    std::fs::write(&path, src.replacen("def decide(stav):\n", &format!("def decide(stav):\n{prologue}"), 1)).unwrap();
    path
}

/// Plays `agent` against the Council for `rounds` rounds on a small map; the replay's path.
fn play(dir: &Path, agent: &Path, rounds: u32) -> PathBuf {
    let replay = dir.join("match.json.gz");
    let rounds = rounds.to_string();
    let out = gbely(
        dir,
        &[
            "play",
            agent.to_str().unwrap(),
            "--map",
            "seed:rerun",
            "--size",
            "24",
            "--rounds",
            &rounds,
            "--time-limit",
            LIMIT,
            "--replay",
            replay.to_str().unwrap(),
            "--run-dir",
            dir.join("played").to_str().unwrap(),
            "-q",
        ],
    );
    assert!(out.status.code().is_some_and(|c| c == 0 || c == 3), "{}", text(&out.stderr));
    replay
}

/// `replay rerun --json` of seat 0 with `agent`: the exit code and the report.
fn rerun(dir: &Path, replay: &Path, agent: &Path, extra: &[&str]) -> (i32, Value) {
    let mut args = vec![
        "replay",
        "rerun",
        replay.to_str().unwrap(),
        "--agent",
        agent.to_str().unwrap(),
        "--time-limit",
        LIMIT,
        "--json",
    ];
    args.extend_from_slice(extra);
    let out = gbely(dir, &args);
    let report = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out.stderr)));
    (out.status.code().unwrap(), report)
}

/// Each round's (round, same, what it did now) of a report.
fn rounds(report: &Value) -> Vec<(u64, bool, String)> {
    report["rounds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let now = r["now"]["violation"].as_str().map_or("commands".to_string(), String::from);
            (r["round"].as_u64().unwrap(), r["same"].as_bool().unwrap(), now)
        })
        .collect()
}

#[test]
fn a_recorded_timeout_and_crash_recur_at_their_rounds_and_nothing_else_differs() {
    let dir = scratch("recur");
    let prologue = "    if stav[\"kolo\"] == 3:\n        import time\n        time.sleep(1.6)\n    if stav[\"kolo\"] == 6:\n        raise RuntimeError(\"round six\")\n";
    let agent = expander_with(&dir, "flaky.py", prologue);
    let replay = play(&dir, &agent, 9);
    let recorded = gbely_engine::replays::read_replay(&replay).unwrap();
    let kinds: Vec<(usize, String)> = recorded
        .turns
        .iter()
        .enumerate()
        .filter_map(|(r, t)| match &t.answers[0] {
            gbely_world::replay::Answer::Violation(v) => Some((r, v.kind.wire().to_string())),
            _ => None,
        })
        .collect();
    assert_eq!(kinds, [(3, "timeout".to_string()), (6, "crash".to_string())]);

    let (code, report) = rerun(&dir, &replay, &agent, &[]);
    assert_eq!(code, 7, "a violation in the rerun: exit code 7\n{report:#}");
    let report_all = report.clone();
    let rows = rounds(&report);
    assert_eq!(rows.len(), 9);
    for (round, same, now) in &rows {
        let want = match round {
            3 => "timeout",
            6 => "crash",
            _ => "commands",
        };
        assert_eq!((now.as_str(), *same), (want, true), "round {round}\n{report:#}");
    }
    let summary = &report["summary"];
    assert_eq!(summary["first_difference"], Value::Null);
    assert_eq!(summary["same"], 9);
    let violations: Vec<(u64, &str, &str)> = summary["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| (v["round"].as_u64().unwrap(), v["kind"].as_str().unwrap(), v["recorded"].as_str().unwrap()))
        .collect();
    assert_eq!(violations, [(3, "timeout", "timeout"), (6, "crash", "crash")]);
    // The timeout took the limit; the agent was started again after each violation.
    assert!(report["rounds"][3]["seconds"].as_f64().unwrap() >= 1.0, "{report:#}");
    let started: Vec<u64> = report["rounds"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["started"] == true)
        .map(|r| r["round"].as_u64().unwrap())
        .collect();
    assert_eq!(started, [0, 4, 7]);

    // The plain expander, on the same replay: it answers in rounds 3 and 6, which differ from the
    // recorded violations, and it is restarted after them all the same, as the judge's agent was.
    let plain = expander_with(&dir, "plain.py", "");
    let (code, report) = rerun(&dir, &replay, &plain, &["--rounds", "2..5"]);
    assert_eq!(code, 0, "no violation now: exit code 0\n{report:#}");
    let rows = rounds(&report);
    let same: Vec<(u64, bool)> = rows.iter().map(|(r, s, _)| (*r, *s)).collect();
    assert_eq!(same, [(2, true), (3, false), (4, true), (5, true)]);
    assert_eq!(report["summary"]["first_difference"], 3);
    assert_eq!(report["rounds"][2]["started"], true, "restarted after the recorded timeout\n{report:#}");
    assert_eq!(report["rounds"][3]["started"], false);

    // The text report names the rounds and the kinds.
    let out = gbely(
        &dir,
        &["replay", "rerun", replay.to_str().unwrap(), "--agent", agent.to_str().unwrap(), "--time-limit", LIMIT],
    );
    let s = text(&out.stdout);
    assert!(s.contains("violations now: timeout in round 3, crash in round 6"), "{s}");
    assert!(s.contains("same answer as recorded: 9 of 9 rounds"), "{s}");
    // The replay's times (version 4) beside the new ones: each round's, and in the text on the
    // rounds listed (the timeout's and the crash's).
    for (r, t) in recorded.turns.iter().enumerate() {
        let ms = t.answer_ms[0].expect("a process's answer is timed");
        assert_eq!(report_all["rounds"][r]["recorded_seconds"].as_f64(), Some(f64::from(ms) / 1000.0), "round {r}");
    }
    for r in [3, 6] {
        let ms = recorded.turns[r].answer_ms[0].unwrap();
        let line = s.lines().find(|l| l.starts_with(&format!("round {r:>4}  "))).unwrap_or_else(|| panic!("{s}"));
        assert!(line.contains(&format!(" s (recorded {:.3} s)", f64::from(ms) / 1000.0)), "{line}");
    }
}

#[test]
fn an_identical_agent_answers_the_same_and_a_changed_one_differs_from_its_round() {
    let dir = scratch("differs");
    let agent = expander_with(&dir, "expander.py", "");
    let replay = play(&dir, &agent, 10);
    let (code, report) = rerun(&dir, &replay, &agent, &[]);
    assert_eq!(code, 0, "{report:#}");
    assert!(rounds(&report).iter().all(|(_, same, _)| *same), "{report:#}");
    assert_eq!(report["summary"]["first_difference"], Value::Null);
    assert_eq!(report["recorded_name"], "expander.py");

    let changed = expander_with(&dir, "changed.py", "    if stav[\"kolo\"] >= 6:\n        return []\n");
    let (code, report) = rerun(&dir, &replay, &changed, &[]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["summary"]["first_difference"], 6, "{report:#}");
    let row = &report["rounds"][6];
    assert_eq!(row["difference"]["index"], 0);
    assert_eq!(row["difference"]["now"], Value::Null, "the changed agent sent nothing\n{report:#}");
    assert!(row["difference"]["recorded"]["typ"].is_string(), "{report:#}");
}

#[test]
fn a_file_that_is_no_replay_a_seat_out_of_range_and_a_missing_agent_are_one_line_each() {
    let dir = scratch("errors");
    let agent = expander_with(&dir, "expander.py", "");
    std::fs::write(dir.join("notes.json"), "{\"hello\": 1}").unwrap();
    let replay = play(&dir, &agent, 2);
    let cases: [(&[&str], &str); 3] = [
        (&["replay", "rerun", "notes.json", "--agent", "expander.py"], "notes.json"),
        (
            &["replay", "rerun", replay.to_str().unwrap(), "--seat", "5", "--agent", "expander.py"],
            "seat 5 does not exist",
        ),
        (&["replay", "rerun", replay.to_str().unwrap(), "--agent", "missing.py"], "`missing.py` not found"),
    ];
    for (args, want) in cases {
        let out = gbely(&dir, args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.starts_with("gbely: error: ") && err.contains(want), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}
