//! Figures of a replay: per round and per side.

use std::fmt::Write as _;

use gbely_world::replay::Answer;
use gbely_world::Replay;

use super::Frame;
use crate::text::printable;

/// Figures of a replay: per round cells, shares, units and captures per seat; per side totals.
pub fn stats(replay: &Replay) -> Result<serde_json::Value, String> {
    let replay = &*super::expanded(replay)?;
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
        for (s, a) in t.answers.iter().enumerate().take(seats) {
            match a {
                Answer::Violation(_) => violations[s] += 1,
                // Items left out of a flooding answer's record are counted there.
                Answer::Compact(c) => {
                    for (reason, n) in c.cut.iter().flat_map(|cut| &cut.left_out) {
                        *discarded[s].entry(reason.code().to_string()).or_default() += n;
                    }
                }
                _ => {}
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
    // Names come from the file: shown escaped.
    let names: Vec<_> = replay.seats.iter().map(|x| printable(&x.name)).collect();
    let _ = writeln!(
        s,
        "{} on {}: {} rounds, ended by {}",
        names.join(" vs "),
        printable(&replay.map.name),
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
            printable(side["name"].as_str().unwrap_or("")),
            side["captures"],
            side["violations"],
            total,
            if disc.is_empty() { "" } else { ": " },
            disc.join(", ")
        );
    }
    s
}
