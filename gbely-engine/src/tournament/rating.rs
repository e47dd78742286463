//! Ratings of a league: the Elo maximum-likelihood fit (Bradley–Terry with logistic Elo, a draw
//! half a win) over all results at once, with a weak prior, its covariance, and the likelihood
//! of superiority of every entry over every other. Pure functions: no IO.
//!
//! The results enter as counts (games and points of each entry against each other), so the fit
//! is the same number, bit for bit, whatever order the matches were played or read in.
//!
//! Model: entry `i` scores `P(rᵢ − rⱼ) = 1 / (1 + 10^(−(rᵢ − rⱼ)/400))` on average against `j`.
//! The ratings maximise `Σ_{i<j} [Sᵢⱼ ln P(rᵢ − rⱼ) + (nᵢⱼ − Sᵢⱼ) ln(1 − P(rᵢ − rⱼ))] −
//! Σ rᵢ² / (2 · PRIOR_SD²)`, `nᵢⱼ` the games and `Sᵢⱼ` the points of `i` against `j`. The prior
//! (a normal distribution of sd [`PRIOR_SD`] around 0) keeps a clean sweep finite and anchors the
//! scale; the ratings' mean is then about 0. The covariance is the inverse of the negative
//! Hessian at the optimum (the Laplace approximation).

/// The prior's standard deviation, in Elo.
pub const PRIOR_SD: f64 = 400.0;

/// `ln 10 / 400`: the slope of the logistic curve in Elo.
const C: f64 = std::f64::consts::LN_10 / 400.0;

/// Games and points of each entry against each other.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Counts {
    /// `games[i][j]`: games between `i` and `j` (symmetric).
    pub games: Vec<Vec<u32>>,
    /// `half_points[i][j]`: twice the points of `i` against `j` (a win 2, a draw 1).
    pub half_points: Vec<Vec<u32>>,
}

impl Counts {
    /// No games yet among `n` entrants.
    pub fn new(n: usize) -> Counts {
        Counts { games: vec![vec![0; n]; n], half_points: vec![vec![0; n]; n] }
    }

    /// A game of `a` against `b`: `winner` 1 if `a` won, −1 if `b` did, 0 a draw.
    pub fn add(&mut self, a: usize, b: usize, winner: i8) {
        if a == b {
            return;
        }
        self.games[a][b] += 1;
        self.games[b][a] += 1;
        let (pa, pb) = match winner {
            1 => (2, 0),
            -1 => (0, 2),
            _ => (1, 1),
        };
        self.half_points[a][b] += pa;
        self.half_points[b][a] += pb;
    }
}

/// The fit: ratings in Elo and their covariance.
#[derive(Clone, Debug, PartialEq)]
pub struct Fit {
    /// The ratings, in Elo (mean about 0).
    pub rating: Vec<f64>,
    /// Their covariance.
    pub cov: Vec<Vec<f64>>,
}

impl Fit {
    /// The standard deviation of a rating.
    pub fn sd(&self, i: usize) -> f64 {
        self.cov[i][i].max(0.0).sqrt()
    }

    /// The likelihood of superiority: the probability that `i` is stronger than `j`.
    pub fn los(&self, i: usize, j: usize) -> f64 {
        let var = self.cov[i][i] + self.cov[j][j] - 2.0 * self.cov[i][j];
        normal_cdf((self.rating[i] - self.rating[j]) / var.max(1e-300).sqrt())
    }
}

fn expected(d: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-d / 400.0))
}

/// The maximum a posteriori ratings (Newton's method on a strictly concave function).
pub fn fit(counts: &Counts) -> Fit {
    let n = counts.games.len();
    let mut r = vec![0.0; n];
    let mut neg_hessian = vec![vec![0.0; n]; n];
    for _ in 0..100 {
        let mut grad: Vec<f64> = r.iter().map(|r| -r / (PRIOR_SD * PRIOR_SD)).collect();
        for (i, row) in neg_hessian.iter_mut().enumerate() {
            row.iter_mut().for_each(|x| *x = 0.0);
            row[i] = 1.0 / (PRIOR_SD * PRIOR_SD);
        }
        for i in 0..n {
            for j in 0..n {
                let games = counts.games[i][j] as f64;
                if i == j || games == 0.0 {
                    continue;
                }
                let p = expected(r[i] - r[j]);
                grad[i] += C * (counts.half_points[i][j] as f64 / 2.0 - games * p);
                let w = C * C * games * p * (1.0 - p);
                neg_hessian[i][i] += w;
                neg_hessian[i][j] -= w;
            }
        }
        let step = solve(&neg_hessian, &grad);
        let mut largest: f64 = 0.0;
        for (r, s) in r.iter_mut().zip(&step) {
            // Far from the optimum a full Newton step can overshoot on the flat logistic tails.
            let s = s.clamp(-400.0, 400.0);
            *r += s;
            largest = largest.max(s.abs());
        }
        if largest < 1e-10 {
            break;
        }
    }
    let cov = (0..n)
        .map(|k| {
            let e: Vec<f64> = (0..n).map(|i| f64::from(u8::from(i == k))).collect();
            solve(&neg_hessian, &e)
        })
        .collect::<Vec<_>>();
    // `cov` holds columns; the matrix is symmetric.
    Fit { rating: r, cov }
}

