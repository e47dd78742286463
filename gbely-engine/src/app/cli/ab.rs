//! `gbely ab A B`: is B better than A? Paired matches and a sequential test that stops when the
//! evidence is enough (see `app::ab` and docs/ab.md).

use super::*;
use crate::app::ab::{run_ab, AbSetup, Journal};
use crate::app::league::{league_python, Entry, LeagueConfig};
use crate::experiment::ab::{EloModel, Hypotheses, Interval, Sprt, Verdict};

#[derive(Clone, Debug, Args)]
pub(super) struct AbArgs {
    /// The baseline (an agent file, `template`, `expander`, `council` or cmd:COMMAND).
    a: String,
    /// The candidate: is it better than A?
    b: String,
    /// Compare A and B each against this opponent (`council` or an agent) instead of head to
    /// head; `both`: head to head, then each against the Council (two tests, two verdicts).
    #[arg(long, value_name = "AGENT|both")]
    against: Option<String>,
    /// Maps to cycle through (comma-separated); default: a fresh map per pair, the reference map
    /// first, then maps generated from --seed.
    #[arg(long, value_name = "LIST")]
    maps: Option<String>,
    /// Seed of the generated maps.
    #[arg(long, default_value = "ab")]
    seed: String,
    /// Head to head: how Elo is measured. logistic: from the expected game score,
    /// `1 / (1 + 10^(−elo/400))`; normalized: the score's distance from ½ in units of its
    /// standard deviation (see docs/ab.md for the choice).
    #[arg(long, value_enum, default_value_t = Model::Logistic)]
    elo_model: Model,
    /// Head to head: Elo of H0 ("no better") …
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    elo0: f64,
    /// … and of H1 ("better"). 40 logistic Elo (B wins 55.7 % of the games) decides in about 400
    /// pairs when every pair is WW or LL, fewer when pairs split.
    #[arg(long, default_value_t = 40.0, allow_negative_numbers = true)]
    elo1: f64,
    /// Against an opponent: share points of H0 …
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    share0: f64,
    /// … and of H1.
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    share1: f64,
    /// Error rates: a false "better" (α) and a missed one (β).
    #[arg(long, default_value_t = 0.05)]
    alpha: f64,
    #[arg(long, default_value_t = 0.05)]
    beta: f64,
    /// Stop undecided after this many pairs.
    #[arg(long, default_value_t = 2000)]
    max_pairs: usize,
    /// Pairs at once (default: the cores; agent processes take turns on the cores, so none
    /// thinks without one).
    #[arg(long, short = 'j')]
    jobs: Option<usize>,
    /// The journal: a killed run resumes where it stopped.
    #[arg(long, default_value = "gbely-ab/ab.sqlite")]
    db: PathBuf,
    #[command(flatten)]
    game: MatchArgs,
    /// The final: A and B each take the same finalist seat of a final map against the same
    /// field (`--fill`), rotating through the corner and edge seats pair by pair; the outcome is
    /// the share difference, as against a fixed opponent.
    #[arg(long = "final", conflicts_with = "against")]
    final_mode: bool,
    /// With --final: the field in the other seven seats.
    #[arg(long, default_value = "template", requires = "final_mode")]
    fill: String,
    /// With --final: the side of the generated final maps.
    #[arg(long, default_value_t = 90, requires = "final_mode")]
    size: u32,
    /// The result as one JSON document on stdout.
    #[arg(long)]
    json: bool,
    /// No live line.
    #[arg(long, short = 'q')]
    quiet: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Model {
    Logistic,
    Normalized,
}

/// After this many pairs the variance is known well enough to say how long the test will take.
const FORECAST_AFTER: usize = 16;

pub(super) fn cmd_ab(a: AbArgs) -> Result<u8> {
    if a.against.as_deref() != Some("both") {
        let (code, doc) = one_test(&a)?;
        if let Some(doc) = doc {
            emit_json(doc)?;
        }
        return Ok(code);
    }
    // Both questions: head to head, then against the Council, each with its own test.
    let head = AbArgs { against: None, ..a.clone() };
    let council = AbArgs { against: Some("council".into()), ..a.clone() };
    let (code, first) = one_test(&head)?;
    if code == exit::INTERRUPTED {
        return Ok(code);
    }
    let (code, second) = one_test(&council)?;
    if let (Some(h), Some(c)) = (first, second) {
        emit_json(json!({"head_to_head": h, "against_council": c}))?;
    }
    Ok(code)
}

/// One A/B test: its exit code, and with `--json` its document (else the result is printed).
fn one_test(a: &AbArgs) -> Result<(u8, Option<serde_json::Value>)> {
    if !(0.0 < a.alpha && a.alpha < 0.5 && 0.0 < a.beta && a.beta < 0.5) {
        bail!("--alpha and --beta are error rates between 0 and 0.5");
    }
    let mut specs = vec![a.a.clone(), a.b.clone()];
    specs.extend(a.against.clone());
    if a.final_mode {
        specs.push(a.fill.clone());
    }
    for s in &specs {
        check_spec(s)?;
    }
    let py = league_python(&specs, &python(a.game.python.as_deref()))?;
    let entry = |s: &str| Entry::from_spec(s, super::play::named(s, &py));
    let setup = AbSetup {
        a: entry(&a.a)?,
        b: entry(&a.b)?,
        against: a.against.as_deref().map(entry).transpose()?,
        maps: a.maps.as_deref().map_or_else(Vec::new, |m| m.split(',').map(|x| x.trim().to_string()).collect()),
        seed: a.seed.clone(),
        max_pairs: a.max_pairs.max(1),
        final_mode: if a.final_mode { Some((entry(&a.fill)?, a.size)) } else { None },
    };
    let head_to_head = setup.against.is_none() && setup.final_mode.is_none();
    let hypotheses = if head_to_head {
        if a.elo1 <= a.elo0 {
            bail!("--elo1 must be more than --elo0");
        }
        let model = match a.elo_model {
            Model::Logistic => EloModel::Logistic,
            Model::Normalized => EloModel::Normalized,
        };
        Hypotheses::Elo { model, elo0: a.elo0, elo1: a.elo1 }
    } else {
        if a.share1 <= a.share0 {
            bail!("--share1 must be more than --share0");
        }
        Hypotheses::Share { share0: a.share0, share1: a.share1 }
    };
    let mut sprt = Sprt::new(hypotheses, a.alpha, a.beta);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let dir = a.db.parent().filter(|d| !d.as_os_str().is_empty()).map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let config = LeagueConfig {
        rounds: a.game.rounds,
        time_limit: a.game.time_limit,
        memory_limit: a.game.memory_limit,
        sandbox: a.game.sandbox.mode(),
        python: py,
        games: 1,
        // One match per core; agent processes (eight in a final) take turns on the cores, so
        // none thinks without one.
        jobs: a.jobs.unwrap_or(cores).max(1),
        dir: dir.join("runs"),
        backend: crate::app::league::Backend::Local,
        replays: None,
        cores: Some(crate::runner::cores::CoreGate::new(cores)),
    };
    let mut journal = Journal::open(&a.db)?;
    let show = !a.quiet && !a.json;
    let guard = stop_guard()?;
    adopt_orphans();
    let terminal = std::io::stderr().is_terminal();
    let mut forecast_said = false;
    let max_pairs = setup.max_pairs;
    let mut line = |t: &Sprt| {
        if !forecast_said && t.n() >= FORECAST_AFTER {
            forecast_said = true;
            if !a.quiet {
                if let Some(w) = forecast_warning(t, max_pairs) {
                    if terminal {
                        eprintln!();
                    }
                    eprintln!("{w}");
                }
            }
        }
        if show && terminal {
            eprint!("\r{}   ", live(t, head_to_head));
        } else if show {
            eprintln!("{}", live(t, head_to_head));
        }
    };
    let run = run_ab(&setup, &mut sprt, &config, &mut journal, &mut line)?;
    kill_leftovers();
    drop(guard);
    if show && terminal {
        eprintln!();
    }
    let verdict = if run.interrupted && run.verdict == Verdict::Undecided && run.pairs < setup.max_pairs {
        format!("stopped after {} pairs (run again to go on)", run.pairs)
    } else {
        run.verdict.text(run.pairs)
    };
    let estimate = sprt.estimate();
    let mut doc = None;
    if a.json {
        let interrupted = run.interrupted && run.verdict == Verdict::Undecided && run.pairs < setup.max_pairs;
        let pairs: Vec<_> = sprt
            .outcomes
            .iter()
            .enumerate()
            .map(|(k, o)| json!({"k": k, "map": setup.map_of(k), "outcome": o}))
            .collect();
        let est = if head_to_head {
            json!({"elo": estimate.value.value, "low": estimate.value.low, "high": estimate.value.high,
                   "score": estimate.mean_outcome, "los": estimate.los, "logistic": estimate.logistic,
                   "normalized": estimate.normalized, "sweep": estimate.sweep})
        } else {
            json!({"share_points": estimate.value.value, "low": estimate.value.low, "high": estimate.value.high,
                   "mean": estimate.mean_outcome, "los": estimate.los})
        };
        let json = json!({
            "a": setup.a, "b": setup.b, "against": setup.against,
            "verdict": run.verdict, "verdict_text": verdict, "interrupted": interrupted,
            "hypotheses": sprt.hypotheses, "alpha": sprt.alpha, "beta": sprt.beta,
            "llr": sprt.llr(), "bounds": [sprt.lower, sprt.upper],
            "pairs": run.pairs, "max_pairs": setup.max_pairs, "from_journal": run.from_journal,
            "played": run.played,
            "estimate": est, "expected_pairs": sprt.expected_pairs(),
            "pentanomial": head_to_head.then(|| sprt.counts()),
            "outcomes": sprt.outcomes, "pair_maps": pairs, "seconds": run.seconds,
            "isolation": crate::runner::sandbox::isolation(config.sandbox),
        });
        doc = Some(json);
    } else if !a.quiet {
        let mut out = std::io::stdout().lock();
        let vs = match (&setup.against, &setup.final_mode) {
            (_, Some((fill, size))) => {
                format!(
                    "{} (B) and {} (A), each in a {size}×{size} final against {}",
                    setup.b.name, setup.a.name, fill.name
                )
            }
            (None, None) => format!("{} (B) against {} (A), head to head", setup.b.name, setup.a.name),
            (Some(o), None) => format!("{} (B) and {} (A), each against {}", setup.b.name, setup.a.name, o.name),
        };
        writeln!(out, "{vs}: {verdict}")?;
        writeln!(out, "  pairs {}  LLR {:.2} ({:.2}, {:.2})", sprt.n(), sprt.llr(), sprt.lower, sprt.upper)?;
        writeln!(out, "  {}", final_estimate(&sprt, head_to_head))?;
        if head_to_head {
            let p = sprt.counts();
            writeln!(out, "  pairs for B: LL {}  LD {}  LW/DD {}  DW {}  WW {}", p[0], p[1], p[2], p[3], p[4])?;
        }
        writeln!(
            out,
            "  {} pairs ({} from the journal {}) in {:.1} s",
            run.pairs,
            run.from_journal,
            a.db.display(),
            run.seconds
        )?;
        writeln!(out, "  agents: {}", crate::runner::sandbox::isolation(config.sandbox).line())?;
    }
    let code = if run.interrupted && run.verdict == Verdict::Undecided && run.pairs < setup.max_pairs {
        exit::INTERRUPTED
    } else {
        exit::OK
    };
    Ok((code, doc))
}

/// A signed number, or ±∞ for an unbounded end.
fn signed(x: Option<f64>, high: bool, decimals: usize) -> String {
    match x {
        Some(x) if x.is_finite() => format!("{x:+.decimals$}"),
        _ if high => "+inf".into(),
        _ => "-inf".into(),
    }
}

fn unit(t: &Sprt) -> &'static str {
    match t.hypotheses {
        Hypotheses::Elo { model: EloModel::Logistic, .. } => "Elo",
        Hypotheses::Elo { model: EloModel::Normalized, .. } => "nElo",
        Hypotheses::Share { .. } => "share points",
    }
}

