//! The `gbely` command line. One implementation, used by the Rust binary and by
//! `python -m gbely` alike: [`run`] takes the arguments and returns the exit code.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{anyhow, bail, Context, Result};
use clap::{Args, Parser, Subcommand};
use gbely_council::Council;
use gbely_rules::constants;
use gbely_world::{render_map, write_map_file, Map, MapStats};
use serde_json::json;

use crate::game::{play, play_to, DecidePlayer, GameRecord, Observer, PlayOptions, Player};
use crate::process::{AgentCommand, ProcessConfig, ProcessPlayer};
use crate::replays::ReplayWriter;
use crate::runs::{
    agent_name, build_players, check_spec, discard_digest, fairness_notes, file_stem, final_seating, final_table,
    is_python_agent, load_final_map, load_map, python, resolve_python, result_json, time_limit, timestamp, unique_dir,
    MAX_ROUNDS,
};
use crate::sim::{Match, MatchConfig, RoundReport};

/// Exit codes.
pub mod exit {
    /// The command did what was asked.
    pub const OK: u8 = 0;
    /// A runtime error: a missing file, a bad map, an agent that cannot be started.
    pub const ERROR: u8 = 1;
    /// The command line itself is wrong.
    pub const USAGE: u8 = 2;
    /// `play`, `final`: your agent (the first one named) was disqualified.
    pub const DISQUALIFIED: u8 = 3;
    /// `check`: the submission would fail.
    pub const CHECK_FAILED: u8 = 4;
    /// `replay verify`: the replay does not match its re-simulation.
    pub const VERIFY_FAILED: u8 = 5;
    /// Stopped by Ctrl-C or SIGTERM (128 + SIGINT, as shells report it).
    pub const INTERRUPTED: u8 = 130;
}

const AFTER_HELP: &str = "\
Agents: a Python file with decide(stav) (run in its own process, like the judge does),
`council` (the built-in Council), `template` or `expander` (the example agents, as
Python processes), or cmd:COMMAND (any executable speaking the line protocol).

Exit codes: 0 ok, 1 error, 2 bad usage, 3 your agent was disqualified, 4 `check` failed,
5 `replay verify` found a difference, 130 interrupted (Ctrl-C or SIGTERM: the agents are
stopped and the replay of the rounds played is written, marked interrupted).

Examples:
  gbely my_agent.py                          play against the Council on the reference map
  gbely play my_agent.py --map seed:abc      on a generated 60×60 map
  gbely play a.py --opponent b.py            a duel of two agent files
  gbely check my_agent.py                    the submission check
  gbely final my_agent.py --fill expander    rehearse the 8-army final
  gbely replay view gbely-runs/…/replay.json.gz --open   watch a match
  gbely map show seed:abc --size 40          look at a map";

#[derive(Debug, Parser)]
#[command(name = "gbely", version, about = "The Gbely oil battle: play, check and study agents locally.", after_help = AFTER_HELP)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// Play one match: your agent against the Council (or another agent) on a map.
    Play(PlayArgs),
    /// The final: up to eight agents on a final map, the Council and its reinforcements in the centre.
    Final(FinalArgs),
    /// The submission check: file size, `decide`, imports, and a short match with timings.
    Check(CheckArgs),
    /// Maps: show, export to a map file, figures.
    #[command(subcommand)]
    Map(MapCmd),
    /// Replays: watch in a browser, show in the terminal, verify, figures.
    #[command(subcommand)]
    Replay(ReplayCmd),
    /// Serve a built-in Rust agent over the line protocol on stdin/stdout (e.g. `council`).
    Serve {
        /// `council`.
        name: String,
    },
}

#[derive(Debug, Args, Clone)]
struct MapArgs {
    /// `gbely` (the reference map), `seed:TEXT` (generated), or a map file.
    #[arg(long, short = 'm', default_value = "gbely")]
    map: String,
    /// Size of a generated map: `N` or `WxH` (default 60).
    #[arg(long)]
    size: Option<String>,
}

#[derive(Debug, Args)]
struct PlayArgs {
    /// Your agent (seat 0, base P57_02 on the reference map).
    agent: Option<String>,
    /// Run this command as your agent instead of a file (any executable speaking the protocol).
    #[arg(long, value_name = "COMMAND", conflicts_with = "agent")]
    agent_cmd: Option<String>,
    /// The other side: `council`, an agent file, `template`, `expander` or cmd:COMMAND.
    #[arg(long, short = 'o', default_value = "council")]
    opponent: String,
    #[command(flatten)]
    map: MapArgs,
    #[command(flatten)]
    run: RunArgs,
}

