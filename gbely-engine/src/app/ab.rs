//! "Is B better than A?": paired matches and a sequential probability ratio test (SPRT) that
//! stops as soon as the evidence is enough — the method of chess engine testing (fishtest).
//!
//! * **Head to head** (`--against` not given): a pair is two matches of A and B on the same map
//!   with the seats swapped. Its outcome, for B, is on the *pentanomial* scale: the sum of the two
//!   game scores (win 1, draw ½, loss 0) is 0, ½, 1, 1½ or 2 (LL, LD, LW or DD, DW, WW). Pairs
//!   cancel the advantage of a seat and of a map, which roughly halves the variance against
//!   counting single games.
//! * **Against a fixed opponent** (`--against council` or a file): a pair is A and B each playing
//!   the opponent on the same map from the same seat; its outcome is B's share minus A's, in
//!   points of share (a disqualified side scores 0).
//! * **The test**: the generalized SPRT on the mean pair outcome (the normal approximation fishtest
//!   uses for pentanomial results): `LLR = n (μ1 − μ0)(2 x̄ − μ0 − μ1) / (2 σ²)`, with `x̄` and
//!   `σ²` the mean and variance of the pair outcomes. Head to head, `μ` is the expected pair score
//!   of an Elo difference (`--elo0`, `--elo1`); against a fixed opponent, share points (`--share0`,
//!   `--share1`). It decides "B is better" when `LLR ≥ ln((1−β)/α)`, "no better" when
//!   `LLR ≤ ln(β/(1−α))` (±2.94 for α = β = 0.05).
//! * **Order**: pairs are numbered, and the test reads them in that order however many run at
//!   once and whichever finishes first: the verdict does not depend on `--jobs`.

/// Pair outcomes seen so far, and the SPRT's reading of them.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Sprt {
    /// The hypotheses, in the unit of the pair outcome: per game score (0…1) head to head, share
    /// points against a fixed opponent.
    pub mu0: f64,
    pub mu1: f64,
    pub lower: f64,
    pub upper: f64,
    /// Pair outcomes in order (head to head: mean game score of B in the pair, 0…1).
    pub outcomes: Vec<f64>,
    /// The variance a pair outcome is assumed to have before any is seen.
    pub prior_variance: f64,
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

