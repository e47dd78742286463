//! The `gbely` command line. One implementation, used by the Rust binary and by
//! `python -m gbely` alike: [`run`] takes the arguments and returns the exit code.
//!
//! This file holds the command-line grammar (clap) and the dispatch; each subcommand lives in
//! its own file.

mod ab;
mod check;
mod final_mode;
mod league;
// `gbely agents`; not named `agents`, which would hide the `agents` crate in this module.
mod external;
mod list_agents;
mod maps;
mod pack;
mod play;
mod replay;
mod rerun;
mod stand;
mod transfer;

use ab::{cmd_ab, AbArgs};
use check::cmd_check;
use final_mode::cmd_final;
use league::{cmd_league, LeagueArgs};
use list_agents::{cmd_agents, AgentsArgs};
use maps::cmd_map;
use pack::cmd_pack;
use play::cmd_play;
use replay::cmd_replay;
use stand::{cmd_stand, StandArgs};
use transfer::{cmd_transfer, TransferArgs, TRANSFER_HELP};

use std::ffi::OsString;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{anyhow, bail, Context, Result};
use clap::{Args, Parser, Subcommand};
use gbely_rules::constants;
use gbely_world::{render_map, write_map_file, Map, MapStats};
use serde_json::json;

use crate::app::runs::agent_spec::AgentSpec;
use crate::app::runs::final_match::{final_seating, final_table};
use crate::app::runs::folders::{timestamp, unique_dir};
use crate::app::runs::interpreter::{python, resolve_python};
use crate::app::runs::maps::{load_final_map, load_map};
use crate::app::runs::results::fairness_notes;
use crate::app::runs::MAX_ROUNDS;
use crate::game::Observer;
use crate::limits::{Defaults, MemoryLimit, TimeLimit};
use crate::runner::sandbox::SandboxMode;
use crate::session::MatchRecord;
use crate::sim::{Match, RoundReport};

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
    /// `replay verify`: the rounds the file holds verify, but it was cut short (its match was
    /// killed before the replay was finished): never a whole match's replay.
    pub const CUT_SHORT: u8 = 6;
    /// `replay rerun`: the agent violated (a timeout, a crash, an unreadable answer) in a round
    /// rerun.
    pub const RERUN_VIOLATION: u8 = 7;
    /// Stopped by Ctrl-C or SIGTERM (128 + SIGINT, as shells report it).
    pub const INTERRUPTED: u8 = 130;
}

const AFTER_HELP: &str = "\
Agents: a Python file with decide(stav) (run in its own process, like the judge does),
`council` (the built-in Council), `template` or `expander` (the example agents, as
Python processes), or cmd:COMMAND (any executable speaking the line protocol).

Exit codes: 0 ok, 1 error, 2 bad usage, 3 your agent was disqualified, 4 `check` failed,
5 `replay verify` found a difference, 6 `replay verify`: the rounds verify but the file was
cut short (its match was killed), 7 `replay rerun`: the agent violated in a round, 130 interrupted (Ctrl-C or SIGTERM: the agents are
stopped and the replay of the rounds played is written, marked interrupted).

