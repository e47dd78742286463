//! Replays as files and as matches: reading and writing (plain or gzip), rebuilding the state of
//! any round, re-simulating to verify, the observation a seat got, figures, terminal rendering.

use std::fmt::Write as _;
use std::io::Read;

use std::path::Path;
use std::sync::Arc;

use gbely_rules::{Cell, Terrain};
use gbely_world::replay::{Answer, CellChange, ReplayError, Turn};
use gbely_world::{Map, Replay, SeatRole};

use crate::game::owner_code;
use crate::game::PlayerAnswer;
use crate::protocol::observation_json;
use crate::session::Session;
use crate::sim::{Match, MatchConfig, RoundReport};

/// Largest replay read, uncompressed: 1 GiB.
///
/// A full 150-round match on the reference map is about 25 MB; a final of 8 seats that flood
/// commands every round can be tens of times that. Reading streams through the decoder, so the
/// cap bounds the work a file (a gzip bomb) can ask for, not memory set aside. A match whose
/// agents answer megabytes every round can write a replay over the cap: it is refused, whole.
pub const MAX_REPLAY_BYTES: u64 = 1 << 30;

/// Why a replay file could not be read. The message already says the cause, so the cause is not
/// also chained as a `source` (an error report walking the chain would print it twice).
#[derive(Debug, thiserror::Error)]
pub enum ReplayFileError {
    #[error("cannot read {path}: {error}")]
    Io { path: String, error: std::io::Error },
    #[error("{path}: {error}")]
    Replay { path: String, error: ReplayError },
    #[error("{path}: not a replay: not UTF-8 text (an invalid byte at offset {offset})")]
    NotText { path: String, offset: u64 },
    #[error("{path}: larger than {MAX_REPLAY_BYTES} bytes uncompressed")]
    TooLarge { path: String },
}

/// Why a [`Guard`] stopped the stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stop {
    TooLarge,
    NotText { offset: u64 },
}

/// The decompressed bytes on their way to the parser: at most `max` of them ([`MAX_REPLAY_BYTES`]),
/// and UTF-8. Checking as they flow keeps a bomb or a binary file from being read whole; why it
/// stopped is kept in `stop`, since the parser reports only that reading failed.
struct Guard<R> {
    inner: R,
    max: u64,
    read: u64,
    /// Bytes of a UTF-8 sequence cut at the end of the last read, checked with the next one.
    pending: Vec<u8>,
    stop: std::rc::Rc<std::cell::Cell<Option<Stop>>>,
}

impl<R: Read> Read for Guard<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        let stop = if self.read + n as u64 > self.max { Some(Stop::TooLarge) } else { self.utf8(&buf[..n]) };
        self.read += n as u64;
        if let Some(stop) = stop {
            self.stop.set(Some(stop));
            return Err(std::io::Error::other("the replay file was refused while reading"));
        }
        Ok(n)
    }
}

impl<R> Guard<R> {
    /// Checks the next bytes (none at the end of the file) are UTF-8 text.
    fn utf8(&mut self, bytes: &[u8]) -> Option<Stop> {
        let start = self.read - self.pending.len() as u64;
        let joined;
        let chunk = if self.pending.is_empty() {
            bytes
        } else {
            self.pending.extend_from_slice(bytes);
            joined = std::mem::take(&mut self.pending);
            &joined[..]
        };
        match std::str::from_utf8(chunk) {
            Ok(_) => None,
            // A sequence cut by the end of this read: checked with the next (an error at the end).
            Err(e) if e.error_len().is_none() && !bytes.is_empty() => {
                self.pending = chunk[e.valid_up_to()..].to_vec();
                None
            }
            Err(e) => Some(Stop::NotText { offset: start + e.valid_up_to() as u64 }),
        }
    }
}

