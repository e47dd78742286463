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

pub mod remote;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use gbely_world::Map;
use rusqlite::{params, Connection, OptionalExtension};
use serde::{Deserialize, Serialize};

use super::runs::{build_players, is_python_agent, load_map, AgentLimits, RunError};
use crate::game::{play, MatchRecord, PlayOptions, Player};
use crate::runner::cores::CoreGate;
use crate::runner::interrupt;
use crate::sim::MatchConfig;

/// Why a league cannot run.
#[derive(Debug, thiserror::Error)]
pub enum LeagueError {
    #[error("{0}")]
    Run(#[from] RunError),
    #[error("the league database {path}: {error}")]
    Db { path: String, error: rusqlite::Error },
    #[error("the league database {path} was played with {what}; use another --db or the same settings")]
    Settings { path: String, what: String },
    #[error("a league needs at least two entries (add --council to play the Council)")]
    TooFewEntries,
    #[error("entry `{0}` is named twice")]
    Duplicate(String),
    #[error("cannot read agent `{spec}`: {error}")]
    Agent { spec: String, error: std::io::Error },
    /// The Ray backend (see [`remote`]).
    #[error("{0}")]
    Remote(String),
}

/// One league entry: an agent spec and who it is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Entry {
    /// `name@hash`: the key of its results.
    pub id: String,
    pub name: String,
    pub spec: String,
    /// FNV-1a 64 of what the entry runs (the file's bytes, the command line, the built-in's text).
    pub hash: String,
}

impl Entry {
    /// The entry of `spec`, shown as `name` (an agent file's own AGENT_NAME and AGENT_VERSION, or
    /// its file name: see [`super::inspect::display_name`]).
    pub fn from_spec(spec: &str, name: String) -> Result<Entry, LeagueError> {
        let content: Vec<u8> = match spec {
            s if super::runs::builtin_of(s).is_some() => {
                format!("{s} gbely-engine {}", env!("CARGO_PKG_VERSION")).into_bytes()
            }
            "template" => agents::MY_AGENT_PY.as_bytes().to_vec(),
            "expander" => agents::EXPANDER_PY.as_bytes().to_vec(),
            s if s.starts_with("cmd:") => s.as_bytes().to_vec(),
            s => std::fs::read(s).map_err(|error| LeagueError::Agent { spec: s.to_string(), error })?,
        };
        let hash = format!("{:016x}", fnv1a(&content));
        Ok(Entry { id: format!("{name}@{}", &hash[..8]), name, spec: spec.to_string(), hash })
    }
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

/// A map of the league, as named.
#[derive(Clone, Debug)]
pub struct LeagueMap {
    pub spec: String,
    pub map: Arc<Map>,
}

/// The maps a league plays: a comma-separated list of map names (`gbely`, `seed:TEXT`, files), or
/// a number N: N generated 60×60 maps drawn from the league seed (`seed:<seed>-1` …).
pub fn league_maps(maps: &str, seed: &str) -> Result<Vec<LeagueMap>, LeagueError> {
    let specs: Vec<String> = match maps.trim().parse::<u32>() {
        Ok(n) => (1..=n).map(|k| format!("seed:{seed}-{k}")).collect(),
        Err(_) => maps.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect(),
    };
    specs
        .into_iter()
        .map(|spec| Ok(LeagueMap { map: Arc::new(load_map(&spec, None)?), spec }))
        .collect::<Result<Vec<_>, RunError>>()
        .map_err(LeagueError::from)
}

/// One match of the league: who sits where, on which map, which repetition.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Pairing {
    pub map: usize,
    pub seat0: usize,
    pub seat1: usize,
    pub game: u32,
}

/// Every match of a league: each unordered pair of entries, on each map, for each game, in both
/// seat orders. In a fixed order (map, pair, game, order), which is also the order ratings are
/// computed in.
/// Who plays whom.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Schedule {
    /// Every entry against every other.
    RoundRobin,
    /// The first entry (the candidate) against each of the others (the field), and the field
    /// not among itself.
    Gauntlet,
}

/// The pairings of a schedule: for each pair it lets meet, each map and game, both seat orders.
pub fn schedule_pairings(schedule: Schedule, entries: usize, maps: usize, games: u32) -> Vec<Pairing> {
    let all = pairings(entries, maps, games);
    match schedule {
        Schedule::RoundRobin => all,
        Schedule::Gauntlet => all.into_iter().filter(|p| p.seat0 == 0 || p.seat1 == 0).collect(),
    }
}

pub fn pairings(entries: usize, maps: usize, games: u32) -> Vec<Pairing> {
    let mut out = Vec::new();
    for map in 0..maps {
        for a in 0..entries {
            for b in a + 1..entries {
                for game in 0..games {
                    out.push(Pairing { map, seat0: a, seat1: b, game });
                    out.push(Pairing { map, seat0: b, seat1: a, game });
                }
            }
        }
    }
    out
}

