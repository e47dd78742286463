//! `gbely ab A B`: is B better than A? Paired matches and a sequential test that stops when the
//! evidence is enough (see `app::ab` and docs/ab.md).

use super::*;
use crate::app::requests::{defaults, estimate_text, run_ab, AbForks, AbRequest, Against};
use crate::tournament::ab::{EloModel, Sprt};

#[derive(Clone, Debug, Args)]
pub(super) struct AbArgs {
    /// The baseline (an agent file, `template`, `expander`, `council` or cmd:COMMAND).
    a: AgentSpec,
    /// The candidate: is it better than A?
    b: AgentSpec,
    /// Compare A and B each against this opponent (`council` or an agent) instead of head to
    /// head; `both`: head to head, then each against the Council (two tests, two verdicts).
    #[arg(long, value_name = "AGENT|both")]
    against: Option<Against>,
    /// Maps to cycle through (comma-separated); default: a fresh map per pair, the reference map
    /// first, then maps generated from --seed.
    #[arg(long, value_name = "LIST")]
    maps: Option<String>,
    /// Seed of the generated maps.
    #[arg(long, default_value = defaults::AB_SEED)]
    seed: String,
    /// Head to head: how Elo is measured. logistic: from the expected game score,
    /// `1 / (1 + 10^(−elo/400))`; normalized: the score's distance from ½ in units of its
    /// standard deviation (see docs/ab.md for the choice).
    #[arg(long, value_enum, default_value_t = Model::Logistic)]
    elo_model: Model,
    /// Head to head: Elo of H0 ("no better") …
    #[arg(long, default_value_t = defaults::AB_ELO0, allow_negative_numbers = true)]
    elo0: f64,
    /// … and of H1 ("better"). 40 logistic Elo (B wins 55.7 % of the games) decides in about 400
    /// pairs when every pair is WW or LL, fewer when pairs split.
    #[arg(long, default_value_t = defaults::AB_ELO1, allow_negative_numbers = true)]
    elo1: f64,
    /// Against an opponent: share points of H0 …
    #[arg(long, default_value_t = defaults::AB_SHARE0, allow_negative_numbers = true)]
    share0: f64,
    /// … and of H1.
    #[arg(long, default_value_t = defaults::AB_SHARE1, allow_negative_numbers = true)]
    share1: f64,
    /// Error rates: a false "better" (α) and a missed one (β).
    #[arg(long, default_value_t = defaults::AB_ALPHA)]
    alpha: f64,
    #[arg(long, default_value_t = defaults::AB_BETA)]
    beta: f64,
    /// Stop undecided after this many pairs.
    #[arg(long, default_value_t = defaults::AB_MAX_PAIRS)]
    max_pairs: usize,
    /// Pairs at once (default: the cores; agent processes take turns on the cores, so none
    /// thinks without one).
    #[arg(long, short = 'j')]
    jobs: Option<usize>,
    /// The journal: a killed run resumes where it stopped.
    #[arg(long, default_value = defaults::AB_DB)]
    db: PathBuf,
    #[command(flatten)]
    game: MatchArgs,
    /// The final: A and B each take the same finalist seat of a final map against the same
    /// field (`--fill`), rotating through the corner and edge seats pair by pair; the outcome is
    /// the share difference, as against a fixed opponent.
    #[arg(long = "final", conflicts_with = "against")]
    final_mode: bool,
    /// With --final: the field in the other seven seats.
    #[arg(long, default_value = defaults::AB_FINAL_FILL, requires = "final_mode")]
    fill: AgentSpec,
    /// With --final: the side of the generated final maps.
    #[arg(long, default_value_t = defaults::AB_FINAL_SIZE, requires = "final_mode")]
    size: u32,
    /// Paired forks: pair k is A, then B, taking over at the k-th fork point — every replay
    /// (*.json, *.json.gz) of DIR, by file name, at each round of --at — the other seats kept by
    /// the replay's own agents (the Council); the outcome is B's share minus A's.
    #[arg(long, value_name = "DIR", requires = "at", conflicts_with_all = ["against", "final_mode", "maps"])]
    from_replays: Option<PathBuf>,
    /// With --from-replays: the rounds to fork at (comma-separated); a round a replay did not
    /// reach is skipped with a note.
    #[arg(long, value_name = "ROUNDS", value_delimiter = ',', requires = "from_replays")]
    at: Vec<u32>,
    /// With --from-replays: the seat A and B take (default: each replay's first army seat).
    #[arg(long, value_name = "N", requires = "from_replays")]
    seat: Option<usize>,
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

impl AbArgs {
    /// The test these flags ask for.
    fn request(&self) -> AbRequest {
        AbRequest {
            a: self.a.clone(),
            b: self.b.clone(),
            against: self.against.clone(),
            maps: self.maps.as_deref().map_or_else(Vec::new, |m| m.split(',').map(|x| x.trim().to_string()).collect()),
            seed: self.seed.clone(),
            elo_model: match self.elo_model {
                Model::Logistic => EloModel::Logistic,
                Model::Normalized => EloModel::Normalized,
            },
            elo0: self.elo0,
            elo1: self.elo1,
            share0: self.share0,
            share1: self.share1,
            alpha: self.alpha,
            beta: self.beta,
            max_pairs: self.max_pairs,
            jobs: self.jobs,
            db: self.db.clone(),
            settings: self.game.settings(),
            final_mode: self.final_mode.then(|| (self.fill.clone(), self.size)),
            forks: self.from_replays.as_ref().map(|dir| AbForks {
                dir: dir.clone(),
                rounds: self.at.clone(),
                seat: self.seat,
            }),
        }
    }
}

pub(super) fn cmd_ab(a: AbArgs) -> Result<u8> {
    // `--against both`: head to head, then against the Council, each with its own test.
    let mut docs = Vec::new();
    let mut code = exit::OK;
    for test in a.request().tests() {
        let (c, doc) = one_test(&test, &a)?;
        code = c;
        if code == exit::INTERRUPTED {
            return Ok(code);
        }
        docs.extend(doc);
    }
    match <[serde_json::Value; 2]>::try_from(docs) {
        Ok([h, c]) => emit_json(json!({"head_to_head": h, "against_council": c}))?,
        Err(docs) => {
            for doc in docs {
                emit_json(doc)?;
            }
        }
    }
    Ok(code)
}

/// One A/B test: its exit code, and with `--json` its document (else the result is printed).
fn one_test(req: &AbRequest, a: &AbArgs) -> Result<(u8, Option<serde_json::Value>)> {
    let head_to_head = req.head_to_head();
    let show = !a.quiet && !a.json;
    let guard = stop_guard()?;
    adopt_orphans();
    let terminal = std::io::stderr().is_terminal();
    let mut forecast_said = false;
    let max_pairs = req.max_pairs.max(1);
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
    let ran = run_ab(req, &mut line);
    kill_leftovers();
    drop(guard);
    let test = ran?;
    if show && terminal {
        eprintln!();
    }
    let (setup, sprt, run) = (&test.setup, &test.sprt, &test.run);
    let mut doc = None;
    if a.json {
        doc = Some(test.to_json());
    } else if !a.quiet {
        let mut out = std::io::stdout().lock();
        let vs = match (&setup.against, &setup.final_mode) {
            _ if setup.forks.is_some() => {
                format!("{} (B) and {} (A), each from the same fork points", setup.b.name, setup.a.name)
            }
            (_, Some((fill, size))) => {
                format!(
                    "{} (B) and {} (A), each in a {size}×{size} final against {}",
                    setup.b.name, setup.a.name, fill.name
                )
            }
            (None, None) => format!("{} (B) against {} (A), head to head", setup.b.name, setup.a.name),
            (Some(o), None) => format!("{} (B) and {} (A), each against {}", setup.b.name, setup.a.name, o.name),
        };
        writeln!(out, "{vs}: {}", test.verdict_text())?;
        writeln!(out, "  pairs {}  LLR {:.2} ({:.2}, {:.2})", sprt.n(), sprt.llr(), sprt.lower, sprt.upper)?;
        writeln!(out, "  {}", final_estimate(sprt, head_to_head))?;
        if let Some(forks) = test.forks_text() {
            writeln!(out, "  {forks}")?;
        }
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
        writeln!(out, "  agents: {}", crate::runner::sandbox::isolation(test.sandbox).line())?;
    }
    Ok((if test.interrupted() { exit::INTERRUPTED } else { exit::OK }, doc))
}

/// "pairs 12  B−A +35 Elo [−10, +80]  LOS 97.2 %  LLR 1.23 (−2.94, 2.94)": the estimate as pairs
/// come, the same as the summary's for the same pairs ([`estimate_text`]).
fn live(t: &Sprt, head_to_head: bool) -> String {
    format!(
        "pairs {}  {}  LOS {:.1} %  LLR {:.2} ({:.2}, {:.2})",
        t.n(),
        estimate_text(t, head_to_head),
        100.0 * t.estimate().los,
        t.llr(),
        t.lower,
        t.upper
    )
}

/// "B−A +35 Elo [−10, +80] (95 %, corrected for the early stop), LOS 97.2 %", or for a sweep
/// "all 8 pairs won: B−A ≥ +137 Elo (95 %), LOS 99.9 %".
fn final_estimate(t: &Sprt, head_to_head: bool) -> String {
    let e = t.estimate();
    let corrected = if e.sweep.is_some() { "" } else { " (95 %, corrected for the early stop)" };
    format!("{}{corrected}, LOS {:.1} %", estimate_text(t, head_to_head), 100.0 * e.los)
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

#[cfg(test)]
mod tests {
    use super::*;

    use crate::tournament::ab::Hypotheses;

    /// `gbely ab A B` with no other flag asks for what `AbRequest::new` holds: the defaults are
    /// declared once (`requests::defaults`), and the flags read them.
    #[test]
    fn the_flags_defaults_are_the_requests() {
        let cli = Cli::try_parse_from(["gbely", "ab", "a.py", "b.py"]).unwrap();
        let Cmd::Ab(args) = cli.command else { panic!("not ab") };
        assert_eq!(args.request(), AbRequest::new(AgentSpec::File("a.py".into()), AgentSpec::File("b.py".into())));
        let cli = Cli::try_parse_from(["gbely", "ab", "a.py", "b.py", "--final"]).unwrap();
        let Cmd::Ab(args) = cli.command else { panic!("not ab") };
        let (fill, size) = args.request().final_mode.expect("a final");
        assert_eq!((fill.to_string().as_str(), size), (defaults::AB_FINAL_FILL, defaults::AB_FINAL_SIZE));
    }

    fn logistic(outcomes: &[f64]) -> Sprt {
        let mut t = Sprt::new(Hypotheses::Elo { model: EloModel::Logistic, elo0: 0.0, elo1: 5.0 }, 0.05, 0.05);
        for &o in outcomes {
            t.push(o);
        }
        t
    }

    /// The progress line's estimate, between "pairs N  " and "  LOS".
    fn progress_estimate(t: &Sprt) -> String {
        let line = live(t, true);
        let rest = line.split_once("  ").unwrap().1;
        rest.split_once("  LOS").unwrap().0.to_string()
    }

    #[test]
    fn progress_and_summary_agree_on_three_drawn_pairs() {
        // `gbely ab --max-pairs 3` printed "+0 Elo [-11, +11]" as progress and "+6 Elo [-27, +43]"
        // as the summary for three pairs each split 1–1: two estimators for the same pairs.
        let t = logistic(&[0.5, 0.5, 0.5]);
        // A pair split 1–1 scores ½ for B: LW/DD, the middle of the pentanomial (LL … WW).
        assert_eq!(t.counts(), [0, 0, 3, 0, 0]);
        // The regularised counts are symmetric about ½ (a pseudo-count of 0.001 at each end), so
        // the mean pair score is ½ (to the rounding of the frequencies' sum).
        assert!((t.estimate().mean_outcome - 0.5).abs() < 1e-12);
        let shown = progress_estimate(&t);
        let summary = final_estimate(&t, true);
        assert!(
            summary.starts_with(&format!("{shown} (95 %, corrected for the early stop), LOS ")),
            "{shown} | {summary}"
        );
        let los = format!("LOS {:.1} %", 100.0 * t.estimate().los);
        assert!(live(&t, true).contains(&los) && summary.ends_with(&los), "{summary}");
    }

    #[test]
    fn progress_and_summary_agree_on_mixed_pairs() {
        // WW, DW, LW/DD, LD, WW: one pair in each class but LL, two WW.
        let t = logistic(&[1.0, 0.75, 0.5, 0.25, 1.0]);
        assert_eq!(t.counts(), [0, 1, 1, 1, 2]);
        // (0.75 + 0.5 + 0.25 + 2 · 1) / (5 + 0.001): the LL pseudo-count adds weight, no score.
        assert!((t.estimate().mean_outcome - 3.5 / 5.001).abs() < 1e-12);
        let shown = progress_estimate(&t);
        assert!(shown.starts_with("B−A +") && shown.ends_with(']'), "{shown}");
        assert!(final_estimate(&t, true).starts_with(&shown));
    }

    #[test]
    fn a_sweep_shows_its_bound_as_it_goes() {
        let t = logistic(&[1.0, 1.0, 1.0]);
        assert_eq!(t.counts(), [0, 0, 0, 0, 3]);
        // B's score is at least 0.05^(1/3) = 0.368403: −400 log10(1/0.368403 − 1) = −93.65 Elo.
        let shown = progress_estimate(&t);
        assert_eq!(shown, "all 3 pairs won: B−A ≥ -94 Elo (95 %)");
        assert!(final_estimate(&t, true).starts_with(&format!("{shown}, LOS ")));
    }
}
