//! The protocol of SPEC §5 and §6 in typed form.
//!
//! Rust agents get an [`Observation`] with cell indices instead of strings; the JSON form with the
//! exact wire names is produced at the process boundary by the engine.

use serde::{Deserialize, Serialize};
use std::fmt;

use crate::{Cell, Neighbours, Terrain};

/// The owner of a foreign cell as one side sees it (the `vlastnik` field).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Owner {
    /// `hbp`: neutral mines, never act.
    Neutral,
    /// `zastupitelstvo`: the Council (in a duel of two agents: the other agent).
    Council,
    /// `armada` (1) or `armada_2` … `armada_8`: finalists by seat relative to the observer
    /// (SPEC §9). An agent never sees `Army(1)` among foreign cells; the Council sees seat 0 so.
    Army(u8),
}

impl Owner {
    /// The wire name: `hbp`, `zastupitelstvo`, `armada`, `armada_2` … `armada_8`.
    pub fn wire(self) -> &'static str {
        const ARMIES: [&str; 9] =
            ["armada", "armada", "armada_2", "armada_3", "armada_4", "armada_5", "armada_6", "armada_7", "armada_8"];
        match self {
            Owner::Neutral => "hbp",
            Owner::Council => "zastupitelstvo",
            Owner::Army(n) => ARMIES.get(n as usize).copied().unwrap_or("armada"),
        }
    }

    /// The owner of a wire name; `None` for anything else (`armada_1` and `armada_9` too).
    pub fn from_wire(s: &str) -> Option<Owner> {
        match s {
            "hbp" => Some(Owner::Neutral),
            "zastupitelstvo" => Some(Owner::Council),
            "armada" => Some(Owner::Army(1)),
            _ => {
                let n: u8 = s.strip_prefix("armada_")?.parse().ok()?;
                (2..=8).contains(&n).then_some(Owner::Army(n))
            }
        }
    }

    /// Whether this owner is an army (`armada*`).
    pub fn is_army(self) -> bool {
        matches!(self, Owner::Army(_))
    }
}

impl Serialize for Owner {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.wire())
    }
}

impl<'de> Deserialize<'de> for Owner {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Owner::from_wire(&s).ok_or_else(|| serde::de::Error::custom(format!("unknown owner `{s}`")))
    }
}

/// Rounds a value for the observation: `(x × 10).round() / 10`, halves away from zero (SPEC §6.6).
///
/// Bit-identical to `(x * 10.0).round() / 10.0`, without the libm call `round` compiles to on
/// baseline x86-64 (it is on the hot path of every observation).
#[inline]
pub fn round_tenth(x: f64) -> f64 {
    if x == 0.0 {
        return x; // the common case of fortification; keeps the sign of zero like the formula
    }
    round_half_away(x * 10.0) / 10.0
}

/// `f64::round` (halves away from zero), bit for bit, without the libm call.
///
/// A positive `y` below 2^52 (every observed value) is rounded by the addition of 2^52, whose
/// result has no fraction: to the nearest integer `r`, a half to the even one. `y - r` is exact
/// (they are within 0.5 of each other), and it is 0.5 only where a half was rounded down, which
/// `round` rounds up. Other values go by truncation through `i64`: for |y| < 2^52 the difference
/// `y - trunc(y)` is exact, so comparing it with ±0.5 decides exactly as `round` does.
#[inline]
pub fn round_half_away(y: f64) -> f64 {
    const TWO_52: f64 = 4_503_599_627_370_496.0;
    if y > 0.0 && y < TWO_52 {
        let r = (y + TWO_52) - TWO_52;
        return if y - r == 0.5 { r + 1.0 } else { r };
    }
    if y.is_nan() || y.abs() >= TWO_52 {
        return y.round(); // already an integer (or NaN / infinite): let libm say so
    }
    let t = (y as i64) as f64;
    let d = y - t;
    // Branch-free: the comparisons are unpredictable on real data. Rounding keeps the sign, and
    // copysign restores it for results of zero (`-0.3` rounds to `-0.0`, as `f64::round` does).
    let r = t + ((d >= 0.5) as i64 as f64) - ((d <= -0.5) as i64 as f64);
    r.copysign(y)
}

