//! "Is B better than A?": paired matches and a sequential probability ratio test (SPRT) that
//! stops as soon as the evidence is enough — the method of chess engine testing (fishtest).
//!
//! * **Head to head** (`--against` not given): a pair is two matches of A and B on the same map
//!   with the seats swapped. Its outcome, for B, is on the *pentanomial* scale: the mean of the
//!   two game scores (win 1, draw ½, loss 0) is 0, ¼, ½, ¾ or 1 (LL, LD, LW or DD, DW, WW). Pairs
//!   cancel the advantage of a seat and of a map.
//! * **Against a fixed opponent** (`--against council` or a file): a pair is A and B each playing
//!   the opponent on the same map from the same seat; its outcome is B's share minus A's, in
//!   points of share (a disqualified side scores 0).
//! * **The test**: the generalized SPRT on the *exact* likelihood of the outcomes (see
//!   [`super::sprt`]): head to head the pentanomial distribution, with the hypotheses in logistic
//!   or normalised Elo; against an opponent a normal distribution of unknown variance. It decides
//!   "B is better" when `LLR ≥ ln((1−β)/α)`, "no better" when `LLR ≤ ln(β/(1−α))` (±2.94 for
//!   α = β = 0.05).
//! * **Order**: pairs are numbered, and the test reads them in that order however many run at
//!   once and whichever finishes first: the verdict does not depend on `--jobs`.

pub use super::sprt::{elo_to_score, score_to_elo, EloModel};
use super::sprt::{
    llr_pentanomial, llr_share, moments, nelo_to_pair_t, regularized, sequential_estimate, share_moments, Drift,
    NELO_PER_NT, PENTA_SCORES,
};

/// What the test weighs against what.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Hypotheses {
    /// Head to head: B is `elo0` (H0, "no better") or `elo1` (H1, "better") stronger than A.
    Elo { model: EloModel, elo0: f64, elo1: f64 },
    /// Against an opponent: B's share is `share0` or `share1` points above A's.
    Share { share0: f64, share1: f64 },
}

/// Pair outcomes seen so far, and the SPRT's reading of them.
#[derive(Clone, Debug, PartialEq)]
pub struct Sprt {
    pub hypotheses: Hypotheses,
    /// Error rates: a false "better" (α) and a missed one (β).
    pub alpha: f64,
    pub beta: f64,
    /// The stopping bounds of the LLR: `ln(β/(1−α))` and `ln((1−β)/α)`.
    pub lower: f64,
    pub upper: f64,
    /// Pair outcomes in order (head to head: B's mean game score in the pair, 0…1; against an
    /// opponent: B's share minus A's).
    pub outcomes: Vec<f64>,
    counts: [u32; 5],
    sum: f64,
    sum_sq: f64,
}

/// What the test says now.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Better,
    NoBetter,
    Undecided,
}

impl Verdict {
    pub fn text(self, pairs: usize) -> String {
        match self {
            Verdict::Better => "B is better".into(),
            Verdict::NoBetter => "no better".into(),
            Verdict::Undecided => format!("undecided after {pairs} pairs"),
        }
    }
}

/// How many pairs the test should take (Wald's approximations, with the variance seen so far).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct ExpectedPairs {
    /// If H0 is true …
    pub at_h0: f64,
    /// … if H1 is true …
    pub at_h1: f64,
    /// … and at most, when the truth lies between them (where the LLR does not drift).
    pub between: f64,
}

/// An interval in the unit of the hypotheses; `None` where it is unbounded.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Interval {
    pub value: Option<f64>,
    pub low: Option<f64>,
    pub high: Option<f64>,
}

/// Every pair won (or lost): no finite estimate, only a bound.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Sweep {
    /// B won every pair (else lost every one).
    pub won: bool,
    pub pairs: usize,
    /// The 95 % one-sided bound on the logistic Elo difference: B's score is at least the chance
    /// `q` of a WW pair, and `q^pairs ≥ 5 %` for every `q` not ruled out, so `q ≥ 0.05^(1/pairs)`.
    pub bound_elo: f64,
}

/// The estimate after the test.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Estimate {
    /// In the unit of the hypotheses (Elo of the model; share points), median-unbiased and with
    /// its 95 % interval, both corrected for the sequential stop (fishtest's `sprt.py`).
    pub value: Interval,
    /// The probability that B is better (the chance of a test outcome worse than this one if
    /// B = A).
    pub los: f64,
    /// Head to head, in both Elo models.
    pub logistic: Option<Interval>,
    pub normalized: Option<Interval>,
    /// The plain mean outcome (per game score head to head; share points).
    pub mean_outcome: f64,
    pub sweep: Option<Sweep>,
}

