//! The replay viewer: one self-contained HTML file (no network, no external scripts) with the
//! match embedded as gzip-compressed, base64-encoded JSON that the page unpacks with the
//! browser's own `DecompressionStream` and resolves round by round exactly as the engine does
//! (production, then the seats' commands that were not discarded): the data holds the commands,
//! not the cells.

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::Arc;

use gbely_rules::{constants, Mode, Terrain};
use gbely_world::replay::{Answer, Turn};
use gbely_world::{Map, Replay, SeatRole};
use serde_json::{json, Value};

use crate::replays::{resimulate_regenerating, seat_colors, terrain_color, Frame};
use crate::session::RoundRecord;
use crate::sim::{CaptureEvent, RoundReport};
use crate::wire::{command_to_value, parse_command};

const TEMPLATE: &str = include_str!("viewer.html");

/// The part of the page's data that does not change while a match is played: the map, the
/// seats (names, roles, colours), the rules' figures, the starting position.
///
/// The page rebuilds every round from the starting position and the seats' commands exactly as
/// the engine resolves them (SPEC §4, §6: the same `f64` operations in the same order), so the
/// rules' figures are here unrounded: production, passability and defence bonus per terrain
/// glyph, the base bonus, the fortification's efficiency, the violations allowed.
pub fn viewer_header(map: &Map, names: &[String], mode: Mode) -> Value {
    let g = map.grid();
    let terrain: String = g.cells().map(|c| map.terrain(c).glyph()).collect();
    let bases: Vec<u32> = g.cells().filter(|&c| map.is_base(c)).map(|c| c.0).collect();
    let roles: Vec<SeatRole> = map.seats().iter().map(|s| s.role).collect();
    let colors = seat_colors(&roles);
    let seats: Vec<Value> = names
        .iter()
        .zip(map.seats())
        .zip(&colors)
        .map(|((name, seat), color)| {
            json!({"name": name, "role": seat.role, "base": seat.base.0, "color": color.hex, "dark": color.wants_dark_text()})
        })
        .collect();
    let start = Frame::start(map);
    let per_terrain = |f: fn(Terrain) -> f64| -> serde_json::Map<String, Value> {
        Terrain::ALL.iter().map(|&t| (t.glyph().to_string(), json!(f(t)))).collect()
    };
    json!({
        "v": 3,
        "name": map.name(),
        "w": g.width(),
        "h": g.height(),
        "t": terrain,
        "b": bases,
        "terrain_colors": Terrain::ALL.iter().map(|&t| (t.glyph().to_string(), json!(terrain_color(t).hex))).collect::<serde_json::Map<_, _>>(),
        "rules": {
            "prod": per_terrain(Terrain::production),
            "pass": per_terrain(Terrain::passability),
            "def": per_terrain(Terrain::defence_bonus),
            "base_bonus": constants::BASE_BONUS,
            "fortify": constants::FORTIFY_EFFICIENCY,
            "violations": constants::ALLOWED_VIOLATIONS,
        },
        "seats": seats,
        "o0": start.owner,
        "u0": start.units,
        "f0": start.fortification,
        "mode": mode,
    })
}

/// One round for the page: what the seats did, from the replay's record of the round and each
/// seat's commands as JSON items (`lists`, by index in its answer; `None`: no commands) and the
/// round's captures in resolution order. The page resolves the round itself from the state
/// before it (production, then each seat's commands that were not discarded, in resolution
/// order: SPEC §4), so a round carries no cell states and no captures: those come out of its
/// commands, as in the engine.
///
/// Its fields: discarded commands (`disc`: `[seat, index, reason, text, taken_by]`, `text` the
/// item as JSON text or null where the page writes it from `cmd` ([`page_writes`]), `taken_by`
/// the seat that took the command's cell earlier in the round, see [`super::discards`], or
/// null), violations (`viol`: `[seat, kind, detail]`), the number of items per seat (`n`), each
/// seat's commands (`cmd`, see [`compact_commands`]) and the agents' notes (`notes`: `[seat,
/// text, [[cell, note], …], [drawing, …]]`), the last two only in rounds that have some, and the
/// seats' answer times in milliseconds (`ms`: one entry a seat, null where not timed) in rounds
/// that have them. The replay's page and the live page both make their rounds here.
fn turn_value(t: &Turn, lists: &[Option<Vec<Value>>], g: &gbely_rules::Grid, captures: &[CaptureEvent]) -> Value {
    let disc: Vec<Value> = t
        .discarded
        .iter()
        .map(|d| {
            let item = lists.get(d.seat as usize).and_then(|l| l.as_ref()).and_then(|l| l.get(d.index as usize));
            let text = item.map(|v| v.to_string()).unwrap_or_default();
            // A command written as the engine writes one, the page writes again from `cmd`.
            let cmd = if item.is_some_and(|v| page_writes(v, g)) { Value::Null } else { json!(text) };
            let by = super::discards::taken_by(t.round, lists.len(), d.seat, d.reason, item, g, captures);
            json!([d.seat, d.index, d.reason, cmd, by])
        })
        .collect();
    let viol: Vec<Value> = t
        .answers
        .iter()
        .enumerate()
        .filter_map(|(s, a)| match a {
            Answer::Violation(v) => Some(json!([s, v.kind, v.detail])),
            _ => None,
        })
        .collect();
    let ncmd: Vec<usize> = lists.iter().map(|l| l.as_ref().map_or(0, Vec::len)).collect();
    let mut turn = json!({"disc": disc, "viol": viol, "n": ncmd});
    // Each seat's commands: what the page resolves, and the map's arrows.
    if lists.iter().any(|l| l.as_ref().is_some_and(|l| !l.is_empty())) {
        turn["cmd"] = lists.iter().map(|l| l.as_deref().map_or(Value::Null, |l| compact_commands(l, g))).collect();
    }
    // The agents' notes (a drawing as the replay has it: `{"dot": cell, "color": "#rrggbb"}`, …).
    if !t.notes.is_empty() {
        turn["notes"] = t.notes.iter().map(|n| json!([n.seat, n.text, n.cells, n.draw])).collect();
    }
    // The seats' answer times (version 4), for the time graph: as the replay has them, `null`
    // for a seat not timed; none in a round when no seat was.
    if !t.answer_ms.is_empty() {
        turn["ms"] = json!(t.answer_ms);
    }
    turn
}

/// Whether `item` is a command whose text the page writes the same from the round's `cmd` (its
/// `commandJson`): the engine's own text of it (keys `typ`, `z`, `na`, `pocet` or `typ`, `pole`,
/// `investicia` in that order, cell ids, the amount whole as an integer) with an amount that
/// JavaScript's `String(x)` writes as serde_json does, in positional notation with the shortest
/// digits that read back. A built-in's commands and a replay's compact answers are such; an
/// agent's own text (other keys, `5.0`) is carried as it is.
fn page_writes(item: &Value, g: &gbely_rules::Grid) -> bool {
    let Ok(cmd) = parse_command(item, g) else { return false };
    let x = cmd.amount();
    let whole = x.fract() == 0.0 && x.abs() < 9.0e15;
    let positional = x.is_finite()
        && (1e-6..1e21).contains(&x.abs())
        && !serde_json::Number::from_f64(x).is_some_and(|n| n.to_string().contains('e'));
    // Their texts, not the values: two objects with the same keys in another order are equal.
    let text = |v: &Value| serde_json::to_string(v).ok();
    (whole || positional) && text(&command_to_value(&cmd, g)) == text(item)
}

