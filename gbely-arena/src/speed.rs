//! A judge's speed: a fixed workload timed on the judge's machine — the engine playing a whole
//! leaderboard match of built-in agents, and a Python agent's kind of work (breadth-first
//! searches over a 60×60 grid) in the judge's interpreter — compared with the same workload on
//! the server's machine, the reference, measured when the server starts. A worker over HTTP
//! measures itself when it starts and every [`EVERY`] after, and sends the figures with each
//! claim; the server shows them on `/org` and gives no job to a worker slower than
//! `judge.min_speed` of the reference (docs/arena.md, "Workers over HTTP").

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use gbely_engine::app::runs::agent_spec::AgentSpec;
use gbely_engine::app::service::{MatchPlan, Seat};

/// How often a worker measures itself again.
pub const EVERY: Duration = Duration::from_secs(600);

/// The Python workload: 40 breadth-first searches over a 60×60 grid, as an agent's `decide`
/// does them, timed inside the interpreter (its start is not counted). Prints milliseconds.
const PYTHON_WORKLOAD: &str = r#"
import time
from collections import deque
N = 60
walls = {(x, y) for x in range(N) for y in range(N) if (x * 7 + y * 13) % 11 == 0}
start = time.perf_counter()
for k in range(40):
    sx, sy = (k * 17) % N, (k * 29) % N
    dist = {(sx, sy): 0}
    queue = deque([(sx, sy)])
    while queue:
        x, y = queue.popleft()
        d = dist[(x, y)] + 1
        for nx, ny in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
            if 0 <= nx < N and 0 <= ny < N and (nx, ny) not in walls and (nx, ny) not in dist:
                dist[(nx, ny)] = d
                queue.append((nx, ny))
print((time.perf_counter() - start) * 1000)
"#;

/// A judge's figures: milliseconds the two workloads took (less is faster).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Speed {
    /// The engine's leaderboard match of built-in agents (the expander against the Council).
    pub engine_ms: f64,
    /// The Python workload in the judge's interpreter.
    pub python_ms: f64,
}

impl Speed {
    /// This judge's speed as a share of `reference`'s: the slower of its two, 1 for as fast
    /// (a judge is as slow as its slower part: the engine's rounds or the agent's).
    pub fn share_of(&self, reference: &Speed) -> f64 {
        let engine = reference.engine_ms / self.engine_ms.max(1e-3);
        let python = reference.python_ms / self.python_ms.max(1e-3);
        engine.min(python)
    }

    /// Whether the figures are measurements (finite, above zero): a worker's claim is read
    /// from the network.
    pub fn is_plausible(&self) -> bool {
        [self.engine_ms, self.python_ms].iter().all(|v| v.is_finite() && *v > 0.0)
    }
}

/// Times the workload on this machine with the interpreter `python`; the best of three of each
/// part (the machine's momentary load counts as little as it can).
pub fn measure(python: &str) -> Result<Speed, String> {
    let map = Arc::new(gbely_world::reference_map());
    let mut engine_ms = f64::INFINITY;
    let mut python_ms = f64::INFINITY;
    for _ in 0..3 {
        let seats = vec![
            Seat::spec(AgentSpec::carried("expander-rs").ok_or("no built-in expander")?, "expander"),
            Seat::spec(AgentSpec::COUNCIL, "council"),
        ];
        let plan = MatchPlan::new(Arc::clone(&map), seats);
        let start = Instant::now();
        gbely_engine::app::service::run(plan, &mut ()).map_err(|e| format!("the engine's workload: {e}"))?;
        engine_ms = engine_ms.min(start.elapsed().as_secs_f64() * 1000.0);
        let out = std::process::Command::new(python)
            .args(["-I", "-c", PYTHON_WORKLOAD])
            .output()
            .map_err(|e| format!("the Python workload: cannot run {python}: {e}"))?;
        let ms = String::from_utf8_lossy(&out.stdout).trim().parse::<f64>();
        match ms {
            Ok(ms) if out.status.success() => python_ms = python_ms.min(ms),
            _ => {
                return Err(format!(
                    "the Python workload failed in {python}: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                ))
            }
        }
    }
    Ok(Speed { engine_ms, python_ms })
}

#[cfg(test)]
mod tests {
    use super::Speed;

    #[test]
    fn a_judge_is_as_slow_as_its_slower_part() {
        let reference = Speed { engine_ms: 100.0, python_ms: 50.0 };
        assert_eq!(Speed { engine_ms: 100.0, python_ms: 50.0 }.share_of(&reference), 1.0);
        // The engine twice as fast, Python four times as slow: a quarter.
        assert_eq!(Speed { engine_ms: 50.0, python_ms: 200.0 }.share_of(&reference), 0.25);
        assert_eq!(Speed { engine_ms: 400.0, python_ms: 25.0 }.share_of(&reference), 0.25);
        assert!(!Speed { engine_ms: f64::NAN, python_ms: 1.0 }.is_plausible());
        assert!(!Speed { engine_ms: 0.0, python_ms: 1.0 }.is_plausible());
        assert!(Speed { engine_ms: 3.0, python_ms: 1.0 }.is_plausible());
    }
}