impl Sprt {
    pub fn new(hypotheses: Hypotheses, alpha: f64, beta: f64) -> Sprt {
        Sprt {
            hypotheses,
            alpha,
            beta,
            lower: (beta / (1.0 - alpha)).ln(),
            upper: ((1.0 - beta) / alpha).ln(),
            outcomes: Vec::new(),
            counts: [0; 5],
            sum: 0.0,
            sum_sq: 0.0,
        }
    }

    pub fn push(&mut self, outcome: f64) {
        self.outcomes.push(outcome);
        if matches!(self.hypotheses, Hypotheses::Elo { .. }) {
            self.counts[((outcome * 4.0).round().clamp(0.0, 4.0)) as usize] += 1;
        }
        self.sum += outcome;
        self.sum_sq += outcome * outcome;
    }

    pub fn n(&self) -> usize {
        self.outcomes.len()
    }

    /// Head to head: pairs scoring LL, LD, LW/DD, DW, WW for B.
    pub fn counts(&self) -> [u32; 5] {
        self.counts
    }

    /// The exact log-likelihood ratio of H1 against H0.
    pub fn llr(&self) -> f64 {
        match self.hypotheses {
            Hypotheses::Elo { model, elo0, elo1 } => llr_pentanomial(&self.counts, model, elo0, elo1),
            Hypotheses::Share { share0, share1 } => llr_share(self.n(), self.sum, self.sum_sq, share0, share1),
        }
    }

    pub fn verdict(&self) -> Verdict {
        let llr = self.llr();
        if llr >= self.upper {
            Verdict::Better
        } else if llr <= self.lower {
            Verdict::NoBetter
        } else {
            Verdict::Undecided
        }
    }

    /// The test as a Brownian motion (for the estimate and the expected length).
    pub fn drift(&self) -> Drift {
        let (n, mean, var, s0, s1) = match self.hypotheses {
            Hypotheses::Elo { model, elo0, elo1 } => {
                let (n, phat) = regularized(&self.counts);
                let (mean, var) = moments(&PENTA_SCORES, &phat);
                let s = |elo: f64| match model {
                    EloModel::Logistic => elo_to_score(elo),
                    // The pair's t-value (mean − ½) / sd.
                    EloModel::Normalized => 0.5 + nelo_to_pair_t(elo) * var.sqrt(),
                };
                (n, mean, var, s(elo0), s(elo1))
            }
            Hypotheses::Share { share0, share1 } => {
                let (w, mean, var) = share_moments(self.n(), self.sum, self.sum_sq);
                (w, mean, var, share0, share1)
            }
        };
        Drift { n, mean, var, s0, s1, lower: self.lower, upper: self.upper }
    }

    /// How many pairs the test should take, with the variance seen so far (before any pair: the
    /// variance of pairs that are all WW or LL, ¼, the usual case in this game).
    pub fn expected_pairs(&self) -> ExpectedPairs {
        let mut d = self.drift();
        if self.n() == 0 {
            if let Hypotheses::Elo { model: EloModel::Normalized, elo0, elo1 } = self.hypotheses {
                d.var = 0.25;
                d.s0 = 0.5 + nelo_to_pair_t(elo0) * 0.5;
                d.s1 = 0.5 + nelo_to_pair_t(elo1) * 0.5;
            } else if matches!(self.hypotheses, Hypotheses::Elo { .. }) {
                d.var = 0.25;
            }
        }
        let (a, b) = (self.lower, self.upper);
        ExpectedPairs {
            at_h0: ((1.0 - self.alpha) * a + self.alpha * b) / d.mu(d.s0),
            at_h1: ((1.0 - self.beta) * b + self.beta * a) / d.mu(d.s1),
            between: -a * b / d.sigma2(),
        }
    }

    /// The plain mean outcome and the half-width of its 95 % interval (the live line).
    pub fn naive(&self) -> (f64, f64) {
        let d = self.drift();
        (d.mean, 1.96 * (d.var / d.n).sqrt())
    }

