//! Re-simulating a replay: verification, and the observation a seat received.

use std::sync::Arc;

use gbely_rules::Cell;
use gbely_world::replay::{owner_code, Answer};
use gbely_world::{Map, Replay};

use super::Frame;
use std::borrow::Cow;

use gbely_rules::{Decide, Observation};

use crate::builtins::builtin_agent;
use crate::runner::player::PlayerAnswer;
use crate::session::{orders_of, Session};
use crate::sim::{Match, MatchConfig, RoundReport};
use crate::wire::{command_to_value, observation_json};

/// Re-plays a replay's recorded answers round by round through a [`Session`], calling `each`
/// after every round with the round's index, the match and the report. The answers are the
/// file's, untouched; a built-in agent's regenerated commands ([`Answer::Regen`]) are decided
/// again from the same observations; a seat with no answer recorded plays nothing.
pub fn resimulate(replay: &Replay, map: Arc<Map>, each: impl FnMut(usize, &Match, &RoundReport) -> bool) -> Match {
    replay_session(replay, map, |_| {}, each, |_| false, |_, _, _, _| {}).into_state()
}

/// The session of a match continued from a replay's rounds (a fork's head,
/// `app::runs::fork::fork_at`): every round of `head` played again from its answers (a built-in
/// agent's decided again, the answer times kept), ready for the round after. `prepare` sets the
/// session up before the first round: who plays each seat from then on (its built-in agent), its
/// names, the fork's record, its recording.
pub fn session_after(head: &Replay, map: Arc<Map>, prepare: impl FnOnce(&mut Session)) -> Session {
    replay_session(head, map, prepare, |_, _, _| true, |_| false, |_, _, _, _| {})
}

/// [`resimulate`], also handing `regenerated` the commands each built-in seat decided again
/// (round, seat, commands), before the round is resolved: what the file leaves out
/// ([`Answer::Regen`]) and the viewer shows (the commands of a discard, the count per seat).
pub fn resimulate_regenerating(
    replay: &Replay,
    map: Arc<Map>,
    each: impl FnMut(usize, &Match, &RoundReport) -> bool,
    mut regenerated: impl FnMut(usize, u8, &[gbely_rules::Command]),
) -> Match {
    let watch = |s: u8| replay.seats.get(s as usize).is_some_and(|r| r.builtin.is_some());
    let seen = |r: usize, s: u8, _: &Observation, commands: Option<&[gbely_rules::Command]>| {
        if let Some(c) = commands {
            regenerated(r, s, c);
        }
    };
    replay_session(replay, map, |_| {}, each, watch, seen).into_state()
}

/// [`resimulate`], also handing `seen` what each watched seat (`watch`) received and did, before
/// the round is resolved: the round's index, the seat, its observation (SPEC §5) and, for a
/// built-in seat whose commands the file leaves out ([`Answer::Regen`]), the commands it decided
/// again; the seat's recorded answer is `replay.turns[round].answers[seat]`. Only seats in the
/// game are observed. What turns a replay into data (`gbely.Replay.dataset`).
pub fn resimulate_observing(
    replay: &Replay,
    map: Arc<Map>,
    watch: impl Fn(u8) -> bool,
    seen: impl FnMut(usize, u8, &Observation, Option<&[gbely_rules::Command]>),
    each: impl FnMut(usize, &Match, &RoundReport) -> bool,
) -> Match {
    replay_session(replay, map, |_| {}, each, watch, seen).into_state()
}

/// [`resimulate`], keeping the session (set up by `prepare` before the first round: its
/// recording, …); `watch` and `seen` as in [`resimulate_observing`].
fn replay_session(
    replay: &Replay,
    map: Arc<Map>,
    prepare: impl FnOnce(&mut Session),
    mut each: impl FnMut(usize, &Match, &RoundReport) -> bool,
    watch: impl Fn(u8) -> bool,
    mut seen: impl FnMut(usize, u8, &Observation, Option<&[gbely_rules::Command]>),
) -> Session {
    let seats = map.seats().len();
    let names = (0..seats).map(|s| replay.seats.get(s).map_or_else(String::new, |r| r.name.clone())).collect();
    let mut session = Session::new(map, MatchConfig { rounds: replay.rounds }, names);
    let mut builtins: Vec<Option<Box<dyn Decide + Send>>> =
        (0..seats).map(|s| replay.seats.get(s).and_then(|r| r.builtin.as_deref()).and_then(builtin_agent)).collect();
    for (s, r) in replay.seats.iter().enumerate().take(seats) {
        session.set_builtin(s as u8, r.builtin.as_deref());
    }
    prepare(&mut session);
    let mut obs = Observation::default();
    for (r, t) in replay.turns.iter().enumerate() {
        if session.is_over() {
            break;
        }
        for (s, answer) in t.answers.iter().enumerate().take(seats) {
            let seat = s as u8;
            let active = session.is_active(seat);
            let watched = active && watch(seat);
            let agent = builtins[s].as_mut().filter(|_| active && matches!(answer, Answer::Regen));
            if agent.is_some() || watched {
                // Observing only applies the round's production, which resolving applies anyway.
                session.observe_into(seat, &mut obs);
            }
            if let Some(agent) = agent {
                let commands = agent.decide(&obs);
                if watched {
                    seen(r, seat, &obs, Some(&commands));
                }
                session.submit(seat, PlayerAnswer::Commands(commands));
            } else {
                if watched {
                    seen(r, seat, &obs, None);
                }
                if let Some(a) = recorded_answer(answer) {
                    session.submit(seat, a);
                }
            }
            if let Some(ms) = t.answer_ms.get(s).copied().flatten() {
                session.time(seat, f64::from(ms) / 1000.0);
            }
            if let Some(notes) = recorded_notes(t, seat) {
                session.note(seat, notes);
            }
        }
        session.advance();
        if !each(r, session.state(), session.report()) {
            break;
        }
    }
    session
}

