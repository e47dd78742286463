//! One league match, the room the rest of the league builds on: who plays ([`Entry`]),
//! on which map ([`LeagueMap`]), how ([`LeagueConfig`], [`Backend`]), what is stored of it
//! ([`MatchRow`], under its key), why a league cannot go on ([`LeagueError`]), and [`play_one`],
//! which plays it. The local scheduler ([`super::run_schedule`]) and a Ray worker
//! ([`super::remote::play_job`]) both play through it, so their rows are the same.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use gbely_world::Map;
use serde::{Deserialize, Serialize};

use crate::app::entries::{content_id, Entry, LeagueError};
use crate::app::service::{unique_names, AgentLimits, MatchPlan, Recording, Seat};
use crate::limits::{MemoryLimit, TimeLimit};
use crate::runner::cores::CoreGate;
use crate::session::MatchRecord;
use crate::tournament::{Competitor, Game, Outcome, Standings};
use std::collections::BTreeSet;

/// A map of the league, as named.
#[derive(Clone, Debug)]
pub struct LeagueMap {
    pub spec: String,
    pub map: Arc<Map>,
}

/// How a league is played.
#[derive(Clone, Debug)]
pub struct LeagueConfig {
    pub rounds: u32,
    pub time_limit: TimeLimit,
    pub memory_limit: MemoryLimit,
    pub python: String,
    pub games: u32,
    /// Matches at once.
    pub jobs: usize,
    /// Where agents' logs go (one folder per match).
    pub dir: PathBuf,
    pub backend: Backend,
    /// Record each match's replay, and its viewer page, into this folder (see [`replay_stem`]).
    pub replays: Option<PathBuf>,
    /// The cores the matches' agent processes share (see [`crate::runner::cores`]): with it,
    /// matches may outnumber cores and no agent waits for a CPU on its clock.
    pub cores: Option<Arc<CoreGate>>,
    /// Whether agents run in the sandbox.
    pub sandbox: crate::runner::sandbox::SandboxMode,
}

impl LeagueConfig {
    /// What each agent process of a match gets.
    pub fn limits(&self) -> AgentLimits {
        AgentLimits {
            time: self.time_limit,
            memory: self.memory_limit,
            cores: self.cores.clone(),
            sandbox: self.sandbox,
        }
    }
}

/// Where a league's matches are played.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Backend {
    /// On this machine, `jobs` at a time.
    Local,
    /// On a Ray cluster (`gbely league --ray ADDRESS`), each match a Ray task; `jobs` at a time,
    /// or as many as the cluster has CPUs when `jobs` is 0 (see [`super::remote`]).
    Ray { address: String },
}

/// One stored result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MatchRow {
    pub key: String,
    pub map: String,
    pub seat0: String,
    pub seat1: String,
    pub game: u32,
    pub cells: [u32; 2],
    pub score: [Option<f64>; 2],
    pub tiebreak: [Option<u32>; 2],
    pub disqualified: [bool; 2],
    pub violations: [u32; 2],
    /// How the match ended, stored as its wire name (`rounds`, `elimination`, …).
    pub ended_by: crate::sim::EndReason,
    pub rounds: u32,
    pub seconds: f64,
}

/// The key a match's result is stored under: the map's fingerprint, the seats' entries, the game
/// and the rounds.
pub(super) fn match_key(map: &Map, e0: &Entry, e1: &Entry, game: u32, rounds: u32) -> String {
    format!("{}|{}|{}|{game}|{rounds}", map.fingerprint(), e0.id, e1.id)
}

/// Plays one match of two entries on a map, the agents' files in `run_dir`.
pub fn play_one(
    e0: &Entry,
    e1: &Entry,
    lm: &LeagueMap,
    game: u32,
    config: &LeagueConfig,
    run_dir: &Path,
) -> Result<MatchRow, LeagueError> {
    let mut names = [e0.name.clone(), e1.name.clone()];
    unique_names(&mut names);
    let [n0, n1] = names;
    let mut plan =
        MatchPlan::new(lm.map.clone(), vec![Seat::spec(e0.spec.clone(), n0), Seat::spec(e1.spec.clone(), n1)]);
    plan.rounds = config.rounds;
    plan.limits = config.limits();
    plan.python = config.python.clone();
    plan.run_dir = Some(run_dir.to_path_buf());
    plan.recording = if config.replays.is_some() { Recording::Memory } else { Recording::Off };
    let start = Instant::now();
    let rec = crate::app::service::run(plan, &mut ())?.record;
    let row = row_of(&rec, lm, e0, e1, game, config.rounds, start.elapsed().as_secs_f64());
    if let (Some(dir), Some(replay)) = (&config.replays, &rec.replay) {
        if !row.interrupted() {
            let stem = dir.join(replay_stem(&row.key));
            let io = |error: std::io::Error| LeagueError::Agent { spec: dir.display().to_string(), error };
            std::fs::create_dir_all(dir).map_err(io)?;
            crate::recorder::write_replay(&stem.with_extension("json.gz"), replay).map_err(io)?;
            let page = crate::replays::viewer::viewer_html(replay).map_err(LeagueError::Remote)?;
            std::fs::write(stem.with_extension("html"), page).map_err(io)?;
        }
    }
    Ok(row)
}

