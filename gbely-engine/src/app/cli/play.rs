//! `gbely play`: a duel, and what `play` and `final` share (running the seats, the summary).

use super::*;
use crate::app::service::{unique_names, MatchPlan, Played, Recording, Seat};
use crate::app::web::live::{HumanPlayer, Live, Served, Start, WatchObserver};

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
    specs: &[(AgentSpec, String)],
    run: &RunArgs,
    default_dir: &str,
    py: Option<String>,
    fork: Option<Fork>,
) -> Result<(Played, Option<Served>)> {
    let humans: Vec<usize> =
        specs.iter().enumerate().filter(|(_, (spec, _))| *spec == AgentSpec::Human).map(|(s, _)| s).collect();
    if humans.len() > 1 {
        bail!("one human seat per match (the page plays one seat)");
    }
    let run_dir = match &run.run_dir {
        Some(d) => d.clone(),
        None => unique_dir(PathBuf::from(Defaults::RUNS_FOLDER).join(default_dir)),
    };
    std::fs::create_dir_all(&run_dir).with_context(|| format!("cannot create the run folder {}", run_dir.display()))?;
    let mut seats: Vec<Seat> = specs.iter().map(|(spec, name)| Seat::spec(spec.clone(), name)).collect();
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
    let settings = run.game.settings();
    plan.rounds = settings.rounds;
    plan.limits = settings.limits();
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
    // A fork's rounds before it are the source's: the page catches up with them at once.
    let caught_up = fork.as_ref().map_or(0, |f| f.record.round);
    if let Some(f) = fork {
        plan.resume = Some(f.head);
        plan.fork = Some(f.record);
    }
    let mut observer = Watched {
        progress: &mut progress,
        watch: served
            .as_ref()
            .map(|s| WatchObserver::new(s.live.clone(), map.clone(), speed).catching_up_to(caught_up)),
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

/// A match forked from a replay ([`crate::app::runs::fork`]): the source's rounds before the
/// fork, and the record of where it came from.
pub(super) struct Fork {
    head: Arc<gbely_world::Replay>,
    record: gbely_world::replay::ForkRecord,
}

pub(super) fn cmd_play(a: PlayArgs) -> Result<u8> {
    if let Some(from) = a.from.clone() {
        return cmd_fork(a, &from);
    }
    let agent = match (&a.agent, &a.agent_cmd) {
        (Some(f), None) => f.clone(),
        (None, Some(c)) => AgentSpec::command(c)?,
        _ => bail!("name your agent: `gbely play my_agent.py` (or --agent-cmd COMMAND)"),
    };
    let opponent = match &a.opponent {
        Some(o) => o.clone(),
        None => Defaults::OPPONENT.parse()?,
    };
    let map = Arc::new(load_map(&a.map.map, a.map.size.as_deref())?);
    if map.seats().len() != 2 {
        bail!(
            "map `{}` has {} seats; `play` is a duel (use `gbely final` for final maps)",
            map.name(),
            map.seats().len()
        );
    }
    for spec in [&agent, &opponent] {
        spec.check()?;
    }
    let default_dir = format!("{}-{}-vs-{}", timestamp(), agent.stem(), opponent.stem());
    let py = run_python(a.run.game.python.as_deref(), &[agent.clone(), opponent.clone()])?;
    let reader = py.clone().unwrap_or_else(|| python(a.run.game.python.as_deref()));
    let mut names = [named(&agent, &reader), named(&opponent, &reader)];
    unique_names(&mut names);
    let specs = [(agent.clone(), names[0].clone()), (opponent.clone(), names[1].clone())];
    let (played, served) = run_seats(&map, &specs, &a.run, &default_dir, py, None)?;
    if a.run.json {
        emit_json(played.result_json())?;
    } else if !a.run.quiet {
        print_summary(&map, &played.record, played.replay.as_deref(), &played.logs, played.python.as_deref())?;
        print_slowest(&played.record, a.run.game.time_limit)?;
    }
    after_the_match(served, &a.run, played.replay.as_deref())?;
    Ok(match_exit(&played.record, Some(0)))
}

/// `gbely play --from R --round N`: the match of `R` continued from the start of round `N` with
/// the agents given (see [`crate::app::runs::fork`]).
fn cmd_fork(a: PlayArgs, from: &Path) -> Result<u8> {
    use crate::app::runs::fork::{fork_at, own_agents};
    let read = crate::replays::read_replay_or_cut(from)?;
    let source = read.replay;
    let round = a.round.expect("clap: --from requires --round");
    if a.run.game.rounds != constants::ROUNDS && a.run.game.rounds != source.rounds {
        bail!(
            "--rounds {}: a fork plays the rounds of the match it continues ({} in {})",
            a.run.game.rounds,
            source.rounds,
            from.display()
        );
    }
    let (head, record, map) =
        fork_at(&source, round).with_context(|| format!("cannot fork {} at round {round}", from.display()))?;
    if read.cut_short {
        eprintln!(
            "gbely: note: {} stops after round {} (its match was cut off); the fork replays the rounds it holds",
            from.display(),
            source.turns.len().saturating_sub(1)
        );
    }
    let seats = map.seats().len();
    let mut agents = own_agents(&source);
    let seat_no = |text: &str| -> Result<usize> {
        match text.trim().parse::<usize>() {
            Ok(s) if s < seats => Ok(s),
            _ => bail!(
                "--seat {text}: the replay's map has seats 0…{} (see its seats: gbely replay show {})",
                seats - 1,
                from.display()
            ),
        }
    };
    let mut mine = None;
    for given in &a.seat {
        match given.split_once('=') {
            Some((seat, spec)) => agents[seat_no(seat)?] = Some(spec.parse()?),
            None => mine = Some(seat_no(given)?),
        }
    }
    let yours = match (&a.agent, &a.agent_cmd) {
        (Some(f), None) => Some(f.clone()),
        (None, Some(c)) => Some(AgentSpec::command(c)?),
        _ => None,
    };
    let first_army = map.seats().iter().position(|s| s.role == gbely_rules::SeatRole::Army).unwrap_or(0);
    let user_seat = mine.unwrap_or(first_army);
    if let Some(spec) = &yours {
        agents[user_seat] = Some(spec.clone());
    } else if mine.is_some() {
        bail!(
            "--seat {user_seat}: name the agent that plays it (`gbely play my_agent.py --from … --seat {user_seat}`)"
        );
    }
    if let Some(opponent) = &a.opponent {
        if seats != 2 {
            bail!("--opponent is a duel's; give the seats of a final as --seat SEAT=AGENT");
        }
        agents[1 - user_seat] = Some(opponent.clone());
    }
    let missing: Vec<String> = agents
        .iter()
        .enumerate()
        .filter(|(_, a)| a.is_none())
        .map(|(s, _)| format!("seat {s} ({})", crate::text::printable(&source.seats[s].name)))
        .collect();
    if !missing.is_empty() {
        bail!(
            "{} of {} played by an agent that is not in the replay: give it, e.g. `gbely play my_agent.py --from {} \
             --round {round}` (your agent in the first army seat) or --seat SEAT=AGENT",
            missing.join(", "),
            from.display(),
            from.display()
        );
    }
    let agents: Vec<AgentSpec> = agents.into_iter().flatten().collect();
    if agents.iter().filter(|s| **s == AgentSpec::Human).count() > 1 {
        bail!("one human seat per match (the page plays one seat)");
    }
    for spec in &agents {
        spec.check()?;
    }
    let py = run_python(a.run.game.python.as_deref(), &agents)?;
    let reader = py.clone().unwrap_or_else(|| python(a.run.game.python.as_deref()));
    let mut names: Vec<String> = agents.iter().map(|spec| named(spec, &reader)).collect();
    unique_names(&mut names);
    let default_dir = format!("{}-{}-fork-{round}", timestamp(), agents[user_seat].stem());
    let specs: Vec<(AgentSpec, String)> = agents.into_iter().zip(names).collect();
    let mut run = a.run;
    run.game.rounds = source.rounds;
    let (sha, fork_round) = (record.source.clone(), record.round);
    let (played, served) = run_seats(&map, &specs, &run, &default_dir, py, Some(Fork { head, record }))?;
    if run.json {
        let mut doc = played.result_json();
        doc["fork"] = json!({ "from": from.display().to_string(), "source": sha, "round": fork_round });
        emit_json(doc)?;
    } else if !run.quiet {
        println!("fork of {} at round {fork_round} (source sha256 {})", from.display(), &sha[..16]);
        if seats == 2 {
            print_summary(&map, &played.record, played.replay.as_deref(), &played.logs, played.python.as_deref())?;
        } else {
            print_final(&map, &played.record, played.replay.as_deref(), played.python.as_deref())?;
        }
        print_slowest(&played.record, run.game.time_limit)?;
    }
    after_the_match(served, &run, played.replay.as_deref())?;
    Ok(match_exit(&played.record, Some(user_seat)))
}

/// The slowest answers of each timed seat, against the time limit: where the 2 s go.
pub(super) fn print_slowest(rec: &MatchRecord, limit: TimeLimit) -> Result<()> {
    let mut out = std::io::stdout().lock();
    for (s, slowest) in rec.slowest.iter().enumerate().filter(|(_, v)| !v.is_empty()) {
        let name = crate::text::printable(&rec.names[s]);
        writeln!(out, "  slowest answers of {name}: {}", limit.slowest_text(slowest))?;
    }
    Ok(())
}

/// The interpreter for the Python agents among `specs`, resolved once for the whole run (`None`
/// when there are none).
pub(super) fn run_python(given: Option<&str>, specs: &[AgentSpec]) -> Result<Option<String>> {
    if specs.iter().any(AgentSpec::is_python) {
        Ok(Some(resolve_python(&python(given))?))
    } else {
        Ok(None)
    }
}

/// The name an agent is shown under (its AGENT_NAME and AGENT_VERSION, else its file name); a
/// GAME_VERSION for other rules is a warning on stderr.
pub(super) fn named(spec: &AgentSpec, py: &str) -> String {
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

/// The final's summary: the table of finalists, the Council and the neutral cells (shared by
/// `final` and a fork of a final).
pub(super) fn print_final(map: &Map, rec: &MatchRecord, replay: Option<&Path>, python: Option<&str>) -> Result<()> {
    let mut out = std::io::stdout().lock();
    let total = map.len() as f64;
    writeln!(out, "final {}", headline(map, rec))?;
    let width = rec.names.iter().map(|n| n.chars().count()).max().unwrap_or(8).max(8);
    writeln!(
        out,
        "  {:>4}  {:<width$}  {:>4} {:<6}  {:>8}  {:>6}  {:>10}  violations",
        "rank", "agent", "seat", "", "share", "cells", "tie-break"
    )?;
    let rows = final_table(map, rec);
    for r in &rows {
        writeln!(
            out,
            "  {:>4}  {:<width$}  {:>4} {:<6}  {:>8}  {:>6}  {:>10}  {}",
            r.rank.map_or("DQ".into(), |k| k.to_string()),
            r.name,
            r.seat,
            r.class,
            r.share.map_or("—".into(), |s| format!("{s:.2} %")),
            r.cells,
            r.tiebreak.map_or("-".into(), |t| format!("round {t}")),
            r.violations
        )?;
    }
    let council = map.seats().len() - 1;
    let cc = rec.outcome[council].cells;
    let neutral = map.len() as u32 - rec.outcome.iter().map(|o| o.cells).sum::<u32>();
    writeln!(
        out,
        "        {:<width$}  {:>11}  {:>8}  {:>6}",
        "council",
        "",
        format!("{:.2} %", cc as f64 / total * 100.0),
        cc
    )?;
    writeln!(
        out,
        "        {:<width$}  {:>11}  {:>8}  {:>6}",
        "hbp (neutral)",
        "",
        format!("{:.2} %", neutral as f64 / total * 100.0),
        neutral
    )?;
    match rec.council_fell {
        Some(r) => writeln!(out, "  the Council fell in round {r}")?,
        None => writeln!(out, "  the Council held out")?,
    }
    for (s, name) in rec.names.iter().enumerate() {
        if let Some(o) = rec.outcome.get(s).and_then(|o| o.disqualified) {
            let cause =
                rec.violations[s].last().map_or(String::new(), |(_, _, d)| format!(": {}", crate::text::printable(d)));
            let name = crate::text::printable(name);
            writeln!(out, "  {name}: disqualified in round {o} (the fourth violation{cause})")?;
        }
    }
    print_fairness(&mut out, rec)?;
    if let Some(p) = replay {
        writeln!(out, "  replay: {}   (gbely replay view {})", p.display(), p.display())?;
    }
    if let Some(py) = python {
        writeln!(out, "  python: {py}")?;
    }
    Ok(())
}
