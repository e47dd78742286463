//! The tournament core is the one place leagues are scheduled and ranked: a Rust author's
//! `experiment::league` and `gbely league` give the same standings for the same matches, and no
//! other module keeps a scheduler, a pairing loop, a winner rule or a standings table of its own.

use gbely_engine::app::runs::agent_spec::AgentSpec;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use gbely_engine::app::entries::Entry;
use gbely_engine::app::league::{standings, MatchRow};
use gbely_engine::app::runs::maps::load_map;
use gbely_engine::experiment::{league, Entrant, LeaguePlan};
use serde_json::Value;

use crate::common::scratch;

const AGENTS: [&str; 3] = ["template-rs", "expander-rs", "council:easy"];
const MAPS: [&str; 2] = ["seed:same-a", "seed:same-b"];

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(1.0)
}

/// The same three built-in agents on the same two maps, 40 rounds, no time limit: once as a Rust
/// author's in-process league, once as `gbely league --json`. The matches are the same (the
/// agents are deterministic), and so must be the tables: order, counts, shares, Elo, LOS.
#[test]
fn a_rust_league_ranks_exactly_as_gbely_league_on_the_same_matches() {
    let dir = scratch("same");
    let out = Command::new(env!("CARGO_BIN_EXE_gbely"))
        .args(["league", "--maps", &MAPS.join(","), "--rounds", "40", "--time-limit", "off", "--json"])
        .args(AGENTS)
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let cli: Value = serde_json::from_slice(&out.stdout).unwrap();

    let entrants: Vec<Entrant> = AGENTS.iter().map(|n| Entrant::builtin(n).unwrap()).collect();
    let maps = MAPS.iter().map(|m| Arc::new(load_map(m, None).unwrap())).collect();
    let rust = league(&entrants, &LeaguePlan { rounds: 40, ..LeaguePlan::new(maps) });

    // The same matches: 3 pairs × 2 seat orders × 2 maps, cell for cell.
    let matches = cli["matches"].as_array().unwrap();
    assert_eq!((matches.len(), rust.games.len()), (12, 12));
    let id_of = |k: usize| cli["entries"][k]["id"].as_str().unwrap().to_string();
    for g in &rust.games {
        let m = matches
            .iter()
            .find(|m| m["map"] == MAPS[g.map] && m["seat0"] == id_of(g.seats[0]) && m["seat1"] == id_of(g.seats[1]))
            .expect("the match in gbely league's results");
        assert_eq!(m["cells"], serde_json::json!(g.outcome.cells), "{m}");
    }

    // The same standings.
    let want = cli["standings"].as_array().unwrap();
    let got = &rust.table.standings;
    assert_eq!(want.len(), got.len());
    for (w, g) in want.iter().zip(got) {
        assert_eq!(w["name"], g.name.as_str());
        assert_eq!(w["rank"], g.rank);
        for (key, value) in [("played", g.played), ("wins", g.wins), ("draws", g.draws), ("losses", g.losses)] {
            assert_eq!(w[key], value, "{} {key}", g.name);
        }
        for (key, value) in [("rating", g.rating), ("uncertainty", g.uncertainty), ("mean_share", g.mean_share)] {
            assert!(close(w[key].as_f64().unwrap(), value), "{} {key}: {} vs {value}", g.name, w[key]);
        }
    }
    for (i, row) in rust.table.los.iter().enumerate() {
        for (j, p) in row.iter().enumerate() {
            assert!(close(cli["los"][i][j].as_f64().unwrap(), *p), "LOS {i} {j}");
        }
    }
    // Per map (the CLI's maps sorted by name, which is their order here).
    for (m, table) in rust.table.per_map.iter().enumerate() {
        let names: Vec<&str> = table.standings.iter().map(|s| s.name.as_str()).collect();
        let want: Vec<&str> =
            cli["per_map"][m]["standings"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
        assert_eq!(names, want, "on {}", MAPS[m]);
    }
    // The ranking is the Elo fit's, not points': the strongest, ranked first, has a positive
    // rating, and the ratings fall down the table.
    assert!(got.windows(2).all(|w| w[0].rating >= w[1].rating), "{got:?}");
    assert!(got[0].rating > 0.0);
}

/// The same rows fed to `gbely league`'s tables and to a Rust league's give the same table:
/// both are the core's.
#[test]
fn stored_rows_and_in_process_games_make_the_same_table() {
    let entrants: Vec<Entrant> = AGENTS.iter().map(|n| Entrant::builtin(n).unwrap()).collect();
    let maps: Vec<_> = MAPS.iter().map(|m| Arc::new(load_map(m, None).unwrap())).collect();
    let rust = league(&entrants, &LeaguePlan { rounds: 30, threads: 2, ..LeaguePlan::new(maps) });
    let entries: Vec<Entry> =
        (AGENTS.iter()).map(|n| Entry::from_spec(&AgentSpec::Builtin(n), n.to_string()).unwrap()).collect();
    // In reverse order: the table does not depend on the order of the rows.
    let rows: Vec<MatchRow> = rust
        .games
        .iter()
        .rev()
        .map(|g| {
            let o = g.outcome;
            MatchRow {
                key: format!("{}|{}|{}", g.map, g.seats[0], g.seats[1]),
                map: MAPS[g.map].to_string(),
                seat0: entries[g.seats[0]].id.clone(),
                seat1: entries[g.seats[1]].id.clone(),
                game: g.game,
                cells: o.cells,
                score: o.score,
                tiebreak: o.tiebreak,
                disqualified: o.disqualified,
                violations: o.violations,
                ended_by: gbely_engine::sim::EndReason::Rounds,
                rounds: 30,
                seconds: 0.0,
            }
        })
        .collect();
    let app = standings(&entries, &rows, false);
    let strip =
        |s: &gbely_engine::tournament::Standing| (s.rank, s.name.clone(), s.wins, s.losses, s.rating, s.mean_share);
    assert_eq!(
        app.standings.iter().map(strip).collect::<Vec<_>>(),
        rust.table.standings.iter().map(strip).collect::<Vec<_>>()
    );
    assert_eq!(app.los, rust.table.los);
    assert_eq!(app.matrix, rust.table.matrix);
}

fn engine_src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let p = entry.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The files (relative to `src/`, `/`-separated) whose code (not comments) contains `needle`.
fn files_with(root: &Path, needle: &str) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(root, &mut files);
    let mut hits: Vec<String> = files
        .iter()
        .filter(|p| {
            let text = std::fs::read_to_string(p).unwrap();
            text.lines().map(str::trim_start).filter(|l| !l.starts_with("//")).any(|l| l.contains(needle))
        })
        .map(|p| p.strip_prefix(root).unwrap_or(p).to_string_lossy().replace('\\', "/"))
        .collect();
    hits.sort();
    hits
}