Examples:
  gbely my_agent.py                          play against the Council on the reference map
  gbely play my_agent.py --map seed:abc      on a generated 60×60 map
  gbely play a.py --opponent b.py            a duel of two agent files
  gbely check my_agent.py                    the submission check
  gbely final my_agent.py --fill expander    rehearse the 8-army final
  gbely transfer my_agent.py                 its share on the reference map and on final maps
  gbely replay rerun R.json.gz --agent my_agent.py   reproduce the judge's rounds of seat 0
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
    /// A league: every agent against every other on every map, both seat orders, on all cores;
    /// standings with ratings, resumable (results in SQLite).
    League(LeagueArgs),
    /// The agent files of a folder (default `agents/`): name, version, size, and whether their
    /// source passes the check.
    Agents(AgentsArgs),
    /// Is B better than A? Paired matches (seats swapped, same map) and a sequential test that
    /// stops as soon as the evidence is enough; resumable.
    Ab(AbArgs),
    /// Pack a trained policy's weights into an agent file: one standard-library .py of at most
    /// 512 KiB, checked and timed (needs the Python package: pip install gbely).
    Pack(PackArgs),
    /// The stand: a page in the browser to pick agents from a folder and a mode (a duel, the
    /// final, a league, an A/B test; any seat human), play, watch live and keep the history.
    Stand(StandArgs),
    /// The competition server: sign-in by e-mail, uploads, the judge, the leaderboard, the
    /// organisers' pages and the live final (the program `gbely-arena`, beside `gbely` or on
    /// PATH; `gbely arena --help` shows its commands; see docs/arena.md).
    #[command(disable_help_flag = true)]
    Arena {
        /// What `gbely-arena` takes: `serve CONFIG`, `worker CONFIG`, `example`, `--help`.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "ARGS")]
        args: Vec<OsString>,
    },
    /// Transfer to the hidden final: your agent's share on the reference map beside its shares
    /// on generated final maps (eight armies), against each level of the Council, with intervals.
    #[command(after_help = TRANSFER_HELP)]
    Transfer(TransferArgs),
    /// Serve a built-in Rust agent over the line protocol on stdin/stdout (e.g. `council`).
    Serve {
        /// `council`, `council:easy`, `council:strong`, `template-rs` or `expander-rs`.
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
    agent: Option<AgentSpec>,
    /// Run this command as your agent instead of a file (any executable speaking the protocol).
    #[arg(long, value_name = "COMMAND", conflicts_with = "agent")]
    agent_cmd: Option<String>,
    /// The other side: `council` (the default), an agent file, `template`, `expander` or
    /// cmd:COMMAND.
    #[arg(long, short = 'o')]
    opponent: Option<AgentSpec>,
    #[command(flatten)]
    map: MapArgs,
    /// Fork: continue the match of this replay (a duel or a final, complete or cut off) from the
    /// start of --round with the agents given; its map, seats and rounds are the replay's, and a
    /// seat nobody is given keeps the replay's own agent (the Council, a built-in agent). See
    /// docs/debugging.md.
    #[arg(long, value_name = "REPLAY", requires = "round", conflicts_with_all = ["map", "size"])]
    from: Option<PathBuf>,
    /// With --from: the round the agents take over at (the rounds before it are the replay's).
    #[arg(long, value_name = "N", requires = "from")]
    round: Option<u32>,
    /// With --from: the seat your agent plays (default: the first army seat), or SEAT=AGENT to give
    /// any seat an agent (repeatable; `human` plays it from the browser).
    #[arg(long, value_name = "SEAT|SEAT=AGENT", requires = "from")]
    seat: Vec<String>,
    #[command(flatten)]
    run: RunArgs,
}

impl MatchArgs {
    /// The settings of the matches these flags ask for (`play`, `final`, `league`, `ab`, `transfer`).
    fn settings(&self) -> crate::app::requests::MatchSettings {
        crate::app::requests::MatchSettings {
            rounds: self.rounds,
            time_limit: self.time_limit,
            memory_limit: self.memory_limit,
            sandbox: self.sandbox.mode(),
            python: self.python.clone(),
        }
    }
}

/// How each match is played (shared by `play`, `final`, `league` and `ab`).
#[derive(Clone, Debug, Args)]
struct MatchArgs {
    /// Rounds to play: 1–100000.
    #[arg(long, default_value_t = constants::ROUNDS, value_parser = rounds_parser())]
    rounds: u32,
    /// Seconds per round for agent processes: more than 0, at most 3600; `off` for no limit (debugging).
    #[arg(long, default_value_t = Defaults::TIME_LIMIT, value_name = "SECONDS|off", value_parser = parse_time_limit)]
    time_limit: TimeLimit,
    /// The Python interpreter for agent files (default: $GBELY_PYTHON, else python3; on Windows python, else py).
    #[arg(long)]
    python: Option<String>,
    /// Address space allowed to each agent process, in MiB; `off` for no limit.
    #[arg(long, default_value_t = Defaults::MEMORY_LIMIT, value_name = "MIB|off", value_parser = parse_memory_limit)]
    memory_limit: MemoryLimit,
    #[command(flatten)]
    sandbox: SandboxArgs,
}

/// Whether agent processes run in the sandbox (shared by every command that starts agents).
#[derive(Clone, Copy, Debug, Args)]
struct SandboxArgs {
    /// Agent processes in the sandbox (Linux, bubblewrap: no network, no files but their own, their
    /// own processes only, one core each): `auto` where this machine allows it (the summary says
    /// when it does not), `require` to refuse to play without it, `off`.
    #[arg(long = "sandbox", default_value = SandboxMode::DEFAULT.word(), value_name = "MODE")]
    mode: SandboxMode,
    /// The same as --sandbox off: agents run as plain processes (they can read your files).
    #[arg(long, conflicts_with = "mode")]
    no_sandbox: bool,
}

