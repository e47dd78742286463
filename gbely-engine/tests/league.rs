//! `gbely league` as a competitor runs it: complete pairings, resuming, adding an entry, edited
//! files as new entries, and results that do not depend on `--jobs`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gbely-league-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs a short league (20 rounds on two generated maps) and returns its `--json` document.
fn league(dir: &Path, args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_gbely"))
        .args(["league", "--maps", "seed:la,seed:lb", "--rounds", "20", "--json"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn pairs(doc: &Value) -> BTreeSet<(String, String, String)> {
    doc["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["map"].as_str().unwrap().into(),
                m["seat0"].as_str().unwrap().into(),
                m["seat1"].as_str().unwrap().into(),
            )
        })
        .collect()
}

const IDLE: &str = "def decide(stav):\n    return []\n";

#[test]
fn every_pair_meets_on_every_map_in_both_orders_and_a_league_resumes_and_grows() {
    let dir = scratch("grow");
    let doc = league(&dir, &["template", "expander", "--council"]);
    let ids: Vec<String> =
        doc["entries"].as_array().unwrap().iter().map(|e| e["id"].as_str().unwrap().into()).collect();
    assert_eq!(ids.len(), 3);
    // 3 entries: 3 pairs × 2 seat orders × 2 maps.
    assert_eq!(doc["run"]["total"], 12);
    assert_eq!(doc["run"]["played"], 12);
    let played = pairs(&doc);
    assert_eq!(played.len(), 12);
    for map in ["seed:la", "seed:lb"] {
        for a in &ids {
            for b in &ids {
                let n = played.iter().filter(|(m, x, y)| m == map && x == a && y == b).count();
                assert_eq!(n, usize::from(a != b), "{map}: {a} vs {b}");
            }
        }
    }
    // Each entry played 8 matches; wins and losses add up.
    let st = doc["standings"].as_array().unwrap();
    assert!(st.iter().all(|s| s["played"] == 8));
    let wins: u64 = st.iter().map(|s| s["wins"].as_u64().unwrap()).sum();
    let losses: u64 = st.iter().map(|s| s["losses"].as_u64().unwrap()).sum();
    assert_eq!(wins, losses);
    assert!(dir.join("gbely-league/report.html").exists());

    // Run again: nothing to play, same standings.
    let again = league(&dir, &["template", "expander", "--council"]);
    assert_eq!(again["run"]["played"], 0);
    assert_eq!(again["run"]["already_played"], 12);
    assert_eq!(again["standings"], doc["standings"]);

    // A new entry plays only its own pairings: 3 opponents × 2 orders × 2 maps.
    std::fs::write(dir.join("idle.py"), IDLE).unwrap();
    let grown = league(&dir, &["template", "expander", "idle.py", "--council"]);
    assert_eq!(grown["run"]["total"], 24);
    assert_eq!(grown["run"]["played"], 12);
    assert!(pairs(&grown).is_superset(&played));

    // An edited file is a new entry, not an overwrite: its pairings are played again.
    std::fs::write(dir.join("idle.py"), format!("{IDLE}# edited\n")).unwrap();
    let edited = league(&dir, &["template", "expander", "idle.py", "--council"]);
    assert_eq!(edited["run"]["played"], 12);
    let old_id = grown["entries"][2]["id"].as_str().unwrap();
    let new_id = edited["entries"][2]["id"].as_str().unwrap();
    assert!(old_id.starts_with("idle.py@") && new_id.starts_with("idle.py@") && old_id != new_id);
}

#[test]
fn results_do_not_depend_on_the_number_of_jobs() {
    let strip = |mut doc: Value| {
        for m in doc["matches"].as_array_mut().unwrap() {
            m.as_object_mut().unwrap().remove("seconds");
        }
        (doc["standings"].clone(), doc["matrix"].clone(), doc["matches"].clone())
    };
    let one = strip(league(&scratch("jobs1"), &["template", "expander", "--council", "--jobs", "1"]));
    let two = strip(league(&scratch("jobs2"), &["template", "expander", "--council", "--jobs", "2"]));
    assert_eq!(one, two);
}

#[test]
fn a_league_refuses_other_settings_on_the_same_database() {
    let dir = scratch("settings");
    league(&dir, &["template", "council"]);
    let out = Command::new(env!("CARGO_BIN_EXE_gbely"))
        .args(["league", "template", "council", "--maps", "seed:la,seed:lb", "--rounds", "21"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("was played with rounds 20") && err.lines().count() == 1, "{err}");
}

/// An agent file may name itself (`AGENT_NAME`, `AGENT_VERSION`, read from its syntax tree,
/// never by running it): the name shows in summaries, replays, leagues and `gbely agents`; a
/// `GAME_VERSION` for other rules is a warning.
#[test]
fn an_agent_file_names_itself_without_being_run() {
    let dir = scratch("names");
    let marker = dir.join("ran");
    std::fs::write(
        dir.join("mravec.py"),
        format!(
            "AGENT_NAME = \"Mravec\"\nAGENT_VERSION = \"7\"\nGAME_VERSION = 2\nimport sys\nif 'gbely_harness' not in sys.argv[0]:\n    open({:?}, 'w').write('imported')\ndef decide(stav):\n    return []\n",
            marker.to_str().unwrap()
        ),
    )
    .unwrap();
    std::fs::write(dir.join("plain.py"), IDLE).unwrap();
    let gbely =
        |args: &[&str]| Command::new(env!("CARGO_BIN_EXE_gbely")).args(args).current_dir(&dir).output().unwrap();
    let listed = gbely(&["agents", ".", "--json"]);
    assert!(!marker.exists(), "listing must not run the agent");
    let doc: Value = serde_json::from_slice(&listed.stdout).unwrap();
    let agents = doc["agents"].as_array().unwrap();
    assert_eq!(agents[0]["file"], "mravec.py");
    assert_eq!(agents[0]["name"], "Mravec 7");
    assert_eq!(agents[0]["check"], "warn");
    assert!(agents[0]["why"][0].as_str().unwrap().contains("GAME_VERSION = 2"));
    assert_eq!(agents[1]["name"], "plain.py");
    assert_eq!(agents[1]["check"], "ok");

    let play = gbely(&["play", "mravec.py", "--map", "seed:n", "--size", "16", "--rounds", "3", "--replay", "r.json"]);
    assert_eq!(play.status.code(), Some(0), "{}", String::from_utf8_lossy(&play.stderr));
    assert!(String::from_utf8_lossy(&play.stdout).starts_with("Mravec 7 vs council"));
    assert!(String::from_utf8_lossy(&play.stderr)
        .contains("GAME_VERSION = 2, but this engine plays the rules of version 1"));
    let replay = gbely_engine::replays::read_replay(&dir.join("r.json")).unwrap();
    assert_eq!(replay.seats[0].name, "Mravec 7");

    let doc = league(&dir, &["mravec.py", "plain.py"]);
    assert_eq!(doc["entries"][0]["name"], "Mravec 7");
    assert!(doc["entries"][0]["id"].as_str().unwrap().starts_with("Mravec 7@"));
}

/// The Rust twins of the examples are built-in entries: in-process, no agent process, and a
/// replay regenerates their commands.
#[test]
fn rust_built_in_agents_play_in_process() {
    let dir = scratch("rust");
    let doc = league(&dir, &["template-rs", "expander-rs", "--council"]);
    assert_eq!(doc["run"]["total"], 12);
    assert!(doc["matches"].as_array().unwrap().iter().all(|m| m["rounds"] == 20));
    assert!(
        !dir.join("gbely-league/runs").exists()
            || std::fs::read_dir(dir.join("gbely-league/runs")).unwrap().all(|d| {
                // No agent process: nothing but empty run folders.
                std::fs::read_dir(d.unwrap().path()).map_or(true, |mut f| f.next().is_none())
            })
    );
    let out = Command::new(env!("CARGO_BIN_EXE_gbely"))
        .args(["play", "expander-rs", "--opponent", "template-rs", "--map", "seed:rs", "--size", "16"])
        .args(["--rounds", "15", "--replay", "r.json", "-q"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let replay = gbely_engine::replays::read_replay(&dir.join("r.json")).unwrap();
    assert_eq!(replay.seats[0].builtin.as_deref(), Some("expander-rs"));
    assert!(replay.turns.iter().all(|t| t.answers.iter().all(|a| matches!(a, gbely_world::replay::Answer::Regen))));
    assert!(gbely_engine::replays::verify(&replay).is_ok());
}
