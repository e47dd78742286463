//! The statistics of `gbely ab`: the generalized sequential probability ratio test (GSPRT) on the
//! exact likelihood of the pair outcomes, and the estimate corrected for the sequential stop.
//! Pure functions: no IO, no clock, no threads.
//!
//! * **Head to head** the outcome of a pair is on the *pentanomial* scale: B's mean game score in
//!   the pair is 0, ¼, ½, ¾ or 1 (LL, LD, LW/DD, DW, WW). The likelihood of the counts under a
//!   hypothesis is that of the multinomial distribution on these five values that fits the
//!   counts best (the maximum-likelihood estimate, MLE) among those that satisfy the hypothesis:
//!   its mean is the score of `elo` (logistic Elo), or its normalised t-value `(mean − ½) / sd`
//!   is that of `elo` (normalised Elo). The MLE of a discrete distribution `p̂` under a linear
//!   constraint `Σ pᵢ vᵢ = 0` is `pᵢ = p̂ᵢ / (1 + x vᵢ)`, with the Lagrange multiplier `x` the one
//!   root of `Σ p̂ᵢ vᵢ / (1 + x vᵢ) = 0` between the poles ([`secular`]). The t-value constraint
//!   is not linear; its MLE is the fixed point of the linear one with `vᵢ` taken at the current
//!   mean and variance ([`mle_t_value`]). This is the method of Michel Van den Bergh used by
//!   fishtest; the LLR is `N Σ p̂ᵢ ln(p1ᵢ / p0ᵢ)`.
//! * **Against a fixed opponent** the outcome is B's share minus A's, a number of share points in
//!   [−100, 100] with many distinct values: the model is a normal distribution of unknown
//!   variance, whose exact likelihood ratio (the MLE of the variance under each mean) is
//!   `W/2 · ln(σ̂0² / σ̂1²)` ([`llr_share`]).
//! * Both regularise as fishtest does, with pseudo-observations at the ends of the scale, so that
//!   no hypothesis has likelihood 0 after a few pairs that happen to agree.

use std::f64::consts::LN_10;

/// nElo per unit of normalised t-value per game: `800 / ln 10` (fishtest's `nelo_divided_by_nt`).
pub const NELO_PER_NT: f64 = 800.0 / LN_10;

/// The pseudo-count given to each pentanomial outcome never seen (fishtest's regularisation): it
/// keeps every hypothesis possible, and weighs a thousandth of a pair.
pub const PENTA_PSEUDO_COUNT: f64 = 1e-3;

/// Share differences: a pseudo-pair of this weight at each end of the scale (±100 points). A
/// larger weight than the pentanomial's because the share scale is wide and skewed streams are
/// common: a simulated stream `3 − Exp(mean 3)` (many small gains, a few large losses, no true
/// difference) is called "better" 13 % of the time with 0.001 and 2.6 % with 0.01 (α = 5 %).
pub const SHARE_PSEUDO_WEIGHT: f64 = 0.01;
/// The ends of the share scale, ±100 points: where the pseudo-pairs of the regularisation sit.
pub const SHARE_RANGE: f64 = 100.0;

/// The pair scores of the pentanomial scale, per game: LL, LD, LW/DD, DW, WW.
pub const PENTA_SCORES: [f64; 5] = [0.0, 0.25, 0.5, 0.75, 1.0];

/// How an Elo difference is measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EloModel {
    /// The expected game score is `1 / (1 + 10^(−elo/400))`.
    Logistic,
    /// `elo = (score − ½) / σ · 800 / ln 10`, σ the standard deviation of a game's score
    /// (per pair: `√(2 var)`): the difference in units of the noise.
    Normalized,
}