/// A replay file's JSON text as a stream, gzip-compressed or not: the content decides, not the name.
fn open_text(path: &Path) -> std::io::Result<(impl Read, std::rc::Rc<std::cell::Cell<Option<Stop>>>)> {
    use std::io::BufRead;
    let mut file = std::io::BufReader::new(std::fs::File::open(path)?);
    let inner: Box<dyn Read> = if file.fill_buf()?.starts_with(&[0x1f, 0x8b]) {
        #[cfg(feature = "gzip")]
        {
            Box::new(flate2::bufread::MultiGzDecoder::new(file))
        }
        #[cfg(not(feature = "gzip"))]
        return Err(std::io::Error::other("gzip-compressed, and this build reads no gzip (feature `gzip`)"));
    } else {
        Box::new(file)
    };
    let stop = std::rc::Rc::new(std::cell::Cell::new(None));
    let guard = Guard { inner, max: MAX_REPLAY_BYTES, read: 0, pending: Vec::new(), stop: stop.clone() };
    Ok((std::io::BufReader::with_capacity(1 << 16, guard), stop))
}

/// Reads a replay file, gzip-compressed (`.json.gz`) or not, and checks its structure
/// ([`Replay::check`]). The text streams from the file into the parser, so memory holds the
/// replay, not its text; at most [`MAX_REPLAY_BYTES`] are read.
pub fn read_replay(path: &Path) -> Result<Replay, ReplayFileError> {
    let p = path.display().to_string();
    let io = |error| ReplayFileError::Io { path: p.clone(), error };
    let (text, stop) = open_text(path).map_err(io)?;
    let error = match Replay::from_reader(text) {
        Ok(replay) => return Ok(replay),
        Err(error) => error,
    };
    let error = match (stop.get(), error) {
        (Some(Stop::TooLarge), _) => return Err(ReplayFileError::TooLarge { path: p }),
        (Some(Stop::NotText { offset }), _) => return Err(ReplayFileError::NotText { path: p, offset }),
        (None, ReplayError::Json(e)) if e.is_io() => return Err(io(e.into())),
        // A document that does not parse as a replay may be another document altogether: a
        // second reading of its head says so.
        (None, ReplayError::Json(e)) => {
            let (text, _) = open_text(path).map_err(io)?;
            Replay::head_error(text).unwrap_or(ReplayError::Json(e))
        }
        (None, error) => error,
    };
    Err(ReplayFileError::Replay { path: p, error })
}

/// The state of every cell at one moment.
#[derive(Clone, Debug, PartialEq)]
pub struct Frame {
    pub owner: Vec<i8>,
    pub units: Vec<f64>,
    pub fortification: Vec<f64>,
}

impl Frame {
    /// The starting state of a map.
    pub fn start(map: &Map) -> Frame {
        let m = Match::new(Arc::new(map.clone()), MatchConfig::default());
        Frame {
            owner: m.owners().iter().map(|&o| owner_code(o)).collect(),
            units: m.all_units().to_vec(),
            fortification: m.all_fortifications().to_vec(),
        }
    }

    /// Production of SPEC §4 step 1, exactly as the engine does it.
    pub fn produce(&mut self, map: &Map) {
        for i in 0..self.owner.len() {
            if self.owner[i] >= 0 {
                let c = Cell(i as u32);
                self.units[i] = crate::sim::produced(self.units[i], map.terrain(c).production(), map.is_base(c));
            }
        }
    }

    /// From the state at the end of the round before `turn` to the state at its end, as the file
    /// says: production, then the turn's changes.
    pub fn step(&mut self, map: &Map, turn: &Turn) -> Result<(), String> {
        self.produce(map);
        self.apply(&turn.changes, map.seats().len(), turn.round)
    }

    /// The turn's changes. [`Replay::check`] has seen that they fit the map; a replay built or
    /// changed in code gets an error here rather than a panic.
    fn apply(&mut self, changes: &[CellChange], seats: usize, round: u32) -> Result<(), String> {
        for &CellChange(cell, owner, units, fort) in changes {
            let i = cell as usize;
            if i >= self.owner.len() {
                return Err(format!("round {round}: a change for cell #{cell}, which is not on the map"));
            }
            if owner < -1 || owner as i64 >= seats as i64 {
                return Err(format!("round {round}: cell #{cell} given to seat {owner}, which does not exist"));
            }
            self.owner[i] = owner;
            self.units[i] = units;
            self.fortification[i] = fort;
        }
        Ok(())
    }

