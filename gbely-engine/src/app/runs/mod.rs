//! Setting up runs, shared by the command line and the Python package, one room per topic:
//!
//! * [`maps`]: the maps a user names (`gbely`, `seed:TEXT`, files, `--size`, final maps);
//! * [`interpreter`]: which Python runs Python agents;
//! * [`agent_spec`]: what an agent spec names ([`agent_spec::AgentSpec`]: a file, an example, a
//!   built-in, a command, the human seat), parsed once; its display name, the check that it can
//!   run, how it starts; [`program`]: `cmd:` commands' words and
//!   whether a program (and its `#!` interpreter) can be started;
//! * [`fork`]: a match continued from any round of a replay;
//! * [`folders`]: run folders (the players of a match, with their limits, are built by
//!   [`service`](crate::app::service));
//! * [`results`]: the result document and the summary's notes;
//! * [`final_match`]: the final's seating and table.
//!
//! [`RunError`] is the one error of them all.

pub mod agent_spec;
pub mod final_match;
pub mod folders;
pub mod fork;
pub mod interpreter;
pub mod maps;
pub mod program;
pub mod results;

/// Why a run cannot be set up: each names what is wrong and where, in one line.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("bad --size `{0}`: expected N or WxH, e.g. 60 or 90x60")]
    BadSize(String),
    #[error("--size applies to generated maps, not to the map file {0}")]
    SizeOfMapFile(String),
    #[error("cannot read the map `{path}` (give `gbely`, `seed:TEXT` or a map file): {error}")]
    MapUnreadable { path: String, error: std::io::Error },
    #[error("{path}: {error}")]
    MapFile { path: String, error: gbely_world::MapFileError },
    // Transparent: the generator's message is the whole message, once (an `{0}` with `#[from]`
    // made it the source too, and the error chain printed it twice).
    #[error(transparent)]
    Generate(#[from] gbely_world::GenError),
    #[error("map `{map}` is not a final map: {why}")]
    NotAFinalMap { map: String, why: &'static str },
    #[error("--seat: {0}")]
    Seating(String),
    #[error("cannot run the Python interpreter `{python}`: {error} (set --python or GBELY_PYTHON)")]
    NoPython { python: String, error: std::io::Error },
    #[error("`cmd:` needs a command, e.g. cmd:\"./my_agent --fast\"")]
    EmptyCommand,
    #[error("agent `{spec}`: {why}")]
    ProgramCannotRun { spec: String, why: String },
    #[error(
        "agent `{0}` not found: give a Python file with decide(stav), `council`, `template`, `expander` or cmd:COMMAND"
    )]
    AgentNotFound(String),
    #[error("the human seat is played on the match's page, not started as a program")]
    HumanIsNoProcess,
    #[error("agent `{0}` is a folder, not a file")]
    AgentIsAFolder(String),
    #[error("agent `{spec}`: {why}")]
    AgentNotAFile { spec: String, why: String },
    #[error("reading {path} failed: {why}")]
    Inspect { path: String, why: String },
    #[error("preparing agent `{spec}` in {dir}: {error}")]
    Prepare { spec: String, dir: String, error: std::io::Error },
    #[error("map `{map}` has {seats} seats but {given} agents were given")]
    Seats { map: String, seats: usize, given: usize },
    #[error("rounds: {0} is out of range: a match plays 1 to {MAX_ROUNDS} rounds")]
    Rounds(u32),
    #[error("cannot write the replay to {path}: {error}")]
    Replay { path: String, error: std::io::Error },
    #[error("cannot create the run folder {dir}: {error}")]
    RunFolder { dir: String, error: std::io::Error },
    #[error("the replay to continue from does not fit this match: {0}")]
    Resume(String),
    /// A fork that cannot be made (`fork::fork_at`): the message says why.
    #[error("{0}")]
    Fork(String),
    /// The fork points of a paired-fork A/B test (`gbely ab --from-replays`): none, or a setting
    /// that does not fit the replays.
    #[error("{0}")]
    ForkPoints(String),
}

type Result<T, E = RunError> = std::result::Result<T, E>;

/// The most rounds a match may be asked to play: as many as a replay may hold, so that every
/// match the command line plays can be read back.
pub const MAX_ROUNDS: u32 = gbely_world::replay::MAX_ROUNDS;
