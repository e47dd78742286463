//! The entries of leagues and A/B tests, shared by every room that runs them (leagues, A/B
//! tests, the stand, the arena): who an entry is (its content identity, [`content_id`]), the
//! error of running them ([`LeagueError`]), and where their results are kept ([`open_db`]).

use std::path::Path;

use rusqlite::Connection;
use serde::Serialize;

use crate::app::runs::agent_spec::AgentSpec;
use crate::app::runs::RunError;

/// Why a league cannot run.
#[derive(Debug, thiserror::Error)]
pub enum LeagueError {
    // Transparent, so that the chain does not print the same message twice.
    #[error(transparent)]
    Run(#[from] RunError),
    #[error("the league database {path}: {error}")]
    Db { path: String, error: rusqlite::Error },
    #[error("the league database {path} was played with {what}; use another --db or the same settings")]
    Settings { path: String, what: String },
    #[error("a league needs at least two entries (add --council to play the Council)")]
    TooFewEntries,
    #[error("entry `{0}` is named twice")]
    Duplicate(String),
    #[error("cannot read agent `{spec}`: {error}")]
    Agent { spec: String, error: std::io::Error },
    /// The Ray backend (see [`crate::app::league::remote`]).
    #[error("{0}")]
    Remote(String),
    /// Settings that do not go together, or out of range (the message names the flag).
    #[error("{0}")]
    Request(String),
    #[error("map `{spec}` has {seats} seats; a league plays duels")]
    NotADuelMap { spec: String, seats: usize },
    #[error("cannot write {path}: {error}")]
    Output { path: String, error: std::io::Error },
}

/// One league entry: an agent and who it is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Entry {
    /// `name@hash`: the key of its results.
    pub id: String,
    pub name: String,
    pub spec: AgentSpec,
    /// FNV-1a 64 of what the entry runs: the file's bytes; a command's line and the bytes of
    /// the program and files it names; the built-in's name and engine version.
    pub hash: String,
}

impl Entry {
    /// The entry of `spec`, shown as `name` (an agent file's own AGENT_NAME and AGENT_VERSION, or
    /// its file name: see [`crate::app::inspect::display_name`]).
    pub fn from_spec(spec: &AgentSpec, name: String) -> Result<Entry, LeagueError> {
        let read = |path: &Path| {
            std::fs::read(path).map_err(|error| LeagueError::Agent { spec: path.display().to_string(), error })
        };
        let content: Vec<u8> = match spec {
            AgentSpec::Builtin(b) => format!("{b} gbely-engine {}", env!("CARGO_PKG_VERSION")).into_bytes(),
            AgentSpec::Example(e) => e.source().as_bytes().to_vec(),
            AgentSpec::Command(cmd) => {
                // The command line and the content of every file it runs: a rebuilt program or
                // an edited script is a new entry, not the old one's results.
                let mut content = spec.to_string().into_bytes();
                for file in crate::app::runs::program::command_files(cmd) {
                    let bytes = read(&file)?;
                    content.extend_from_slice(format!("\0{}\0", file.display()).as_bytes());
                    content.extend_from_slice(&bytes);
                }
                content
            }
            AgentSpec::File(path) => read(path)?,
            AgentSpec::Human => return Err(LeagueError::Run(RunError::HumanIsNoProcess)),
        };
        let hash = content_id(&content);
        Ok(Entry { id: format!("{name}@{}", &hash[..8]), name, spec: spec.clone(), hash })
    }
}

/// The identity of what an entry runs, as its results are stored under: FNV-1a 64 of the bytes,
/// in hex (the stand names agent files' versions by it too).
pub fn content_id(bytes: &[u8]) -> String {
    format!("{:016x}", fnv1a(bytes))
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

/// Opens (or creates, with its folder) an SQLite database and makes sure `schema` exists.
/// Leagues and A/B journals keep their results this way. Gives back the connection and the
/// path as errors name it.
pub fn open_db(path: &Path, schema: &str) -> Result<(Connection, String), LeagueError> {
    let p = path.display().to_string();
    let db = |error| LeagueError::Db { path: p.clone(), error };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        let _ = std::fs::create_dir_all(dir);
    }
    let conn = Connection::open(path).map_err(db)?;
    conn.execute_batch(schema).map_err(db)?;
    Ok((conn, p))
}
