//! League throughput and overhead (issue 14's targets), printed:
//! - scaling: matches per second of a league of in-process Rust entries at `--jobs 1` and at
//!   `--jobs` = the cores (goal: ≥ 1.8× on 2 cores), with identical results;
//! - cores busy with Python file agents: the CPU time of the league and its agent processes over
//!   wall time × cores (goal ≥ 90 %);
//! - your own `Decide` factories in a league in-process (`experiment::league`), against the CLI
//!   league of the same built-in agents;
//! - overhead: a 3-agent league on 2 maps with the Council as an entry (12 matches) at
//!   `--jobs 1`, against the sum of its matches' own times (goal ≤ 1.2×).
//!
//! `cargo bench -p gbely-engine --bench league` (add `-- --quick` for a short run, as CI does).
//! Run it on an otherwise idle machine: the figures are about this process's share of the CPUs.

use std::path::{Path, PathBuf};
use std::time::Instant;

use std::sync::Arc;

use gbely_engine::app::entries::Entry;
use gbely_engine::app::league::db::LeagueDb;
use gbely_engine::app::league::schedule::league_maps;
use gbely_engine::app::league::{run_league, Backend, LeagueConfig, MatchRow};
use gbely_engine::experiment::{self, Entrant, LeaguePlan};
use gbely_engine::runner::cores::CoreGate;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gbely-league-bench-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    dir
}

/// CPU seconds of this process and of its children that have ended (/proc/self/stat: utime,
/// stime, cutime, cstime).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<f64> = after.split_whitespace().map(|f| f.parse().unwrap_or(0.0)).collect();
    // Fields after the command: state is index 0, so utime (14th field) is index 11.
    let ticks: f64 = fields.get(11..15).map_or(0.0, |f| f.iter().sum());
    ticks / 100.0
}

/// Plays a league, its agent processes sharing `gate` if given; returns (wall seconds, CPU
/// seconds, its rows).
fn league(
    name: &str,
    specs: &[&str],
    maps: &str,
    jobs: usize,
    python: &str,
    gate: Option<Arc<CoreGate>>,
) -> (f64, f64, Vec<MatchRow>) {
    let dir = scratch(name);
    let db = LeagueDb::open(&dir.join("league.sqlite")).expect("the database opens");
    let entries: Vec<Entry> = (specs.iter())
        .map(|s| Entry::from_spec(&s.parse().expect("a spec"), s.to_string()).expect("an entry"))
        .collect();
    let maps = league_maps(maps, "bench").expect("maps");
    let config = LeagueConfig {
        rounds: 150,
        time_limit: gbely_engine::limits::TimeLimit::OFF,
        memory_limit: gbely_engine::limits::MemoryLimit::OFF,
        python: python.to_string(),
        games: 1,
        jobs,
        dir: dir.join("runs"),
        backend: Backend::Local,
        replays: None,
        cores: gate,
        sandbox: Default::default(),
    };
    let (cpu0, t) = (cpu_seconds(), Instant::now());
    let (run, keys) = run_league(&db, &entries, &maps, &config, &mut |_, _, _| {}).expect("the league runs");
    let wall = t.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu0;
    assert_eq!(run.played, run.total);
    let mut rows = db.rows(&keys).expect("rows");
    rows.sort_by(|a, b| a.key.cmp(&b.key));
    let _ = std::fs::remove_dir_all(&dir);
    (wall, cpu, rows)
}

