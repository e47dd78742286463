//! `gbely league` as a competitor runs it: complete pairings, resuming, adding an entry, edited
//! files as new entries, and results that do not depend on `--jobs`.

use gbely_engine::app::runs::agent_spec::AgentSpec;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::common::scratch;

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

/// The Ray backend's unit of work without Ray: a match made into a job, sent as JSON, and played
/// from it in another folder (the agent file written there from the job's text) gives the row
/// the head would have stored.
#[test]
fn a_match_job_played_elsewhere_gives_the_local_row() {
    use gbely_engine::app::entries::Entry;
    use gbely_engine::app::league::play::play_one;
    use gbely_engine::app::league::remote::{match_job, play_job, MatchJob};
    use gbely_engine::app::league::schedule::{league_maps, pairings};
    use gbely_engine::app::league::{Backend, LeagueConfig};

    let dir = scratch("job");
    let agent = dir.join("idle.py");
    std::fs::write(&agent, IDLE).unwrap();
    let python = gbely_engine::app::runs::interpreter::resolve_python("python3").unwrap();
    let entries = vec![
        Entry::from_spec(&AgentSpec::File(agent.clone()), "idle".into()).unwrap(),
        Entry::from_spec(&AgentSpec::Builtin("council:strong"), "council:strong".into()).unwrap(),
    ];
    let maps = league_maps("seed:job", "league").unwrap();
    let config = LeagueConfig {
        rounds: 12,
        time_limit: gbely_engine::limits::TimeLimit::OFF,
        memory_limit: gbely_engine::limits::MemoryLimit::OFF,
        python: python.clone(),
        games: 1,
        jobs: 1,
        dir: dir.join("runs"),
        backend: Backend::Local,
        replays: None,
        cores: None,
        sandbox: Default::default(),
    };
    let p = &pairings(2, 1, 1)[0];
    let job = match_job(p, &entries, &maps, &config).unwrap();
    assert_eq!(job.seats[0].file.as_ref().map(|(name, text)| (name.as_str(), text.as_str())), Some(("idle.py", IDLE)));
    assert_eq!(job.seats[1].file, None);
    assert_eq!(job.cpus, 1, "one agent process");
    let wire = serde_json::to_string(&job).unwrap();
    let job: MatchJob = serde_json::from_str(&wire).unwrap();

    // The agent file is gone from where the head had it: the worker has only the job.
    let local = play_one(&entries[0], &entries[1], &maps[0], 0, &config, &dir.join("local")).unwrap();
    std::fs::remove_file(&agent).unwrap();
    let remote = play_job(&job, &python, &dir.join("worker")).unwrap();
    assert!(dir.join("worker/agent0/idle.py").exists());
    assert_eq!(remote.key, local.key);
    assert_eq!(
        (remote.cells, remote.score, remote.tiebreak, remote.disqualified, remote.violations),
        (local.cells, local.score, local.tiebreak, local.disqualified, local.violations)
    );
    // An idle agent keeps its base only; the strong Council takes cells every round.
    assert_eq!(remote.cells[0], 1);
    assert!(remote.cells[1] > 12, "{:?}", remote.cells);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn with_replays_the_report_links_every_match_to_its_viewer_page() {
    let dir = scratch("replays");
    let doc = league(&dir, &["template-rs", "council:easy", "--replays", "--db", "l/league.sqlite"]);
    // 2 entries: 1 pair × 2 seat orders × 2 maps.
    assert_eq!(doc["run"]["total"], 4);
    let report = std::fs::read_to_string(dir.join("l/report.html")).unwrap();
    let links: Vec<&str> = report.split("<a href=\"").skip(1).map(|s| s.split('"').next().unwrap()).collect();
    assert_eq!(links.len(), 4, "{report}");
    for link in links {
        assert!(link.starts_with("replays/") && link.ends_with(".html"), "{link}");
        let page = dir.join("l").join(link);
        assert!(std::fs::metadata(&page).unwrap().len() > 10_000, "{}", page.display());
        let replay = page.with_extension("json.gz");
        let out = Command::new(env!("CARGO_BIN_EXE_gbely")).args(["replay", "verify"]).arg(&replay).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
    }
    // Without --replays, played again: nothing new is recorded, the links stay.
    let again = league(&dir, &["template-rs", "council:easy", "--db", "l/league.sqlite"]);
    assert_eq!(again["run"]["played"], 0);
    let report = std::fs::read_to_string(dir.join("l/report.html")).unwrap();
    assert_eq!(report.matches("<a href=\"replays/").count(), 4);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Plays a league of two sleepy Python agents that log when they think; returns the intervals.
fn thinking_intervals(
    dir: &Path,
    gate: Option<std::sync::Arc<gbely_engine::runner::cores::CoreGate>>,
) -> Vec<(f64, f64)> {
    use gbely_engine::app::entries::Entry;
    use gbely_engine::app::league::db::LeagueDb;
    use gbely_engine::app::league::schedule::league_maps;
    use gbely_engine::app::league::{run_league, Backend, LeagueConfig};
    let log = dir.join("thinking.log");
    let mut entries = Vec::new();
    for name in ["a", "b"] {
        let file = dir.join(format!("{name}.py"));
        let source = format!(
            "import time\n\ndef decide(stav):\n    t = time.time()\n    time.sleep(0.03)\n    \
             with open({log:?}, 'a') as f:\n        f.write(f'{{t}} {{time.time()}}\\n')\n    return []\n# {name}\n",
            log = log.to_str().unwrap()
        );
        std::fs::write(&file, source).unwrap();
        entries.push(Entry::from_spec(&AgentSpec::File(file.clone()), name.into()).unwrap());
    }
    let config = LeagueConfig {
        rounds: 5,
        time_limit: gbely_engine::limits::TimeLimit::OFF,
        memory_limit: gbely_engine::limits::MemoryLimit::OFF,
        python: gbely_engine::app::runs::interpreter::resolve_python("python3").unwrap(),
        games: 1,
        jobs: 2,
        dir: dir.join("runs"),
        backend: Backend::Local,
        replays: None,
        cores: gate,
        // The agents write their thinking times into one file of the test's.
        sandbox: gbely_engine::runner::sandbox::SandboxMode::Off,
    };
    let db = LeagueDb::open(&dir.join("l.sqlite")).unwrap();
    let maps = league_maps("seed:gate", "league").unwrap();
    let (run, _) = run_league(&db, &entries, &maps, &config, &mut |_, _, _| {}).unwrap();
    assert_eq!(run.played, 2);
    let mut spans: Vec<(f64, f64)> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| {
            let (a, b) = l.split_once(' ').unwrap();
            (a.parse().unwrap(), b.parse().unwrap())
        })
        .collect();
    spans.sort_by(|x, y| x.0.total_cmp(&y.0));
    // 2 matches × 2 agents × 5 rounds.
    assert_eq!(spans.len(), 20);
    spans
}

fn overlaps(spans: &[(f64, f64)]) -> usize {
    spans.windows(2).filter(|w| w[1].0 < w[0].1).count()
}

#[test]
fn with_a_core_gate_agents_of_different_matches_never_think_at_once() {
    // One core for two matches at once: every agent thinks alone, while the other match waits
    // before it sends (its clock has not started).
    let dir = scratch("gate");
    let gated = thinking_intervals(&dir, Some(gbely_engine::runner::cores::CoreGate::new(1)));
    assert_eq!(overlaps(&gated), 0, "{gated:?}");
    // Without the gate the same league has agents thinking side by side.
    let dir2 = scratch("nogate");
    let free = thinking_intervals(&dir2, None);
    assert!(overlaps(&free) > 0, "{free:?}");
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&dir2);
}