impl SandboxArgs {
    fn mode(&self) -> SandboxMode {
        if self.no_sandbox {
            SandboxMode::Off
        } else {
            self.mode
        }
    }
}

/// How a match is run and reported (shared by `play` and `final`).
#[derive(Debug, Args)]
struct RunArgs {
    #[command(flatten)]
    game: MatchArgs,
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
    #[command(flatten)]
    watch: WatchArgs,
}

/// Watching a match live in the browser, and the human seat (`play` and `final`).
#[derive(Debug, Args)]
struct WatchArgs {
    /// Watch the match in the browser while it is played: the viewer served from 127.0.0.1 at a
    /// private address (a random token in it); a seat named `human` implies it.
    #[arg(long)]
    watch: bool,
    /// With --watch: at most RATE rounds per second (default with --projection: 1).
    #[arg(long, value_name = "RATE", value_parser = parse_watch_speed)]
    watch_speed: Option<f64>,
    /// With --watch: the port on 127.0.0.1 (default: a free one).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// With --watch: print the address, do not open a browser.
    #[arg(long)]
    no_open: bool,
    /// With --watch: open the page in its projection layout, for a hall's screen (the map as
    /// large as it goes, the standings by share in large type, the round and the key moments as
    /// they happen); `P` on the page switches layouts. The match waits for the page's start
    /// button (or S) and plays one round a second unless --watch-speed says otherwise.
    #[arg(long, requires = "watch")]
    projection: bool,
    /// With --watch: start the match once a page is watching it (for scripts; with --projection,
    /// instead of waiting for the start button).
    #[arg(long, requires = "watch")]
    start_when_ready: bool,
    /// With --watch: after the match keep serving the page (the finished match, reloadable)
    /// until Ctrl-C; the default when gbely runs in a terminal.
    #[arg(long)]
    keep_serving: bool,
    /// Seconds the human seat has per round (default: no limit).
    #[arg(long, value_name = "SECONDS", value_parser = parse_time_limit)]
    human_limit: Option<TimeLimit>,
}

fn parse_watch_speed(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && (0.01..=1000.0).contains(&v) => Ok(v),
        _ => Err(format!("`{s}`: give rounds per second from 0.01 to 1000 (e.g. 1)")),
    }
}

/// `--rounds`: 1 to [`MAX_ROUNDS`] (the help texts say the same numbers).
fn rounds_parser() -> clap::builder::RangedI64ValueParser<u32> {
    clap::value_parser!(u32).range(1..=i64::from(MAX_ROUNDS))
}

fn parse_time_limit(s: &str) -> Result<TimeLimit, String> {
    s.parse().map_err(|e: crate::limits::TimeLimitError| e.to_string())
}

#[derive(Debug, Args)]
struct FinalArgs {
    /// Up to eight agents: files, `template`, `expander` or cmd:COMMAND.
    #[arg(required = true, num_args = 1..=8)]
    agents: Vec<AgentSpec>,
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
    /// The Python interpreter (default: $GBELY_PYTHON, else python3; on Windows python, else py).
    #[arg(long)]
    python: Option<String>,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    /// Fail on any violation in the test match too (by default they are warnings: the rules
    /// refuse a file only for what it is, and a match tolerates three violations).
    #[arg(long)]
    strict: bool,
    #[command(flatten)]
    sandbox: SandboxArgs,
}