/// A seat's commands of a round for the page, in the columns of a replay's compact answer
/// (version 3, [`gbely_world::replay::CompactCommands`]): `[kinds, steps, amounts]`. `kinds` has
/// a letter for each item of the list: `M`, `A`, `F` for a command (MOVE, ATTACK: two cells,
/// source and target; FORTIFY: one), `r` for an item that is not a command (the round's `disc`
/// says why); `steps` are the commands' cells, each as its difference from the cell before it
/// (the first from 0: a target is a neighbour of its source, so the steps are a few small
/// numbers that gzip packs well); `amounts` are the amounts the seat asked for, the exact `f64`s
/// the engine resolved (a whole one as an integer). An item's index in the list is its index in
/// `kinds`, which the `disc` entries name.
fn compact_commands(list: &[Value], grid: &gbely_rules::Grid) -> Value {
    use gbely_rules::Command;
    let mut kinds = String::with_capacity(list.len());
    let (mut steps, mut amounts) = (Vec::with_capacity(list.len() * 2), Vec::with_capacity(list.len()));
    let mut last = 0i64;
    for v in list {
        let (letter, cells, amount) = match parse_command(v, grid) {
            Ok(Command::Move { from, to, amount }) => ('M', [Some(from), Some(to)], amount),
            Ok(Command::Attack { from, to, amount }) => ('A', [Some(from), Some(to)], amount),
            Ok(Command::Fortify { cell, amount }) => ('F', [Some(cell), None], amount),
            Err(_) => {
                kinds.push('r');
                continue;
            }
        };
        for c in cells.into_iter().flatten() {
            steps.push(c.0 as i64 - last);
            last = c.0 as i64;
        }
        kinds.push(letter);
        // A whole amount as an integer when that reads back as the same `f64` (not -0.0).
        let whole = amount.fract() == 0.0
            && amount.abs() <= 9_007_199_254_740_992.0
            && !(amount == 0.0 && amount.is_sign_negative());
        amounts.push(if whole { json!(amount as i64) } else { json!(amount) });
    }
    json!([kinds, steps, amounts])
}

/// The data the page needs, as compact JSON. Units are carried in hundredths: the page shows
/// them to one decimal.
pub fn viewer_data(replay: &Replay) -> Result<Value, String> {
    super::within_budget(replay, &replay.check().map_err(|e| e.to_string())?, super::Work::Viewer)?;
    let map = Arc::new(replay.check().map_err(|e| e.to_string())?);
    let g = map.grid();
    let names: Vec<String> = replay.seats.iter().map(|s| s.name.clone()).collect();
    let mut data = viewer_header(&map, &names, replay.mode);
    // The commands of built-in seats come from a re-simulation (the file says only that they
    // are regenerated), and so do the captures that name who took a discarded command's cell.
    let mut captures: Vec<Vec<CaptureEvent>> = Vec::new();
    let mut regenerated: Vec<Vec<Option<Vec<Value>>>> = Vec::new();
    resimulate_regenerating(
        replay,
        map.clone(),
        |_, _, report| {
            captures.push(report.captures.clone());
            true
        },
        |r, s, commands| {
            if regenerated.len() <= r {
                regenerated.resize(r + 1, vec![None; replay.seats.len()]);
            }
            if let Some(slot) = regenerated[r].get_mut(s as usize) {
                *slot = Some(commands.iter().map(|c| command_to_value(c, g)).collect());
            }
        },
    );
    let mut turns = Vec::with_capacity(replay.turns.len());
    for (r, t) in replay.turns.iter().enumerate() {
        let lists: Vec<Option<Vec<Value>>> = t
            .answers
            .iter()
            .enumerate()
            .map(|(s, a)| match a {
                Answer::Regen => regenerated.get(r).and_then(|seats| seats.get(s)).cloned().flatten(),
                _ => super::answer_commands(a, g),
            })
            .collect();
        let caps = captures.get(r).map_or(&[][..], Vec::as_slice);
        turns.push(turn_value(t, &lists, g, caps));
    }
    data["cmds"] = columns(&mut turns, replay.seats.len());
    data["turns"] = json!(turns);
    data["result"] = json!(replay.result);
    // A forked match: the rounds before `round` are its source's (named by its SHA-256).
    if let Some(fork) = &replay.fork {
        data["fork"] = json!({"source": fork.source, "round": fork.round});
    }
    Ok(data)
}

/// Every round's `cmd` (see [`turn_value`]) taken out of the rounds into three columns for the
/// whole match, `{"k": [kinds, …], "d": [step, …], "n": [amount, …]}`: a seat's kinds a round
/// (round by round, seat by seat; null where the round has no `cmd` or the seat no list), then
/// all the steps and all the amounts in that order. Alike numbers side by side pack better
/// (gzip finds the Council's commands of one round like those of the next): 17 % less for a
/// leaderboard match. The page puts each round's `cmd` back together from the kinds.
fn columns(turns: &mut [Value], seats: usize) -> Value {
    let (mut k, mut d, mut n) = (Vec::new(), Vec::new(), Vec::new());
    for t in turns.iter_mut() {
        let cmd = t.as_object_mut().and_then(|o| o.remove("cmd"));
        for s in 0..seats {
            match cmd.as_ref().and_then(|c| c.get(s)).and_then(Value::as_array) {
                Some(c) if c.len() == 3 => {
                    k.push(c[0].clone());
                    d.extend(c[1].as_array().into_iter().flatten().cloned());
                    n.extend(c[2].as_array().into_iter().flatten().cloned());
                }
                _ => k.push(Value::Null),
            }
        }
    }
    json!({"k": k, "d": d, "n": n})
}

/// The rounds of a match being played, for the live page: each round's turn in the shape of
/// [`viewer_data`]'s, from the round's report and record (what the seats did, as the replay has
/// it).
#[derive(Debug)]
pub struct LiveTurns {
    map: Arc<Map>,
}

impl LiveTurns {
    /// For a match on `map`, before its round 0.
    pub fn new(map: Arc<Map>) -> LiveTurns {
        LiveTurns { map }
    }

    /// The turn of the round just resolved, from its report and record.
    pub fn turn(&self, report: &RoundReport, record: &RoundRecord<'_>) -> Value {
        let g = self.map.grid();
        // A built-in seat's commands are the ones it played (the replay's readers decide them
        // again, the same: the built-ins are deterministic).
        let lists: Vec<Option<Vec<Value>>> = record
            .turn
            .answers
            .iter()
            .enumerate()
            .map(|(s, a)| match a {
                Answer::Regen => {
                    let played = record.played.get(s).copied().unwrap_or_default();
                    Some(played.iter().flatten().map(|c| command_to_value(c, g)).collect())
                }
                _ => super::answer_commands(a, g),
            })
            .collect();
        turn_value(record.turn, &lists, g, &report.captures)
    }
}

fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        out.push(A[(n >> 18) as usize & 63] as char);
        out.push(A[(n >> 12) as usize & 63] as char);
        out.push(if chunk.len() > 1 { A[(n >> 6) as usize & 63] as char } else { '=' });
        out.push(if chunk.len() > 2 { A[n as usize & 63] as char } else { '=' });
    }
    out
}

/// How a page is served: a file with the match inside, or live from `gbely … --watch`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PageMode {
    /// The whole match embedded (gzip + base64): the page works from disk, offline.
    File {
        /// The viewer's data of the match, gzip-compressed, in base64.
        data_gz_base64: String,
        /// The replay file as its reader named it, for the page's "continue from here" command
        /// (`gbely play my_agent.py --from FILE --round N`); `None`: a placeholder name.
        file: Option<String>,
    },
    /// The page asks its server for the match as it is played (`api/…?t=TOKEN`, same origin).
    Live(LivePage),
}

/// What a live page shows its viewer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LivePage {
    /// The seat a person plays from the page, if any.
    pub human: Option<u8>,
    /// The start and pause controls (buttons and keys): a viewer who may not start or pause
    /// the match (not an organiser of the arena's final) does not see them.
    pub controls: bool,
    /// The page opens in the projection layout unless its address says `layout=desk`.
    pub projection: bool,
}

impl Default for LivePage {
    fn default() -> LivePage {
        LivePage { human: None, controls: true, projection: false }
    }
}

