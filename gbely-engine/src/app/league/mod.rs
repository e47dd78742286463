//! Leagues: every entry against every other, on every map, in both seat orders, on all cores,
//! with results kept in SQLite so that a league resumes where it stopped and grows by new entries.
//!
//! * **Entries** are identified by name and content hash (`expander.py@3f2a…`): an edited file is
//!   a new entry, never a silent overwrite of the old one's results.
//! * **Pairings**: for each unordered pair of entries, each map and each game index, two matches
//!   with the seats swapped (the second seat is the Council's seat of a duel map).
//! * **Results do not depend on `--jobs` or on the order matches finish or are read**: matches
//!   are stored by key, and standings are computed from all stored results at once.
//! * **Ratings**: the Elo maximum-likelihood fit over all results (Bradley–Terry with a weak
//!   prior, [`crate::tournament::rating`]), with a 95 % interval and the likelihood of
//!   superiority of every entry over every other; the same per map.
//!
//! Pairings, the scheduler and the tables are the tournament core's ([`crate::tournament`]);
//! here are what a league of agent processes adds. The rooms, each using only those listed after
//! it, never one before it:
//!
//! * this file: [`run_league`], [`run_schedule`]: the core's league on an arena of local
//!   processes ([`Local`]) or of Ray workers ([`remote::RayArena`]), stored as it goes;
//! * [`remote`]: a match as a self-contained job, and the Ray backend's driver;
//! * [`report`]: the HTML page of the tables ([`play::standings`] of the stored rows);
//! * [`db`]: the SQLite database; [`schedule`]: the league's maps;
//! * [`play`]: one match (entries, maps, settings, the stored row, the error) and
//!   [`play_one`], which plays it for the scheduler and for a Ray worker alike.

pub mod db;
pub mod play;
pub mod remote;
pub mod report;
pub mod schedule;

pub use play::{standings, Backend, LeagueConfig, LeagueMap, MatchRow};

use std::collections::BTreeSet;
use std::time::Instant;

use serde::Serialize;

use super::entries::{Entry, LeagueError};
use super::runs::agent_spec::{file_stem, AgentSpec};
use super::runs::interpreter::resolve_python;
use super::runs::RunError;
use crate::runner::interrupt;
use crate::tournament::{league::play_league, Arena, Flow, Match, Outcome};
use db::LeagueDb;
use play::{match_key, play_one};
use schedule::{schedule_pairings, Pairing, Schedule};

/// What happened while a league ran (for the summary).
#[derive(Clone, Debug, Default, Serialize)]
pub struct LeagueRun {
    pub total: usize,
    pub already_played: usize,
    pub played: usize,
    pub interrupted: bool,
    pub jobs: usize,
    /// `local`, or `ray ADDRESS`.
    pub backend: String,
    pub seconds: f64,
    /// Notes on the machine (oversubscription).
    pub notes: Vec<String>,
}

/// A match being reported as it finishes: (matches done, matches to play, the row).
pub type Progress<'a> = dyn FnMut(usize, usize, &MatchRow) + 'a;

/// Plays the matches of `entries` on `maps` that `db` does not hold yet, `config.jobs` at a
/// time, storing each as it finishes. Ctrl-C stops taking new matches; the ones in progress are
/// stopped and not stored (they are played again next time).
pub fn run_league(
    db: &LeagueDb,
    entries: &[Entry],
    maps: &[LeagueMap],
    config: &LeagueConfig,
    progress: &mut Progress<'_>,
) -> Result<(LeagueRun, BTreeSet<String>), LeagueError> {
    run_schedule(db, entries, maps, config, Schedule::RoundRobin, progress)
}

