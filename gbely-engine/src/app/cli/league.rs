//! `gbely league`: every agent against every other, on every map, on all cores.

use super::*;
use crate::app::league::MatchRow;
use crate::app::requests::{defaults, run_league, LeagueRequest};
use crate::tournament::{Gauntlet, GauntletLine, Standings};

#[derive(Debug, Args)]
pub(super) struct LeagueArgs {
    /// The entries: agent files, `template`, `expander`, `council` (or its levels `council:easy`,
    /// `council:strong`), the Rust twins `template-rs`, `expander-rs`, or cmd:COMMAND.
    #[arg(required = true)]
    agents: Vec<AgentSpec>,
    /// Add the Council as an entry (every agent also plays it).
    #[arg(long)]
    council: bool,
    /// A gauntlet: the first agent (the candidate) against each of the others (the field) on
    /// every map in both seats, the field not among itself; the candidate's Elo against the
    /// field, each opponent and each map.
    #[arg(long)]
    gauntlet: bool,
    /// Maps: a comma-separated list (`gbely,seed:abc,my.map`) or a number N of generated maps
    /// drawn from --seed.
    #[arg(long, default_value = defaults::LEAGUE_MAPS, value_name = "LIST|N")]
    maps: String,
    /// The league seed, for generated maps (`--maps N`).
    #[arg(long, default_value = defaults::LEAGUE_SEED)]
    seed: String,
    /// Games per pairing and map (each in both seat orders); more than 1 only helps agents that
    /// are not deterministic.
    #[arg(long, default_value_t = defaults::LEAGUE_GAMES, value_parser = clap::value_parser!(u32).range(1..=1000))]
    games: u32,
    /// Matches at once (default: the cores; agent processes take turns on the cores, so none
    /// thinks without one; with --ray, as many as the cluster has CPUs).
    #[arg(long, short = 'j')]
    jobs: Option<usize>,
    /// Agent processes that may think at once, across all matches (default: the cores). More
    /// than the cores keeps the cores busier when agents answer in milliseconds, but agents then
    /// share a CPU while their clock runs (the summary says so): keep the default for
    /// timing-sensitive leagues.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=4096))]
    thinking: Option<u32>,
    /// Play the matches on a Ray cluster, each match a Ray task: ADDRESS as Ray takes it (`auto`,
    /// `HOST:PORT`, `ray://HOST:PORT`), or `local` for a Ray instance of its own. The head and
    /// every worker need `pip install gbely ray` (for --python); agent files and maps travel with
    /// each match. Results are identical to a local league's (docs/league.md).
    #[arg(long, value_name = "ADDRESS")]
    ray: Option<String>,
    /// The results database: a league resumes where it stopped, and new entries play only their
    /// new pairings.
    #[arg(long, default_value = defaults::LEAGUE_DB)]
    db: PathBuf,
    #[command(flatten)]
    game: MatchArgs,
    /// Record every match's replay and viewer page (in `replays/` next to the database; about
    /// 1 MB a match), linked from the report. Not with --ray.
    #[arg(long)]
    replays: bool,
    /// The HTML report (standings, pair matrix, matches); default next to the database.
    #[arg(long)]
    report: Option<PathBuf>,
    /// Also write every match as CSV.
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,
    /// Print the standings as one JSON document on stdout.
    #[arg(long)]
    json: bool,
    /// No progress and no table.
    #[arg(long, short = 'q')]
    quiet: bool,
}

impl LeagueArgs {
    /// The league these flags ask for.
    fn request(&self) -> LeagueRequest {
        LeagueRequest {
            agents: self.agents.clone(),
            council: self.council,
            gauntlet: self.gauntlet,
            maps: self.maps.clone(),
            seed: self.seed.clone(),
            games: self.games,
            jobs: self.jobs,
            thinking: self.thinking,
            ray: self.ray.clone(),
            db: self.db.clone(),
            settings: self.game.settings(),
            replays: self.replays,
            report: self.report.clone(),
            csv: self.csv.clone(),
        }
    }
}

pub(super) fn cmd_league(a: LeagueArgs) -> Result<u8> {
    let req = a.request();
    let show = !a.quiet && !a.json;
    let bar = if show && std::io::stderr().is_terminal() {
        let bar = indicatif::ProgressBar::new(0);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{spinner} {pos}/{len} matches [{bar:30}] {msg} (ETA {eta})")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        Some(bar)
    } else {
        None
    };
    let guard = stop_guard()?;
    adopt_orphans();
    let mut progress = |done: usize, total: usize, row: &MatchRow| {
        if let Some(bar) = &bar {
            bar.set_length(total as u64);
            bar.set_position(done as u64);
            bar.set_message(format!(
                "{} vs {}: {} : {}",
                short(&row.seat0),
                short(&row.seat1),
                row.cells[0],
                row.cells[1]
            ));
        } else if show {
            eprintln!(
                "[{done}/{total}] {} vs {} on {}: {} : {} cells",
                short(&row.seat0),
                short(&row.seat1),
                row.map,
                row.cells[0],
                row.cells[1]
            );
        }
    };
    let played = run_league(&req, &mut progress);
    kill_leftovers();
    drop(guard);
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    let league = played?;
    if a.json {
        emit_json(league.to_json())?;
    } else if !a.quiet {
        print_standings(&league.title, &league.table, &league.run, &league.report, &a.db)?;
        println!("  agents: {}", crate::runner::sandbox::isolation(league.sandbox).line());
    }
    Ok(if league.run.interrupted { exit::INTERRUPTED } else { exit::OK })
}