    pub fn cells_of(&self, seat: i8) -> usize {
        self.owner.iter().filter(|&&o| o == seat).count()
    }
}

/// Most cell states [`frames`] holds at once (`(turns + 1) × cells`): about 1 GiB.
pub const MAX_FRAME_CELLS: usize = 64 << 20;

/// The state at the end of each round as the file says (index 0 = the start, `r + 1` = the end
/// of round `r`), rebuilt from production and the recorded changes.
///
/// Every frame at once: for short replays and tests. A reader that goes round by round keeps one
/// [`Frame`] and [`Frame::step`]s it; one round is [`frame_after`].
pub fn frames(replay: &Replay, map: &Map) -> Result<Vec<Frame>, String> {
    let wanted = (replay.turns.len() + 1).saturating_mul(map.len());
    if wanted > MAX_FRAME_CELLS {
        return Err(format!(
            "{} rounds of {} cells are too many to hold at once; read them round by round",
            replay.turns.len(),
            map.len()
        ));
    }
    let mut f = Frame::start(map);
    let mut out = Vec::with_capacity(replay.turns.len() + 1);
    out.push(f.clone());
    for t in &replay.turns {
        f.step(map, t)?;
        out.push(f.clone());
    }
    Ok(out)
}

/// The state at the end of round `round` as the file says, rebuilt from the start.
pub fn frame_after(replay: &Replay, map: &Map, round: u32) -> Result<Frame, String> {
    let turns = replay
        .turns
        .get(..=round as usize)
        .ok_or_else(|| format!("round {round} was not played: the replay has {} rounds", replay.turns.len()))?;
    let mut f = Frame::start(map);
    for t in turns {
        f.step(map, t)?;
    }
    Ok(f)
}

/// Re-plays a replay's recorded answers round by round through a [`Session`], calling `each`
/// after every round with the round's index, the match and the report. The answers are the
/// file's, untouched; a seat with no answer recorded plays nothing, as in any session.
pub fn resimulate(replay: &Replay, map: Arc<Map>, mut each: impl FnMut(usize, &Match, &RoundReport) -> bool) -> Match {
    let seats = map.seats().len();
    let names = (0..seats).map(|s| replay.seats.get(s).map_or_else(String::new, |r| r.name.clone())).collect();
    let mut session = Session::new(map, MatchConfig { rounds: replay.rounds }, names);
    for (r, t) in replay.turns.iter().enumerate() {
        if session.is_over() {
            break;
        }
        for (s, answer) in t.answers.iter().enumerate().take(seats) {
            if let Some(a) = recorded_answer(answer) {
                session.submit(s as u8, a);
            }
        }
        session.advance();
        if !each(r, session.state(), session.report()) {
            break;
        }
    }
    session.into_state()
}

/// A recorded answer as a session takes it (`None` for a seat that was out of the game).
pub fn recorded_answer(answer: &Answer) -> Option<PlayerAnswer> {
    match answer {
        Answer::Commands(list) => Some(PlayerAnswer::Raw(list.clone())),
        Answer::Violation(v) => Some(PlayerAnswer::Violation { kind: v.kind, detail: v.detail.clone() }),
        Answer::Out => None,
    }
}

/// Where a replay and its re-simulation first part.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}{}{what}", round.map_or(String::new(), |r| format!("round {r}: ")), cell.as_ref().map_or(String::new(), |c| format!("cell {c}: ")))]
pub struct Mismatch {
    pub round: Option<u32>,
    pub cell: Option<String>,
    pub what: String,
}

fn mismatch(round: Option<u32>, cell: Option<String>, what: impl Into<String>) -> Mismatch {
    Mismatch { round, cell, what: what.into() }
}

/// What a successful verification checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verified {
    pub rounds: usize,
    pub seats: usize,
    pub cells: usize,
}

