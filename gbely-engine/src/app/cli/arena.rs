//! `gbely arena`: the competition server ([`crate::app::arena`]) and its judge workers.

use super::*;
use crate::app::arena::config::{Config, EXAMPLE};

#[derive(Debug, Subcommand)]
pub(super) enum ArenaCmd {
    /// Serve the competition's site (and judge in its process, `judge.workers` at once) until
    /// Ctrl-C.
    Serve {
        /// The competition's configuration (`gbely arena example > arena.toml` writes one).
        config: PathBuf,
        /// Where to listen (default: 127.0.0.1 and the configuration's port). Put a TLS proxy in
        /// front of it for the internet.
        #[arg(long, value_name = "ADDR:PORT")]
        listen: Option<std::net::SocketAddr>,
        /// The Python interpreter of the agents (default: the configuration's, else
        /// $GBELY_PYTHON, else python3).
        #[arg(long)]
        python: Option<String>,
    },
    /// Judge submissions from the competition's database (beside `serve`, on this or another
    /// machine that shares the data folder) until Ctrl-C.
    Worker {
        config: PathBuf,
        /// Matches judged at once.
        #[arg(long, default_value_t = 1, value_name = "N")]
        jobs: usize,
        #[arg(long)]
        python: Option<String>,
    },
    /// Print a commented configuration to start from.
    Example,
}

pub(super) fn cmd_arena(cmd: ArenaCmd) -> Result<u8> {
    match cmd {
        ArenaCmd::Example => {
            print!("{EXAMPLE}");
            Ok(exit::OK)
        }
        ArenaCmd::Serve { config, listen, python: py } => {
            let config = Config::load(&config)?;
            let py = resolve_python(&python(py.as_deref().or(config.judge.python.as_deref())))?;
            let listen = listen.unwrap_or_else(|| std::net::SocketAddr::from(([127, 0, 0, 1], config.port)));
            let guard = stop_guard()?;
            adopt_orphans();
            let (name, public, data) = (config.name.clone(), config.public_url.clone(), config.data.clone());
            let running = crate::app::arena::serve(config, py, listen)?;
            eprintln!(
                "gbely: {name} is served on {} for {public}\n       (data in {}; {} database; Ctrl-C stops it)",
                running.url,
                data.display(),
                running.arena.store.backend_name()
            );
            while !crate::runner::interrupt::requested() {
                std::thread::sleep(crate::runner::interrupt::POLL);
            }
            eprintln!("gbely: stopping the arena (jobs being judged go back to the queue)");
            running.close();
            kill_leftovers();
            drop(guard);
            Ok(exit::OK)
        }
        ArenaCmd::Worker { config, jobs, python: py } => {
            let config = Config::load(&config)?;
            let py = resolve_python(&python(py.as_deref().or(config.judge.python.as_deref())))?;
            let guard = stop_guard()?;
            adopt_orphans();
            eprintln!("gbely: judging {}'s submissions, {jobs} at once (Ctrl-C stops)", config.name);
            crate::app::arena::work(config, py, jobs)?;
            kill_leftovers();
            drop(guard);
            Ok(exit::OK)
        }
    }
}
