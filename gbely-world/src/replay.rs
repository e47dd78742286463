//! The replay format, version 1 (schema in `docs/replay-format.md`).
//!
//! One JSON document per match: the whole map (as a map file, with its fingerprint), the seats,
//! every round's answers of every side exactly as received, discarded commands with reasons,
//! violations, per-round figures, per-round cell changes, the final state and the result.
//!
//! Cells are written as row-major indices; owners as seat numbers, `-1` for neutral.
//! Per-round `changes` list the cells whose state at the end of the round differs from the state
//! right after that round's production (so production itself, which follows from the map, is not
//! stored): the state of any round is rebuilt by replaying production and changes from the start.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::map::Map;
use crate::mapfile::{parse_map_file, MapFileError};

pub const REPLAY_FORMAT: &str = "gbely-replay";
pub const REPLAY_VERSION: u32 = 1;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Replay {
    /// Always `gbely-replay`.
    pub format: String,
    /// [`REPLAY_VERSION`].
    pub version: u32,
    /// The engine version that wrote it (`gbely-engine 0.1.0`).
    pub engine: String,
    pub map: MapRecord,
    /// `duel` or `final`.
    pub mode: String,
    /// Rounds the match was configured for (150 by default).
    pub rounds: u32,
    pub seats: Vec<SeatRecord>,
    pub turns: Vec<Turn>,
    #[serde(rename = "final")]
    pub final_state: FinalState,
    pub result: MatchResult,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MapRecord {
    pub name: String,
    pub fingerprint: String,
    pub width: u32,
    pub height: u32,
    /// The whole map in the map file format.
    pub file: String,
}

impl MapRecord {
    pub fn of(map: &Map) -> MapRecord {
        MapRecord {
            name: map.name().to_string(),
            fingerprint: map.fingerprint(),
            width: map.width(),
            height: map.height(),
            file: crate::write_map_file(map),
        }
    }

    /// Rebuilds the map and checks its fingerprint.
    pub fn to_map(&self) -> Result<Map, ReplayError> {
        let map = parse_map_file(&self.file).map_err(ReplayError::Map)?;
        if map.fingerprint() != self.fingerprint {
            return Err(ReplayError::Fingerprint { expected: self.fingerprint.clone(), found: map.fingerprint() });
        }
        Ok(map)
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeatRecord {
    pub seat: u8,
    /// Who played it (`council`, an agent file name, a command).
    pub name: String,
    /// `army` or `council`.
    pub role: String,
    /// The home base id.
    pub base: String,
}

/// What one seat did in one round.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Answer {
    /// The command list exactly as received (JSON values in the agent's own key order).
    Commands(Vec<Value>),
    /// A violation: the round's commands are lost (SPEC §8).
    Violation(Violation),
    /// Not in the game any more (eliminated or disqualified).
    Out,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Violation {
    /// `timeout`, `crash`, `unreadable`.
    pub kind: String,
    /// What happened, for the user (`no answer within 2.0 s`).
    pub detail: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Discarded {
    pub seat: u8,
    /// Index of the command in the seat's list.
    pub index: u32,
    /// A [`gbely_rules::DiscardReason`] code.
    pub reason: String,
}

/// One cell's state: `[cell, owner, units, fortification]`, owner `-1` for neutral.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct CellChange(pub u32, pub i8, pub f64, pub f64);

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Turn {
    pub round: u32,
    /// One entry per seat.
    pub answers: Vec<Answer>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub discarded: Vec<Discarded>,
    /// Cells owned per seat at the end of the round.
    pub cells: Vec<u32>,
    /// Units per seat at the end of the round.
    pub units: Vec<f64>,
    pub changes: Vec<CellChange>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FinalState {
    /// Per cell, row-major: owner seat or -1.
    pub owner: Vec<i8>,
    pub units: Vec<f64>,
    pub fortification: Vec<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MatchResult {
    /// The last round played.
    pub last_round: u32,
    /// `rounds`, `elimination`, `disqualification` or `council_fell`.
    pub ended_by: String,
    /// Round in which the Council's seat lost its last cell, if it did (the blitz record).
    pub council_fell: Option<u32>,
    pub sides: Vec<SideResult>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SideResult {
    pub seat: u8,
    pub name: String,
    pub cells: u32,
    /// `owned / cells × 100`; `None` when disqualified.
    pub score: Option<f64>,
    /// First round at whose end the side owned at least its final number of cells.
    pub tiebreak_round: Option<u32>,
    pub violations: u32,
    pub disqualified: bool,
    /// Round at whose end the side had no cell, if it happened.
    pub eliminated: Option<u32>,
}

/// Why a replay document was refused. Each message says its cause itself; none is also chained as
/// a `source`, so a report that walks the chain says it once.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error("not a replay: {0}")]
    Json(serde_json::Error),
    #[error("not a gbely replay (format `{0}`)")]
    Format(String),
    #[error("replay version {0} is not supported (this build reads {REPLAY_VERSION})")]
    Version(u32),
    #[error("the replay's map: {0}")]
    Map(MapFileError),
    #[error("the replay's map fingerprint is {expected} but its map file gives {found}")]
    Fingerprint { expected: String, found: String },
}

impl Replay {
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a replay always serializes")
    }

    pub fn from_json(text: &str) -> Result<Replay, ReplayError> {
        // Check the header first so a wrong file gets a clear error rather than a missing field.
        let head: Value = serde_json::from_str(text).map_err(ReplayError::Json)?;
        match head.get("format").and_then(Value::as_str) {
            Some(REPLAY_FORMAT) => {}
            other => return Err(ReplayError::Format(other.unwrap_or("none").to_string())),
        }
        match head.get("version").and_then(Value::as_u64) {
            Some(v) if v == REPLAY_VERSION as u64 => {}
            other => return Err(ReplayError::Version(other.unwrap_or(0) as u32)),
        }
        serde_json::from_value(head).map_err(ReplayError::Json)
    }
}
