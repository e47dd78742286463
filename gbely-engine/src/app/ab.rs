//! `gbely ab`: the pairs of an A/B test played with agent specs (files, processes, built-ins)
//! on the league's match service ([`Processes`], an arena of the tournament core), with a
//! journal (SQLite) so that a killed run resumes. The test itself — the pairs, their outcomes,
//! the order they are read in and the SPRT — is the core's ([`crate::tournament::ab`]).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use rusqlite::{params, Connection};

use super::entries::{Entry, LeagueError};
use super::league::play::{play_one, LeagueConfig, LeagueMap};
use super::runs::agent_spec::AgentSpec;
use super::runs::fork::{fork_at, ForkPoint, ForkPoints};
use super::runs::maps::load_map;
use crate::runner::interrupt;
use crate::tournament::ab::{run_ab as run_test, AbDesign, Sprt, Verdict, A, B};
use crate::tournament::{Arena, Match, Outcome};

/// What is compared, and how.
#[derive(Clone, Debug)]
pub struct AbSetup {
    pub a: Entry,
    pub b: Entry,
    /// `None`: head to head; else the fixed opponent both play.
    pub against: Option<Entry>,
    /// Map names to cycle through; empty: pair `k` plays a fresh map (`gbely` for pair 0, then
    /// `seed:<seed>-<k>`).
    pub maps: Vec<String>,
    pub seed: String,
    pub max_pairs: usize,
    /// The final: A and B each take the same finalist seat of a final map against the same
    /// field (this entry in the other seven seats, the Council in the centre); pair `k` uses seat
    /// `k mod 8`, so the pairs rotate through the corner and edge seats. `(fill, map side)`.
    pub final_mode: Option<(Entry, u32)>,
    /// Paired forks: pair `k` is A, then B, taking over their seat at fork point `k` (a replay
    /// and a round), the other seats kept by the replay's own agents; `max_pairs` is at most the
    /// number of points.
    pub forks: Option<Arc<ForkPoints>>,
}

impl AbSetup {
    /// The map of pair `k`.
    pub fn map_of(&self, k: usize) -> String {
        if let Some(f) = &self.forks {
            return f.points[k].name();
        }
        if self.final_mode.is_some() {
            let named = (!self.maps.is_empty()).then(|| self.maps[k % self.maps.len()].clone());
            return named.unwrap_or_else(|| format!("seed:{}-final-{k}", self.seed));
        }
        if !self.maps.is_empty() {
            self.maps[k % self.maps.len()].clone()
        } else if k == 0 {
            "gbely".into()
        } else {
            format!("seed:{}-{k}", self.seed)
        }
    }

    /// The journal key: pairs of the same comparison under the same settings are the same.
    fn key(&self, config: &LeagueConfig) -> String {
        format!(
            "{}|{}|{}|{}|{}|{}|{:?}",
            self.a.id,
            self.b.id,
            self.against.as_ref().map_or("head-to-head", |e| e.id.as_str()),
            match (&self.forks, &self.final_mode) {
                (Some(f), _) => format!("forks {}", f.digest),
                (None, Some((fill, size))) => format!(
                    "final {size} {} {}",
                    fill.id,
                    if self.maps.is_empty() { format!("seed:{}", self.seed) } else { self.maps.join(",") }
                ),
                (None, None) if self.maps.is_empty() => format!("seed:{}", self.seed),
                (None, None) => self.maps.join(","),
            },
            config.rounds,
            config.time_limit.as_secs_f64().unwrap_or(0.0),
            "v1"
        )
    }
}

impl AbSetup {
    /// What a pair is: head to head, or against an opponent (also the final's field).
    pub fn design(&self) -> AbDesign {
        if self.against.is_none() && self.final_mode.is_none() && self.forks.is_none() {
            AbDesign::HeadToHead
        } else {
            AbDesign::Against
        }
    }
}

/// The matches of an A/B test played with agent processes: pair `k` on [`AbSetup::map_of`]`(k)`,
/// its logs in `pair{k}/`; in a final, A or B in finalist seat `k mod 8` against the field, its
/// share standing for seat 0's. An interrupted match is `None`.
#[derive(Debug)]
pub struct Processes<'a> {
    setup: &'a AbSetup,
    config: &'a LeagueConfig,
}