    /// The estimate, corrected for the sequential stop.
    pub fn estimate(&self) -> Estimate {
        let d = self.drift();
        let even = if matches!(self.hypotheses, Hypotheses::Elo { .. }) { 0.5 } else { 0.0 };
        let e = sequential_estimate(&d, even);
        let logistic = |s: f64| score_to_elo(s);
        let sd_game = (2.0 * d.var).sqrt();
        let normalized = |s: f64| Some((s - 0.5) / sd_game * NELO_PER_NT);
        let interval = |f: &dyn Fn(f64) -> Option<f64>| Interval { value: f(e.mean), low: f(e.low), high: f(e.high) };
        let n = self.n();
        let sweep = match self.hypotheses {
            Hypotheses::Elo { .. } if n > 0 && (self.counts[4] as usize == n || self.counts[0] as usize == n) => {
                let won = self.counts[4] as usize == n;
                let q = 0.05f64.powf(1.0 / n as f64);
                let bound = score_to_elo(q).unwrap_or(0.0);
                Some(Sweep { won, pairs: n, bound_elo: if won { bound } else { -bound } })
            }
            _ => None,
        };
        let (value, logistic, normalized) = match self.hypotheses {
            Hypotheses::Elo { model, .. } => {
                let (l, z) = (interval(&logistic), interval(&normalized));
                let l = match sweep {
                    Some(s) if s.won => Interval { value: None, low: Some(s.bound_elo), high: None },
                    Some(s) => Interval { value: None, low: None, high: Some(s.bound_elo) },
                    None => l,
                };
                let z = if sweep.is_some() { Interval { value: None, low: None, high: None } } else { z };
                (if model == EloModel::Logistic { l } else { z }, Some(l), Some(z))
            }
            Hypotheses::Share { .. } => (interval(&|s| Some(s)), None, None),
        };
        Estimate { value, los: e.los, logistic, normalized, mean_outcome: d.mean, sweep }
    }
}

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
/// (every second or [`COMMIT_PAIRS`] pairs, and at the end), so a crash loses at most a second of
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

#[cfg(test)]
mod tests {
    use super::*;

    fn logistic(elo0: f64, elo1: f64) -> Sprt {
        Sprt::new(Hypotheses::Elo { model: EloModel::Logistic, elo0, elo1 }, 0.05, 0.05)
    }

    #[test]
    fn bounds_are_those_of_fishtest() {
        let t = logistic(0.0, 5.0);
        assert!((t.upper - 2.944).abs() < 1e-3 && (t.lower + 2.944).abs() < 1e-3);
        assert_eq!(elo_to_score(0.0), 0.5);
        assert!((score_to_elo(elo_to_score(35.0)).unwrap() - 35.0).abs() < 1e-9);
    }

    #[test]
    fn a_copy_of_itself_is_no_better() {
        // Every pair split 1–1: the evidence against "40 Elo better" adds up quickly.
        let mut t = logistic(0.0, 40.0);
        while t.verdict() == Verdict::Undecided && t.n() < 10_000 {
            t.push(0.5);
        }
        assert_eq!(t.verdict(), Verdict::NoBetter);
        assert!(t.n() > 8 && t.n() < 100, "{} pairs", t.n());
        assert_eq!(t.counts(), [0, 0, t.n() as u32, 0, 0]);
    }

    #[test]
    fn a_clean_sweep_is_a_bound_not_2400_elo() {
        let mut t = logistic(0.0, 40.0);
        for _ in 0..8 {
            t.push(1.0);
        }
        let e = t.estimate();
        let s = e.sweep.unwrap();
        assert!(s.won && s.pairs == 8);
        // 0.05^(1/8) = 0.687656: −400 log10(1/0.687656 − 1) = −400 log10(0.454215) = 137.10 Elo.
        assert!((s.bound_elo - 137.10).abs() < 0.01, "{}", s.bound_elo);
        assert_eq!(e.value.value, None);
        assert_eq!(e.value.low, Some(s.bound_elo));
    }

    #[test]
    fn the_expected_length_of_a_normalised_test_needs_no_pairs() {
        // Normalised: the LLR drifts by (t1 − t0)²/2 per pair under H1 whatever the variance.
        let t = Sprt::new(Hypotheses::Elo { model: EloModel::Normalized, elo0: 0.0, elo1: 25.0 }, 0.05, 0.05);
        let t1 = std::f64::consts::SQRT_2 * 25.0 / NELO_PER_NT;
        let e = t.expected_pairs();
        let want = (0.95 * t.upper + 0.05 * t.lower) / (t1 * t1 / 2.0);
        assert!((e.at_h1 - want).abs() < 1e-9 * want, "{} {want}", e.at_h1);
        assert!((e.between - t.upper * t.upper / (t1 * t1)).abs() < 1e-6);
    }
}