/// How a match is run and reported (shared by `play` and `final`).
#[derive(Debug, Args)]
struct RunArgs {
    /// Rounds to play: 1–100000.
    #[arg(long, default_value_t = constants::ROUNDS, value_parser = rounds_parser())]
    rounds: u32,
    /// Seconds per round for agent processes: more than 0, at most 3600; `off` for no limit (debugging).
    #[arg(long, default_value = "2", value_name = "SECONDS|off", value_parser = parse_time_limit)]
    time_limit: TimeLimit,
    /// The Python interpreter for agent files (default: $GBELY_PYTHON or python3).
    #[arg(long)]
    python: Option<String>,
    /// Address space allowed to each agent process, in MiB; `off` for no limit.
    #[arg(long, default_value = "4096", value_name = "MIB|off", value_parser = parse_memory_limit)]
    memory_limit: MemoryLimit,
    /// Where to write the replay (default: the run folder).
    #[arg(long, conflicts_with = "no_replay")]
    replay: Option<PathBuf>,
    /// Do not write a replay.
    #[arg(long)]
    no_replay: bool,
    /// Folder for this match's logs and replay (default: gbely-runs/<time>-…).
    #[arg(long)]
    run_dir: Option<PathBuf>,
    /// Print the result (and the final's table) as one JSON document on stdout.
    #[arg(long)]
    json: bool,
    /// No progress bar and no summary (errors still go to stderr).
    #[arg(long, short = 'q')]
    quiet: bool,
    /// A line per round on stderr: cells, units, captures, discarded commands, violations.
    #[arg(long, short = 'v')]
    verbose: bool,
}

/// `--rounds`: 1 to [`MAX_ROUNDS`] (the help texts say the same numbers).
fn rounds_parser() -> clap::builder::RangedI64ValueParser<u32> {
    clap::value_parser!(u32).range(1..=i64::from(MAX_ROUNDS))
}

/// A parsed `--time-limit`: `None` is no limit.
#[derive(Clone, Copy, Debug)]
struct TimeLimit(Option<std::time::Duration>);

fn parse_time_limit(s: &str) -> Result<TimeLimit, String> {
    time_limit(s).map(TimeLimit)
}

#[derive(Debug, Args)]
struct FinalArgs {
    /// Up to eight agents: files, `template`, `expander` or cmd:COMMAND.
    #[arg(required = true, num_args = 1..=8)]
    agents: Vec<String>,
    /// Who fills the empty seats: `template`, `expander`, `self` (copies of your first agent) or an agent file.
    #[arg(long, default_value = "template")]
    fill: String,
    /// `seed:TEXT` (a generated final map), or a final map file.
    #[arg(long, short = 'm', default_value = "seed:gbely-final")]
    map: String,
    /// Side of a generated final map.
    #[arg(long, default_value_t = 90)]
    size: u32,
    /// The seat (0–7) of the first agent; repeat for the next ones. Others are seated by the map's seed.
    #[arg(long = "seat", value_name = "SEAT")]
    seats: Vec<u8>,
    #[command(flatten)]
    run: RunArgs,
}

#[derive(Debug, Args)]
struct CheckArgs {
    /// The agent file to check.
    agent: PathBuf,
    /// Rounds of the test match against the Council: 1–100000.
    #[arg(long, default_value_t = 30, value_parser = rounds_parser())]
    rounds: u32,
    /// The Python interpreter (default: $GBELY_PYTHON or python3).
    #[arg(long)]
    python: Option<String>,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Subcommand)]
enum ReplayCmd {
    /// Write the viewer: one self-contained HTML file (works from disk, no network).
    View {
        /// The replay (`.json` or `.json.gz`).
        file: PathBuf,
        /// The page to write (default: next to the replay, `.html`).
        #[arg(long, short = 'o')]
        output: Option<PathBuf>,
        /// Open it in the default browser.
        #[arg(long)]
        open: bool,
    },
    /// The map at the end of a round in the terminal, or the observation a seat received.
    Show {
        file: PathBuf,
        /// The round (default: the last one played).
        #[arg(long)]
        round: Option<u32>,
        /// The seat, with --observation.
        #[arg(long)]
        seat: Option<u8>,
        /// Print the exact observation (SPEC §5 JSON) the seat received in the round, and its answer.
        #[arg(long, requires = "seat")]
        observation: bool,
        /// Colours: auto (when the output is a terminal), always, never.
        #[arg(long, default_value = "auto", value_parser = ["auto", "always", "never"])]
        color: String,
    },
    /// Re-simulate the match and check every round, the final state and the result.
    Verify { file: PathBuf },
    /// Shares and units per round, captures, discarded commands per side.
    Stats {
        file: PathBuf,
        /// As one JSON document.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
enum MapCmd {
    /// Print a map: terrain and garrisons.
    Show(NamedMap),
    /// Write a map in the map file format (to stdout or -o FILE).
    Export {
        #[command(flatten)]
        map: NamedMap,
        /// Output file.
        #[arg(long, short = 'o')]
        output: Option<PathBuf>,
    },
    /// Figures of a map: terrain shares, garrisons, symmetry, fingerprint.
    Stats(NamedMap),
}

/// A map named either way: `gbely map show seed:abc` or `gbely map show --map seed:abc`.
#[derive(Debug, Args)]
struct NamedMap {
    /// `gbely`, `seed:TEXT`, `final:TEXT` or a map file (same as --map).
    #[arg(value_name = "MAP", conflicts_with = "map")]
    spec: Option<String>,
    #[command(flatten)]
    args: MapArgs,
}

impl NamedMap {
    fn load(&self) -> Result<Map> {
        load_map(self.spec.as_deref().unwrap_or(&self.args.map), self.args.size.as_deref())
    }
}

/// `--memory-limit`: bytes, or `None` for no limit.
#[derive(Clone, Copy, Debug)]
struct MemoryLimit(Option<u64>);

fn parse_memory_limit(s: &str) -> Result<MemoryLimit, String> {
    if s == "off" || s == "none" {
        return Ok(MemoryLimit(None));
    }
    match s.parse::<u64>() {
        Ok(mib) if (64..=1 << 20).contains(&mib) => Ok(MemoryLimit(Some(mib << 20))),
        _ => Err(format!("`{s}`: give MiB from 64 to 1048576 (e.g. 4096), or `off`")),
    }
}

/// Runs the command line; `args` includes the program name.
pub fn run(args: Vec<OsString>) -> ExitCode {
    ExitCode::from(run_code(args))
}

/// Runs the command line and returns the exit code as a number (for the Python package).
pub fn run_code(args: Vec<OsString>) -> u8 {
    let args = with_default_subcommand(args);
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            // A refused value (`--rounds 0`, `--time-limit 1e20`) is one line, like other errors;
            // clap's other messages keep their usage lines and hints.
            if e.kind() == clap::error::ErrorKind::ValueValidation {
                let text = e.to_string();
                let first = text.lines().next().unwrap_or_default();
                eprintln!("gbely: {first}");
                return exit::USAGE;
            }
            let code = if e.use_stderr() { exit::USAGE } else { exit::OK };
            let _ = e.print();
            return code;
        }
    };
    match dispatch(cli) {
        Ok(code) => code,
        Err(e) => {
            if is_broken_pipe(&e) {
                return exit::OK;
            }
            eprintln!("gbely: error: {e:#}");
            exit::ERROR
        }
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe))
}

