//! The `gbely` command as a user runs it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::scratch;

fn gbely(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gbely")).args(args).current_dir(dir).output().expect("runs")
}

fn agents_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../agents"))
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn the_template_against_the_council_with_a_summary_and_a_replay() {
    let dir = scratch("play");
    let agent = agents_dir().join("my_agent.py");
    let out = gbely(&dir, &[agent.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(s.contains("my_agent.py vs council on gbely (60×60), 150 rounds played"), "{s}");
    assert!(s.contains("share") && s.contains("tie-break"), "{s}");
    assert!(s.contains("discarded"), "{s}");
    let replay_line = s.lines().find(|l| l.trim_start().starts_with("replay: ")).expect("replay path");
    let path = dir.join(replay_line.trim_start().trim_start_matches("replay: ").split_whitespace().next().unwrap());
    assert!(path.to_string_lossy().ends_with("replay.json.gz"));
    let replay = gbely_engine::replays::read_replay(&path).unwrap();
    assert_eq!(replay.turns.len(), 150);
    assert_eq!(replay.seats[0].name, "my_agent.py");
    // The template loses to the Council.
    let r = &replay.result.sides;
    assert!(r[0].cells < r[1].cells, "{r:?}");
}

#[test]
fn a_duel_of_two_agent_files_as_json() {
    let dir = scratch("duel");
    let a = agents_dir().join("expander.py");
    let b = agents_dir().join("my_agent.py");
    let out = gbely(
        &dir,
        &[
            "play",
            a.to_str().unwrap(),
            "--opponent",
            b.to_str().unwrap(),
            "--map",
            "seed:duel",
            "--size",
            "24",
            "--rounds",
            "40",
            "--json",
            "--no-replay",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["size"], serde_json::json!([24, 24]));
    assert_eq!(doc["sides"][0]["name"], "expander.py");
    assert_eq!(doc["sides"][1]["name"], "my_agent.py");
    let (c0, c1) = (doc["sides"][0]["cells"].as_u64().unwrap(), doc["sides"][1]["cells"].as_u64().unwrap());
    assert!(c0 > 1 && c1 > 1);
    let shares = doc["sides"][0]["score"].as_f64().unwrap() + doc["sides"][1]["score"].as_f64().unwrap();
    assert!(shares <= 100.0);
    assert_eq!(doc["replay"], serde_json::Value::Null);
    assert!(doc["sides"][1]["details"]["log"].as_str().unwrap().ends_with("seat1-my_agent.log"));
}

#[test]
fn a_disqualified_agent_gives_exit_code_3() {
    let dir = scratch("dq");
    std::fs::write(dir.join("bad.py"), "def decide(stav):\n    return 'nonsense'\n").unwrap();
    let out = gbely(&dir, &["bad.py", "--rounds", "10", "--quiet"]);
    assert_eq!(out.status.code(), Some(3));
}

#[test]
fn check_passes_a_good_file() {
    let dir = scratch("check-good");
    let agent = agents_dir().join("expander.py");
    let out = gbely(&dir, &["check", agent.to_str().unwrap(), "--rounds", "10"]);
    let s = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{s}{}", text(&out.stderr));
    assert!(s.contains("the submission passes the check"), "{s}");
    assert!(s.contains("max") && s.contains("p95"), "{s}");
}

#[test]
fn check_fails_bad_files_and_says_why() {
    let dir = scratch("check-bad");
    std::fs::write(dir.join("numpy_agent.py"), "import numpy as np\nimport json\ndef decide(stav):\n    return []\n")
        .unwrap();
    std::fs::write(dir.join("no_decide.py"), "def think(stav):\n    return []\n").unwrap();
    std::fs::write(
        dir.join("huge.py"),
        format!("X = '{}'\ndef decide(stav):\n    return []\n", "a".repeat(600 * 1024)),
    )
    .unwrap();
    std::fs::write(dir.join("slow.py"), "import time\ndef decide(stav):\n    time.sleep(2.5)\n    return []\n")
        .unwrap();
    for (file, why) in [
        ("numpy_agent.py", "outside the standard library"),
        ("no_decide.py", "no top-level function decide"),
        ("huge.py", "the limit is 524288"),
    ] {
        let out = gbely(&dir, &["check", file, "--rounds", "2"]);
        let s = text(&out.stdout);
        assert_eq!(out.status.code(), Some(4), "{file}: {s}");
        assert!(s.contains(why), "{file}: `{why}` not in\n{s}");
        assert!(s.contains("would FAIL"), "{s}");
    }
}

/// The rules refuse a file for what it is (§8), not for violations a match tolerates: an agent
/// whose answers are unreadable in three rounds passes the check with warnings, and fails it
/// only with `--strict`; a file that the compiler refuses (though it parses) fails before any
/// match is played.
#[test]
fn check_warns_of_violations_and_fails_them_only_when_strict() {
    let dir = scratch("check-violations");
    std::fs::write(dir.join("three.py"), "def decide(stav):\n    return 'nonsense' if stav['kolo'] < 3 else []\n")
        .unwrap();
    std::fs::write(dir.join("slow.py"), "import time\ndef decide(stav):\n    time.sleep(2.5)\n    return []\n")
        .unwrap();
    let out = gbely(&dir, &["check", "three.py", "--rounds", "6"]);
    let s = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{s}");
    assert!(s.contains("passes the check"), "{s}");
    for round in 0..3 {
        assert!(s.contains(&format!("WARN  violation in round {round}: unreadable")), "round {round}:\n{s}");
    }
    assert!(!s.contains("violation in round 3"), "{s}");
    assert!(s.contains("3 violations in the test match"), "{s}");
    let out = gbely(&dir, &["check", "three.py", "--rounds", "6", "--strict"]);
    let s = text(&out.stdout);
    assert_eq!(out.status.code(), Some(4), "{s}");
    assert!(s.contains("FAIL  violation in round 2: unreadable") && s.contains("would FAIL"), "{s}");
    let json: serde_json::Value =
        serde_json::from_slice(&gbely(&dir, &["check", "three.py", "--rounds", "6", "--json"]).stdout).unwrap();
    assert_eq!(
        (json["ok"].as_bool(), json["ok_strict"].as_bool(), json["violations"].as_u64()),
        (Some(true), Some(false), Some(3))
    );
    // Two timeouts in two rounds: warned, not failed; --strict fails it.
    let s = text(&gbely(&dir, &["check", "slow.py", "--rounds", "2"]).stdout);
    assert!(s.contains("WARN  violation in round 0: timeout") && s.contains("passes the check"), "{s}");
    assert_eq!(gbely(&dir, &["check", "slow.py", "--rounds", "2", "--strict"]).status.code(), Some(4));
}

#[test]
fn check_refuses_what_the_compiler_refuses_before_playing() {
    let dir = scratch("check-compile");
    let nested = format!("x = {}1\ndef decide(stav):\n    return []\n", "-".repeat(400_000));
    for (file, source) in [
        ("ret.py", "return 1\ndef decide(stav):\n    return []\n"),
        ("dup.py", "def decide(stav, stav):\n    return []\n"),
        ("colon.py", "def decide(stav)\n    return []\n"),
        // A nesting bomb: the file's fault, said as such.
        ("nested.py", nested.as_str()),
    ] {
        std::fs::write(dir.join(file), source).unwrap();
        let out = gbely(&dir, &["check", file, "--rounds", "2"]);
        let s = text(&out.stdout);
        assert_eq!(out.status.code(), Some(4), "{file}: {s}");
        assert!(s.contains("FAIL  the file does not parse: "), "{file}: {s}");
        assert!(!s.contains("does not parse: \n"), "{file}: the reason is said:\n{s}");
        if file == "nested.py" {
            assert!(s.contains("nested too deeply for Python's parser"), "{s}");
        }
        assert!(!s.contains("test match"), "{file}: no test match is played or reported:\n{s}");
    }
}

#[test]
fn errors_are_one_clear_line_with_a_meaningful_exit_code() {
    let dir = scratch("errors");
    let out = gbely(&dir, &["missing.py"]);
    assert_eq!(out.status.code(), Some(1));
    let e = text(&out.stderr);
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(e.contains("agent `missing.py` not found"), "{e}");
    assert!(!dir.join("gbely-runs").exists(), "nothing written for a failed start");

    std::fs::write(dir.join("broken.map"), "gbely-map 1\nname x\nsize 3 3\nterrain\n").unwrap();
    let out = gbely(&dir, &["map", "show", "--map", "broken.map"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("broken.map: line"), "{}", text(&out.stderr));

    let out = gbely(&dir, &["play", "x.py", "--bogus"]);
    assert_eq!(out.status.code(), Some(2));
    let out = gbely(&dir, &["play", "--map", "seed:a", "--size", "5", "council"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("out of range"), "{}", text(&out.stderr));
}

#[test]
fn map_export_writes_a_file_that_plays() {
    let dir = scratch("maps");
    let out = gbely(&dir, &["map", "export", "--map", "seed:exported", "--size", "20x16", "-o", "m.map"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stats = gbely(&dir, &["map", "stats", "--map", "m.map"]);
    let s = text(&stats.stdout);
    assert!(s.contains("(20×16)") && s.contains("symmetric    yes"), "{s}");
    let show = gbely(&dir, &["map", "show", "m.map"]);
    assert_eq!(text(&show.stdout).lines().count(), 2 + 16);
    let play = gbely(&dir, &["play", "council", "--map", "m.map", "--rounds", "20", "--quiet"]);
    assert!(play.status.success(), "{}", text(&play.stderr));
}

#[test]
fn help_teaches() {
    let out = gbely(Path::new("."), &["--help"]);
    let s = text(&out.stdout);
    assert!(out.status.success());
    for word in ["play", "check", "map", "Exit codes", "gbely my_agent.py"] {
        assert!(s.contains(word), "{word} missing from --help:\n{s}");
    }
}

#[test]
fn replay_commands_view_show_verify_stats() {
    let dir = scratch("replay");
    let out = gbely(
        &dir,
        &["play", "expander", "--map", "seed:r", "--size", "20", "--rounds", "30", "--replay", "r.json.gz", "--quiet"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v = gbely(&dir, &["replay", "verify", "r.json.gz"]);
    assert_eq!(v.status.code(), Some(0), "{}", text(&v.stdout));
    assert!(text(&v.stdout).starts_with("ok: r.json.gz re-simulated: 30 rounds"));
    let view = gbely(&dir, &["replay", "view", "r.json.gz", "-o", "page.html"]);
    assert!(view.status.success() && dir.join("page.html").exists());
    let show = gbely(&dir, &["replay", "show", "r.json.gz", "--round", "10"]);
    let s = text(&show.stdout);
    assert!(s.starts_with("expander vs council on seed:r (20×20) at the end of round 10"), "{s}");
    assert!(!s.contains('\x1b'), "no colours when not a terminal");
    // The map, a line per seat, and the legend (its seats, then the neutral cells); then the
    // notes of the round (the expander notes its five best targets).
    let (board, notes) = s.split_once("# notes of seat 0 (expander) in round 10\n").expect("the expander's notes");
    assert_eq!(board.lines().count(), 1 + 20 + 2 + 2);
    assert_eq!(notes.lines().filter(|l| l.contains(": target: needs ")).count(), 5, "{notes}");
    assert!(s.contains("legend:  0A expander (army)  1B council (council)\n"), "{s}");
    let obs = gbely(&dir, &["replay", "show", "r.json.gz", "--round", "3", "--seat", "0", "--observation", "--json"]);
    let s = text(&obs.stdout);
    let lines: Vec<&str> = s.lines().collect();
    let o: serde_json::Value = serde_json::from_str(lines[1]).unwrap();
    assert_eq!(o["kolo"], 3);
    assert_eq!(o["moja_zakladna"], "P17_02");
    let answer = s.split("# its answer\n").nth(1).unwrap().lines().next().unwrap();
    let answer: serde_json::Value = serde_json::from_str(answer).unwrap();
    assert!(answer["prikazy"].is_array());
    let stats = gbely(&dir, &["replay", "stats", "r.json.gz", "--json"]);
    let st: serde_json::Value = serde_json::from_slice(&stats.stdout).unwrap();
    assert_eq!(st["rounds"].as_array().unwrap().len(), 30);
    assert_eq!(st["sides"][0]["name"], "expander");
    // A tampered file fails verification with its own exit code.
    let mut replay = gbely_engine::replays::read_replay(&dir.join("r.json.gz")).unwrap();
    replay.turns[12].cells[0] += 1;
    gbely_engine::recorder::write_replay(&dir.join("bad.json"), &replay).unwrap();
    let bad = gbely(&dir, &["replay", "verify", "bad.json"]);
    assert_eq!(bad.status.code(), Some(5));
    assert!(text(&bad.stdout).contains("MISMATCH in bad.json: round 12"), "{}", text(&bad.stdout));
    std::fs::write(dir.join("junk.json"), "{").unwrap();
    let junk = gbely(&dir, &["replay", "verify", "junk.json"]);
    assert_eq!(junk.status.code(), Some(1));
    assert!(text(&junk.stderr).contains("junk.json"));
}

/// `replay verify manifest.json` (the arena's public results): a manifest naming a played
/// replay with its SHA-256 (computed here with sha2, not by the code under test) and the figures
/// published for its seat verifies, one line for the replay and a summary; a published share
/// that is not the match's, a byte changed in the replay and a path out of the archive each
/// fail with exit code 5 and say where.
#[test]
fn replay_verify_checks_a_results_manifest() {
    use gbely_engine::app::manifest::{ManifestFile, ManifestReplay, PublishedSide, ResultsManifest};
    use sha2::{Digest, Sha256};
    let dir = scratch("manifest");
    std::fs::create_dir_all(dir.join("replays")).unwrap();
    let out = gbely(
        &dir,
        &[
            "play",
            "expander",
            "--map",
            "seed:m",
            "--size",
            "20",
            "--rounds",
            "30",
            "--replay",
            "replays/r.json.gz",
            "--quiet",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let bytes = std::fs::read(dir.join("replays/r.json.gz")).unwrap();
    let sha: String = Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect();
    let side = gbely_engine::replays::read_replay(&dir.join("replays/r.json.gz")).unwrap().result.sides[0].clone();
    assert_eq!(side.name, "expander");
    std::fs::write(dir.join("board.csv"), "place,agent\r\n1,expander\r\n").unwrap();
    let manifest = |share: Option<f64>, path: &str| ResultsManifest {
        format: "gbely-results".into(),
        version: 1,
        competition: "Cup".into(),
        generated: "2026-11-16T08:00:00Z".into(),
        files: vec![ManifestFile {
            path: "board.csv".into(),
            // printf 'place,agent\r\n1,expander\r\n' | sha256sum
            sha256: "c882df0f272d081247010719c66ab6c1a88e0861d081e5ffabccd1811bec8816".into(),
            bytes: 25,
        }],
        replays: vec![ManifestReplay {
            file: ManifestFile { path: path.into(), sha256: sha.clone(), bytes: bytes.len() as u64 },
            kind: "leaderboard".into(),
            submission: Some(7),
            name: "expander".into(),
            place: Some(1),
            flash: None,
            sides: vec![PublishedSide {
                seat: 0,
                name: "expander".into(),
                share,
                cells: side.cells,
                tiebreak: side.tiebreak_round,
                violations: side.violations,
            }],
        }],
    };
    let write =
        |m: &ResultsManifest| std::fs::write(dir.join("manifest.json"), serde_json::to_string(m).unwrap()).unwrap();
    let good = manifest(side.score, "replays/r.json.gz");
    write(&good);
    let v = gbely(&dir, &["replay", "verify", "manifest.json"]);
    let s = text(&v.stdout);
    assert_eq!(v.status.code(), Some(0), "{s}");
    assert_eq!(
        s,
        "ok: board.csv: SHA-256 matches\n\
         ok: replays/r.json.gz (leaderboard, place 1: expander): SHA-256 matches, 30 rounds re-simulated, 1 published seat(s) match\n\
         ok: 1 replay(s) and 1 file(s) of Cup: 1 replay(s) verified, 0 mismatch(es)\n"
    );
    // From another folder: the paths are the manifest's folder's.
    let v = gbely(dir.parent().unwrap(), &["replay", "verify", dir.join("manifest.json").to_str().unwrap()]);
    assert_eq!(v.status.code(), Some(0), "{}", text(&v.stdout));

    // A share that is not the match's.
    let mut wrong = good.clone();
    wrong.replays[0].sides[0].share = side.score.map(|x| x + 0.5);
    write(&wrong);
    let v = gbely(&dir, &["replay", "verify", "manifest.json"]);
    let s = text(&v.stdout);
    assert_eq!(v.status.code(), Some(5), "{s}");
    assert!(
        s.contains(
            "MISMATCH in replays/r.json.gz (leaderboard, place 1: expander): seat 0 is published as expander (share"
        ),
        "{s}"
    );
    assert!(s.ends_with("MISMATCH: 1 replay(s) and 1 file(s) of Cup: 0 replay(s) verified, 1 mismatch(es)\n"), "{s}");

    // A byte of the replay changed.
    write(&good);
    let mut tampered = bytes.clone();
    let k = tampered.len() / 2;
    tampered[k] ^= 1;
    std::fs::write(dir.join("replays/r.json.gz"), &tampered).unwrap();
    let v = gbely(&dir, &["replay", "verify", "manifest.json"]);
    let s = text(&v.stdout);
    assert_eq!(v.status.code(), Some(5), "{s}");
    assert!(s.contains("MISMATCH in replays/r.json.gz (leaderboard, place 1: expander): its SHA-256 is "), "{s}");
    assert!(s.contains(&format!("the manifest says {sha}")), "{s}");
    std::fs::write(dir.join("replays/r.json.gz"), &bytes).unwrap();

    // A path out of the archive is refused, not read.
    write(&manifest(side.score, "../manifest/replays/r.json.gz"));
    let v = gbely(&dir, &["replay", "verify", "manifest.json"]);
    let s = text(&v.stdout);
    assert_eq!(v.status.code(), Some(5), "{s}");
    assert!(s.contains("`../manifest/replays/r.json.gz` is not a path inside the archive"), "{s}");
}

#[test]
fn a_final_of_agent_processes_prints_the_table() {
    let dir = scratch("final");
    let agent = agents_dir().join("expander.py");
    let out = gbely(
        &dir,
        &[
            "final",
            agent.to_str().unwrap(),
            "--fill",
            "template",
            "--size",
            "40",
            "--rounds",
            "20",
            "--seat",
            "3",
            "--json",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let table = doc["table"].as_array().unwrap();
    assert_eq!(table.len(), 8);
    let mine = table.iter().find(|r| r["name"] == "expander.py").unwrap();
    assert_eq!(mine["seat"], 3);
    assert_eq!(mine["class"], "edge");
    assert_eq!(doc["sides"].as_array().unwrap().len(), 9);
    assert!(table.iter().all(|r| r["violations"] == 0));
    let names: Vec<&str> = table.iter().map(|r| r["name"].as_str().unwrap()).collect();
    // Seven seats share the name: each is shown with its own seat number, as in every match.
    assert_eq!(names.iter().filter(|n| n.starts_with("template (seat ")).count(), 7, "{names:?}");
    for r in table.iter().filter(|r| r["name"] != "expander.py") {
        assert_eq!(r["name"], format!("template (seat {})", r["seat"]));
    }
    // The text table.
    let out = gbely(&dir, &["final", "template", "--size", "40", "--rounds", "5", "--no-replay"]);
    let s = text(&out.stdout);
    assert!(s.contains("rank") && s.contains("council") && s.contains("hbp (neutral)"), "{s}");
    let bad = gbely(&dir, &["final", "a.py", "b.py", "c.py", "d.py", "e.py", "f.py", "g.py", "h.py", "i.py"]);
    assert_eq!(bad.status.code(), Some(2));
}

/// Regression: a replay error printed its cause twice ("X: not a gbely replay (…): not a gbely
/// replay (…)"), once in the message and once more from the error's source chain.
#[test]
fn replay_and_map_errors_say_their_cause_once() {
    let dir = scratch("replay-errors");
    std::fs::write(dir.join("notareplay.json"), "{\"a\": 1}\n").unwrap();
    for cmd in ["show", "verify", "stats", "view"] {
        let out = gbely(&dir, &["replay", cmd, "notareplay.json"]);
        assert_eq!(out.status.code(), Some(1));
        assert_eq!(text(&out.stderr), "gbely: error: notareplay.json: not a gbely replay (format `none`)\n", "{cmd}");
    }
    std::fs::write(dir.join("junk.json"), "{").unwrap();
    std::fs::write(dir.join("binary.json"), [0x7b, 0xff, 0xfe, 0x00]).unwrap();
    for (file, cause) in
        [("junk.json", "not a replay: EOF"), ("binary.json", "not UTF-8"), ("missing.json", "No such file")]
    {
        let out = gbely(&dir, &["replay", "show", file]);
        let e = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1));
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(e.starts_with("gbely: error: ") && e.contains(file), "{e}");
        assert_eq!(e.matches(cause).count(), 1, "`{cause}` once in {e}");
    }
    std::fs::write(dir.join("bad.map"), "gbely-map 1\nname x\nsize 3 3\nseat army P09_00\n").unwrap();
    let out = gbely(&dir, &["map", "show", "bad.map"]);
    assert_eq!(text(&out.stderr), "gbely: error: bad.map: line 4: seat base `P09_00` is not a cell of a 3×3 map\n");
    let out = gbely(&dir, &["map", "show", "missing.map"]);
    let e = text(&out.stderr);
    assert_eq!((e.lines().count(), e.matches("No such file").count()), (1, 1), "{e}");
}

/// Regression: `--time-limit 1e20` panicked, `0` silently meant "no limit", `--rounds 0` played
/// nothing. Each is refused with one line, exit 2, before anything is written.
#[test]
fn time_limits_and_rounds_out_of_range_are_refused_in_one_line() {
    let dir = scratch("ranges");
    for v in ["0", "-1", "1e20", "nan", "inf", "3600.5", "abc"] {
        let arg = format!("--time-limit={v}");
        for args in [vec!["play", "council", "--rounds", "1"], vec!["final", "template", "--size", "40"]] {
            let out = gbely(&dir, &[&args[..], &[arg.as_str(), "-q"]].concat());
            let e = text(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{args:?} {arg}: {e}");
            assert_eq!(e.lines().count(), 1, "{e}");
            assert!(e.starts_with("gbely: error: ") && e.contains(&format!("'{v}'")), "{e}");
            assert!(e.contains("at most 3600") && e.contains("`off`"), "{e}");
        }
    }
    for v in ["0", "100001"] {
        for args in [vec!["play", "council"], vec!["final", "template"], vec!["check", "x.py"]] {
            let out = gbely(&dir, &[&args[..], &["--rounds", v]].concat());
            let e = text(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{args:?} {v}: {e}");
            assert_eq!(e.lines().count(), 1, "{e}");
            assert!(e.contains("--rounds") && e.contains("1..=100000"), "{e}");
        }
    }
    assert!(!dir.join("gbely-runs").exists(), "nothing written for a refused command line");
    // The bounds are in the help; `off`, `none` and the largest values are accepted.
    let help = text(&gbely(&dir, &["play", "--help"]).stdout);
    assert!(help.contains("1–100000") && help.contains("at most 3600"), "{help}");
    for limit in ["off", "none", "3600", "0.25"] {
        let out = gbely(&dir, &["play", "council", "--rounds", "2", "--time-limit", limit, "-q", "--no-replay"]);
        assert_eq!(out.status.code(), Some(0), "{limit}: {}", text(&out.stderr));
    }
}

/// Regression: a `cmd:` agent whose program is missing played a whole match and ended in a
/// disqualification ("exit status 127"). It is refused before the match, in one line.
#[test]
#[cfg(unix)] // shell scripts as agents
fn a_command_agent_whose_program_cannot_run_is_refused_before_the_match() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("cmd-program");
    std::fs::create_dir(dir.join("a folder")).unwrap();
    std::fs::write(dir.join("plain.txt"), "not a program\n").unwrap();
    let answer_all = "#!/bin/sh\nwhile read line; do echo '{\"prikazy\": []}'; done\n";
    std::fs::write(dir.join("my agent"), answer_all).unwrap();
    std::fs::set_permissions(dir.join("my agent"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let refused = [
        ("no-such-program-gbely", "program `no-such-program-gbely` is not found in PATH"),
        ("./missing --fast", "program `./missing` is not found"),
        ("'./a folder' --fast", "program `./a folder` is a folder"),
        ("./plain.txt", "program `./plain.txt` is not executable"),
        ("\"./my\\ agent\"", "program `./my\\ agent` is not found"),
    ];
    for (cmd, why) in refused {
        let spec = format!("cmd:{cmd}");
        for args in [
            vec!["play", "--agent-cmd", cmd],
            vec!["play", "council", "--opponent", &spec],
            vec!["final", &spec, "--size", "40"],
            vec!["final", "template", "--fill", &spec, "--size", "40"],
        ] {
            let out = gbely(&dir, &[&args[..], &["--rounds", "5", "-q"]].concat());
            let e = text(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{args:?}: {e}");
            assert_eq!(e.lines().count(), 1, "{args:?}: {e}");
            assert!(e.starts_with("gbely: error: ") && e.contains(why), "{args:?}: `{why}` not in {e}");
        }
    }
    assert!(!dir.join("gbely-runs").exists(), "nothing written for a refused agent");
    // Quotes and backslashes are read as the shell reads them; PATH programs are found.
    for cmd in ["'./my agent' --fast", "./my\\ agent", "\"./my agent\"", "sh './my agent'", "false"] {
        let out = gbely(&dir, &["play", "--agent-cmd", cmd, "--rounds", "2", "-q", "--no-replay"]);
        assert_eq!(out.status.code(), Some(0), "{cmd}: {}", text(&out.stderr));
    }
}

/// Issue 22: a script whose `#!` interpreter does not exist played a whole match, crashing every
/// round ("exit status 127") until disqualified. Like a missing program, it is refused before the
/// match, in one line naming the interpreter: a missing path, a `#!/usr/bin/env NAME` whose NAME
/// is not in PATH, a line ending in a carriage return (Windows line endings), and an agent file
/// run as a program.
#[test]
#[cfg(unix)] // shell scripts as agents
fn a_script_whose_interpreter_is_missing_is_refused_before_the_match() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("cmd-shebang");
    let body = "\nimport sys\nfor line in sys.stdin:\n    print('[]', flush=True)\n";
    let scripts = [
        ("bot.py", "#!/no/such/python3"),
        ("env_bot.py", "#!/usr/bin/env -S no-such-python-gbely -u"),
        ("crlf_bot.py", "#!/bin/sh\r"),
        ("bot", "#! /no/such/interpreter --flag"),
        ("good_bot.py", "#!/usr/bin/env python3"),
    ];
    for (file, line) in scripts {
        std::fs::write(dir.join(file), format!("{line}{body}")).unwrap();
        std::fs::set_permissions(dir.join(file), std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let refused = [
        (
            "cmd:./bot.py --fast",
            "program `./bot.py` names the interpreter `/no/such/python3` on its `#!` line, which is not found",
        ),
        (
            "cmd:./env_bot.py",
            "program `./env_bot.py` runs `no-such-python-gbely` through `/usr/bin/env` (its `#!` line), which is not found in PATH",
        ),
        (
            "cmd:./crlf_bot.py",
            "names the interpreter `/bin/sh` followed by a carriage return (the file has Windows line endings)",
        ),
        ("bot", "program `./bot` names the interpreter `/no/such/interpreter` on its `#!` line, which is not found"),
    ];
    for (spec, why) in refused {
        for args in
            [vec!["play", spec], vec!["play", "council", "--opponent", spec], vec!["final", spec, "--size", "40"]]
        {
            let out = gbely(&dir, &[&args[..], &["--rounds", "5", "-q"]].concat());
            let e = text(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{args:?}: {e}");
            assert_eq!(e.lines().count(), 1, "{args:?}: {e}");
            assert!(e.starts_with("gbely: error: ") && e.contains(why), "{args:?}: `{why}` not in {e}");
        }
    }
    assert!(!dir.join("gbely-runs").exists(), "nothing written for a refused agent");
    // An interpreter that exists, found through env; a Python agent file is run by Python, not by
    // its `#!` line, so that line does not matter.
    for args in [["play", "cmd:./good_bot.py"], ["play", "bot.py"]] {
        let out = gbely(&dir, &[&args[..], &["--rounds", "2", "-q", "--no-replay"]].concat());
        assert_ne!(out.status.code(), Some(1), "{args:?}: {}", text(&out.stderr));
    }
}

/// Regression: `final` exited 0 when the user's agent (the first one named) was disqualified;
/// `play` exits 3 then, and so does `final` now, wherever that agent was seated.
#[test]
#[cfg(unix)] // shell scripts as agents
fn a_final_exits_3_when_the_first_agent_is_disqualified() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("final-dq");
    std::fs::write(dir.join("idle.sh"), "#!/bin/sh\nwhile read line; do echo '{\"prikazy\": []}'; done\n").unwrap();
    std::fs::set_permissions(dir.join("idle.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let quick = ["--size", "40", "--rounds", "5", "--no-replay", "--json"];
    // `false` exits at once: a violation every round, disqualified at the fourth (round 3).
    for seat in ["0", "5"] {
        let out =
            gbely(&dir, &[&["final", "cmd:false", "--fill", "cmd:./idle.sh", "--seat", seat], &quick[..]].concat());
        assert_eq!(out.status.code(), Some(3), "seat {seat}: {}", text(&out.stderr));
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let mine = doc["table"].as_array().unwrap().iter().find(|r| r["name"] == "false").unwrap().clone();
        assert_eq!((mine["seat"].to_string(), mine["disqualified"].clone()), (seat.to_string(), true.into()));
    }
    // Disqualified fills do not change the exit code.
    let out = gbely(&dir, &[&["final", "cmd:./idle.sh", "--fill", "cmd:false"], &quick[..]].concat());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

/// The interpreter as Python itself names it (`sys.executable`).
#[cfg(unix)]
fn python_executable() -> String {
    let out = Command::new("python3").args(["-c", "import sys; print(sys.executable)"]).output().expect("python3");
    text(&out.stdout).trim().to_string()
}

/// A version manager's shim (like pyenv's) is run once per match to find the real interpreter,
/// not at every start of an agent, where its start-up would count toward the agent's round.
#[test]
#[cfg(unix)] // shell scripts as agents
fn the_python_interpreter_is_resolved_once_and_named_in_the_summary() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("python-shim");
    let shim = dir.join("shim-python");
    std::fs::write(
        &shim,
        format!("#!/bin/sh\necho started >> '{}'\nexec python3 \"$@\"\n", dir.join("runs").display()),
    )
    .unwrap();
    std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o755)).unwrap();
    // A violation every round: the agent is started four times before it is disqualified.
    std::fs::write(dir.join("bad.py"), "def decide(stav):\n    return 'nonsense'\n").unwrap();
    let out = gbely(&dir, &["play", "bad.py", "--python", shim.to_str().unwrap(), "--rounds", "6", "--no-replay"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    assert_eq!(std::fs::read_to_string(dir.join("runs")).unwrap().lines().count(), 1, "the shim ran once");
    let s = text(&out.stdout);
    assert!(s.contains(&format!("\n  python: {}\n", python_executable())), "{s}");
    // In --json; absent when no seat is a Python agent (and then a bad --python does not matter).
    let out = gbely(&dir, &["play", "template", "--rounds", "1", "--no-replay", "--json"]);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["python"], python_executable());
    let out = gbely(&dir, &["play", "council", "--python", "/no/python", "--rounds", "1", "--no-replay", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["python"], serde_json::Value::Null);
    let out = gbely(&dir, &["play", "council", "--rounds", "1", "--no-replay"]);
    assert!(!text(&out.stdout).contains("python:"), "{}", text(&out.stdout));
    // An interpreter that cannot be run at all: one line, before the match.
    let empty = scratch("python-missing");
    let out = gbely(&empty, &["play", "template", "--python", "/no/python", "--rounds", "1"]);
    let e = text(&out.stderr);
    assert_eq!((out.status.code(), e.lines().count()), (Some(1), 1), "{e}");
    assert!(e.contains("cannot run the Python interpreter `/no/python`"), "{e}");
    assert!(!empty.join("gbely-runs").exists(), "{e}");
}

/// `gbely check` judges `decide` and the imports from the syntax tree, without running the
/// module: a function under a top-level `if`/`try` passes, `decide = 42` fails, an optional
/// import with an `except ImportError` fallback is a warning, not a failure, and an import under
/// `if TYPE_CHECKING:` (the types of `gbely.types`) is not counted.
#[test]
fn check_reads_decide_and_imports_from_the_syntax_tree() {
    let dir = scratch("check-tree");
    let files = [
        ("guarded.py", "try:\n    import numpy\nexcept ImportError:\n    numpy = None\ndef decide(stav):\n    return []\n"),
        (
            "versioned.py",
            "import sys\nif sys.version_info >= (3, 8):\n    def decide(stav):\n        return []\nelse:\n    raise SystemExit\n",
        ),
        ("in_try.py", "try:\n    def decide(stav):\n        return []\nfinally:\n    pass\n"),
        ("lambda.py", "decide = lambda stav: []\n"),
        (
            "typed.py",
            "from __future__ import annotations\nimport typing\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    \
             from gbely.types import Answer, Stav\nif typing.TYPE_CHECKING:\n    import numpy\n\
             def decide(stav: Stav) -> Answer:\n    return {\"prikazy\": []}\n",
        ),
    ];
    for (file, source) in files {
        std::fs::write(dir.join(file), source).unwrap();
        let out = gbely(&dir, &["check", file, "--rounds", "2"]);
        let s = text(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{file}: {s}{}", text(&out.stderr));
        assert!(s.contains("the submission passes the check"), "{file}: {s}");
    }
    let s = text(&gbely(&dir, &["check", "guarded.py", "--rounds", "2"]).stdout);
    let warn = s.lines().find(|l| l.starts_with("  WARN  ")).unwrap_or_else(|| panic!("no warning in {s}"));
    assert!(warn.contains("numpy") && warn.contains("ImportError"), "{warn}");
    let s = text(&gbely(&dir, &["check", "typed.py", "--rounds", "2"]).stdout);
    assert!(!s.contains("WARN") && !s.contains("gbely,") && !s.contains("numpy"), "{s}");

    // Failures, found without running the module (it would leave a file behind).
    let runs = "open('module-was-run', 'w').write('x')\n";
    let failing = [
        ("forty_two.py", format!("{runs}decide = 42\n"), "decide (line 2) is assigned a value"),
        ("redefined.py", format!("{runs}def decide(stav):\n    return []\ndecide = None\n"), "line 4"),
        ("async_decide.py", format!("{runs}async def decide(stav):\n    return []\n"), "async"),
        (
            "wrong_guard.py",
            format!("{runs}try:\n    import numpy\nexcept ValueError:\n    pass\ndef decide(stav):\n    return []\n"),
            "outside the standard library (the judge will not have them): numpy",
        ),
        (
            "type_checking_else.py",
            format!("{runs}from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    pass\nelse:\n    import numpy\ndef decide(stav):\n    return []\n"),
            "outside the standard library (the judge will not have them): numpy",
        ),
    ];
    for (file, source, why) in failing {
        std::fs::write(dir.join(file), source).unwrap();
        let out = gbely(&dir, &["check", file, "--rounds", "2"]);
        let s = text(&out.stdout);
        assert_eq!(out.status.code(), Some(4), "{file}: {s}");
        let fail = s.lines().find(|l| l.starts_with("  FAIL  ")).unwrap_or_else(|| panic!("{file}: no FAIL in {s}"));
        assert!(fail.contains(why), "{file}: `{why}` not in {fail}");
        assert!(!dir.join("module-was-run").exists(), "{file}: the check ran the module");
    }
}

/// Issue 22, item 7: the judge gives an agent no network and no other processes (rules §8).
/// `gbely check` reads from the syntax tree what cannot work there and warns, naming the line;
/// the check still passes (the call may be on a path the agent never takes). `urllib.parse`,
/// `http.HTTPStatus` and threads touch neither and are not counted, nor is anything under `if
/// TYPE_CHECKING:`.
#[test]
fn check_warns_on_network_and_process_use() {
    let dir = scratch("check-isolation");
    let source = "\
import socket
import os as system_os
from urllib import request, parse
import urllib.parse
from http import HTTPStatus
import threading
from typing import TYPE_CHECKING
if TYPE_CHECKING:
    import subprocess
def decide(stav):
    if stav['kolo'] < 0:
        system_os.system('curl example.com')
        system_os.execv('/bin/sh', ['sh'])
        import multiprocessing
        from os import popen
        urllib.parse.quote('x')
        system_os.system('true')
        system_os.path.join('a', 'b')
    return []
";
    std::fs::write(dir.join("networked.py"), source).unwrap();
    let out = gbely(&dir, &["check", "networked.py", "--rounds", "2"]);
    let s = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{s}{}", text(&out.stderr));
    assert!(s.contains("the submission passes the check"), "{s}");
    let warnings: Vec<&str> = s.lines().filter_map(|l| l.strip_prefix("  WARN  ")).collect();
    assert_eq!(
        warnings,
        [
            "imports socket (line 1): the judge has no network",
            "imports urllib.request (line 3): the judge has no network",
            "calls os.system (lines 12, 17): the judge gives no other processes",
            "calls os.execv (line 13): the judge gives no other processes",
            "imports multiprocessing (line 14): the judge gives no other processes",
            "imports os.popen (line 15): the judge gives no other processes",
        ],
        "{s}"
    );
    // The same in --json, and in `gbely agents`.
    let out = gbely(&dir, &["check", "networked.py", "--rounds", "2", "--json"]);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["ok"], true);
    assert_eq!(doc["warnings"][0], "imports socket (line 1): the judge has no network");
    let out = gbely(&dir, &["agents", ".", "--json"]);
    let s = text(&out.stdout);
    assert!(s.contains("the judge has no network"), "{s}");
    // Subprocess and asyncio's processes and connections, through any name.
    std::fs::write(
        dir.join("spawner.py"),
        "import subprocess as sp\nimport asyncio\nfrom concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor\n\
         def decide(stav):\n    asyncio.open_connection('h', 1)\n    asyncio.create_subprocess_exec('ls')\n    return []\n",
    )
    .unwrap();
    let s = text(&gbely(&dir, &["check", "spawner.py", "--rounds", "2"]).stdout);
    let warnings: Vec<&str> = s.lines().filter_map(|l| l.strip_prefix("  WARN  ")).collect();
    assert_eq!(
        warnings,
        [
            "imports subprocess (line 1): the judge gives no other processes",
            "imports concurrent.futures.ProcessPoolExecutor (line 3): the judge gives no other processes",
            "calls asyncio.open_connection (line 5): the judge has no network",
            "calls asyncio.create_subprocess_exec (line 6): the judge gives no other processes",
        ],
        "{s}"
    );
}

/// SPEC §8: the agent starts just before its first observation, so its start-up counts toward
/// round 0's 2 s. `check` reports it.
#[test]
fn check_reports_the_start_up_time() {
    let dir = scratch("check-startup");
    std::fs::write(dir.join("slow_import.py"), "import time\ntime.sleep(0.6)\ndef decide(stav):\n    return []\n")
        .unwrap();
    let out = gbely(&dir, &["check", "slow_import.py", "--rounds", "2"]);
    let s = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{s}");
    let line = s.lines().find(|l| l.starts_with("  start-up  ")).unwrap_or_else(|| panic!("{s}"));
    assert!(line.ends_with(" s (counts toward round 0's 2 s)"), "{line}");
    let secs: f64 = line["  start-up  ".len()..].split_whitespace().next().unwrap().parse().unwrap();
    assert!((0.6..2.0).contains(&secs), "{line}");
    let out = gbely(&dir, &["check", "slow_import.py", "--rounds", "2", "--json"]);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let secs = doc["startup_seconds"].as_f64().unwrap();
    assert!((0.6..2.0).contains(&secs), "{doc}");
    assert_eq!(doc["warnings"], serde_json::json!([]));
}

/// Where the 2 s go: `check` states the test match's slowest answers as `gbely play` does
/// ("round 1: 0.5 s of 2 s"), in its text and its JSON, the slowest first.
#[test]
fn check_states_the_slowest_answers() {
    let dir = scratch("check-slowest");
    let agent = "import time\ndef decide(stav):\n    if stav['kolo'] == 1:\n        time.sleep(0.5)\n    return []\n";
    std::fs::write(dir.join("slow_round.py"), agent).unwrap();
    let out = gbely(&dir, &["check", "slow_round.py", "--rounds", "3"]);
    let s = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{s}");
    let line = s.lines().find_map(|l| l.strip_prefix("  time  slowest answers: ")).unwrap_or_else(|| panic!("{s}"));
    let first = line.split(", ").next().unwrap();
    let secs: f64 = first
        .strip_prefix("round 1: ")
        .and_then(|t| t.strip_suffix(" s of 2 s"))
        .unwrap_or_else(|| panic!("{line}"))
        .parse()
        .unwrap();
    assert!((0.5..2.0).contains(&secs), "{line}");
    assert_eq!(line.matches(" of 2 s").count(), 3, "the three slowest of three rounds: {line}");
    let out = gbely(&dir, &["check", "slow_round.py", "--rounds", "3", "--json"]);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let slowest = doc["slowest"].as_array().unwrap_or_else(|| panic!("{doc}"));
    assert_eq!(slowest.len(), 3, "{doc}");
    assert_eq!(slowest[0]["round"], 1, "{doc}");
    let secs = slowest[0]["seconds"].as_f64().unwrap();
    assert!((0.5..2.0).contains(&secs), "{doc}");
    let text0 = slowest[0]["text"].as_str().unwrap();
    assert!(text0.starts_with("round 1: 0.") && text0.ends_with(" s of 2 s"), "{doc}");
    assert_eq!(doc["time_limit_seconds"], 2.0);
}

/// Regression: a replay with one seat more than its map made `replay view` and `replay show
/// --color always` panic (exit 101). It is refused when read: one line, exit 1.
#[test]
fn a_replay_with_an_extra_seat_is_refused_in_one_line() {
    let dir = scratch("extra-seat");
    let out = gbely(&dir, &["play", "council", "--rounds", "3", "--replay", "r.json", "-q"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("r.json")).unwrap()).unwrap();
    let mut extra = doc["seats"][1].clone();
    extra["seat"] = serde_json::json!(2);
    doc["seats"].as_array_mut().unwrap().push(extra);
    std::fs::write(dir.join("extra.json"), doc.to_string()).unwrap();
    for args in [&["view", "extra.json"][..], &["show", "extra.json", "--color", "always"], &["stats", "extra.json"]] {
        let out = gbely(&dir, &[&["replay"][..], args].concat());
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert_eq!(
            text(&out.stderr),
            "gbely: error: extra.json: the replay lists 3 seats, its map has 2\n",
            "{args:?}"
        );
    }
}

/// Issue 42, item 15: a second match in the same `--run-dir` found the first one's seat folder,
/// and its agent failed at import in the sandbox (`FileNotFoundError: '/gbely/seat0-template.py'`).
/// Every match starts from a clean seat folder: both play, neither with a violation, and what
/// the first agent left in its folder is gone. A link put in the folder's place is removed, not
/// followed.
#[test]
fn two_matches_in_one_run_folder_both_play() {
    let dir = scratch("reused-run-dir");
    let json = |agent: &str, opponent: &str| {
        let out = gbely(
            &dir,
            &[
                "play",
                agent,
                "--opponent",
                opponent,
                "--map",
                "seed:reuse",
                "--size",
                "16",
                "--rounds",
                "3",
                "--json",
                "--run-dir",
                "out",
            ],
        );
        assert_eq!(out.status.code(), Some(0), "{agent}: {}", text(&out.stderr));
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let first = json("expander", "expander");
    std::fs::write(dir.join("out/.seat0/left-behind"), "from the first match").unwrap();
    let second = json("template", "council");
    for (which, doc) in [("first", &first), ("second", &second)] {
        assert_eq!(doc["rounds_played"], 3, "{which}: {doc}");
        assert_eq!(doc["sides"][0]["violations"], 0, "{which}: {doc}");
    }
    assert!(!dir.join("out/.seat0/left-behind").exists(), "the seat folder was emptied");
    #[cfg(unix)]
    {
        // A link in the seat folder's place: removed itself, and what it names is untouched.
        let outside = dir.join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("keep"), "not gbely's").unwrap();
        std::fs::remove_dir_all(dir.join("out/.seat0")).unwrap();
        std::os::unix::fs::symlink(&outside, dir.join("out/.seat0")).unwrap();
        let third = json("template", "council");
        assert_eq!(third["sides"][0]["violations"], 0, "{third}");
        assert!(outside.join("keep").exists(), "nothing outside the run folder is removed");
        assert!(!std::fs::symlink_metadata(dir.join("out/.seat0")).unwrap().file_type().is_symlink());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn replay_show_observation_marks_the_discarded_commands_and_who_took_their_cells() {
    let dir = scratch("observation-discards");
    let out = gbely(
        &dir,
        &["play", "template", "--map", "seed:r", "--size", "20", "--rounds", "40", "--replay", "r.json.gz", "--quiet"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let replay = gbely_engine::replays::read_replay(&dir.join("r.json.gz")).unwrap();
    let mut taken = 0;
    for round in 0..40u32 {
        let r = round.to_string();
        let shown =
            text(&gbely(&dir, &["replay", "show", "r.json.gz", "--round", &r, "--seat", "0", "--observation"]).stdout);
        let raw = text(
            &gbely(&dir, &["replay", "show", "r.json.gz", "--round", &r, "--seat", "0", "--observation", "--json"])
                .stdout,
        );
        let obs: serde_json::Value = serde_json::from_str(raw.lines().nth(1).unwrap()).unwrap();
        let answer = raw.split("# its answer\n").nth(1).unwrap().lines().next().unwrap();
        let answer: serde_json::Value = serde_json::from_str(answer).unwrap();
        // The readable observation is the same document, a cell a line.
        let (readable, items) = shown.split_once("# its answer: ").unwrap();
        let readable: serde_json::Value = serde_json::from_str(readable.split_once('\n').unwrap().1).unwrap();
        assert_eq!(readable, obs, "round {round}");
        assert!(shown.lines().count() > obs["moje_pola"].as_array().unwrap().len(), "a cell a line");
        // Each item a line, the discarded ones marked: as many as the replay's discards of seat 0.
        let list = answer["prikazy"].as_array().unwrap();
        let items: Vec<&str> = items.lines().skip(1).take_while(|l| l.starts_with('#')).collect();
        assert_eq!(items.len(), list.len(), "round {round}: {shown}");
        let marked = items.iter().filter(|l| l.contains(" — discarded: ")).count();
        let discards = replay.turns[round as usize].discarded.iter().filter(|d| d.seat == 0).count();
        assert_eq!(marked, discards, "round {round}");
        for line in items.iter().filter(|l| l.contains("(taken by seat 1, council, earlier in this round)")) {
            // SPEC §4: the Council (seat 1) resolves before seat 0 on odd rounds only.
            assert_eq!(round % 2, 1, "round {round}: {line}");
            // The cell was seat 0's when it decided: one of its own cells in its observation.
            let item: serde_json::Value =
                serde_json::from_str(line.split_once(' ').unwrap().1.trim_start().split(" — ").next().unwrap())
                    .unwrap();
            let cell = if line.contains("target not owned") { &item["na"] } else { &item["z"] };
            let own = obs["moje_pola"].as_array().unwrap();
            assert!(own.iter().any(|c| &c["id"] == cell), "round {round}: {cell} was not seat 0's: {line}");
            taken += 1;
        }
    }
    assert!(taken > 0, "the template loses cells to the Council in 40 rounds and commands them");
}

#[test]
fn a_bad_map_size_is_said_once() {
    let dir = scratch("bad-size");
    let out = gbely(&dir, &["play", "template", "--map", "seed:x", "--size", "5", "--rounds", "1"]);
    let err = text(&out.stderr);
    assert!(!out.status.success());
    assert_eq!(err.matches("out of range").count(), 1, "{err}");
    assert!(err.contains("map size 5×5 is out of range: each side must be 12…500"), "{err}");
}

#[test]
fn the_stand_without_its_folder_says_how_to_name_or_create_one() {
    let dir = scratch("stand-no-folder");
    let out = gbely(&dir, &["stand", "--no-open"]);
    let err = text(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("the agents' folder agents does not exist"), "{err}");
    assert!(err.contains("`gbely stand FOLDER`") && err.contains("`mkdir agents`"), "{err}");
}

/// `gbely arena ARGS` runs the program `gbely-arena` found beside `gbely` (or on PATH) with the
/// arguments as given, its exit code `gbely`'s; with none to be found it says what is missing
/// and how to build it.
#[test]
#[cfg(unix)]
fn arena_runs_the_gbely_arena_program_beside_gbely_or_says_how_to_get_it() {
    use std::os::unix::fs::PermissionsExt;
    let dir = crate::common::scratch("external");
    let gbely = dir.join("gbely");
    if std::fs::hard_link(env!("CARGO_BIN_EXE_gbely"), &gbely).is_err() {
        std::fs::copy(env!("CARGO_BIN_EXE_gbely"), &gbely).unwrap();
    }
    let out = Command::new(&gbely).args(["arena", "serve", "arena.toml"]).env("PATH", "").output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("`gbely arena` is the program gbely-arena, which is not installed here"), "{err}");
    assert!(err.contains("cargo build --release -p gbely-arena"), "{err}");
    // A program beside it gets every argument as given (`--help` too), and its exit code is ours.
    let fake = dir.join("gbely-arena");
    std::fs::write(&fake, "#!/bin/sh\nfor a in \"$@\"; do echo \"[$a]\"; done\nexit 3\n").unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = Command::new(&gbely).args(["arena", "--help", "serve", "a b"]).env("PATH", "").output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "[--help]\n[serve]\n[a b]\n");
    let _ = std::fs::remove_dir_all(&dir);
}
