//! `my-agent [play] [--rounds N] [--opponent NAME] [--replay FILE.json]`: one match against a
//! built-in agent, in-process, judged as at the competition; prints the summary.
//! `my-agent league [--rounds N] [--maps N]`: a sweep of `margin` against two built-ins.
//! `my-agent serve`: the line protocol on stdin/stdout, for `gbely play --agent-cmd "my-agent serve"`.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use gbely_engine::experiment::{league, Entrant, LeaguePlan};
use gbely_engine::gbely_rules::constants::MAP_SIZE;
use gbely_engine::gbely_world::{generate_duel, reference_map};
use gbely_engine::limits::{Defaults, TimeLimit};
use gbely_engine::recorder::ReplayWriter;
use gbely_engine::{builtin_player, play, play_to, DecidePlayer, MatchConfig, PlayOptions, Player};
use my_agent::MyAgent;

/// The value of `margin` this agent plays with (`league` tries others).
const MARGIN: f64 = 2.0;

const USAGE: &str = "usage: my-agent [play] [--rounds N] [--opponent NAME] [--replay FILE.json]
       my-agent league [--rounds N] [--maps N]
       my-agent serve

opponents: council, council:easy, council:strong, template-rs, expander-rs";

/// The command line, parsed once.
#[derive(Debug)]
enum Cli {
    Play { rounds: u32, opponent: String, replay: Option<String> },
    League { rounds: u32, maps: u32 },
    Serve,
    Help,
}

fn parse(mut args: impl Iterator<Item = String>) -> Result<Cli, String> {
    let mut words: Vec<String> = Vec::new();
    let cmd = match args.next() {
        Some(c) if c == "help" => return Ok(Cli::Help),
        Some(c) if !c.starts_with('-') => c,
        first => {
            words.extend(first);
            "play".to_string()
        }
    };
    words.extend(args);
    let (mut rounds, mut maps, mut opponent, mut replay) = (Defaults::ROUNDS, 4, Defaults::OPPONENT.to_string(), None);
    let mut it = words.into_iter();
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        // A count: a whole number, 1 or more.
        let count = |v: String| match v.parse::<u32>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(format!("{flag} takes a whole number of 1 or more, not `{v}`")),
        };
        match (cmd.as_str(), flag.as_str()) {
            (_, "-h" | "--help") => return Ok(Cli::Help),
            ("play" | "league", "--rounds") => rounds = count(value()?)?,
            ("league", "--maps") => maps = count(value()?)?,
            ("play", "--opponent") => opponent = value()?,
            ("play", "--replay") => replay = Some(value()?),
            _ => return Err(format!("unknown option `{flag}` for `{cmd}`")),
        }
    }
    match cmd.as_str() {
        "play" => Ok(Cli::Play { rounds, opponent, replay }),
        "league" => Ok(Cli::League { rounds, maps }),
        "serve" => Ok(Cli::Serve),
        _ => Err(format!("unknown command `{cmd}`")),
    }
}

fn main() -> ExitCode {
    let cli = match parse(std::env::args().skip(1)) {
        Ok(cli) => cli,
        Err(e) => {
            eprintln!("my-agent: {e}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let run = match cli {
        Cli::Play { rounds, opponent, replay } => cmd_play(rounds, &opponent, replay.as_deref()),
        Cli::League { rounds, maps } => cmd_league(rounds, maps),
        Cli::Serve => cmd_serve(),
        Cli::Help => {
            println!("{USAGE}");
            Ok(())
        }
    };
    match run {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("my-agent: {e}");
            ExitCode::FAILURE
        }
    }
}

fn cmd_play(rounds: u32, opponent: &str, replay: Option<&str>) -> Result<(), String> {
    // Judged as at the competition: a panic in `decide` is a crash violation, an answer slower
    // than 2 s a timeout (the match goes on; the fourth violation disqualifies).
    let mut me = DecidePlayer::new("my-agent", MyAgent::new(MARGIN)).with_time_limit(TimeLimit::JUDGE);
    let mut them = builtin_player(opponent, opponent).ok_or(format!("no built-in agent `{opponent}`\n\n{USAGE}"))?;
    let mut players: [&mut dyn Player; 2] = [&mut me, them.as_mut()];
    let map = Arc::new(reference_map());
    let config = MatchConfig { rounds };
    let rec = match replay {
        // Streamed to the file round by round; plain JSON (a `.gz` needs the engine's `gzip`
        // feature). `gbely replay view FILE` shows it in the browser.
        Some(path) => {
            let writer = ReplayWriter::create(path.as_ref()).map_err(|e| format!("{path}: {e}"))?;
            play_to(map, &mut players, config, writer, &mut ())
        }
        None => play(map, &mut players, PlayOptions { config, record: false }, &mut ()),
    };
    print!("{rec}"); // the summary ends its last line
    if let Some(t) = rec.agents[0] {
        let ms = |s: f64| s * 1000.0;
        println!(
            "  my-agent's answers: slowest {:.2} ms, 95 % within {:.2} ms (the limit: 2 s)",
            ms(t.max_answer_seconds),
            ms(t.p95_answer_seconds)
        );
    }
    if let Some(Err(e)) = &rec.replay_written {
        return Err(format!("the replay was not written: {e}"));
    }
    Ok(())
}

fn cmd_league(rounds: u32, maps: u32) -> Result<(), String> {
    let maps: Vec<_> = (1..=maps)
        .map(|k| generate_duel(&format!("sweep-{k}"), MAP_SIZE, MAP_SIZE).map(Arc::new).map_err(|e| e.to_string()))
        .collect::<Result<_, _>>()?;
    // A sweep is a league of the agent built with each value, and opponents to measure them by.
    let mut entrants: Vec<Entrant> =
        [0.0, MARGIN, 5.0].into_iter().map(|m| Entrant::new(format!("margin {m}"), move || MyAgent::new(m))).collect();
    for name in ["council", "expander-rs"] {
        entrants.push(Entrant::builtin(name).ok_or(format!("no built-in agent `{name}`"))?);
    }
    let plan = LeaguePlan { rounds, ..LeaguePlan::new(maps) };
    let start = Instant::now();
    let result = league(&entrants, &plan);
    let seconds = start.elapsed().as_secs_f64();
    println!("{result}");
    println!("{} matches in {seconds:.1} s: {:.1} matches/s", result.games.len(), result.games.len() as f64 / seconds);
    Ok(())
}

fn cmd_serve() -> Result<(), String> {
    // stderr reaches the agent's log; stdout carries only the answers.
    eprintln!("my-agent: serving (margin {MARGIN})");
    gbely_engine::runner::serve::serve_stdio(&mut MyAgent::new(MARGIN)).map_err(|e| e.to_string())
}