fn describe(o: i8, u: f64, f: f64) -> String {
    let who = if o < 0 { "neutral".to_string() } else { format!("seat {o}") };
    format!("{who}, units {u}, fortification {f}")
}

/// Re-simulates the match from the map and the recorded answers and checks that every round's
/// changes, figures and discarded commands, the final state and the result match the file.
pub fn verify(replay: &Replay) -> Result<Verified, Mismatch> {
    let map = Arc::new(replay.check().map_err(|e| mismatch(None, None, e.to_string()))?);
    let g = map.grid().clone();
    let seats = map.seats().len();
    // The file's own state, one round ahead of the re-simulation's callback at a time.
    let mut file_frame = Frame::start(&map);
    let mut first: Option<Mismatch> = None;
    let mut played = 0;
    let m = resimulate(replay, map.clone(), |r, m, report| {
        played = r + 1;
        let t = &replay.turns[r];
        if t.round != r as u32 {
            first = Some(mismatch(Some(r as u32), None, format!("turn {r} is numbered {}", t.round)));
            return false;
        }
        if let Err(e) = file_frame.step(&map, t) {
            first = Some(mismatch(Some(r as u32), None, e));
            return false;
        }
        let want = &file_frame;
        for c in 0..g.len() {
            let (o, u, f) = (owner_code(m.owners()[c]), m.all_units()[c], m.all_fortifications()[c]);
            if o != want.owner[c]
                || u.to_bits() != want.units[c].to_bits()
                || f.to_bits() != want.fortification[c].to_bits()
            {
                first = Some(mismatch(
                    Some(r as u32),
                    Some(g.id(Cell(c as u32))),
                    format!(
                        "the file says {}; the re-simulation gives {}",
                        describe(want.owner[c], want.units[c], want.fortification[c]),
                        describe(o, u, f)
                    ),
                ));
                return false;
            }
        }
        let cells: Vec<u32> = (0..seats as u8).map(|s| m.cell_count(s)).collect();
        if cells != t.cells {
            first = Some(mismatch(
                Some(r as u32),
                None,
                format!("cells per seat: the file says {:?}, the re-simulation {:?}", t.cells, cells),
            ));
            return false;
        }
        let units: Vec<f64> = (0..seats as u8).map(|s| m.unit_total(s)).collect();
        if units.iter().zip(&t.units).any(|(a, b)| a.to_bits() != b.to_bits()) || units.len() != t.units.len() {
            first = Some(mismatch(
                Some(r as u32),
                None,
                format!("units per seat: the file says {:?}, the re-simulation {:?}", t.units, units),
            ));
            return false;
        }
        let discarded: Vec<(u8, u32, &str)> =
            report.discarded.iter().map(|d| (d.seat, d.index, d.reason.code())).collect();
        let file_discarded: Vec<(u8, u32, &str)> =
            t.discarded.iter().map(|d| (d.seat, d.index, d.reason.code())).collect();
        if discarded != file_discarded {
            first = Some(mismatch(
                Some(r as u32),
                None,
                format!("discarded commands: the file says {file_discarded:?}, the re-simulation {discarded:?}"),
            ));
            return false;
        }
        true
    });
    if let Some(e) = first {
        return Err(e);
    }
    // A match stopped by Ctrl-C ends after its last recorded round without being over.
    let interrupted = replay.result.ended_by == crate::sim::EndReason::Interrupted && !m.is_over();
    if played != replay.turns.len() || !(m.is_over() || interrupted) {
        let ended = if m.is_over() { format!("ends after round {}", m.round()) } else { "is not over".to_string() };
        return Err(mismatch(
            None,
            None,
            format!("the file has {} rounds but the re-simulation {ended}", replay.turns.len()),
        ));
    }
    let fs = &replay.final_state;
    let last = &file_frame;
    if fs.owner != last.owner
        || fs.units.iter().zip(&last.units).any(|(a, b)| a.to_bits() != b.to_bits())
        || fs.fortification.iter().zip(&last.fortification).any(|(a, b)| a.to_bits() != b.to_bits())
        || fs.units.len() != last.units.len()
    {
        let c = (0..g.len().min(fs.owner.len()).min(fs.units.len()).min(fs.fortification.len())).find(|&c| {
            fs.owner[c] != last.owner[c]
                || fs.units[c].to_bits() != last.units[c].to_bits()
                || fs.fortification[c].to_bits() != last.fortification[c].to_bits()
        });
        return Err(mismatch(
            None,
            c.map(|c| g.id(Cell(c as u32))),
            "the final state differs from the state the rounds lead to".to_string(),
        ));
    }
    let names: Vec<String> = replay.seats.iter().map(|s| s.name.clone()).collect();
    let mut result = crate::game::match_result(&m, &names);
    if interrupted {
        result.ended_by = crate::sim::EndReason::Interrupted;
    }
    if result != replay.result {
        return Err(mismatch(
            None,
            None,
            format!(
                "the result differs: the file says {}, the re-simulation gives {}",
                serde_json::to_string(&replay.result).unwrap_or_default(),
                serde_json::to_string(&result).unwrap_or_default()
            ),
        ));
    }
    Ok(Verified { rounds: replay.turns.len(), seats, cells: g.len() })
}