fn same_results(a: &[MatchRow], b: &[MatchRow]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.key == y.key && x.cells == y.cells && x.tiebreak == y.tiebreak)
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let python =
        gbely_engine::app::runs::interpreter::resolve_python("python3").expect("python3 for the Python agents");
    let agents = Path::new(env!("CARGO_MANIFEST_DIR")).join("../agents");
    let template = agents.join("my_agent.py");
    let expander = agents.join("expander.py");
    let (template, expander) = (template.to_str().expect("a path"), expander.to_str().expect("a path"));

    // Scaling: in-process Rust entries only.
    let maps = if quick { "4" } else { "40" };
    let rust = ["template-rs", "expander-rs", "council", "council:strong"];
    let (w1, _, r1) = league("rust-1", &rust, maps, 1, &python, None);
    let (wn, _, rn) = league("rust-n", &rust, maps, cores, &python, None);
    println!(
        "league scaling, {} in-process Rust matches: {:.1} matches/s at --jobs 1, {:.1} at --jobs {cores} ({:.2}×; goal ≥ 1.8× on 2 cores); results identical: {}",
        r1.len(),
        r1.len() as f64 / w1,
        rn.len() as f64 / wn,
        w1 / wn,
        same_results(&r1, &rn)
    );

    // Your own Decide factories, in-process through `experiment::league` (no database, no
    // agent processes): the same four agents on the same maps, against the CLI league above.
    let factories: Vec<Entrant> = rust.iter().map(|n| Entrant::builtin(n).expect("a built-in agent")).collect();
    let plan_maps = league_maps(maps, "bench").expect("maps").into_iter().map(|m| m.map).collect();
    let plan = LeaguePlan { threads: 1, ..LeaguePlan::new(plan_maps) };
    let timed = |threads: usize| {
        let t = Instant::now();
        let played = experiment::league(&factories, &LeaguePlan { threads, ..plan.clone() });
        (played.games.len(), t.elapsed().as_secs_f64())
    };
    let ((n1, e1), (nn, en)) = (timed(1), timed(cores));
    println!(
        "in-process league of Decide factories (experiment::league), {n1} matches: {:.1} matches/s on 1 thread, {:.1} on {cores} (the CLI league of the same built-ins: {:.1} and {:.1})",
        n1 as f64 / e1,
        nn as f64 / en,
        r1.len() as f64 / w1,
        rn.len() as f64 / wn
    );

    // Cores busy with Python file agents: as `gbely league` plays them, one match per core with
    // the agents holding a core of the gate while they think; and, to compare, one match per two
    // cores without the gate (each agent sure of a core).
    let maps = if quick { "seed:busy" } else { "seed:busy-1,seed:busy-2,seed:busy-3" };
    let specs = [template, expander, "expander"];
    let (w, cpu, rows) = league("python-gate", &specs, maps, cores, &python, Some(CoreGate::new(cores)));
    let (w2, cpu2, _) = league("python-half", &specs, maps, (cores / 2).max(1), &python, None);
    println!(
        "cores busy with Python file agents, {} matches: {:.0} % of {cores} cores over {:.1} s at --jobs {cores} with the core gate (goal ≥ 90 %); {:.0} % over {:.1} s at --jobs {} without it",
        rows.len(),
        100.0 * cpu / (w * cores as f64),
        w,
        100.0 * cpu2 / (w2 * cores as f64),
        w2,
        (cores / 2).max(1)
    );
    if !quick {
        // What the gate costs: with one lease more than cores, the cores idle less (an agent's
        // hand-offs, the pipe and the wake-ups, are covered by a third thinker), but three agents
        // then think at once on two cores, their clocks running: what the gate is there to stop.
        let (w3, cpu3, _) = league("python-gate-plus", &specs, maps, cores, &python, Some(CoreGate::new(cores + 1)));
        println!(
            "  for comparison, a gate of {} leases on {cores} cores (agents may wait for a CPU on their clock): {:.0} % over {:.1} s",
            cores + 1,
            100.0 * cpu3 / (w3 * cores as f64),
            w3
        );
    }

    // Overhead: 3 agents with the Council as an entry, 2 maps, 12 matches at --jobs 1.
    let maps = if quick { "seed:over-1" } else { "seed:over-1,seed:over-2" };
    let (w, _, rows) = league("overhead", &[template, expander, "council"], maps, 1, &python, None);
    let own: f64 = rows.iter().map(|r| r.seconds).sum();
    println!(
        "league overhead, {} matches at --jobs 1: {:.2} s for the league, {:.2} s for its matches' own times ({:.3}×; goal ≤ 1.2×)",
        rows.len(),
        w,
        own,
        w / own
    );
}