/// One of the observer's own cells (`moje_pola`).
#[derive(Clone, Debug, PartialEq)]
pub struct OwnCell {
    /// `id`: the cell ([`Cell::at`] numbering).
    pub cell: Cell,
    /// `typ`: the cell's terrain.
    pub terrain: Terrain,
    /// `jednotky`, rounded to one decimal.
    pub units: f64,
    /// `opevnenie`, rounded to one decimal.
    pub fortification: f64,
    /// `susedia`: all neighbours, own and foreign, north, south, west, east.
    pub neighbours: Neighbours,
}

/// A foreign cell next to the observer's territory (`viditelne_susedne_pola`).
#[derive(Clone, Debug, PartialEq)]
pub struct VisibleCell {
    /// `id`: the cell ([`Cell::at`] numbering).
    pub cell: Cell,
    /// `vlastnik`: who holds it, as this side sees it.
    pub owner: Owner,
    /// `posadka`: raw units (not defence), rounded to one decimal.
    pub garrison: f64,
    /// `opevnenie`, rounded to one decimal.
    pub fortification: f64,
    /// `typ`: the cell's terrain (its defence bonus applies to `garrison`).
    pub terrain: Terrain,
}

/// What one side sees at the start of its decision (SPEC §5).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Observation {
    /// `kolo`: 0 … 149.
    pub round: u32,
    /// `moja_zakladna`: the home base, also after it was lost.
    pub base: Cell,
    /// Own cells, row-major.
    pub own: Vec<OwnCell>,
    /// Foreign cells neighbouring own cells, each once, row-major.
    pub visible: Vec<VisibleCell>,
}

impl Observation {
    /// The own cell `c`, if owned (binary search: `own` is sorted).
    pub fn own_cell(&self, c: Cell) -> Option<&OwnCell> {
        self.own.binary_search_by_key(&c, |o| o.cell).ok().map(|i| &self.own[i])
    }
    /// The visible foreign cell `c`, if visible.
    pub fn visible_cell(&self, c: Cell) -> Option<&VisibleCell> {
        self.visible.binary_search_by_key(&c, |v| v.cell).ok().map(|i| &self.visible[i])
    }
}

/// A well-formed command (SPEC §6). Whether it is *valid* is decided when its turn comes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Command {
    /// `MOVE z → na`, `pocet` units (SPEC §6.3).
    Move {
        /// `z`: an own cell the units leave.
        from: Cell,
        /// `na`: an own neighbouring cell; passability of its terrain applies.
        to: Cell,
        /// `pocet`: units asked for, clamped to the ready units of `from`.
        amount: f64,
    },
    /// `ATTACK z → na`, `pocet` units (SPEC §6.4).
    Attack {
        /// `z`: an own cell the attackers leave.
        from: Cell,
        /// `na`: a foreign neighbouring cell.
        to: Cell,
        /// `pocet`: units asked for, clamped to the ready units of `from`.
        amount: f64,
    },
    /// `FORTIFY pole`, `investicia` units (SPEC §6.5).
    Fortify {
        /// `pole`: the own cell fortified.
        cell: Cell,
        /// `investicia`: units invested (each buys 0.3 fortification), clamped to the ready units.
        amount: f64,
    },
}

impl Command {
    /// The cell whose ready units the command draws on.
    pub fn source(&self) -> Cell {
        match *self {
            Command::Move { from, .. } | Command::Attack { from, .. } => from,
            Command::Fortify { cell, .. } => cell,
        }
    }
    /// The units asked for (`pocet` / `investicia`), before clamping to the ready units.
    pub fn amount(&self) -> f64 {
        match *self {
            Command::Move { amount, .. } | Command::Attack { amount, .. } | Command::Fortify { amount, .. } => amount,
        }
    }
    /// The wire name of the command type.
    pub fn wire_type(&self) -> &'static str {
        match self {
            Command::Move { .. } => "MOVE",
            Command::Attack { .. } => "ATTACK",
            Command::Fortify { .. } => "FORTIFY",
        }
    }
}

/// Why a command was discarded (SPEC §6.2). A discarded command is never a violation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DiscardReason {
    /// An item of the list that is not a JSON object.
    NotAnObject,
    /// `typ` is not exactly `MOVE`, `ATTACK` or `FORTIFY`.
    UnknownType,
    /// A required field is missing.
    MissingField,
    /// A field has the wrong JSON type.
    WrongFieldType,
    /// An id is not a cell of the map.
    UnknownCell,
    /// The amount is not a finite number `> 0`.
    InvalidAmount,
    /// The source cell (`z` / `pole`) is not owned by the side.
    SourceNotOwned,
    /// MOVE: the target is not owned by the side.
    TargetNotOwned,
    /// The two cells are not neighbours.
    NotAdjacent,
    /// ATTACK on a cell the side owns (e.g. captured earlier in the same step).
    TargetOwnCell,
    /// ATTACK on another finalist's cell (final mode); its units are not spent.
    TargetFinalist,
    /// The source cell has no ready units left this round.
    NoReadyUnits,
}

