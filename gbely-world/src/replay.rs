//! The replay format, version 4 (versions 1 to 3 still read; schema in `docs/replay-format.md`).
//!
//! One JSON document per match: the whole map (as a map file, with its fingerprint), the seats,
//! every round's answers of every side exactly as received, discarded commands with reasons,
//! violations, per-round figures, per-round cell changes, the final state and the result.
//!
//! Cells are written as row-major indices; owners as seat numbers, `-1` for neutral.
//! Per-round `changes` list the cells whose state at the end of the round differs from the state
//! right after that round's production (so production itself, which follows from the map, is not
//! stored): the state of any round is rebuilt by replaying production and changes from the start.
//!
//! A document is checked once, when it is read ([`Replay::from_json`], [`Replay::check`]): every
//! count, seat, cell and owner in it fits its map, so readers index by them and size work by them
//! without checking again.

use std::cell::Cell as StdCell;
use std::collections::BTreeMap;
use std::marker::PhantomData;

use gbely_rules::{DiscardReason, EndReason, Mode, SeatRole, ViolationKind};
use serde::de::{Error as _, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::map::{Map, MAX_SEATS};
use crate::mapfile::{parse_map_file, MapFileError, MAX_SIDE};

pub const REPLAY_FORMAT: &str = "gbely-replay";
pub const REPLAY_VERSION: u32 = 4;
/// The versions this build reads: 1 (every answer as received, every round's cell changes),
/// 2 (commands in a compact columnar form, the Council's commands regenerated, no cell changes:
/// re-simulation rebuilds them), 3 (version 2 with the compact answers' cells written as
/// steps, [`CellsForm::Steps`], and whole amounts as integers) and 4 (version 3 with each
/// round's answer times, [`Turn::answer_ms`], and where a forked match came from,
/// [`Replay::fork`]).
pub const READS_VERSIONS: [u32; 4] = [1, 2, 3, 4];

/// A whole match. One read by [`Replay::from_json`] or [`Replay::from_reader`] has the structure
/// [`Replay::check`] describes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Replay {
    /// Always `gbely-replay`.
    #[serde(deserialize_with = "held_string")]
    pub format: String,
    /// [`REPLAY_VERSION`].
    pub version: u32,
    /// The engine version that wrote it (`gbely-engine 0.1.0`).
    #[serde(deserialize_with = "held_string")]
    pub engine: String,
    pub map: MapRecord,
    /// `duel` or `final`.
    pub mode: Mode,
    /// Rounds the match was configured for (150 by default).
    pub rounds: u32,
    #[serde(deserialize_with = "per_seat")]
    pub seats: Vec<SeatRecord>,
    /// Version 4: the match was forked from another at one of its rounds (`gbely play --from`):
    /// its turns before that round are the source's, played again; the agents took over there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fork: Option<ForkRecord>,
    #[serde(deserialize_with = "turns")]
    pub turns: Vec<Turn>,
    #[serde(rename = "final")]
    pub final_state: FinalState,
    pub result: MatchResult,
}

/// Where a forked match came from ([`Replay::fork`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForkRecord {
    /// The SHA-256 of the source replay's JSON text (decompressed), in lowercase hex.
    #[serde(deserialize_with = "held_string")]
    pub source: String,
    /// The round the agents took over at: the turns before it are the source's.
    pub round: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MapRecord {
    #[serde(deserialize_with = "held_string")]
    pub name: String,
    #[serde(deserialize_with = "held_string")]
    pub fingerprint: String,
    pub width: u32,
    pub height: u32,
    /// The whole map in the map file format.
    #[serde(deserialize_with = "held_string")]
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
    #[serde(deserialize_with = "held_string")]
    pub name: String,
    /// `army` or `council`.
    pub role: SeatRole,
    /// The home base id.
    #[serde(deserialize_with = "held_string")]
    pub base: String,
    /// A deterministic built-in agent (`council`) whose commands are not stored: a reader
    /// regenerates them from its observations ([`Answer::Regen`]).
    #[serde(deserialize_with = "held_option_string", default, skip_serializing_if = "Option::is_none")]
    pub builtin: Option<String>,
}

/// What one seat did in one round.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Answer {
    /// The command list exactly as received (JSON values in the agent's own key order).
    Commands(#[serde(deserialize_with = "answer_values")] Vec<Value>),
    /// A violation: the round's commands are lost (SPEC §8).
    Violation(Violation),
    /// Not in the game any more (eliminated or disqualified).
    Out,
    /// Version 2: the commands in a compact columnar form; items that were not commands are kept
    /// as received.
    Compact(CompactCommands),
    /// Version 2: the commands of the seat's built-in agent ([`SeatRecord::builtin`]), which a
    /// reader regenerates from the seat's observation.
    Regen,
}

/// A command list in columns (versions 2 and 3): what the engine resolves, in less space. Each
/// item of the answer is one letter of `kinds`: `M`, `A` or `F` — a command whose cells are the
/// next two (MOVE, ATTACK: source, target) or one (FORTIFY) of `cells` and whose amount is the
/// next of `amounts` — or `r`: an item that did not parse as a command, the next of `raw`, as
/// received (so that re-reading it gives the same discard reason).
///
/// `cells` are always the cells' indices here; on file they are written in the replay version's
/// form ([`CellsForm`]): version 2 as the indices (`c`), version 3 as the steps between them
/// (`d`), which compress about ten times better. The amounts are the exact `f64`s the engine
/// resolved either way; version 3 writes a whole amount as an integer (`4`, not `4.0`).
///
/// An answer too big to record whole has a [`Cut`]: the items after it that were discarded are
/// counted, not kept.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CompactCommands {
    pub kinds: String,
    pub cells: Vec<u32>,
    pub amounts: Vec<f64>,
    pub raw: Vec<Value>,
    pub cut: Option<Cut>,
    /// How `cells` (and `amounts`) are written: the form of the replay's version.
    pub form: CellsForm,
    /// Why the cells as read do not make a list of cells (a step below cell 0, say), for
    /// [`CompactCommands::check`] to report with the turn and seat.
    fault: Option<String>,
}

/// How a compact answer's cells are written on file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CellsForm {
    /// Version 2: `"c"`, each cell's index.
    Indices,
    /// Version 3: `"d"`, each cell as its difference from the one before it in the list (the
    /// first from 0): `[1984, 1924, 2901]` is written `[1984, -60, 977]`. A target is a
    /// neighbour of its source (±1, ±width) and an agent lists its cells mostly in order, so the
    /// steps are small and repeat.
    #[default]
    Steps,
}

impl CellsForm {
    /// The form of a replay version's compact answers (version 1 has none).
    pub fn of_version(version: u32) -> CellsForm {
        if version >= 3 {
            CellsForm::Steps
        } else {
            CellsForm::Indices
        }
    }
}

/// A whole amount is written as an integer in version 3 (`4`, the way an agent writes it) when
/// that is exact: a JSON integer up to 2^53 reads back as the same `f64`.
const EXACT_INTEGER: f64 = 9_007_199_254_740_992.0;

