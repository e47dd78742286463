//! Forks (`gbely play --from R --round N`): a match continued from the start of any round of a
//! replay with the agents given. The engine is deterministic and the Council decides from its
//! observation alone, so a fork with the same memoryless agents ends as the original did; with
//! another agent it differs from the fork's round on, never before. (Unix: the agents are the
//! Python examples, and the source's SHA-256 comes from `sha256sum`.)
#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use gbely_engine::replays::read_replay;
use gbely_world::Replay;

use crate::common::scratch;

fn gbely(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gbely")).args(args).current_dir(dir).output().expect("runs")
}

fn ok(dir: &Path, args: &[&str]) -> String {
    let out = gbely(dir, args);
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "gbely {args:?}: {text}");
    text
}

fn refused(dir: &Path, args: &[&str]) -> String {
    let out = gbely(dir, args);
    assert!(!out.status.success(), "gbely {args:?} should fail");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The replay's JSON with no answer times (measured, not played).
fn untimed(replay: &Replay) -> Replay {
    let mut r = replay.clone();
    for t in &mut r.turns {
        t.answer_ms.clear();
    }
    r
}

/// The SHA-256 of a file as `sha256sum` prints it: the source a fork names, computed apart from
/// the engine.
fn sha256sum(file: &Path) -> String {
    let out = Command::new("sha256sum").arg(file).output().expect("sha256sum runs");
    String::from_utf8(out.stdout).unwrap().split_whitespace().next().unwrap().to_string()
}

fn golden(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests").join(name)
}

#[test]
fn a_fork_with_the_same_memoryless_agent_ends_as_the_original_and_another_differs_from_its_round_only() {
    let dir = scratch("fork-duel");
    let common = ["--rounds", "60", "--sandbox", "off", "-q"];
    ok(&dir, &[&["play", "expander", "--replay", "src.json"][..], &common].concat());
    let source = read_replay(&dir.join("src.json")).unwrap();
    ok(
        &dir,
        &["play", "expander", "--from", "src.json", "--round", "40", "--replay", "same.json", "--sandbox", "off", "-q"],
    );
    let same = read_replay(&dir.join("same.json")).unwrap();

    // Where it came from: the source's SHA-256 and the round.
    let fork = same.fork.as_ref().expect("a fork says where it came from");
    assert_eq!((fork.source.as_str(), fork.round), (sha256sum(&dir.join("src.json")).as_str(), 40));
    // The same match to its end: every round, the final state, the result.
    let (a, b) = (untimed(&source), untimed(&same));
    assert_eq!(b.turns, a.turns);
    assert_eq!((&b.final_state, &b.result), (&a.final_state, &a.result));
    // The rounds before the fork keep the source's answer times; the agent answered the others.
    for k in 0..60 {
        assert!(same.turns[k].answer_ms[0].is_some() && same.turns[k].answer_ms[1].is_none(), "round {k}");
    }
    for k in 0..40 {
        assert_eq!(same.turns[k].answer_ms, source.turns[k].answer_ms, "round {k}");
    }
    let verified = ok(&dir, &["replay", "verify", "same.json", "--source", "src.json"]);
    assert!(
        verified.contains("a fork at round 40") && verified.contains("its rounds 0…39 are src.json's"),
        "{verified}"
    );

    // Another agent from round 40: the rounds before are the source's, round 40 is its own.
    ok(
        &dir,
        &[
            "play",
            "template",
            "--from",
            "src.json",
            "--round",
            "40",
            "--replay",
            "other.json",
            "--sandbox",
            "off",
            "-q",
        ],
    );
    let other = untimed(&read_replay(&dir.join("other.json")).unwrap());
    assert_eq!(other.seats[0].name, "template");
    assert_eq!(other.turns[..40], a.turns[..40]);
    assert_ne!(other.turns[40].answers[0], a.turns[40].answers[0]);
    assert_ne!(other.final_state, a.final_state);
    ok(&dir, &["replay", "verify", "other.json", "--source", "src.json"]);
    // Verified against a replay that is not its source, it says so.
    let out = gbely(&dir, &["replay", "verify", "other.json", "--source", "same.json"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(5), "{text}");
    assert!(text.contains("is not its source"), "{text}");
}

#[test]
fn a_final_forks_with_a_seat_given_and_the_others_its_own_built_in_agents() {
    let dir = scratch("fork-final");
    ok(
        &dir,
        &[
            "final",
            "expander-rs",
            "--fill",
            "template-rs",
            "--size",
            "41",
            "--rounds",
            "30",
            "--replay",
            "final.json",
            "-q",
        ],
    );
    let source = read_replay(&dir.join("final.json")).unwrap();
    // Nobody given: every seat keeps its built-in agent, and the fork is the source's match byte
    // for byte but for where it came from (built-in agents are not timed).
    ok(&dir, &["play", "--from", "final.json", "--round", "15", "--replay", "own.json", "-q"]);
    let mut own = read_replay(&dir.join("own.json")).unwrap();
    assert_eq!(own.fork.take().map(|f| f.round), Some(15));
    assert_eq!(own, source);

    // Seat 3 played by another built-in agent from round 15; its rounds before are the source's
    // seat's, decided again by that seat's own built-in.
    let seat3 = format!("3={}", "expander-rs");
    let seated = source.seats[3].builtin.clone().unwrap();
    let replacement = if seated == "expander-rs" { "3=template-rs".to_string() } else { seat3 };
    let summary =
        ok(&dir, &["play", "--from", "final.json", "--round", "15", "--seat", &replacement, "--replay", "seat3.json"]);
    assert!(summary.contains("fork of final.json at round 15") && summary.contains("rank"), "{summary}");
    let forked = read_replay(&dir.join("seat3.json")).unwrap();
    for k in 0..15 {
        assert_eq!(
            (&forked.turns[k].cells, &forked.turns[k].units),
            (&source.turns[k].cells, &source.turns[k].units),
            "round {k}"
        );
    }
    assert_ne!(forked.turns[29].cells, source.turns[29].cells);
    ok(&dir, &["replay", "verify", "seat3.json", "--source", "final.json"]);
}

#[test]
fn replays_of_versions_1_to_3_fork_and_impossible_forks_say_why() {
    let dir = scratch("fork-versions");
    let v1 = golden("fixtures/replay-v1.json");
    let v2 = golden("golden/replay-v2-golden-20.json");
    let v3 = golden("golden/replay-v3-golden-20.json");
    for (file, round) in [(&v1, 6), (&v2, 10), (&v3, 10)] {
        let out = format!("fork-{round}-{}.json", file.file_stem().unwrap().to_string_lossy());
        ok(
            &dir,
            &[
                "play",
                "template",
                "--from",
                file.to_str().unwrap(),
                "--round",
                &round.to_string(),
                "--replay",
                &out,
                "--sandbox",
                "off",
                "-q",
            ],
        );
        let source = read_replay(file).unwrap();
        let forked = read_replay(&dir.join(&out)).unwrap();
        assert_eq!(forked.version, gbely_world::replay::REPLAY_VERSION);
        assert_eq!(forked.rounds, source.rounds);
        for k in 0..round {
            assert_eq!(
                (&forked.turns[k].cells, &forked.turns[k].units),
                (&source.turns[k].cells, &source.turns[k].units)
            );
        }
        ok(&dir, &["replay", "verify", &out, "--source", file.to_str().unwrap()]);
    }

    let v3s = v3.to_str().unwrap();
    let why = refused(&dir, &["play", "template", "--from", v3s, "--round", "20"]);
    assert!(why.contains("round 20 is past the match's last round (19)"), "{why}");
    let why = refused(&dir, &["play", "template", "--from", v3s, "--round", "5", "--seat", "7=template"]);
    assert!(why.contains("--seat 7: the replay's map has seats 0…1"), "{why}");
    let why = refused(&dir, &["play", "template", "--from", v3s, "--round", "5", "--rounds", "30"]);
    assert!(why.contains("a fork plays the rounds of the match it continues (20"), "{why}");
    // A seat whose agent is not in the replay must be given.
    let named = std::fs::read_to_string(&v3).unwrap().replacen("\"name\":\"expander\"", "\"name\":\"my bot\"", 1);
    std::fs::write(dir.join("named.json"), named).unwrap();
    let why = refused(&dir, &["play", "--from", "named.json", "--round", "5"]);
    assert!(why.contains("seat 0 (my bot) of named.json played by an agent that is not in the replay"), "{why}");
    // A replay whose recorded rounds this build plays otherwise is refused, never continued.
    let tampered = std::fs::read_to_string(&v3).unwrap();
    let mut replay = Replay::from_json(&tampered).unwrap();
    replay.turns[2].units[0] += 1.0;
    std::fs::write(dir.join("tampered.json"), replay.to_json()).unwrap();
    let why = refused(&dir, &["play", "template", "--from", "tampered.json", "--round", "5"]);
    assert!(why.contains("its round 2 does not re-simulate here as it was recorded"), "{why}");
}
