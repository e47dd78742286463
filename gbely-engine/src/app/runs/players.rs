//! The players of a match: one per agent spec, in-process or an agent process with its limits
//! and its log.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use super::agent_spec::{file_stem, prepare, resolve_agent, AgentSpec};
use super::Result;
use crate::game::Player;
use crate::runner::cores::CoreGate;
use crate::runner::process::{ProcessConfig, ProcessPlayer};
use crate::runner::sandbox::SandboxMode;

/// The players of a match and their log files (`None` for in-process players).
pub struct PlaySetup {
    pub players: Vec<Box<dyn Player>>,
    pub logs: Vec<Option<PathBuf>>,
}

impl std::fmt::Debug for PlaySetup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<String> = self.players.iter().map(|p| p.name()).collect();
        f.debug_struct("PlaySetup").field("players", &names).field("logs", &self.logs).finish()
    }
}

/// What every agent process of a match gets.
#[derive(Clone, Debug, Default)]
pub struct AgentLimits {
    /// Seconds a round (`None`: no limit).
    pub time: Option<Duration>,
    /// Address space in bytes (`None`: no limit).
    pub memory: Option<u64>,
    /// The cores shared with other matches' agents (a league's), if any.
    pub cores: Option<Arc<CoreGate>>,
    /// Whether agents run in the sandbox.
    pub sandbox: SandboxMode,
}

impl AgentLimits {
    pub fn new(time: Option<Duration>, memory: Option<u64>) -> AgentLimits {
        AgentLimits { time, memory, cores: None, sandbox: SandboxMode::Auto }
    }
}

/// Builds one player per `(spec, display name)`, process agents logging into `run_dir`, each
/// working in its own folder `run_dir/.seatK`.
pub fn build_players(specs: &[(String, String)], run_dir: &Path, limits: &AgentLimits, py: &str) -> Result<PlaySetup> {
    let mut players: Vec<Box<dyn Player>> = Vec::new();
    let mut logs = Vec::new();
    for (seat, (spec, name)) in specs.iter().enumerate() {
        match resolve_agent(spec, run_dir, seat, py)? {
            AgentSpec::Builtin(b) => {
                players.push(crate::game::builtin_player(name.clone(), b).expect("a built-in agent"));
                logs.push(None);
            }
            AgentSpec::Process(cmd) => {
                let log = run_dir.join(format!("seat{seat}-{}.log", file_stem(spec)));
                let mut cfg = ProcessConfig::new(run_dir.join(format!(".seat{seat}")), log.clone());
                cfg.time_limit = limits.time;
                cfg.memory_limit = limits.memory;
                cfg.cores = limits.cores.clone();
                cfg.sandbox = limits.sandbox;
                cfg.cpu_slot = seat;
                let p = ProcessPlayer::new(name.clone(), cmd, cfg).map_err(|error| prepare(spec, run_dir, error))?;
                players.push(Box::new(p));
                logs.push(Some(log));
            }
        }
    }
    Ok(PlaySetup { players, logs })
}