impl Serialize for CompactCommands {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        // The cells as steps, and the amounts with whole ones as integers, written as they go.
        struct Steps<'a>(&'a [u32]);
        impl Serialize for Steps<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let before = std::iter::once(0).chain(self.0.iter().copied());
                s.collect_seq(self.0.iter().zip(before).map(|(&c, b)| c as i64 - b as i64))
            }
        }
        struct Amounts<'a>(&'a [f64]);
        impl Serialize for Amounts<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                struct Amount(f64);
                impl Serialize for Amount {
                    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                        let x = self.0;
                        // Not -0.0: an integer 0 would read back as +0.0.
                        if x.fract() == 0.0 && x.abs() <= EXACT_INTEGER && !(x == 0.0 && x.is_sign_negative()) {
                            s.serialize_i64(x as i64)
                        } else {
                            s.serialize_f64(x)
                        }
                    }
                }
                s.collect_seq(self.0.iter().map(|&x| Amount(x)))
            }
        }
        let fields = 3 + usize::from(!self.raw.is_empty()) + usize::from(self.cut.is_some());
        let mut st = s.serialize_struct("CompactCommands", fields)?;
        st.serialize_field("k", &self.kinds)?;
        match self.form {
            CellsForm::Indices => {
                st.serialize_field("c", &self.cells)?;
                st.serialize_field("n", &self.amounts)?;
            }
            CellsForm::Steps => {
                st.serialize_field("d", &Steps(&self.cells))?;
                st.serialize_field("n", &Amounts(&self.amounts))?;
            }
        }
        if !self.raw.is_empty() {
            st.serialize_field("raw", &self.raw)?;
        }
        if let Some(cut) = &self.cut {
            st.serialize_field("cut", cut)?;
        }
        st.end()
    }
}

/// A compact answer as a file has it: its cells as indices (`c`) or as steps (`d`).
#[derive(Deserialize)]
struct CompactOnFile {
    #[serde(deserialize_with = "held_string", rename = "k")]
    kinds: String,
    #[serde(rename = "c", default, deserialize_with = "answer_cells")]
    indices: Option<Vec<u32>>,
    #[serde(rename = "d", default, deserialize_with = "answer_steps")]
    steps: Option<Stepped>,
    #[serde(rename = "n", deserialize_with = "per_answer")]
    amounts: Vec<f64>,
    #[serde(default, deserialize_with = "answer_values")]
    raw: Vec<Value>,
    #[serde(default)]
    cut: Option<Cut>,
}

impl<'de> Deserialize<'de> for CompactCommands {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let f = CompactOnFile::deserialize(d)?;
        let (cells, form, fault) = match (f.indices, f.steps) {
            (Some(cells), None) => (cells, CellsForm::Indices, None),
            (None, Some((cells, fault))) => (cells, CellsForm::Steps, fault),
            (Some(cells), Some(_)) => (cells, CellsForm::Indices, Some("it has both `c` and `d`".to_string())),
            (None, None) => {
                (Vec::new(), CellsForm::Steps, Some("it has no cells (`d`, or `c` before version 3)".into()))
            }
        };
        Ok(CompactCommands { kinds: f.kinds, cells, amounts: f.amounts, raw: f.raw, cut: f.cut, form, fault })
    }
}

/// Where the record of an answer too big to keep whole stops keeping its discarded items (a
/// flooding agent's megabytes of junk a round; the bounds are the engine's, in
/// `docs/replay-format.md`). The first `at` items are recorded one by one, as in any answer;
/// after them only the commands the engine carried out are kept (in their order), and the
/// discarded items are counted by reason. A discarded item changes nothing (SPEC §6.2), so
/// re-simulation reaches the same state; its discard events are those of the first `at` items.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cut {
    /// How many items of the answer are recorded one by one: the first `at` letters of `kinds`.
    pub at: u32,
    /// The discarded items after them, not kept: how many for each reason.
    pub left_out: BTreeMap<DiscardReason, u32>,
}

impl Cut {
    /// How many items were left out.
    pub fn count(&self) -> u64 {
        self.left_out.values().map(|&n| n as u64).sum()
    }
}