impl DiscardReason {
    /// Every reason, in declaration order.
    pub const ALL: [DiscardReason; 12] = [
        DiscardReason::NotAnObject,
        DiscardReason::UnknownType,
        DiscardReason::MissingField,
        DiscardReason::WrongFieldType,
        DiscardReason::UnknownCell,
        DiscardReason::InvalidAmount,
        DiscardReason::SourceNotOwned,
        DiscardReason::TargetNotOwned,
        DiscardReason::NotAdjacent,
        DiscardReason::TargetOwnCell,
        DiscardReason::TargetFinalist,
        DiscardReason::NoReadyUnits,
    ];

    /// A stable snake_case code (as in replays).
    pub fn code(self) -> &'static str {
        match self {
            DiscardReason::NotAnObject => "not_an_object",
            DiscardReason::UnknownType => "unknown_type",
            DiscardReason::MissingField => "missing_field",
            DiscardReason::WrongFieldType => "wrong_field_type",
            DiscardReason::UnknownCell => "unknown_cell",
            DiscardReason::InvalidAmount => "invalid_amount",
            DiscardReason::SourceNotOwned => "source_not_owned",
            DiscardReason::TargetNotOwned => "target_not_owned",
            DiscardReason::NotAdjacent => "not_adjacent",
            DiscardReason::TargetOwnCell => "target_own_cell",
            DiscardReason::TargetFinalist => "target_finalist",
            DiscardReason::NoReadyUnits => "no_ready_units",
        }
    }
}

impl fmt::Display for DiscardReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DiscardReason::NotAnObject => "not a JSON object",
            DiscardReason::UnknownType => "unknown command type (not MOVE, ATTACK or FORTIFY)",
            DiscardReason::MissingField => "a required field is missing",
            DiscardReason::WrongFieldType => "a field has the wrong JSON type",
            DiscardReason::UnknownCell => "cell id not on the map",
            DiscardReason::InvalidAmount => "amount is not a finite number > 0",
            DiscardReason::SourceNotOwned => "source cell not owned",
            DiscardReason::TargetNotOwned => "MOVE target not owned",
            DiscardReason::NotAdjacent => "target not adjacent",
            DiscardReason::TargetOwnCell => "ATTACK on an own cell",
            DiscardReason::TargetFinalist => "ATTACK on another finalist",
            DiscardReason::NoReadyUnits => "not enough ready units (0 ready)",
        })
    }
}

/// An agent that decides in-process from its observation alone.
///
/// ```
/// use gbely_rules::{Command, Decide, Observation};
///
/// /// Attacks nothing, moves nothing: the smallest possible agent.
/// struct Idle;
/// impl Decide for Idle {
///     fn decide(&mut self, _obs: &Observation) -> Vec<Command> {
///         Vec::new()
///     }
/// }
/// assert!(Idle.decide(&Observation::default()).is_empty());
/// ```
pub trait Decide {
    /// The commands for this round, resolved in the order given.
    fn decide(&mut self, obs: &Observation) -> Vec<Command>;

    /// Notes on the round just decided, for the replay and its viewer (never for the rules):
    /// asked once after each `decide`. The default has none.
    fn notes(&mut self) -> Option<Notes> {
        None
    }
}

impl<D: Decide + ?Sized> Decide for Box<D> {
    fn decide(&mut self, obs: &Observation) -> Vec<Command> {
        (**self).decide(obs)
    }
    fn notes(&mut self) -> Option<Notes> {
        (**self).notes()
    }
}

