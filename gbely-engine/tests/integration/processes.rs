//! Agents as real processes (SPEC §8): the harness, the line protocol, and hostile agents.
//! Each hostile agent must end with the violations and outcome SPEC §8 prescribes, promptly.

use crate::common::processes_with;
use crate::common::scratch;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use gbely_council::Council;
use gbely_engine::game::{play, PlayOptions};
use gbely_engine::runner::player::{DecidePlayer, Player};
use gbely_engine::runner::process::{AgentCommand, ProcessConfig, ProcessPlayer};
use gbely_engine::session::MatchRecord;
use gbely_engine::sim::{EndReason, MatchConfig};
use gbely_rules::ViolationKind;

struct Run {
    rec: MatchRecord,
    elapsed: Duration,
    log: String,
    starts: u32,
}

fn run_agent(name: &str, command: AgentCommand, dir: &Path, rounds: u32, limit: f64) -> Run {
    let mut cfg = ProcessConfig::new(dir.join("work"), dir.join("agent.log"));
    cfg.time_limit = gbely_engine::limits::TimeLimit::seconds(limit).expect("a valid limit");
    let mut agent = ProcessPlayer::new(name, command, cfg).unwrap();
    let mut council = DecidePlayer::new("council", Council::new());
    let start = Instant::now();
    let rec = {
        let mut players: [&mut dyn Player; 2] = [&mut agent, &mut council];
        let opts = PlayOptions { config: MatchConfig { rounds }, record: true };
        play(Arc::new(gbely_world::reference_map()), &mut players, opts, &mut ())
    };
    let elapsed = start.elapsed();
    Run {
        rec,
        elapsed,
        log: std::fs::read_to_string(dir.join("agent.log")).unwrap_or_default(),
        starts: agent.stats.starts,
    }
}

fn run_python(name: &str, source: &str, rounds: u32, limit: f64) -> Run {
    let dir = scratch(name);
    let file = dir.join(format!("{name}.py"));
    std::fs::write(&file, source).unwrap();
    run_agent(name, AgentCommand::Python { file, python: "python3".into() }, &dir, rounds, limit)
}

fn kinds(run: &Run) -> Vec<(u32, ViolationKind)> {
    run.rec.violations[0].iter().map(|(r, k, _)| (*r, *k)).collect()
}

/// Attacks like the template, plus a hook for misbehaving in chosen rounds.
const BASE: &str = r#"
import pravidla

def play(stav):
    cudzie = {p["id"]: p for p in stav["viditelne_susedne_pola"]}
    out = []
    for pole in stav["moje_pola"]:
        for s in pole["susedia"]:
            c = cudzie.get(s)
            if c and pole["jednotky"] > c["posadka"] * pravidla.TERENNY_BONUS[c["typ"]] + c["opevnenie"] + 1:
                out.append({"typ": "ATTACK", "z": pole["id"], "na": s, "pocet": pole["jednotky"]})
                break
    return {"prikazy": out}
"#;

#[test]
fn the_template_agent_plays_a_whole_match_without_violations() {
    let source = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../agents/my_agent.py")).unwrap();
    let run = run_python("template", &source, 150, 2.0);
    assert_eq!(run.rec.last_round, 149);
    assert!(run.rec.violations[0].is_empty(), "{:?}\n{}", run.rec.violations[0], run.log);
    assert!(run.rec.outcome[0].cells > 100, "the template expands");
    assert_eq!(run.starts, 1, "one process for the whole match");
}

#[test]
fn an_agent_that_sleeps_past_the_limit_loses_those_rounds() {
    let src = format!("{BASE}\nimport time\ndef decide(stav):\n    if stav['kolo'] in (2, 5):\n        time.sleep(3)\n    return play(stav)\n");
    // A 1.5 s limit leaves room for a slow start on a busy machine; the sleeps are 3 s.
    let run = run_python("sleeper", &src, 8, 1.5);
    assert_eq!(kinds(&run), [(2, ViolationKind::Timeout), (5, ViolationKind::Timeout)]);
    assert_eq!(run.rec.outcome[0].disqualified, None);
    assert_eq!(run.rec.last_round, 7);
    assert_eq!(run.starts, 3, "killed and restarted after each violation");
    assert!(run.elapsed < Duration::from_secs(10), "{:?}: two timeouts cost 2 × 1.5 s", run.elapsed);
    // The lost rounds carry no commands in the replay.
    let replay = run.rec.replay.as_ref().unwrap();
    assert!(matches!(replay.turns[2].answers[0], gbely_world::replay::Answer::Violation(_)));
}