/// `gbely my_agent.py` means `gbely play my_agent.py`.
fn with_default_subcommand(mut args: Vec<OsString>) -> Vec<OsString> {
    const KNOWN: [&str; 7] = ["play", "check", "map", "serve", "help", "replay", "final"];
    if let Some(first) = args.get(1).and_then(|a| a.to_str()) {
        let a_file = !first.starts_with('-') && !KNOWN.contains(&first);
        let a_play_option = first == "--agent-cmd" || first == "--opponent" || first == "--map";
        if a_file || a_play_option {
            args.insert(1, "play".into());
        }
    }
    args
}

fn dispatch(cli: Cli) -> Result<u8> {
    match cli.command {
        Cmd::Play(a) => cmd_play(a),
        Cmd::Check(a) => cmd_check(a),
        Cmd::Final(a) => cmd_final(a),
        Cmd::Map(m) => cmd_map(m),
        Cmd::Replay(r) => cmd_replay(r),
        Cmd::Serve { name } => match name.as_str() {
            "council" => {
                crate::serve::serve_stdio(&mut Council::new())?;
                Ok(exit::OK)
            }
            other => bail!("no built-in Rust agent `{other}` (available: council)"),
        },
    }
}

/// Progress bar and per-round log.
struct Progress {
    bar: Option<indicatif::ProgressBar>,
    verbose: bool,
}

impl Observer for Progress {
    fn round_done(&mut self, m: &Match, report: &RoundReport) {
        if let Some(bar) = &self.bar {
            bar.set_position(report.round as u64 + 1);
            bar.set_message(format!("cells {} : {}", m.cell_count(0), m.cell_count(1)));
        }
        if self.verbose {
            let seats = m.seats() as u8;
            let cells: Vec<String> = (0..seats).map(|s| m.cell_count(s).to_string()).collect();
            let units: Vec<String> = (0..seats).map(|s| format!("{:.1}", m.unit_total(s))).collect();
            let line = format!(
                "round {:>3}  cells {}  units {}  captures {}  discarded {}{}",
                report.round,
                cells.join(":"),
                units.join(":"),
                report.captures.len(),
                report.discarded.len(),
                if report.violations.is_empty() {
                    String::new()
                } else {
                    format!("  violations: seat {:?}", report.violations)
                }
            );
            match &self.bar {
                Some(bar) => bar.println(line),
                None => eprintln!("{line}"),
            }
        }
    }
}

fn progress_bar(rounds: u32, show: bool) -> Option<indicatif::ProgressBar> {
    if !show || !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::new(rounds as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} round {pos:>3}/{len} [{bar:40}] {msg} ({elapsed})")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    Some(bar)
}

fn share(score: Option<f64>) -> String {
    score.map_or("disqualified".into(), |s| format!("{s:.2} %"))
}

/// What [`run_seats`] leaves.
struct SeatsRun {
    rec: GameRecord,
    replay: Option<PathBuf>,
    logs: Vec<Option<PathBuf>>,
    /// The interpreter the Python agents ran with, when some seat was one.
    python: Option<String>,
}

