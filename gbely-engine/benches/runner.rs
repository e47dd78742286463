//! Runner overhead per round for an agent process at full territory: serializing the
//! observation, the pipe round trip and parsing the answer, with an agent that answers at once
//! (a `python3` loop that echoes `[]` for every line, without parsing it).
//!
//! `cargo bench -p gbely-engine --bench runner` (add `-- --quick` for a short run).

use std::sync::Arc;
use std::time::{Duration, Instant};

use gbely_engine::game::{Player, PlayerAnswer};
use gbely_engine::protocol::observation_json;
use gbely_engine::runner::process::{AgentCommand, ProcessConfig, ProcessPlayer};
use gbely_engine::sim::{Match, MatchConfig};

const ECHO: &str = "import sys\nfor _ in sys.stdin:\n    sys.stdout.write('[]\\n')\n    sys.stdout.flush()\n";

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
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
    let mut cfg = ProcessConfig::new(dir.join("work"), dir.join("agent.log"));
    cfg.time_limit = Some(Duration::from_secs(5));
    let cmd = AgentCommand::Exec { program: "python3".into(), args: vec!["-c".into(), ECHO.into()] };
    let mut agent = ProcessPlayer::new("echo", cmd, cfg).expect("starts");
    // Warm up: the process start is not runner overhead.
    for _ in 0..5 {
        agent.begin(&obs, map.grid());
        assert!(matches!(agent.finish(), PlayerAnswer::Raw(_)));
    }
    let start = Instant::now();
    for _ in 0..rounds {
        agent.begin(&obs, map.grid());
        match agent.finish() {
            PlayerAnswer::Raw(list) => assert!(list.is_empty()),
            other => panic!("{other:?}"),
        }
    }
    let per_round = start.elapsed().as_secs_f64() / rounds as f64;
    agent.end();
    let t = Instant::now();
    let mut s = Vec::new();
    for _ in 0..rounds {
        gbely_engine::protocol::write_observation(&obs, map.grid(), &mut s);
    }
    let serialize = t.elapsed().as_secs_f64() / rounds as f64;
    println!(
        "runner overhead at full territory ({} own cells, {} KB observation): {:.3} ms per round (goal ≤ 1 ms); writing the observation JSON alone {:.3} ms",
        obs.own.len(),
        json.len() / 1024,
        per_round * 1e3,
        serialize * 1e3
    );
    let _ = std::fs::remove_dir_all(dir);
}