/// [`run_league`] for any schedule (a gauntlet: the first entry against each of the others).
pub fn run_schedule(
    db: &LeagueDb,
    entries: &[Entry],
    maps: &[LeagueMap],
    config: &LeagueConfig,
    schedule: Schedule,
    progress: &mut Progress<'_>,
) -> Result<(LeagueRun, BTreeSet<String>), LeagueError> {
    if entries.len() < 2 {
        return Err(LeagueError::TooFewEntries);
    }
    let mut seen = BTreeSet::new();
    for e in entries {
        if !seen.insert(e.id.clone()) {
            return Err(LeagueError::Duplicate(e.spec.to_string()));
        }
        db.add_entry(e)?;
    }
    let settings = format!(
        "rounds {}, time limit {}",
        config.rounds,
        config.time_limit.as_secs_f64().map_or("off".to_string(), |s| format!("{s} s"))
    );
    db.check_settings(&settings)?;
    let all = schedule_pairings(schedule, entries.len(), maps.len(), config.games);
    let keys: BTreeSet<String> = all
        .iter()
        .map(|p| match_key(&maps[p.map].map, &entries[p.seat0], &entries[p.seat1], p.game, config.rounds))
        .collect();
    let done = db.played()?;
    let todo: Vec<Pairing> = all
        .into_iter()
        .filter(|p| {
            !done.contains(&match_key(&maps[p.map].map, &entries[p.seat0], &entries[p.seat1], p.game, config.rounds))
        })
        .collect();
    let mut run = LeagueRun {
        total: keys.len(),
        already_played: keys.len() - todo.len(),
        jobs: config.jobs,
        backend: match &config.backend {
            Backend::Local => "local".into(),
            Backend::Ray { address } => format!("ray {address}"),
        },
        ..LeagueRun::default()
    };
    // Each process agent needs a core while it thinks: say when the machine is oversubscribed.
    // (On Ray, each match asks the cluster for a CPU per agent process.)
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let per_match = entries.iter().filter(|e| e.spec.is_process()).count().min(2);
    if config.backend == Backend::Local
        && config.cores.is_none()
        && run.jobs * per_match > cores
        && !config.time_limit.is_off()
    {
        run.notes.push(format!(
            "{} matches at once with up to {per_match} agent processes each on {cores} cores: agents may wait \
             for a CPU while their clock runs (lower --jobs for timing-sensitive leagues)",
            run.jobs
        ));
    }
    if let Some(gate) = config.cores.as_ref().filter(|g| g.cores() > cores) {
        if config.backend == Backend::Local && per_match > 0 && !config.time_limit.is_off() {
            run.notes.push(format!(
                "up to {} agent processes think at once on {cores} cores: agents may wait for a CPU while their \
                 clock runs (keep the default --thinking for timing-sensitive leagues)",
                gate.cores()
            ));
        }
    }
    let start = Instant::now();
    let remaining = todo.len();
    let mut first_error = None;
    // The first error stops the matches in progress too, as Ctrl-C does.
    let mut store = |_: usize, result: Result<Option<MatchRow>, LeagueError>| -> Flow {
        match result {
            Ok(Some(row)) => match db.store(&row) {
                Ok(()) => {
                    run.played += 1;
                    progress(run.played, remaining, &row);
                    Flow::Go
                }
                Err(e) => {
                    first_error.get_or_insert(e);
                    interrupt::request();
                    Flow::Stop
                }
            },
            Ok(None) => Flow::Go,
            Err(e) => {
                first_error.get_or_insert(e);
                interrupt::request();
                Flow::Stop
            }
        }
    };
    match &config.backend {
        Backend::Local => {
            let arena = Local { todo: &todo, entries, maps, config };
            play_league(&arena, &todo, run.jobs, &interrupt::requested, &mut store);
        }
        // On Ray every job is made before the first match: an unreadable agent file fails here.
        Backend::Ray { address } if remaining > 0 => {
            let jobs = todo.iter().map(|p| remote::match_job(p, entries, maps, config)).collect::<Result<_, _>>()?;
            let arena = remote::RayArena::start(&config.python, address, config.jobs, jobs)?;
            play_league(&arena, &todo, arena.in_flight(), &interrupt::requested, &mut store);
            arena.finish()?;
        }
        Backend::Ray { .. } => {}
    }
    if let Some(e) = first_error {
        return Err(e);
    }
    run.interrupted = run.played < remaining;
    run.seconds = start.elapsed().as_secs_f64();
    Ok((run, keys))
}

/// The league's matches played here: each pairing by [`play_one`], the agents' logs in their own
/// run folder. A match stopped by Ctrl-C is `None` (not stored, played again next time).
#[derive(Debug)]
pub struct Local<'a> {
    todo: &'a [Pairing],
    entries: &'a [Entry],
    maps: &'a [LeagueMap],
    config: &'a LeagueConfig,
}

impl Arena for Local<'_> {
    type Played = Option<MatchRow>;
    type Error = LeagueError;

    fn play(&self, m: &Match) -> Result<Option<MatchRow>, LeagueError> {
        let p = &self.todo[m.index];
        let (e0, e1) = (&self.entries[p.seat0], &self.entries[p.seat1]);
        let run_dir =
            self.config.dir.join(format!("{:05}-{}-vs-{}", m.index, file_stem(&e0.name), file_stem(&e1.name)));
        let row = play_one(e0, e1, &self.maps[p.map], p.game, self.config, &run_dir)?;
        Ok((!row.interrupted()).then_some(row))
    }

    fn outcome(&self, played: &Option<MatchRow>) -> Option<Outcome> {
        played.as_ref().map(MatchRow::outcome)
    }
}

/// The interpreter for Python entries, resolved once (see [`resolve_python`]).
pub fn league_python(specs: &[AgentSpec], python: &str) -> Result<String, RunError> {
    if specs.iter().any(AgentSpec::is_python) {
        resolve_python(python)
    } else {
        Ok(python.to_string())
    }
}
