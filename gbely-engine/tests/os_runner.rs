//! The runner on every operating system (SPEC §8), with agents that need no Python, so that the
//! same checks run natively on Linux and macOS and, cross-built, under Wine for Windows
//! (`./build-wheels --wine-tests`, see docs/platforms.md).
//!
//! The hostile agents are this test program itself, started as `os_runner agent MODE`: no shell,
//! no interpreter, nothing that differs between systems. That is why the file has its own `main`
//! (`harness = false`): libtest would print its own lines on the agent's stdout. The tests run in
//! parallel threads; a name given on the command line runs only the tests containing it.

use std::io::{BufRead, Write};
use std::path::Path;
use std::process::{Command, ExitCode, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use gbely_engine::game::{play, PlayOptions};
use gbely_engine::runner::player::{builtin_player, Player};
use gbely_engine::runner::process::{AgentCommand, ProcessConfig, ProcessPlayer};
use gbely_engine::session::MatchRecord;
use gbely_engine::sim::{EndReason, MatchConfig};
use gbely_rules::ViolationKind;

mod common;
use common::scratch;

const TESTS: &[(&str, fn())] = &[
    ("rust_example_agents_as_processes_play_like_in_process", rust_example_agents_as_processes_play_like_in_process),
    ("the_command_line_plays_cmd_agents", the_command_line_plays_cmd_agents),
    ("a_hanging_agent_is_killed_restarted_and_disqualified", a_hanging_agent_is_killed_restarted_and_disqualified),
    ("a_crashing_agent_is_restarted_and_plays_on", a_crashing_agent_is_restarted_and_plays_on),
    ("a_crlf_agent_is_understood", a_crlf_agent_is_understood),
    ("children_that_detach_die_with_the_agent", children_that_detach_die_with_the_agent),
    // macOS may not honour `ulimit -v` (RLIMIT_AS): what happens there is not pinned.
    #[cfg(any(target_os = "linux", windows))]
    (
        "an_agent_over_its_memory_limit_is_stopped_and_a_small_one_plays_on",
        an_agent_over_its_memory_limit_is_stopped_and_a_small_one_plays_on,
    ),
];

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("agent") {
        return agent(&args[2..]);
    }
    if args.iter().any(|a| a == "--list") {
        for (name, _) in TESTS {
            println!("{name}: test");
        }
        return ExitCode::SUCCESS;
    }
    let filter = args.iter().skip(1).find(|a| !a.starts_with('-'));
    let chosen: Vec<_> = TESTS.iter().filter(|(name, _)| filter.is_none_or(|f| name.contains(f.as_str()))).collect();
    println!("running {} tests (os_runner, {})", chosen.len(), std::env::consts::OS);
    let failed: Vec<&str> = std::thread::scope(|s| {
        let handles: Vec<_> = chosen.iter().map(|(name, test)| (*name, s.spawn(test))).collect();
        handles
            .into_iter()
            .filter_map(|(name, h)| {
                let ok = h.join().is_ok();
                println!("test {name} ... {}", if ok { "ok" } else { "FAILED" });
                (!ok).then_some(name)
            })
            .collect()
    });
    println!(
        "test result: {}. {} passed; {} failed",
        if failed.is_empty() { "ok" } else { "FAILED" },
        chosen.len() - failed.len(),
        failed.len()
    );
    if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

// --- the agents ---

/// `agent MODE [ARG]`: a line-protocol agent that misbehaves as asked.
/// - `hang`: reads observations and never answers.
/// - `crash-in R,R…`: answers `{"prikazy": []}`, but exits with status 7 on reading round R.
/// - `crlf`: answers every round, ending its lines with `\r\n` (as Windows text mode does).
/// - `detach FILE`: starts a child that left the agent's group (`linger FILE`), then hangs.
/// - `linger FILE`: appends a byte to FILE every 20 ms for a minute: a heartbeat to watch.
/// - `hog-in R,R… FILE`: answers, but on reading round R first takes 1 GiB in 16 MiB steps,
///   writing every page, and keeps it; beats FILE (as `linger`) from its start.
fn agent(args: &[String]) -> ExitCode {
    let mode = args.first().map(String::as_str).unwrap_or("");
    match mode {
        "linger" => {
            linger(&args[1]);
            return ExitCode::SUCCESS;
        }
        "detach" => detach(&args[1]),
        _ => {}
    }
    let in_rounds: Vec<u64> = match mode {
        "crash-in" | "hog-in" => args[1].split(',').map(|r| r.parse().expect("a round")).collect(),
        _ => Vec::new(),
    };
    if mode == "hog-in" {
        let file = args[2].clone();
        std::thread::spawn(move || linger(&file));
    }
    let mut kept: Vec<Vec<u8>> = Vec::new();
    let stdin = std::io::stdin();
    let mut out = std::io::stdout();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let obs: serde_json::Value = serde_json::from_str(&line).expect("an observation");
        let round = obs["kolo"].as_u64().expect("kolo");
        match mode {
            "hang" | "detach" => std::thread::sleep(Duration::from_secs(3600)),
            "crash-in" if in_rounds.contains(&round) => std::process::exit(7),
            "hog-in" if in_rounds.contains(&round) => {
                while kept.len() < 64 {
                    // A non-zero fill writes every page: the memory is committed and touched.
                    kept.push(vec![1u8; 16 << 20]);
                }
                writeln!(out, "{{\"prikazy\": []}}").unwrap();
            }
            "crlf" => write!(out, "{{\"prikazy\": []}}\r\n").unwrap(),
            _ => writeln!(out, "{{\"prikazy\": []}}").unwrap(),
        }
        out.flush().unwrap();
    }
    ExitCode::SUCCESS
}

