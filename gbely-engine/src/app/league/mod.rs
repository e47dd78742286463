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
//!   prior, [`super::rating`]), with a 95 % interval and the likelihood of superiority of every
//!   entry over every other; the same per map.
//!
//! The rooms, each using only those listed after it, never one before it:
//!
//! * this file: the scheduler ([`run_league`], [`run_schedule`]) on local threads or on Ray;
//! * [`remote`]: a match as a self-contained job, and the Ray backend's driver;
//! * [`report`]: the HTML page of the [`standings`]: the tables computed from stored rows;
//! * [`db`]: the SQLite database; [`schedule`]: the league's maps and pairings;
//! * [`play`]: one match (entries, maps, settings, the stored row, the error) and
//!   [`play_one`], which plays it for the scheduler and for a Ray worker alike.

pub mod db;
pub mod play;
pub mod remote;
pub mod report;
pub mod schedule;
pub mod standings;

pub use play::{Backend, Entry, LeagueConfig, LeagueError, LeagueMap, MatchRow};

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex};
use std::time::Instant;

use serde::Serialize;

use super::runs::agent_spec::{file_stem, is_python_agent};
use super::runs::interpreter::resolve_python;
use super::runs::RunError;
use crate::builtins::builtin_of;
use crate::runner::interrupt;
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
            return Err(LeagueError::Duplicate(e.spec.clone()));
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
    let per_match = entries.iter().filter(|e| builtin_of(&e.spec).is_none()).count().min(2);
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
    // On Ray every job is made before the first match: an unreadable agent file fails here.
    let ray_jobs = match &config.backend {
        Backend::Local => Vec::new(),
        Backend::Ray { .. } => todo
            .iter()
            .enumerate()
            .map(|(i, p)| Ok((i, remote::match_job(p, entries, maps, config)?)))
            .collect::<Result<Vec<_>, LeagueError>>()?,
    };
    let queue = Mutex::new(todo.into_iter().enumerate().collect::<std::collections::VecDeque<_>>());
    let remaining = queue.lock().expect("not poisoned").len();
    let (tx, rx) = mpsc::channel::<Result<MatchRow, LeagueError>>();
    let finished = AtomicUsize::new(0);
    let mut first_error = None;
    std::thread::scope(|scope| {
        match &config.backend {
            Backend::Local => {
                for _ in 0..run.jobs.clamp(1, remaining.max(1)) {
                    let tx = tx.clone();
                    let queue = &queue;
                    scope.spawn(move || loop {
                        if interrupt::requested() {
                            return;
                        }
                        let Some((index, p)) = queue.lock().expect("not poisoned").pop_front() else { return };
                        let result = play_pairing(index, &p, entries, maps, config);
                        if tx.send(result).is_err() {
                            return;
                        }
                    });
                }
            }
            Backend::Ray { address } if remaining > 0 => {
                let tx = tx.clone();
                scope.spawn(move || {
                    if let Err(e) = remote::run_on_ray(&config.python, address, config.jobs, ray_jobs, &tx) {
                        let _ = tx.send(Err(e));
                    }
                });
            }
            Backend::Ray { .. } => {}
        }
        drop(tx);
        for result in rx {
            match result {
                Ok(row) if row.ended_by == crate::sim::EndReason::Interrupted.wire() => {}
                Ok(row) => {
                    if let Err(e) = db.store(&row) {
                        first_error.get_or_insert(e);
                        interrupt::request();
                        continue;
                    }
                    let n = finished.fetch_add(1, Ordering::Relaxed) + 1;
                    progress(n, remaining, &row);
                }
                Err(e) => {
                    first_error.get_or_insert(e);
                    interrupt::request();
                }
            }
        }
    });
    if let Some(e) = first_error {
        return Err(e);
    }
    run.played = finished.load(Ordering::Relaxed);
    run.interrupted = run.played < remaining;
    run.seconds = start.elapsed().as_secs_f64();
    Ok((run, keys))
}

/// Plays one pairing with the agents' logs in their own run folder.
fn play_pairing(
    index: usize,
    p: &Pairing,
    entries: &[Entry],
    maps: &[LeagueMap],
    config: &LeagueConfig,
) -> Result<MatchRow, LeagueError> {
    let (e0, e1) = (&entries[p.seat0], &entries[p.seat1]);
    let run_dir = config.dir.join(format!("{index:05}-{}-vs-{}", file_stem(&e0.name), file_stem(&e1.name)));
    play_one(e0, e1, &maps[p.map], p.game, config, &run_dir)
}

/// The interpreter for Python entries, resolved once (see [`resolve_python`]).
pub fn league_python(specs: &[String], python: &str) -> Result<String, RunError> {
    if specs.iter().any(|s| is_python_agent(s)) {
        resolve_python(python)
    } else {
        Ok(python.to_string())
    }
}