/// Plays a match of the given seats (`(spec, display name)` each) with the progress bar and
/// per-round log, streaming its replay to disk: the part `play` and `final` share.
///
/// The replay file is created before any agent starts, so an unwritable path fails first. Ctrl-C
/// or SIGTERM stops the match within [`crate::interrupt::POLL`] or so: agents killed, the replay
/// of the rounds played closed and marked `interrupted`.
fn run_seats(map: &Arc<Map>, specs: &[(String, String)], run: &RunArgs, default_dir: &str) -> Result<SeatsRun> {
    let limit = run.time_limit.0;
    let py = python(run.python.as_deref());
    let py = if specs.iter().any(|(s, _)| is_python_agent(s)) { Some(resolve_python(&py)?) } else { None };
    let run_dir = match &run.run_dir {
        Some(d) => d.clone(),
        None => unique_dir(PathBuf::from("gbely-runs").join(default_dir)),
    };
    std::fs::create_dir_all(&run_dir).with_context(|| format!("cannot create the run folder {}", run_dir.display()))?;
    let writer = if run.no_replay {
        None
    } else {
        let path = run.replay.clone().unwrap_or_else(|| run_dir.join("replay.json.gz"));
        let w =
            ReplayWriter::create(&path).with_context(|| format!("cannot write the replay to {}", path.display()))?;
        Some(w)
    };
    let replay_path = writer.as_ref().map(|w| w.path().to_path_buf());
    let mut setup = build_players(specs, &run_dir, limit, run.memory_limit.0, py.as_deref().unwrap_or("python3"))?;
    let show = !run.quiet && !run.json;
    let mut progress = Progress { bar: progress_bar(run.rounds, show), verbose: run.verbose };
    let config = MatchConfig { rounds: run.rounds };
    let guard = crate::interrupt::Guard::install().context("cannot install the Ctrl-C handler")?;
    crate::process::become_subreaper();
    let mut refs: Vec<&mut dyn Player> = setup.players.iter_mut().map(|p| p.as_mut() as &mut dyn Player).collect();
    let rec = match writer {
        Some(w) => play_to(map.clone(), &mut refs, config, w, &mut progress),
        None => play(map.clone(), &mut refs, PlayOptions { config, record: false }, &mut progress),
    };
    drop(refs);
    drop(setup.players);
    crate::process::kill_orphans();
    drop(guard);
    if let Some(bar) = &progress.bar {
        bar.finish_and_clear();
    }
    if let Some(Err(e)) = &rec.replay_written {
        eprintln!("gbely: warning: writing the replay failed: {e}");
    }
    let replay_path = replay_path.filter(|_| matches!(rec.replay_written, Some(Ok(_))));
    Ok(SeatsRun { rec, replay: replay_path, logs: setup.logs, python: py })
}

/// The exit code of a played match: interrupted, or the user's agent disqualified.
fn match_exit(rec: &GameRecord, user_seat: Option<usize>) -> u8 {
    if rec.interrupted() {
        exit::INTERRUPTED
    } else if user_seat.and_then(|s| rec.outcome.get(s)).is_some_and(|o| o.disqualified.is_some()) {
        exit::DISQUALIFIED
    } else {
        exit::OK
    }
}

fn cmd_play(a: PlayArgs) -> Result<u8> {
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
        check_spec(spec)?;
    }
    let default_dir = format!("{}-{}-vs-{}", timestamp(), file_stem(&agent), file_stem(&a.opponent));
    let names = [agent_name(&agent), agent_name(&a.opponent)];
    let names =
        if names[0] == names[1] { [format!("{} (seat 0)", names[0]), format!("{} (seat 1)", names[1])] } else { names };
    let specs = [(agent.clone(), names[0].clone()), (a.opponent.clone(), names[1].clone())];
    let SeatsRun { rec, replay: replay_path, logs, python } = run_seats(&map, &specs, &a.run, &default_dir)?;
    if a.run.json {
        let mut doc = result_json(&map, &rec, replay_path.as_deref(), &logs);
        doc["python"] = json!(python);
        let mut out = std::io::stdout().lock();
        serde_json::to_writer(&mut out, &doc)?;
        writeln!(out)?;
    } else if !a.run.quiet {
        print_summary(&map, &rec, replay_path.as_deref(), &logs, python.as_deref())?;
    }
    Ok(match_exit(&rec, Some(0)))
}

/// "on gbely (60×60), 150 rounds played (full length)": the first line of a summary.
fn headline(map: &Map, rec: &GameRecord) -> String {
    let how = match rec.end_reason {
        Some(crate::sim::EndReason::Rounds) => "full length".to_string(),
        Some(e) => format!("ended by {}", e.wire().replace('_', " ")),
        None => format!("INTERRUPTED in round {}", rec.last_round),
    };
    format!("on {} ({}×{}), {} rounds played ({how})", map.name(), map.width(), map.height(), rec.rounds_played())
}

/// The runner's notes on CPU competition (see [`crate::runs::fairness_notes`]).
fn print_fairness(out: &mut impl Write, rec: &GameRecord) -> Result<()> {
    for n in fairness_notes(rec) {
        writeln!(out, "  note: {n}")?;
    }
    Ok(())
}