/// Expected score of a side `elo` points stronger (the logistic Elo model).
pub fn elo_to_score(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// Logistic Elo difference of an expected score; `None` outside (0, 1).
pub fn score_to_elo(s: f64) -> Option<f64> {
    (s > 0.0 && s < 1.0).then(|| -400.0 * (1.0 / s - 1.0).log10())
}

/// Mean and variance of the distribution `p` on the values `a`.
pub fn moments(a: &[f64], p: &[f64]) -> (f64, f64) {
    let mean: f64 = a.iter().zip(p).map(|(a, p)| a * p).sum();
    let var: f64 = a.iter().zip(p).map(|(a, p)| p * (a - mean).powi(2)).sum();
    (mean, var)
}

/// The root `x` of `Σ pᵢ vᵢ / (1 + x vᵢ) = 0` on the interval where every `1 + x vᵢ > 0`.
///
/// Needs `v` of both signs where `p > 0`. On that interval the function falls strictly from +∞ to
/// −∞ (its derivative is `−Σ pᵢ vᵢ² / (1 + x vᵢ)²`), so the root is unique: Newton's method,
/// kept inside the bracket by bisection, to the last bit.
pub fn secular(v: &[f64], p: &[f64]) -> f64 {
    let vmax = v.iter().zip(p).filter(|(_, &p)| p > 0.0).map(|(v, _)| *v).fold(f64::MIN, f64::max);
    let vmin = v.iter().zip(p).filter(|(_, &p)| p > 0.0).map(|(v, _)| *v).fold(f64::MAX, f64::min);
    debug_assert!(vmin < 0.0 && vmax > 0.0, "secular: v must take both signs ({vmin}, {vmax})");
    let (mut lo, mut hi) = (-1.0 / vmax, -1.0 / vmin);
    let mut x = 0.0;
    for _ in 0..200 {
        let (mut f, mut df) = (0.0, 0.0);
        for (v, p) in v.iter().zip(p) {
            let d = 1.0 + x * v;
            f += p * v / d;
            df -= p * v * v / (d * d);
        }
        if f > 0.0 {
            lo = x;
        } else if f < 0.0 {
            hi = x;
        } else {
            return x;
        }
        let newton = x - f / df;
        let next = if newton > lo && newton < hi { newton } else { lo + (hi - lo) / 2.0 };
        if (next - x).abs() <= 1e-16 * x.abs().max(1.0) || next <= lo || next >= hi {
            return next.clamp(lo, hi);
        }
        x = next;
    }
    x
}

/// The MLE of a distribution on the values `a`, given the observed frequencies `p̂`, among those
/// of mean `s` (`min a < s < max a`, `p̂ > 0` at both ends).
pub fn mle_mean(a: &[f64], phat: &[f64], s: f64) -> Vec<f64> {
    let v: Vec<f64> = a.iter().map(|a| a - s).collect();
    let x = secular(&v, phat);
    phat.iter().zip(&v).map(|(p, v)| p / (1.0 + x * v)).collect()
}

/// The MLE of a distribution on the values `a`, given the observed frequencies `p̂`, among those
/// whose t-value `(mean − reference) / sd` is `t`.
///
/// At the optimum the Lagrange condition is that of a linear constraint with
/// `vᵢ = aᵢ − reference − t (σ² + (aᵢ − μ)²) / (2σ)` (the derivative of `mean − reference − tσ`
/// with respect to `pᵢ`, shifted by a constant so that `Σ pᵢ vᵢ = 0` is the constraint itself),
/// μ and σ those of the optimum: iterate from the uniform distribution until it stops moving.
pub fn mle_t_value(a: &[f64], phat: &[f64], reference: f64, t: f64) -> Vec<f64> {
    let mut p = vec![1.0 / a.len() as f64; a.len()];
    for _ in 0..1000 {
        let (mu, var) = moments(a, &p);
        let sigma = var.max(1e-300).sqrt();
        let v: Vec<f64> = a.iter().map(|a| a - reference - t * (var + (a - mu).powi(2)) / (2.0 * sigma)).collect();
        let x = secular(&v, phat);
        let next: Vec<f64> = phat.iter().zip(&v).map(|(p, v)| p / (1.0 + x * v)).collect();
        let moved = next.iter().zip(&p).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        p = next;
        if moved < 1e-15 {
            break;
        }
    }
    p
}

/// The pentanomial counts with fishtest's regularisation: their total `N` and frequencies.
pub fn regularized(counts: &[u32; 5]) -> (f64, [f64; 5]) {
    let c = counts.map(|c| if c == 0 { PENTA_PSEUDO_COUNT } else { c as f64 });
    let n: f64 = c.iter().sum();
    (n, c.map(|c| c / n))
}

/// The t-value per pair of a normalised Elo difference: a pair is two games, so its t-value is
/// `√2` times a game's.
pub fn nelo_to_pair_t(nelo: f64) -> f64 {
    std::f64::consts::SQRT_2 * nelo / NELO_PER_NT
}

/// The exact log-likelihood ratio of `elo1` against `elo0` for pentanomial counts (LL … WW).
pub fn llr_pentanomial(counts: &[u32; 5], model: EloModel, elo0: f64, elo1: f64) -> f64 {
    if counts.iter().all(|&c| c == 0) {
        return 0.0;
    }
    let (n, phat) = regularized(counts);
    let mle = |elo: f64| match model {
        EloModel::Logistic => mle_mean(&PENTA_SCORES, &phat, elo_to_score(elo)),
        EloModel::Normalized => mle_t_value(&PENTA_SCORES, &phat, 0.5, nelo_to_pair_t(elo)),
    };
    let (p0, p1) = (mle(elo0), mle(elo1));
    n * phat.iter().zip(p0.iter().zip(&p1)).map(|(p, (p0, p1))| p * (p1.ln() - p0.ln())).sum::<f64>()
}

/// Share differences with their regularisation: weight `W`, and the weighted mean and variance.
pub fn share_moments(n: usize, sum: f64, sum_sq: f64) -> (f64, f64, f64) {
    let w = n as f64 + 2.0 * SHARE_PSEUDO_WEIGHT;
    // The pseudo-pairs at ±100 add nothing to the sum.
    let mean = sum / w;
    let second = (sum_sq + 2.0 * SHARE_PSEUDO_WEIGHT * SHARE_RANGE * SHARE_RANGE) / w;
    (w, mean, (second - mean * mean).max(0.0))
}

/// The exact log-likelihood ratio of mean `mu1` against `mu0` for `n` normal outcomes (their sum
/// and sum of squares) of unknown variance: the variance's MLE under mean μ is the mean squared
/// distance to μ, and the ratio of the two maximised likelihoods is `(σ̂0² / σ̂1²)^(W/2)`.
pub fn llr_share(n: usize, sum: f64, sum_sq: f64, mu0: f64, mu1: f64) -> f64 {
    if n == 0 {
        return 0.0;
    }
    let (w, mean, var) = share_moments(n, sum, sum_sq);
    let msd = |mu: f64| var + (mean - mu).powi(2);
    w / 2.0 * (msd(mu0) / msd(mu1)).ln()
}

// ---------------------------------------------------------------------------------------------
// The estimate after a sequential test.

/// The LLR as a Brownian motion: the normal approximation of the test, with drift and variance
/// per pair as functions of the true mean outcome `s` (fishtest's `sprt.py`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Drift {
    /// Pairs (regularised weight).
    pub n: f64,
    /// Mean and variance of a pair outcome (regularised).
    pub mean: f64,
    /// The variance of a pair outcome (regularised).
    pub var: f64,
    /// H0 as a mean outcome.
    pub s0: f64,
    /// H1 as a mean outcome.
    pub s1: f64,
    /// The lower stopping bound of the LLR.
    pub lower: f64,
    /// The upper stopping bound of the LLR.
    pub upper: f64,
}

