//! The runner is fair, bounded and clean: one agent's trouble never touches another (issue 10).
//! Each test pins a way it went wrong before: a slow seat charging the seats read after it, a
//! harness key an agent could send, a grandchild escaping with `setsid()`, an unbounded log.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use gbely_engine::game::{play, PlayOptions};
use gbely_engine::runner::player::Player;
use gbely_engine::runner::process::{AgentCommand, ProcessConfig, ProcessPlayer};
use gbely_engine::runner::sandbox::SandboxMode;
use gbely_engine::session::MatchRecord;
use gbely_engine::sim::MatchConfig;
use gbely_rules::ViolationKind;
use gbely_world::{generate_final, FinalConfig, Map};

use crate::common::scratch;

/// A Python agent file in `dir`, played with `limit` seconds a round.
fn python_agent(dir: &Path, name: &str, source: &str, limit: f64) -> ProcessPlayer {
    python_agent_in(dir, name, source, limit, SandboxMode::Auto)
}

fn python_agent_in(dir: &Path, name: &str, source: &str, limit: f64, sandbox: SandboxMode) -> ProcessPlayer {
    let file = dir.join(format!("{name}.py"));
    std::fs::write(&file, source).unwrap();
    let mut cfg = ProcessConfig::new(dir.join(format!("work-{name}")), dir.join(format!("{name}.log")));
    cfg.time_limit = gbely_engine::limits::TimeLimit::seconds(limit).expect("a valid limit");
    cfg.sandbox = sandbox;
    ProcessPlayer::new(name, AgentCommand::Python { file, python: "python3".into() }, cfg).unwrap()
}

fn play_all(map: Map, players: &mut [ProcessPlayer], rounds: u32) -> MatchRecord {
    let mut refs: Vec<&mut dyn Player> = players.iter_mut().map(|p| p as &mut dyn Player).collect();
    play(Arc::new(map), &mut refs, PlayOptions { config: MatchConfig { rounds }, record: false }, &mut ())
}

const FAST: &str = "def decide(stav):\n    return []\n";

/// Sleeps past the limit (1.5 s in duels, 2 s in the final) in rounds 1–3 (three violations: not
/// yet disqualified). The limits leave the fast agents room on a loaded 2-core machine.
const SLOW: &str =
    "import time\ndef decide(stav):\n    if 1 <= stav['kolo'] <= 3:\n        time.sleep(2.6)\n    return []\n";

fn violation_rounds(rec: &MatchRecord, seat: usize) -> Vec<(u32, ViolationKind)> {
    rec.violations[seat].iter().map(|(r, k, _)| (*r, *k)).collect()
}

#[test]
fn a_slow_seat_never_charges_a_fast_one_in_either_seat_order() {
    let timeouts = vec![(1, ViolationKind::Timeout), (2, ViolationKind::Timeout), (3, ViolationKind::Timeout)];
    for slow_seat in [0, 1] {
        let dir = scratch(&format!("duel-{slow_seat}"));
        let mut players = vec![python_agent(&dir, "a", FAST, 1.5), python_agent(&dir, "b", FAST, 1.5)];
        players[slow_seat] = python_agent(&dir, "slow", SLOW, 1.5);
        let rec = play_all(gbely_world::generate_duel("fair", 20, 20).unwrap(), &mut players, 6);
        let fast_seat = 1 - slow_seat;
        assert_eq!(violation_rounds(&rec, fast_seat), [], "slow agent in seat {slow_seat}: {:?}", rec.violations);
        assert_eq!(violation_rounds(&rec, slow_seat), timeouts, "slow agent in seat {slow_seat}");
    }
}

#[test]
fn a_final_with_one_slow_and_seven_fast_agents_charges_only_the_slow_one() {
    let dir = scratch("final");
    let map = generate_final("fair-final", FinalConfig::for_size(41)).unwrap();
    // Eight agent processes and the Council; the slow one sits in seat 2, in the middle of the order.
    let mut players: Vec<ProcessPlayer> = (0..8)
        .map(|k| {
            if k == 2 {
                python_agent(&dir, "slow", SLOW, 2.0)
            } else {
                python_agent(&dir, &format!("fast{k}"), FAST, 2.0)
            }
        })
        .collect();
    let council_cmd = AgentCommand::Exec {
        program: env!("CARGO_BIN_EXE_gbely").into(),
        args: vec!["serve".into(), "council".into()],
    };
    let mut cfg = ProcessConfig::new(dir.join("work-council"), dir.join("council.log"));
    cfg.time_limit = gbely_engine::limits::TimeLimit::seconds(2.0).expect("a valid limit");
    players.push(ProcessPlayer::new("council", council_cmd, cfg).unwrap());
    let rec = play_all(map, &mut players, 5);
    for seat in (0..9).filter(|&s| s != 2) {
        assert_eq!(violation_rounds(&rec, seat), [], "seat {seat}: {:?}", rec.violations[seat]);
    }
    assert_eq!(violation_rounds(&rec, 2).len(), 3, "{:?}", rec.violations[2]);
}