#[test]
fn an_agent_that_raises_loses_those_rounds() {
    let src = format!("{BASE}\ndef decide(stav):\n    if stav['kolo'] in (1, 3):\n        raise ValueError('boom')\n    return play(stav)\n");
    let run = run_python("raiser", &src, 6, 2.0);
    assert_eq!(kinds(&run), [(1, ViolationKind::Crash), (3, ViolationKind::Crash)]);
    assert!(run.rec.violations[0][0].2.contains("ValueError: boom"));
    assert!(run.log.contains("Traceback"), "the traceback is in the agent's log");
    assert_eq!(run.rec.outcome[0].disqualified, None);
}

#[test]
fn an_agent_that_returns_garbage_is_unreadable_then_disqualified() {
    let src = format!(
        "{BASE}\ndef decide(stav):\n    k = stav['kolo']\n    if k == 1: return 'hello'\n    if k == 2: return {{'prikazy': 5}}\n    if k == 3: return float('nan')\n    if k == 4: return None\n    return play(stav)\n"
    );
    let run = run_python("garbage", &src, 10, 2.0);
    assert_eq!(
        kinds(&run),
        [
            (1, ViolationKind::Unreadable),
            (2, ViolationKind::Unreadable),
            (3, ViolationKind::Unreadable),
            (4, ViolationKind::Unreadable)
        ]
    );
    // The fourth violation disqualifies; the duel ends at the end of that round.
    assert_eq!(run.rec.outcome[0].disqualified, Some(4));
    assert_eq!(run.rec.outcome[0].score, None);
    assert_eq!(run.rec.end_reason, EndReason::Disqualification);
    assert_eq!(run.rec.last_round, 4);
}

#[test]
fn malformed_commands_are_discarded_not_violations() {
    let src = "def decide(stav):\n    return [5, {'typ': 'JUMP'}, {'typ': 'MOVE', 'z': 'P99_99', 'na': 'P00_00', 'pocet': 1}]\n";
    let run = run_python("sloppy", src, 3, 2.0);
    assert!(run.rec.violations[0].is_empty());
    let total: u32 = run.rec.discards[0].values().sum();
    assert_eq!(total, 9);
}

#[test]
fn printing_a_lot_is_not_a_violation() {
    let src = format!("{BASE}\nimport sys\ndef decide(stav):\n    for i in range(20000):\n        print('thinking', i, 'x' * 50)\n    sys.stdout.write('not json\\n')\n    return play(stav)\n");
    let run = run_python("printer", &src, 5, 5.0);
    assert!(run.rec.violations[0].is_empty(), "{:?}", run.rec.violations[0]);
    assert!(run.log.len() > 5 * 20000 * 50, "the prints went to the log ({} bytes)", run.log.len());
    assert!(run.rec.outcome[0].cells > 1);
}

#[test]
fn an_answer_of_millions_of_commands_is_a_violation_not_an_out_of_memory() {
    let src = format!("{BASE}\ndef decide(stav):\n    if stav['kolo'] == 1:\n        return [{{'typ': 'MOVE', 'z': 'P57_02', 'na': 'P57_03', 'pocet': 1}}] * 2000000\n    return play(stav)\n");
    let run = run_python("flood", &src, 4, 10.0);
    assert_eq!(kinds(&run), [(1, ViolationKind::Unreadable)]);
    assert!(run.rec.violations[0][0].2.contains("larger than"), "{}", run.rec.violations[0][0].2);
    assert_eq!(run.rec.last_round, 3);
}

#[test]
fn an_agent_that_exits_is_restarted() {
    let src = format!(
        "{BASE}\nimport os\ndef decide(stav):\n    if stav['kolo'] == 2:\n        os._exit(7)\n    return play(stav)\n"
    );
    let run = run_python("exiter", &src, 6, 2.0);
    assert_eq!(kinds(&run), [(2, ViolationKind::Crash)]);
    assert!(run.rec.violations[0][0].2.contains("exited"), "{}", run.rec.violations[0][0].2);
    assert_eq!(run.starts, 2);
    assert_eq!(run.rec.last_round, 5);
}

#[test]
fn a_child_holding_the_agents_stdout_is_killed_with_it() {
    let dir = scratch("holder");
    let marker = format!("{}.{}", 60 + std::process::id() % 30, std::process::id());
    let script = dir.join("holder.sh");
    // Leaves a child holding stdout, then exits without answering: EOF never comes.
    std::fs::write(&script, format!("#!/bin/sh\nsleep {marker} &\nexit 0\n")).unwrap();
    let cmd = AgentCommand::Exec { program: "/bin/sh".into(), args: vec![script.to_string_lossy().into_owned()] };
    let run = run_agent("holder", cmd, &dir, 10, 0.5);
    assert_eq!(kinds(&run).len(), 4);
    assert_eq!(run.rec.outcome[0].disqualified, Some(3));
    assert_eq!(run.rec.last_round, 3);
    assert!(run.elapsed < Duration::from_secs(8), "{:?}: four timeouts cost 4 × 0.5 s", run.elapsed);
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(processes_with(&format!("sleep {marker}")), 0, "the children were killed");
}

