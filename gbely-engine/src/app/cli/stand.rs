//! `gbely stand`: the stand ([`crate::app::stand`]) until Ctrl-C.

use super::*;
use crate::app::stand::{start, StandConfig};

#[derive(Debug, Args)]
pub(super) struct StandArgs {
    /// The agents' folder: its agent files (*.py) and map files (*.map) are offered, and followed
    /// as they are added, edited and removed.
    #[arg(default_value = "agents")]
    folder: PathBuf,
    /// Where the history (stand.sqlite) and every run's replay and logs are kept.
    #[arg(long, default_value = "gbely-stand", value_name = "DIR")]
    data: PathBuf,
    /// The port on 127.0.0.1 (default: a free one).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Print the address, do not open a browser.
    #[arg(long)]
    no_open: bool,
    /// Runs played at once (default: the cores); a league or an A/B test spreads its own matches
    /// over the cores.
    #[arg(long, value_name = "N")]
    jobs: Option<usize>,
    /// Rounds of each agent file's test match (the check).
    #[arg(long, default_value_t = 30, value_parser = rounds_parser())]
    check_rounds: u32,
    /// The Python interpreter (default: $GBELY_PYTHON, else python3; on Windows python, else py).
    #[arg(long)]
    python: Option<String>,
    #[command(flatten)]
    sandbox: SandboxArgs,
}

pub(super) fn cmd_stand(a: StandArgs) -> Result<u8> {
    if !a.folder.exists() {
        // The usual first try: `gbely stand` in a folder without `agents/`.
        bail!(
            "the agents' folder {0} does not exist: name the folder of your agent files (`gbely stand FOLDER`, \
             e.g. `gbely stand .`), or create it (`mkdir {0}`) and copy agent files (*.py) into it",
            a.folder.display()
        );
    }
    let py = resolve_python(&python(a.python.as_deref()))?;
    let jobs = a.jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())).max(1);
    let guard = stop_guard()?;
    adopt_orphans();
    let running = start(StandConfig {
        folder: a.folder.clone(),
        data: a.data.clone(),
        port: a.port,
        python: py,
        jobs,
        check_rounds: a.check_rounds,
        sandbox: a.sandbox.mode(),
    })?;
    eprintln!(
        "gbely: the stand of {} is at {}\n       (history and replays in {}; Ctrl-C stops it)",
        a.folder.display(),
        running.url,
        a.data.display()
    );
    if !a.no_open {
        let _ = open_in_browser(&running.url);
    }
    while !crate::runner::interrupt::requested() {
        std::thread::sleep(crate::runner::interrupt::POLL);
    }
    eprintln!("gbely: stopping the stand (running matches are stopped, their replays kept)");
    running.close();
    kill_leftovers();
    drop(guard);
    Ok(exit::OK)
}