fn print_summary(
    map: &Map,
    rec: &GameRecord,
    replay: Option<&Path>,
    logs: &[Option<PathBuf>],
    python: Option<&str>,
) -> Result<()> {
    let mut out = std::io::stdout().lock();
    let width = rec.names.iter().map(|n| n.chars().count()).max().unwrap_or(8).max(8);
    writeln!(out, "{} vs {} {}", rec.names[0], rec.names[1], headline(map, rec))?;
    writeln!(out, "  {:<width$}  {:>12}  {:>6}  {:>10}  violations", "", "share", "cells", "tie-break")?;
    for o in &rec.outcome {
        let s = o.seat as usize;
        writeln!(
            out,
            "  {:<width$}  {:>12}  {:>6}  {:>10}  {}",
            rec.names[s],
            share(o.score),
            o.cells,
            o.tiebreak_round.map_or("-".into(), |r| format!("round {r}")),
            rec.violations[s].len()
        )?;
    }
    match rec.council_fell {
        Some(r) => writeln!(out, "  the Council's seat fell in round {r}")?,
        None => writeln!(out, "  the Council's seat did not fall")?,
    }
    for (s, name) in rec.names.iter().enumerate() {
        if logs[s].is_none() && rec.discards[s].is_empty() {
            continue;
        }
        writeln!(out, "  {name}: {}", discard_digest(&rec.discards[s]))?;
        for (round, kind, detail) in &rec.violations[s] {
            writeln!(out, "    violation in round {round}: {} — {detail}", kind.wire())?;
        }
        if let Some(o) = rec.outcome.get(s).and_then(|o| o.disqualified) {
            let cause = rec.violations[s].last().map_or(String::new(), |(_, _, d)| format!(": {d}"));
            writeln!(out, "    disqualified in round {o} (the fourth violation{cause})")?;
        }
    }
    print_fairness(&mut out, rec)?;
    if let Some(p) = replay {
        writeln!(out, "  replay: {}   (watch it: gbely replay view {} --open)", p.display(), p.display())?;
    }
    for (s, log) in logs.iter().enumerate() {
        if let Some(l) = log {
            writeln!(out, "  log of {}: {}", rec.names[s], l.display())?;
        }
    }
    if let Some(py) = python {
        writeln!(out, "  python: {py}")?;
    }
    Ok(())
}

fn cmd_final(a: FinalArgs) -> Result<u8> {
    let map = Arc::new(load_final_map(&a.map, a.size)?);
    let finalists = map.seats().len() - 1;
    if a.agents.len() > finalists {
        bail!("{} agents for {finalists} seats", a.agents.len());
    }
    let mut entries: Vec<String> = a.agents.clone();
    let fill = if a.fill == "self" { a.agents[0].clone() } else { a.fill.clone() };
    if fill == "council" {
        bail!("--fill council: the Council already holds the centre; fill with template, expander, self or a file");
    }
    while entries.len() < finalists {
        entries.push(fill.clone());
    }
    for e in &entries {
        check_spec(e)?;
    }
    let entry_of = final_seating(&map, &a.seats)?;
    let mut specs: Vec<(String, String)> = Vec::new();
    let mut counts: BTreeMap<String, u32> = BTreeMap::new();
    for seat in 0..finalists {
        let spec = entries[entry_of[seat]].clone();
        let base = agent_name(&spec);
        let k = counts.entry(base.clone()).or_default();
        *k += 1;
        let total = entries.iter().filter(|e| agent_name(e) == base).count();
        let name = if total > 1 { format!("{base} #{k}") } else { base };
        specs.push((spec, name));
    }
    specs.push(("council".into(), "council".into()));
    let default_dir = format!("{}-final-{}", timestamp(), file_stem(&a.agents[0]));
    let SeatsRun { rec, replay: replay_path, logs, python } = run_seats(&map, &specs, &a.run, &default_dir)?;
    if a.run.json {
        let mut doc = result_json(&map, &rec, replay_path.as_deref(), &logs);
        doc["python"] = json!(python);
        doc["table"] = json!(final_table(&map, &rec).iter().map(|r| json!({
            "rank": r.rank, "seat": r.seat, "class": r.class, "name": r.name, "share": r.share,
            "cells": r.cells, "tiebreak_round": r.tiebreak, "violations": r.violations, "disqualified": r.disqualified,
        })).collect::<Vec<_>>());
        let mut out = std::io::stdout().lock();
        serde_json::to_writer(&mut out, &doc)?;
        writeln!(out)?;
    } else if !a.run.quiet {
        print_final(&map, &rec, replay_path.as_deref(), python.as_deref())?;
    }
    // The first agent named is the user's, wherever it was seated.
    let mine = entry_of.iter().position(|&e| e == 0).expect("the first agent has a seat");
    Ok(match_exit(&rec, Some(mine)))
}