/// Where leagues and A/B tests live — the in-process experiments, `gbely league` and `gbely ab`,
/// their typed entry points, the Ray backend, the Python package's bindings — nothing starts
/// worker threads, keeps a work queue or counter, pairs entrants, decides who won, scores a pair
/// or builds a standings table but the tournament core.
#[test]
fn the_tournament_core_is_the_only_scheduler_pairing_loop_and_standings_table() {
    let src = engine_src();
    let py = Path::new(env!("CARGO_MANIFEST_DIR")).join("../gbely-py/src");
    let users = ["experiment", "app/league", "app/ab.rs", "app/requests.rs", "app/cli/league.rs", "app/cli/ab.rs"];
    let in_users = |hits: Vec<String>| -> Vec<String> {
        hits.into_iter().filter(|h| users.iter().any(|u| h.starts_with(u))).collect()
    };
    // Worker threads and their gates: the scheduler's alone. (The Ray backend's one reader
    // thread reads the driver's output; it schedules nothing.)
    for needle in ["thread::scope", "AtomicUsize", "Condvar", "VecDeque"] {
        assert_eq!(in_users(files_with(&src, needle)), Vec::<String>::new(), "{needle}");
    }
    assert_eq!(in_users(files_with(&src, "thread::spawn")), ["app/league/remote.rs"], "thread::spawn");
    assert_eq!(files_with(&src, "thread::scope"), ["tournament/scheduler.rs"]);
    // One pairing loop, one winner rule, one pair score, one table, one fit, one SPRT.
    for (needle, home) in [
        ("for b in a + 1..", "tournament/schedule.rs"),
        ("fn winner(cells", "tournament/outcome.rs"),
        ("fn game_score(", "tournament/outcome.rs"),
        ("pub struct Standing {", "tournament/standings.rs"),
        ("pub fn fit(", "tournament/rating.rs"),
        ("fn los(", "tournament/rating.rs"),
        ("fn llr_pentanomial(", "tournament/sprt.rs"),
        ("pub struct Sprt {", "tournament/ab.rs"),
        ("fn run_in_order", "tournament/scheduler.rs"),
    ] {
        assert_eq!(files_with(&src, needle), [home], "{needle}");
        assert_eq!(files_with(&py, needle), Vec::<String>::new(), "{needle} in gbely-py");
    }
    // No library runs a league through the command line: no argv, no captured --json.
    for needle in ["JSON_CAPTURE", "run_json", "cli_json", "owns_process"] {
        assert_eq!(files_with(&src, needle), Vec::<String>::new(), "{needle}");
        assert_eq!(files_with(&py, needle), Vec::<String>::new(), "{needle} in gbely-py");
    }
}