/// Appends a byte to `file` every 20 ms for a minute.
fn linger(file: &str) {
    for _ in 0..3000 {
        if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(file) {
            let _ = f.write_all(b".");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Starts `linger FILE` outside the agent's group, as a program that daemonizes would: on Linux
/// in a process group of its own, on Windows detached from the console, in a group of its own,
/// and asking to break away from the Job (which the runner's Job refuses).
#[allow(clippy::zombie_processes)] // never waited for on purpose: the runner must kill it
fn detach(file: &str) {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(["agent", "linger", file]).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    #[cfg(windows)]
    {
        use std::os::windows::process::CommandExt;
        const DETACHED_PROCESS: u32 = 0x0000_0008;
        const CREATE_NEW_PROCESS_GROUP: u32 = 0x0000_0200;
        const CREATE_BREAKAWAY_FROM_JOB: u32 = 0x0100_0000;
        cmd.creation_flags(DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP | CREATE_BREAKAWAY_FROM_JOB);
        if cmd.spawn().is_ok() {
            return;
        }
        cmd.creation_flags(DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP);
    }
    cmd.spawn().expect("the lingering child starts");
}

// --- helpers ---

fn this_program() -> String {
    std::env::current_exe().unwrap().to_string_lossy().into_owned()
}

fn gbely() -> &'static str {
    env!("CARGO_BIN_EXE_gbely")
}

/// The runner's own guarantees on every OS, without the sandbox (macOS and Windows have none;
/// these agents also write heartbeat files where the test reads them). The sandbox's are in
/// `tests/sandbox.rs`.
fn process_player(name: &str, command: AgentCommand, dir: &Path, limit: f64) -> ProcessPlayer {
    let mut cfg = ProcessConfig::new(dir.join(format!("{name}-work")), dir.join(format!("{name}.log")));
    cfg.time_limit = gbely_engine::limits::TimeLimit::seconds(limit).expect("a valid limit");
    cfg.sandbox = gbely_engine::runner::sandbox::SandboxMode::Off;
    ProcessPlayer::new(name, command, cfg).unwrap()
}

struct Run {
    rec: MatchRecord,
    elapsed: Duration,
    log: String,
    starts: u32,
}

/// The agent in seat 0 against the in-process Council on the reference map.
fn against_council(name: &str, mode: &[&str], rounds: u32, limit: f64) -> Run {
    let dir = scratch(name);
    let mut args = vec!["agent".to_string()];
    args.extend(mode.iter().map(|a| a.to_string()));
    let mut agent = process_player(name, AgentCommand::Exec { program: this_program(), args }, &dir, limit);
    let mut council = builtin_player("council", "council").unwrap();
    let start = Instant::now();
    let rec = {
        let mut players: [&mut dyn Player; 2] = [&mut agent, council.as_mut()];
        let opts = PlayOptions { config: MatchConfig { rounds }, record: true };
        play(Arc::new(gbely_world::reference_map()), &mut players, opts, &mut ())
    };
    let elapsed = start.elapsed();
    let log = std::fs::read_to_string(dir.join(format!("{name}.log"))).unwrap_or_default();
    Run { rec, elapsed, log, starts: agent.stats.starts }
}

fn kinds(run: &Run) -> Vec<(u32, ViolationKind)> {
    run.rec.violations[0].iter().map(|(r, k, _)| (*r, *k)).collect()
}

// --- the tests ---

/// `gbely serve template-rs` and `gbely serve expander-rs` as processes play exactly the match the
/// same two agents play in process.
fn rust_example_agents_as_processes_play_like_in_process() {
    let dir = scratch("examples");
    let served = |name: &str| AgentCommand::Exec { program: gbely().into(), args: vec!["serve".into(), name.into()] };
    let mut a = process_player("template-rs", served("template-rs"), &dir, 10.0);
    let mut b = process_player("expander-rs", served("expander-rs"), &dir, 10.0);
    let (mut c, mut d) =
        (builtin_player("template-rs", "template-rs").unwrap(), builtin_player("expander-rs", "expander-rs").unwrap());
    let opts = || PlayOptions { config: MatchConfig { rounds: 40 }, record: true };
    let map = Arc::new(gbely_world::reference_map());
    let by_process = play(map.clone(), &mut [&mut a as &mut dyn Player, &mut b], opts(), &mut ());
    let in_process = play(map, &mut [c.as_mut(), d.as_mut()], opts(), &mut ());
    assert!(by_process.violations.iter().all(Vec::is_empty), "{:?}", by_process.violations);
    assert_eq!(by_process.outcome, in_process.outcome);
    assert_eq!(by_process.last_round, 39);
    // Built-in agents' commands are regenerated, not stored: compare what each round left.
    let after_each_round = |r: &MatchRecord| -> Vec<String> {
        let turns = serde_json::to_value(&r.replay.as_ref().unwrap().turns).unwrap();
        turns.as_array().unwrap().iter().map(|t| format!("{} {} {}", t["cells"], t["units"], t["discarded"])).collect()
    };
    assert_eq!(after_each_round(&by_process), after_each_round(&in_process), "the same play every round");
    assert_eq!((a.stats.starts, b.stats.starts), (1, 1));
}

/// `gbely play --agent-cmd … -o cmd:…`: the command line runs both Rust examples as processes
/// (`cmd:` words split by the shell on Unix, by gbely itself on Windows).
fn the_command_line_plays_cmd_agents() {
    let dir = scratch("cli");
    let quoted = format!("\"{}\"", gbely());
    let out = Command::new(gbely())
        .args(["play", "--agent-cmd", &format!("{quoted} serve template-rs")])
        .args(["-o", &format!("cmd:{quoted} serve expander-rs")])
        .args(["--rounds", "20", "--time-limit", "10", "--json", "--no-replay", "--run-dir"])
        .arg(dir.join("run"))
        .current_dir(&dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let result: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert_eq!(result["rounds_played"], 20, "{result}");
    assert_eq!(result["ended_by"], "rounds");
    for side in result["sides"].as_array().unwrap() {
        assert_eq!(side["violations"], 0, "{side}");
        assert_eq!(side["details"]["timing"]["starts"], 1, "{side}");
    }
}

/// SPEC §8: no answer within the limit is a violation, the agent is killed and restarted before
/// the next round, and the fourth violation (round 3) disqualifies it and ends the duel.
fn a_hanging_agent_is_killed_restarted_and_disqualified() {
    let run = against_council("hang", &["hang"], 20, 1.0);
    let timeout = ViolationKind::Timeout;
    assert_eq!(kinds(&run), [(0, timeout), (1, timeout), (2, timeout), (3, timeout)], "{}", run.log);
    assert_eq!(run.rec.outcome[0].disqualified, Some(3));
    assert_eq!(run.rec.end_reason, EndReason::Disqualification);
    assert_eq!(run.rec.last_round, 3);
    assert_eq!(run.starts, 4, "started, then restarted after each of the first three violations");
    assert!(run.elapsed < Duration::from_secs(20), "{:?}: four timeouts cost 4 × 1 s", run.elapsed);
}

/// An agent that exits in rounds 1 and 3 loses those two rounds only: restarted, it plays on.
fn a_crashing_agent_is_restarted_and_plays_on() {
    let run = against_council("crash", &["crash-in", "1,3"], 6, 10.0);
    assert_eq!(kinds(&run), [(1, ViolationKind::Crash), (3, ViolationKind::Crash)], "{}", run.log);
    let detail = &run.rec.violations[0][0].2;
    assert!(detail.contains("exited") && detail.contains('7'), "{detail}");
    assert_eq!(run.rec.outcome[0].disqualified, None);
    assert_eq!(run.rec.last_round, 5);
    assert_eq!(run.starts, 3);
}

/// Answers ending in `\r\n` are answers, not unreadable lines. (And where the runner itself checks
/// the memory limit the judge's settings ask for, Windows, the agent's log says how.)
fn a_crlf_agent_is_understood() {
    let run = against_council("crlf", &["crlf"], 5, 10.0);
    assert!(run.rec.violations[0].is_empty(), "{:?}\n{}", run.rec.violations[0], run.log);
    assert_eq!(run.starts, 1);
    assert!(!run.log.contains("not enforced"), "{}", run.log);
    assert_eq!(run.log.contains("is checked by the runner"), cfg!(windows), "{}", run.log);
}

/// Each start leaves a child outside the agent's group (a new process group on Linux, detached
/// on Windows); killing the agent kills it too (Linux: its token; Windows: the Job). Its heartbeat
/// file stops growing.
fn children_that_detach_die_with_the_agent() {
    let dir = scratch("detach-beat");
    let beat = dir.join("heartbeat");
    let run = against_council("detach", &["detach", &beat.to_string_lossy()], 20, 1.5);
    assert_eq!(kinds(&run).len(), 4, "{}", run.log);
    assert_eq!(run.starts, 4);
    let size = || std::fs::metadata(&beat).map_or(0, |m| m.len());
    std::thread::sleep(Duration::from_millis(300));
    let before = size();
    assert!(before > 0, "the children ran");
    std::thread::sleep(Duration::from_millis(600));
    assert_eq!(size(), before, "a child outlived its agent");
}

/// `--memory-limit 256`: an agent that takes 1 GiB in rounds 1 and 3 is stopped there with a
/// crash violation (SPEC §8), restarted, and plays on; a small agent under the same limit is never
/// charged. Linux: `ulimit -v` makes the allocation fail in the agent, which aborts (a crash, its
/// log says why). Windows: the runner finds the agent over its limit and kills its Job, and the
/// detail says how much it used. Nothing is left running afterwards.
#[cfg(any(target_os = "linux", windows))]
fn an_agent_over_its_memory_limit_is_stopped_and_a_small_one_plays_on() {
    let dir = scratch("memory");
    let beat = dir.join("heartbeat");
    let agent = |name: &str, mode: &[&str]| {
        let mut cfg = ProcessConfig::new(dir.join(format!("{name}-work")), dir.join(format!("{name}.log")));
        cfg.time_limit = gbely_engine::limits::TimeLimit::seconds(20.0).expect("a valid limit");
        cfg.memory_limit = gbely_engine::limits::MemoryLimit::mib(256);
        cfg.sandbox = gbely_engine::runner::sandbox::SandboxMode::Off;
        let args = std::iter::once("agent").chain(mode.iter().copied()).map(String::from).collect();
        ProcessPlayer::new(name, AgentCommand::Exec { program: this_program(), args }, cfg).unwrap()
    };
    let mut hog = agent("hog", &["hog-in", "1,3", &beat.to_string_lossy()]);
    let mut small = agent("small", &[]);
    let start = Instant::now();
    let rec = {
        let mut players: [&mut dyn Player; 2] = [&mut hog, &mut small];
        let opts = PlayOptions { config: MatchConfig { rounds: 6 }, record: true };
        play(Arc::new(gbely_world::reference_map()), &mut players, opts, &mut ())
    };
    let elapsed = start.elapsed();
    let log = std::fs::read_to_string(dir.join("hog.log")).unwrap_or_default();
    let found: Vec<_> = rec.violations[0].iter().map(|(r, k, _)| (*r, *k)).collect();
    assert_eq!(found, [(1, ViolationKind::Crash), (3, ViolationKind::Crash)], "{:?}\n{log}", rec.violations[0]);
    for (_, _, detail) in &rec.violations[0] {
        if cfg!(windows) {
            // "the agent used N MiB, over the memory limit of 256 MiB (Windows: …)"
            let used: f64 = detail
                .strip_prefix("the agent used ")
                .and_then(|rest| rest.split(' ').next())
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("{detail}"));
            assert!(used > 256.0 && used <= 1024.0 + 64.0, "{detail}");
            assert!(detail.contains("over the memory limit of 256 MiB (Windows: "), "{detail}");
        } else {
            assert!(detail.starts_with("the agent exited (signal: 6"), "{detail}");
        }
    }
    if cfg!(windows) {
        assert!(log.contains("the memory limit (256 MiB) is checked by the runner"), "{log}");
    } else {
        assert!(log.contains("memory allocation of 16777216 bytes failed"), "{log}");
    }
    assert_eq!(rec.outcome[0].disqualified, None);
    assert_eq!(rec.last_round, 5);
    assert_eq!(hog.stats.starts, 3, "started, then restarted after each of its two violations");
    assert!(rec.violations[1].is_empty(), "{:?}", rec.violations[1]);
    assert_eq!(small.stats.starts, 1);
    assert!(elapsed < Duration::from_secs(15), "{elapsed:?}: no round waited for its 20 s limit");
    // The hogs' heartbeats stop: none of them outlived the match.
    drop((hog, small));
    let size = || std::fs::metadata(&beat).map_or(0, |m| m.len());
    std::thread::sleep(Duration::from_millis(300));
    let before = size();
    assert!(before > 0, "the hogs ran");
    std::thread::sleep(Duration::from_millis(600));
    assert_eq!(size(), before, "a hog outlived the match");
}