/// `expander.py@3f2a9c01` → `expander.py`.
fn short(id: &str) -> &str {
    id.rsplit_once('@').map_or(id, |(name, _)| name)
}

fn print_standings(
    title: &str,
    t: &Standings,
    run: &crate::app::league::LeagueRun,
    report: &Path,
    db: &Path,
) -> Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{title}")?;
    writeln!(
        out,
        "  {} matches: {} played now, {} from earlier runs{}; {}, {:.1} s",
        run.total,
        run.played,
        run.already_played,
        if run.interrupted { " (INTERRUPTED: run again to finish)" } else { "" },
        match (run.backend.as_str(), run.jobs) {
            ("local", n) => format!("{n} at once"),
            (ray, 0) => format!("on {ray}, as many at once as it has CPUs"),
            (ray, n) => format!("on {ray}, {n} at once"),
        },
        run.seconds
    )?;
    if let Some(g) = &t.gauntlet {
        print_gauntlet(&mut out, g)?;
    }
    // Names from the results database are shown escaped, whoever wrote them there.
    use crate::text::printable;
    let width = t.standings.iter().map(|s| printable(&s.name).chars().count()).max().unwrap_or(5).max(5);
    writeln!(
        out,
        "  {:>4}  {:<width$}  {:>6}  {:>3} {:>3} {:>3}  {:>10}  {:>17}  {:>9}  violations",
        "rank", "agent", "played", "W", "D", "L", "mean share", "Elo [95 %]", "LOS next"
    )?;
    for (k, s) in t.standings.iter().enumerate() {
        // The confidence that this entry is stronger than the next one down.
        let next = t.los[k].get(k + 1).map_or(String::new(), |p| format!("{:.1} %", 100.0 * p));
        writeln!(
            out,
            "  {:>4}  {:<width$}  {:>6}  {:>3} {:>3} {:>3}  {:>8.2} %  {:>17}  {:>9}  {}{}",
            s.rank,
            printable(&s.name),
            s.played,
            s.wins,
            s.draws,
            s.losses,
            s.mean_share,
            format!(
                "{:+.0} [{:+.0}, {:+.0}]",
                s.rating,
                s.rating - 1.96 * s.uncertainty,
                s.rating + 1.96 * s.uncertainty
            ),
            next,
            s.violations,
            if s.disqualified > 0 { format!(" ({} disqualified)", s.disqualified) } else { String::new() }
        )?;
    }
    if t.per_map.len() > 1 {
        for m in &t.per_map {
            let line: Vec<String> = m
                .standings
                .iter()
                .map(|s| format!("{} {}-{}-{} {}", printable(&s.name), s.wins, s.draws, s.losses, elo(s.rating)))
                .collect();
            writeln!(out, "  on {}: {}", m.map, line.join(", "))?;
        }
    }
    for n in &run.notes {
        writeln!(out, "  note: {n}")?;
    }
    writeln!(out, "  report: {}   results: {}", report.display(), db.display())?;
    Ok(())
}

/// "+57 [+12, +103]", or "all won [≥ +180]" after a clean sweep.
fn gauntlet_elo(l: &GauntletLine) -> String {
    let end = |x: Option<f64>, high: bool| x.map_or(if high { "+inf".into() } else { "-inf".into() }, elo);
    match l.elo {
        Some(e) => format!("{} [{}, {}]", elo(e), end(l.low, false), end(l.high, true)),
        None if l.played == 0 => "no games".into(),
        None if l.wins == l.played => format!("all won [{}, +inf]", end(l.low, false)),
        None => format!("all lost [-inf, {}]", end(l.high, true)),
    }
}

fn print_gauntlet(out: &mut impl Write, g: &Gauntlet) -> Result<()> {
    let f = &g.field;
    writeln!(
        out,
        "  {} against the field: {} Elo (95 %), {}-{}-{}, score {:.1} %",
        crate::text::printable(&g.candidate),
        gauntlet_elo(f),
        f.wins,
        f.draws,
        f.losses,
        100.0 * f.score
    )?;
    for (what, lines) in [("against", &g.per_opponent), ("on", &g.per_map)] {
        for l in lines {
            writeln!(
                out,
                "    {what} {}: {} Elo, {}-{}-{}, score {:.1} %",
                crate::text::printable(&l.against),
                gauntlet_elo(l),
                l.wins,
                l.draws,
                l.losses,
                100.0 * l.score
            )?;
        }
    }
    Ok(())
}

/// An Elo difference, signed, rounded; never "-0".
fn elo(x: f64) -> String {
    let r = x.round();
    if r == 0.0 {
        "+0".into()
    } else {
        format!("{r:+.0}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `gbely league A B` with no other flag asks for what `LeagueRequest::new` holds: the
    /// defaults are declared once (`requests::defaults`), and the flags read them.
    #[test]
    fn the_flags_defaults_are_the_requests() {
        let cli = Cli::try_parse_from(["gbely", "league", "a.py", "b.py"]).unwrap();
        let Cmd::League(args) = cli.command else { panic!("not league") };
        assert_eq!(
            args.request(),
            LeagueRequest::new(vec![AgentSpec::File("a.py".into()), AgentSpec::File("b.py".into())])
        );
    }
}
