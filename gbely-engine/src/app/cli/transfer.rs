//! `gbely transfer`: the command line of [`crate::app::transfer`].

use super::*;
use crate::app::service::AgentLimits;
use crate::app::transfer::{transfer, Setting, TransferPlan};

pub(super) const TRANSFER_HELP: &str = "\
The board plays one match: the reference map `gbely`, a duel against `council`. The final
is another map (90×90, eight armies in corners and edge midpoints, the Council reinforced in
the centre). This plays your agent, for each level of the Council (council:easy, council —
the board's —, council:strong), on the reference map and on --maps generated final maps
(seed:SEED-1 … seed:SEED-N) as one of eight finalists beside the built-in expander-rs and
template-rs, seated where each map's seed puts it, and reports its share of the map's cells
at the end: the mean over the maps with its 95% Student-t interval (none for one map), and
its mean place among the finalists. A share far lower on the final maps than on the
reference map is an agent tuned to the reference map.

Each match is played as `gbely play` plays it (the agent in its own process, in the sandbox
where this machine allows it, under --time-limit); matches run --jobs at a time. Progress
goes to stderr, the table (or with --json one document) to stdout.

Exit codes: 0 ok, 1 error, 130 interrupted (the table holds the matches played).

Examples:
  gbely transfer my_agent.py                       4 final maps, 150 rounds
  gbely transfer my_agent.py --maps 10 --json      a tighter interval, as JSON
  gbely transfer expander --maps 2 --rounds 30     a quick look";

/// `gbely transfer`.
#[derive(Debug, Args)]
pub(super) struct TransferArgs {
    /// Your agent: a Python file with decide(stav), `template`, `expander`, a built-in agent or cmd:COMMAND.
    agent: AgentSpec,
    /// Generated final maps to play (more maps, a tighter interval; each map is three matches).
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=1000))]
    maps: u32,
    /// The final maps' seeds: SEED-1 … SEED-N.
    #[arg(long, default_value = "transfer")]
    seed: String,
    /// Side of the generated final maps (the final's is 90).
    #[arg(long, default_value_t = 90)]
    size: u32,
    /// Matches at once (default: one per core).
    #[arg(long)]
    jobs: Option<usize>,
    #[command(flatten)]
    game: MatchArgs,
    /// Folder for the agents' logs, a folder per match (default: gbely-runs/<time>-transfer-…).
    #[arg(long)]
    run_dir: Option<PathBuf>,
    /// Print the report as one JSON document on stdout (every match's share too).
    #[arg(long)]
    json: bool,
    /// No progress on stderr.
    #[arg(long, short = 'q')]
    quiet: bool,
}

pub(super) fn cmd_transfer(a: TransferArgs) -> Result<u8> {
    a.agent.check()?;
    let python = play::run_python(a.game.python.as_deref(), std::slice::from_ref(&a.agent))?.unwrap_or_default();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let plan = TransferPlan {
        agent: a.agent.clone(),
        maps: a.maps as usize,
        rounds: a.game.rounds,
        seed: a.seed.clone(),
        size: a.size,
        // Agent processes take turns on the cores, so none thinks without one (as `gbely ab`).
        limits: AgentLimits { cores: Some(crate::runner::cores::CoreGate::new(cores)), ..a.game.settings().limits() },
        python,
        run_dir: a.run_dir.clone().unwrap_or_else(|| {
            unique_dir(Path::new(Defaults::RUNS_FOLDER).join(format!("{}-transfer-{}", timestamp(), a.agent.stem())))
        }),
        jobs: a.jobs.unwrap_or(cores).max(1),
    };
    let mut progress = |done: usize, total: usize, m: &crate::app::transfer::Measured| {
        if a.quiet {
            return;
        }
        let rank = match (m.setting, m.rank) {
            (Setting::Final, Some(k)) => format!(", place {k} of 8"),
            _ => String::new(),
        };
        let dq = if m.disqualified { ", disqualified" } else { "" };
        eprintln!(
            "[{done}/{total}] {} {} vs {}: share {:.1} %{rank}{dq}",
            m.setting.wire(),
            m.map,
            m.council,
            m.share * 100.0
        );
    };
    let guard = stop_guard()?;
    adopt_orphans();
    let report = transfer(&plan, &mut progress);
    kill_leftovers();
    drop(guard);
    let report = report?;
    if a.json {
        emit_json(report.to_json())?;
    } else {
        std::io::stdout().lock().write_all(report.text().as_bytes())?;
    }
    Ok(if report.interrupted { exit::INTERRUPTED } else { exit::OK })
}