#[test]
fn an_answer_with_any_extra_top_level_key_is_not_a_violation() {
    // SPEC §6.2: unknown keys are ignored, whatever their names, including the harness's old
    // internal error key.
    let src = "def decide(stav):\n    return {'prikazy': [], '__gbely_error__': {'kind': 'crash', 'detail': 'forged'}, '#gbely-error ': 1}\n";
    let dir = scratch("extra-key");
    let mut players = vec![python_agent(&dir, "keys", src, 5.0), python_agent(&dir, "other", FAST, 5.0)];
    let rec = play_all(gbely_world::generate_duel("keys", 16, 16).unwrap(), &mut players, 3);
    assert_eq!(violation_rounds(&rec, 0), [], "{:?}", rec.violations[0]);
}

#[test]
fn harness_errors_name_their_cause() {
    let dir = scratch("causes");
    let cases = [
        (
            "numpyless",
            "import no_such_module_xyz\ndef decide(stav):\n    return []\n",
            "ModuleNotFoundError: No module named 'no_such_module_xyz'",
        ),
        ("nodecide", "x = 1\n", "defines no function decide(stav)"),
        ("raiser", "def decide(stav):\n    raise KeyError('boom')\n", "decide raised KeyError: 'boom'"),
        ("notjson", "def decide(stav):\n    return {'prikazy': [object()]}\n", "the answer is not JSON"),
    ];
    for (name, src, cause) in cases {
        let mut players =
            vec![python_agent(&dir, name, src, 5.0), python_agent(&dir, &format!("{name}-other"), FAST, 5.0)];
        let rec = play_all(gbely_world::generate_duel("causes", 16, 16).unwrap(), &mut players, 2);
        let v = &rec.violations[0];
        assert_eq!(v.len(), 2, "{name}: {v:?}");
        assert!(v[0].2.contains(cause), "{name}: `{}` should name `{cause}`", v[0].2);
    }
}

fn alive(pid: i32) -> bool {
    // A zombie has no cmdline; a live process has one (possibly empty for kernel threads).
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        let state = s.rsplit_once(')').map(|(_, r)| r.trim_start().chars().next().unwrap_or('?')).unwrap_or('?');
        state != 'Z' && state != 'X'
    })
}

#[test]
fn a_grandchild_that_left_the_process_group_is_killed_with_the_agent() {
    let dir = scratch("setsid");
    let pid_file = dir.join("grandchild.pid");
    // Starts a grandchild in a new session (setsid: a new process group too) that would sleep
    // for ten minutes, and writes its pid down.
    let src = format!(
        "import subprocess\nstarted = False\ndef decide(stav):\n    global started\n    if not started:\n        p = subprocess.Popen(['sleep', '600'], start_new_session=True)\n        open({:?}, 'w').write(str(p.pid))\n        started = True\n    return []\n",
        pid_file.to_str().unwrap()
    );
    // Without the sandbox (whose pid namespace takes every descendant along: tests/sandbox.rs):
    // the token finds the grandchild, which writes its pid where the test reads it.
    let escaper = python_agent_in(&dir, "escaper", &src, 5.0, SandboxMode::Off);
    let mut players = vec![escaper, python_agent(&dir, "other", FAST, 5.0)];
    let rec = play_all(gbely_world::generate_duel("setsid", 16, 16).unwrap(), &mut players, 3);
    assert_eq!(violation_rounds(&rec, 0), []);
    let pid: i32 = std::fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap();
    drop(players);
    std::thread::sleep(Duration::from_millis(200));
    assert!(!alive(pid), "the setsid grandchild {pid} outlived the match");
}

