//! `gbely ab`: the pairs of an A/B test played with agent specs (files, processes, built-ins)
//! on the league's match service, with a journal (SQLite) so that a killed run resumes. The
//! test itself, the pair outcomes and the SPRT, is [`crate::experiment::ab`]'s.

use crate::experiment::ab::{Sprt, Verdict};

// ---------------------------------------------------------------------------------------------
// Playing the pairs.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::{mpsc, Arc};

use rusqlite::{params, Connection};

use super::league::play::{play_one, Entry, LeagueConfig, LeagueError, LeagueMap, MatchRow};
use super::runs::maps::load_map;
use crate::runner::interrupt;

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
}

impl AbSetup {
    /// The map of pair `k`.
    pub fn map_of(&self, k: usize) -> String {
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
            match &self.final_mode {
                Some((fill, size)) => format!(
                    "final {size} {} {}",
                    fill.id,
                    if self.maps.is_empty() { format!("seed:{}", self.seed) } else { self.maps.join(",") }
                ),
                None if self.maps.is_empty() => format!("seed:{}", self.seed),
                None => self.maps.join(","),
            },
            config.rounds,
            config.time_limit.as_secs_f64().unwrap_or(0.0),
            "v1"
        )
    }
}

/// Plays pair `k`: its outcome (head to head: B's mean game score; against: B's share minus A's).
fn play_pair(k: usize, s: &AbSetup, config: &LeagueConfig) -> Result<Option<f64>, LeagueError> {
    if let Some((fill, size)) = &s.final_mode {
        return play_final_pair(k, s, fill, *size, config);
    }
    let spec = s.map_of(k);
    let lm = LeagueMap { map: Arc::new(load_map(&spec, None)?), spec };
    let dir = config.dir.join(format!("pair{k:05}"));
    let row = |e0: &Entry, e1: &Entry, sub: &str| play_one(e0, e1, &lm, 0, config, &dir.join(sub));
    let interrupted = |r: &MatchRow| r.ended_by == crate::sim::EndReason::Interrupted.wire();
    match &s.against {
        None => {
            let m1 = row(&s.a, &s.b, "1")?;
            if interrupted(&m1) {
                return Ok(None);
            }
            let m2 = row(&s.b, &s.a, "2")?;
            if interrupted(&m2) {
                return Ok(None);
            }
            // B's game scores: seat 1 in the first match, seat 0 in the second.
            let score = |w: i8| match w {
                1 => 1.0,
                0 => 0.5,
                _ => 0.0,
            };
            Ok(Some((score(-m1.winner()) + score(m2.winner())) / 2.0))
        }
        Some(opp) => {
            let ma = row(&s.a, opp, "a")?;
            if interrupted(&ma) {
                return Ok(None);
            }
            let mb = row(&s.b, opp, "b")?;
            if interrupted(&mb) {
                return Ok(None);
            }
            Ok(Some(mb.score[0].unwrap_or(0.0) - ma.score[0].unwrap_or(0.0)))
        }
    }
}

