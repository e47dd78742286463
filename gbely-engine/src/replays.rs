//! Replays as files and as matches: reading and writing (plain or gzip), rebuilding the state of
//! any round, re-simulating to verify, the observation a seat got, figures, terminal rendering.

use std::fmt::Write as _;

use std::path::Path;
use std::sync::Arc;

use gbely_rules::{Cell, Terrain};
use gbely_world::replay::{Answer, CellChange, ReplayError};
use gbely_world::{Map, Replay, SeatRole};

use crate::game::owner_code;
use crate::game::{PlayerAnswer, ViolationKind};
use crate::protocol::observation_json;
use crate::session::Session;
use crate::sim::{Match, MatchConfig, RoundReport};

/// Largest replay accepted after decompression (a guard against a gzip bomb).
pub const MAX_REPLAY_BYTES: u64 = 2 << 30;

/// Why a replay file could not be read. The message already says the cause, so the cause is not
/// also chained as a `source` (an error report walking the chain would print it twice).
#[derive(Debug, thiserror::Error)]
pub enum ReplayFileError {
    #[error("cannot read {path}: {error}")]
    Io { path: String, error: std::io::Error },
    #[error("{path}: {error}")]
    Replay { path: String, error: ReplayError },
    #[error("{path}: not a replay: not UTF-8 text ({error})")]
    NotText { path: String, error: std::string::FromUtf8Error },
    #[error("{path}: larger than {MAX_REPLAY_BYTES} bytes uncompressed")]
    TooLarge { path: String },
}

/// Reads a replay file, gzip-compressed (`.json.gz`) or not: the content decides, not the name.
pub fn read_replay(path: &Path) -> Result<Replay, ReplayFileError> {
    let p = path.display().to_string();
    let raw = std::fs::read(path).map_err(|error| ReplayFileError::Io { path: p.clone(), error })?;
    let text = if raw.starts_with(&[0x1f, 0x8b]) { gunzip(&raw, &p)? } else { raw };
    let text = String::from_utf8(text).map_err(|error| ReplayFileError::NotText { path: p.clone(), error })?;
    Replay::from_json(&text).map_err(|error| ReplayFileError::Replay { path: p, error })
}

/// The content of a gzip-compressed replay, at most [`MAX_REPLAY_BYTES`].
#[cfg(feature = "gzip")]
fn gunzip(raw: &[u8], p: &str) -> Result<Vec<u8>, ReplayFileError> {
    let p = p.to_string();
    let mut out = Vec::new();
    use std::io::Read;
    flate2::read::MultiGzDecoder::new(raw)
        .take(MAX_REPLAY_BYTES + 1)
        .read_to_end(&mut out)
        .map_err(|error| ReplayFileError::Io { path: p.clone(), error })?;
    if out.len() as u64 > MAX_REPLAY_BYTES {
        return Err(ReplayFileError::TooLarge { path: p });
    }
    Ok(out)
}

#[cfg(not(feature = "gzip"))]
fn gunzip(_raw: &[u8], p: &str) -> Result<Vec<u8>, ReplayFileError> {
    let error = std::io::Error::other("gzip-compressed, and this build reads no gzip (feature `gzip`)");
    Err(ReplayFileError::Io { path: p.to_string(), error })
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

/// The state at the end of each round as the file says (index 0 = the start, `r + 1` = the end
/// of round `r`), rebuilt from production and the recorded changes.
pub fn frames(replay: &Replay, map: &Map) -> Result<Vec<Frame>, String> {
    let mut f = Frame::start(map);
    let mut out = vec![f.clone()];
    for t in &replay.turns {
        f.produce(map);
        f.apply(&t.changes, map.seats().len(), t.round)?;
        out.push(f.clone());
    }
    Ok(out)
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
        Answer::Violation(v) => Some(PlayerAnswer::Violation {
            kind: ViolationKind::from_wire(&v.kind).unwrap_or(ViolationKind::Crash),
            detail: v.detail.clone(),
        }),
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
    let map = Arc::new(replay.map.to_map().map_err(|e| mismatch(None, None, e.to_string()))?);
    let g = map.grid().clone();
    let seats = map.seats().len();
    if replay.seats.len() != seats {
        return Err(mismatch(None, None, format!("the file lists {} seats, its map has {seats}", replay.seats.len())));
    }
    let file_frames = frames(replay, &map).map_err(|e| mismatch(None, None, e))?;
    let mut first: Option<Mismatch> = None;
    let mut played = 0;
    let m = resimulate(replay, map.clone(), |r, m, report| {
        played = r + 1;
        let t = &replay.turns[r];
        if t.round != r as u32 {
            first = Some(mismatch(Some(r as u32), None, format!("turn {r} is numbered {}", t.round)));
            return false;
        }
        let want = &file_frames[r + 1];
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
            t.discarded.iter().map(|d| (d.seat, d.index, d.reason.as_str())).collect();
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
    let interrupted = replay.result.ended_by == crate::sim::EndReason::Interrupted.wire() && !m.is_over();
    if played != replay.turns.len() || !(m.is_over() || interrupted) {
        let ended = if m.is_over() { format!("ends after round {}", m.round()) } else { "is not over".to_string() };
        return Err(mismatch(
            None,
            None,
            format!("the file has {} rounds but the re-simulation {ended}", replay.turns.len()),
        ));
    }
    let fs = &replay.final_state;
    let last = file_frames.last().expect("the start frame");
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
        result.ended_by = crate::sim::EndReason::Interrupted.wire().to_string();
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
    let map = Arc::new(replay.map.to_map().map_err(|e| e.to_string())?);
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
    for (k, seat) in replay.seats.iter().enumerate() {
        let cells = frame.cells_of(k as i8);
        let units: f64 = (0..g.len()).filter(|&i| frame.owner[i] == k as i8).map(|i| frame.units[i]).sum();
        let swatch = if color { format!("\x1b[48;5;{}m  \x1b[0m ", colors[k]) } else { String::new() };
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
    let map = replay.map.to_map().map_err(|e| e.to_string())?;
    let fr = frames(replay, &map)?;
    let seats = map.seats().len();
    let total = map.len() as f64;
    let mut rounds = Vec::new();
    let mut captures_total = vec![0u32; seats];
    let mut discarded: Vec<std::collections::BTreeMap<String, u32>> = vec![Default::default(); seats];
    let mut violations = vec![0u32; seats];
    for (r, t) in replay.turns.iter().enumerate() {
        let (before, after) = (&fr[r], &fr[r + 1]);
        let mut caps = vec![0u32; seats];
        for i in 0..map.len() {
            if after.owner[i] >= 0 && after.owner[i] != before.owner[i] {
                caps[after.owner[i] as usize] += 1;
            }
        }
        for (s, c) in caps.iter().enumerate() {
            captures_total[s] += c;
        }
        for d in &t.discarded {
            if let Some(m) = discarded.get_mut(d.seat as usize) {
                *m.entry(d.reason.clone()).or_default() += 1;
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
        replay.result.ended_by.replace('_', " ")
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