/// Every text the page shows, by key, in English: the one source of the page's English. The page
/// gets the table (`{{TEXT}}`, a JSON object) with a language's texts over these
/// ([`ViewerLang`]); static HTML is filled on the server (`{{t:key}}`, escaped; `{{h:key}}`, a
/// key ending in `-html`: the catalogue's markup, trusted), and the script writes the others with
/// `tx(key, {name: value})`.
///
/// A text's `{name}`s are the values the script puts in; a key ending in `.one` or `.other` is a
/// plural form of the text before the dot (`txn(key, n)`: `Intl.PluralRules` of the page's
/// language chooses the form, `{n}` is the count), and a language may give the forms English has
/// not (`.few`, `.many`, `.two`, `.zero`). The arena's Slovak texts are a Fluent catalogue,
/// `locales/sk/viewer.ftl`, checked against this list by its tests.
pub const TEXTS: &[(&str, &str)] = &[
    ("start-match", "start the match"),
    ("start-key", "or press S"),
    ("stop-banner", "the server has stopped: this page shows the rounds it received"),
    ("pause-title", "pause the match (the server resolves no round until resumed)"),
    ("pause", "pause"),
    ("layout-projection-title", "the projection layout, for a hall's screen (P)"),
    ("layout-projection", "projection"),
    ("help-title", "keys (?)"),
    ("paused", "paused"),
    ("first-title", "first round (Home)"),
    ("back-title", "previous round (←)"),
    ("play-title", "play / pause (space)"),
    ("fwd-title", "next round (→)"),
    ("last-title", "last round (End)"),
    ("speed-title", "rounds per second"),
    ("zoom", "zoom"),
    ("zoomout-title", "zoom out (−)"),
    ("zoomfit-title", "fit to the window (0)"),
    ("zoomfit", "fit"),
    ("zoomin-title", "zoom in (+)"),
    ("seatview-title", "whose view (v)"),
    ("everything", "everything"),
    ("png-title", "save this round as a picture, for sharing (s)"),
    ("video-title", "save the rounds from this one to the end (at most 300; shift-click the timeline to end earlier) as a video at the speed chosen (w)"),
    ("video", "video"),
    ("fork-button", "continue from here"),
    ("timeline-title", "the match: click to go to a round; marks above are key moments, grey ticks below are rounds with discarded commands, a purple line the round a forked match was continued from"),
    ("fork-field-label", "the command that continues this match"),
    ("result-head", "Result"),
    ("your-seat-head", "Your seat"),
    ("add-title", "add the command (Enter)"),
    ("add", "add"),
    ("cancel", "cancel"),
    ("pending-head", "Pending commands"),
    ("endturn-title", "send the commands (E)"),
    ("end-turn", "end turn"),
    ("standings-head", "Standings"),
    ("share-of-map", "Share of the map"),
    ("units-head", "Units"),
    ("times-head", "Answer times"),
    ("times-note", "each timed seat's answer per round, from the observation sent to the answer received; the red line is the rules' limit, 2 s a round (a replay does not record the limit its match was played with)"),
    ("moments-head", "Key moments"),
    ("events-head", "Events of the round"),
    ("evseat-label", "whose events"),
    ("all-sides", "all sides"),
    ("commands-head", "Commands on the map"),
    ("commands-key-title", "c: every seat's on or off"),
    ("commands-legend", "the round's commands, given on the state before it: arrows from source to target (red ATTACK, blue MOVE; the amount on them from 28 px a cell, zoom in, and in the cell's tip), a yellow square FORTIFY; grey and dashed, crossed: discarded (the tip says why)"),
    ("notes-head", "Agents' notes"),
    ("notes-search-placeholder", "search all rounds"),
    ("notes-search-title", "search the agents' notes of every round (/)"),
    ("drawings-key-title", "d: every seat's drawings on or off"),
    ("drawings-label", "drawn on the map (d):"),
    ("cell-head", "Cell"),
    ("cell-hint", "hover or click a cell"),
    ("keys-head", "Keys"),
    ("symbols-head", "Map symbols"),
    ("help-space-html", "play / pause"),
    ("help-arrows-html", "previous / next round (<kbd>shift</kbd>: 10 rounds)"),
    ("help-home-end-html", "start / last round"),
    ("help-brackets-html", "previous / next key moment"),
    ("help-zoom-html", "zoom in / out / fit to the window (also wheel, pinch; drag to pan)"),
    ("help-c-html", "every seat's commands of the round on the map, or none (the panel \"Commands on the map\" picks the seats)"),
    ("help-d-html", "what the agents drew on the map (their answers' <code>debug</code> key's <code>draw</code>), or none (the notes' panel picks the seats)"),
    ("help-v-html", "next seat's view (what that seat observed: its fog of war)"),
    ("help-s-w-html", "save this round as a PNG; the rounds from this one on as a video (WebM), made in the page (to the last round, or to the one shift-clicked on the timeline)"),
    ("help-p-html", "the projection layout for a hall's screen (the map as large as it goes, standings by share, key moments as they happen), and back"),
    ("help-slash-html", "search the agents' notes of every round (a replay with notes: what agents print and their answers' <code>debug</code>; a corner mark on a noted cell)"),
    ("help-esc-html", "close this, clear the selection"),
    ("help-question-html", "this help"),
    ("help-human-html", "Human seat: click your cell, then a neighbour (or the same cell to fortify); <kbd>Enter</kbd> adds the command, <kbd>E</kbd> ends the turn."),
    ("help-address-html", "The address keeps the view: <code>#round=N&amp;zoom=Z|fit&amp;cell=P01_02&amp;seat=K&amp;cmds=0.1|none&amp;layout=projection</code>."),
    ("terrain-meadow", "luka (meadow)"),
    ("terrain-hill", "vrch (hill)"),
    ("terrain-river", "rieka (river)"),
    ("n-commands.one", "{n} command"),
    ("n-commands.other", "{n} commands"),
    ("n-discarded.one", "{n} discarded command"),
    ("n-discarded.other", "{n} discarded commands"),
    ("n-seats.one", "{n} seat"),
    ("n-seats.other", "{n} seats"),
    ("err-no-decompression", "this browser lacks DecompressionStream; use a current Chrome, Firefox or Safari"),
    ("moment-dq", "{name} disqualified (4th violation: {kind})"),
    ("moment-violation", "{name}: violation {n} ({kind})"),
    ("moment-contact", "first contact: {name} attacks {enemy} at {cell}"),
    ("moment-its-enemies", "its enemies"),
    ("moment-swing.one", "{name} takes {n} cell from {from}"),
    ("moment-swing.other", "{name} takes {n} cells from {from}"),
    ("moment-lead", "{name} overtakes {leader} and leads the armies"),
    ("moment-council-fell", "{name} (the Council) lost its last cell"),
    ("moment-eliminated", "{name} eliminated"),
    ("moments-none-yet", "nothing notable yet"),
    ("moments-none", "nothing notable in this match"),
    ("round-text", "round {r}: {text}"),
    ("mark-viol", "a violation"),
    ("mark-dq", "a disqualification"),
    ("mark-contact", "first contact"),
    ("mark-swing", "a big swing"),
    ("mark-lead", "a new leader"),
    ("mark-elim", "an elimination"),
    ("mark-fell", "the Council's fall"),
    ("legend-cell", "a seat's cell: the dot grows with its units (numbers from 28 px a cell)"),
    ("legend-neutral", "neutral meadow, hill, river (the dot: the garrison)"),
    ("legend-owned-terrain", "a hill (the peak) and a river (the band) under an owner"),
    ("legend-base", "a base: +5 units a round to whoever holds it"),
    ("legend-taken", "taken this round (white square)"),
    ("legend-selected", "the selected cell (yellow square: its tip stays)"),
    ("legend-fog", "not seen by the seat (a seat's view)"),
    ("legend-human", "the human seat's ATTACK, MOVE and FORTIFY"),
    ("legend-marks", "key moments (the timeline's marks in these colours):"),
    ("times-limit", "limit 2 s"),
    ("times-start", "the start: hover the graph for a round's times"),
    ("name-text", "{name}: {text}"),
    ("times-of-limit", "{s} of 2 s"),
    ("times-not-timed", "not timed"),
    ("the-start", "the start"),
    ("round-n", "round {r}"),
    ("col-seat", "seat"),
    ("col-share", "share"),
    ("col-cells", "cells"),
    ("col-units", "units"),
    ("standings-row-title", "show what this seat saw (its fog of war)"),
    ("council-name", "{name} (the Council)"),
    ("dq-short", "DQ"),
    ("feed-empty", "key moments appear here as they happen"),
    ("layout-desk", "desk"),
    ("layout-desk-title", "the desk layout: controls, charts, events (P)"),
    ("ended-rounds.one", "all {n} rounds played"),
    ("ended-rounds.other", "all {n} rounds played"),
    ("ended-elimination", "{names} eliminated in round {r}"),
    ("ended-disqualification", "{names} disqualified in round {r} (fourth violation)"),
    ("ended-council-fell", "the Council fell in round {r}"),
    ("ended-interrupted", "interrupted in round {r}"),
    ("ended-unfinished", "still being played (round {r})"),
    ("result-wins", "{name} wins"),
    ("result-tie", "a tie: {names}"),
    ("result-no-winner", "no winner"),
    ("col-rank-title", "rank"),
    ("col-name", "name"),
    ("col-tie", "tie"),
    ("col-tie-title", "tie-break: the first round at whose end the side had its final number of cells"),
    ("col-viol", "viol."),
    ("col-viol-title", "violations"),
    ("result-disqualified", "disqualified"),
    ("result-eliminated", "eliminated in round {r}"),
    ("result-tiebreak", "r {r}"),
    ("and-more", "… and {n} more"),
    ("notes-no-match", "no note matches"),
    ("notes-start", "notes start with round 0"),
    ("notes-none", "no notes this round"),
    ("drawings-of", "what {name} drew"),
    ("events-start", "the starting position"),
    ("event-violation", "{name}: violation ({kind}) {detail}"),
    ("event-took", "{name} took {cell} from {owner}"),
    ("event-failed", "{name}: attack on {cell} ({owner}) failed"),
    ("event-discarded", "{name}: command #{idx} discarded ({why}) {cmd}"),
    ("events-more", "… and {n} more (pick a side above)"),
    ("events-none", "nothing happened"),
    ("cell-not-seen", "{cell}: not seen by {name} this round"),
    ("cell-base", "base"),
    ("cell-state", "owner {owner} · units {units} · fortification {fort}"),
    ("cell-owners", "owners: {list}"),
    ("cell-owner-unchanged", "owner unchanged since the start"),
    ("cell-note", "note of {name}: {note}"),
    ("cell-drawn", "drawn by {name}: {what}"),
    ("drawn-line", "a line {from}–{to}"),
    ("drawn-dot", "a dot"),
    ("drawn-colour", "a colour"),
    ("cell-commands", "commands of round {r} from or to it:"),
    ("view-start", "{name}'s view: the start"),
    ("view-round", "{name}'s view of round {r}: the state it decided on, before the round was resolved"),
    ("pin-note", "pinned: Esc, or a click on the cell, lets it go"),
    ("round-so-far", "round {r} of {last} so far"),
    ("live", "live"),
    ("round-of", "round {r} / {last}"),
    ("seat-view", "{name}'s view"),
    ("png-failed", "this browser could not make the picture"),
    ("video-unsupported", "this browser cannot record a video; save pictures (PNG) instead"),
    ("video-no-webm", "this browser cannot record WebM; save pictures (PNG) instead"),
    ("video-progress", "video {k}/{n}"),
    ("start", "start"),
    ("fork-from", "forked at round {r} from the replay with SHA-256"),
    ("fork-rounds", ": rounds 0–{before} are that match's (the purple part of the timeline), the agents took over at round {r}"),
    ("fork-at-start", ": the agents took over at its start"),
    ("fork-ended", "the match ended here: nothing is left to play from this round"),
    ("fork-title", "copy the command that plays your agent from the state shown, round {r} on (the rounds before it are this replay's): {cmd}"),
    ("fork-copied", "copied"),
    ("fork-selected", "selected: press Ctrl+C to copy it"),
    ("fork-takes-over", "my_agent.py takes over from the state shown, at round {r}"),
    ("fork-copied-button", "copied ✓"),
    ("fork-select-button", "select and copy"),
    ("rate-slow", "plays at {rate} / s: this computer is slower"),
    ("url-bad-round", "round {r} (the last is {last})"),
    ("url-ignored", "ignored in the address: {list}"),
    ("video-to-title", "save the rounds from this one to round {r} as a video (w); shift-click the timeline there again for the last round"),
    ("timeline-before-fork", "before the fork at round {r}: the source replay's"),
    ("command-discarded", "discarded: {why}"),
    ("discard-taken-by", "{why} (taken by seat {seat}, {name}, earlier in this round)"),
    ("commands-of", "{name}'s commands on the map"),
    ("final-title.one", "the final: {n} army and the Council"),
    ("final-title.other", "the final: {n} armies and the Council"),
    ("resume", "resume"),
    ("start-by-organisers", "the organisers start the match from their screen"),
    ("over-replay", "over; replay: {replay}"),
    ("over", "over"),
    ("server-stopped", "the server has stopped"),
    ("human-cannot-win", "cannot win: {total}{others} against defence {defence} = {what}; an attack must be stronger, or all its units are lost{ready}"),
    ("human-with-others", "with this turn's other attacks"),
    ("human-only-ready", "(only {k} ready)"),
    ("human-pick-yours", "pick one of your cells first"),
    ("human-not-neighbour", "{cell} is not a neighbour of {src}"),
    ("human-ready-on", "{n} ready on {cell}"),
    ("human-cheapest", "defence {defence}: the cheapest winning force is {amount} (floor(defence) + 1); {hint}"),
    ("human-amount-positive", "the amount must be more than 0"),
    ("human-cannot-win-short", "(cannot win)"),
    ("human-weaker", "weaker than the defence shown: the attack fails"),
    ("human-remove", "remove"),
    ("human-none-yet", "none yet"),
    ("human-refused", "not accepted: {why}"),
    ("human-sent.one", "round {r}: {n} command sent"),
    ("human-sent.other", "round {r}: {n} commands sent"),
    ("human-waiting", "waiting for the other sides…"),
    ("human-not-visible", "{cell}: not visible"),
    ("human-yours", "yours"),
    ("human-units", "units {units} (ready {ready}) · fortification {fort}"),
    ("human-neighbours", "neighbours {list}"),
    ("human-garrison", "garrison {garrison} · fortification {fort} · defence {defence}"),
    ("human-you-are", "you are {name} (seat {seat})"),
    ("human-page-is-agent", "the page is the agent of seat {seat}"),
    ("human-doc-title", "your seat"),
    ("human-your-move", "round {r}: your move — click your cell, then a neighbour; end the turn when done"),
    ("err-cannot-show", "cannot show this replay: {error}"),
    // A discard's reason by its code (`DiscardReason::code`), a violation by its kind, a match
    // by its mode: the page reads them as `reason-CODE`, `violation-KIND`, `mode-MODE`.
    ("reason-not_an_object", "not an object"),
    ("reason-unknown_type", "unknown type"),
    ("reason-missing_field", "missing field"),
    ("reason-wrong_field_type", "wrong field type"),
    ("reason-unknown_cell", "unknown cell"),
    ("reason-invalid_amount", "invalid amount"),
    ("reason-source_not_owned", "source not owned"),
    ("reason-target_not_owned", "target not owned"),
    ("reason-not_adjacent", "not adjacent"),
    ("reason-target_own_cell", "target own cell"),
    ("reason-target_finalist", "target finalist"),
    ("reason-no_ready_units", "no ready units"),
    ("violation-timeout", "timeout"),
    ("violation-crash", "crash"),
    ("violation-unreadable", "unreadable"),
    ("mode-duel", "duel"),
    ("mode-final", "final"),
];