/// The observation (SPEC §5 JSON) seat `seat` received in round `round`, and its answer.
pub fn observation_at(replay: &Replay, round: u32, seat: u8) -> Result<(String, Answer), String> {
    let map = Arc::new(replay.check().map_err(|e| e.to_string())?);
    if seat as usize >= map.seats().len() {
        return Err(format!("seat {seat} does not exist: the match has {} seats", map.seats().len()));
    }
    let turn = replay.turns.get(round as usize).ok_or_else(|| {
        format!("round {round} was not played: the replay has rounds 0…{}", replay.turns.len().saturating_sub(1))
    })?;
    let mut m = resimulate(replay, map.clone(), |r, _, _| r + 1 < round as usize);
    if round == 0 {
        m = Match::new(map.clone(), MatchConfig { rounds: replay.rounds });
    }
    if !m.is_active(seat) {
        return Err(format!("seat {seat} was out of the game in round {round}"));
    }
    let obs = m.observe(seat);
    Ok((observation_json(&obs, map.grid()), turn.answers.get(seat as usize).cloned().unwrap_or(Answer::Out)))
}

/// ANSI 256-colour codes of the seats (army seats in order; the Council blue).
/// A seat's colour: for the viewer (hex) and for terminals (the nearest xterm-256 colour).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeatColor {
    pub hex: &'static str,
    pub ansi: u8,
}

/// The one table of seat colours: armies in seat order, then the Council's blue.
const ARMY_COLORS: [SeatColor; 8] = [
    SeatColor { hex: "#d62728", ansi: 160 },
    SeatColor { hex: "#8e44ad", ansi: 129 },
    SeatColor { hex: "#ff7f0e", ansi: 208 },
    SeatColor { hex: "#17becf", ansi: 37 },
    SeatColor { hex: "#e377c2", ansi: 170 },
    SeatColor { hex: "#bcbd22", ansi: 142 },
    SeatColor { hex: "#8c564b", ansi: 94 },
    SeatColor { hex: "#00a86b", ansi: 240 },
];
const COUNCIL_COLOR: SeatColor = SeatColor { hex: "#1f3fbf", ansi: 26 };

/// The colour of each seat of a map, by role: armies take the table in order.
pub fn seat_colors(roles: &[SeatRole]) -> Vec<SeatColor> {
    let mut armies = 0;
    roles
        .iter()
        .map(|r| match r {
            SeatRole::Council => COUNCIL_COLOR,
            SeatRole::Army => {
                armies += 1;
                ARMY_COLORS[(armies - 1) % ARMY_COLORS.len()]
            }
        })
        .collect()
}