impl CompactCommands {
    /// Whether the columns hold exactly what `kinds` says; why not, if they do not.
    pub fn check(&self, cells: usize) -> Result<(), String> {
        let (mut c, mut n, mut r) = (0usize, 0usize, 0usize);
        for k in self.kinds.chars() {
            match k {
                'M' | 'A' => (c, n) = (c + 2, n + 1),
                'F' => (c, n) = (c + 1, n + 1),
                'r' => r += 1,
                other => return Err(format!("unknown command kind `{other}`")),
            }
        }
        let items = self.kinds.len();
        if items > MAX_ANSWER_ITEMS {
            return Err(format!("{items} items where an answer has at most {MAX_ANSWER_ITEMS}"));
        }
        if let Some(cut) = self.cut.as_ref().filter(|cut| cut.at as usize > items) {
            return Err(format!("the cut after item {} is past its {items} items", cut.at));
        }
        if let Some(fault) = &self.fault {
            return Err(fault.clone());
        }
        if (c, n, r) != (self.cells.len(), self.amounts.len(), self.raw.len()) {
            return Err(format!(
                "kinds `{}` need {c} cells, {n} amounts and {r} raw items; the columns hold {}, {} and {}",
                self.kinds,
                self.cells.len(),
                self.amounts.len(),
                self.raw.len()
            ));
        }
        if let Some((i, &bad)) = self.cells.iter().enumerate().find(|(_, &x)| x as usize >= cells) {
            let field = match self.form {
                CellsForm::Indices => format!("c[{i}]"),
                CellsForm::Steps => format!("the sum of d[0..={i}]"),
            };
            return Err(format!("cell #{bad} is not on the map ({cells} cells): {field}"));
        }
        if let Some((i, bad)) = self.amounts.iter().enumerate().find(|(_, a)| !(a.is_finite() && **a > 0.0)) {
            return Err(format!("amount {bad} is not a positive number: n[{i}]"));
        }
        Ok(())
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Violation {
    /// `timeout`, `crash`, `unreadable`.
    pub kind: ViolationKind,
    /// What happened, for the user (`no answer within 2.0 s`).
    #[serde(deserialize_with = "held_string")]
    pub detail: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Discarded {
    pub seat: u8,
    /// Index of the command in the seat's list.
    pub index: u32,
    /// A [`gbely_rules::DiscardReason`] code.
    pub reason: DiscardReason,
}

/// One cell's state: `[cell, owner, units, fortification]`, owner `-1` for neutral.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct CellChange(pub u32, pub i8, pub f64, pub f64);

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Turn {
    pub round: u32,
    /// One entry per seat.
    #[serde(deserialize_with = "per_seat")]
    pub answers: Vec<Answer>,
    /// The discarded commands, in the order the engine met them (those left out of an answer
    /// after its [`Cut`] are only counted there).
    #[serde(default, deserialize_with = "per_turn_discarded", skip_serializing_if = "Vec::is_empty")]
    pub discarded: Vec<Discarded>,
    /// Cells owned per seat at the end of the round.
    #[serde(deserialize_with = "per_seat")]
    pub cells: Vec<u32>,
    /// Units per seat at the end of the round.
    #[serde(deserialize_with = "per_seat")]
    pub units: Vec<f64>,
    /// Version 1 only: the cells whose state at the end of the round differs from the state
    /// after its production. Version 2 leaves them out; readers rebuild them by re-simulation.
    #[serde(default, deserialize_with = "per_cell", skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<CellChange>,
    /// The agents' notes on the round (`gbely_rules::Notes`), for the viewer: only seats that
    /// wrote some. Optional: a replay without notes reads and writes as before.
    #[serde(default, deserialize_with = "per_seat", skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<SeatNotes>,
    /// Version 4: per seat, the milliseconds its answer took (from the observation sent to the
    /// answer received, or to the violation), `null` for a seat not timed (in-process agents,
    /// seats out of the game). Empty when no seat was timed. Never part of a result: `gbely
    /// replay verify` leaves it out.
    #[serde(default, deserialize_with = "per_seat", skip_serializing_if = "Vec::is_empty")]
    pub answer_ms: Vec<Option<u32>>,
}

/// A seat's notes on one round, as a replay keeps them (within `gbely_rules::Notes`' bounds).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeatNotes {
    pub seat: u8,
    /// About the round.
    #[serde(deserialize_with = "held_string", default, skip_serializing_if = "String::is_empty")]
    pub text: String,
    /// About cells: the cell (row-major index on the map) and its note.
    #[serde(deserialize_with = "held_notes", default, skip_serializing_if = "Vec::is_empty")]
    pub cells: Vec<(u32, String)>,
    /// Drawn on the map by the viewer (`gbely_rules::Drawing`).
    #[serde(deserialize_with = "held_drawings", default, skip_serializing_if = "Vec::is_empty")]
    pub draw: Vec<Drawn>,
}

/// A drawing as a replay keeps it: `{"dot": 12}`, `{"fill": 12}`, `{"line": [12, 40]}` or
/// `{"label": 12, "text": "go"}`, each with an optional `"color": "#rrggbb"` (none: the seat's).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Drawn {
    /// A dot in the middle of the cell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dot: Option<u32>,
    /// The cell coloured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fill: Option<u32>,
    /// A line between the middles of two cells.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<[u32; 2]>,
    /// A label on the cell: `text`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<u32>,
    /// The label's text.
    #[serde(deserialize_with = "held_string", default, skip_serializing_if = "String::is_empty")]
    pub text: String,
    /// `#rrggbb`; empty: the seat's colour.
    #[serde(deserialize_with = "held_string", default, skip_serializing_if = "String::is_empty")]
    pub color: String,
}

impl Drawn {
    /// What is wrong with this drawing on a map of `cells` cells, if anything.
    fn fault(&self, cells: usize) -> Option<String> {
        let shapes = [self.dot.is_some(), self.fill.is_some(), self.line.is_some(), self.label.is_some()];
        if shapes.iter().filter(|&&x| x).count() != 1 {
            return Some("a drawing is not one of dot, fill, line and label".into());
        }
        let on = [self.dot, self.fill, self.label].into_iter().flatten().chain(self.line.into_iter().flatten());
        if let Some(c) = on.into_iter().find(|&c| c as usize >= cells) {
            return Some(format!("a drawing on cell #{c}, which is not on the {cells}-cell map"));
        }
        if (self.label.is_none() && !self.text.is_empty()) || self.text.chars().count() > gbely_rules::Notes::MAX_LABEL
        {
            return Some("a drawing's text is over its bound or not a label's".into());
        }
        if !self.color.is_empty() && (self.color.len() != 7 || gbely_rules::Drawing::parse_color(&self.color).is_none())
        {
            return Some(format!("a drawing's colour {:?} is not #rrggbb", self.color));
        }
        None
    }
}

impl SeatNotes {
    /// What is wrong with these notes on a map of `cells` cells and `seats` seats, if anything.
    fn fault(&self, cells: usize, seats: usize) -> Option<String> {
        use gbely_rules::Notes;
        if self.seat as usize >= seats {
            return Some(format!("notes of seat {}, which does not exist ({seats} seats)", self.seat));
        }
        if self.text.chars().count() > Notes::MAX_TEXT
            || self.cells.len() > Notes::MAX_CELLS
            || self.draw.len() > Notes::MAX_DRAWINGS
        {
            return Some(format!("seat {}'s notes are over their bounds", self.seat));
        }
        if let Some(why) = self.draw.iter().find_map(|d| d.fault(cells)) {
            return Some(format!("seat {}'s notes: {why}", self.seat));
        }
        self.cells.iter().find_map(|(c, note)| {
            if *c as usize >= cells {
                Some(format!("seat {}'s notes name cell #{c}, which is not on the {cells}-cell map", self.seat))
            } else if note.chars().count() > Notes::MAX_CELL_TEXT {
                Some(format!("seat {}'s note on cell #{c} is over its bound", self.seat))
            } else {
                None
            }
        })
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FinalState {
    /// Per cell, row-major: owner seat or -1.
    #[serde(deserialize_with = "per_cell")]
    pub owner: Vec<i8>,
    #[serde(deserialize_with = "per_cell")]
    pub units: Vec<f64>,
    #[serde(deserialize_with = "per_cell")]
    pub fortification: Vec<f64>,
}

/// The owner of a neutral (`hbp`) cell in the engine's per-cell owner lists (replays write -1).
pub const NEUTRAL: u8 = u8::MAX;

/// An owner as replays write it: the seat, or -1 for [`NEUTRAL`].
pub fn owner_code(owner: u8) -> i8 {
    if owner == NEUTRAL {
        -1
    } else {
        owner as i8
    }
}

impl FinalState {
    /// The state of every cell as a replay writes it, from the engine's per-cell lists (owners
    /// as seats or [`NEUTRAL`]): the one conversion of a match's state into replay codes.
    pub fn of(owners: &[u8], units: &[f64], fortification: &[f64]) -> FinalState {
        FinalState {
            owner: owners.iter().map(|&o| owner_code(o)).collect(),
            units: units.to_vec(),
            fortification: fortification.to_vec(),
        }
    }

    /// Overwrites this state with another in place (no allocation once the lists have grown).
    pub fn set(&mut self, owners: &[u8], units: &[f64], fortification: &[f64]) {
        self.owner.clear();
        self.owner.extend(owners.iter().map(|&o| owner_code(o)));
        self.units.clear();
        self.units.extend_from_slice(units);
        self.fortification.clear();
        self.fortification.extend_from_slice(fortification);
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MatchResult {
    /// The last round played.
    pub last_round: u32,
    /// `rounds`, `elimination`, `disqualification` or `council_fell`.
    pub ended_by: EndReason,
    /// Round in which the Council's seat lost its last cell, if it did (the blitz record).
    pub council_fell: Option<u32>,
    #[serde(deserialize_with = "per_seat")]
    pub sides: Vec<SideResult>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SideResult {
    pub seat: u8,
    #[serde(deserialize_with = "held_string")]
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

// Arrays are refused while they are parsed once they are longer than any replay can have them, so a
// file cannot make the parser allocate for a million turns (or seats, or changes) that
// `Replay::check` would refuse afterwards.

fn turns<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Turn>, D::Error> {
    // The answers' kept values are counted across the whole document (see `answer_values`).
    let outer = VALUE_TEXT_LEFT.with(|left| left.replace(Some(MAX_REPLAY_VALUE_TEXT)));
    let turns = at_most(d, MAX_ROUNDS as usize, "turns");
    VALUE_TEXT_LEFT.with(|left| left.set(outer));
    turns
}

/// One entry per seat.
fn per_seat<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Vec<T>, D::Error> {
    at_most(d, MAX_SEATS, "seats")
}

/// At most one entry per cell.
fn per_cell<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Vec<T>, D::Error> {
    at_most(d, (MAX_SIDE * MAX_SIDE) as usize, "cells")
}

/// Most items one answer of a replay may hold (commands, unparsable items, letters of `kinds`).
/// The runner takes answers of up to 8 MiB, so an answer it reads has fewer than 4 Mi items,
/// and fewer than 200 000 that the engine carries out (a command needs about 45 bytes); the
/// engine records at most 1000 discarded items of an answer one by one and counts the rest
/// ([`Cut`]).
pub const MAX_ANSWER_ITEMS: usize = 1 << 20;

/// Most JSON text of the values an answer keeps as received (unparsable items; a version 1
/// file's commands): the runner's largest answer, 8 MiB.
pub const MAX_ANSWER_TEXT: usize = 8 << 20;

/// Most JSON text of such values in one replay. A parsed value takes far more memory than its
/// text (up to about fifty times for `[0,0,0,…]`), so this bounds what a file can make a reader
/// hold; the engine records at most 1 MiB of them per seat and match.
pub const MAX_REPLAY_VALUE_TEXT: usize = 16 << 20;

thread_local! {
    /// While a replay's `turns` are parsed: how much text of kept-as-received values the rest
    /// of the document may still hold ([`MAX_REPLAY_VALUE_TEXT`]).
    static VALUE_TEXT_LEFT: StdCell<Option<usize>> = const { StdCell::new(None) };
}

/// The array of one answer's items.
fn per_answer<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Vec<T>, D::Error> {
    at_most(d, MAX_ANSWER_ITEMS, "items of an answer")
}

/// The cells of one answer's commands (version 2's `c`): two per command at most.
fn answer_cells<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<u32>>, D::Error> {
    at_most(d, 2 * MAX_ANSWER_ITEMS, "cells of an answer's commands").map(Some)
}

/// Cells added up from steps, and why they are no cells if they are not ([`answer_steps`]).
type Stepped = (Vec<u32>, Option<String>);

/// The cells of one answer's commands as steps (version 3's `d`, [`CellsForm::Steps`]), added
/// up into cells as they are read, as many as `c` may hold. A sum that is no cell index (below 0,
/// past `u32`) is kept as the nearest one and said in the second part, for the check to report
/// with its turn and seat.
fn answer_steps<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Stepped>, D::Error> {
    struct Steps;
    impl<'de> Visitor<'de> for Steps {
        type Value = Stepped;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            write!(f, "an array of at most {} integers", 2 * MAX_ANSWER_ITEMS)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let max = 2 * MAX_ANSWER_ITEMS;
            let (mut out, mut fault): (Vec<u32>, Option<String>) = (Vec::new(), None);
            let mut at = 0i64;
            while let Some(step) = seq.next_element::<i64>()? {
                if out.len() == max {
                    return Err(A::Error::custom(format_args!(
                        "an array of more than {max} entries where there are at most {max} cells of an answer's commands"
                    )));
                }
                if out.len() == out.capacity() {
                    let more = out.capacity().max(4).min(max - out.len());
                    charge::<A::Error>(more * std::mem::size_of::<u32>(), "cells of an answer's commands")?;
                    out.reserve_exact(more);
                }
                let sum = at.saturating_add(step);
                at = sum.clamp(0, u32::MAX as i64);
                if at != sum && fault.is_none() {
                    let i = out.len();
                    fault = Some(format!(
                        "d[{i}] = {step} steps from cell #{} to {sum}, which is no cell",
                        out.last().copied().unwrap_or(0)
                    ));
                }
                out.push(at as u32);
            }
            Ok((out, fault))
        }
    }
    d.deserialize_seq(Steps).map(Some)
}

/// A turn's discarded commands: at most one per item of each seat's answer.
fn per_turn_discarded<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Discarded>, D::Error> {
    at_most(d, MAX_SEATS * MAX_ANSWER_ITEMS, "discarded commands in a turn")
}

/// Values kept as received: at most [`MAX_ANSWER_ITEMS`] of them and [`MAX_ANSWER_TEXT`] of
/// text in an answer, and [`MAX_REPLAY_VALUE_TEXT`] in the whole replay. Each is read as text
/// first and parsed only within these bounds, so a file cannot make the reader build a
/// hundred million values (or one value holding them) before it is refused.
fn answer_values<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Value>, D::Error> {
    struct Values;
    impl<'de> Visitor<'de> for Values {
        type Value = Vec<Value>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            write!(f, "an array of at most {MAX_ANSWER_ITEMS} JSON values")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<Value>, A::Error> {
            let mut out: Vec<Value> = Vec::new();
            let mut text = 0usize;
            while let Some(raw) = seq.next_element::<Box<serde_json::value::RawValue>>()? {
                if out.len() == MAX_ANSWER_ITEMS {
                    return Err(A::Error::custom(format_args!(
                        "an answer of more than {MAX_ANSWER_ITEMS} items where there are at most {MAX_ANSWER_ITEMS}"
                    )));
                }
                if out.len() == out.capacity() {
                    let more = out.capacity().max(4).min(MAX_ANSWER_ITEMS - out.len());
                    charge::<A::Error>(more * std::mem::size_of::<Value>(), "items kept as received")?;
                    out.reserve_exact(more);
                }
                let len = raw.get().len();
                text += len;
                if text > MAX_ANSWER_TEXT {
                    return Err(A::Error::custom(format_args!(
                        "an answer whose items kept as received have more than {MAX_ANSWER_TEXT} bytes of JSON"
                    )));
                }
                let left = VALUE_TEXT_LEFT.with(|left| {
                    let now = left.get().map(|l| l.checked_sub(len));
                    if let Some(Some(l)) = now {
                        left.set(Some(l));
                    }
                    now
                });
                if left == Some(None) {
                    return Err(A::Error::custom(format_args!(
                        "items kept as received have more than {MAX_REPLAY_VALUE_TEXT} bytes of JSON in all"
                    )));
                }
                // A parsed value takes far more memory than its text (every number, string,
                // array and object is a value of its own): charged by an upper bound from the
                // text, before it is parsed.
                charge::<A::Error>(value_bound(raw.get()), "items kept as received")?;
                out.push(serde_json::from_str(raw.get()).map_err(A::Error::custom)?);
            }
            Ok(out)
        }
    }
    d.deserialize_seq(Values)
}

fn at_most<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
    max: usize,
    what: &'static str,
) -> Result<Vec<T>, D::Error> {
    struct AtMost<T> {
        max: usize,
        what: &'static str,
        entries: PhantomData<T>,
    }
    impl<'de, T: Deserialize<'de>> Visitor<'de> for AtMost<T> {
        type Value = Vec<T>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            write!(f, "an array of at most {} entries (one per {})", self.max, self.what)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
            let mut out: Vec<T> = Vec::new();
            while let Some(x) = seq.next_element()? {
                if out.len() == self.max {
                    return Err(A::Error::custom(format_args!(
                        "an array of more than {} entries where there are at most {} {}",
                        self.max, self.max, self.what
                    )));
                }
                // Grown here, by doubling, and charged before the memory is asked for.
                if out.len() == out.capacity() {
                    // At least 4, at most what the array may still hold (at least 1 here: `clamp`
                    // would panic where fewer than 4 are left).
                    let more = out.capacity().max(4).min(self.max - out.len());
                    charge::<A::Error>(more.saturating_mul(std::mem::size_of::<T>()), self.what)?;
                    out.reserve_exact(more);
                }
                out.push(x);
            }
            Ok(out)
        }
    }
    d.deserialize_seq(AtMost { max, what, entries: PhantomData })
}

/// Most memory a replay may take once read, in bytes: 192 MiB. Every array, string and value
/// of the document is counted while it is parsed (an array by the room it grows to, before the
/// room is asked for), and a document that would hold more is refused at the place where it went
/// past, not after. With the readers' own work (`gbely_engine::replays::READ_BUDGET`) a reader
/// stays within 2 GiB on any file. An honest replay holds far less: a full match on the
/// reference map a few megabytes, one of 100 000 rounds some tens.
pub const MAX_REPLAY_HELD: usize = 192 << 20;

thread_local! {
    /// While a replay document is parsed ([`Replay::from_json`], [`Replay::from_reader`]): the
    /// bytes its parsed parts hold so far.
    static HELD: StdCell<Option<usize>> = const { StdCell::new(None) };
}

/// Counts `bytes` against [`MAX_REPLAY_HELD`] for the document being parsed (nothing outside
/// one); past it, the error says so (the parser adds the line and column).
fn charge<E: serde::de::Error>(bytes: usize, what: &str) -> Result<(), E> {
    HELD.with(|held| {
        let Some(used) = held.get() else { return Ok(()) };
        let now = used.saturating_add(bytes);
        if now > MAX_REPLAY_HELD {
            return Err(E::custom(format_args!(
                "the replay would take more than {} MiB of memory once read (at its {what}); \
                 gbely's readers hold at most that much of a replay",
                MAX_REPLAY_HELD >> 20
            )));
        }
        held.set(Some(now));
        Ok(())
    })
}

/// Runs `parse` counting what the parsed document holds ([`charge`]); gives back that count.
fn counting<T>(parse: impl FnOnce() -> T) -> (T, usize) {
    let outer = HELD.with(|h| h.replace(Some(0)));
    let out = parse();
    let held = HELD.with(|h| h.replace(outer)).unwrap_or(0);
    (out, held)
}

/// An upper bound on the memory a JSON value takes once parsed, from its text: at most one
/// value per byte that can start one, each a `Value` with at most its text as heap (numbers are
/// kept as text: `arbitrary_precision`), and a map entry's key.
fn value_bound(text: &str) -> usize {
    let starts = text.bytes().filter(|b| matches!(b, b',' | b':' | b'[' | b'{')).count() + 1;
    let per = std::mem::size_of::<Value>() + std::mem::size_of::<String>() + 16;
    starts.saturating_mul(per).saturating_add(2 * text.len())
}

/// A string of the document, counted ([`charge`]).
fn held_string<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let s = String::deserialize(d)?;
    charge::<D::Error>(s.capacity(), "strings")?;
    Ok(s)
}

fn held_option_string<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let s = Option::<String>::deserialize(d)?;
    charge::<D::Error>(s.as_ref().map_or(0, String::capacity), "strings")?;
    Ok(s)
}

/// A seat's notes on cells: at most one per note a seat may write, each counted.
fn held_notes<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<(u32, String)>, D::Error> {
    let notes: Vec<(u32, String)> = at_most(d, gbely_rules::Notes::MAX_CELLS, "notes on cells")?;
    charge::<D::Error>(notes.iter().map(|(_, n)| n.capacity()).sum(), "notes")?;
    Ok(notes)
}

/// A seat's drawings of a round: at most as many as it may draw (their strings are counted as
/// they are read).
fn held_drawings<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Drawn>, D::Error> {
    at_most(d, gbely_rules::Notes::MAX_DRAWINGS, "drawings")
}

/// Most rounds a replay may be configured for; the `gbely` command line allows as many.
///
/// A reader sizes work by the rounds a file claims only after checking them against this.
pub const MAX_ROUNDS: u32 = 100_000;

/// Why a replay document was refused. Each message says its cause itself; none is also chained as
/// a `source`, so a report that walks the chain says it once.
///
/// Turns, seats and cells are numbered as in the file: a turn by its index in `turns`, a seat by
/// its number, a cell by its row-major index (and its id where the cell is on the map).
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error("not a replay: {0}")]
    Json(serde_json::Error),
    #[error("not a gbely replay (format `{0}`)")]
    Format(String),
    #[error("replay version {0} is not supported (this build reads versions 1 to 4)")]
    Version(u32),
    #[error("the replay's map: {0}")]
    Map(MapFileError),
    #[error("the replay's map fingerprint is {expected} but its map file gives {found}")]
    Fingerprint { expected: String, found: String },
    #[error("the replay's map record says {record_width}×{record_height} but its map file is {width}×{height}")]
    MapSize { record_width: u32, record_height: u32, width: u32, height: u32 },
    #[error("the replay lists {found} seats, its map has {map}")]
    SeatCount { found: usize, map: usize },
    #[error("seats[{index}] is numbered seat {found}")]
    SeatNumber { index: usize, found: u8 },
    #[error("seat {seat}: its {what} is `{found}`, the map says `{map}`")]
    SeatOnMap { seat: usize, what: &'static str, found: String, map: String },
    #[error("the replay is configured for {0} rounds (1…{MAX_ROUNDS} allowed)")]
    Rounds(u32),
    #[error("the replay has {turns} turns for {rounds} rounds")]
    TooManyTurns { turns: usize, rounds: u32 },
    #[error("turn {turn} is numbered round {found}")]
    TurnRound { turn: usize, found: u32 },
    #[error("turn {turn}: {found} {what} for {seats} seats")]
    TurnSeats { turn: usize, what: &'static str, found: usize, seats: usize },
    #[error("turn {turn}: change {index} is for cell #{cell}, which is not on the {cells}-cell map")]
    ChangeCell { turn: usize, index: usize, cell: u32, cells: usize },
    #[error("turn {turn}: change {index} gives cell {cell} to seat {owner}, which does not exist ({seats} seats)")]
    ChangeOwner { turn: usize, index: usize, cell: String, owner: i8, seats: usize },
    #[error("turn {turn}: {why}")]
    Notes { turn: usize, why: String },
    #[error("turn {turn}: seat {seat}'s compact commands: {why}")]
    Compact { turn: usize, seat: usize, why: String },
    #[error("turn {turn}: seat {seat}'s commands are to be regenerated, but the seat names no built-in agent")]
    Regen { turn: usize, seat: usize },
    #[error("a version {0} replay cannot say where it was forked from (version 4 can)")]
    ForkVersion(u32),
    #[error("`fork`: it says the match was forked at round {round}, but it has only {rounds} rounds")]
    ForkRound { round: u32, rounds: u32 },
    #[error("turn {turn}: a version {version} replay cannot hold {what}")]
    AnswerVersion { turn: usize, version: u32, what: &'static str },
    #[error("turn {turn}: discarded[{index}] names seat {seat}, which does not exist ({seats} seats)")]
    DiscardedSeat { turn: usize, index: usize, seat: u8, seats: usize },
    #[error("final `{what}` has {found} cells, the map {cells}")]
    FinalCells { what: &'static str, found: usize, cells: usize },
    #[error("final `owner` gives cell {cell} to seat {owner}, which does not exist ({seats} seats)")]
    FinalOwner { cell: String, owner: i8, seats: usize },
    #[error("the result has {found} sides for {seats} seats")]
    ResultSides { found: usize, seats: usize },
    #[error("result sides[{index}] is numbered seat {found}")]
    ResultSeat { index: usize, found: u8 },
}

/// The fields that say what a document is, read alone: a file that is not a replay (or is a newer
/// one) is refused for what it is rather than for the first field this version misses.
#[derive(Deserialize)]
struct Head {
    format: Option<Value>,
    version: Option<Value>,
}

impl Head {
    fn check(&self) -> Result<(), ReplayError> {
        check_head(self.format.as_ref().and_then(Value::as_str), self.version.as_ref().and_then(Value::as_u64))
    }
}

fn check_head(format: Option<&str>, version: Option<u64>) -> Result<(), ReplayError> {
    if format != Some(REPLAY_FORMAT) {
        return Err(ReplayError::Format(format.unwrap_or("none").to_string()));
    }
    match version {
        Some(v) if READS_VERSIONS.iter().any(|&r| r as u64 == v) => Ok(()),
        other => Err(ReplayError::Version(other.map_or(0, |v| v.min(u32::MAX as u64) as u32))),
    }
}

impl Replay {
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a replay always serializes")
    }

    /// Reads a replay and checks its structure ([`Replay::check`]): what comes back can be read
    /// without further bounds checks, and a reader may size work by its counts.
    pub fn from_json(text: &str) -> Result<Replay, ReplayError> {
        match counting(|| serde_json::from_str::<Replay>(text)).0 {
            Ok(replay) => replay.checked(),
            // Say "not a gbely replay" rather than "missing field" for another document.
            Err(e) => Err(Replay::head_error(text.as_bytes()).unwrap_or(ReplayError::Json(e))),
        }
    }

    /// [`Replay::from_json`] from a stream, so that no copy of the text is held. On a document
    /// that does not parse the error is the parser's; [`Replay::head_error`] on a second reading
    /// says whether the document is a replay at all.
    pub fn from_reader(reader: impl std::io::Read) -> Result<Replay, ReplayError> {
        counting(|| serde_json::from_reader::<_, Replay>(reader)).0.map_err(ReplayError::Json)?.checked()
    }

    /// About how many bytes of memory this replay holds: its arrays (by their room), strings and
    /// values. What a reader adds to its own work when it copies the replay.
    pub fn held_bytes(&self) -> usize {
        fn vec<T>(v: &Vec<T>) -> usize {
            v.capacity() * std::mem::size_of::<T>()
        }
        let values = |v: &Vec<Value>| vec(v) + v.iter().map(|x| value_bound(&x.to_string())).sum::<usize>();
        let mut n = std::mem::size_of::<Replay>() + self.map.file.capacity() + vec(&self.seats);
        n += self.seats.iter().map(|s| s.name.capacity() + s.base.capacity()).sum::<usize>();
        n += vec(&self.turns) + vec(&self.final_state.owner) + vec(&self.final_state.units);
        n += vec(&self.final_state.fortification) + vec(&self.result.sides);
        for t in &self.turns {
            n += vec(&t.answers) + vec(&t.discarded) + vec(&t.cells) + vec(&t.units) + vec(&t.changes);
            n += vec(&t.notes);
            n += t
                .notes
                .iter()
                .map(|x| {
                    x.text.capacity()
                        + vec(&x.cells)
                        + x.cells.iter().map(|c| c.1.capacity()).sum::<usize>()
                        + vec(&x.draw)
                        + x.draw.iter().map(|d| d.text.capacity() + d.color.capacity()).sum::<usize>()
                })
                .sum::<usize>();
            for a in &t.answers {
                n += match a {
                    Answer::Commands(list) => values(list),
                    Answer::Compact(c) => c.kinds.capacity() + vec(&c.cells) + vec(&c.amounts) + values(&c.raw),
                    Answer::Violation(v) => v.detail.capacity(),
                    Answer::Out | Answer::Regen => 0,
                };
            }
        }
        n
    }

    /// For a document that did not parse as a replay: the error if it is not one (another
    /// `format`, another `version`), `None` if it claims to be one (or is not JSON at all).
    pub fn head_error(reader: impl std::io::Read) -> Option<ReplayError> {
        serde_json::from_reader::<_, Head>(reader).ok()?.check().err()
    }

    fn checked(self) -> Result<Replay, ReplayError> {
        self.check()?;
        Ok(self)
    }

    /// Reads the text of a replay that stops in its turns: the file of a match whose process was
    /// killed while it played (a replay is written as the match goes, its head first, then each
    /// round: see docs/replay-format.md). The turns written whole are kept, anything after the
    /// last of them is left out, and `end` gives the final state and the result, from the kept
    /// rounds (a reader re-simulates them); it is called once the head and the kept turns have
    /// passed [`Replay::check`]'s checks. What comes back is checked like any replay. A text
    /// that never reaches its turns is refused as it parses.
    ///
    /// Never for a file that reads whole ([`Replay::from_json`]): a caller tries that first and
    /// says that what it shows was cut short.
    pub fn from_unfinished<E: From<ReplayError>>(
        text: &str,
        end: impl FnOnce(&Replay, &Map) -> Result<(FinalState, MatchResult), E>,
    ) -> Result<Replay, E> {
        let Some(cut) = unfinished_cut(text) else {
            let e = serde_json::from_str::<Replay>(text).err().unwrap_or_else(|| serde_json::Error::custom("whole"));
            return Err(Replay::head_error(text.as_bytes()).unwrap_or(ReplayError::Json(e)).into());
        };
        // The document closed after its last whole turn, with an empty end that `end` replaces.
        let empty_end = format!(
            "],\"final\":{},\"result\":{}}}",
            serde_json::to_string(&FinalState { owner: vec![], units: vec![], fortification: vec![] })
                .expect("serializes"),
            serde_json::to_string(&MatchResult {
                last_round: 0,
                ended_by: EndReason::Interrupted,
                council_fell: None,
                sides: vec![]
            })
            .expect("serializes")
        );
        let closed = std::io::Read::chain(&text.as_bytes()[..cut], empty_end.as_bytes());
        let mut replay =
            counting(|| serde_json::from_reader::<_, Replay>(closed)).0.map_err(|e| E::from(ReplayError::Json(e)))?;
        let map = replay.check_rounds().map_err(E::from)?;
        let (final_state, result) = end(&replay, &map)?;
        replay.final_state = final_state;
        replay.result = result;
        replay.checked().map_err(E::from)
    }

    /// The structure a replay must have, checked by [`Replay::from_json`] when a file is read (and
    /// here for one built or changed in code); gives back its map. Whether the rounds are what the
    /// rules make of the answers is another question, for re-simulation (`gbely replay verify`).
    ///
    /// Checked: the header; the map record parses, its fingerprint and size match; one seat record
    /// per map seat, numbered by its index, with the map's role and base; `rounds` in
    /// 1…[`MAX_ROUNDS`] and no more turns than rounds; each turn numbered by its index, with one
    /// answer, cell count and unit total per seat; each change's cell on the map and its owner a
    /// seat or -1; each discarded command's seat a seat; the final state one entry per cell with
    /// owners a seat or -1; the result one side per seat, numbered by its index.
    pub fn check(&self) -> Result<Map, ReplayError> {
        let map = self.check_rounds()?;
        let g = map.grid();
        let (seats, cells) = (map.seats().len(), map.len());
        let owner_ok = |o: i8| o >= -1 && (o as i64) < seats as i64;
        let f = &self.final_state;
        for (what, found) in
            [("owner", f.owner.len()), ("units", f.units.len()), ("fortification", f.fortification.len())]
        {
            if found != cells {
                return Err(ReplayError::FinalCells { what, found, cells });
            }
        }
        if let Some((c, &owner)) = f.owner.iter().enumerate().find(|(_, &o)| !owner_ok(o)) {
            return Err(ReplayError::FinalOwner { cell: g.id(gbely_rules::Cell(c as u32)), owner, seats });
        }
        if self.result.sides.len() != seats {
            return Err(ReplayError::ResultSides { found: self.result.sides.len(), seats });
        }
        if let Some((index, side)) = self.result.sides.iter().enumerate().find(|(k, s)| s.seat as usize != *k) {
            return Err(ReplayError::ResultSeat { index, found: side.seat });
        }
        Ok(map)
    }

    /// [`Replay::check`] up to the turns: everything but the final state and the result.
    fn check_rounds(&self) -> Result<Map, ReplayError> {
        check_head(Some(&self.format), Some(self.version as u64))?;
        let map = self.map.to_map()?;
        if (self.map.width, self.map.height) != (map.width(), map.height()) {
            return Err(ReplayError::MapSize {
                record_width: self.map.width,
                record_height: self.map.height,
                width: map.width(),
                height: map.height(),
            });
        }
        let g = map.grid();
        let (seats, cells) = (map.seats().len(), map.len());
        if self.seats.len() != seats {
            return Err(ReplayError::SeatCount { found: self.seats.len(), map: seats });
        }
        for (k, (record, seat)) in self.seats.iter().zip(map.seats()).enumerate() {
            if record.seat as usize != k {
                return Err(ReplayError::SeatNumber { index: k, found: record.seat });
            }
            let on_map = |what, found: &str, map: String| {
                if found == map {
                    Ok(())
                } else {
                    Err(ReplayError::SeatOnMap { seat: k, what, found: found.to_string(), map })
                }
            };
            on_map("role", record.role.wire(), seat.role.wire().to_string())?;
            on_map("base", &record.base, g.id(seat.base))?;
        }
        if !(1..=MAX_ROUNDS).contains(&self.rounds) {
            return Err(ReplayError::Rounds(self.rounds));
        }
        if self.turns.len() > self.rounds as usize {
            return Err(ReplayError::TooManyTurns { turns: self.turns.len(), rounds: self.rounds });
        }
        if let Some(fork) = &self.fork {
            if self.version < 4 {
                return Err(ReplayError::ForkVersion(self.version));
            }
            if fork.round >= self.rounds {
                return Err(ReplayError::ForkRound { round: fork.round, rounds: self.rounds });
            }
        }
        let owner_ok = |o: i8| o >= -1 && (o as i64) < seats as i64;
        for (k, t) in self.turns.iter().enumerate() {
            if t.round as usize != k {
                return Err(ReplayError::TurnRound { turn: k, found: t.round });
            }
            if !t.answer_ms.is_empty() && self.version < 4 {
                return Err(ReplayError::AnswerVersion { turn: k, version: self.version, what: "answer times" });
            }
            let times = if t.answer_ms.is_empty() { seats } else { t.answer_ms.len() };
            for (what, found) in [
                ("answers", t.answers.len()),
                ("cell counts", t.cells.len()),
                ("unit totals", t.units.len()),
                ("answer times", times),
            ] {
                if found != seats {
                    return Err(ReplayError::TurnSeats { turn: k, what, found, seats });
                }
            }
            for (index, &CellChange(cell, owner, _, _)) in t.changes.iter().enumerate() {
                if cell as usize >= cells {
                    return Err(ReplayError::ChangeCell { turn: k, index, cell, cells });
                }
                if !owner_ok(owner) {
                    let cell = g.id(gbely_rules::Cell(cell));
                    return Err(ReplayError::ChangeOwner { turn: k, index, cell, owner, seats });
                }
            }
            for (seat, a) in t.answers.iter().enumerate() {
                match a {
                    Answer::Compact(_) if self.version < 2 => {
                        return Err(ReplayError::AnswerVersion {
                            turn: k,
                            version: self.version,
                            what: "compact commands",
                        });
                    }
                    Answer::Regen if self.version < 2 => {
                        return Err(ReplayError::AnswerVersion {
                            turn: k,
                            version: self.version,
                            what: "regenerated commands",
                        });
                    }
                    // (A file's answer with neither or both forms says so first.)
                    Answer::Compact(c) if c.fault.is_none() && c.form != CellsForm::of_version(self.version) => {
                        return Err(ReplayError::AnswerVersion {
                            turn: k,
                            version: self.version,
                            what: match c.form {
                                CellsForm::Indices => "cells as indices (`c`, version 2's form)",
                                CellsForm::Steps => "cells as steps (`d`, version 3's form)",
                            },
                        });
                    }
                    Answer::Compact(c) => c.check(cells).map_err(|why| ReplayError::Compact { turn: k, seat, why })?,
                    Answer::Regen if self.seats[seat].builtin.is_none() => {
                        return Err(ReplayError::Regen { turn: k, seat });
                    }
                    _ => {}
                }
            }
            if let Some((index, d)) = t.discarded.iter().enumerate().find(|(_, d)| d.seat as usize >= seats) {
                return Err(ReplayError::DiscardedSeat { turn: k, index, seat: d.seat, seats });
            }
            if let Some(why) = t.notes.iter().find_map(|n| n.fault(cells, seats)) {
                return Err(ReplayError::Notes { turn: k, why });
            }
        }
        Ok(map)
    }
}

/// Where the turns of a replay's text that stops in them end: just after the last turn written
/// whole (just after `"turns":[` when none is). `None` when the text never reaches its turns.
///
/// The head is written without whitespace and its text values are JSON strings, in which every
/// `"` is escaped: the first `"turns":[` is the key of the turns.
fn unfinished_cut(text: &str) -> Option<usize> {
    const KEY: &str = "\"turns\":[";
    let start = text.find(KEY)? + KEY.len();
    let (mut at, mut cut) = (start, start);
    // Each turn is an object, followed by a comma and the next or by the end of the turns.
    while text[at..].starts_with('{') {
        let mut values = serde_json::Deserializer::from_str(&text[at..]).into_iter::<serde::de::IgnoredAny>();
        let Some(Ok(_)) = values.next() else { break };
        cut = at + values.byte_offset();
        if text.as_bytes().get(cut) != Some(&b',') {
            break;
        }
        at = cut + 1;
    }
    Some(cut)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compact(kinds: &str, cells: &[u32], amounts: &[f64]) -> CompactCommands {
        CompactCommands { kinds: kinds.into(), cells: cells.to_vec(), amounts: amounts.to_vec(), ..Default::default() }
    }

    fn read(text: &str) -> CompactCommands {
        serde_json::from_str(text).unwrap()
    }

    /// Version 3 writes the cells as steps (each from the one before, the first from 0) and whole
    /// amounts as integers; version 2's form stays as it was.
    #[test]
    fn version_3_writes_cells_as_steps_and_whole_amounts_as_integers() {
        let c = compact("AMF", &[1984, 1924, 2901, 2902, 7], &[4.0, 12.35, 0.5]);
        let text = serde_json::to_string(&c).unwrap();
        assert_eq!(text, r#"{"k":"AMF","d":[1984,-60,977,1,-2895],"n":[4,12.35,0.5]}"#);
        assert_eq!(read(&text), c);
        let v2 = CompactCommands { form: CellsForm::Indices, ..c.clone() };
        let text = serde_json::to_string(&v2).unwrap();
        assert_eq!(text, r#"{"k":"AMF","c":[1984,1924,2901,2902,7],"n":[4.0,12.35,0.5]}"#);
        assert_eq!(read(&text), v2);
    }

    /// The amounts come back with the bits the engine resolved, however far they are from a short
    /// decimal (an agent's arithmetic on the observation's one-decimal values gives such as
    /// 12.349999999999998, one step below 12.35).
    #[test]
    fn amounts_round_trip_bit_for_bit() {
        let below = |x: f64| f64::from_bits(x.to_bits() - 1);
        let above = |x: f64| f64::from_bits(x.to_bits() + 1);
        let amounts = [
            below(12.35),
            above(12.35),
            0.1 + 0.2,
            1e-300,
            f64::from_bits(1), // the smallest subnormal, 5e-324
            f64::MIN_POSITIVE,
            f64::MAX,
            1e300,
            EXACT_INTEGER,
            below(EXACT_INTEGER),
            EXACT_INTEGER + 2.0, // whole, past what an integer is written for
            above(4.0),
            below(1.0),
            1.0,
            3.0,
        ];
        assert_eq!(below(12.35).to_string(), "12.349999999999998");
        for form in [CellsForm::Steps, CellsForm::Indices] {
            let c = CompactCommands { form, ..compact(&"F".repeat(amounts.len()), &[0; 16], &amounts) };
            let back = read(&serde_json::to_string(&c).unwrap());
            let bits = |c: &CompactCommands| c.amounts.iter().map(|a| a.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&back), bits(&c), "{form:?}");
        }
        // Only what is exact is written as an integer.
        let text = serde_json::to_string(&compact("FFFF", &[0; 4], &[EXACT_INTEGER, EXACT_INTEGER + 2.0, 1e300, -0.0]))
            .unwrap();
        assert!(text.ends_with(r#""n":[9007199254740992,9007199254740994.0,1e+300,-0.0]}"#), "{text}");
    }

    /// A step that leaves the cell indices is refused by the check, naming the step.
    #[test]
    fn steps_that_leave_the_cells_are_named() {
        let c = read(r#"{"k":"M","d":[3,-4],"n":[1]}"#);
        assert_eq!(c.check(10).unwrap_err(), "d[1] = -4 steps from cell #3 to -1, which is no cell");
        let c = read(r#"{"k":"M","d":[3,4294967295],"n":[1]}"#);
        assert!(c.check(10).unwrap_err().contains("to 4294967298, which is no cell"));
        let c = read(r#"{"k":"M","d":[3,9],"n":[1]}"#);
        assert_eq!(c.check(10).unwrap_err(), "cell #12 is not on the map (10 cells): the sum of d[0..=1]");
        let c = read(r#"{"k":"M","c":[3,12],"n":[1]}"#);
        assert_eq!(c.check(10).unwrap_err(), "cell #12 is not on the map (10 cells): c[1]");
        let c = read(r#"{"k":"M","c":[3,4],"d":[3,1],"n":[1]}"#);
        assert_eq!(c.check(10).unwrap_err(), "it has both `c` and `d`");
        let c = read(r#"{"k":"M","n":[1]}"#);
        assert!(c.check(10).unwrap_err().starts_with("it has no cells"));
        let c = read(r#"{"k":"M","d":[3,1],"n":[0]}"#);
        assert_eq!(c.check(10).unwrap_err(), "amount 0 is not a positive number: n[0]");
        assert_eq!(read(r#"{"k":"M","d":[3,1],"n":[2]}"#).check(10), Ok(()));
    }

    /// Regression: a bounded array filled to its bound when fewer than 4 entries were left to
    /// grow by panicked in `clamp(4, left)` (a final's 9 seats: 8 read, 1 left).
    #[test]
    fn a_bounded_array_may_be_filled_to_its_bound() {
        for n in 0..=MAX_SEATS {
            let text = serde_json::to_string(&vec![7u32; n]).unwrap();
            let mut d = serde_json::Deserializer::from_str(&text);
            let got: Vec<u32> = at_most(&mut d, MAX_SEATS, "seats").unwrap();
            assert_eq!(got, vec![7u32; n]);
        }
        let text = serde_json::to_string(&vec![7u32; MAX_SEATS + 1]).unwrap();
        let mut d = serde_json::Deserializer::from_str(&text);
        let err = at_most::<_, u32>(&mut d, MAX_SEATS, "seats").unwrap_err().to_string();
        assert!(err.contains("more than 9 entries"), "{err}");
    }
}