/// "pairs 12  B−A +35 Elo [−10, +80]  LLR 1.23 (−2.94, 2.94)": the plain estimate, as pairs come.
fn live(t: &Sprt, head_to_head: bool) -> String {
    let (m, h) = t.naive();
    let c = t.counts();
    let n = t.n() as u32;
    let est = if head_to_head && n > 0 && (c[4] == n || c[0] == n) {
        // No finite estimate yet: the final summary gives the bound.
        format!("all {n} pairs {}", if c[4] == n { "won" } else { "lost" })
    } else if head_to_head {
        let d = t.drift();
        let to = |s: f64| match t.hypotheses {
            Hypotheses::Elo { model: EloModel::Normalized, .. } => {
                Some((s - 0.5) / (2.0 * d.var).sqrt() * crate::experiment::sprt::NELO_PER_NT)
            }
            _ => crate::experiment::ab::score_to_elo(s),
        };
        let i = Interval { value: to(m), low: to(m - h), high: to(m + h) };
        interval_text(&i, unit(t), 0)
    } else {
        interval_text(&Interval { value: Some(m), low: Some(m - h), high: Some(m + h) }, unit(t), 2)
    };
    let est = if est.starts_with("all") { est } else { format!("B−A {est}") };
    format!("pairs {}  {est}  LLR {:.2} ({:.2}, {:.2})", t.n(), t.llr(), t.lower, t.upper)
}