/// How a league is played.
#[derive(Clone, Debug)]
pub struct LeagueConfig {
    pub rounds: u32,
    pub time_limit: Option<Duration>,
    pub memory_limit: Option<u64>,
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
    /// or as many as the cluster has CPUs when `jobs` is 0 (see [`remote`]).
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
    pub ended_by: String,
    pub rounds: u32,
    pub seconds: f64,
}

impl MatchRow {
    /// +1 when seat 0 won, −1 when seat 1 won, 0 for a draw (SPEC §10: more cells; on equal cells
    /// the earlier tie-break round; a disqualified side has no score and loses).
    pub fn winner(&self) -> i8 {
        match self.disqualified {
            [true, true] => return 0,
            [true, false] => return -1,
            [false, true] => return 1,
            [false, false] => {}
        }
        match self.cells[0].cmp(&self.cells[1]) {
            std::cmp::Ordering::Greater => 1,
            std::cmp::Ordering::Less => -1,
            std::cmp::Ordering::Equal => match (self.tiebreak[0], self.tiebreak[1]) {
                (Some(a), Some(b)) if a < b => 1,
                (Some(a), Some(b)) if a > b => -1,
                _ => 0,
            },
        }
    }
}

fn match_key(map: &Map, e0: &Entry, e1: &Entry, game: u32, rounds: u32) -> String {
    format!("{}|{}|{}|{game}|{rounds}", map.fingerprint(), e0.id, e1.id)
}

/// The league's database.
pub struct LeagueDb {
    conn: Connection,
    path: String,
}

impl std::fmt::Debug for LeagueDb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeagueDb").field("path", &self.path).finish()
    }
}

/// Opens (or creates, with its folder) an SQLite database and makes sure `schema` exists.
/// Leagues and A/B journals keep their results this way. Gives back the connection and the
/// path as errors name it.
pub fn open_db(path: &Path, schema: &str) -> Result<(Connection, String), LeagueError> {
    let p = path.display().to_string();
    let db = |error| LeagueError::Db { path: p.clone(), error };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        let _ = std::fs::create_dir_all(dir);
    }
    let conn = Connection::open(path).map_err(db)?;
    conn.execute_batch(schema).map_err(db)?;
    Ok((conn, p))
}

