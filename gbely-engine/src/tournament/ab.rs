//! "Is B better than A?": paired matches and a sequential probability ratio test (SPRT) that
//! stops as soon as the evidence is enough — the method of chess engine testing (fishtest). The
//! test's state is [`Sprt`]; [`AbDesign`] says what a pair is and scores it; [`run_ab`] plays
//! the pairs in order over the [`super::scheduler`] on any [`super::Arena`]: in-process
//! `Decide` factories (`experiment::ab::ab`) and agent processes with a journal (`gbely ab`).
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
    Elo {
        /// The Elo model the differences are in.
        model: EloModel,
        /// H0's difference.
        elo0: f64,
        /// H1's difference.
        elo1: f64,
    },
    /// Against an opponent: B's share is `share0` or `share1` points above A's.
    Share {
        /// H0's difference, in points of share.
        share0: f64,
        /// H1's difference, in points of share.
        share1: f64,
    },
}

/// Pair outcomes seen so far, and the SPRT's reading of them.
#[derive(Clone, Debug, PartialEq)]
pub struct Sprt {
    /// What the test weighs against what.
    pub hypotheses: Hypotheses,
    /// The error rate of a false "better" (α).
    pub alpha: f64,
    /// The error rate of a missed "better" (β).
    pub beta: f64,
    /// The lower stopping bound of the LLR, `ln(β/(1−α))`: "no better" at or below it.
    pub lower: f64,
    /// The upper stopping bound, `ln((1−β)/α)`: "better" at or above it.
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
    /// B is better (H1 accepted).
    Better,
    /// B is no better (H0 accepted).
    NoBetter,
    /// Neither yet.
    Undecided,
}

impl Verdict {
    /// The verdict in words, after `pairs` pairs.
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
    /// The estimate.
    pub value: Option<f64>,
    /// The lower end of its 95 % interval.
    pub low: Option<f64>,
    /// The upper end of its 95 % interval.
    pub high: Option<f64>,
}

/// Every pair won (or lost): no finite estimate, only a bound.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Sweep {
    /// B won every pair (else lost every one).
    pub won: bool,
    /// How many pairs.
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
    /// Head to head, in normalised Elo.
    pub normalized: Option<Interval>,
    /// The plain mean outcome (per game score head to head; share points).
    pub mean_outcome: f64,
    /// When every pair was won (or lost): the bound there is instead of an estimate.
    pub sweep: Option<Sweep>,
}

impl Sprt {
    /// A test of `hypotheses` with error rates `alpha` and `beta`, before any pair.
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

    /// Adds the outcome of the next pair.
    pub fn push(&mut self, outcome: f64) {
        self.outcomes.push(outcome);
        if matches!(self.hypotheses, Hypotheses::Elo { .. }) {
            self.counts[((outcome * 4.0).round().clamp(0.0, 4.0)) as usize] += 1;
        }
        self.sum += outcome;
        self.sum_sq += outcome * outcome;
    }

    /// Pairs seen.
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

    /// What the test says now.
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

    /// The estimate, corrected for the sequential stop: the one estimate of the test, shown as
    /// pairs come and at the end alike.
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

/// An A/B test's entrants in [`super::Match::seats`]: the baseline …
pub const A: usize = 0;
/// … the candidate …
pub const B: usize = 1;
/// … and the opponent both play ([`AbDesign::Against`]).
pub const OPPONENT: usize = 2;

/// What a pair is, and its outcome for B.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AbDesign {
    /// A against B on the pair's map, then B against A: B's mean game score (0, ¼, ½, ¾, 1).
    HeadToHead,
    /// A, then B, in seat 0 against the same opponent on the pair's map (or in the same seat of
    /// the same final): B's share minus A's (a disqualified side scores 0).
    Against,
}

impl AbDesign {
    /// The seats of the pair's two matches.
    pub fn legs(self) -> [[usize; 2]; 2] {
        match self {
            AbDesign::HeadToHead => [[A, B], [B, A]],
            AbDesign::Against => [[A, OPPONENT], [B, OPPONENT]],
        }
    }

