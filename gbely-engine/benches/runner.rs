//! Runner overhead per round for an agent process at full territory: serializing the
//! observation, the pipe round trip and parsing the answer, with an agent that answers at once
//! (a `python3` loop that echoes `[]` for every line, without parsing it); with and without the
//! sandbox, and the start-up of a fresh agent process in each.
//!
//! The modes are measured alternately (A, B, A, B …) in the same run, so that a machine
//! shared with other work loads both alike, and the figures are medians of the alternations:
//!
//! - start-up: from the first observation sent (the process starts then, as for the judge) to
//!   its answer; the player's set-up (`ProcessPlayer::new`) and its tear-down (`end`, drop: the
//!   kill, the reaping and, in the sandbox, the memory group's removal) are timed apart;
//! - per round: wall time, the runner's own CPU (this process's threads) and the agent's CPU
//!   (its `/proc/PID/schedstat`), steadier than wall time where the cores are shared.
//!
//! A third mode, without the sandbox but confined to one core as the sandbox confines an agent
//! (`taskset`, where it is installed), tells the cost of that confinement from the rest; a
//! fourth, in the sandbox with a league's core gate, the cost of parking an agent between its
//! turns (stopped, re-pinned and continued).
//!
//! The load average is printed before and after. `cargo bench -p gbely-engine --bench runner`
//! (add `-- --quick` for a short run; `-- --count off` or `-- --count sandbox` plays the rounds
//! of one mode once for `tools/instructions`, which counts the runner's instructions per round:
//! this process's, not the agent's).

use std::sync::Arc;
use std::time::{Duration, Instant};

use gbely_engine::runner::cores::CoreGate;
use gbely_engine::runner::player::{Player, PlayerAnswer};
use gbely_engine::runner::process::{AgentCommand, ProcessConfig, ProcessPlayer};
use gbely_engine::runner::sandbox::SandboxMode;
use gbely_engine::sim::{Match, MatchConfig};
use gbely_engine::wire::observation_json;

const ECHO: &str = "import sys\nfor _ in sys.stdin:\n    sys.stdout.write('[]\\n')\n    sys.stdout.flush()\n";

/// CPU time of every thread of this process so far (Linux; 0 elsewhere).
fn own_cpu() -> Duration {
    let mut ns = 0u64;
    for task in std::fs::read_dir("/proc/self/task").into_iter().flatten().flatten() {
        if let Ok(text) = std::fs::read_to_string(task.path().join("schedstat")) {
            ns += text.split_whitespace().next().and_then(|x| x.parse::<u64>().ok()).unwrap_or(0);
        }
    }
    Duration::from_nanos(ns)
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    if xs.is_empty() {
        return f64::NAN;
    }
    xs[xs.len() / 2]
}

/// How the echo agent runs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Without the sandbox.
    Plain,
    /// In the sandbox, on its seat's core.
    Sandboxed,
    /// Without the sandbox, confined by `taskset` to the core the sandbox would give it.
    Pinned,
    /// In the sandbox with a league's core gate: stopped between its turns, re-pinned and
    /// continued at each.
    Parked,
}