/// Expected score of a side `elo` points stronger (the logistic Elo model).
pub fn elo_to_score(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// Elo difference of an expected score (clamped away from 0 and 1).
pub fn score_to_elo(s: f64) -> f64 {
    let s = s.clamp(1e-6, 1.0 - 1e-6);
    -400.0 * (1.0 / s - 1.0).log10()
}

/// The variance estimate is shrunk towards a prior worth this many pairs: a few early pairs that
/// happen to agree must not look like certainty (nor would an agent against a copy of itself,
/// whose pairs all end the same way, give an infinite ratio).
const PRIOR_PAIRS: f64 = 8.0;

impl Sprt {
    /// A test between `mu0` and `mu1` with error rates `alpha` (false "better") and `beta`;
    /// `prior_variance` is what a pair outcome's variance is taken to be before any is seen.
    pub fn new(mu0: f64, mu1: f64, alpha: f64, beta: f64, prior_variance: f64) -> Sprt {
        Sprt {
            mu0,
            mu1,
            lower: (beta / (1.0 - alpha)).ln(),
            upper: ((1.0 - beta) / alpha).ln(),
            outcomes: Vec::new(),
            prior_variance,
            sum: 0.0,
            sum_sq: 0.0,
        }
    }

    /// Head to head: `elo0` and `elo1` as expected game scores.
    pub fn elo(elo0: f64, elo1: f64, alpha: f64, beta: f64) -> Sprt {
        // Two games of an even match: each a coin flip, their mean has variance 1/8.
        Sprt::new(elo_to_score(elo0), elo_to_score(elo1), alpha, beta, 0.125)
    }

    pub fn push(&mut self, outcome: f64) {
        self.outcomes.push(outcome);
        self.sum += outcome;
        self.sum_sq += outcome * outcome;
    }

    pub fn n(&self) -> usize {
        self.outcomes.len()
    }

    pub fn mean(&self) -> f64 {
        if self.outcomes.is_empty() {
            return (self.mu0 + self.mu1) / 2.0;
        }
        self.sum / self.outcomes.len() as f64
    }

    /// The variance of a pair outcome: the sample variance shrunk towards `prior_variance` (the
    /// variance of two coin-flip games head to head) by [`PRIOR_PAIRS`] pseudo-pairs.
    pub fn variance(&self) -> f64 {
        let n = self.outcomes.len() as f64;
        let sample = if n > 0.0 { (self.sum_sq / n - self.mean().powi(2)).max(0.0) } else { 0.0 };
        (n * sample + PRIOR_PAIRS * self.prior_variance) / (n + PRIOR_PAIRS)
    }

    /// The log-likelihood ratio of H1 (`mu1`) against H0 (`mu0`).
    pub fn llr(&self) -> f64 {
        let n = self.outcomes.len() as f64;
        if n == 0.0 {
            return 0.0;
        }
        n * (self.mu1 - self.mu0) * (2.0 * self.mean() - self.mu0 - self.mu1) / (2.0 * self.variance())
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

    /// The mean outcome and the half-width of its 95 % interval.
    pub fn estimate(&self) -> (f64, f64) {
        let n = self.outcomes.len().max(1) as f64;
        (self.mean(), 1.96 * (self.variance() / n).sqrt())
    }

    /// Head to head: the Elo estimate and its 95 % interval (low, high).
    pub fn elo_estimate(&self) -> (f64, f64, f64) {
        let (m, h) = self.estimate();
        (score_to_elo(m), score_to_elo(m - h), score_to_elo(m + h))
    }
}

/// Counts of pair outcomes on the pentanomial scale: pair score 0, ½, 1, 1½, 2 for B.
pub fn pentanomial(outcomes: &[f64]) -> [u32; 5] {
    let mut c = [0u32; 5];
    for &o in outcomes {
        c[((o * 4.0).round() as usize).min(4)] += 1;
    }
    c
}

// ---------------------------------------------------------------------------------------------
// Playing the pairs.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::sync::{mpsc, Arc};

use rusqlite::{params, Connection};

use super::league::{play_one, Entry, LeagueConfig, LeagueError, LeagueMap};
use super::runs::load_map;
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
            config.time_limit.map_or(0.0, |d| d.as_secs_f64()),
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
    let interrupted = |r: &super::league::MatchRow| r.ended_by == crate::sim::EndReason::Interrupted.wire();
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
    let map = Arc::new(super::runs::load_final_map(&s.map_of(k), size)?);
    let finalists = map.seats().len() - 1;
    let seat = k % finalists;
    let mut shares = Vec::new();
    for (who, sub) in [(&s.a, "a"), (&s.b, "b")] {
        let mut specs: Vec<(String, String)> = (0..finalists)
            .map(|i| {
                if i == seat {
                    (who.spec.clone(), who.name.clone())
                } else {
                    (fill.spec.clone(), format!("{} #{i}", fill.name))
                }
            })
            .collect();
        specs.push(("council".into(), "council".into()));
        let dir = config.dir.join(format!("pair{k:05}")).join(sub);
        let mut setup = super::runs::build_players(&specs, &dir, &config.limits(), &config.python)?;
        let mut refs: Vec<&mut dyn crate::game::Player> =
            setup.players.iter_mut().map(|p| p.as_mut() as &mut dyn crate::game::Player).collect();
        let opts =
            crate::game::PlayOptions { config: crate::sim::MatchConfig { rounds: config.rounds }, record: false };
        let rec = crate::game::play(map.clone(), &mut refs, opts, &mut ());
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
    pub fn open(path: &Path) -> Result<Journal, LeagueError> {
        let (conn, path) = super::league::open_db(
            path,
            "CREATE TABLE IF NOT EXISTS ab_pairs (test TEXT NOT NULL, idx INTEGER NOT NULL, outcome REAL NOT NULL,
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

    fn store(&self, test: &str, k: usize, outcome: f64) -> Result<(), LeagueError> {
        self.conn
            .execute(
                "INSERT OR REPLACE INTO ab_pairs (test, idx, outcome) VALUES (?1, ?2, ?3)",
                params![test, k as i64, outcome],
            )
            .map_err(|error| LeagueError::Db { path: self.path.clone(), error })?;
        Ok(())
    }
}

/// How an A/B run ended.
#[derive(Clone, Debug, serde::Serialize)]
pub struct AbRun {
    pub verdict: Verdict,
    pub pairs: usize,
    pub from_journal: usize,
    pub interrupted: bool,
    pub seconds: f64,
}

/// Runs pairs in order, `config.jobs` at a time, feeding the test in pair order until it decides,
/// `max_pairs` is reached or Ctrl-C. `line` is called after each pair the test reads.
pub fn run_ab(
    s: &AbSetup,
    sprt: &mut Sprt,
    config: &LeagueConfig,
    journal: &Journal,
    line: &mut dyn FnMut(&Sprt),
) -> Result<AbRun, LeagueError> {
    let start = std::time::Instant::now();
    let test = s.key(config);
    let mut known = journal.load(&test)?;
    let mut from_journal = 0;
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
    let first = sprt.n();
    let decided = |t: &Sprt| t.verdict() != Verdict::Undecided || t.n() >= s.max_pairs;
    let mut error = None;
    if !decided(sprt) {
        let next = AtomicUsize::new(first);
        let stop = AtomicBool::new(false);
        let (tx, rx) = mpsc::channel::<(usize, Result<Option<f64>, LeagueError>)>();
        std::thread::scope(|scope| {
            for _ in 0..config.jobs.max(1) {
                let tx = tx.clone();
                let (next, stop, known) = (&next, &stop, &known);
                scope.spawn(move || loop {
                    if stop.load(std::sync::atomic::Ordering::Relaxed) || interrupt::requested() {
                        return;
                    }
                    let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if k >= s.max_pairs {
                        return;
                    }
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
            for (k, result) in rx {
                match result {
                    Ok(Some(o)) => {
                        if let Err(e) = journal.store(&test, k, o) {
                            error.get_or_insert(e);
                            stop.store(true, std::sync::atomic::Ordering::Relaxed);
                            continue;
                        }
                        pending.insert(k, o);
                        // The test reads pairs in order only.
                        while !decided(sprt) {
                            let Some(o) = pending.remove(&sprt.n()) else { break };
                            sprt.push(o);
                            line(sprt);
                        }
                        if decided(sprt) {
                            stop.store(true, std::sync::atomic::Ordering::Relaxed);
                        }
                    }
                    Ok(None) => {}
                    Err(e) => {
                        error.get_or_insert(e);
                        stop.store(true, std::sync::atomic::Ordering::Relaxed);
                    }
                }
            }
        });
    }
    if let Some(e) = error {
        return Err(e);
    }
    Ok(AbRun {
        verdict: sprt.verdict(),
        pairs: sprt.n(),
        from_journal,
        interrupted: !decided(sprt),
        seconds: start.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A seeded stream of head-to-head pair outcomes for a true Elo difference (each game a win
    /// with the model's probability, no draws).
    fn run(true_elo: f64, seed: u64, max_pairs: usize) -> Verdict {
        let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        let mut uniform = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64
        };
        let p = elo_to_score(true_elo);
        let mut t = Sprt::elo(0.0, 10.0, 0.05, 0.05);
        for _ in 0..max_pairs {
            let g1 = if uniform() < p { 1.0 } else { 0.0 };
            let g2 = if uniform() < p { 1.0 } else { 0.0 };
            t.push((g1 + g2) / 2.0);
            if t.verdict() != Verdict::Undecided {
                break;
            }
        }
        t.verdict()
    }

    #[test]
    fn bounds_are_those_of_fishtest() {
        let t = Sprt::elo(0.0, 5.0, 0.05, 0.05);
        assert!((t.upper - 2.944).abs() < 1e-3 && (t.lower + 2.944).abs() < 1e-3);
        assert_eq!(elo_to_score(0.0), 0.5);
        assert!((score_to_elo(elo_to_score(35.0)) - 35.0).abs() < 1e-9);
    }

    #[test]
    fn equal_agents_are_rarely_called_better() {
        // H0 true (0 Elo): a false "better" at most α = 5 %, with a tolerance for 400 runs.
        let runs = 400;
        let false_positive = (0..runs).filter(|&s| run(0.0, s, 20_000) == Verdict::Better).count();
        assert!(false_positive as f64 / runs as f64 <= 0.08, "{false_positive} of {runs}");
    }

    #[test]
    fn a_real_difference_is_found() {
        // H1 true (10 Elo, the test's elo1): found at least 1 − β = 95 % of the time (tolerance).
        let runs = 200;
        let found = (0..runs).filter(|&s| run(10.0, 1000 + s, 50_000) == Verdict::Better).count();
        assert!(found as f64 / runs as f64 >= 0.90, "{found} of {runs}");
        // A large difference quickly.
        assert_eq!(run(200.0, 7, 200), Verdict::Better);
    }

    #[test]
    fn a_copy_of_itself_is_no_better() {
        // Every pair split 1–1: mean exactly ½, no variance. The prior keeps the first pairs from
        // deciding; then the evidence against "5 Elo better" adds up.
        let mut t = Sprt::elo(0.0, 5.0, 0.05, 0.05);
        while t.verdict() == Verdict::Undecided && t.n() < 10_000 {
            t.push(0.5);
        }
        assert_eq!(t.verdict(), Verdict::NoBetter);
        assert!(t.n() > 8 && t.n() < 1000, "{} pairs", t.n());
        let n = t.n() as u32;
        assert_eq!(pentanomial(&t.outcomes), [0, 0, n, 0, 0]);
        // With a 50 Elo hypothesis, much sooner.
        let mut t = Sprt::elo(0.0, 50.0, 0.05, 0.05);
        while t.verdict() == Verdict::Undecided {
            t.push(0.5);
        }
        assert!(t.n() < 60, "{} pairs", t.n());
    }
}
