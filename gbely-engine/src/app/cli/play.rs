//! `gbely play`: a duel, and what `play` and `final` share (running the seats, the summary).

use super::*;
use crate::app::service::{unique_names, AgentLimits, MatchPlan, Played, Recording, Seat};
use crate::app::web::live::{HumanPlayer, Live, Served, Start, WatchObserver, HUMAN};

/// Plays a match of the given seats (`(spec, display name)` each) through the match service
/// ([`crate::app::service::run`]) with the progress bar, the per-round log and the live page,
/// streaming its replay to disk: the part `play` and `final` share.
///
/// The replay file is created before any agent starts, so an unwritable path fails first. Ctrl-C
/// or SIGTERM stops the match within [`crate::runner::interrupt::POLL`] or so: agents killed, the replay
/// of the rounds played closed and marked `interrupted`.
///
/// The live page's server, when there is one, is handed back with the result: the caller prints
/// its summary, then [`after_the_match`] keeps the page up or closes it.
pub(super) fn run_seats(
    map: &Arc<Map>,
    specs: &[(String, String)],
    run: &RunArgs,
    default_dir: &str,
    py: Option<String>,
) -> Result<(Played, Option<Served>)> {
    let humans: Vec<usize> = specs.iter().enumerate().filter(|(_, (spec, _))| spec == HUMAN).map(|(s, _)| s).collect();
    if humans.len() > 1 {
        bail!("one human seat per match (the page plays one seat)");
    }
    let run_dir = match &run.run_dir {
        Some(d) => d.clone(),
        None => unique_dir(PathBuf::from(Defaults::RUNS_FOLDER).join(default_dir)),
    };
    std::fs::create_dir_all(&run_dir).with_context(|| format!("cannot create the run folder {}", run_dir.display()))?;
    let mut seats: Vec<Seat> = specs.iter().map(|(spec, name)| Seat::spec(spec, name)).collect();
    let served = if run.watch.watch || !humans.is_empty() {
        let names: Vec<String> = specs.iter().map(|(_, n)| n.clone()).collect();
        let human = humans.first().map(|&s| s as u8);
        let served = Live::serve(map, &names, human, run.watch.port)
            .with_context(|| format!("cannot start the live page's server on 127.0.0.1:{}", run.watch.port))?;
        if let Some(s) = human {
            let limit = run.watch.human_limit.and_then(|l| l.duration());
            let name = specs[s as usize].1.clone();
            seats[s as usize] = Seat::player(Box::new(HumanPlayer::new(served.live.clone(), name, limit)));
        }
        // The layout is part of the page's address, as its other state is.
        let url = if run.watch.projection { format!("{}#layout=projection", served.url) } else { served.url.clone() };
        match human {
            Some(s) => eprintln!(
                "gbely: play seat {s} ({}) at {url}\n       \
                 click one of your cells, then a neighbour (the cell itself: FORTIFY), set the amount; \
                 Enter adds the command, E ends the turn, ? shows the keys (docs/human.md)",
                specs[s as usize].1
            ),
            None => eprintln!("gbely: watch the match at {url}"),
        }
        if !run.watch.no_open {
            let _ = open_in_browser(&url);
        }
        Some(served)
    } else {
        None
    };
    let mut plan = MatchPlan::new(map.clone(), seats);
    plan.rounds = run.game.rounds;
    plan.limits = AgentLimits {
        time: run.game.time_limit,
        memory: run.game.memory_limit,
        sandbox: run.game.sandbox.mode(),
        cores: None,
    };
    plan.python = py.unwrap_or_else(|| crate::app::runs::interpreter::DEFAULT_PYTHON.to_string());
    plan.run_dir = Some(run_dir.clone());
    plan.recording = if run.no_replay {
        Recording::Off
    } else {
        Recording::File(run.replay.clone().unwrap_or_else(|| run_dir.join("replay.json.gz")))
    };
    let show = !run.quiet && !run.json && humans.is_empty();
    let mut progress = Progress { bar: progress_bar(run.game.rounds, show), verbose: run.verbose };
    let speed = run.watch.watch_speed.or(run.watch.projection.then_some(1.0));
    let mut observer = Watched {
        progress: &mut progress,
        watch: served.as_ref().map(|s| WatchObserver::new(s.live.clone(), map.clone(), speed)),
    };
    let guard = stop_guard()?;
    adopt_orphans();
    // A projected match waits for the screen (a human seat's page is there: it does not wait).
    let start = match (&served, humans.is_empty()) {
        (Some(_), true) if run.watch.start_when_ready => Some(Start::Watched),
        (Some(_), true) if run.watch.projection => Some(Start::Page),
        _ => None,
    };
    if let (Some(how), Some(served)) = (start, &served) {
        eprintln!(
            "gbely: the match starts {}",
            if how == Start::Page {
                "when the page's start button (or S) is pressed"
            } else {
                "once a page is watching"
            }
        );
        served.live.wait_for_start(how);
    }
    let played = crate::app::service::run(plan, &mut observer);
    drop(observer);
    kill_leftovers();
    drop(guard);
    if let Some(bar) = &progress.bar {
        bar.finish_and_clear();
    }
    let played = played?;
    if let Some(Err(e)) = &played.record.replay_written {
        eprintln!("gbely: warning: writing the replay failed: {e}");
    }
    if let Some(served) = served {
        let result = serde_json::to_value(played.record.result())?;
        let full = played
            .replay
            .as_ref()
            .and_then(|p| crate::replays::read_replay(p).ok())
            .and_then(|r| crate::replays::viewer::viewer_data(&r).ok());
        served.live.finish(result, played.replay.as_ref().map(|p| p.display().to_string()), full);
        return Ok((played, Some(served)));
    }
    Ok((played, None))
}