/// What an agent notes about a round, to see later in the replay: a text, and notes on cells
/// ("why this attack"). The rules ignore them; on the wire they are the answer's `debug` key
/// (`{"prikazy": […], "debug": {"text": "…", "cells": {"P12_07": "…"}}}`), an unknown key the
/// judge ignores, so an agent that writes them runs unchanged there. Replays keep them within
/// bounds ([`Notes::MAX_TEXT`], [`Notes::MAX_CELLS`], [`Notes::MAX_CELL_TEXT`] a round, and a
/// budget of 2 KiB a round, `gbely_engine::recorder::NOTE_BYTES_PER_ROUND`); what is over is
/// cut, with a mark.
///
/// ```
/// use gbely_rules::{Cell, Command, Decide, Notes, Observation};
///
/// #[derive(Default)]
/// struct Explains { last: Option<Notes> }
/// impl Decide for Explains {
///     fn decide(&mut self, obs: &Observation) -> Vec<Command> {
///         let mut n = Notes::text(format!("{} cells", obs.own.len()));
///         n.cells.push((obs.base, "home".into()));
///         self.last = Some(n);
///         Vec::new()
///     }
///     fn notes(&mut self) -> Option<Notes> { self.last.take() }
/// }
/// let mut agent = Explains::default();
/// agent.decide(&Observation::default());
/// assert_eq!(agent.notes().unwrap().text, "0 cells");
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Notes {
    /// About the round as a whole.
    pub text: String,
    /// About cells: each cell and its note.
    pub cells: Vec<(Cell, String)>,
    /// Drawn on the map by the viewer: dots, colours, lines and labels on cells.
    pub draw: Vec<Drawing>,
}

/// What an agent draws on the map for the viewer (the answer's `debug` key's `draw`): a dot on a
/// cell, the cell coloured, a line between two cells, or a short label; in a colour of its own
/// or (`None`) its seat's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Drawing {
    /// What and where.
    pub shape: Shape,
    /// `#rrggbb`, as red, green and blue; `None`: the seat's colour.
    pub color: Option<[u8; 3]>,
}

/// The shape of a [`Drawing`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Shape {
    /// A dot in the middle of the cell.
    Dot(Cell),
    /// The cell coloured (half see-through, so that the owner's colour shows).
    Fill(Cell),
    /// A line from the middle of one cell to the middle of another.
    Line(Cell, Cell),
    /// A label of at most [`Notes::MAX_LABEL`] characters on the cell.
    Label(Cell, String),
}

impl Drawing {
    /// Parses `#rgb` or `#rrggbb` (any case); `None` for anything else.
    pub fn parse_color(text: &str) -> Option<[u8; 3]> {
        let hex = text.strip_prefix('#')?;
        if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let digit = |k: usize| u8::from_str_radix(&hex[k..k + 1], 16).ok();
        match hex.len() {
            3 => Some([digit(0)? * 17, digit(1)? * 17, digit(2)? * 17]),
            6 => Some([0, 2, 4].map(|k| u8::from_str_radix(&hex[k..k + 2], 16).unwrap_or(0))),
            _ => None,
        }
    }

    /// The colour as `#rrggbb`, or the empty string for the seat's.
    pub fn color_text(&self) -> String {
        self.color.map_or(String::new(), |[r, g, b]| format!("#{r:02x}{g:02x}{b:02x}"))
    }
}

impl Notes {
    /// Most characters of a round's text a replay keeps.
    pub const MAX_TEXT: usize = 2000;
    /// Most cell notes of a round a replay keeps.
    pub const MAX_CELLS: usize = 64;
    /// Most characters of one cell's note a replay keeps.
    pub const MAX_CELL_TEXT: usize = 200;
    /// Most drawings of a round a replay keeps.
    pub const MAX_DRAWINGS: usize = 64;
    /// Most characters of a drawn label a replay keeps.
    pub const MAX_LABEL: usize = 16;

    /// Notes with only a text.
    pub fn text(text: impl Into<String>) -> Notes {
        Notes { text: text.into(), ..Notes::default() }
    }

    /// Whether there is nothing in them: no text, no cell notes, no drawings.
    pub fn is_empty(&self) -> bool {
        self.text.is_empty() && self.cells.is_empty() && self.draw.is_empty()
    }

    /// These notes within a round's bounds: the text and each cell's note cut to their most
    /// characters (ending in `…`), the cells after [`Notes::MAX_CELLS`] left out with a mark in the
    /// text.
    pub fn bounded(mut self) -> Notes {
        cut_chars(&mut self.text, Notes::MAX_TEXT);
        if self.cells.len() > Notes::MAX_CELLS {
            let left = self.cells.len() - Notes::MAX_CELLS;
            self.cells.truncate(Notes::MAX_CELLS);
            let mark = format!(" [{left} more cell notes cut]");
            cut_chars(&mut self.text, Notes::MAX_TEXT - mark.chars().count());
            self.text.push_str(&mark);
        }
        for (_, note) in &mut self.cells {
            cut_chars(note, Notes::MAX_CELL_TEXT);
        }
        if self.draw.len() > Notes::MAX_DRAWINGS {
            let left = self.draw.len() - Notes::MAX_DRAWINGS;
            self.draw.truncate(Notes::MAX_DRAWINGS);
            let mark = format!(" [{left} more drawings cut]");
            cut_chars(&mut self.text, Notes::MAX_TEXT - mark.chars().count());
            self.text.push_str(&mark);
        }
        for d in &mut self.draw {
            if let Shape::Label(_, text) = &mut d.shape {
                cut_chars(text, Notes::MAX_LABEL);
            }
        }
        self
    }
}

