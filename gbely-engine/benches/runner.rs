//! Runner overhead per round for an agent process at full territory: serializing the
//! observation, the pipe round trip and parsing the answer, with an agent that answers at once
//! (a `python3` loop that echoes `[]` for every line, without parsing it); with and without the
//! sandbox, and the start-up of a fresh agent process in each.
//!
//! `cargo bench -p gbely-engine --bench runner` (add `-- --quick` for a short run; `-- --count
//! off` or `-- --count sandbox` plays the rounds of one mode once for `tools/instructions`,
//! which counts the runner's instructions per round: this process's, not the agent's).

use std::sync::Arc;
use std::time::Instant;

use gbely_engine::runner::player::{Player, PlayerAnswer};
use gbely_engine::runner::process::{AgentCommand, ProcessConfig, ProcessPlayer};
use gbely_engine::runner::sandbox::SandboxMode;
use gbely_engine::sim::{Match, MatchConfig};
use gbely_engine::wire::observation_json;

const ECHO: &str = "import sys\nfor _ in sys.stdin:\n    sys.stdout.write('[]\\n')\n    sys.stdout.flush()\n";

/// One round with the agent: the observation written and sent, the answer read and parsed.
#[inline(never)]
fn runner_round(agent: &mut ProcessPlayer, obs: &gbely_rules::Observation, grid: &gbely_rules::Grid) {
    agent.begin(obs, grid);
    match agent.finish() {
        PlayerAnswer::Read(read) => assert!(read.orders.is_empty()),
        other => panic!("{other:?}"),
    }
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let args: Vec<String> = std::env::args().collect();
    let count = args.iter().position(|a| a == "--count").map(|k| args.get(k + 1).cloned().unwrap_or_default());
    let rounds = if quick { 50 } else { 1000 };
    let map = Arc::new(gbely_world::reference_map());
    let mut m = Match::new(map.clone(), MatchConfig::default());
    for c in map.grid().cells() {
        m.set_cell(c, 0, 5.0 + (c.0 % 7) as f64 * 1.3, 0.0);
    }
    m.set_cell(map.seats()[1].base, 1, 10.0, 0.0);
    let obs = m.observe(0);
    let json = observation_json(&obs, map.grid());
    let dir = std::env::temp_dir().join(format!("gbely-runner-bench-{}", std::process::id()));
    // One interpreter both ways, named by its path (`python3` may be a shim, a script that finds it).
    let python = gbely_engine::runner::sandbox::python_runtime("python3")
        .expect("python3 runs")
        .executable
        .to_string_lossy()
        .into_owned();
    let mut figures = Vec::new();
    let modes = [("off", "without the sandbox", SandboxMode::Off), ("sandbox", "in the sandbox", SandboxMode::Auto)];
    if let Some(c) = &count {
        assert!(modes.iter().any(|m| m.0 == c), "--count {c}: off or sandbox");
    }
    for (name, label, mode) in modes {
        if count.as_ref().is_some_and(|c| c != name) {
            continue;
        }
        if mode == SandboxMode::Auto && gbely_engine::runner::sandbox::sandbox().is_err() {
            println!("(no sandbox on this machine: {})", gbely_engine::runner::sandbox::isolation(mode).line());
            continue;
        }
        let agent = || {
            let mut cfg = ProcessConfig::new(dir.join("work"), dir.join("agent.log"));
            cfg.time_limit = gbely_engine::limits::TimeLimit::seconds(5.0).expect("a valid limit");
            cfg.sandbox = mode;
            let cmd = AgentCommand::Exec { program: python.clone(), args: vec!["-c".into(), ECHO.into()] };
            ProcessPlayer::new("echo", cmd, cfg).expect("starts")
        };
        // Start-up: from the first observation sent to the first answer, fresh processes.
        let starts = if count.is_some() { 1 } else if quick { 3 } else { 10 };
        let t = Instant::now();
        for _ in 0..starts {
            let mut fresh = agent();
            fresh.begin(&obs, map.grid());
            assert!(matches!(fresh.finish(), PlayerAnswer::Read(_)));
            fresh.end();
        }
        let startup = t.elapsed().as_secs_f64() / starts as f64;
        let mut agent = agent();
        // Warm up: the process start is not runner overhead.
        for _ in 0..5 {
            agent.begin(&obs, map.grid());
            assert!(matches!(agent.finish(), PlayerAnswer::Read(_)));
        }
        let start = Instant::now();
        for _ in 0..rounds {
            runner_round(&mut agent, &obs, map.grid());
        }
        let per_round = start.elapsed().as_secs_f64() / rounds as f64;
        agent.end();
        if count.is_some() {
            println!("callgrind: runner::runner_round {rounds} rounds ({name})");
            let _ = std::fs::remove_dir_all(&dir);
            return;
        }
        figures.push((label, startup, per_round));
    }
    let t = Instant::now();
    let mut s = Vec::new();
    for _ in 0..rounds {
        gbely_engine::wire::write_observation(&obs, map.grid(), &mut s);
    }
    let serialize = t.elapsed().as_secs_f64() / rounds as f64;
    for (label, startup, per_round) in figures {
        println!(
            "{label}: runner overhead at full territory ({} own cells, {} KB observation): {:.3} ms per round (goal ≤ 1 ms); start-up to the first answer {:.1} ms",
            obs.own.len(),
            json.len() / 1024,
            per_round * 1e3,
            startup * 1e3
        );
    }
    println!("writing the observation JSON alone: {:.3} ms", serialize * 1e3);
    let _ = std::fs::remove_dir_all(dir);
}