fn print_final(map: &Map, rec: &GameRecord, replay: Option<&Path>, python: Option<&str>) -> Result<()> {
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
            let cause = rec.violations[s].last().map_or(String::new(), |(_, _, d)| format!(": {d}"));
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

fn cmd_map(cmd: MapCmd) -> Result<u8> {
    let mut out = std::io::stdout().lock();
    match cmd {
        MapCmd::Show(m) => {
            let map = m.load()?;
            out.write_all(render_map(&map).as_bytes())?;
        }
        MapCmd::Export { map: m, output } => {
            let map = m.load()?;
            let text = write_map_file(&map);
            match output {
                Some(p) => std::fs::write(&p, text).with_context(|| format!("cannot write {}", p.display()))?,
                None => out.write_all(text.as_bytes())?,
            }
        }
        MapCmd::Stats(m) => {
            let map = m.load()?;
            writeln!(out, "map          {} ({}×{})", map.name(), map.width(), map.height())?;
            writeln!(out, "fingerprint  {}", map.fingerprint())?;
            let g = map.grid();
            for (k, s) in map.seats().iter().enumerate() {
                writeln!(out, "seat {k}       {} ({})", g.id(s.base), s.role.wire())?;
            }
            write!(out, "{}", MapStats::of(&map))?;
        }
    }
    Ok(exit::OK)
}

fn cmd_replay(cmd: ReplayCmd) -> Result<u8> {
    use crate::replays::{frame_after, observation_at, read_replay, render_frame, verify};
    let mut out = std::io::stdout().lock();
    match cmd {
        ReplayCmd::View { file, output, open } => {
            let replay = read_replay(&file)?;
            let html = crate::viewer::viewer_html(&replay).map_err(|e| anyhow!("{}: {e}", file.display()))?;
            let output = output.unwrap_or_else(|| {
                let name = file.file_name().map_or("replay".into(), |n| n.to_string_lossy().into_owned());
                let stem = name.trim_end_matches(".gz").trim_end_matches(".json").to_string();
                file.with_file_name(format!("{stem}.html"))
            });
            std::fs::write(&output, &html).with_context(|| format!("cannot write {}", output.display()))?;
            writeln!(out, "{} ({:.1} MB)", output.display(), html.len() as f64 / 1e6)?;
            if open {
                let opened = std::process::Command::new("xdg-open")
                    .arg(&output)
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null())
                    .status();
                if !opened.is_ok_and(|s| s.success()) {
                    writeln!(out, "open it in a browser: file://{}", std::fs::canonicalize(&output)?.display())?;
                }
            }
        }
        ReplayCmd::Show { file, round, seat, observation, color } => {
            let replay = read_replay(&file)?;
            let last = replay
                .turns
                .len()
                .checked_sub(1)
                .ok_or_else(|| anyhow!("{}: the replay has no rounds", file.display()))? as u32;
            let round = round.unwrap_or(last);
            if round > last {
                bail!("round {round} was not played: {} has rounds 0…{last}", file.display());
            }
            if observation {
                let seat = seat.expect("clap requires --seat");
                let (obs, answer) =
                    observation_at(&replay, round, seat).map_err(|e| anyhow!("{}: {e}", file.display()))?;
                writeln!(
                    out,
                    "# the observation seat {seat} ({}) received in round {round}",
                    replay.seats[seat as usize].name
                )?;
                writeln!(out, "{obs}")?;
                writeln!(out, "# its answer")?;
                match answer {
                    gbely_world::replay::Answer::Commands(list) => writeln!(out, "{}", json!({ "prikazy": list }))?,
                    gbely_world::replay::Answer::Violation(v) => writeln!(out, "violation ({}): {}", v.kind, v.detail)?,
                    gbely_world::replay::Answer::Out => writeln!(out, "none: the seat was out of the game")?,
                }
            } else {
                let map = replay.check().map_err(|e| anyhow!("{}: {e}", file.display()))?;
                let frame = frame_after(&replay, &map, round).map_err(|e| anyhow!("{}: {e}", file.display()))?;
                let color = match color.as_str() {
                    "always" => true,
                    "never" => false,
                    _ => std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
                };
                out.write_all(render_frame(&replay, &map, &frame, Some(round), color).as_bytes())?;
            }
        }
        ReplayCmd::Verify { file } => {
            let replay = read_replay(&file)?;
            match verify(&replay) {
                Ok(v) => writeln!(out, "ok: {} re-simulated: {} rounds, {} seats, {} cells; every round's changes, the final state and the result match", file.display(), v.rounds, v.seats, v.cells)?,
                Err(m) => {
                    writeln!(out, "MISMATCH in {}: {m}", file.display())?;
                    return Ok(exit::VERIFY_FAILED);
                }
            }
        }
        ReplayCmd::Stats { file, json: as_json } => {
            let replay = read_replay(&file)?;
            let stats = crate::replays::stats(&replay).map_err(|e| anyhow!("{}: {e}", file.display()))?;
            if as_json {
                writeln!(out, "{stats}")?;
            } else {
                write!(out, "{}", crate::replays::stats_text(&replay, &stats))?;
            }
        }
    }
    Ok(exit::OK)
}

