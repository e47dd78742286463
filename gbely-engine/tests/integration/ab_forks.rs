//! Paired forks (`gbely ab A B --from-replays DIR --at 10,20`): pair k is A, then B, taking over
//! at the k-th fork point (the replays by file name, then the rounds), the Council keeping its
//! seat. Built-in agents only (`expander-rs`, `template-rs`): fast and the same on every OS.

use std::path::Path;
use std::process::{Command, Output};

use gbely_engine::replays::read_replay;
use gbely_world::Replay;
use serde_json::Value;

use crate::common::scratch;

fn gbely(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gbely")).args(args).current_dir(dir).output().expect("runs")
}

/// `gbely ab A B --from-replays reps --at …` and its `--json` document, with its stderr.
fn ab(dir: &Path, args: &[&str]) -> (Value, String) {
    let out = gbely(dir, &[&["ab", "--from-replays", "reps", "--time-limit", "off", "--json"][..], args].concat());
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "gbely ab {args:?}: {err}");
    (serde_json::from_slice(&out.stdout).unwrap(), err)
}

fn refused(dir: &Path, args: &[&str]) -> String {
    let out = gbely(dir, &[&["ab", "--time-limit", "off"][..], args].concat());
    assert!(!out.status.success(), "gbely ab {args:?} should fail");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A folder `reps` of four replays of the expander against the Council — `m0`…`m2` of 30 rounds,
/// `s` of 15 — a file that is JSON but no replay, and one that is neither (not looked at).
fn replays(name: &str) -> std::path::PathBuf {
    let dir = scratch(name);
    let reps = dir.join("reps");
    std::fs::create_dir_all(&reps).unwrap();
    for (file, rounds, seed) in
        [("m0.json.gz", "30", "a"), ("m1.json.gz", "30", "b"), ("m2.json", "30", "c"), ("s.json.gz", "15", "d")]
    {
        let out = gbely(
            &dir,
            &["play", "expander-rs", "--map", &format!("seed:abf-{seed}"), "--rounds", rounds, "--replay"]
                .into_iter()
                .chain([&*format!("reps/{file}"), "-q"])
                .collect::<Vec<_>>(),
        );
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    std::fs::write(reps.join("notes.json"), "{\"not\": \"a replay\"}").unwrap();
    std::fs::write(reps.join("readme.txt"), "not looked at").unwrap();
    dir
}

/// A replay without its measured answer times.
fn untimed(replay: &Replay) -> Replay {
    let mut r = replay.clone();
    for t in &mut r.turns {
        t.answer_ms.clear();
    }
    r
}

fn outcomes(doc: &Value) -> Vec<f64> {
    doc["outcomes"].as_array().unwrap().iter().map(|o| o.as_f64().unwrap()).collect()
}

#[test]
fn a_pair_per_fork_point_in_order_each_from_the_same_state() {
    let dir = replays("points");
    // Wide hypotheses (±50 share points): no verdict before the points run out.
    let wide = ["--share0", "-50", "--share1", "50"];
    let (doc, err) = ab(&dir, &[&["expander-rs", "template-rs", "--at", "10,20"][..], &wide].concat());
    // Three 30-round replays at 10 and 20, the 15-round one at 10 only: 7 points, 7 pairs.
    let names: Vec<&str> = doc["pair_maps"].as_array().unwrap().iter().map(|p| p["map"].as_str().unwrap()).collect();
    let sep = std::path::MAIN_SEPARATOR;
    let want: Vec<String> = ["m0.json.gz@10", "m0.json.gz@20", "m1.json.gz@10", "m1.json.gz@20", "m2.json@10"]
        .into_iter()
        .chain(["m2.json@20", "s.json.gz@10"])
        .map(|p| format!("reps{sep}{p}"))
        .collect();
    assert_eq!(names, want, "{doc}");
    assert_eq!(doc["pairs"], 7);
    assert_eq!(doc["verdict"], "undecided", "{doc}");
    assert_eq!(doc["forks"]["points"], 7);
    assert_eq!(doc["forks"]["files"], 4);
    assert_eq!(doc["forks"]["used"], 7);
    // What was left out is said: round 20 of the 15-round match, the file that is no replay.
    assert!(
        err.contains(&format!("reps{sep}s.json.gz: round 20 skipped: round 20 is past the match's last round (14)")),
        "{err}"
    );
    assert!(err.contains(&format!("reps{sep}notes.json: skipped, not a replay")), "{err}");
    assert!(!err.contains("readme"), "{err}");

    // Pair 3 (m1 at 20): both matches replay the source's first 20 rounds, then differ.
    let source = untimed(&read_replay(&dir.join("reps/m1.json.gz")).unwrap());
    let leg =
        |l: &str| untimed(&read_replay(&dir.join(format!("gbely-ab/runs/pair00003/{l}/replay.json.gz"))).unwrap());
    let (a, b) = (leg("a"), leg("b"));
    // The same rounds: the source's state round by round (its built-in's answers, decided again,
    // are recorded as commands where another agent plays its seat), the same in both legs.
    let state = |r: &Replay| -> Vec<_> {
        r.turns[..20].iter().map(|t| (t.round, t.cells.clone(), t.units.clone(), t.discarded.clone())).collect()
    };
    assert_eq!(state(&a), state(&source));
    assert_eq!(state(&b), state(&source));
    assert_eq!(a.fork.as_ref().unwrap().round, 20);
    assert_eq!(a.fork, b.fork);
    assert_eq!((a.seats[0].name.as_str(), b.seats[0].name.as_str()), ("expander-rs", "template-rs"));
    assert_eq!((a.seats[1].name.as_str(), b.seats[1].name.as_str()), ("council", "council"));
    assert_ne!(a.turns[20..], b.turns[20..]);

    // Each outcome is B's share at the end minus A's: here from the legs' replays.
    let share = |r: &Replay| r.result.sides[0].score.unwrap();
    assert!((outcomes(&doc)[3] - (share(&b) - share(&a))).abs() < 1e-9, "{doc}");

    // --max-pairs caps the points used.
    let (doc, _) = ab(
        &dir,
        &[&["expander-rs", "template-rs", "--at", "10,20", "--max-pairs", "3", "--db", "cap.sqlite"][..], &wide]
            .concat(),
    );
    assert_eq!(doc["pairs"], 3);
    assert_eq!(doc["forks"]["points"], 7);
    assert_eq!(doc["forks"]["used"], 3);
}

#[test]
fn the_same_agent_draws_every_pair_and_a_better_one_wins_them() {
    let dir = replays("verdicts");
    // The same agent from the same state plays the same moves: every outcome is exactly 0.
    let (doc, _) = ab(&dir, &["expander-rs", "expander-rs", "--at", "10,20", "--db", "same.sqlite"]);
    assert!(outcomes(&doc).iter().all(|&o| o == 0.0), "{doc}");
    assert_ne!(doc["verdict"], "better");
    // Against the Council the template's all-out attacks gain more cells than the expander's
    // build-up in the rounds left: B wins the pairs, and the swapped test loses each by as much.
    let wide = ["--share0", "-50", "--share1", "50"];
    let (up, _) =
        ab(&dir, &[&["expander-rs", "template-rs", "--at", "10,20", "--db", "up.sqlite"][..], &wide].concat());
    let (down, _) =
        ab(&dir, &[&["template-rs", "expander-rs", "--at", "10,20", "--db", "down.sqlite"][..], &wide].concat());
    let (up, down) = (outcomes(&up), outcomes(&down));
    assert_eq!(up.len(), 7);
    assert!(up.iter().filter(|&&o| o > 0.0).count() >= 6, "{up:?}");
    assert!(up.iter().zip(&down).all(|(u, d)| (u + d).abs() < 1e-9), "{up:?} {down:?}");
}

#[test]
fn no_replay_no_round_reached_and_settings_that_do_not_fit_are_refused() {
    let dir = replays("refused");
    std::fs::create_dir_all(dir.join("empty")).unwrap();
    let err = refused(&dir, &["expander-rs", "template-rs", "--from-replays", "empty", "--at", "10"]);
    assert!(err.contains("no replay (*.json, *.json.gz) in empty"), "{err}");
    let err = refused(&dir, &["expander-rs", "template-rs", "--from-replays", "reps", "--at", "30,45"]);
    assert!(err.contains("no fork point in reps at rounds 30, 45"), "{err}");
    assert!(err.contains("round 30 is past the match's last round (29)"), "{err}");
    // A fork plays its source's rounds.
    let err = refused(&dir, &["expander-rs", "template-rs", "--from-replays", "reps", "--at", "10", "--rounds", "40"]);
    assert!(err.contains("--rounds 40: a fork plays the rounds of the match it continues"), "{err}");
    // The opponents are the replays' own agents; the rounds are needed.
    let err =
        refused(&dir, &["expander-rs", "template-rs", "--from-replays", "reps", "--at", "10", "--against", "council"]);
    assert!(err.contains("--against"), "{err}");
    let err = refused(&dir, &["expander-rs", "template-rs", "--from-replays", "reps"]);
    assert!(err.contains("--at"), "{err}");
    // The Council's seat of a duel is no army's.
    let err = refused(&dir, &["expander-rs", "template-rs", "--from-replays", "reps", "--at", "10", "--seat", "1"]);
    assert!(err.contains("seat 1 is the Council's"), "{err}");
}
