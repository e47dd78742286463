//! `gbely league`: every agent against every other, on every map, on all cores.

use super::*;
use crate::app::league::db::LeagueDb;
use crate::app::league::play::replay_stem;
use crate::app::league::report::html_report;
use crate::app::league::schedule::{league_maps, Schedule};
use crate::app::league::standings::{gauntlet, standings, Gauntlet, GauntletLine, Standings};
use crate::app::league::{league_python, run_schedule, Backend, Entry, LeagueConfig, MatchRow};

#[derive(Debug, Args)]
pub(super) struct LeagueArgs {
    /// The entries: agent files, `template`, `expander`, `council` (or its levels `council:easy`,
    /// `council:strong`), the Rust twins `template-rs`, `expander-rs`, or cmd:COMMAND.
    #[arg(required = true)]
    agents: Vec<String>,
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
    #[arg(long, default_value = "gbely", value_name = "LIST|N")]
    maps: String,
    /// The league seed, for generated maps (`--maps N`).
    #[arg(long, default_value = "league")]
    seed: String,
    /// Games per pairing and map (each in both seat orders); more than 1 only helps agents that
    /// are not deterministic.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1000))]
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
    #[arg(long, default_value = "gbely-league/league.sqlite")]
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

pub(super) fn cmd_league(a: LeagueArgs) -> Result<u8> {
    let mut specs = a.agents.clone();
    if a.council && !specs.iter().any(|s| s == "council") {
        specs.push("council".into());
    }
    for s in &specs {
        check_spec(s)?;
    }
    if a.replays && a.ray.is_some() {
        bail!("--replays records on this machine; it does not go with --ray");
    }
    if a.thinking.is_some() && a.ray.is_some() {
        bail!("--thinking shares this machine's cores; on Ray each match asks the cluster for a CPU per agent");
    }
    let py = match &a.ray {
        // The Ray driver is Python, whatever the entries are.
        Some(_) => crate::app::runs::interpreter::resolve_python(&python(a.game.python.as_deref()))?,
        None => league_python(&specs, &python(a.game.python.as_deref()))?,
    };
    // Each file is read once for its name (and a GAME_VERSION for other rules warns).
    let entries: Vec<Entry> =
        specs.iter().map(|s| Entry::from_spec(s, super::play::named(s, &py))).collect::<Result<_, _>>()?;
    let maps = league_maps(&a.maps, &a.seed)?;
    if let Some(m) = maps.iter().find(|m| m.map.seats().len() != 2) {
        bail!("map `{}` has {} seats; a league plays duels", m.spec, m.map.seats().len());
    }
    let python = py.clone();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let jobs = match &a.ray {
        Some(_) => a.jobs.unwrap_or(0),
        // One match per core: agent processes wait for a core of the gate, not on their clock.
        None => a.jobs.unwrap_or(cores).max(1),
    };
    let dir = a.db.parent().filter(|d| !d.as_os_str().is_empty()).map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let db = LeagueDb::open(&a.db)?;
    let config = LeagueConfig {
        rounds: a.game.rounds,
        time_limit: a.game.time_limit,
        memory_limit: a.game.memory_limit,
        sandbox: a.game.sandbox.mode(),
        python,
        games: a.games,
        jobs,
        dir: dir.join("runs"),
        backend: match &a.ray {
            Some(address) => Backend::Ray { address: address.clone() },
            None => Backend::Local,
        },
        replays: a.replays.then(|| dir.join("replays")),
        // Agents hold a core while they think, so matches may outnumber cores.
        cores: a.ray.is_none().then(|| crate::runner::cores::CoreGate::new(a.thinking.map_or(cores, |n| n as usize))),
    };
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
    let schedule = if a.gauntlet { Schedule::Gauntlet } else { Schedule::RoundRobin };
    let (run, keys) = run_schedule(&db, &entries, &maps, &config, schedule, &mut progress)?;
    kill_leftovers();
    drop(guard);
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    let rows = db.rows(&keys)?;
    let mut table = standings(&entries, &rows);
    table.gauntlet = a.gauntlet.then(|| gauntlet(&entries, &rows));
    let report = a.report.clone().unwrap_or_else(|| dir.join("report.html"));
    let title = if a.gauntlet {
        format!(
            "gbely league --gauntlet: {} against a field of {} on {} map(s)",
            entries[0].name,
            entries.len() - 1,
            maps.len()
        )
    } else {
        format!("gbely league: {} entries on {} map(s)", entries.len(), maps.len())
    };
    // Links to the viewer pages that exist (matches played with --replays, now or before),
    // relative to the report when they are under its folder.
    let replays = dir.join("replays");
    let base =
        report.parent().filter(|d| !d.as_os_str().is_empty()).map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let viewer = |row: &MatchRow| -> Option<String> {
        let page = replays.join(replay_stem(&row.key)).with_extension("html");
        page.is_file().then(|| relative_link(&base, &page))
    };
    std::fs::write(&report, html_report(&title, &table, &rows, &viewer))
        .with_context(|| format!("cannot write the report {}", report.display()))?;
    if let Some(csv) = &a.csv {
        write_csv(csv, &rows).with_context(|| format!("cannot write {}", csv.display()))?;
        if let Some(g) = &table.gauntlet {
            let path = csv.with_extension("gauntlet.csv");
            write_gauntlet_csv(&path, g).with_context(|| format!("cannot write {}", path.display()))?;
        }
    }
    if a.json {
        let doc = json!({
            "entries": entries,
            "maps": maps.iter().map(|m| json!({"spec": m.spec, "fingerprint": m.map.fingerprint()})).collect::<Vec<_>>(),
            "run": run,
            "standings": table.standings,
            "matrix": table.matrix,
            "los": table.los,
            "per_map": table.per_map,
            "gauntlet": table.gauntlet,
            "matches": rows,
            "db": a.db.display().to_string(),
            "report": report.display().to_string(),
            "isolation": crate::runner::sandbox::isolation(config.sandbox),
        });
        emit_json(doc)?;
    } else if !a.quiet {
        print_standings(&title, &table, &run, &report, &a.db)?;
        println!("  agents: {}", crate::runner::sandbox::isolation(config.sandbox).line());
    }
    Ok(if run.interrupted { exit::INTERRUPTED } else { exit::OK })
}

/// `page` as a link from a file in `base`: relative when it lies under `base`, else absolute.
fn relative_link(base: &Path, page: &Path) -> String {
    let abs = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let page = abs(page);
    match page.strip_prefix(abs(base)) {
        Ok(rel) => rel.to_string_lossy().replace('\\', "/"),
        Err(_) => format!("file://{}", page.display()),
    }
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
    let width = t.standings.iter().map(|s| s.name.chars().count()).max().unwrap_or(5).max(5);
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
            s.name,
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
                .map(|s| format!("{} {}-{}-{} {}", s.name, s.wins, s.draws, s.losses, elo(s.rating)))
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
        g.candidate,
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
                l.against,
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

fn write_gauntlet_csv(path: &Path, g: &Gauntlet) -> std::io::Result<()> {
    let mut s = String::from("kind,against,played,wins,draws,losses,score,elo,low,high\n");
    let opt = |x: Option<f64>| x.map_or(String::new(), |v| format!("{v:.1}"));
    let q = |t: &str| format!("\"{}\"", t.replace('"', "\"\""));
    let rows = std::iter::once(("field", &g.field))
        .chain(g.per_opponent.iter().map(|l| ("opponent", l)))
        .chain(g.per_map.iter().map(|l| ("map", l)));
    for (kind, l) in rows {
        s.push_str(&format!(
            "{kind},{},{},{},{},{},{:.6},{},{},{}\n",
            q(&l.against),
            l.played,
            l.wins,
            l.draws,
            l.losses,
            l.score,
            opt(l.elo),
            opt(l.low),
            opt(l.high)
        ));
    }
    std::fs::write(path, s)
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

fn write_csv(path: &Path, rows: &[MatchRow]) -> std::io::Result<()> {
    let mut s = String::from(
        "map,seat0,seat1,game,cells0,cells1,score0,score1,tiebreak0,tiebreak1,disqualified0,disqualified1,violations0,violations1,ended_by,rounds,seconds\n",
    );
    let opt = |x: Option<f64>| x.map_or(String::new(), |v| v.to_string());
    let optu = |x: Option<u32>| x.map_or(String::new(), |v| v.to_string());
    let q = |t: &str| format!("\"{}\"", t.replace('"', "\"\""));
    for r in rows {
        s.push_str(&format!(
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{:.3}\n",
            q(&r.map),
            q(&r.seat0),
            q(&r.seat1),
            r.game,
            r.cells[0],
            r.cells[1],
            opt(r.score[0]),
            opt(r.score[1]),
            optu(r.tiebreak[0]),
            optu(r.tiebreak[1]),
            r.disqualified[0],
            r.disqualified[1],
            r.violations[0],
            r.violations[1],
            r.ended_by,
            r.rounds,
            r.seconds
        ));
    }
    std::fs::write(path, s)
}