/// `--thinking N` lets more agent processes think at once than there are cores (busier cores
/// for agents that answer in milliseconds); the summary then says that agents may wait for a CPU
/// on their clock. The default (the cores) never says so.
#[test]
fn more_thinking_agents_than_cores_is_said_in_the_summary() {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let dir = scratch("thinking");
    let run = |extra: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_gbely"))
            .args(["league", "template", "expander", "--maps", "seed:th", "--rounds", "3", "--json", "--db"])
            .arg(dir.join(format!("l{}.sqlite", extra.len())))
            .args(extra)
            .current_dir(&dir)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(doc["run"]["played"], 2);
        doc["run"]["notes"].as_array().cloned().unwrap_or_default()
    };
    let more = (cores + 1).to_string();
    let notes = run(&["--thinking", &more]);
    let expected = format!("up to {more} agent processes think at once on {cores} cores");
    assert!(notes.iter().any(|n| n.as_str().unwrap().starts_with(&expected)), "{notes:?}");
    let notes = run(&[]);
    assert!(!notes.iter().any(|n| n.as_str().unwrap().contains("think at once")), "{notes:?}");
    // Not a number of agents, and not with Ray (each match asks the cluster for its CPUs).
    // (clap's usage errors exit with 2, gbely's own refusals with 1.)
    for (args, code, says) in [
        (&["--thinking", "0"][..], 2, "0 is not in 1..=4096"),
        (&["--thinking", "2", "--ray", "auto"][..], 1, "--thinking shares this machine's cores"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_gbely"))
            .args(["league", "template", "expander"])
            .args(args)
            .current_dir(&dir)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(code), "{args:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains(says), "{args:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_gauntlet_plays_the_candidate_against_the_field_only() {
    let dir = scratch("gauntlet");
    let doc = league(&dir, &["--gauntlet", "template", "expander", "council:easy", "--csv", "m.csv"]);
    // 2 opponents × 2 maps × 2 seats; the field does not play itself.
    assert_eq!(doc["run"]["total"], 8);
    let ids: Vec<String> =
        doc["entries"].as_array().unwrap().iter().map(|e| e["id"].as_str().unwrap().into()).collect();
    for (_, a, b) in pairs(&doc) {
        assert!(a == ids[0] || b == ids[0], "{a} vs {b}");
    }
    let g = &doc["gauntlet"];
    assert_eq!(g["candidate"], "template");
    assert_eq!(g["field"]["played"], 8);
    assert_eq!(g["per_opponent"].as_array().unwrap().len(), 2);
    assert_eq!(g["per_map"].as_array().unwrap().len(), 2);
    let csv = std::fs::read_to_string(dir.join("m.gauntlet.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 1 + 2 + 2, "{csv}");
    assert!(csv.starts_with("kind,against,played,wins,draws,losses,score,elo,low,high\nfield,"), "{csv}");
    let report = std::fs::read_to_string(dir.join("gbely-league/report.html")).unwrap();
    assert!(report.contains("Gauntlet: template against the field"), "no gauntlet table in the report");
    assert!(report.contains("Rank confidence"));
}