impl LeagueDb {
    pub fn open(path: &Path) -> Result<LeagueDb, LeagueError> {
        let (conn, path) = open_db(
            path,
            "PRAGMA journal_mode = WAL;
             CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL);
             CREATE TABLE IF NOT EXISTS entries (id TEXT PRIMARY KEY, name TEXT NOT NULL, spec TEXT NOT NULL, hash TEXT NOT NULL);
             CREATE TABLE IF NOT EXISTS matches (
                key TEXT PRIMARY KEY, map TEXT NOT NULL, seat0 TEXT NOT NULL, seat1 TEXT NOT NULL,
                game INTEGER NOT NULL, cells0 INTEGER NOT NULL, cells1 INTEGER NOT NULL,
                score0 REAL, score1 REAL, tiebreak0 INTEGER, tiebreak1 INTEGER,
                dq0 INTEGER NOT NULL, dq1 INTEGER NOT NULL, violations0 INTEGER NOT NULL,
                violations1 INTEGER NOT NULL, ended_by TEXT NOT NULL, rounds INTEGER NOT NULL,
                seconds REAL NOT NULL);",
        )?;
        Ok(LeagueDb { conn, path })
    }

    fn err(&self, error: rusqlite::Error) -> LeagueError {
        LeagueError::Db { path: self.path.clone(), error }
    }

    /// Records the settings on first use and refuses a league played with other ones.
    pub fn check_settings(&self, settings: &str) -> Result<(), LeagueError> {
        let old: Option<String> = self
            .conn
            .query_row("SELECT v FROM meta WHERE k = 'settings'", [], |r| r.get(0))
            .optional()
            .map_err(|e| self.err(e))?;
        match old {
            Some(old) if old != settings => {
                Err(LeagueError::Settings { path: self.path.clone(), what: format!("{old} (now {settings})") })
            }
            Some(_) => Ok(()),
            None => {
                self.conn
                    .execute("INSERT INTO meta (k, v) VALUES ('settings', ?1)", params![settings])
                    .map_err(|e| self.err(e))?;
                Ok(())
            }
        }
    }

    pub fn add_entry(&self, e: &Entry) -> Result<(), LeagueError> {
        self.conn
            .execute(
                "INSERT OR IGNORE INTO entries (id, name, spec, hash) VALUES (?1, ?2, ?3, ?4)",
                params![e.id, e.name, e.spec, e.hash],
            )
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    pub fn played(&self) -> Result<BTreeSet<String>, LeagueError> {
        let mut st = self.conn.prepare("SELECT key FROM matches").map_err(|e| self.err(e))?;
        let keys = st.query_map([], |r| r.get::<_, String>(0)).map_err(|e| self.err(e))?;
        keys.collect::<Result<_, _>>().map_err(|e| self.err(e))
    }

    pub fn store(&self, row: &MatchRow) -> Result<(), LeagueError> {
        self.conn
            .execute(
                "INSERT OR REPLACE INTO matches VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)",
                params![
                    row.key, row.map, row.seat0, row.seat1, row.game, row.cells[0], row.cells[1], row.score[0],
                    row.score[1], row.tiebreak[0], row.tiebreak[1], row.disqualified[0], row.disqualified[1],
                    row.violations[0], row.violations[1], row.ended_by, row.rounds, row.seconds
                ],
            )
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    /// The stored results of these keys, in key order.
    pub fn rows(&self, keys: &BTreeSet<String>) -> Result<Vec<MatchRow>, LeagueError> {
        let mut st = self.conn.prepare("SELECT * FROM matches ORDER BY key").map_err(|e| self.err(e))?;
        let rows = st
            .query_map([], |r| {
                Ok(MatchRow {
                    key: r.get(0)?,
                    map: r.get(1)?,
                    seat0: r.get(2)?,
                    seat1: r.get(3)?,
                    game: r.get(4)?,
                    cells: [r.get(5)?, r.get(6)?],
                    score: [r.get(7)?, r.get(8)?],
                    tiebreak: [r.get(9)?, r.get(10)?],
                    disqualified: [r.get(11)?, r.get(12)?],
                    violations: [r.get(13)?, r.get(14)?],
                    ended_by: r.get(15)?,
                    rounds: r.get(16)?,
                    seconds: r.get(17)?,
                })
            })
            .map_err(|e| self.err(e))?;
        let all: Vec<MatchRow> = rows.collect::<Result<_, _>>().map_err(|e| self.err(e))?;
        Ok(all.into_iter().filter(|r| keys.contains(&r.key)).collect())
    }
}

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
        config.time_limit.map_or("off".to_string(), |l| format!("{} s", l.as_secs_f64()))
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
    let per_match = entries.iter().filter(|e| super::runs::builtin_of(&e.spec).is_none()).count().min(2);
    if config.backend == Backend::Local
        && config.cores.is_none()
        && run.jobs * per_match > cores
        && config.time_limit.is_some()
    {
        run.notes.push(format!(
            "{} matches at once with up to {per_match} agent processes each on {cores} cores: agents may wait \
             for a CPU while their clock runs (lower --jobs for timing-sensitive leagues)",
            run.jobs
        ));
    }
    if let Some(gate) = config.cores.as_ref().filter(|g| g.cores() > cores) {
        if config.backend == Backend::Local && per_match > 0 && config.time_limit.is_some() {
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
    let run_dir = config.dir.join(format!(
        "{index:05}-{}-vs-{}",
        super::runs::file_stem(&e0.name),
        super::runs::file_stem(&e1.name)
    ));
    play_one(e0, e1, &maps[p.map], p.game, config, &run_dir)
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
    let names = if e0.name == e1.name {
        [format!("{} (seat 0)", e0.name), format!("{} (seat 1)", e1.name)]
    } else {
        [e0.name.clone(), e1.name.clone()]
    };
    let specs = [(e0.spec.clone(), names[0].clone()), (e1.spec.clone(), names[1].clone())];
    let mut setup = build_players(&specs, run_dir, &config.limits(), &config.python)?;
    let mut refs: Vec<&mut dyn Player> = setup.players.iter_mut().map(|p| p.as_mut() as &mut dyn Player).collect();
    let start = Instant::now();
    let opts = PlayOptions { config: MatchConfig { rounds: config.rounds }, record: config.replays.is_some() };
    let rec = play(lm.map.clone(), &mut refs, opts, &mut ());
    let row = row_of(&rec, lm, e0, e1, game, config.rounds, start.elapsed().as_secs_f64());
    if let (Some(dir), Some(replay)) = (&config.replays, &rec.replay) {
        if row.ended_by != crate::sim::EndReason::Interrupted.wire() {
            let stem = dir.join(replay_stem(&row.key));
            let io = |error: std::io::Error| LeagueError::Agent { spec: dir.display().to_string(), error };
            std::fs::create_dir_all(dir).map_err(io)?;
            crate::record::write_replay(&stem.with_extension("json.gz"), replay).map_err(io)?;
            let page = crate::replays::viewer::viewer_html(replay).map_err(LeagueError::Remote)?;
            std::fs::write(stem.with_extension("html"), page).map_err(io)?;
        }
    }
    Ok(row)
}

/// The file name (without extension) of a match's replay and viewer page: a hash of its key, so
/// that the report finds them from the stored results.
pub fn replay_stem(key: &str) -> String {
    format!("{:016x}", fnv1a(key.as_bytes()))
}

fn row_of(rec: &MatchRecord, lm: &LeagueMap, e0: &Entry, e1: &Entry, game: u32, rounds: u32, seconds: f64) -> MatchRow {
    let o = &rec.outcome;
    MatchRow {
        key: match_key(&lm.map, e0, e1, game, rounds),
        map: lm.spec.clone(),
        seat0: e0.id.clone(),
        seat1: e1.id.clone(),
        game,
        cells: [o[0].cells, o[1].cells],
        score: [o[0].score, o[1].score],
        tiebreak: [o[0].tiebreak_round, o[1].tiebreak_round],
        disqualified: [o[0].disqualified.is_some(), o[1].disqualified.is_some()],
        violations: [o[0].violations, o[1].violations],
        ended_by: rec.end_reason.wire().to_string(),
        rounds: rec.rounds_played(),
        seconds,
    }
}

/// An entry's line in the standings.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Standing {
    pub rank: usize,
    pub id: String,
    pub name: String,
    pub played: u32,
    pub wins: u32,
    pub draws: u32,
    pub losses: u32,
    /// Mean share of the map over its matches (a disqualified match counts 0).
    pub mean_share: f64,
    /// Elo rating from the maximum-likelihood fit over all results ([`super::rating`]), and its
    /// standard deviation: `rating ± 1.96 · uncertainty` is its 95 % interval.
    pub rating: f64,
    pub uncertainty: f64,
    pub violations: u32,
    pub disqualified: u32,
}

/// One map's standings.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MapStandings {
    pub map: String,
    pub standings: Vec<Standing>,
}