/// The submission check (`gbely check`).
fn cmd_check(a: CheckArgs) -> Result<u8> {
    let py = resolve_python(&python(a.python.as_deref()))?;
    let mut problems: Vec<String> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    let path = &a.agent;
    let meta = std::fs::metadata(path).with_context(|| format!("cannot read {}", path.display()))?;
    if path.extension().and_then(|e| e.to_str()) != Some("py") {
        problems.push(format!("{} is not a .py file: the submission is one Python file", path.display()));
    }
    if meta.len() > constants::MAX_SUBMISSION_BYTES {
        problems.push(format!(
            "the file has {} bytes; the limit is {} (512 KiB)",
            meta.len(),
            constants::MAX_SUBMISSION_BYTES
        ));
    } else {
        notes.push(format!("size {} bytes of 524288 allowed", meta.len()));
    }
    let inspect = inspect_source(&py, path)?;
    if let Some(err) = inspect.get("syntax_error").and_then(|v| v.as_str()) {
        problems.push(format!("the file does not parse: {err}"));
    }
    let mut warnings: Vec<String> = Vec::new();
    match inspect.get("decide").filter(|d| !d.is_null()) {
        None if inspect["syntax_error"].is_null() => {
            problems.push("the file defines no top-level function decide(stav)".into());
        }
        None => {}
        Some(d) => {
            for other in d["maybe"].as_array().into_iter().flatten().filter_map(|m| m.as_str()) {
                warnings.push(format!("on another branch: {other}"));
            }
            if let Some(p) = d["problem"].as_str() {
                problems.push(p.to_string());
            } else if d["kind"] == "assigned" {
                warnings.push(format!(
                    "decide (line {}) is assigned the result of an expression: the check cannot see that it is a function",
                    d["line"]
                ));
            }
        }
    }
    let foreign: Vec<String> = inspect
        .get("non_stdlib")
        .and_then(|v| v.as_array())
        .map(|l| l.iter().filter_map(|x| x.as_str().map(String::from)).collect())
        .unwrap_or_default();
    if !foreign.is_empty() {
        problems.push(format!(
            "imports outside the standard library (the judge will not have them): {}",
            foreign.join(", ")
        ));
    }
    let optional: Vec<&str> =
        inspect["optional"].as_array().map(|l| l.iter().filter_map(|x| x.as_str()).collect()).unwrap_or_default();
    if !optional.is_empty() {
        warnings.push(format!(
            "optional imports outside the standard library, guarded by try/except ImportError: {} \
             (the judge will not have them: your fallback will run)",
            optional.join(", ")
        ));
    }
    let mut timing = None;
    let mut startup = None;
    let mut violations = Vec::new();
    if problems.is_empty() {
        let run_dir = unique_dir(PathBuf::from("gbely-runs").join(format!(
            "{}-check-{}",
            timestamp(),
            file_stem(&path.to_string_lossy())
        )));
        std::fs::create_dir_all(&run_dir)?;
        let map = Arc::new(gbely_world::reference_map());
        let limit = ProcessConfig::default_time_limit();
        let abs = std::fs::canonicalize(path)?;
        let mut cfg = ProcessConfig::new(run_dir.join(".seat0"), run_dir.join("seat0.log"));
        cfg.time_limit = limit;
        let mut agent = ProcessPlayer::new(
            agent_name(&path.to_string_lossy()),
            AgentCommand::Python { file: abs, python: py.clone() },
            cfg,
        )?;
        let mut council = DecidePlayer::new("council", Council::new());
        let mut players: [&mut dyn Player; 2] = [&mut agent, &mut council];
        let rec =
            play(map, &mut players, PlayOptions { config: MatchConfig { rounds: a.rounds }, record: false }, &mut ());
        let mut times = agent.stats.round_seconds.clone();
        times.sort_by(|x, y| x.total_cmp(y));
        let max = times.last().copied().unwrap_or(0.0);
        let p95 = times.get(((times.len() as f64 * 0.95).ceil() as usize).saturating_sub(1)).copied().unwrap_or(0.0);
        timing = Some((max, p95, times.len()));
        violations = rec.violations[0].clone();
        // SPEC §8: the process starts just before its first observation, so the time to answer
        // round 0 is the start-up (interpreter, imports, the first decide) the 2 s limit counts.
        if !violations.iter().any(|(round, _, _)| *round == 0) {
            startup = agent.stats.round_seconds.first().copied();
        }
        for (round, kind, detail) in &violations {
            problems.push(format!("violation in round {round}: {} — {detail}", kind.wire()));
        }
        notes.push(format!(
            "test match: {} rounds against the Council on the reference map; {} cells at the end; {}",
            rec.last_round + 1,
            rec.outcome[0].cells,
            discard_digest(&rec.discards[0])
        ));
        notes.push(format!("log: {}", run_dir.join("seat0.log").display()));
    }
    let ok = problems.is_empty();
    if a.json {
        let doc = json!({
            "file": path.display().to_string(),
            "ok": ok,
            "problems": problems,
            "notes": notes,
            "warnings": warnings,
            "decision_seconds": timing.map(|(max, p95, n)| json!({"max": max, "p95": p95, "rounds": n})),
            "startup_seconds": startup,
            "violations": violations.len(),
        });
        println!("{doc}");
    } else {
        println!("gbely check {}", path.display());
        for n in &notes {
            println!("  ok    {n}");
        }
        if let Some((max, p95, n)) = timing {
            println!(
                "  time  per decision over {n} rounds: max {:.3} s, p95 {:.3} s (limit {:.1} s)",
                max,
                p95,
                constants::ROUND_TIME_LIMIT_S
            );
        }
        if let Some(t) = startup {
            println!("  start-up  {t:.3} s (counts toward round 0's {} s)", constants::ROUND_TIME_LIMIT_S);
        }
        for w in &warnings {
            println!("  WARN  {w}");
        }
        for p in &problems {
            println!("  FAIL  {p}");
        }
        println!("{}", if ok { "the submission passes the check" } else { "the submission would FAIL" });
    }
    Ok(if ok { exit::OK } else { exit::CHECK_FAILED })
}

/// Reads the agent's syntax tree without running it (the structural part of `gbely check`).
///
/// `decide`: what the name is bound to at the end of the module, looking into the bodies of
/// top-level `if`/`else`, `try`/`except`/`else`/`finally` and `with` blocks (branches are
/// alternatives: when one gives a function, the others only warn). A function passes; so do a
/// lambda and `decide = other_function` (callable, and the harness calls it like a function); a
/// call, attribute or subscript passes with a warning (the source cannot say what it gives); any
/// other value (`decide = 42`), a class or an `async def` fails.
///
/// Imports: a module outside the standard library fails, unless every import of it is inside a
/// `try` whose handlers catch `ImportError` (or `ModuleNotFoundError`, `Exception`, a bare
/// `except`): that is an optional import with a fallback, and only a warning.
const INSPECT_PY: &str = r#"
import ast, json, sys
sys.setrecursionlimit(10000)
path = sys.argv[1]
out = {"decide": None, "non_stdlib": [], "optional": [], "syntax_error": None}
try:
    src = open(path, encoding="utf-8-sig").read()
    tree = ast.parse(src, filename=path)