/// Pair `k` of a final: A, then B, in finalist seat `k mod 8` of the same final map against the
/// same field; the outcome is B's share minus A's (a disqualified side scores 0).
fn play_final_pair(
    k: usize,
    s: &AbSetup,
    fill: &Entry,
    size: u32,
    config: &LeagueConfig,
) -> Result<Option<f64>, LeagueError> {
    let map = Arc::new(super::runs::maps::load_final_map(&s.map_of(k), size)?);
    let finalists = map.seats().len() - 1;
    let seat = k % finalists;
    let mut shares = Vec::new();
    for (who, sub) in [(&s.a, "a"), (&s.b, "b")] {
        let mut names: Vec<String> =
            (0..finalists).map(|i| if i == seat { who.name.clone() } else { fill.name.clone() }).collect();
        names.push("council".into());
        super::service::unique_names(&mut names);
        let seats = names
            .into_iter()
            .enumerate()
            .map(|(i, name)| {
                let spec = if i == finalists {
                    "council"
                } else if i == seat {
                    &who.spec
                } else {
                    &fill.spec
                };
                super::service::Seat::spec(spec, name)
            })
            .collect();
        let mut plan = super::service::MatchPlan::new(map.clone(), seats);
        plan.rounds = config.rounds;
        plan.limits = config.limits();
        plan.python = config.python.clone();
        plan.run_dir = Some(config.dir.join(format!("pair{k:05}")).join(sub));
        let rec = super::service::run(plan, &mut ())?.record;
        if rec.interrupted() {
            return Ok(None);
        }
        shares.push(rec.outcome[seat].score.unwrap_or(0.0));
    }
    Ok(Some(shares[1] - shares[0]))
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
        let (conn, path) = super::league::db::open_db(
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

/// Runs pairs in order, `config.jobs` at a time, feeding the test in pair order until it decides,
/// `max_pairs` is reached or Ctrl-C. `line` is called after each pair the test reads.
///
/// **No pair runs far ahead of the verdict**: a worker starts pair `k` only when
/// `k < read + jobs`, `read` the pairs the test has read, so when the test decides at most `jobs`
/// pairs are in progress, and they are abandoned. Finished pairs are journalled in batches
/// (every second or `COMMIT_PAIRS` (64) pairs, and at the end), so a crash loses at most a second of
/// pairs, and Ctrl-C none that finished.
pub fn run_ab(
    s: &AbSetup,
    sprt: &mut Sprt,
    config: &LeagueConfig,
    journal: &mut Journal,
    line: &mut dyn FnMut(&Sprt),
) -> Result<AbRun, LeagueError> {
    use std::sync::atomic::Ordering::SeqCst;
    use std::sync::{Condvar, Mutex};

    let start = std::time::Instant::now();
    let test = s.key(config);
    let mut known = journal.load(&test)?;
    let mut from_journal = 0;
    let mut played = 0;
    // What the journal holds, in order, goes in first.
    while sprt.n() < s.max_pairs && sprt.verdict() == Verdict::Undecided {
        match known.remove(&sprt.n()) {
            Some(o) => {
                sprt.push(o);
                from_journal += 1;
            }
            None => break,
        }
    }
    let decided = |t: &Sprt| t.verdict() != Verdict::Undecided || t.n() >= s.max_pairs;
    let mut error = None;
    if !decided(sprt) {
        let jobs = config.jobs.max(1);
        // (next pair to start, pairs the test has read): workers wait on `moved` for room.
        let gate = Mutex::new((sprt.n(), sprt.n()));
        let moved = Condvar::new();
        let stop = AtomicBool::new(false);
        let (tx, rx) = mpsc::channel::<(usize, Result<Option<f64>, LeagueError>)>();
        let mut unsaved: Vec<(usize, f64)> = Vec::new();
        let mut last_commit = std::time::Instant::now();
        std::thread::scope(|scope| {
            for _ in 0..jobs {
                let tx = tx.clone();
                let (gate, moved, stop, known) = (&gate, &moved, &stop, &known);
                scope.spawn(move || loop {
                    let k = {
                        let mut g = gate.lock().unwrap_or_else(|e| e.into_inner());
                        loop {
                            if stop.load(SeqCst) || interrupt::requested() {
                                return;
                            }
                            let (next, read) = *g;
                            if next >= s.max_pairs {
                                return;
                            }
                            if next < read + jobs {
                                g.0 += 1;
                                break next;
                            }
                            // Ctrl-C does not wake the condition variable: look every 100 ms.
                            g = moved
                                .wait_timeout(g, std::time::Duration::from_millis(100))
                                .unwrap_or_else(|e| e.into_inner())
                                .0;
                        }
                    };
                    let result = match known.get(&k) {
                        Some(&o) => Ok(Some(o)),
                        None => play_pair(k, s, config),
                    };
                    if tx.send((k, result)).is_err() {
                        return;
                    }
                });
            }
            drop(tx);
            let mut pending: BTreeMap<usize, f64> = BTreeMap::new();
            let halt = |error: &mut Option<LeagueError>, e: Option<LeagueError>| {
                if let Some(e) = e {
                    error.get_or_insert(e);
                }
                stop.store(true, SeqCst);
                moved.notify_all();
            };
            for (k, result) in rx.iter() {
                match result {
                    Ok(Some(o)) => {
                        if !known.contains_key(&k) {
                            unsaved.push((k, o));
                            played += 1;
                        }
                        pending.insert(k, o);
                        // The test reads pairs in order only.
                        while !decided(sprt) {
                            let Some(o) = pending.remove(&sprt.n()) else { break };
                            sprt.push(o);
                            line(sprt);
                        }
                        // Stop first, then make room: no worker starts a pair past the verdict.
                        if decided(sprt) {
                            halt(&mut error, None);
                        }
                        gate.lock().unwrap_or_else(|e| e.into_inner()).1 = sprt.n();
                        moved.notify_all();
                    }
                    Ok(None) => {}
                    Err(e) => halt(&mut error, Some(e)),
                }
                if unsaved.len() >= COMMIT_PAIRS || last_commit.elapsed() >= COMMIT_EVERY {
                    if let Err(e) = journal.store(&test, &unsaved) {
                        halt(&mut error, Some(e));
                    }
                    unsaved.clear();
                    last_commit = std::time::Instant::now();
                }
            }
        });
        // What finished goes in the journal, whatever stopped the run.
        if let Err(e) = journal.store(&test, &unsaved) {
            error.get_or_insert(e);
        }
    }
    if let Some(e) = error {
        return Err(e);
    }
    Ok(AbRun {
        verdict: sprt.verdict(),
        pairs: sprt.n(),
        from_journal,
        played,
        interrupted: !decided(sprt),
        seconds: start.elapsed().as_secs_f64(),
    })
}
