//! `gbely-arena` (run as `gbely arena …`): the competition server ([`gbely_arena`]) and its judge
//! workers.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::{Parser, Subcommand};
use gbely_arena::config::{Config, EXAMPLE};
use gbely_engine::app::cli::stop_guard;
use gbely_engine::app::runs::interpreter::{python, resolve_python};
use gbely_engine::runner::interrupt::{requested, POLL};
use gbely_engine::runner::process::{become_subreaper, kill_orphans};

/// The competition server: sign-in by e-mail, uploads, the judge, the leaderboard, the
/// organisers' pages and the live final (see docs/arena.md).
#[derive(Debug, Parser)]
#[command(name = "gbely arena", version, bin_name = "gbely arena")]
struct Cli {
    #[command(subcommand)]
    command: ArenaCmd,
}

#[derive(Debug, Subcommand)]
enum ArenaCmd {
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gbely: error: {e:#}");
            // `gbely`'s exit code for a runtime error.
            ExitCode::from(gbely_engine::app::cli::exit::ERROR)
        }
    }
}

fn run(cmd: ArenaCmd) -> Result<()> {
    match cmd {
        ArenaCmd::Example => {
            print!("{EXAMPLE}");
            Ok(())
        }
        ArenaCmd::Serve { config, listen, python: py } => {
            let config = Config::load(&config)?;
            let py = resolve_python(&python(py.as_deref().or(config.judge.python.as_deref())))?;
            let listen = listen.unwrap_or_else(|| std::net::SocketAddr::from(([127, 0, 0, 1], config.port)));
            let guard = stop_guard()?;
            become_subreaper();
            let (name, public, data) = (config.name.clone(), config.public_url.clone(), config.data.clone());
            let running = gbely_arena::serve(config, py, listen)?;
            eprintln!(
                "gbely: {name} is served on {} for {public}\n       (data in {}; {} database; Ctrl-C stops it)",
                running.url,
                data.display(),
                running.arena.store.backend_name()
            );
            if let Some(note) = running.arena.clock_note() {
                eprintln!("gbely: {note}");
            }
            while !requested() {
                std::thread::sleep(POLL);
            }
            eprintln!("gbely: stopping the arena (jobs being judged go back to the queue)");
            running.close();
            kill_orphans();
            drop(guard);
            Ok(())
        }
        ArenaCmd::Worker { config, jobs, python: py } => {
            let config = Config::load(&config)?;
            let py = resolve_python(&python(py.as_deref().or(config.judge.python.as_deref())))?;
            let guard = stop_guard()?;
            become_subreaper();
            eprintln!("gbely: judging {}'s submissions, {jobs} at once (Ctrl-C stops)", config.name);
            gbely_arena::work(config, py, jobs)?;
            kill_orphans();
            drop(guard);
            Ok(())
        }
    }
}