impl Drift {
    /// The LLR's drift per pair when the true mean outcome is `s`.
    pub fn mu(&self, s: f64) -> f64 {
        (self.s1 - self.s0) * (2.0 * s - self.s0 - self.s1) / (2.0 * self.var)
    }

    /// The LLR's variance per pair.
    pub fn sigma2(&self) -> f64 {
        (self.s1 - self.s0).powi(2) / self.var
    }

    /// Where the test stands in the Brownian picture: `(T, y)`, the time (pairs) and the LLR. As
    /// fishtest does, an LLR past a bound is put back on the bound at the time the straight line
    /// from 0 would have crossed it.
    pub fn state(&self) -> (f64, f64) {
        let slope = self.mu(self.mean);
        let llr = self.n * slope;
        if llr >= self.upper && slope > 0.0 {
            (self.upper / slope, self.upper)
        } else if llr <= self.lower && slope < 0.0 {
            (self.lower / slope, self.lower)
        } else {
            (self.n, llr)
        }
    }

    /// The probability, if the true mean outcome is `s`, of a test outcome worse for B than the
    /// one seen: a "no better" sooner, a "better" later or not at all, or (undecided) a lower LLR.
    pub fn worse_outcome(&self, s: f64) -> f64 {
        let (t, y) = self.state();
        let bm = Brownian { mu: self.mu(s), sigma2: self.sigma2(), a: self.lower, b: self.upper };
        if y >= self.upper {
            1.0 - bm.exit_by(t, false)
        } else if y <= self.lower {
            bm.exit_by(t, true)
        } else {
            bm.exit_by(t, true) + bm.alive_below(t, y)
        }
    }