/// The live page after the match (its summary printed): kept up until Ctrl-C with
/// `--keep-serving` or when someone at a terminal can press it, so that the page can be
/// reloaded (it shows the finished match); otherwise closed once a page has learnt the result.
/// Either way, where the replay is goes to stderr.
pub(super) fn after_the_match(served: Option<Served>, run: &RunArgs, replay: Option<&Path>) -> Result<()> {
    let Some(served) = served else { return Ok(()) };
    let replay = replay.map(|p| p.display().to_string());
    let written = replay.as_deref().map_or("no replay written".to_string(), |r| format!("its replay: {r}"));
    if run.watch.keep_serving || std::io::stdin().is_terminal() {
        // Ctrl-C now ends the serving, not a match: the exit code stays the match's.
        let guard = stop_guard()?;
        eprintln!("gbely: the match is over; {written}. The page stays up at {} until Ctrl-C", served.url);
        while !crate::runner::interrupt::requested() {
            std::thread::sleep(crate::runner::interrupt::POLL);
        }
        served.close(std::time::Duration::ZERO);
        drop(guard);
    } else {
        match &replay {
            Some(r) => {
                eprintln!("gbely: the match is over; {written} (the live page stops; gbely replay view {r} --open)")
            }
            None => eprintln!("gbely: the match is over; {written}; the live page stops"),
        }
        // The page learns the result on its next poll (a quarter of a second); a page closed
        // long ago must not keep the command waiting.
        served.close(std::time::Duration::from_secs(3));
    }
    Ok(())
}

/// The progress bar, and the live page when watched.
struct Watched<'a> {
    progress: &'a mut Progress,
    watch: Option<WatchObserver>,
}

impl Observer for Watched<'_> {
    fn round_done(&mut self, m: &Match, report: &RoundReport) {
        self.progress.round_done(m, report);
    }

    /// The live page shows each round as its replay records it.
    fn wants_records(&self) -> bool {
        self.watch.as_ref().is_some_and(|w| w.wants_records())
    }

    fn round_recorded(&mut self, m: &Match, report: &RoundReport, record: &crate::session::RoundRecord<'_>) {
        if let Some(w) = self.watch.as_mut() {
            w.round_recorded(m, report, record);
        }
    }
}

/// The exit code of a played match: interrupted, or the user's agent disqualified.
pub(super) fn match_exit(rec: &MatchRecord, user_seat: Option<usize>) -> u8 {
    if rec.interrupted() {
        exit::INTERRUPTED
    } else if user_seat.and_then(|s| rec.outcome.get(s)).is_some_and(|o| o.disqualified.is_some()) {
        exit::DISQUALIFIED
    } else {
        exit::OK
    }
}