/// A frame for terminals: one character per cell (neutral: `.` `^` `~` by terrain; owned: the
/// seat's digit; a base: the seat's letter `A`, `B`, …, `b` for a neutral base), with ANSI
/// colours when `color` is set, and a figures line per seat.
pub fn render_frame(replay: &Replay, map: &Map, frame: &Frame, round: Option<u32>, color: bool) -> String {
    let g = map.grid();
    let mut s = String::new();
    let label = round.map_or("the start".to_string(), |r| format!("the end of round {r}"));
    let _ = writeln!(
        s,
        "{} on {} ({}×{}) at {label}",
        replay.seats.iter().map(|x| x.name.as_str()).collect::<Vec<_>>().join(" vs "),
        map.name(),
        map.width(),
        map.height()
    );
    let roles: Vec<SeatRole> = map.seats().iter().map(|s| s.role).collect();
    let colors: Vec<u8> = seat_colors(&roles).iter().map(|c| c.ansi).collect();
    for r in 0..g.height() {
        let mut last: Option<u8> = None;
        for c in 0..g.width() {
            let cell = g.cell(r, c);
            let i = cell.index();
            let o = frame.owner[i];
            let ch = match (o, map.is_base(cell)) {
                (-1, true) => 'b',
                (-1, false) => map.terrain(cell).glyph(),
                (k, true) => (b'A' + k as u8) as char,
                (k, false) => (b'0' + k as u8) as char,
            };
            if color {
                let bg = if o >= 0 {
                    colors[o as usize]
                } else {
                    match map.terrain(cell) {
                        Terrain::Meadow => 22,
                        Terrain::Hill => 94,
                        Terrain::River => 24,
                    }
                };
                if last != Some(bg) {
                    let _ = write!(s, "\x1b[48;5;{bg}m\x1b[38;5;15m");
                    last = Some(bg);
                }
            }
            s.push(ch);
        }
        if color {
            s.push_str("\x1b[0m");
        }
        s.push('\n');
    }
    let total = g.len() as f64;
    for (k, (seat, ansi)) in replay.seats.iter().zip(&colors).enumerate() {
        let cells = frame.cells_of(k as i8);
        let units: f64 = (0..g.len()).filter(|&i| frame.owner[i] == k as i8).map(|i| frame.units[i]).sum();
        let swatch = if color { format!("\x1b[48;5;{ansi}m  \x1b[0m ") } else { String::new() };
        let _ = writeln!(
            s,
            "{swatch}seat {k} {:<20} {:>5} cells {:>6.2} %  {:>9.1} units",
            seat.name,
            cells,
            cells as f64 / total * 100.0,
            units
        );
    }
    s
}

/// Figures of a replay: per round cells, shares, units and captures per seat; per side totals.
pub fn stats(replay: &Replay) -> Result<serde_json::Value, String> {
    let map = replay.check().map_err(|e| e.to_string())?;
    let seats = map.seats().len();
    let total = map.len() as f64;
    let mut rounds = Vec::new();
    let mut captures_total = vec![0u32; seats];
    let mut discarded: Vec<std::collections::BTreeMap<String, u32>> = vec![Default::default(); seats];
    let mut violations = vec![0u32; seats];
    let mut after = Frame::start(&map);
    for t in &replay.turns {
        let before = after.owner.clone();
        after.step(&map, t)?;
        let mut caps = vec![0u32; seats];
        for (i, &o) in after.owner.iter().enumerate() {
            if o >= 0 && o != before[i] {
                caps[o as usize] += 1;
            }
        }
        for (s, c) in caps.iter().enumerate() {
            captures_total[s] += c;
        }
        for d in &t.discarded {
            if let Some(m) = discarded.get_mut(d.seat as usize) {
                *m.entry(d.reason.code().to_string()).or_default() += 1;
            }
        }
        for (s, a) in t.answers.iter().enumerate() {
            if matches!(a, Answer::Violation(_)) && s < seats {
                violations[s] += 1;
            }
        }
        let shares: Vec<f64> = t.cells.iter().map(|&c| c as f64 / total * 100.0).collect();
        rounds.push(serde_json::json!({"round": t.round, "cells": t.cells, "shares": shares, "units": t.units, "captures": caps}));
    }
    let sides: Vec<serde_json::Value> = (0..seats)
        .map(|s| {
            serde_json::json!({
                "seat": s,
                "name": replay.seats.get(s).map_or("", |x| x.name.as_str()),
                "captures": captures_total[s],
                "violations": violations[s],
                "discarded": discarded[s],
                "result": replay.result.sides.get(s),
            })
        })
        .collect();
    Ok(
        serde_json::json!({"map": replay.map.name, "rounds": rounds, "sides": sides, "ended_by": replay.result.ended_by}),
    )
}