#[derive(Default)]
struct Figures {
    new: Vec<f64>,
    startup: Vec<f64>,
    teardown: Vec<f64>,
    round: Vec<f64>,
    runner_cpu: Vec<f64>,
    agent_cpu: Vec<f64>,
}

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
    let (starts, batches, batch) = if quick { (4, 4, 25) } else { (15, 20, 50) };
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
    let mut modes = vec![("without the sandbox", Mode::Plain)];
    match gbely_engine::runner::sandbox::sandbox() {
        Ok(sb) => {
            modes.push(("in the sandbox", Mode::Sandboxed));
            let taskset = std::process::Command::new("taskset")
                .args(["--cpu-list", &sb.cpu_of(0).to_string(), "true"])
                .status()
                .is_ok_and(|s| s.success());
            if taskset {
                modes.push(("without the sandbox, on the sandbox's one core (taskset)", Mode::Pinned));
            }
            modes.push(("in the sandbox, sharing the cores as in a league (parked between turns)", Mode::Parked));
        }
        Err(_) => println!(
            "(no sandbox on this machine: {})",
            gbely_engine::runner::sandbox::isolation(SandboxMode::Auto).line()
        ),
    }
    let cpu = gbely_engine::runner::sandbox::sandbox().as_ref().map_or(0, |sb| sb.cpu_of(0)).to_string();
    // A league's gate over every core: a lease is always free, so what is measured is the
    // parking (stop, re-pin and continue the agent's tree each turn), not a wait for a core.
    let gate = CoreGate::new(std::thread::available_parallelism().map_or(1, |n| n.get()));
    let agent = |mode: Mode, name: &str| {
        let mut cfg = ProcessConfig::new(dir.join(name), dir.join(format!("{name}.log")));
        cfg.time_limit = gbely_engine::limits::TimeLimit::seconds(5.0).expect("a valid limit");
        cfg.sandbox = match mode {
            Mode::Plain | Mode::Pinned => SandboxMode::Off,
            Mode::Sandboxed | Mode::Parked => SandboxMode::Auto,
        };
        if mode == Mode::Parked {
            cfg.cores = Some(gate.clone());
        }
        let cmd = match mode {
            Mode::Plain | Mode::Sandboxed | Mode::Parked => {
                AgentCommand::Exec { program: python.clone(), args: vec!["-c".into(), ECHO.into()] }
            }
            Mode::Pinned => AgentCommand::Exec {
                program: "taskset".into(),
                args: vec!["--cpu-list".into(), cpu.clone(), python.clone(), "-c".into(), ECHO.into()],
            },
        };
        ProcessPlayer::new("echo", cmd, cfg).expect("starts")
    };
    let answer = |p: &mut ProcessPlayer| match p.finish() {
        PlayerAnswer::Read(read) => assert!(read.orders.is_empty()),
        other => panic!("{other:?}"),
    };
    if let Some(name) = count {
        let mode = match name.as_str() {
            "off" => Mode::Plain,
            "sandbox" => Mode::Sandboxed,
            other => panic!("--count {other}: off or sandbox"),
        };
        let rounds = if quick { 50 } else { 1000 };
        let mut p = agent(mode, "count");
        for _ in 0..5 {
            p.begin(&obs, map.grid()); // warm-up: the process start is not runner overhead
            answer(&mut p);
        }
        for _ in 0..rounds {
            runner_round(&mut p, &obs, map.grid());
        }
        p.end();
        drop(p);
        println!("callgrind: runner::runner_round {rounds} rounds ({name})");
        let _ = std::fs::remove_dir_all(&dir);
        return;
    }
    println!("load average before: {}", load());
    let mut figures: Vec<Figures> = modes.iter().map(|_| Figures::default()).collect();
    // Start-up, alternating the modes: fresh processes.
    for i in 0..starts {
        for (k, &(_, mode)) in modes.iter().enumerate() {
            let f = &mut figures[k];
            let t = Instant::now();
            let mut fresh = agent(mode, &format!("start-{k}-{i}"));
            f.new.push(t.elapsed().as_secs_f64());
            let t = Instant::now();
            fresh.begin(&obs, map.grid());
            answer(&mut fresh);
            f.startup.push(t.elapsed().as_secs_f64());
            let t = Instant::now();
            fresh.end();
            drop(fresh);
            f.teardown.push(t.elapsed().as_secs_f64());
        }
    }
    // Per round: one process a mode, warmed up (the process start is not runner overhead), then
    // batches of rounds alternating between them.
    let mut players: Vec<ProcessPlayer> =
        modes.iter().enumerate().map(|(k, &(_, mode))| agent(mode, &format!("rounds-{k}"))).collect();
    for p in &mut players {
        for _ in 0..5 {
            p.begin(&obs, map.grid());
            answer(p);
        }
    }
    for _ in 0..batches {
        for (k, p) in players.iter_mut().enumerate() {
            let agent_before = p.stats.cpu.run_seconds;
            let (cpu, t) = (own_cpu(), Instant::now());
            for _ in 0..batch {
                p.begin(&obs, map.grid());
                answer(p);
            }
            let f = &mut figures[k];
            f.round.push(t.elapsed().as_secs_f64() / batch as f64);
            f.runner_cpu.push((own_cpu() - cpu).as_secs_f64() / batch as f64);
            f.agent_cpu.push((p.stats.cpu.run_seconds - agent_before) / batch as f64);
        }
    }
    for p in &mut players {
        p.end();
    }
    drop(players);
    let t = Instant::now();
    let mut s = Vec::new();
    for _ in 0..batch * batches {
        gbely_engine::wire::write_observation(&obs, map.grid(), &mut s);
    }
    let serialize = t.elapsed().as_secs_f64() / (batch * batches) as f64;
    println!(
        "full territory: {} own cells, {} KB observation; medians of {starts} starts and {batches} batches of {batch} rounds, the modes alternated",
        obs.own.len(),
        json.len() / 1024
    );
    for (&(label, _), f) in modes.iter().zip(figures) {
        println!(
            "{label}: runner overhead {:.3} ms per round (goal ≤ 1 ms; CPU: runner {:.3} ms, agent {:.3} ms); start-up to the first answer {:.1} ms (set-up {:.1} ms, tear-down {:.1} ms)",
            median(f.round) * 1e3,
            median(f.runner_cpu) * 1e3,
            median(f.agent_cpu) * 1e3,
            median(f.startup) * 1e3,
            median(f.new) * 1e3,
            median(f.teardown) * 1e3,
        );
    }
    println!("writing the observation JSON alone: {:.3} ms", serialize * 1e3);
    println!("load average after: {}", load());
    let _ = std::fs::remove_dir_all(dir);
}