pub(super) fn cmd_play(a: PlayArgs) -> Result<u8> {
    let agent = match (&a.agent, &a.agent_cmd) {
        (Some(f), None) => f.clone(),
        (None, Some(c)) => format!("cmd:{c}"),
        _ => bail!("name your agent: `gbely play my_agent.py` (or --agent-cmd COMMAND)"),
    };
    let map = Arc::new(load_map(&a.map.map, a.map.size.as_deref())?);
    if map.seats().len() != 2 {
        bail!(
            "map `{}` has {} seats; `play` is a duel (use `gbely final` for final maps)",
            map.name(),
            map.seats().len()
        );
    }
    for spec in [&agent, &a.opponent] {
        if spec != HUMAN {
            check_spec(spec)?;
        }
    }
    let default_dir = format!("{}-{}-vs-{}", timestamp(), file_stem(&agent), file_stem(&a.opponent));
    let py = run_python(a.run.game.python.as_deref(), &[&agent, &a.opponent])?;
    let reader = py.clone().unwrap_or_else(|| python(a.run.game.python.as_deref()));
    let mut names = [named(&agent, &reader), named(&a.opponent, &reader)];
    unique_names(&mut names);
    let specs = [(agent.clone(), names[0].clone()), (a.opponent.clone(), names[1].clone())];
    let (played, served) = run_seats(&map, &specs, &a.run, &default_dir, py)?;
    if a.run.json {
        emit_json(played.result_json())?;
    } else if !a.run.quiet {
        print_summary(&map, &played.record, played.replay.as_deref(), &played.logs, played.python.as_deref())?;
    }
    after_the_match(served, &a.run, played.replay.as_deref())?;
    Ok(match_exit(&played.record, Some(0)))
}

/// The interpreter for the Python agents among `specs`, resolved once for the whole run (`None`
/// when there are none).
pub(super) fn run_python(given: Option<&str>, specs: &[&str]) -> Result<Option<String>> {
    if specs.iter().any(|s| is_python_agent(s)) {
        Ok(Some(resolve_python(&python(given))?))
    } else {
        Ok(None)
    }
}

/// The name an agent is shown under (its AGENT_NAME and AGENT_VERSION, else its file name); a
/// GAME_VERSION for other rules is a warning on stderr.
pub(super) fn named(spec: &str, py: &str) -> String {
    let (name, warning) = crate::app::inspect::display_name(spec, py);
    if let Some(w) = warning {
        eprintln!("gbely: warning: {}", crate::text::printable(&w));
    }
    name
}

/// "on gbely (60×60), 150 rounds played (full length)": the first line of a summary.
pub(super) fn headline(map: &Map, rec: &MatchRecord) -> String {
    format!("on {} ({}×{}), {}", map.name(), map.width(), map.height(), rec.how_it_ended())
}

/// The runner's notes on CPU competition (see [`crate::app::runs::results::fairness_notes`]).
pub(super) fn print_fairness(out: &mut impl Write, rec: &MatchRecord) -> Result<()> {
    for n in fairness_notes(rec).into_iter().chain(crate::app::runs::results::dropped_line_notes(rec)) {
        writeln!(out, "  note: {n}")?;
    }
    if let Some(i) = crate::app::runs::results::isolation_of(rec) {
        writeln!(out, "  agents: {}", i.line())?;
    }
    Ok(())
}

fn print_summary(
    map: &Map,
    rec: &MatchRecord,
    replay: Option<&Path>,
    logs: &[Option<PathBuf>],
    python: Option<&str>,
) -> Result<()> {
    let mut out = std::io::stdout().lock();
    let name = |s: usize| crate::text::printable(&rec.names[s]).into_owned();
    writeln!(out, "{} vs {} {}", name(0), name(1), headline(map, rec))?;
    let mut sides = String::new();
    rec.write_sides(&mut sides, &|s| logs[s].is_some() || !rec.discards[s].is_empty())?;
    write!(out, "{sides}")?;
    print_fairness(&mut out, rec)?;
    if let Some(p) = replay {
        writeln!(out, "  replay: {}   (watch it: gbely replay view {} --open)", p.display(), p.display())?;
    }
    for (s, log) in logs.iter().enumerate() {
        if let Some(l) = log {
            writeln!(out, "  log of {}: {}", name(s), l.display())?;
        }
    }
    if let Some(py) = python {
        writeln!(out, "  python: {py}")?;
    }
    Ok(())
}