/// The plural forms (CLDR's categories) a language may give a plural text in, besides English's
/// `one` and `other`.
pub const PLURAL_FORMS: [&str; 6] = ["zero", "one", "two", "few", "many", "other"];

/// A language for the page: its code (`<html lang>`, BCP 47, and the plural rules' language) and
/// its texts by [`TEXTS`]' keys; a key it lacks is shown in English.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ViewerLang {
    /// The language's code (`sk`).
    pub code: String,
    /// The language's texts, by key.
    pub texts: BTreeMap<String, String>,
}

/// The page's texts: English, with `lang`'s over it.
fn texts_of(lang: Option<&ViewerLang>) -> BTreeMap<&str, &str> {
    let mut texts: BTreeMap<&str, &str> = TEXTS.iter().copied().collect();
    for (k, v) in lang.map(|l| &l.texts).into_iter().flatten() {
        texts.insert(k, v);
    }
    texts
}

/// Fills the template's `{{NAME}}` slots in one pass: what is put in is never searched for
/// slots again, so a name containing `{{DATA}}` stays a name.
fn fill(template: &str, slots: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len() + slots.iter().map(|s| s.1.len()).sum::<usize>());
    let mut rest = template;
    while let Some(at) = rest.find("{{") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        match after.find("}}").and_then(|end| slots.iter().find(|(k, _)| *k == &after[..end]).map(|s| (end, s.1))) {
            Some((end, value)) => {
                out.push_str(value);
                rest = &after[end + 2..];
            }
            None => {
                out.push_str("{{");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Text for an HTML text node or attribute value (quoted either way).
pub fn escape_html(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;").replace('\'', "&#39;")
}

/// The viewer page around `title` (the seats' names; escaped here, and the page itself only
/// ever puts names in as text), in English.
pub fn viewer_page(title: &str, mode: &PageMode) -> String {
    viewer_page_in(title, mode, None)
}

/// The viewer page around `title` in `lang` (`None`: English).
pub fn viewer_page_in(title: &str, mode: &PageMode, lang: Option<&ViewerLang>) -> String {
    let (data, config, connect) = match mode {
        PageMode::File { data_gz_base64, file } => {
            (data_gz_base64.as_str(), json!({"live": false, "file": file}), "'none'")
        }
        PageMode::Live(p) => (
            "",
            json!({"live": true, "human": p.human, "controls": p.controls, "layout": if p.projection { "projection" } else { "desk" }}),
            "'self'",
        ),
    };
    // JSON inside <script>: `<` escaped so that no text can close the element.
    let config = config.to_string().replace('<', "\\u003c");
    let texts = texts_of(lang);
    let table = json!(texts).to_string().replace('<', "\\u003c");
    let code = escape_html(lang.map_or("en", |l| l.code.as_str()));
    // The static HTML's texts: `t:key` escaped, `h:key` (markup) as the catalogue writes it.
    let statics: Vec<(String, String)> = texts
        .iter()
        .flat_map(|(k, v)| {
            let markup = k.ends_with("-html").then(|| (format!("h:{k}"), v.to_string()));
            [(format!("t:{k}"), escape_html(v))].into_iter().chain(markup)
        })
        .collect();
    let title = escape_html(title);
    let mut slots: Vec<(&str, &str)> = vec![
        ("TITLE", &title),
        ("DATA", data),
        ("CONFIG", &config),
        ("CONNECT", connect),
        ("LANG", &code),
        ("TEXT", &table),
    ];
    slots.extend(statics.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    fill(TEMPLATE, &slots)
}

/// The viewer page for a replay.
pub fn viewer_html(replay: &Replay) -> Result<String, String> {
    viewer_html_of(replay, None)
}

/// The viewer page for a replay read from `file` (as the user named it: the page's "continue
/// from here" puts it in the fork command it copies; `None`: a placeholder name).
pub fn viewer_html_of(replay: &Replay, file: Option<&str>) -> Result<String, String> {
    viewer_html_in(replay, file, None)
}

/// [`viewer_html_of`] in `lang` (`None`: English).
pub fn viewer_html_in(replay: &Replay, file: Option<&str>, lang: Option<&ViewerLang>) -> Result<String, String> {
    Ok(viewer_file_data(replay)?.page(file, lang))
}

/// What a replay file's page embeds, the same in every language: its title and its data (the
/// costly part: the match re-simulated, compressed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileData {
    /// The seats' names, `A vs B`.
    pub title: String,
    /// The viewer's data of the match, gzip-compressed, in base64.
    pub data_gz_base64: String,
}

impl FileData {
    /// The page of the file (named `file` for its "continue from here" command) in `lang`.
    pub fn page(&self, file: Option<&str>, lang: Option<&ViewerLang>) -> String {
        let mode = PageMode::File { data_gz_base64: self.data_gz_base64.clone(), file: file.map(str::to_string) };
        viewer_page_in(&self.title, &mode, lang)
    }
}

/// A replay's [`FileData`].
pub fn viewer_file_data(replay: &Replay) -> Result<FileData, String> {
    let mut data = viewer_data(replay)?;
    // The head, a newline, then the commands (most of the bytes): the page draws the first
    // round from the head before it reads the commands (compact JSON has no raw newline).
    let cmds = data.as_object_mut().and_then(|d| d.remove("cmds")).unwrap_or(Value::Null);
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    enc.write_all(data.to_string().as_bytes()).map_err(|e| e.to_string())?;
    enc.write_all(b"\n").map_err(|e| e.to_string())?;
    enc.write_all(cmds.to_string().as_bytes()).map_err(|e| e.to_string())?;
    let gz = enc.finish().map_err(|e| e.to_string())?;
    let title = replay.seats.iter().map(|s| s.name.as_str()).collect::<Vec<_>>().join(" vs ");
    Ok(FileData { title, data_gz_base64: base64(&gz) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::Match;

    #[test]
    fn base64_matches_the_standard_alphabet() {
        assert_eq!(super::base64(b""), "");
        assert_eq!(super::base64(b"f"), "Zg==");
        assert_eq!(super::base64(b"fo"), "Zm8=");
        assert_eq!(super::base64(b"foo"), "Zm9v");
        assert_eq!(super::base64(b"foobar"), "Zm9vYmFy");
        assert_eq!(super::base64(&[0xff, 0xfe, 0x00]), "//4A");
    }

    /// Seat 0 of the live tests: every round a FORTIFY of its base, a MOVE from the other seat's
    /// base (not its own: discarded, `source_not_owned`), an item that is no command, and 3 664
    /// bytes of notes (2 000 characters and 8 cell notes of 200); in round 3 an unreadable answer.
    struct Scripted {
        map: Arc<Map>,
        round: u32,
    }

    impl crate::runner::player::Player for Scripted {
        fn name(&self) -> String {
            "scripted".into()
        }
        fn begin(&mut self, obs: &gbely_rules::Observation, _grid: &gbely_rules::Grid) {
            self.round = obs.round;
        }
        fn finish(&mut self) -> crate::runner::player::PlayerAnswer {
            use crate::runner::player::PlayerAnswer;
            if self.round == 3 {
                let kind = gbely_rules::ViolationKind::Unreadable;
                return PlayerAnswer::Violation { kind, detail: "garbage".into() };
            }
            let g = self.map.grid();
            let (mine, theirs) = (g.id(self.map.seats()[0].base), g.id(self.map.seats()[1].base));
            PlayerAnswer::Raw(vec![
                json!({"typ": "FORTIFY", "pole": mine, "investicia": 0.5}),
                json!({"typ": "MOVE", "z": theirs, "na": mine, "pocet": 1}),
                json!("junk"),
            ])
        }
        fn notes(&mut self) -> Option<gbely_rules::Notes> {
            let cells = (0..8).map(|k| (gbely_rules::Cell(k), "c".repeat(200))).collect();
            let text = format!("round {:<4}", self.round) + &"n".repeat(1990);
            Some(gbely_rules::Notes { text, cells, draw: Vec::new() })
        }
    }

    /// The live page's turns of a 12-round duel of [`Scripted`] against the Council, and the
    /// replay when `record`.
    fn watched(record: bool) -> (Vec<Value>, Option<Replay>) {
        use crate::game::{play, Observer, PlayOptions};
        use crate::runner::player::{DecidePlayer, Player};
        use crate::session::RoundRecord;
        use crate::sim::MatchConfig;
        struct Collect(super::LiveTurns, Vec<Value>);
        impl Observer for Collect {
            fn wants_records(&self) -> bool {
                true
            }
            fn round_recorded(&mut self, _: &Match, report: &RoundReport, record: &RoundRecord<'_>) {
                let t = self.0.turn(report, record);
                self.1.push(t);
            }
        }
        let map = Arc::new(gbely_world::generate_duel("live", 24, 24).unwrap());
        let mut a = Scripted { map: map.clone(), round: 0 };
        let mut b = DecidePlayer::council("council");
        let mut players: [&mut dyn Player; 2] = [&mut a, &mut b];
        let mut seen = Collect(super::LiveTurns::new(map.clone()), Vec::new());
        let rec = play(map, &mut players, PlayOptions { config: MatchConfig { rounds: 12 }, record }, &mut seen);
        (seen.1, rec.replay)
    }

    /// The rounds of [`viewer_data`] with their `cmd` back from the columns (as the page does it).
    fn turns_of(data: &Value) -> Vec<Value> {
        let seats = data["seats"].as_array().unwrap().len();
        let (k, d, n) = (data["cmds"]["k"].as_array().unwrap(), &data["cmds"]["d"], &data["cmds"]["n"]);
        let (mut at, mut di, mut ni) = (0, 0, 0);
        let mut turns = data["turns"].as_array().unwrap().clone();
        for t in &mut turns {
            let mut cmd = Vec::new();
            for kinds in &k[at..at + seats] {
                cmd.push(match kinds.as_str() {
                    None => Value::Null,
                    Some(letters) => {
                        let cells: usize = letters
                            .chars()
                            .map(|c| match c {
                                'M' | 'A' => 2,
                                'F' => 1,
                                _ => 0,
                            })
                            .sum();
                        let amounts = letters.chars().filter(|c| *c != 'r').count();
                        let v = json!([
                            letters,
                            d.as_array().unwrap()[di..di + cells],
                            n.as_array().unwrap()[ni..ni + amounts]
                        ]);
                        (di, ni) = (di + cells, ni + amounts);
                        v
                    }
                });
            }
            at += seats;
            if cmd.iter().any(|c| c[0].as_str().is_some_and(|k| !k.is_empty())) {
                t["cmd"] = json!(cmd);
            }
        }
        assert_eq!((at, di, ni), (k.len(), d.as_array().unwrap().len(), n.as_array().unwrap().len()));
        turns
    }

    /// A round with the discarded commands' texts that the data leaves to the page written in:
    /// the engine's text of the command at that index of the seat's `cmd`.
    fn with_texts(t: &Value, g: &gbely_rules::Grid) -> Value {
        use gbely_rules::{Cell, Command};
        let mut t = t.clone();
        let commands = |seat: &Value| -> Vec<Option<Command>> {
            let (kinds, d, n) = (seat[0].as_str().unwrap_or(""), seat[1].as_array(), seat[2].as_array());
            let (mut cell, mut di, mut ni) = (0i64, 0, 0);
            let mut next = || {
                cell += d.unwrap()[di].as_i64().unwrap();
                di += 1;
                Cell(cell as u32)
            };
            kinds
                .chars()
                .map(|k| {
                    if k == 'r' {
                        return None;
                    }
                    let from = next();
                    let to = if k == 'F' { from } else { next() };
                    let amount = n.unwrap()[ni].as_f64().unwrap();
                    ni += 1;
                    Some(match k {
                        'M' => Command::Move { from, to, amount },
                        'A' => Command::Attack { from, to, amount },
                        _ => Command::Fortify { cell: from, amount },
                    })
                })
                .collect()
        };
        let cmd = t["cmd"].clone();
        for d in t["disc"].as_array_mut().unwrap() {
            if d[3].is_null() {
                let list = commands(&cmd[d[0].as_u64().unwrap() as usize]);
                let c = list[d[1].as_u64().unwrap() as usize].expect("a command");
                d[3] = json!(command_to_value(&c, g).to_string());
            }
        }
        t
    }

    /// The live page gets, round by round, the same turns as the page of the finished replay:
    /// the cells, the events, and what the seats did (their commands, the discarded ones' text,
    /// the violations' kinds, the notes within the replay's budget), whether or not the match is
    /// recorded.
    #[test]
    fn live_turns_are_the_replays_turns() {
        let (live, replay) = watched(true);
        let data = super::viewer_data(&replay.unwrap()).unwrap();
        let turns = turns_of(&data);
        assert_eq!(live.len(), 12);
        assert_eq!(live, turns);
        let (unrecorded, none) = watched(false);
        assert!(none.is_none());
        assert_eq!(unrecorded, live, "a match played without a replay shows the same turns");
        let g = gbely_world::generate_duel("live", 24, 24).unwrap();
        let theirs = g.grid().id(g.seats()[1].base);
        for (r, t) in live.iter().map(|t| with_texts(t, g.grid())).enumerate() {
            assert!(t["cmd"][1][0].as_str().is_some_and(|k| !k.is_empty()), "round {r}: the Council's commands");
            assert!(t["n"][1].as_u64().unwrap() > 0, "round {r}: the Council's commands, regenerated");
            let mine: Vec<&Value> = t["disc"].as_array().unwrap().iter().filter(|d| d[0] == 0).collect();
            if r == 3 {
                assert_eq!(t["viol"], json!([[0, "unreadable", "garbage"]]));
                assert!(mine.is_empty() && t["n"][0] == 0, "round 3: no commands");
                continue;
            }
            assert_eq!(t["viol"], json!([]), "round {r}");
            assert_eq!(t["n"][0], 3, "round {r}");
            // The MOVE from the other seat's base, with its text; the item that is no command.
            let moved = format!(r#"{{"typ":"MOVE","z":"{theirs}","na":"#);
            assert!(
                mine.iter()
                    .any(|d| d[1] == 1 && d[2] == "source_not_owned" && d[3].as_str().unwrap().starts_with(&moved)),
                "round {r}: {mine:?}"
            );
            // Written as the engine writes it: the text is left to the page, which has the command.
            assert_eq!(
                live[r]["disc"].as_array().unwrap().iter().find(|d| d[0] == 0 && d[1] == 1).unwrap()[3],
                Value::Null
            );
            assert_eq!(
                live[r]["disc"].as_array().unwrap().iter().find(|d| d[0] == 0 && d[1] == 2).unwrap()[3],
                "\"junk\""
            );
            assert!(mine.iter().any(|d| d[1] == 2 && d[3] == "\"junk\""), "round {r}: {mine:?}");
        }
        // The notes' budget: 3 664 bytes a round against 16 KiB + 2 KiB a round. Round 7 fits
        // (8 × 3 664 = 29 312 ≤ 16 384 + 7 × 2 048 = 30 720); round 8 does not (3 456 left of
        // 32 768) and is a mark; round 3, a violation, has its notes too.
        for (r, t) in live.iter().enumerate().take(8) {
            let text = t["notes"][0][1].as_str().unwrap();
            assert!(text.starts_with(&format!("round {r} ")) && text.len() == 2000, "round {r}");
            assert_eq!(t["notes"][0][2].as_array().unwrap().len(), 8);
        }
        assert_eq!(live[8]["notes"][0][1], "[notes cut: 3664 bytes, more than the 3456 left of 2 KiB a round]");
    }

    /// Regression: the Council's commands are not in the file (a built-in's are regenerated), and
    /// its discarded commands showed no text and its rounds no command count.
    #[test]
    fn a_builtin_seats_commands_are_regenerated_for_the_page() {
        use crate::game::{play, PlayOptions};
        use crate::runner::player::{DecidePlayer, Player};
        use crate::sim::MatchConfig;
        use gbely_world::replay::Answer;
        let map = std::sync::Arc::new(gbely_world::generate_duel("regen", 24, 24).unwrap());
        let mut a = DecidePlayer::new("expander", agents::Expander::default());
        let mut b = DecidePlayer::council("council");
        let mut players: [&mut dyn Player; 2] = [&mut a, &mut b];
        let rec =
            play(map.clone(), &mut players, PlayOptions { config: MatchConfig { rounds: 60 }, record: true }, &mut ());
        let replay = rec.replay.unwrap();
        assert!(
            replay.turns.iter().all(|t| matches!(t.answers[1], Answer::Regen)),
            "the Council's answers are not stored"
        );
        let data = super::viewer_data(&replay).unwrap();
        let turns = turns_of(&data);
        let council_commands: u64 = turns.iter().map(|t| t["n"][1].as_u64().unwrap()).sum();
        assert!(council_commands > 0);
        let turns: Vec<Value> = turns.iter().map(|t| with_texts(t, map.grid())).collect();
        let discards: Vec<&serde_json::Value> = turns.iter().flat_map(|t| t["disc"].as_array().unwrap()).collect();
        assert!(discards.iter().any(|d| d[0] == 1), "the match has a discarded command of the Council's");
        for d in discards {
            let text = d[3].as_str().unwrap();
            assert!(text.starts_with("{\"typ\":"), "{d}");
        }
    }

    /// The replay file's name reaches the page's configuration as JSON text that cannot close its
    /// script element (a name is the user's, any characters).
    #[test]
    fn the_file_name_is_configuration_text() {
        let file = Some("</script><b>'x'.json.gz".to_string());
        let page = super::viewer_page("t", &super::PageMode::File { data_gz_base64: String::new(), file });
        assert!(page.contains(r#""file":"\u003c/script>\u003cb>'x'.json.gz""#), "{page}");
        let page = super::viewer_page("t", &super::PageMode::File { data_gz_base64: String::new(), file: None });
        assert!(page.contains(r#""file":null"#));
    }

    /// A page in another language: `<html lang>`, its texts in the table (the others English),
    /// its static texts filled in and escaped; a name with a slot's name in it stays a name.
    #[test]
    fn a_page_in_a_language_has_its_code_and_texts() {
        let texts = [("pause", "pauza <b>"), ("round-n", "kolo {r}")].map(|(k, v)| (k.to_string(), v.to_string()));
        let lang = super::ViewerLang { code: "sk".into(), texts: texts.into_iter().collect() };
        let mode = super::PageMode::Live(super::LivePage::default());
        let page = super::viewer_page_in("{{TEXT}} {{t:pause}}", &mode, Some(&lang));
        assert!(page.contains(r#"<html lang="sk">"#));
        assert!(page.contains("<title>gbely — {{TEXT}} {{t:pause}}</title>"), "the name stays a name");
        let table = page.split(r#"<script id="gbely-text" type="application/json">"#).nth(1).unwrap();
        let table: serde_json::Map<String, Value> =
            serde_json::from_str(&table[..table.find("</script>").unwrap()].replace("\\u003c", "<")).unwrap();
        assert_eq!(table["pause"], "pauza <b>");
        assert_eq!(table["round-n"], "kolo {r}");
        assert_eq!(table["resume"], "resume", "a text the language lacks is English");
        assert_eq!(table.len(), super::TEXTS.len());
        assert!(page.contains(">pauza &lt;b&gt;</button>") && !page.contains("pauza <b>"), "escaped, in the table too");
        // English by default: as the page was before it had languages.
        let en = super::viewer_page("t", &mode);
        assert!(en.contains(r#"<html lang="en">"#) && en.contains(r#"<button id="startbtn">start the match</button>"#));
        assert!(!en.contains("{{t:") && !en.contains("{{h:") && !en.contains("{{TEXT}}"));
    }

    /// Every key the page names (`{{t:key}}`, `{{h:key}}`, `tx('key'`, `txn('key'`) is in
    /// [`TEXTS`], and every text there is named: a text added to the page is a text to translate.
    #[test]
    fn the_pages_texts_are_the_keys_of_the_list() {
        let keys: std::collections::BTreeSet<&str> = super::TEXTS.iter().map(|(k, _)| *k).collect();
        assert_eq!(keys.len(), super::TEXTS.len(), "a key twice");
        let mut named = std::collections::BTreeSet::new();
        for open in ["{{t:", "{{h:", "tx('", "txn('"] {
            for (at, _) in super::TEMPLATE.match_indices(open) {
                let rest = &super::TEMPLATE[at + open.len()..];
                let key = &rest[..rest.find(['}', '\'', '`']).unwrap()];
                named.insert((open, key.to_string()));
            }
        }
        // Keys put together in the script (`tx(c ? 'a' : 'b')`) are named as literals in a `tx(` call.
        for (at, _) in super::TEMPLATE.match_indices("tx(") {
            let call = &super::TEMPLATE[at..at + super::TEMPLATE[at..].find([')', ',']).unwrap()];
            for quoted in call.split('\'').skip(1).step_by(2) {
                named.insert(("tx('", quoted.to_string()));
            }
        }
        let mut used = std::collections::BTreeSet::new();
        for (open, key) in &named {
            if *open == "txn('" {
                assert!(keys.contains(format!("{key}.other").as_str()), "txn('{key}') has no {key}.other");
                used.insert(format!("{key}.one"));
                used.insert(format!("{key}.other"));
            } else {
                assert!(keys.contains(key.as_str()), "{open}{key}: not in TEXTS");
                assert_eq!(*open == "{{h:", key.ends_with("-html"), "{open}{key}: markup only in -html keys");
                used.insert(key.clone());
            }
        }
        // Every discard's reason and violation's kind has its text.
        for r in gbely_rules::DiscardReason::ALL {
            assert!(keys.contains(format!("reason-{}", r.code()).as_str()), "{}", r.code());
        }
        for m in [gbely_rules::Mode::Duel, gbely_rules::Mode::Final] {
            let mode = serde_json::to_value(m).unwrap();
            assert!(keys.contains(format!("mode-{}", mode.as_str().unwrap()).as_str()), "{mode}");
        }
        use gbely_rules::ViolationKind as V;
        for v in [V::Timeout, V::Crash, V::Unreadable] {
            let kind = serde_json::to_value(v).unwrap();
            assert!(keys.contains(format!("violation-{}", kind.as_str().unwrap()).as_str()), "{kind}");
        }
        // The texts of the replay's codes, named by the code: `TEXT[`reason-${reason}`]`.
        for prefix in ["reason-", "violation-", "mode-"] {
            assert!(super::TEMPLATE.contains(&format!("TEXT[`{prefix}${{")), "{prefix}: not read by the page");
            used.extend(keys.iter().filter(|k| k.starts_with(prefix)).map(|k| k.to_string()));
        }
        let unused: Vec<&&str> = keys.iter().filter(|k| !used.contains(**k)).collect();
        assert!(unused.is_empty(), "texts the page never shows: {unused:?}");
    }

    #[test]
    fn slots_are_filled_once_and_names_stay_text() {
        let t = "<title>{{TITLE}}</title><i>{{DATA}}</i>{{UNKNOWN}}{{";
        let out = super::fill(t, &[("TITLE", "a {{DATA}} b"), ("DATA", "xyz")]);
        assert_eq!(out, "<title>a {{DATA}} b</title><i>xyz</i>{{UNKNOWN}}{{");
        let page = super::viewer_page("<b>{{DATA}}</b> & co", &super::PageMode::Live(super::LivePage::default()));
        assert!(page.contains("&lt;b&gt;{{DATA}}&lt;/b&gt; &amp; co"));
        assert!(!page.contains("<b>"));
    }
}