fn interval_text(i: &Interval, unit: &str, decimals: usize) -> String {
    format!(
        "{} {unit} [{}, {}]",
        signed(i.value, i.low.is_some(), decimals),
        signed(i.low, false, decimals),
        signed(i.high, true, decimals)
    )
}

/// "B−A +35 Elo [−10, +80] (corrected for the early stop), LOS 97.2 %", or for a sweep
/// "all 8 pairs won: B−A ≥ +137 Elo (95 %)".
fn final_estimate(t: &Sprt, head_to_head: bool) -> String {
    let e = t.estimate();
    if let Some(s) = e.sweep {
        let (what, rel) = if s.won { ("won", "≥") } else { ("lost", "≤") };
        return format!(
            "all {} pairs {what}: B−A {rel} {:+.0} Elo (95 %), LOS {:.1} %",
            s.pairs,
            s.bound_elo,
            100.0 * e.los
        );
    }
    let decimals = if head_to_head { 0 } else { 2 };
    let mut text = format!(
        "B−A {} (95 %, corrected for the early stop), LOS {:.1} %",
        interval_text(&e.value, unit(t), decimals),
        100.0 * e.los
    );
    if let (Hypotheses::Elo { model: EloModel::Normalized, .. }, Some(l)) = (t.hypotheses, e.logistic) {
        text += &format!("; {} logistic", interval_text(&l, "Elo", 0));
    }
    text
}

/// A warning when, with the variance seen so far, the test is not likely to decide within
/// `--max-pairs`.
fn forecast_warning(t: &Sprt, max_pairs: usize) -> Option<String> {
    let e = t.expected_pairs();
    let typical = e.at_h0.max(e.at_h1);
    (typical > max_pairs as f64 || e.between > 2.0 * max_pairs as f64).then(|| {
        format!(
            "warning: from the first {} pairs, a verdict should take about {:.0} pairs if B is no better, \
             {:.0} if it is better by the hypothesis, up to {:.0} in between; --max-pairs is {max_pairs}. \
             Widen the hypotheses (--elo1, --share1) or raise --max-pairs.",
            t.n(),
            e.at_h0,
            e.at_h1,
            e.between
        )
    })
}