    /// The mean outcome `s` at which [`worse_outcome`](Self::worse_outcome) is `q`
    /// (it falls as `s` grows): `q = ½` is the median-unbiased estimate.
    pub fn quantile(&self, q: f64) -> f64 {
        let spread = 20.0 * (self.var / self.n.max(1.0)).sqrt() + 10.0 * (self.s1 - self.s0).abs();
        let (mut lo, mut hi) = (self.mean - spread, self.mean + spread);
        if self.worse_outcome(lo) < q {
            return lo;
        }
        if self.worse_outcome(hi) > q {
            return hi;
        }
        // 45 halvings: the spread to a 3e-14 of itself.
        for _ in 0..45 {
            let mid = lo + (hi - lo) / 2.0;
            if self.worse_outcome(mid) > q {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        lo + (hi - lo) / 2.0
    }
}

/// The estimate after the sequential test, as mean outcomes.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct SequentialEstimate {
    /// Median-unbiased: the mean outcome at which a worse test outcome has probability ½.
    pub mean: f64,
    /// The lower end of the 95 % interval.
    pub low: f64,
    /// The upper end of the 95 % interval.
    pub high: f64,
    /// The likelihood of superiority: the probability of a test outcome worse than this one if
    /// there were no difference (B = A).
    pub los: f64,
}

/// The estimate corrected for the sequential stop; `even` is the mean outcome of no difference.
pub fn sequential_estimate(d: &Drift, even: f64) -> SequentialEstimate {
    SequentialEstimate {
        mean: d.quantile(0.5),
        low: d.quantile(0.975),
        high: d.quantile(0.025),
        los: d.worse_outcome(even),
    }
}

/// A Brownian motion from 0 with drift `mu` and variance `sigma2` per unit of time, stopped at
/// `a < 0 < b`.
struct Brownian {
    mu: f64,
    sigma2: f64,
    a: f64,
    b: f64,
}

/// Intervals of the Simpson rule over the stopping interval.
const SIMPSON: usize = 1000;

impl Brownian {
    /// The density at `x` of the motion at time `t`, not yet stopped: the free Gaussian minus its
    /// images in the two bounds (method of images), times the drift's Girsanov factor.
    fn alive_density(&self, x: f64, t: f64) -> f64 {
        let v = self.sigma2 * t;
        let w = self.b - self.a;
        let k_max = ((10.0 * v.sqrt()) / w).ceil() as i64 + 2;
        let girsanov = self.mu * x / self.sigma2 - self.mu * self.mu * t / (2.0 * self.sigma2);
        let norm = (2.0 * std::f64::consts::PI * v).sqrt();
        let g = |d: f64| (girsanov - d * d / (2.0 * v)).exp() / norm;
        (-k_max..=k_max)
            .map(|k| {
                let c = 2.0 * k as f64 * w;
                g(x - c) - g(x - (2.0 * self.b - c))
            })
            .sum::<f64>()
            .max(0.0)
    }

    /// The probability of leaving through `a` (`at_a`) or `b` before `b` or `a`, from `x`.
    fn exit_from(&self, x: f64, at_a: bool) -> f64 {
        let gamma = 2.0 * self.mu / self.sigma2;
        // Through a: (S(b) − S(x)) / (S(b) − S(a)) with the scale function S(x) = e^(−γx).
        let through_a = if gamma.abs() * (self.b - self.a) < 1e-9 {
            (self.b - x) / (self.b - self.a)
        } else if gamma > 0.0 {
            // Divided by S(a), so that nothing overflows.
            ((-gamma * (x - self.a)).exp() - (-gamma * (self.b - self.a)).exp())
                / (-(-gamma * (self.b - self.a)).exp_m1())
        } else {
            // Divided by S(b).
            (-gamma * (x - self.b)).exp_m1() / (-gamma * (self.a - self.b)).exp_m1()
        };
        if at_a {
            through_a
        } else {
            1.0 - through_a
        }
    }

