//! "Is B better than A?": paired matches and a sequential probability ratio test (SPRT) that
//! stops as soon as the evidence is enough — the method of chess engine testing (fishtest). The
//! test's state is [`Sprt`]; [`ab`] plays the pairs of two `Decide` factories in-process, and
//! `gbely ab` (`app::ab`) plays them with agent files and processes, with a journal.
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
// A/B tests of your own agents, in-process.

/// How an in-process A/B test is played ([`ab`]).
#[derive(Clone, Debug)]
pub struct AbPlan {
    /// Pair `k` plays `maps[k % maps.len()]`.
    pub maps: Vec<std::sync::Arc<gbely_world::Map>>,
    /// Rounds of each match.
    pub rounds: u32,
    /// Pairs at once; 0: one per core.
    pub threads: usize,
    /// The test stops undecided after this many pairs.
    pub max_pairs: usize,
    /// What the test weighs against what.
    pub hypotheses: Hypotheses,
    /// The error rate of a false "better" (α).
    pub alpha: f64,
    /// The error rate of a missed "better" (β).
    pub beta: f64,
    /// `None`: head to head (a pair is A against B twice, the seats swapped). Else both play
    /// this opponent from seat 0 on the same map, and a pair's outcome is B's share minus A's.
    pub against: Option<super::Entrant>,
}

impl AbPlan {
    /// `gbely ab`'s defaults: head to head, logistic Elo 0 against 40, α = β = 0.05, at most
    /// 2000 pairs, full matches, all cores.
    pub fn new(maps: Vec<std::sync::Arc<gbely_world::Map>>) -> AbPlan {
        AbPlan {
            maps,
            rounds: crate::limits::Defaults::ROUNDS,
            threads: 0,
            max_pairs: 2000,
            hypotheses: Hypotheses::Elo { model: EloModel::Logistic, elo0: 0.0, elo1: 40.0 },
            alpha: 0.05,
            beta: 0.05,
            against: None,
        }
    }
}

/// Is `b` better than `a`? Plays pairs until the SPRT decides or `max_pairs` are played, on
/// `plan.threads` threads, reading the outcomes in pair order (the verdict does not depend on
/// the number of threads). The [`Sprt`] it returns has the verdict, the pairs' outcomes and the
/// estimate.
///
/// # Panics
/// When there is no map, or a map is not a duel map.
pub fn ab(a: &super::Entrant, b: &super::Entrant, plan: &AbPlan) -> Sprt {
    assert!(!plan.maps.is_empty() && plan.maps.iter().all(|m| m.seats().len() == 2), "an A/B test plays duel maps");
    let threads = match plan.threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    };
    let limit = crate::limits::TimeLimit::OFF;
    let score = |w: i8| match w {
        1 => 1.0,
        0 => 0.5,
        _ => 0.0,
    };
    let pair = |k: usize| -> f64 {
        let map = &plan.maps[k % plan.maps.len()];
        let outcome = |rec: &crate::session::MatchRecord| {
            let o = &rec.outcome;
            super::winner(
                [o[0].cells, o[1].cells],
                [o[0].tiebreak_round, o[1].tiebreak_round],
                [o[0].disqualified.is_some(), o[1].disqualified.is_some()],
            )
        };
        match &plan.against {
            None => {
                let m1 = super::duel(a, b, map, plan.rounds, limit);
                let m2 = super::duel(b, a, map, plan.rounds, limit);
                // B's game scores: seat 1 in the first match, seat 0 in the second.
                (score(-outcome(&m1)) + score(outcome(&m2))) / 2.0
            }
            Some(opp) => {
                let ma = super::duel(a, opp, map, plan.rounds, limit);
                let mb = super::duel(b, opp, map, plan.rounds, limit);
                mb.outcome[0].score.unwrap_or(0.0) - ma.outcome[0].score.unwrap_or(0.0)
            }
        }
    };
    let mut sprt = Sprt::new(plan.hypotheses, plan.alpha, plan.beta);
    let mut next = 0;
    while sprt.verdict() == Verdict::Undecided && next < plan.max_pairs {
        let batch: Vec<usize> = (next..(next + threads).min(plan.max_pairs)).collect();
        let outcomes: Vec<f64> = std::thread::scope(|scope| {
            let running: Vec<_> = batch.iter().map(|&k| scope.spawn(move || pair(k))).collect();
            running.into_iter().map(|h| h.join().expect("a pair plays")).collect()
        });
        for o in outcomes {
            if sprt.verdict() != Verdict::Undecided {
                break;
            }
            sprt.push(o);
        }
        next += batch.len();
    }
    sprt
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

    fn builtin(name: &str) -> super::super::Entrant {
        super::super::Entrant::builtin(name).expect("a built-in agent")
    }

    #[test]
    fn an_in_process_ab_test_finds_the_stronger_agent_whatever_the_threads() {
        let maps = (0..4)
            .map(|k| std::sync::Arc::new(gbely_world::generate_duel(&format!("ab-{k}"), 30, 30).unwrap()))
            .collect();
        let plan = AbPlan { rounds: 60, threads: 1, ..AbPlan::new(maps) };
        // The Council's easy level against the expander: one of them is stronger.
        let one = ab(&builtin("council:easy"), &builtin("expander-rs"), &plan);
        let two = ab(&builtin("council:easy"), &builtin("expander-rs"), &AbPlan { threads: 2, ..plan.clone() });
        assert_eq!(one.outcomes, two.outcomes, "the verdict does not depend on the threads");
        assert_ne!(one.verdict(), Verdict::Undecided, "{:?}", one.outcomes);
        // A copy of itself is no better.
        let same = ab(&builtin("template-rs"), &builtin("template-rs"), &plan);
        assert_ne!(same.verdict(), Verdict::Better);
    }
}
