//! `gbely ab A B`: is B better than A? Paired matches and a sequential test that stops when the
//! evidence is enough (see `app::ab` and docs/ab.md).

use super::*;
use crate::app::ab::{pentanomial, run_ab, AbSetup, Journal, Sprt, Verdict};
use crate::app::league::{league_python, Entry, LeagueConfig};

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
    /// Head to head: Elo of H0 ("no better") …
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    elo0: f64,
    /// … and of H1 ("better").
    #[arg(long, default_value_t = 5.0, allow_negative_numbers = true)]
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
    let mut sprt = if head_to_head {
        if a.elo1 <= a.elo0 {
            bail!("--elo1 must be more than --elo0");
        }
        Sprt::elo(a.elo0, a.elo1, a.alpha, a.beta)
    } else {
        if a.share1 <= a.share0 {
            bail!("--share1 must be more than --share0");
        }
        // A share difference of a few points between two agents: a prior standard deviation of 5.
        Sprt::new(a.share0, a.share1, a.alpha, a.beta, 25.0)
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let dir = a.db.parent().filter(|d| !d.as_os_str().is_empty()).map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let config = LeagueConfig {
        rounds: a.game.rounds,
        time_limit: a.game.time_limit.duration(),
        memory_limit: a.game.memory_limit.0,
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
    let journal = Journal::open(&a.db)?;
    let show = !a.quiet && !a.json;
    let guard = crate::runner::interrupt::Guard::install().context("cannot install the Ctrl-C handler")?;
    adopt_orphans();
    let terminal = std::io::stderr().is_terminal();
    let mut line = |t: &Sprt| {
        if show && terminal {
            eprint!("\r{}   ", live(t, head_to_head));
        } else if show {
            eprintln!("{}", live(t, head_to_head));
        }
    };
    let run = run_ab(&setup, &mut sprt, &config, &journal, &mut line)?;
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
    let (mean, half) = sprt.estimate();
    let mut doc = None;
    if a.json {
        let estimate = if head_to_head {
            let (e, lo, hi) = sprt.elo_estimate();
            json!({"elo": e, "low": lo, "high": hi, "score": mean})
        } else {
            json!({"share_points": mean, "low": mean - half, "high": mean + half})
        };
        let json = json!({
            "a": setup.a, "b": setup.b, "against": setup.against,
            "verdict": run.verdict, "verdict_text": verdict, "pairs": run.pairs,
            "from_journal": run.from_journal, "llr": sprt.llr(), "bounds": [sprt.lower, sprt.upper],
            "estimate": estimate, "pentanomial": head_to_head.then(|| pentanomial(&sprt.outcomes)),
            "outcomes": sprt.outcomes, "seconds": run.seconds,
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
        writeln!(out, "  {}", live(&sprt, head_to_head))?;
        if head_to_head {
            let p = pentanomial(&sprt.outcomes);
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
    }
    let code = if run.interrupted && run.verdict == Verdict::Undecided && run.pairs < setup.max_pairs {
        exit::INTERRUPTED
    } else {
        exit::OK
    };
    Ok((code, doc))
}

/// "pairs 12  B−A +35 Elo [−10, +80]  LLR 1.23 (−2.94, 2.94)".
fn live(t: &Sprt, head_to_head: bool) -> String {
    let est = if head_to_head {
        let (e, lo, hi) = t.elo_estimate();
        // A score of 0 or 1 is an unbounded Elo difference.
        let elo = |x: f64| {
            if x.abs() >= 1000.0 {
                if x > 0.0 {
                    "+inf".to_string()
                } else {
                    "-inf".to_string()
                }
            } else {
                format!("{x:+.0}")
            }
        };
        format!("B−A {} Elo [{}, {}]", elo(e), elo(lo), elo(hi))
    } else {
        let (m, h) = t.estimate();
        format!("B−A {m:+.2} share points [{:+.2}, {:+.2}]", m - h, m + h)
    };
    format!("pairs {}  {est}  LLR {:.2} ({:.2}, {:.2})", t.n(), t.llr(), t.lower, t.upper)
}