except (SyntaxError, UnicodeDecodeError, ValueError, RecursionError) as e:
    out["syntax_error"] = str(e)
    print(json.dumps(out)); sys.exit(0)

TRY = (ast.Try,) + ((ast.TryStar,) if hasattr(ast, "TryStar") else ())
CATCHES = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}

def catches_import_error(handler):
    t = handler.type
    if t is None:
        return True
    for n in (t.elts if isinstance(t, ast.Tuple) else [t]):
        if (isinstance(n, ast.Name) and n.id in CATCHES) or (isinstance(n, ast.Attribute) and n.attr in CATCHES):
            return True
    return False

required, optional = set(), set()
def imports(node, guarded):
    if isinstance(node, ast.Import):
        (optional if guarded else required).update(a.name.split(".")[0] for a in node.names)
    elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        (optional if guarded else required).add(node.module.split(".")[0])
    if isinstance(node, TRY):
        inner = guarded or any(catches_import_error(h) for h in node.handlers)
        for n in node.body:
            imports(n, inner)
        for n in node.handlers + node.orelse + node.finalbody:
            imports(n, guarded)
        return
    for n in ast.iter_child_nodes(node):
        imports(n, guarded)
imports(tree, False)

MAYBE_CALLABLE = (ast.Call, ast.Attribute, ast.Subscript, ast.IfExp, ast.NamedExpr)
def binding(n):
    """(line, kind, problem) when the statement binds `decide`, else None."""
    if isinstance(n, ast.FunctionDef) and n.name == "decide":
        return (n.lineno, "function", None)
    if isinstance(n, ast.AsyncFunctionDef) and n.name == "decide":
        return (n.lineno, "async", "decide (line %d) is an async function: the harness calls decide(stav) and needs the commands, not a coroutine" % n.lineno)
    if isinstance(n, ast.ClassDef) and n.name == "decide":
        return (n.lineno, "class", "decide (line %d) is a class, not a function decide(stav)" % n.lineno)
    if isinstance(n, (ast.Import, ast.ImportFrom)):
        if any((a.asname or a.name) == "decide" for a in n.names):
            return (n.lineno, "imported", None)
        return None
    if isinstance(n, (ast.Assign, ast.AnnAssign)) and getattr(n, "value", None) is not None:
        targets = n.targets if isinstance(n, ast.Assign) else [n.target]
        if any(isinstance(t, ast.Name) and t.id == "decide" for t in targets):
            v = n.value
            if isinstance(v, ast.Lambda):
                return (n.lineno, "lambda", None)
            if isinstance(v, ast.Name):
                return (n.lineno, "alias", None)
            if isinstance(v, MAYBE_CALLABLE):
                return (n.lineno, "assigned", None)
            return (n.lineno, "value", "decide (line %d) is assigned a value (%s), not a function: define def decide(stav): at the top level" % (n.lineno, type(v).__name__))
    return None

# What `decide` may be bound to after a block: a set of bindings, None for "not bound".
# Branches (if/else, try/except) are alternatives; statements in a row replace each other.
def scan(body, cur):
    for n in body:
        b = binding(n)
        if b is not None:
            cur = {b}
        elif isinstance(n, ast.If):
            cur = scan(n.body, cur) | scan(n.orelse, cur)
        elif isinstance(n, TRY):
            after = scan(n.orelse, scan(n.body, cur))
            for h in n.handlers:
                after = after | scan(h.body, cur | scan(n.body, cur))
            cur = scan(n.finalbody, after)
        elif isinstance(n, (ast.With, ast.AsyncWith)):
            cur = scan(n.body, cur)
    return cur
final = scan(tree.body, {None})
good = sorted(b for b in final if b is not None and b[2] is None)
bad = sorted(b for b in final if b is not None and b[2] is not None)
if good:
    line, kind, _ = good[-1]
    other = [b[2] for b in bad] + (["decide is not defined at all"] if None in final else [])
    out["decide"] = {"line": line, "kind": kind, "problem": None, "maybe": other}
elif bad:
    line, kind, problem = bad[-1]
    out["decide"] = {"line": line, "kind": kind, "problem": problem, "maybe": []}
std = set(getattr(sys, "stdlib_module_names", ())) | set(sys.builtin_module_names) | {"pravidla", "__future__"}
if std:
    out["non_stdlib"] = sorted(n for n in required if n not in std)
    out["optional"] = sorted(n for n in optional - required if n not in std)
print(json.dumps(out))
"#;

fn inspect_source(py: &str, path: &Path) -> Result<serde_json::Value> {
    let out = std::process::Command::new(py)
        .arg("-c")
        .arg(INSPECT_PY)
        .arg(path)
        .output()
        .with_context(|| format!("cannot run the Python interpreter `{py}` (set --python or GBELY_PYTHON)"))?;
    if !out.status.success() {
        bail!("inspecting {} failed: {}", path.display(), String::from_utf8_lossy(&out.stderr).trim());
    }
    Ok(serde_json::from_slice(&out.stdout)?)
}