impl Arena for Processes<'_> {
    type Played = Option<Outcome>;
    type Error = LeagueError;

    fn play(&self, m: &Match) -> Result<Option<Outcome>, LeagueError> {
        let s = self.setup;
        let k = m.index;
        let entry = |role: usize| match role {
            A => &s.a,
            B => &s.b,
            _ => s.against.as_ref().expect("an opponent to play against"),
        };
        let dir = self.config.dir.join(format!("pair{k:05}"));
        if let Some(forks) = &s.forks {
            return play_fork(entry(m.seats[0]), &forks.points[k], self.config, &dir.join(["a", "b"][m.leg]));
        }
        if let Some((fill, size)) = &s.final_mode {
            let sub = ["a", "b"][m.leg];
            return play_final(k, entry(m.seats[0]), fill, &s.map_of(k), *size, self.config, &dir.join(sub));
        }
        let sub = match s.design() {
            AbDesign::HeadToHead => ["1", "2"][m.leg],
            AbDesign::Against => ["a", "b"][m.leg],
        };
        let spec = s.map_of(k);
        let lm = LeagueMap { map: Arc::new(load_map(&spec, None)?), spec };
        let row = play_one(entry(m.seats[0]), entry(m.seats[1]), &lm, 0, self.config, &dir.join(sub))?;
        Ok((!row.interrupted()).then(|| row.outcome()))
    }

    fn outcome(&self, played: &Option<Outcome>) -> Option<Outcome> {
        *played
    }
}

/// `who` in finalist seat `k mod 8` of the final map `spec` against the same field (`fill` in
/// the other finalist seats, the Council in the centre): its outcome has `who`'s share (0 when
/// disqualified) as seat 0's.
fn play_final(
    k: usize,
    who: &Entry,
    fill: &Entry,
    spec: &str,
    size: u32,
    config: &LeagueConfig,
    run_dir: &Path,
) -> Result<Option<Outcome>, LeagueError> {
    let map = Arc::new(super::runs::maps::load_final_map(spec, size)?);
    let finalists = map.seats().len() - 1;
    let seat = k % finalists;
    let mut names: Vec<String> =
        (0..finalists).map(|i| if i == seat { who.name.clone() } else { fill.name.clone() }).collect();
    names.push("council".into());
    super::service::unique_names(&mut names);
    let seats = names
        .into_iter()
        .enumerate()
        .map(|(i, name)| {
            let spec = if i == finalists {
                AgentSpec::COUNCIL
            } else if i == seat {
                who.spec.clone()
            } else {
                fill.spec.clone()
            };
            super::service::Seat::spec(spec, name)
        })
        .collect();
    let mut plan = super::service::MatchPlan::new(map, seats);
    plan.rounds = config.rounds;
    plan.limits = config.limits();
    plan.python = config.python.clone();
    plan.run_dir = Some(run_dir.to_path_buf());
    let rec = super::service::run(plan, &mut ())?.record;
    if rec.interrupted() {
        return Ok(None);
    }
    let o = &rec.outcome[seat];
    Ok(Some(Outcome { score: [o.score, None], disqualified: [o.disqualified.is_some(), false], ..Outcome::default() }))
}

/// `who` taking over its seat at a fork point, the other seats played by the replay's own
/// agents: its outcome has `who`'s share (0 when disqualified) as seat 0's.
fn play_fork(
    who: &Entry,
    point: &ForkPoint,
    config: &LeagueConfig,
    run_dir: &Path,
) -> Result<Option<Outcome>, LeagueError> {
    let (head, record, map) = fork_at(&point.source, point.round)?;
    // `fork_points` keeps only the points whose other seats are played by agents gbely carries.
    let specs: Vec<AgentSpec> = (point.agents.iter().enumerate())
        .map(|(s, a)| if s == point.seat { Some(who.spec.clone()) } else { a.clone() })
        .collect::<Option<_>>()
        .ok_or_else(|| LeagueError::Request(format!("{}: a seat's agent is not in the replay", point.name())))?;
    let mut names: Vec<String> =
        (0..specs.len()).map(|s| if s == point.seat { who.name.clone() } else { specs[s].to_string() }).collect();
    super::service::unique_names(&mut names);
    let seats = specs.into_iter().zip(names).map(|(spec, name)| super::service::Seat::spec(spec, name)).collect();
    let mut plan = super::service::MatchPlan::new(map, seats);
    plan.rounds = point.source.rounds;
    plan.limits = config.limits();
    plan.python = config.python.clone();
    plan.run_dir = Some(run_dir.to_path_buf());
    plan.resume = Some(head);
    plan.fork = Some(record);
    // Kept to look at: where one of the pair did better than the other from the same state.
    plan.recording = super::service::Recording::File(run_dir.join("replay.json.gz"));
    let rec = super::service::run(plan, &mut ())?.record;
    if rec.interrupted() {
        return Ok(None);
    }
    let o = &rec.outcome[point.seat];
    Ok(Some(Outcome { score: [o.score, None], disqualified: [o.disqualified.is_some(), false], ..Outcome::default() }))
}

/// The journal of pair outcomes (SQLite), so that a killed run resumes.
pub struct Journal {
    conn: Connection,
    path: String,
}