/// Standings, the pair matrix and the rank confidence, from the results of a league; the same
/// for any order of the results.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Standings {
    pub standings: Vec<Standing>,
    /// `matrix[i][j]`: (wins, draws, losses) of entry `i` (standings order) against entry `j`.
    pub matrix: Vec<Vec<[u32; 3]>>,
    /// `los[i][j]`: the probability that entry `i` (standings order) is stronger than entry `j`.
    pub los: Vec<Vec<f64>>,
    /// The standings of each map alone (its own rating fit), maps sorted by name.
    pub per_map: Vec<MapStandings>,
    /// A gauntlet's tables (set by the caller for `--gauntlet`).
    pub gauntlet: Option<Gauntlet>,
}

pub fn standings(entries: &[Entry], rows: &[MatchRow]) -> Standings {
    let mut s = table(entries, rows);
    let mut maps: Vec<&str> = Vec::new();
    for r in rows {
        if !maps.contains(&r.map.as_str()) {
            maps.push(&r.map);
        }
    }
    // Maps in a fixed order too: sorted.
    maps.sort_unstable();
    s.per_map = maps
        .iter()
        .map(|m| {
            let on: Vec<MatchRow> = rows.iter().filter(|r| r.map == *m).cloned().collect();
            MapStandings { map: m.to_string(), standings: table(entries, &on).standings }
        })
        .collect();
    s
}

