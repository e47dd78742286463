//! `gbely ab` end to end: a real difference is found, a copy of itself is no better, the verdict
//! does not depend on `--jobs`, and a stopped run resumes from its journal. Then the statistics:
//! the exact LLR against a second implementation written here, and the error rates on simulated
//! streams (`GBELY_SPRT_RUNS=4000` for a closer look; the figures of docs/ab.md come from the
//! ignored `figures_of_the_docs`).

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::common::scratch;

/// `gbely ab` with short matches (30 rounds) and a 50 Elo hypothesis, as JSON.
fn ab(dir: &Path, args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_gbely"))
        .args(["ab"])
        .args(args)
        .args(["--rounds", "30", "--elo1", "50", "--json"])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(matches!(out.status.code(), Some(0) | Some(130)), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn a_real_difference_is_found_in_a_few_pairs() {
    // Over 30 rounds the template's all-out attacks beat the expander's slower build-up.
    let doc = ab(&scratch("better"), &["expander", "template"]);
    assert_eq!(doc["verdict"], "better", "{doc}");
    // Two LW/DD pairs and the rest WW: the exact LLR at 0/50 logistic Elo is 2.93910 at
    // [0,0,2,0,20], short of ln(0.95/0.05) = 2.94444, and 3.07269 at [0,0,2,0,21] (bisection on
    // the secular equation in an independent script; `exact_llr` below agrees).
    assert_eq!(doc["pentanomial"], serde_json::json!([0, 0, 2, 0, 21]), "{doc}");
    assert_eq!(doc["pairs"], 23);
    assert!((doc["llr"].as_f64().unwrap() - 3.072_693_082_161_7).abs() < 1e-9, "{}", doc["llr"]);
    assert_eq!(doc["interrupted"], false);
    assert_eq!(doc["pair_maps"][1]["map"], "seed:ab-1");
    assert!(doc["estimate"]["elo"].as_f64().unwrap() > 50.0, "{doc}");
    assert!(doc["estimate"]["los"].as_f64().unwrap() > 0.99, "{doc}");
}

#[test]
fn a_copy_of_itself_is_no_better() {
    let dir = scratch("copy");
    std::fs::copy(concat!(env!("CARGO_MANIFEST_DIR"), "/../agents/expander.py"), dir.join("copy.py")).unwrap();
    let doc = ab(&dir, &["expander", "copy.py"]);
    assert_eq!(doc["verdict"], "no_better", "{doc}");
    // Every pair split evenly: one win each, or two draws.
    let p = &doc["pentanomial"];
    assert_eq!(p[2].as_u64().unwrap(), doc["pairs"].as_u64().unwrap(), "{p}");
}

#[test]
fn the_verdict_does_not_depend_on_jobs_and_a_run_resumes() {
    let strip = |d: &Value| (d["verdict"].clone(), d["pairs"].clone(), d["outcomes"].clone());
    let one = ab(&scratch("jobs1"), &["expander", "template", "--jobs", "1"]);
    let two = ab(&scratch("jobs2"), &["expander", "template", "--jobs", "3"]);
    assert_eq!(strip(&one), strip(&two));
    // No worker runs more than --jobs pairs ahead of the test: at most 3 played past the verdict.
    let past = |d: &Value| d["played"].as_u64().unwrap() - d["pairs"].as_u64().unwrap();
    assert_eq!(past(&one), 0, "{one}");
    assert!(past(&two) <= 3, "{two}");

    let dir = scratch("resume");
    let first = ab(&dir, &["expander", "template", "--max-pairs", "2"]);
    assert_eq!(first["verdict"], "undecided");
    assert_eq!(first["pairs"], 2);
    let again = ab(&dir, &["expander", "template"]);
    assert_eq!(again["from_journal"], 2);
    assert_eq!(strip(&again), strip(&one));
}

#[test]
fn against_a_fixed_opponent_the_outcome_is_a_share_difference() {
    let doc = ab(&scratch("against"), &["template", "expander", "--against", "council", "--max-pairs", "3"]);
    let outcomes = doc["outcomes"].as_array().unwrap();
    assert_eq!(outcomes.len(), 3);
    // Shares are cells / 3600 × 100: a difference is a multiple of 1/36 of a point.
    for o in outcomes {
        let x = o.as_f64().unwrap() * 36.0;
        assert!((x - x.round()).abs() < 1e-6, "{o}");
    }
    assert!(doc["estimate"]["share_points"].is_number());
    assert!(doc["pentanomial"].is_null());
}

#[test]
fn against_both_asks_both_questions() {
    let doc = ab(&scratch("both"), &["template", "expander", "--against", "both", "--max-pairs", "2"]);
    assert!(doc["head_to_head"]["against"].is_null(), "{doc}");
    assert_eq!(doc["head_to_head"]["pairs"], 2);
    assert!(doc["head_to_head"]["pentanomial"].is_array());
    assert_eq!(doc["against_council"]["against"]["name"], "council");
    assert_eq!(doc["against_council"]["outcomes"].as_array().unwrap().len(), 2);
}

#[test]
fn the_final_rotates_a_and_b_through_the_seats_against_the_same_field() {
    let doc = ab(
        &scratch("final"),
        &["template", "expander", "--final", "--fill", "template", "--size", "41", "--max-pairs", "2", "--seed", "abf"],
    );
    let outcomes = doc["outcomes"].as_array().unwrap();
    assert_eq!(outcomes.len(), 2, "{doc}");
    // A share difference on a 41×41 map: a multiple of 100/1681 of a point.
    for o in outcomes {
        let x = o.as_f64().unwrap() * 1681.0 / 100.0;
        assert!((x - x.round()).abs() < 1e-6, "{o}");
    }
    assert!(doc["pentanomial"].is_null());
    assert!(doc["estimate"]["share_points"].is_number());
}

// ---------------------------------------------------------------------------------------------
// The statistics against a second implementation, written here from the published method (the
// MLE of a discrete distribution under a constraint on its mean, or on its t-value) and sharing
// no code with `app::sprt`: the mean constraint by plain bisection on its Lagrange multiplier, the
// t-value constraint as a profile — for each mean `m` the t-value fixes the variance, so the MLE
// is that under two linear constraints (mean and second moment, a 2-D convex dual solved by
// Newton's method), and the best `m` is found by golden-section search.

use gbely_engine::experiment::sprt::{llr_pentanomial, EloModel};

const SCORES: [f64; 5] = [0.0, 0.25, 0.5, 0.75, 1.0];

/// Observed frequencies with fishtest's regularisation (a count of 0 weighs 0.001) and their total.
fn frequencies(counts: [u32; 5]) -> (f64, [f64; 5]) {
    let c = counts.map(|c| if c == 0 { 0.001 } else { f64::from(c) });
    let n: f64 = c.iter().sum();
    (n, c.map(|c| c / n))
}

/// Σ q ln p of the MLE under mean `s`: `pᵢ = qᵢ / (1 + λ (aᵢ − s))`, `λ` by bisection.
fn loglik_mean(q: &[f64; 5], s: f64) -> f64 {
    let g = |l: f64| (0..5).map(|i| q[i] * (SCORES[i] - s) / (1.0 + l * (SCORES[i] - s))).sum::<f64>();
    // The poles: 1 + λ (1 − s) > 0 and 1 − λ s > 0.
    let (mut lo, mut hi) = (-1.0 / (1.0 - s), 1.0 / s);
    for _ in 0..2000 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if g(mid) > 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let l = 0.5 * (lo + hi);
    (0..5).map(|i| q[i] * (q[i] / (1.0 + l * (SCORES[i] - s))).ln()).sum()
}

/// The largest value of a concave function on (lo, hi), by golden-section search.
fn golden_max(mut lo: f64, mut hi: f64, iterations: usize, f: impl Fn(f64) -> f64) -> f64 {
    let r = (5f64.sqrt() - 1.0) / 2.0;
    let (mut c, mut d) = (hi - r * (hi - lo), lo + r * (hi - lo));
    let (mut fc, mut fd) = (f(c), f(d));
    for _ in 0..iterations {
        if fc >= fd {
            hi = d;
            (d, fd) = (c, fc);
            c = hi - r * (hi - lo);
            fc = f(c);
        } else {
            lo = c;
            (c, fc) = (d, fd);
            d = lo + r * (hi - lo);
            fd = f(d);
        }
    }
    fc.max(fd)
}

/// Σ q ln p of the MLE under mean `m` and second moment `m2`, in the primal: the three
/// constraints (total, mean, second moment) leave two free probabilities, p(LL) and p(WW); the
/// others follow linearly (with `uᵢ = aᵢ − ½ = ∓¼, 0`: `p(DW) ∓ p(LD) = 4 Σ pu` and
/// `p(LD) + p(DW) = 16 Σ pu²` over the middle three), and the log-likelihood, concave in them, is
/// maximised by nested golden-section searches over the region where all five are positive.
fn loglik_two_moments(q: &[f64; 5], m: f64, m2: f64) -> f64 {
    // Each pᵢ as (constant, coefficient of p0, coefficient of p4).
    let a1 = [m - 0.5, 0.5, -0.5]; // Σ p u over the middle three
    let b1 = [m2 - m + 0.25, -0.25, -0.25]; // Σ p u² over the middle three
    let forms: [[f64; 3]; 5] = [
        [0.0, 1.0, 0.0],
        [8.0 * b1[0] - 2.0 * a1[0], 8.0 * b1[1] - 2.0 * a1[1], 8.0 * b1[2] - 2.0 * a1[2]],
        [1.0 - 16.0 * b1[0], -1.0 - 16.0 * b1[1], -1.0 - 16.0 * b1[2]],
        [8.0 * b1[0] + 2.0 * a1[0], 8.0 * b1[1] + 2.0 * a1[1], 8.0 * b1[2] + 2.0 * a1[2]],
        [0.0, 0.0, 1.0],
    ];
    // For a given p0, the interval of p4 where every pᵢ > 0.
    let range = |p0: f64| {
        let (mut lo, mut hi) = (f64::NEG_INFINITY, f64::INFINITY);
        for f in &forms {
            let c = f[0] + f[1] * p0;
            if f[2] > 0.0 {
                lo = lo.max(-c / f[2]);
            } else if f[2] < 0.0 {
                hi = hi.min(c / -f[2]);
            } else if c <= 0.0 {
                return None;
            }
        }
        (lo < hi).then_some((lo, hi))
    };
    let ll =
        |p0: f64, p4: f64| (0..5).map(|i| q[i] * (forms[i][0] + forms[i][1] * p0 + forms[i][2] * p4).ln()).sum::<f64>();
    let best_p4 = |p0: f64| match range(p0) {
        Some((lo, hi)) => golden_max(lo, hi, 70, |p4| ll(p0, p4)),
        None => f64::NEG_INFINITY,
    };
    // The p0 where the interval is not empty: its width is concave in p0, so that is an
    // interval whose ends are among the points where two bounds meet.
    let mut ends = vec![0.0, 1.0];
    for f in &forms {
        for g in &forms {
            // f[0] + f[1] p0 + f[2] p4 = 0 and the same for g, with p4 eliminated.
            if f[2] > 0.0 && g[2] < 0.0 {
                let (cf, cg) = (f[1] / f[2] - g[1] / g[2], f[0] / f[2] - g[0] / g[2]);
                if cf != 0.0 {
                    ends.push(-cg / cf);
                }
            }
        }
    }
    let width = |p0: f64| {
        let (mut lo, mut hi) = (f64::NEG_INFINITY, f64::INFINITY);
        for f in &forms {
            let c = f[0] + f[1] * p0;
            if f[2] > 0.0 {
                lo = lo.max(-c / f[2]);
            } else if f[2] < 0.0 {
                hi = hi.min(c / -f[2]);
            }
        }
        hi - lo
    };
    let ok: Vec<f64> = ends.into_iter().filter(|&e| (0.0..=1.0).contains(&e) && width(e) >= -1e-15).collect();
    if ok.is_empty() {
        return f64::NEG_INFINITY;
    }
    let lo = ok.iter().cloned().fold(f64::INFINITY, f64::min);
    let hi = ok.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    if hi <= lo {
        return f64::NEG_INFINITY;
    }
    golden_max(lo, hi, 70, best_p4)
}

/// Σ q ln p of the MLE under t-value `(mean − ½) / sd = t`.
fn loglik_t(q: &[f64; 5], t: f64) -> f64 {
    if t == 0.0 {
        return loglik_mean(q, 0.5);
    }
    // σ = (m − ½) / t; σ² ≤ m (1 − m) on [0, 1] bounds m to ½ … ½ ± |t| / (2 √(1 + t²)).
    let reach = t / (2.0 * (1.0 + t * t).sqrt());
    let profile = |m: f64| {
        let sd = (m - 0.5) / t;
        loglik_two_moments(q, m, sd * sd + m * m)
    };
    let (lo, hi) = if t > 0.0 { (0.5, 0.5 + reach) } else { (0.5 + reach, 0.5) };
    golden_max(lo, hi, 70, profile)
}

/// The exact LLR, independently.
fn exact_llr(counts: [u32; 5], model: EloModel, elo0: f64, elo1: f64) -> f64 {
    let (n, q) = frequencies(counts);
    let ll = |elo: f64| match model {
        EloModel::Logistic => loglik_mean(&q, 1.0 / (1.0 + 10f64.powf(-elo / 400.0))),
        EloModel::Normalized => loglik_t(&q, 2f64.sqrt() * elo * 10f64.ln() / 800.0),
    };
    n * (ll(elo1) - ll(elo0))
}

/// A small deterministic generator (xorshift64*), so the tests need no crate.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn uniform(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// An index drawn from the distribution `p`.
    fn pick(&mut self, p: &[f64; 5]) -> usize {
        let mut u = self.uniform();
        for (i, &pi) in p.iter().enumerate() {
            if u < pi {
                return i;
            }
            u -= pi;
        }
        4
    }
}

#[test]
fn the_exact_llr_agrees_with_an_independent_implementation() {
    let mut rng = Rng::new(23);
    let mut cases: Vec<[u32; 5]> = vec![
        [0, 0, 1, 0, 7],
        [0, 0, 2, 0, 21],
        [0, 0, 0, 0, 8],
        [8, 0, 0, 0, 0],
        [0, 0, 30, 0, 0],
        [1, 0, 0, 0, 0],
        [10, 0, 0, 0, 11],
        [3, 17, 40, 18, 2],
        [120, 3, 15, 4, 131],
    ];
    for _ in 0..200 {
        let total = 1 + (rng.next() % 3000) as u32;
        // Random shapes, some with empty cells.
        let w: [f64; 5] = std::array::from_fn(|_| if rng.uniform() < 0.25 { 0.0 } else { rng.uniform() });
        let sum: f64 = w.iter().sum::<f64>().max(1e-9);
        let c = w.map(|w| (w / sum * f64::from(total)).round() as u32);
        if c.iter().any(|&c| c > 0) {
            cases.push(c);
        }
    }
    let hypotheses = [
        (EloModel::Logistic, 0.0, 5.0),
        (EloModel::Logistic, 0.0, 40.0),
        (EloModel::Logistic, -5.0, 20.0),
        (EloModel::Logistic, 0.0, 200.0),
        (EloModel::Normalized, 0.0, 5.0),
        (EloModel::Normalized, 0.0, 28.0),
        (EloModel::Normalized, -10.0, 10.0),
        (EloModel::Normalized, 5.0, 60.0),
    ];
    let mut worst: f64 = 0.0;
    for (k, c) in cases.iter().enumerate() {
        for &(model, e0, e1) in &hypotheses {
            // The independent t-value MLE is slow (three nested searches): 70 vectors are enough.
            if model == EloModel::Normalized && k >= 70 {
                continue;
            }
            let (ours, theirs) = (llr_pentanomial(c, model, e0, e1), exact_llr(*c, model, e0, e1));
            let err = (ours - theirs).abs() / theirs.abs().max(1.0);
            worst = worst.max(err);
            assert!(err <= 1e-9, "{c:?} {model:?} {e0}/{e1}: gbely {ours}, independent {theirs}");
        }
    }
    eprintln!("{} count vectors (70 for normalised Elo) × 4 + 4 hypotheses: worst difference {worst:.1e}", cases.len());
}

#[test]
fn the_exact_llr_of_the_worked_examples() {
    // docs/ab.md: [0,0,1,0,7] at 0/50 logistic Elo, worked by hand there: 1.0688.
    let l = llr_pentanomial(&[0, 0, 1, 0, 7], EloModel::Logistic, 0.0, 50.0);
    assert!((l - 1.068_798_736).abs() < 1e-8, "{l}");
    assert!((exact_llr([0, 0, 1, 0, 7], EloModel::Logistic, 0.0, 50.0) - 1.068_798_736).abs() < 1e-8);
    // The run of docs/ab.md stops at 23 pairs, not 22.
    assert!(llr_pentanomial(&[0, 0, 2, 0, 20], EloModel::Logistic, 0.0, 50.0) < 19f64.ln());
    assert!(llr_pentanomial(&[0, 0, 2, 0, 21], EloModel::Logistic, 0.0, 50.0) > 19f64.ln());
    // No pairs, no evidence (the regularisation alone would say −1e−6).
    assert_eq!(llr_pentanomial(&[0; 5], EloModel::Logistic, 0.0, 5.0), 0.0);
    // With no difference in the data the LLR of symmetric hypotheses is 0.
    assert!(llr_pentanomial(&[5, 1, 8, 1, 5], EloModel::Normalized, -20.0, 20.0).abs() < 1e-12);
}

// ---------------------------------------------------------------------------------------------
// Error rates on simulated streams.

use gbely_engine::experiment::ab::{Hypotheses, Sprt, Verdict};

/// Pentanomial distributions of mean ½ (B no better) with the pair variance given.
fn no_difference(var: f64) -> [f64; 5] {
    if var >= 1.0 / 8.0 {
        // WW and LL with w each, LW/DD with 1 − 2w: variance 2w/4.
        let w = 2.0 * var;
        [w, 0.0, 1.0 - 2.0 * w, 0.0, w]
    } else {
        // LD and DW with r each, LW/DD with 1 − 2r: variance r/8.
        let r = 8.0 * var;
        [0.0, r, 1.0 - 2.0 * r, r, 0.0]
    }
}

/// Runs `runs` tests on streams drawn from `p`: how many end "better", and the mean pairs.
fn simulate(h: Hypotheses, p: &[f64; 5], runs: u64, max_pairs: usize, seed: u64) -> (u64, f64) {
    let mut better = 0;
    let mut pairs = 0;
    for run in 0..runs {
        let mut rng = Rng::new(seed * 1_000_003 + run);
        let mut t = Sprt::new(h, 0.05, 0.05);
        while t.n() < max_pairs && t.verdict() == Verdict::Undecided {
            t.push(SCORES[rng.pick(p)]);
        }
        better += u64::from(t.verdict() == Verdict::Better);
        pairs += t.n();
    }
    (better, pairs as f64 / runs as f64)
}

/// `GBELY_SPRT_RUNS` runs per case (default 300: a few seconds in the test profile).
fn runs() -> u64 {
    std::env::var("GBELY_SPRT_RUNS").ok().and_then(|v| v.parse().ok()).unwrap_or(300)
}

#[test]
fn with_no_difference_better_is_said_at_most_alpha_of_the_time() {
    let runs = runs();
    // α = 5 % plus three standard deviations of a proportion over `runs`.
    let limit = 0.05 + 3.0 * (0.05f64 * 0.95 / runs as f64).sqrt();
    for var in [0.03, 0.125, 0.20, 0.25] {
        let p = no_difference(var);
        let (mean, v) = SCORES.iter().zip(&p).fold((0.0, 0.0), |(m, v), (a, p)| (m + a * p, v + a * a * p));
        assert!((mean - 0.5).abs() < 1e-12 && (v - 0.25 - var).abs() < 1e-12, "{var}");
        for h in [
            Hypotheses::Elo { model: EloModel::Logistic, elo0: 0.0, elo1: 40.0 },
            Hypotheses::Elo { model: EloModel::Logistic, elo0: 0.0, elo1: 100.0 },
            Hypotheses::Elo { model: EloModel::Normalized, elo0: 0.0, elo1: 30.0 },
        ] {
            let (better, pairs) = simulate(h, &p, runs, 5000, 1);
            let rate = better as f64 / runs as f64;
            eprintln!("variance {var}: {h:?}: {better} of {runs} 'better' ({rate:.3}), {pairs:.0} pairs on average");
            assert!(rate <= limit, "variance {var}, {h:?}: {better} of {runs}");
        }
    }
}

#[test]
fn against_an_opponent_better_is_said_at_most_alpha_of_the_time() {
    // Share differences with no true difference: normal (sd 5 points), and skewed (many small
    // gains, a few large losses: 3 − Exp(mean 3)), the case the regularisation is there for.
    let runs = runs();
    let limit = 0.05 + 3.0 * (0.05f64 * 0.95 / runs as f64).sqrt();
    let h = Hypotheses::Share { share0: 0.0, share1: 1.0 };
    for (name, skewed) in [("normal", false), ("skewed", true)] {
        let mut better = 0;
        for run in 0..runs {
            let mut rng = Rng::new(5_000_000 + run);
            let mut t = Sprt::new(h, 0.05, 0.05);
            while t.n() < 5000 && t.verdict() == Verdict::Undecided {
                let (u, v) = (rng.uniform().max(1e-300), rng.uniform());
                let x = if skewed {
                    3.0 + 3.0 * u.ln()
                } else {
                    5.0 * (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
                };
                t.push(x);
            }
            better += u64::from(t.verdict() == Verdict::Better);
        }
        eprintln!("share difference, {name}: {better} of {runs} 'better'");
        assert!(better as f64 / runs as f64 <= limit, "{name}: {better} of {runs}");
    }
}

#[test]
fn a_real_difference_is_found() {
    // 60 Elo, WW/LL pairs, hypotheses 0/40: at least 1 − β (tolerance for 200 runs).
    let s = 1.0 / (1.0 + 10f64.powf(-60.0 / 400.0));
    let p = [(1.0 - s), 0.0, 0.0, 0.0, s];
    let h = Hypotheses::Elo { model: EloModel::Logistic, elo0: 0.0, elo1: 40.0 };
    let (better, _) = simulate(h, &p, 200, 20_000, 2);
    assert!(better >= 185, "{better} of 200");
}

/// The figures of docs/ab.md ("What the test does here"): false "better" with WW/LL pairs and no
/// difference at `--elo1` 50, 100, 200, and how long the default test takes for +5, +20 and +50
/// Elo. About a minute:
/// `cargo test -p gbely-engine --test integration -- --ignored --nocapture figures_of_the_docs`.
#[test]
#[ignore]
fn figures_of_the_docs() {
    let runs = std::env::var("GBELY_SPRT_RUNS").ok().and_then(|v| v.parse().ok()).unwrap_or(4000);
    let ww_ll = |elo: f64| {
        let s = 1.0 / (1.0 + 10f64.powf(-elo / 400.0));
        [1.0 - s, 0.0, 0.0, 0.0, s]
    };
    for elo1 in [50.0, 100.0, 200.0] {
        let h = Hypotheses::Elo { model: EloModel::Logistic, elo0: 0.0, elo1 };
        let (better, pairs) = simulate(h, &ww_ll(0.0), runs, 100_000, 3);
        println!("no difference, WW/LL pairs, --elo1 {elo1}: {better} of {runs} 'better', {pairs:.0} pairs on average");
    }
    let h = Hypotheses::Elo { model: EloModel::Logistic, elo0: 0.0, elo1: 40.0 };
    for elo in [5.0, 20.0, 50.0] {
        for (what, p) in [
            ("WW/LL pairs", ww_ll(elo)),
            ("independent games", {
                let s = 1.0 / (1.0 + 10f64.powf(-elo / 400.0));
                [(1.0 - s) * (1.0 - s), 0.0, 2.0 * s * (1.0 - s), 0.0, s * s]
            }),
        ] {
            let mut lengths = Vec::new();
            let (mut better, mut no) = (0, 0);
            for run in 0..runs / 4 {
                let mut rng = Rng::new(7_000_000 + run);
                let mut t = Sprt::new(h, 0.05, 0.05);
                while t.n() < 2000 && t.verdict() == Verdict::Undecided {
                    t.push(SCORES[rng.pick(&p)]);
                }
                better += u64::from(t.verdict() == Verdict::Better);
                no += u64::from(t.verdict() == Verdict::NoBetter);
                lengths.push(t.n());
            }
            lengths.sort_unstable();
            let n = lengths.len();
            println!(
                "+{elo} Elo, {what}, default test (0/40, at most 2000 pairs): better {:.1} %, no better {:.1} %, \
                 pairs: median {}, 90th percentile {}, mean {:.0}",
                100.0 * better as f64 / n as f64,
                100.0 * no as f64 / n as f64,
                lengths[n / 2],
                lengths[n * 9 / 10],
                lengths.iter().sum::<usize>() as f64 / n as f64
            );
        }
    }
}
