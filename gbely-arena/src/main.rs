//! `gbely-arena` (run as `gbely arena …`): the competition server ([`gbely_arena`]) and its judge
//! workers.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{anyhow, bail, Context, Result};
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
    /// Judge submissions until Ctrl-C: over HTTP with `--server URL` and a worker token (on any
    /// machine: it needs neither the database nor the data folder), or from the competition's
    /// database with CONFIG (beside `serve`, on a machine that shares the data folder).
    #[command(after_help = "Over HTTP the token is read from $GBELY_WORKER_TOKEN or from --token-file, never \
                            from the command line (other users of the machine would see it). An organiser \
                            issues tokens on the organisers' page (/org, Workers).\n\nExample:\n  \
                            GBELY_WORKER_TOKEN=gbw_… gbely arena worker --server https://cup.example --jobs 2")]
    Worker {
        /// The competition's configuration (a judge of the database; not with --server).
        // The HTTP worker's options conflict with it: `requires = "server"` on them does not hold
        // here, clap lets a required argument go when it conflicts with one given.
        #[arg(required_unless_present = "server", conflicts_with_all = ["server", "token_file", "folder", "measure_every"])]
        config: Option<PathBuf>,
        /// The competition's address (its public URL): judge over HTTP with a worker token.
        #[arg(long, value_name = "URL")]
        server: Option<String>,
        /// A file holding the worker token (default: $GBELY_WORKER_TOKEN).
        #[arg(long, value_name = "FILE", requires = "server")]
        token_file: Option<PathBuf>,
        /// Where a job's files are kept while it is judged (over HTTP; one worker a folder: what
        /// a killed worker left there is removed at start; default: a folder in the system's
        /// temporary folder, removed at the end).
        #[arg(long, value_name = "DIR", requires = "server")]
        folder: Option<PathBuf>,
        /// Matches judged at once.
        #[arg(long, default_value_t = 1, value_name = "N")]
        jobs: usize,
        /// Seconds between two measurements of this machine's speed (over HTTP; the server
        /// gives no job to a worker slower than its `judge.min_speed`).
        #[arg(long, value_name = "SECONDS", default_value_t = gbely_arena::speed::EVERY.as_secs(),
              value_parser = clap::value_parser!(u64).range(1..))]
        measure_every: u64,
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
        ArenaCmd::Worker { config: Some(config), jobs, python: py, .. } => {
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
        ArenaCmd::Worker { config: None, server, token_file, folder, jobs, measure_every, python: py } => {
            let server = server.unwrap_or_default();
            if !(server.starts_with("http://") || server.starts_with("https://")) {
                bail!("--server {server:?}: the competition's address starts with http:// or https://");
            }
            let token = match &token_file {
                Some(file) => std::fs::read_to_string(file)
                    .with_context(|| format!("the worker token's file {}", file.display()))?,
                None => std::env::var("GBELY_WORKER_TOKEN").map_err(|_| {
                    anyhow!("no worker token: set $GBELY_WORKER_TOKEN or give --token-file (an organiser issues one on /org)")
                })?,
            };
            let token = token.trim().to_string();
            if !token.starts_with(gbely_arena::workers::TOKEN_PREFIX) {
                bail!("the worker token does not look like one (it starts with gbw_): ask the organisers for it");
            }
            let py = resolve_python(&python(py.as_deref()))?;
            let (folder, temporary) = match folder {
                Some(f) => (f, false),
                None => (std::env::temp_dir().join(format!("gbely-worker-{}", std::process::id())), true),
            };
            let guard = stop_guard()?;
            become_subreaper();
            eprintln!("gbely: judging {server}'s submissions over HTTP, {jobs} at once (Ctrl-C stops)");
            let options = gbely_arena::remote::RemoteOptions {
                server,
                token,
                python: py,
                jobs,
                folder: folder.clone(),
                measure_every: std::time::Duration::from_secs(measure_every),
            };
            let worked = gbely_arena::remote::work_remote(options);
            kill_orphans();
            if temporary {
                let _ = std::fs::remove_dir_all(&folder);
            }
            drop(guard);
            Ok(worked?)
        }
    }
}