#[derive(Debug, Args)]
struct PackArgs {
    /// The weights: a .npz (numpy.savez) or a .json object of name → nested lists.
    policy: PathBuf,
    /// The agent source: decide(stav) with pure-Python inference and one line `WEIGHTS = None`.
    agent: PathBuf,
    /// The submission file to write.
    #[arg(long, short = 'o')]
    output: PathBuf,
    /// Rounds of each timing match (reference map and a 90×90 final map).
    #[arg(long, default_value_t = 150, value_parser = rounds_parser())]
    rounds: u32,
    /// Skip the timing matches.
    #[arg(long)]
    no_timing: bool,
    /// How the weights are stored: int8 with a scale per array, or float16 (twice the bytes).
    #[arg(long, default_value = "int8", value_parser = ["int8", "float16"])]
    dtype: String,
    /// The Python interpreter with the gbely package (default: $GBELY_PYTHON or python3).
    #[arg(long)]
    python: Option<String>,
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
        /// The seat: with --observation, whose; else whose notes to print (default: every seat's).
        #[arg(long)]
        seat: Option<u8>,
        /// Print the observation (SPEC §5 JSON, a cell a line) the seat received in the round, and
        /// its answer an item a line, each discarded one marked with why.
        #[arg(long, requires = "seat")]
        observation: bool,
        /// With --observation: the exact observation as one JSON line, its discarded commands
        /// (`[{"index", "reason", "taken_by"}]`, after `# its discarded commands`, when there are
        /// some) and its answer as one JSON line (`{"prikazy": […]}`, after `# its answer`).
        /// Without: the state at the end of the round as the engine re-simulates it, one JSON
        /// line: `{"round", "owner", "units", "fortification", "captures", "failed"}` (per cell,
        /// row-major, -1 neutral, unrounded; the round's events as `[seat, cell, from]`).
        #[arg(long)]
        json: bool,
        /// Colours: auto (when the output is a terminal), always, never.
        #[arg(long, default_value = "auto", value_parser = ["auto", "always", "never"])]
        color: String,
    },
    /// Re-simulate the match and check every round, the final state and the result (answer
    /// times are measured, not played: they are not compared). Given a competition's results
    /// manifest (`manifest.json` of `gbely arena`'s public archive), check every file it names
    /// against its SHA-256, re-simulate every replay and compare the published figures with
    /// each replay's result: one line each, then a summary; exit 5 on any mismatch.
    Verify {
        /// A replay (`.json.gz`, `.json`) or a results manifest (`manifest.json`).
        file: PathBuf,
        /// For a fork (`gbely play --from`): the replay it was forked from, to check that it is
        /// (its SHA-256) and that the fork's rounds before the fork are its rounds.
        #[arg(long, value_name = "REPLAY")]
        source: Option<PathBuf>,
    },
    /// Reproduce what the judge saw: feed your agent the observations a seat received in a
    /// replay, round by round, under the judge's clock and in the sandbox, and report where its
    /// answer differs from the recorded one, where it violates and how long it took.
    #[command(after_help = RERUN_HELP)]
    Rerun(RerunArgs),
    /// Shares and units per round, captures, discarded commands per side.
    Stats {
        file: PathBuf,
        /// As one JSON document.
        #[arg(long)]
        json: bool,
    },
}

const RERUN_HELP: &str = "\
Each round the agent gets the exact observation the seat received in the replay (rebuilt by
re-simulating the recorded answers, as `replay show --observation` prints it), whatever it
answers now: the match does not change. It runs as in a match: its own process, in the
sandbox where this machine allows it, --time-limit per round from sending the observation
(start-up included in its first round), restarted before the next round after a violation.
Where the replay records a violation that the rerun does not repeat, the agent is restarted
too, so its memory is lost where the judge's agent lost it. With --rounds A..B the agent
starts fresh at round A (the judge's had played the rounds before).

Answers are compared as the engine parses them: command by command (a discarded item by its
reason), not as text. Notes (`debug`) are not compared. The report lists the rounds that
differ, violate or take more than 80% of the limit, then a summary; --json lists every round.

Exit codes: 0 the agent did not violate in any round rerun (its answers may differ), 7 it
violated in some round (a timeout, a crash or an unreadable answer: the report says which
rounds and whether the replay has them too), 1 error, 130 interrupted.

Examples:
  gbely replay rerun replay.json.gz --agent my_agent.py              seat 0, every round
  gbely replay rerun replay.json.gz --agent my_agent.py --rounds 80..90
  gbely replay rerun final.json.gz --seat 3 --agent my_agent.py --json";

/// `gbely replay rerun`.
#[derive(Debug, Args)]
struct RerunArgs {
    /// The replay (`.json` or `.json.gz`): one `gbely play` wrote, or the arena's.
    file: PathBuf,
    /// The seat whose observations the agent gets (0 is the first agent of a duel).
    #[arg(long, default_value_t = 0)]
    seat: u8,
    /// The agent that answers now: a Python file with decide(stav), or cmd:COMMAND.
    #[arg(long)]
    agent: AgentSpec,
    /// The rounds to rerun: A..B (both included), A.., ..B or one round (default: all).
    #[arg(long, value_name = "A..B", value_parser = parse_rerun_rounds)]
    rounds: Option<(Option<u32>, Option<u32>)>,
    /// Seconds per round: more than 0, at most 3600; `off` for no limit (debugging).
    #[arg(long, default_value_t = Defaults::TIME_LIMIT, value_name = "SECONDS|off", value_parser = parse_time_limit)]
    time_limit: TimeLimit,
    /// Address space allowed to the agent process, in MiB; `off` for no limit.
    #[arg(long, default_value_t = Defaults::MEMORY_LIMIT, value_name = "MIB|off", value_parser = parse_memory_limit)]
    memory_limit: MemoryLimit,
    /// The Python interpreter for agent files (default: $GBELY_PYTHON, else python3; on Windows python, else py).
    #[arg(long)]
    python: Option<String>,
    #[command(flatten)]
    sandbox: SandboxArgs,
    /// Folder for the agent's log (default: gbely-runs/<time>-rerun-…).
    #[arg(long)]
    run_dir: Option<PathBuf>,
    /// Print the report as one JSON document on stdout (every round, with its time).
    #[arg(long)]
    json: bool,
    /// No progress on stderr.
    #[arg(long, short = 'q')]
    quiet: bool,
}

fn parse_rerun_rounds(s: &str) -> Result<(Option<u32>, Option<u32>), String> {
    crate::app::rerun::parse_round_range(s)
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
        Ok(load_map(self.spec.as_deref().unwrap_or(&self.args.map), self.args.size.as_deref())?)
    }
}