/// A seat's notes on a round as the replay kept them, to record again (a match continued from
/// a replay): the text and the cells' notes (drawings are the viewer's, not carried over).
pub fn recorded_notes(turn: &gbely_world::replay::Turn, seat: u8) -> Option<gbely_rules::Notes> {
    turn.notes.iter().find(|n| n.seat == seat).map(|n| gbely_rules::Notes {
        text: n.text.clone(),
        cells: n.cells.iter().map(|(c, t)| (Cell(*c), t.clone())).collect(),
        draw: Vec::new(),
    })
}

/// A replay with every round's cell changes: a version 2 file leaves them out, and they are
/// rebuilt here by re-simulation (milliseconds); a version 1 file is returned as it is.
pub fn expanded(replay: &Replay) -> Result<Cow<'_, Replay>, String> {
    if replay.version < 2 {
        return Ok(Cow::Borrowed(replay));
    }
    let map = Arc::new(replay.check().map_err(|e| e.to_string())?);
    super::within_budget(replay, &map, super::Work::Changes)?;
    let session = replay_session(replay, map, Session::record_with_changes, |_, _, _| true, |_| false, |_, _, _, _| {});
    let rebuilt = session.replay_so_far().expect("recorded");
    let mut out = replay.clone();
    for (t, r) in out.turns.iter_mut().zip(rebuilt.turns) {
        t.changes = r.changes;
    }
    Ok(Cow::Owned(out))
}

/// A recorded answer as a session takes it (`None` for a seat that was out of the game, or
/// whose commands are regenerated: see [`resimulate`]).
pub fn recorded_answer(answer: &Answer) -> Option<PlayerAnswer> {
    match answer {
        Answer::Commands(_) | Answer::Compact(_) | Answer::Violation(_) => Some(PlayerAnswer::Replayed(answer.clone())),
        Answer::Out | Answer::Regen => None,
    }
}

/// A recorded answer's commands in the wire form of SPEC §6 (`None` for a violation or a seat out).
pub fn answer_commands(answer: &Answer, grid: &gbely_rules::Grid) -> Option<Vec<serde_json::Value>> {
    match answer {
        Answer::Commands(list) => Some(list.clone()),
        Answer::Compact(c) => {
            let mut raw = c.raw.iter();
            Some(
                orders_of(c, grid)
                    .into_iter()
                    .map(|o| match o {
                        Ok(cmd) => command_to_value(&cmd, grid),
                        Err(_) => raw.next().cloned().unwrap_or(serde_json::Value::Null),
                    })
                    .collect(),
            )
        }
        Answer::Violation(_) | Answer::Out | Answer::Regen => None,
    }
}

/// Where a replay and its re-simulation first part.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}{}{what}", round.map_or(String::new(), |r| format!("round {r}: ")), cell.as_ref().map_or(String::new(), |c| format!("cell {c}: ")))]
pub struct Mismatch {
    /// The round where they part; `None` for the map, the number of rounds, the final state or
    /// the result.
    pub round: Option<u32>,
    /// The id of the first cell that differs (`P57_02`), where a cell does.
    pub cell: Option<String>,
    /// What differs: what the file says and what the re-simulation gives.
    pub what: String,
}

fn mismatch(round: Option<u32>, cell: Option<String>, what: impl Into<String>) -> Mismatch {
    Mismatch { round, cell, what: what.into() }
}

/// What a successful verification checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verified {
    /// Rounds re-simulated and compared.
    pub rounds: usize,
    /// Seats of the map.
    pub seats: usize,
    /// Cells of the map.
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
    super::within_budget(replay, &map, super::Work::Resimulate).map_err(|e| mismatch(None, None, e))?;
    let g = map.grid().clone();
    let seats = map.seats().len();
    // The file's own state, one round ahead of the re-simulation's callback at a time. A version
    // 2 file stores no cell changes: its rounds are checked by their figures and discarded
    // commands, and its final state against the re-simulation's.
    let with_changes = replay.version < 2;
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
        if with_changes {
            if let Err(e) = file_frame.step(&map, t) {
                first = Some(mismatch(Some(r as u32), None, e));
                return false;
            }
        }
        let want = &file_frame;
        for c in (0..g.len()).filter(|_| with_changes) {
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
    if !with_changes {
        file_frame = Frame::of(&m);
    }
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
    let result = if interrupted {
        crate::recorder::stopped_result(&m, &names)
    } else {
        crate::recorder::match_result(&m, &names)
    };
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
    super::within_budget(replay, &map, super::Work::Resimulate)?;
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
    let g = map.grid();
    // The answer in the wire form the seat sent: compact commands written out, a built-in agent's
    // commands decided again from this observation.
    if let Some(Answer::Compact(c)) = turn.answers.get(seat as usize) {
        super::within_budget(replay, &map, super::Work::Answer(c.kinds.len()))?;
    }
    let answer = match turn.answers.get(seat as usize).cloned().unwrap_or(Answer::Out) {
        Answer::Regen => {
            let name = replay.seats[seat as usize].builtin.as_deref().unwrap_or_default();
            let mut agent = builtin_agent(name).ok_or_else(|| format!("unknown built-in agent `{name}`"))?;
            Answer::Commands(agent.decide(&obs).iter().map(|c| command_to_value(c, g)).collect())
        }
        a @ Answer::Compact(_) => Answer::Commands(answer_commands(&a, g).unwrap_or_default()),
        a => a,
    };
    Ok((observation_json(&obs, g), answer))
}