/// [`stats`] as a table.
pub fn stats_text(replay: &Replay, stats: &serde_json::Value) -> String {
    let mut s = String::new();
    let names: Vec<&str> = replay.seats.iter().map(|x| x.name.as_str()).collect();
    let _ = writeln!(
        s,
        "{} on {}: {} rounds, ended by {}",
        names.join(" vs "),
        replay.map.name,
        replay.turns.len(),
        replay.result.ended_by.wire().replace('_', " ")
    );
    let _ = write!(s, "round");
    for n in &names {
        let _ = write!(s, " | {:>24}", format!("{n:.12}: share cells units +cap"));
    }
    s.push('\n');
    let rounds = stats["rounds"].as_array().cloned().unwrap_or_default();
    for r in &rounds {
        let _ = write!(s, "{:>5}", r["round"]);
        for k in 0..names.len() {
            let _ = write!(
                s,
                " | {:>6.2}% {:>5} {:>8.1} {:>3}",
                r["shares"][k].as_f64().unwrap_or(0.0),
                r["cells"][k],
                r["units"][k].as_f64().unwrap_or(0.0),
                r["captures"][k]
            );
        }
        s.push('\n');
    }
    for side in stats["sides"].as_array().cloned().unwrap_or_default() {
        let disc: Vec<String> = side["discarded"]
            .as_object()
            .map(|m| m.iter().map(|(k, v)| format!("{v} {}", k.replace('_', " "))).collect())
            .unwrap_or_default();
        let total: u64 =
            side["discarded"].as_object().map(|m| m.values().filter_map(|v| v.as_u64()).sum()).unwrap_or(0);
        let _ = writeln!(
            s,
            "{}: {} captures, {} violations, {} discarded{}{}",
            side["name"].as_str().unwrap_or(""),
            side["captures"],
            side["violations"],
            total,
            if disc.is_empty() { "" } else { ": " },
            disc.join(", ")
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads `bytes` through a [`Guard`] of `max` bytes, `chunk` bytes per read.
    fn guarded(bytes: &[u8], max: u64, chunk: usize) -> (Vec<u8>, Option<Stop>) {
        struct Chunks<'a>(&'a [u8], usize);
        impl Read for Chunks<'_> {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                let n = self.0.len().min(self.1).min(buf.len());
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let stop = std::rc::Rc::new(std::cell::Cell::new(None));
        let mut g = Guard { inner: Chunks(bytes, chunk), max, read: 0, pending: Vec::new(), stop: stop.clone() };
        let mut out = Vec::new();
        let _ = g.read_to_end(&mut out);
        (out, stop.get())
    }

    #[test]
    fn the_guard_passes_utf8_cut_anywhere_and_stops_at_a_bad_byte_or_the_cap() {
        let text = "{\"name\": \"Žilina – 🦀\"}".as_bytes();
        for chunk in 1..=text.len() {
            assert_eq!(guarded(text, 1000, chunk), (text.to_vec(), None), "chunk {chunk}");
        }
        let mut bad = text.to_vec();
        bad[12] = 0xff;
        assert_eq!(guarded(&bad, 1000, 5).1, Some(Stop::NotText { offset: 12 }));
        // A sequence cut by the end of the file.
        assert_eq!(guarded(&text[..text.len() - 4], 1000, 3).1, Some(Stop::NotText { offset: 22 }));
        assert_eq!(guarded(text, text.len() as u64, 7).1, None);
        assert_eq!(guarded(text, text.len() as u64 - 1, 7).1, Some(Stop::TooLarge));
    }
}