/// The standings of `rows` (without the per-map tables).
fn table(entries: &[Entry], rows: &[MatchRow]) -> Standings {
    use super::rating::{fit, Counts};
    let n = entries.len();
    let index: BTreeMap<&str, usize> = entries.iter().enumerate().map(|(k, e)| (e.id.as_str(), k)).collect();
    // In key order: sums of shares then do not depend on the order the rows came in.
    let mut rows: Vec<&MatchRow> = rows.iter().collect();
    rows.sort_by(|a, b| a.key.cmp(&b.key));
    let mut st: Vec<Standing> = entries
        .iter()
        .map(|e| Standing {
            rank: 0,
            id: e.id.clone(),
            name: e.name.clone(),
            played: 0,
            wins: 0,
            draws: 0,
            losses: 0,
            mean_share: 0.0,
            rating: 0.0,
            uncertainty: 0.0,
            violations: 0,
            disqualified: 0,
        })
        .collect();
    let mut matrix = vec![vec![[0u32; 3]; n]; n];
    let mut counts = Counts::new(n);
    for row in rows {
        let (Some(&a), Some(&b)) = (index.get(row.seat0.as_str()), index.get(row.seat1.as_str())) else {
            continue;
        };
        let w = row.winner();
        counts.add(a, b, w);
        for (side, k, other) in [(0usize, a, b), (1usize, b, a)] {
            let s = &mut st[k];
            s.played += 1;
            s.mean_share += row.score[side].unwrap_or(0.0);
            s.violations += row.violations[side];
            s.disqualified += row.disqualified[side] as u32;
            let mine = if side == 0 { w } else { -w };
            let slot = match mine {
                1 => 0,
                0 => 1,
                _ => 2,
            };
            match slot {
                0 => s.wins += 1,
                1 => s.draws += 1,
                _ => s.losses += 1,
            }
            matrix[k][other][slot] += 1;
        }
    }
    let f = fit(&counts);
    for (k, s) in st.iter_mut().enumerate() {
        if s.played > 0 {
            s.mean_share /= s.played as f64;
        }
        s.rating = f.rating[k];
        s.uncertainty = f.sd(k);
    }
    // Rank by rating, then wins, then mean share, then id: a total order.
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&x, &y| {
        let (a, b) = (&st[x], &st[y]);
        b.rating
            .total_cmp(&a.rating)
            .then(b.wins.cmp(&a.wins))
            .then(b.mean_share.total_cmp(&a.mean_share))
            .then(a.id.cmp(&b.id))
    });
    let standings: Vec<Standing> =
        order.iter().enumerate().map(|(rank, &k)| Standing { rank: rank + 1, ..st[k].clone() }).collect();
    let matrix = order.iter().map(|&i| order.iter().map(|&j| matrix[i][j]).collect()).collect();
    let los = order.iter().map(|&i| order.iter().map(|&j| if i == j { 0.5 } else { f.los(i, j) }).collect()).collect();
    Standings { standings, matrix, los, per_map: Vec::new(), gauntlet: None }
}

/// One line of a gauntlet: the candidate's results against an opponent, on a map, or against
/// the whole field.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GauntletLine {
    /// The opponent's or the map's name (`field` for the whole).
    pub against: String,
    pub played: u32,
    pub wins: u32,
    pub draws: u32,
    pub losses: u32,
    /// The candidate's mean game score (win 1, draw ½).
    pub score: f64,
    /// The candidate's Elo relative to the opponents here, `400 log10(score / (1 − score))`, and
    /// its 95 % interval (`None`: unbounded, after a clean sweep one way).
    pub elo: Option<f64>,
    pub low: Option<f64>,
    pub high: Option<f64>,
}

/// A gauntlet's result: the candidate against the field, each opponent and each map.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Gauntlet {
    pub candidate: String,
    pub field: GauntletLine,
    pub per_opponent: Vec<GauntletLine>,
    pub per_map: Vec<GauntletLine>,
}

impl GauntletLine {
    fn new(against: &str) -> GauntletLine {
        GauntletLine {
            against: against.to_string(),
            played: 0,
            wins: 0,
            draws: 0,
            losses: 0,
            score: 0.0,
            elo: None,
            low: None,
            high: None,
        }
    }

    fn add(&mut self, result: i8) {
        self.played += 1;
        match result {
            1 => self.wins += 1,
            0 => self.draws += 1,
            _ => self.losses += 1,
        }
    }

    /// The score, the Elo and the Wilson score interval of the score (95 %), as Elo: it stays
    /// inside (0, 1) for a sweep (`n / (n + z²)` after `n` wins), so a sweep has a finite bound on
    /// one side. Counting a draw as half a win in a binomial overstates the variance a little:
    /// the interval errs wide.
    fn finish(&mut self) {
        if self.played == 0 {
            return;
        }
        let n = self.played as f64;
        let p = (self.wins as f64 + self.draws as f64 / 2.0) / n;
        self.score = p;
        let z: f64 = 1.959_964;
        let centre = (p + z * z / (2.0 * n)) / (1.0 + z * z / n);
        let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / (1.0 + z * z / n);
        let elo = |s: f64| (s > 1e-12 && s < 1.0 - 1e-12).then(|| 400.0 * (s / (1.0 - s)).log10());
        self.elo = elo(p);
        self.low = elo(centre - half);
        self.high = elo(centre + half);
    }
}

/// The gauntlet of `entries[0]` against the others, from the rows that involve it.
pub fn gauntlet(entries: &[Entry], rows: &[MatchRow]) -> Gauntlet {
    let cand = &entries[0];
    let mut field = GauntletLine::new("field");
    let mut per_opponent: Vec<GauntletLine> = entries[1..].iter().map(|e| GauntletLine::new(&e.name)).collect();
    let mut maps: BTreeMap<String, GauntletLine> = BTreeMap::new();
    for row in rows {
        let (side, other) = if row.seat0 == cand.id {
            (1i8, &row.seat1)
        } else if row.seat1 == cand.id {
            (-1i8, &row.seat0)
        } else {
            continue;
        };
        let Some(k) = entries[1..].iter().position(|e| &e.id == other) else { continue };
        let result = side * row.winner();
        field.add(result);
        per_opponent[k].add(result);
        maps.entry(row.map.clone()).or_insert_with(|| GauntletLine::new(&row.map)).add(result);
    }
    field.finish();
    per_opponent.iter_mut().for_each(GauntletLine::finish);
    let mut per_map: Vec<GauntletLine> = maps.into_values().collect();
    per_map.iter_mut().for_each(GauntletLine::finish);
    Gauntlet { candidate: cand.name.clone(), field, per_opponent, per_map }
}