/// The file name (without extension) of a match's replay and viewer page: a hash of its key, so
/// that the report finds them from the stored results.
pub fn replay_stem(key: &str) -> String {
    content_id(key.as_bytes())
}

impl MatchRow {
    /// What the match left, for the tournament core's tables and tests.
    pub fn outcome(&self) -> Outcome {
        Outcome {
            cells: self.cells,
            score: self.score,
            tiebreak: self.tiebreak,
            disqualified: self.disqualified,
            violations: self.violations,
        }
    }

    /// +1 when seat 0 won, −1 when seat 1 won, 0 for a draw (rules §10).
    pub fn winner(&self) -> i8 {
        self.outcome().winner()
    }

    /// Whether the match was stopped before its end (Ctrl-C): not stored, played again.
    pub fn interrupted(&self) -> bool {
        self.ended_by == crate::sim::EndReason::Interrupted
    }
}

/// The tables of stored rows (the tournament core's [`crate::tournament::standings()`]): the maps
/// by name, rows of entries not in `entries` left out; with a gauntlet's lines for `gauntlet`.
pub fn standings(entries: &[Entry], rows: &[MatchRow], gauntlet: bool) -> Standings {
    let who: Vec<Competitor> = entries.iter().map(|e| Competitor { id: e.id.clone(), name: e.name.clone() }).collect();
    let maps: Vec<String> = rows.iter().map(|r| r.map.clone()).collect::<BTreeSet<_>>().into_iter().collect();
    let games: Vec<Game> = rows
        .iter()
        .filter_map(|r| {
            let seat = |id: &str| entries.iter().position(|e| e.id == id);
            Some(Game {
                seats: [seat(&r.seat0)?, seat(&r.seat1)?],
                map: maps.binary_search(&r.map).ok()?,
                game: r.game,
                outcome: r.outcome(),
            })
        })
        .collect();
    let mut table = crate::tournament::standings(&who, &maps, &games);
    table.gauntlet = gauntlet.then(|| crate::tournament::gauntlet(&who, &maps, &games));
    table
}

fn row_of(rec: &MatchRecord, lm: &LeagueMap, e0: &Entry, e1: &Entry, game: u32, rounds: u32, seconds: f64) -> MatchRow {
    let o = Outcome::of(rec);
    MatchRow {
        key: match_key(&lm.map, e0, e1, game, rounds),
        map: lm.spec.clone(),
        seat0: e0.id.clone(),
        seat1: e1.id.clone(),
        game,
        cells: o.cells,
        score: o.score,
        tiebreak: o.tiebreak,
        disqualified: o.disqualified,
        violations: o.violations,
        ended_by: rec.end_reason,
        rounds: rec.rounds_played(),
        seconds,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::runs::agent_spec::AgentSpec;

    /// A `cmd:` entry is who it runs: rebuilding the program or editing the script it names makes
    /// another entry (its own results), the same content the same entry.
    #[test]
    fn a_cmd_entry_is_identified_by_the_content_of_what_it_runs() {
        let dir = std::env::temp_dir().join(format!("gbely-entry-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (program, script) = (dir.join("bot"), dir.join("bot.py"));
        std::fs::write(&program, "#!/bin/sh\necho one\n").unwrap();
        std::fs::write(&script, "def decide(stav):\n    return []\n").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let id = |spec: &AgentSpec| Entry::from_spec(spec, "bot".into()).unwrap().id;
        let binary = AgentSpec::Command(program.display().to_string());
        let interpreted = AgentSpec::Command(format!("python3 {} --fast", script.display()));
        let (b1, i1) = (id(&binary), id(&interpreted));
        assert_eq!(id(&binary), b1, "the same program, the same entry");
        std::fs::write(&program, "#!/bin/sh\necho two\n").unwrap();
        assert_ne!(id(&binary), b1, "a rebuilt program is a new entry");
        assert_eq!(id(&interpreted), i1);
        std::fs::write(&script, "def decide(stav):\n    return [] # better\n").unwrap();
        assert_ne!(id(&interpreted), i1, "an edited script is a new entry");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