fn parse_memory_limit(s: &str) -> Result<MemoryLimit, String> {
    s.parse().map_err(|e: crate::limits::MemoryLimitError| format!("`{s}`: {e}"))
}

/// Runs the command line; `args` includes the program name.
pub fn run(args: Vec<OsString>) -> ExitCode {
    ExitCode::from(run_code(args))
}

/// Opens a page or file in the default browser; false when none could be started.
fn open_in_browser(target: &str) -> bool {
    let (program, args): (&str, &[&str]) = if cfg!(windows) {
        ("cmd", &["/C", "start", ""])
    } else if cfg!(target_os = "macos") {
        ("open", &[])
    } else {
        ("xdg-open", &[])
    };
    std::process::Command::new(program)
        .args(args)
        .arg(target)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// How long the `gbely` command may take to stop cleanly after Ctrl-C or SIGTERM before it exits
/// anyway (see [`crate::runner::interrupt::Guard::install_exiting`]).
pub const STOP_GRACE: std::time::Duration = std::time::Duration::from_secs(10);

/// The Ctrl-C and SIGTERM handlers of a command that plays matches. The command line owns its
/// process (the `gbely` binary, `python -m gbely`; libraries such as `gbely.league` build
/// requests instead), so a signal always stops it: a second at once, else after [`STOP_GRACE`].
pub fn stop_guard() -> Result<crate::runner::interrupt::Guard> {
    crate::runner::interrupt::Guard::install_exiting(STOP_GRACE).context("cannot install the Ctrl-C handler")
}

/// Adopts the orphans of agent descendants: the command line owns its process (the `gbely`
/// binary, `python -m gbely`). A library caller (`gbely.league`) does not: its program's other
/// children (a user's daemons, a Ray head) are not ours. Agent descendants are found by their
/// token either way.
fn adopt_orphans() {
    crate::runner::process::become_subreaper();
}

/// Kills what agents left behind (the command line owns its process: see [`adopt_orphans`]).
fn kill_leftovers() {
    crate::runner::process::kill_orphans();
}

/// Prints a `--json` document on stdout.
fn emit_json(doc: serde_json::Value) -> Result<()> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer(&mut out, &doc)?;
    writeln!(out)?;
    Ok(())
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
    const KNOWN: [&str; 14] = [
        "play", "check", "map", "serve", "help", "replay", "final", "league", "agents", "ab", "pack", "stand", "arena",
        "transfer",
    ];
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
        Cmd::League(a) => cmd_league(a),
        Cmd::Agents(a) => cmd_agents(a),
        Cmd::Stand(a) => cmd_stand(a),
        Cmd::Arena { args } => external::run(external::ARENA, &args),
        Cmd::Ab(a) => cmd_ab(a),
        Cmd::Pack(a) => cmd_pack(a),
        Cmd::Transfer(a) => cmd_transfer(a),
        Cmd::Serve { name } => match crate::builtins::builtin_agent(&name) {
            Some(mut agent) => {
                crate::runner::serve::serve_stdio(agent.as_mut())?;
                Ok(exit::OK)
            }
            None => {
                bail!("no built-in Rust agent `{name}` (available: {})", crate::builtins::BUILTIN_AGENTS.join(", "))
            }
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