/// The interpreter for Python entries, resolved once (see [`super::runs::resolve_python`]).
pub fn league_python(specs: &[String], python: &str) -> Result<String, RunError> {
    if specs.iter().any(|s| is_python_agent(s)) {
        super::runs::resolve_python(python)
    } else {
        Ok(python.to_string())
    }
}

/// A gauntlet's tables as HTML, for [`html_report`]'s page.
pub fn gauntlet_html(g: &Gauntlet) -> String {
    let esc = |t: &str| t.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;");
    let elo = |x: Option<f64>, high: bool| match x {
        Some(x) => format!("{:+.0}", x.round() + 0.0),
        None if high => "+∞".into(),
        None => "−∞".into(),
    };
    let mut h = format!(
        "<table><caption>Gauntlet: {} against the field, each opponent and each map</caption><tr><th class=n>against</th><th>played</th><th>W</th><th>D</th><th>L</th><th>score</th><th>Elo [95 %]</th></tr>",
        esc(&g.candidate)
    );
    for l in std::iter::once(&g.field).chain(&g.per_opponent).chain(&g.per_map) {
        let centre = match l.elo {
            Some(e) => format!("{:+.0}", e.round() + 0.0),
            None if l.wins == l.played && l.played > 0 => "all won".into(),
            None if l.played > 0 => "all lost".into(),
            None => "—".into(),
        };
        h.push_str(&format!(
            "<tr><td class=n>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1} %</td><td>{centre} [{}, {}]</td></tr>",
            esc(&l.against), l.played, l.wins, l.draws, l.losses, 100.0 * l.score, elo(l.low, false), elo(l.high, true)
        ));
    }
    h.push_str("</table>");
    h
}

