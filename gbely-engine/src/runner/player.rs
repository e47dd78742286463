//! Who plays a seat: the [`Player`] trait, its answers, in-process [`Decide`] players, and the
//! figures an agent process reports ([`AgentStats`]: time, the scheduler's CPU figures,
//! isolation). Agent processes (`process`) and served players are the other implementations.

use gbely_rules::{Command, Decide, Grid, Observation, ViolationKind};

use crate::builtins::{builtin_agent, BUILTIN_AGENTS, BUILTIN_COUNCIL};

/// What the scheduler says about an agent's rounds (Linux `/proc/PID/schedstat`; zero elsewhere and in process).
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct CpuTally {
    /// Rounds measured.
    pub rounds: u32,
    /// Seconds the agent ran on a CPU while it was deciding.
    pub run_seconds: f64,
    /// Seconds it was ready to run but waited for a CPU (other agents or programs had them all).
    pub wait_seconds: f64,
    /// The longest such wait in one round.
    pub max_wait_seconds: f64,
    /// Rounds in which waiting for a CPU took more than a tenth of the round's time limit.
    pub starved_rounds: u32,
}

/// A player's answer for one round.
#[derive(Clone, Debug, PartialEq)]
pub enum PlayerAnswer {
    /// Typed commands from an in-process agent.
    Commands(Vec<Command>),
    /// The command list as received on the wire (each item parsed on its own).
    Raw(Vec<serde_json::Value>),
    Violation {
        kind: ViolationKind,
        detail: String,
    },
    /// A stop was requested (Ctrl-C) while waiting for the answer: the round is not played.
    Interrupted,
    /// An answer as a replay holds it (re-simulation).
    Replayed(gbely_world::replay::Answer),
}

/// How an agent process fared, for the summary's fairness notes.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct AgentStats {
    /// Whether it played under a time limit.
    pub timed: bool,
    /// Processes started (1 + restarts after violations).
    pub starts: u32,
    pub answered_rounds: u32,
    /// The slowest answer in time, in seconds.
    pub max_answer_seconds: f64,
    /// The 95th percentile of the answers' times (nearest rank), in seconds.
    pub p95_answer_seconds: f64,
    /// The time of the first answer, in seconds: the start-up (interpreter, imports, the first
    /// decide) included when it answered round 0.
    pub first_answer_seconds: Option<f64>,
    /// CPU time and waits for a CPU while deciding (Linux).
    pub cpu: CpuTally,
    /// Whether it ran in the sandbox, and what held it (or why nothing did).
    pub isolation: Isolation,
}

/// How an agent process was isolated from the machine and from the other agents: in the
/// sandbox (`runner::sandbox`) or not, with one line that says how, or why not.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Isolation {
    pub sandboxed: bool,
    pub detail: &'static str,
}

impl Isolation {
    pub fn sandboxed(detail: &'static str) -> Isolation {
        Isolation { sandboxed: true, detail }
    }

    pub fn unsandboxed(detail: &'static str) -> Isolation {
        Isolation { sandboxed: false, detail }
    }

    /// The summary's line: `sandboxed (…)` or `not sandboxed: why`.
    pub fn line(&self) -> String {
        if self.sandboxed {
            self.detail.to_string()
        } else {
            format!(
                "not sandboxed: {} (agents can read your files and each other's; see docs/protocol.md)",
                self.detail
            )
        }
    }
}

/// Someone who plays a seat. Deciding is split in two so that agent processes of all seats
/// can think at the same time: `begin` hands over the observation, `finish` collects the answer.
pub trait Player {
    /// A short name for tables and replays.
    fn name(&self) -> String;
    fn begin(&mut self, obs: &Observation, grid: &Grid);
    fn finish(&mut self) -> PlayerAnswer;
    /// Called once when the match is over (agent processes are stopped here).
    fn end(&mut self) {}
    /// Timings of an agent process (`None` for in-process players).
    fn stats(&self) -> Option<AgentStats> {
        None
    }
    /// The name of a deterministic built-in agent a replay reader can run again (`council`):
    /// its commands are then regenerated on reading rather than stored.
    fn builtin(&self) -> Option<&'static str> {
        None
    }
}

/// Plays a seat with an in-process [`Decide`].
#[derive(Debug)]
pub struct DecidePlayer<D> {
    name: String,
    agent: D,
    answer: Option<Vec<Command>>,
    builtin: Option<&'static str>,
}

impl<D: Decide> DecidePlayer<D> {
    pub fn new(name: impl Into<String>, agent: D) -> Self {
        DecidePlayer { name: name.into(), agent, answer: None, builtin: None }
    }

    /// A deterministic built-in agent, named as [`builtin_agent`] knows it: replays regenerate
    /// its commands from its observations instead of storing them. The agent must be what
    /// `builtin_agent(name)` makes, fresh.
    pub fn builtin(name: impl Into<String>, builtin: &'static str, agent: D) -> Self {
        debug_assert!(builtin_agent(builtin).is_some(), "unknown built-in agent `{builtin}`");
        DecidePlayer { builtin: Some(builtin), ..DecidePlayer::new(name, agent) }
    }
}

impl DecidePlayer<gbely_council::Council> {
    /// The Council as a built-in: replays regenerate its commands instead of storing them.
    pub fn council(name: impl Into<String>) -> Self {
        DecidePlayer::builtin(name, BUILTIN_COUNCIL, gbely_council::Council::new())
    }
}

/// A player of a built-in agent (see [`BUILTIN_AGENTS`]); `None` for another name.
pub fn builtin_player(name: impl Into<String>, builtin: &str) -> Option<Box<dyn Player + Send>> {
    let known = BUILTIN_AGENTS.into_iter().find(|b| *b == builtin)?;
    Some(Box::new(DecidePlayer::builtin(name, known, builtin_agent(known)?)))
}

impl<D: Decide> Player for DecidePlayer<D> {
    fn name(&self) -> String {
        self.name.clone()
    }
    fn begin(&mut self, obs: &Observation, _grid: &Grid) {
        self.answer = Some(self.agent.decide(obs));
    }
    fn finish(&mut self) -> PlayerAnswer {
        PlayerAnswer::Commands(self.answer.take().unwrap_or_default())
    }
    fn builtin(&self) -> Option<&'static str> {
        self.builtin
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_built_in_agent_has_a_player_that_says_which_it_is() {
        for name in BUILTIN_AGENTS {
            assert_eq!(builtin_player("x", name).and_then(|p| p.builtin()), Some(name));
        }
        assert!(builtin_player("x", "nobody").is_none());
    }
}