/// Solves `a x = b` for a symmetric positive definite `a` (Cholesky).
fn solve(a: &[Vec<f64>], b: &[f64]) -> Vec<f64> {
    let n = b.len();
    let mut l = vec![vec![0.0; n]; n];
    for i in 0..n {
        for j in 0..=i {
            let s: f64 = (0..j).map(|k| l[i][k] * l[j][k]).sum();
            if i == j {
                l[i][i] = (a[i][i] - s).max(1e-300).sqrt();
            } else {
                l[i][j] = (a[i][j] - s) / l[j][j];
            }
        }
    }
    let mut y = vec![0.0; n];
    for i in 0..n {
        y[i] = (b[i] - (0..i).map(|k| l[i][k] * y[k]).sum::<f64>()) / l[i][i];
    }
    let mut x = vec![0.0; n];
    for i in (0..n).rev() {
        x[i] = (y[i] - (i + 1..n).map(|k| l[k][i] * x[k]).sum::<f64>()) / l[i][i];
    }
    x
}

/// The standard normal distribution function, through Abramowitz & Stegun's 7.1.26 for erfc
/// (within 1.5e-7: LOS is shown to a tenth of a percent).
pub fn normal_cdf(z: f64) -> f64 {
    let x = z.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let poly =
        t * (0.254_829_592 + t * (-0.284_496_736 + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erfc = poly * (-x * x).exp();
    if z >= 0.0 {
        1.0 - erfc / 2.0
    } else {
        erfc / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_wins_in_four_games_with_the_prior() {
        // A beats B 3–1. By symmetry rA = −rB = d/2, and the optimum solves
        // C (3 − 4 P(d)) = (d/2) / 400², found here by bisection: d = 170.08 (by hand: P(170.08) =
        // 0.72692, 0.0057565 · (3 − 2.90769) = 0.00053139 ≈ 170.08 / 320000 = 0.00053150).
        let mut c = Counts::new(2);
        for w in [1, 1, 1, -1] {
            c.add(0, 1, w);
        }
        let f = fit(&c);
        let (mut lo, mut hi) = (0.0, 400.0);
        for _ in 0..100 {
            let d = (lo + hi) / 2.0;
            if C * (3.0 - 4.0 * expected(d)) > d / 2.0 / (PRIOR_SD * PRIOR_SD) {
                lo = d;
            } else {
                hi = d;
            }
        }
        let d = f.rating[0] - f.rating[1];
        assert!((d - lo).abs() < 1e-8, "{d} {lo}");
        assert!((d - 170.08).abs() < 0.01, "{d}");
        assert!((f.rating[0] + f.rating[1]).abs() < 1e-9);
        assert!(f.los(0, 1) > 0.5 && (f.los(0, 1) + f.los(1, 0) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn a_clean_sweep_stays_finite() {
        let mut c = Counts::new(3);
        for _ in 0..10 {
            c.add(0, 1, 1);
            c.add(0, 2, 1);
            c.add(1, 2, 0);
        }
        let f = fit(&c);
        assert!(f.rating[0].is_finite() && f.rating[0] > 300.0 && f.rating[0] < 1000.0, "{:?}", f.rating);
        assert!((f.rating[1] - f.rating[2]).abs() < 1e-9);
    }

    #[test]
    fn normal_cdf_values() {
        assert!((normal_cdf(0.0) - 0.5).abs() < 1e-9);
        assert!((normal_cdf(1.959_964) - 0.975).abs() < 2e-7);
        assert!((normal_cdf(-1.0) - 0.158_655_25).abs() < 2e-7);
    }
}