/// The standings as a self-contained HTML page (no scripts, no network).
/// `viewer` gives the link to a match's viewer page, where there is one.
pub fn html_report(
    title: &str,
    s: &Standings,
    rows: &[MatchRow],
    viewer: &dyn Fn(&MatchRow) -> Option<String>,
) -> String {
    let esc = |t: &str| t.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;");
    let mut h = String::new();
    h.push_str("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">");
    h.push_str(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">",
    );
    h.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">");
    h.push_str(&format!("<title>{}</title>", esc(title)));
    h.push_str("<style>body{font:14px system-ui,sans-serif;margin:1.5em;color:#222}table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:.3em .6em;text-align:right}th{background:#f3f3f3}td.n,th.n{text-align:left}caption{text-align:left;font-weight:bold;margin-bottom:.3em}</style></head><body>");
    h.push_str(&format!("<h1>{}</h1>", esc(title)));
    if let Some(g) = &s.gauntlet {
        h.push_str(&gauntlet_html(g));
    }
    let standings_table = |h: &mut String, caption: &str, rows: &[Standing]| {
        h.push_str(&format!("<table><caption>{}</caption><tr><th>rank</th><th class=n>agent</th><th>played</th><th>W</th><th>D</th><th>L</th><th>mean share</th><th>Elo [95 %]</th><th>violations</th><th>disqualified</th></tr>", esc(caption)));
        for r in rows {
            h.push_str(&format!(
                "<tr><td>{}</td><td class=n title=\"{}\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.2} %</td><td>{:+.0} [{:+.0}, {:+.0}]</td><td>{}</td><td>{}</td></tr>",
                r.rank, esc(&r.id), esc(&r.name), r.played, r.wins, r.draws, r.losses, r.mean_share, r.rating.round() + 0.0,
                (r.rating - 1.96 * r.uncertainty).round() + 0.0, (r.rating + 1.96 * r.uncertainty).round() + 0.0, r.violations, r.disqualified
            ));
        }
        h.push_str("</table>");
    };
    standings_table(&mut h, "Standings", &s.standings);
    h.push_str("<table><caption>Pairs: wins–draws–losses of the row against the column</caption><tr><th></th>");
    for r in &s.standings {
        h.push_str(&format!("<th>{}</th>", esc(&r.name)));
    }
    h.push_str("</tr>");
    for (i, r) in s.standings.iter().enumerate() {
        h.push_str(&format!("<tr><th class=n>{}</th>", esc(&r.name)));
        for (j, c) in s.matrix[i].iter().enumerate() {
            if i == j {
                h.push_str("<td>—</td>");
            } else {
                h.push_str(&format!("<td>{}–{}–{}</td>", c[0], c[1], c[2]));
            }
        }
        h.push_str("</tr>");
    }
    h.push_str("</table><table><caption>Rank confidence: the probability that the row is stronger than the column (LOS)</caption><tr><th></th>");
    for r in &s.standings {
        h.push_str(&format!("<th>{}</th>", esc(&r.name)));
    }
    h.push_str("</tr>");
    for (i, r) in s.standings.iter().enumerate() {
        h.push_str(&format!("<tr><th class=n>{}</th>", esc(&r.name)));
        for (j, p) in s.los[i].iter().enumerate() {
            if i == j {
                h.push_str("<td>—</td>");
            } else {
                h.push_str(&format!("<td>{:.1} %</td>", 100.0 * p));
            }
        }
        h.push_str("</tr>");
    }
    h.push_str("</table>");
    for m in &s.per_map {
        standings_table(&mut h, &format!("On {}", m.map), &m.standings);
    }
    h.push_str("<table><caption>Matches</caption><tr><th class=n>map</th><th class=n>seat 0</th><th class=n>seat 1</th><th>game</th><th>cells</th><th>shares</th><th class=n>ended by</th><th>rounds</th><th class=n>replay</th></tr>");
    for m in rows {
        let share = |x: Option<f64>| x.map_or("DQ".to_string(), |v| format!("{v:.2} %"));
        let link = viewer(m).map_or("—".to_string(), |href| format!("<a href=\"{}\">view</a>", esc(&href)));
        h.push_str(&format!(
            "<tr><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td><td>{}</td><td>{} : {}</td><td>{} : {}</td><td class=n>{}</td><td>{}</td><td class=n>{link}</td></tr>",
            esc(&m.map), esc(&m.seat0), esc(&m.seat1), m.game, m.cells[0], m.cells[1], share(m.score[0]), share(m.score[1]), esc(&m.ended_by), m.rounds
        ));
    }
    h.push_str("</table></body></html>\n");
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pair_meets_on_every_map_in_both_seat_orders() {
        let p = pairings(3, 2, 1);
        // 3 pairs × 2 orders × 2 maps.
        assert_eq!(p.len(), 12);
        for map in 0..2 {
            for a in 0..3 {
                for b in 0..3 {
                    let n = p.iter().filter(|x| x.map == map && x.seat0 == a && x.seat1 == b).count();
                    assert_eq!(n, usize::from(a != b), "map {map}: {a} vs {b}");
                }
            }
        }
        assert_eq!(pairings(4, 1, 3).len(), 6 * 2 * 3);
    }

    /// A round robin of `n` entries on `maps` maps, both seats, with outcomes drawn from their
    /// strengths (entry k is 40·k Elo weaker than entry 0), and draws.
    fn round_robin(n: usize, maps: usize, seed: u64) -> (Vec<Entry>, Vec<MatchRow>) {
        let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        let mut uniform = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64
        };
        let entries: Vec<Entry> = (0..n)
            .map(|k| Entry { id: format!("e{k}@0"), name: format!("e{k}"), spec: String::new(), hash: "0".into() })
            .collect();
        let mut rows = Vec::new();
        for m in 0..maps {
            for a in 0..n {
                for b in 0..n {
                    if a == b {
                        continue;
                    }
                    let p = 1.0 / (1.0 + 10f64.powf(-40.0 * (b as f64 - a as f64) / 400.0));
                    let u = uniform();
                    let cells = if u < 0.05 {
                        [100, 100]
                    } else if u < 0.05 + 0.95 * p {
                        [120, 80]
                    } else {
                        [80, 120]
                    };
                    let mut r = row(cells, [None, None], [false, false]);
                    r.key = format!("m{m}|e{a}|e{b}");
                    r.map = format!("m{m}");
                    r.seat0 = entries[a].id.clone();
                    r.seat1 = entries[b].id.clone();
                    r.score = [Some(cells[0] as f64 / 2.3), Some(cells[1] as f64 / 2.3)];
                    rows.push(r);
                }
            }
        }
        (entries, rows)
    }

    #[test]
    fn the_ranking_does_not_depend_on_the_order_of_the_matches() {
        // Weng-Lin updated match by match gave 6 different rankings over 2000 orders of one
        // league; the fit over all results gives one, to the last bit.
        let (entries, mut rows) = round_robin(5, 5, 1);
        let first = standings(&entries, &rows);
        let mut x: u64 = 12345;
        for _ in 0..200 {
            for i in (1..rows.len()).rev() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                rows.swap(i, (x % (i as u64 + 1)) as usize);
            }
            assert_eq!(standings(&entries, &rows), first);
        }
    }

    #[test]
    fn in_a_round_robin_more_points_rank_higher() {
        // Everyone plays everyone equally often: the fit's ratings are in the order of the points
        // (the likelihood equations say Σⱼ nᵢⱼ P(rᵢ − rⱼ) + rᵢ/(c σ²) = pointsᵢ, increasing in rᵢ).
        for seed in 0..20 {
            let (entries, rows) = round_robin(5, 5, seed);
            let s = standings(&entries, &rows);
            let points: Vec<f64> = s.standings.iter().map(|x| x.wins as f64 + x.draws as f64 / 2.0).collect();
            for k in 1..points.len() {
                assert!(points[k - 1] >= points[k], "seed {seed}: {points:?}");
                if points[k - 1] > points[k] {
                    assert!(s.los[k - 1][k] > 0.5);
                }
            }
            // Per map too, and the LOS matrix is complementary.
            assert_eq!(s.per_map.len(), 5);
            for i in 0..5 {
                for j in 0..5 {
                    if i != j {
                        assert!((s.los[i][j] + s.los[j][i] - 1.0).abs() < 1e-6);
                    }
                }
            }
        }
    }

    #[test]
    fn a_gauntlet_counts_the_candidate_against_each_opponent_and_map() {
        let (entries, rows) = round_robin(3, 2, 5);
        let g = gauntlet(&entries, &rows);
        // Only the candidate's matches: 2 opponents × 2 maps × 2 seats.
        assert_eq!(g.field.played, 8);
        assert_eq!(g.per_opponent.iter().map(|l| l.played).collect::<Vec<_>>(), [4, 4]);
        assert_eq!(g.per_map.iter().map(|l| l.played).collect::<Vec<_>>(), [4, 4]);
        let total = |ls: &[GauntletLine]| ls.iter().map(|l| l.wins * 2 + l.draws).sum::<u32>();
        assert_eq!(total(&g.per_opponent), g.field.wins * 2 + g.field.draws);
        assert_eq!(total(&g.per_map), g.field.wins * 2 + g.field.draws);

        // 3 wins, 1 loss: score ¾, Elo 400 log10 3 = 190.8; Wilson with z = 1.96, n = 4:
        // centre (0.75 + 0.48019) / 1.96037 = 0.62753, half 1.96 √(0.046875 + 0.060024) / 1.96037
        // = 0.32688, so [0.30065, 0.95441]: 400 log10(0.30065 / 0.69935) = −146.7 and
        // 400 log10(0.95441 / 0.04559) = +528.3.
        let mut l = GauntletLine::new("x");
        for r in [1, 1, 1, -1] {
            l.add(r);
        }
        l.finish();
        assert!((l.elo.unwrap() - 190.85).abs() < 0.01, "{l:?}");
        assert!((l.low.unwrap() + 146.7).abs() < 0.1 && (l.high.unwrap() - 528.3).abs() < 0.1, "{l:?}");
        // A sweep: no estimate, a finite lower bound (n / (n + z²) = 4 / 7.8415 = 0.51010: +7.0).
        let mut l = GauntletLine::new("x");
        for _ in 0..4 {
            l.add(1);
        }
        l.finish();
        assert_eq!((l.elo, l.high), (None, None));
        assert!((l.low.unwrap() - 7.0).abs() < 0.1, "{l:?}");
    }

    fn row(cells: [u32; 2], tiebreak: [Option<u32>; 2], dq: [bool; 2]) -> MatchRow {
        MatchRow {
            key: String::new(),
            map: String::new(),
            seat0: "a".into(),
            seat1: "b".into(),
            game: 0,
            cells,
            score: [Some(1.0), Some(1.0)],
            tiebreak,
            disqualified: dq,
            violations: [0, 0],
            ended_by: "rounds".into(),
            rounds: 150,
            seconds: 0.0,
        }
    }

    #[test]
    fn the_winner_has_more_cells_then_the_earlier_tie_break() {
        assert_eq!(row([10, 9], [Some(50), Some(20)], [false, false]).winner(), 1);
        assert_eq!(row([9, 10], [Some(5), Some(20)], [false, false]).winner(), -1);
        assert_eq!(row([10, 10], [Some(30), Some(40)], [false, false]).winner(), 1);
        assert_eq!(row([10, 10], [Some(40), Some(30)], [false, false]).winner(), -1);
        assert_eq!(row([10, 10], [Some(40), Some(40)], [false, false]).winner(), 0);
        assert_eq!(row([50, 1], [Some(1), Some(1)], [true, false]).winner(), -1);
        assert_eq!(row([50, 1], [Some(1), Some(1)], [true, true]).winner(), 0);
    }
}