/// Cuts `s` to at most `max` characters, the last one `…` when cut.
fn cut_chars(s: &mut String, max: usize) {
    if s.chars().count() > max {
        let keep: String = s.chars().take(max.saturating_sub(1)).collect();
        *s = keep + "…";
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_are_cut_to_their_bounds_with_a_mark() {
        let long = "x".repeat(Notes::MAX_TEXT + 10);
        let cells: Vec<(Cell, String)> = (0..70).map(|k| (Cell(k), "y".repeat(300))).collect();
        let n = Notes { text: long, cells, ..Notes::default() }.bounded();
        assert_eq!(n.text.chars().count(), Notes::MAX_TEXT);
        assert!(n.text.ends_with(" [6 more cell notes cut]"), "{}", &n.text[n.text.len() - 40..]);
        assert_eq!(n.cells.len(), Notes::MAX_CELLS);
        assert!(n.cells.iter().all(|(_, t)| t.chars().count() == Notes::MAX_CELL_TEXT && t.ends_with('…')));
        let short = Notes::text("fine").bounded();
        assert_eq!(short, Notes::text("fine"));
    }

    #[test]
    fn observation_rounding_is_halves_away_from_zero_in_f64() {
        assert_eq!(round_tenth(14.0), 14.0);
        assert_eq!(round_tenth(0.15), 0.2); // 0.15 * 10 = 1.5 exactly in f64 → 2
        assert_eq!(round_tenth(0.25), 0.3);
        assert_eq!(round_tenth(2.04999), 2.0);
        assert_eq!(round_tenth(1.9999999999954965), 2.0);
        assert_eq!(round_tenth(6.6000000000000005), 6.6);
        assert_eq!(round_tenth(0.04), 0.0);
    }

    #[test]
    fn fast_rounding_equals_f64_round_bit_for_bit() {
        let mut x = 0x1234_5678_9abc_def0u64;
        let check = |y: f64| assert_eq!(round_half_away(y).to_bits(), y.round().to_bits(), "{y:e}");
        for y in [
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.5,
            2.5,
            -2.5,
            0.49999999999999994,
            -0.49999999999999994,
            4503599627370495.5,
            4503599627370494.5,
            4503599627370495.0,
            4503599627370496.0,
            5e-324,
            2.2250738585072014e-308,
            0.5000000000000001,
            1.4999999999999998,
            3.5,
            1234567.5,
            1234568.5,
            9.0e18,
            -9.0e18,
            1e300,
            f64::INFINITY,
        ] {
            check(y);
        }
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Values of every magnitude, and tenths near halves.
            check(f64::from_bits(x) % 1e17);
            check((x % 2_000_000) as f64 / 20.0 - 50_000.0);
            check((x >> 11) as f64 * f64::EPSILON * 1e6 - 5e5);
        }
    }

    #[test]
    fn owner_wire_names() {
        assert_eq!(Owner::Neutral.wire(), "hbp");
        assert_eq!(Owner::Council.wire(), "zastupitelstvo");
        assert_eq!(Owner::Army(1).wire(), "armada");
        assert_eq!(Owner::Army(8).wire(), "armada_8");
        for o in [Owner::Neutral, Owner::Council, Owner::Army(1), Owner::Army(2), Owner::Army(8)] {
            assert_eq!(Owner::from_wire(o.wire()), Some(o));
        }
        assert_eq!(Owner::from_wire("armada_1"), None);
        assert_eq!(Owner::from_wire("armada_9"), None);
    }

    #[test]
    fn discard_codes_are_distinct() {
        let mut codes: Vec<_> = DiscardReason::ALL.iter().map(|r| r.code()).collect();
        codes.sort();
        codes.dedup();
        assert_eq!(codes.len(), DiscardReason::ALL.len());
    }
}