#[test]
fn an_agent_runs_in_its_own_folder_with_only_its_own_files() {
    let src = "import os, sys\ndef decide(stav):\n    here = os.path.dirname(os.path.abspath(__file__))\n    print('cwd', os.getcwd(), sorted(os.listdir('.')), sorted(os.listdir(here)), file=sys.stderr)\n    return []\n";
    for mode in [SandboxMode::Off, SandboxMode::Require] {
        let dir = scratch(&format!("cwd-{mode:?}"));
        let mut players = vec![python_agent_in(&dir, "where", src, 5.0, mode), python_agent(&dir, "other", FAST, 5.0)];
        let rec = play_all(gbely_world::generate_duel("cwd", 16, 16).unwrap(), &mut players, 1);
        assert_eq!(violation_rounds(&rec, 0), []);
        let log = std::fs::read_to_string(dir.join("where.log")).unwrap();
        if mode == SandboxMode::Off {
            // Its own folder with the harness and `pravidla.py`; its file where the user keeps it.
            let own = std::fs::canonicalize(dir.join("work-where")).unwrap();
            assert!(log.contains(&format!("cwd {} ['gbely_harness.py', 'pravidla.py']", own.display())), "{log}");
        } else {
            // An empty scratch folder; beside its file (a copy) only the harness and `pravidla.py`.
            assert!(log.contains("cwd /scratch [] ['gbely_harness.py', 'pravidla.py', 'where.py']"), "{log}");
        }
    }
}

#[test]
fn the_log_is_cut_at_its_limit_and_the_agent_goes_on() {
    let dir = scratch("log-cap");
    let file = dir.join("chatty.py");
    // 1 MB of output every round, far past a 64 KiB cap.
    std::fs::write(
        &file,
        "import sys\ndef decide(stav):\n    sys.stderr.write('x' * 1000000 + '\\n')\n    return []\n",
    )
    .unwrap();
    let mut cfg = ProcessConfig::new(dir.join("work"), dir.join("chatty.log"));
    cfg.log_limit = 64 * 1024;
    let chatty = ProcessPlayer::new("chatty", AgentCommand::Python { file, python: "python3".into() }, cfg).unwrap();
    let mut players = vec![chatty, python_agent(&dir, "other", FAST, 5.0)];
    let rec = play_all(gbely_world::generate_duel("log", 16, 16).unwrap(), &mut players, 4);
    assert_eq!(violation_rounds(&rec, 0), []);
    let log = std::fs::read_to_string(dir.join("chatty.log")).unwrap();
    assert!(log.len() < 64 * 1024 + 1024, "{} bytes", log.len());
    assert!(log.contains("the log reached its limit of 65536 bytes"), "{}", &log[log.len().saturating_sub(300)..]);
}

#[test]
fn an_agent_over_its_memory_limit_fails_alone() {
    let dir = scratch("memory");
    let file = dir.join("hog.py");
    std::fs::write(&file, "def decide(stav):\n    hog = bytearray(1 << 30)\n    return []\n").unwrap();
    let mut cfg = ProcessConfig::new(dir.join("work"), dir.join("hog.log"));
    cfg.memory_limit = gbely_engine::limits::MemoryLimit::mib(256);
    let hog = ProcessPlayer::new("hog", AgentCommand::Python { file, python: "python3".into() }, cfg).unwrap();
    let mut players = vec![hog, python_agent(&dir, "other", FAST, 5.0)];
    let rec = play_all(gbely_world::generate_duel("memory", 16, 16).unwrap(), &mut players, 2);
    let v = &rec.violations[0];
    assert_eq!(v.len(), 2, "{v:?}");
    assert!(v[0].2.contains("MemoryError"), "{}", v[0].2);
    assert_eq!(violation_rounds(&rec, 1), []);
}

#[test]
fn fairness_notes_warn_when_timed_agents_outnumber_the_cores() {
    let dir = scratch("notes");
    let mut players: Vec<ProcessPlayer> = (0..2).map(|k| python_agent(&dir, &format!("p{k}"), FAST, 5.0)).collect();
    let rec = play_all(gbely_world::generate_duel("notes", 16, 16).unwrap(), &mut players, 1);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let notes = gbely_engine::app::runs::results::fairness_notes(&rec);
    let warned = notes.iter().any(|n| n.contains("2 timed agents share"));
    assert_eq!(warned, 2 > cores, "{notes:?}");
    assert_eq!(gbely_engine::app::runs::results::timed_agents(&rec), 2);
}