#[test]
fn an_agent_that_fails_at_import_is_disqualified_after_four_rounds() {
    let run = run_python("broken", "import no_such_module_anywhere\ndef decide(stav):\n    return []\n", 150, 2.0);
    assert_eq!(
        kinds(&run),
        [(0, ViolationKind::Crash), (1, ViolationKind::Crash), (2, ViolationKind::Crash), (3, ViolationKind::Crash)]
    );
    assert_eq!(run.rec.outcome[0].disqualified, Some(3));
    assert_eq!(run.rec.last_round, 3);
    assert!(run.log.contains("ModuleNotFoundError"), "{}", run.log);
    assert!(run.elapsed < Duration::from_secs(15), "{:?}", run.elapsed);
}

#[test]
fn pravidla_imports_inside_the_agent_and_matches_the_rules() {
    let src = "import pravidla\nassert pravidla.POCET_KOL == 150 and pravidla.TERENNY_BONUS['vrch'] == 1.5\nassert pravidla.POSADKA_NEUTRAL == (1, 8) and pravidla.REFERENCNA_MAPA == 'gbely'\ndef decide(stav):\n    return []\n";
    let run = run_python("rules", src, 3, 2.0);
    assert!(run.rec.violations[0].is_empty(), "{}", run.log);
}

#[test]
fn a_rust_decide_served_as_a_process_plays_like_in_process() {
    // `gbely serve council` against the in-process Council: same commands, same result as two
    // in-process Councils.
    let dir = scratch("serve");
    let cmd = AgentCommand::Exec {
        program: env!("CARGO_BIN_EXE_gbely").into(),
        args: vec!["serve".into(), "council".into()],
    };
    let served = run_agent("served council", cmd, &dir, 40, 5.0);
    let mut a = DecidePlayer::new("council", Council::new());
    let mut b = DecidePlayer::new("council", Council::new());
    let mut players: [&mut dyn Player; 2] = [&mut a, &mut b];
    let inproc = play(
        Arc::new(gbely_world::reference_map()),
        &mut players,
        PlayOptions { config: MatchConfig { rounds: 40 }, record: false },
        &mut (),
    );
    assert!(served.rec.violations[0].is_empty(), "{}", served.log);
    assert_eq!(served.rec.outcome, inproc.outcome);
}

/// The Python examples and their Rust `Decide` twins play the same moves.
#[test]
fn python_and_rust_examples_play_identically() {
    fn rust_side(agent: impl gbely_rules::Decide, map: &Arc<gbely_world::Map>) -> MatchRecord {
        let mut a = DecidePlayer::new("rust", agent);
        let mut c = DecidePlayer::new("council", Council::new());
        let mut players: [&mut dyn Player; 2] = [&mut a, &mut c];
        play(map.clone(), &mut players, PlayOptions { config: MatchConfig { rounds: 60 }, record: true }, &mut ())
    }
    for (file, name) in [("my_agent.py", "template"), ("expander.py", "expander")] {
        let map = Arc::new(gbely_world::generate_duel("twins", 30, 30).unwrap());
        let dir = scratch(&format!("twins-{name}"));
        let path = std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../agents")).join(file);
        let mut cfg = ProcessConfig::new(dir.join("work"), dir.join("agent.log"));
        cfg.time_limit = gbely_engine::limits::TimeLimit::seconds(5.0).expect("a valid limit");
        let mut py =
            ProcessPlayer::new("python", AgentCommand::Python { file: path, python: "python3".into() }, cfg).unwrap();
        let mut c = DecidePlayer::new("council", Council::new());
        let by_python = {
            let mut players: [&mut dyn Player; 2] = [&mut py, &mut c];
            play(map.clone(), &mut players, PlayOptions { config: MatchConfig { rounds: 60 }, record: true }, &mut ())
        };
        let by_rust = match name {
            "template" => rust_side(agents::Template::default(), &map),
            _ => rust_side(agents::Expander::default(), &map),
        };
        assert!(by_python.violations[0].is_empty(), "{name}: {:?}", by_python.violations[0]);
        assert_eq!(by_python.outcome, by_rust.outcome, "{name}");
        let (p, r) = (by_python.replay.unwrap(), by_rust.replay.unwrap());
        for (tp, tr) in p.turns.iter().zip(&r.turns) {
            assert_eq!(tp.changes, tr.changes, "{name}: round {}", tp.round);
        }
    }
}