    /// The probability of having left through `a` (`at_a`) or `b` by time `t`: all that ever
    /// leaves there, less what leaves there later from where the motion is at `t`.
    fn exit_by(&self, t: f64, at_a: bool) -> f64 {
        let later = simpson(self.a, self.b, |x| self.alive_density(x, t) * self.exit_from(x, at_a));
        (self.exit_from(0.0, at_a) - later).clamp(0.0, 1.0)
    }

    /// The probability of being still inside at time `t`, at or below `y`.
    fn alive_below(&self, t: f64, y: f64) -> f64 {
        simpson(self.a, y, |x| self.alive_density(x, t)).clamp(0.0, 1.0)
    }
}

fn simpson(lo: f64, hi: f64, f: impl Fn(f64) -> f64) -> f64 {
    if hi <= lo {
        return 0.0;
    }
    let h = (hi - lo) / SIMPSON as f64;
    let inner: f64 = (1..SIMPSON).map(|i| f(lo + i as f64 * h) * if i % 2 == 1 { 4.0 } else { 2.0 }).sum();
    (f(lo) + f(hi) + inner) * h / 3.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secular_finds_the_multiplier_of_a_two_point_distribution() {
        // Values −1 and 1 with frequencies ¾ and ¼, mean constrained to 0: the MLE is (½, ½), and
        // ¾ / (1 − x) = ½ gives x = −½.
        let x = secular(&[-1.0, 1.0], &[0.75, 0.25]);
        assert!((x + 0.5).abs() < 1e-15, "{x}");
        let p = mle_mean(&[0.0, 1.0], &[0.75, 0.25], 0.5);
        assert!((p[0] - 0.5).abs() < 1e-15 && (p[1] - 0.5).abs() < 1e-15, "{p:?}");
    }

    #[test]
    fn the_t_value_mle_meets_its_constraint() {
        let (_, phat) = regularized(&[3, 10, 40, 12, 5]);
        for t in [-0.3, 0.0, 0.1, 0.25] {
            let p = mle_t_value(&PENTA_SCORES, &phat, 0.5, t);
            let (mu, var) = moments(&PENTA_SCORES, &p);
            assert!(((mu - 0.5) / var.sqrt() - t).abs() < 1e-12, "t {t}: {p:?}");
            assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        }
    }

    #[test]
    fn a_brownian_motion_without_bounds_in_reach_is_a_gaussian() {
        // Bounds ±100 sd away: alive_below is the normal CDF. At y = mean + 1 sd: Φ(1).
        let bm = Brownian { mu: 0.5, sigma2: 1.0, a: -200.0, b: 200.0 };
        let t = 4.0;
        let p = bm.alive_below(t, 2.0 + 2.0);
        assert!((p - 0.841_344_746_068_542_9).abs() < 1e-6, "{p}");
        assert!(bm.exit_by(t, true) < 1e-12);
    }

    #[test]
    fn exits_are_those_of_gamblers_ruin() {
        // No drift: through a from 0 with probability b / (b − a).
        let bm = Brownian { mu: 0.0, sigma2: 1.0, a: -1.0, b: 3.0 };
        assert!((bm.exit_from(0.0, true) - 0.75).abs() < 1e-12);
        // Drift −1, variance 1, bounds ±1: S(x) = e^(2x), (S(1) − S(0)) / (S(1) − S(−1)) =
        // (e² − 1) / (e² − e⁻²) = 6.389056 / 7.253720 = 0.880797.
        for mu in [-1.0, 1.0] {
            let bm = Brownian { mu, sigma2: 1.0, a: -1.0, b: 1.0 };
            let want = if mu < 0.0 { 0.880797 } else { 1.0 - 0.880797 };
            assert!((bm.exit_from(0.0, true) - want).abs() < 1e-6, "{mu}");
            // By a long time nearly everything has left, and what has left adds up.
            let (ea, eb) = (bm.exit_by(50.0, true), bm.exit_by(50.0, false));
            assert!((ea - want).abs() < 1e-6 && (ea + eb - 1.0).abs() < 1e-6, "{ea} {eb}");
        }
    }
}
