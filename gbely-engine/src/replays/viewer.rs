//! The replay viewer: one self-contained HTML file (no network, no external scripts) with the
//! match embedded as gzip-compressed, base64-encoded JSON that the page unpacks with the
//! browser's own `DecompressionStream` and replays exactly (production + recorded changes).

use std::io::Write;
use std::sync::Arc;

use gbely_rules::{constants, Terrain};
use gbely_world::replay::Answer;
use gbely_world::{Replay, SeatRole};
use serde_json::{json, Value};

use crate::game::owner_code;
use crate::replays::{resimulate, seat_colors, Frame};

const TEMPLATE: &str = include_str!("viewer.html");

fn q(x: f64) -> i64 {
    (x * 100.0).round() as i64
}

/// The data the page needs, as compact JSON. Units are carried in hundredths: the page shows
/// them to one decimal.
pub fn viewer_data(replay: &Replay) -> Result<Value, String> {
    let replay = &*super::expanded(replay)?;
    let map = Arc::new(replay.check().map_err(|e| e.to_string())?);
    let g = map.grid();
    let terrain: String = g.cells().map(|c| map.terrain(c).glyph()).collect();
    let bases: Vec<u32> = g.cells().filter(|&c| map.is_base(c)).map(|c| c.0).collect();
    let roles: Vec<SeatRole> = map.seats().iter().map(|s| s.role).collect();
    let colors = seat_colors(&roles);
    let seats: Vec<Value> = replay
        .seats
        .iter()
        .zip(map.seats())
        .zip(&colors)
        .map(|((s, seat), color)| json!({"name": s.name, "role": s.role, "base": seat.base.0, "color": color.hex}))
        .collect();
    let start = Frame::start(&map);
    // Events come from a re-simulation (failed attacks are not stored in the file).
    let mut events: Vec<(Vec<Value>, Vec<Value>)> = Vec::new();
    resimulate(replay, map.clone(), |_, _, report| {
        let cap = report.captures.iter().map(|c| json!([c.seat, c.cell.0, owner_code(c.from)])).collect();
        let fail = report.failed.iter().map(|c| json!([c.seat, c.cell.0, owner_code(c.from)])).collect();
        events.push((cap, fail));
        true
    });
    let mut turns = Vec::with_capacity(replay.turns.len());
    for (r, t) in replay.turns.iter().enumerate() {
        // Changes as a flat list: cell delta, owner, units (1/100), fortification (1/100).
        let mut flat: Vec<i64> = Vec::with_capacity(t.changes.len() * 4);
        let mut last = 0i64;
        let mut sorted = t.changes.clone();
        sorted.sort_by_key(|c| c.0);
        for c in &sorted {
            flat.extend([c.0 as i64 - last, c.1 as i64, q(c.2), q(c.3)]);
            last = c.0 as i64;
        }
        let lists: Vec<Option<Vec<Value>>> = t.answers.iter().map(|a| super::answer_commands(a, g)).collect();
        let disc: Vec<Value> = t
            .discarded
            .iter()
            .map(|d| {
                let cmd = lists
                    .get(d.seat as usize)
                    .and_then(|l| l.as_ref())
                    .and_then(|l| l.get(d.index as usize))
                    .map(|v| v.to_string())
                    .unwrap_or_default();
                json!([d.seat, d.index, d.reason, cmd])
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
        let (cap, fail) = events.get(r).cloned().unwrap_or_default();
        turns.push(json!({"c": flat, "cap": cap, "fail": fail, "disc": disc, "viol": viol, "n": ncmd}));
    }
    Ok(json!({
        "v": 1,
        "name": replay.map.name,
        "w": g.width(),
        "h": g.height(),
        "t": terrain,
        "b": bases,
        // Production per terrain glyph and the base bonus, in hundredths: the rules' own numbers,
        // so the page rebuilds each round as the engine does.
        "prod": Terrain::ALL.iter().map(|t| (t.glyph().to_string(), json!(q(t.production())))).collect::<serde_json::Map<_, _>>(),
        "base_bonus": q(constants::BASE_BONUS),
        "seats": seats,
        "o0": start.owner,
        "u0": start.units.iter().map(|&u| q(u)).collect::<Vec<_>>(),
        "f0": start.fortification.iter().map(|&u| q(u)).collect::<Vec<_>>(),
        "turns": turns,
        "result": replay.result,
        "mode": replay.mode,
    }))
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

/// The viewer page for a replay.
pub fn viewer_html(replay: &Replay) -> Result<String, String> {
    let data = viewer_data(replay)?;
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    enc.write_all(data.to_string().as_bytes()).map_err(|e| e.to_string())?;
    let gz = enc.finish().map_err(|e| e.to_string())?;
    let title = replay.seats.iter().map(|s| s.name.as_str()).collect::<Vec<_>>().join(" vs ");
    let title = title.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;");
    Ok(TEMPLATE.replace("{{TITLE}}", &title).replacen("{{DATA}}", &base64(&gz), 1))
}

#[cfg(test)]
mod tests {
    #[test]
    fn base64_matches_the_standard_alphabet() {
        assert_eq!(super::base64(b""), "");
        assert_eq!(super::base64(b"f"), "Zg==");
        assert_eq!(super::base64(b"fo"), "Zm8=");
        assert_eq!(super::base64(b"foo"), "Zm9v");
        assert_eq!(super::base64(b"foobar"), "Zm9vYmFy");
        assert_eq!(super::base64(&[0xff, 0xfe, 0x00]), "//4A");
    }
}