    /// The pair's outcome for B from its two matches' outcomes.
    pub fn outcome(self, legs: [&super::Outcome; 2]) -> f64 {
        match self {
            // B's game scores: seat 1 in the first match, seat 0 in the second.
            AbDesign::HeadToHead => (super::game_score(-legs[0].winner()) + super::game_score(legs[1].winner())) / 2.0,
            AbDesign::Against => legs[1].share(0) - legs[0].share(0),
        }
    }

    /// The hypotheses fit for it: Elo head to head, share points against an opponent.
    pub fn fits(self, h: &Hypotheses) -> bool {
        matches!(
            (self, h),
            (AbDesign::HeadToHead, Hypotheses::Elo { .. }) | (AbDesign::Against, Hypotheses::Share { .. })
        )
    }
}

/// What [`run_ab`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AbTally {
    /// Pairs read from what was known before (a journal).
    pub from_journal: usize,
    /// Pairs played in this run, including those finished after the verdict (at most `jobs`).
    pub played: usize,
}

/// Feeds `sprt` the pairs of `design` in pair order until it decides or has `max_pairs`: first
/// those `known` holds (a journal), then pairs played on `arena`, `jobs` at a time and never more
/// than `jobs` ahead of the pairs the test has read (so when it decides, at most `jobs` pairs are
/// in progress). `read` is called after each pair the test reads, `played(k, outcome)` for each
/// pair played here (in pair order; also for those finished past the verdict). An error of the
/// arena or of `played` stops the run and is returned; an interrupted match (`stop()`: Ctrl-C)
/// leaves the test where it was.
#[allow(clippy::too_many_arguments)]
pub fn run_ab<A: super::Arena>(
    arena: &A,
    design: AbDesign,
    sprt: &mut Sprt,
    max_pairs: usize,
    jobs: usize,
    known: &std::collections::BTreeMap<usize, f64>,
    stop: &(dyn Fn() -> bool + Sync),
    read: &mut dyn FnMut(&Sprt),
    played: &mut dyn FnMut(usize, f64) -> Result<(), A::Error>,
) -> Result<AbTally, A::Error> {
    let mut tally = AbTally::default();
    let decided = |t: &Sprt| t.verdict() != Verdict::Undecided || t.n() >= max_pairs;
    while !decided(sprt) {
        let Some(&o) = known.get(&sprt.n()) else { break };
        sprt.push(o);
        tally.from_journal += 1;
    }
    if decided(sprt) {
        return Ok(tally);
    }
    let pair = |k: usize| -> Result<Option<f64>, A::Error> {
        if let Some(&o) = known.get(&k) {
            return Ok(Some(o));
        }
        let mut outcomes = Vec::with_capacity(2);
        for (leg, seats) in design.legs().into_iter().enumerate() {
            let m = super::Match { index: k, leg, seats, map: k, game: 0 };
            match arena.outcome(&arena.play(&m)?) {
                Some(o) => outcomes.push(o),
                None => return Ok(None),
            }
        }
        Ok(Some(design.outcome([&outcomes[0], &outcomes[1]])))
    };
    let mut error = None;
    let workers = super::Workers::new(jobs.max(1)).in_step();
    super::run_in_order(sprt.n()..max_pairs, workers, stop, pair, |k, result| match result {
        Ok(Some(o)) => {
            if !known.contains_key(&k) {
                tally.played += 1;
                if let Err(e) = played(k, o) {
                    error.get_or_insert(e);
                }
            }
            // The test reads pairs in order only.
            if k == sprt.n() && !decided(sprt) {
                sprt.push(o);
                read(sprt);
            }
            if decided(sprt) || error.is_some() {
                super::Flow::Stop
            } else {
                super::Flow::Go
            }
        }
        Ok(None) => super::Flow::Stop,
        Err(e) => {
            error.get_or_insert(e);
            super::Flow::Stop
        }
    });
    match error {
        Some(e) => Err(e),
        None => Ok(tally),
    }
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