impl std::fmt::Debug for Journal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Journal").field("path", &self.path).finish()
    }
}

impl Journal {
    /// WAL with `synchronous = NORMAL`: a commit is an append to the log, not an fsync of the
    /// database (a power cut may lose the last commits, never corrupt the journal).
    pub fn open(path: &Path) -> Result<Journal, LeagueError> {
        let (conn, path) = super::entries::open_db(
            path,
            "PRAGMA journal_mode = WAL;
             PRAGMA synchronous = NORMAL;
             CREATE TABLE IF NOT EXISTS ab_pairs (test TEXT NOT NULL, idx INTEGER NOT NULL, outcome REAL NOT NULL,
             PRIMARY KEY (test, idx));",
        )?;
        Ok(Journal { conn, path })
    }

    fn load(&self, test: &str) -> Result<BTreeMap<usize, f64>, LeagueError> {
        let db = |error| LeagueError::Db { path: self.path.clone(), error };
        let mut st = self.conn.prepare("SELECT idx, outcome FROM ab_pairs WHERE test = ?1").map_err(db)?;
        let rows =
            st.query_map(params![test], |r| Ok((r.get::<_, i64>(0)? as usize, r.get::<_, f64>(1)?))).map_err(db)?;
        rows.collect::<Result<_, _>>().map_err(db)
    }

    /// Stores pairs in one transaction.
    fn store(&mut self, test: &str, pairs: &[(usize, f64)]) -> Result<(), LeagueError> {
        let path = self.path.clone();
        let db = |error| LeagueError::Db { path: path.clone(), error };
        let tx = self.conn.transaction().map_err(db)?;
        {
            let mut st = tx
                .prepare_cached("INSERT OR REPLACE INTO ab_pairs (test, idx, outcome) VALUES (?1, ?2, ?3)")
                .map_err(db)?;
            for &(k, o) in pairs {
                st.execute(params![test, k as i64, o]).map_err(db)?;
            }
        }
        tx.commit().map_err(db)
    }
}

/// Finished pairs are committed together, at most this often …
const COMMIT_EVERY: std::time::Duration = std::time::Duration::from_secs(1);
/// … or when this many wait.
const COMMIT_PAIRS: usize = 64;

/// How an A/B run ended.
#[derive(Clone, Debug, serde::Serialize)]
pub struct AbRun {
    pub verdict: Verdict,
    pub pairs: usize,
    pub from_journal: usize,
    /// Pairs played in this run, including those finished after the verdict (at most `jobs`).
    pub played: usize,
    pub interrupted: bool,
    pub seconds: f64,
}

/// Runs the test's pairs on agent processes (the core's [`crate::tournament::ab::run_ab`]),
/// `config.jobs` at a time, feeding the test in pair order until it decides, `max_pairs` is
/// reached or Ctrl-C; what the journal holds is read first, not played again. `line` is called
/// after each pair the test reads.
///
/// **No pair runs far ahead of the verdict**: when the test decides at most `jobs` pairs are in
/// progress, and they are abandoned. Finished pairs are journalled in batches (every second or
/// `COMMIT_PAIRS` (64) pairs, and at the end), so a crash loses at most a second of pairs, and
/// Ctrl-C none that finished.
pub fn run_ab(
    s: &AbSetup,
    sprt: &mut Sprt,
    config: &LeagueConfig,
    journal: &mut Journal,
    line: &mut dyn FnMut(&Sprt),
) -> Result<AbRun, LeagueError> {
    let start = std::time::Instant::now();
    let test = s.key(config);
    let known = journal.load(&test)?;
    let mut unsaved: Vec<(usize, f64)> = Vec::new();
    let mut last_commit = std::time::Instant::now();
    let arena = Processes { setup: s, config };
    let mut save = |k: usize, o: f64| -> Result<(), LeagueError> {
        unsaved.push((k, o));
        if unsaved.len() >= COMMIT_PAIRS || last_commit.elapsed() >= COMMIT_EVERY {
            last_commit = std::time::Instant::now();
            journal.store(&test, &std::mem::take(&mut unsaved))?;
        }
        Ok(())
    };
    let jobs = config.jobs.max(1);
    let ran = run_test(&arena, s.design(), sprt, s.max_pairs, jobs, &known, &interrupt::requested, line, &mut save);
    // What finished goes in the journal, whatever stopped the run.
    let stored = journal.store(&test, &unsaved);
    let tally = ran?;
    stored?;
    let decided = sprt.verdict() != Verdict::Undecided || sprt.n() >= s.max_pairs;
    Ok(AbRun {
        verdict: sprt.verdict(),
        pairs: sprt.n(),
        from_journal: tally.from_journal,
        played: tally.played,
        interrupted: !decided,
        seconds: start.elapsed().as_secs_f64(),
    })
}
