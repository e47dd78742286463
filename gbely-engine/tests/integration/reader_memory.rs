//! Replay readers bounded by what a file holds, not what it claims (issue 36, row 8).
//!
//! Crafted replays within every bound the format documents — a version 1 file of 70 rounds of a
//! million cell changes each on a 1000×1000 map, a version 2 file of compact answers of a
//! million commands, 16 MiB of values kept as received that parse into far more — are written
//! here (gzip-compressed as they are generated: nothing big is committed), and every reader of
//! the `gbely` command (`replay view`, `verify`, `stats`, `show`) runs on them under an
//! address-space cap of [`READ_BUDGET`] and a margin for the program itself. Each either
//! finishes or refuses in one line that says what and where; none is killed or aborts for want
//! of memory. (Before the fix, `view` took 23 GB on the first file, `verify` 1.6 GB, `stats`
//! 2.4 GB: under the cap they died.)
//!
//! Each generated file is deleted when its test is done; `GBELY_KEEP_CRAFTED=DIR` keeps them in
//! DIR.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use gbely_world::replay::MapRecord;
use gbely_world::Map;
use serde_json::json;

/// The memory the readers promise to stay within (docs/replay-format.md): 2 GiB.
const READ_BUDGET: usize = 2 << 30;

/// The address space the program itself takes besides a reader's data (its code, the
/// allocator's arenas, thread stacks), measured on a small replay with room to spare.
const MARGIN: usize = 384 << 20;

fn crafted_dir() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| match std::env::var_os("GBELY_KEEP_CRAFTED") {
        Some(d) => {
            std::fs::create_dir_all(&d).unwrap();
            PathBuf::from(d)
        }
        None => crate::common::scratch("crafted"),
    })
    .clone()
}

/// A 1000×1000 map (the largest a map file may be) with two seats, all meadow.
fn big_map() -> &'static Map {
    static MAP: OnceLock<Map> = OnceLock::new();
    MAP.get_or_init(|| {
        let mut text =
            String::from("gbely-map 1\nname big\nsize 1000 1000\nseat army P00_00\nseat army P999_999\nterrain\n");
        for r in 0..1000 {
            let mut row = ".".repeat(1000);
            if r == 0 {
                row.replace_range(0..1, "B");
            }
            if r == 999 {
                row.replace_range(999..1000, "B");
            }
            text.push_str(&row);
            text.push('\n');
        }
        text.push_str("garrison\n");
        for _ in 0..1000 {
            text.push_str(&vec!["0"; 1000].join(" "));
            text.push('\n');
        }
        text.push_str("end\n");
        gbely_world::parse_map_file(&text).expect("the big map parses")
    })
}

/// A small map (14×14) for the files whose weight is in their answers.
fn small_map() -> &'static Map {
    static MAP: OnceLock<Map> = OnceLock::new();
    MAP.get_or_init(|| gbely_world::generate_duel("crafted", 14, 14).unwrap())
}

/// Writes a replay of `version` on `map` with `turns` turns, gzip-compressed as it goes: the
/// document around the turns is built here, each turn's text by `turn(round, out)`.
fn write_replay(path: &Path, map: &Map, version: u32, turns: usize, mut turn: impl FnMut(usize, &mut dyn Write)) {
    let cells = map.len();
    let g = map.grid();
    let seats: Vec<_> = map
        .seats()
        .iter()
        .enumerate()
        .map(|(s, seat)| json!({"seat": s, "name": format!("s{s}"), "role": seat.role, "base": g.id(seat.base)}))
        .collect();
    let sides: Vec<_> = (0..map.seats().len())
        .map(|s| {
            json!({"seat": s, "name": format!("s{s}"), "cells": 0, "score": 0.0, "tiebreak_round": null,
                        "violations": 0, "disqualified": false, "eliminated": null})
        })
        .collect();
    let head = json!({
        "format": "gbely-replay", "version": version, "engine": "crafted", "map": MapRecord::of(map),
        "mode": "duel", "rounds": turns.max(1), "seats": seats, "turns": "@@",
        "final": {"owner": vec![-1; cells], "units": vec![0; cells], "fortification": vec![0; cells]},
        "result": {"last_round": turns.saturating_sub(1), "ended_by": "rounds", "council_fell": null, "sides": sides},
    })
    .to_string();
    let (before, after) = head.split_once("\"@@\"").unwrap();
    let file = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut gz = flate2::write::GzEncoder::new(file, flate2::Compression::fast());
    gz.write_all(before.as_bytes()).unwrap();
    gz.write_all(b"[").unwrap();
    for r in 0..turns {
        if r > 0 {
            gz.write_all(b",").unwrap();
        }
        turn(r, &mut gz);
    }
    gz.write_all(b"]").unwrap();
    gz.write_all(after.as_bytes()).unwrap();
    gz.finish().unwrap().flush().unwrap();
}

/// `[x,x,…]` of `n` copies of `x`, written in pieces.
fn repeated(out: &mut dyn Write, x: &str, n: usize) {
    let piece: String = std::iter::repeat_n(format!("{x},"), 4096.min(n.max(1))).collect();
    out.write_all(b"[").unwrap();
    let mut left = n;
    while left > 0 {
        let k = left.min(4096);
        let text = &piece[..k * (x.len() + 1)];
        out.write_all(if k == left { &text.as_bytes()[..text.len() - 1] } else { text.as_bytes() }).unwrap();
        left -= k;
    }
    out.write_all(b"]").unwrap();
}

/// Issue 36's first file: version 1, 70 rounds of a million changes each on a 1000×1000 map
/// (about 2 MB compressed).
fn v1_million_changes(path: &Path, turns: usize, changes: usize) {
    write_replay(path, big_map(), 1, turns, |r, out| {
        write!(out, r#"{{"round":{r},"answers":["out","out"],"cells":[0,0],"units":[0,0],"changes":"#).unwrap();
        repeated(out, "[5,-1,0,0]", changes);
        out.write_all(b"}").unwrap();
    });
}

/// Issue 36's second file: version 2, each answer a million FORTIFY commands in the compact form.
fn v2_compact(path: &Path, turns: usize, items: usize) {
    compact_file(path, 2, turns, items)
}

/// The same in `version`'s form: cells as indices (`c`, version 2) or as steps (`d`, version 3;
/// all 0, cell #0 each time, as in version 2's file).
fn compact_file(path: &Path, version: u32, turns: usize, items: usize) {
    let cells = if version >= 3 { "d" } else { "c" };
    write_replay(path, small_map(), version, turns, |r, out| {
        write!(out, r#"{{"round":{r},"answers":[{{"compact":{{"k":"{}","{cells}":"#, "F".repeat(items)).unwrap();
        repeated(out, "0", items);
        out.write_all(br#","n":"#).unwrap();
        repeated(out, "1", items);
        out.write_all(br#"}},"out"],"cells":[0,0],"units":[0,0]}"#).unwrap();
    });
}

/// Issue 36's third file: 16 MiB of items kept as received (two answers of one item, an array
/// of four million zeros), about 70 KB compressed.
fn raw_values(path: &Path, turns: usize, zeros: usize) {
    write_replay(path, small_map(), 2, turns, |r, out| {
        write!(out, r#"{{"round":{r},"answers":[{{"compact":{{"k":"r","c":[],"n":[],"raw":["#).unwrap();
        repeated(out, "0", zeros);
        out.write_all(br#"]}},"out"],"cells":[0,0],"units":[0,0]}"#).unwrap();
    });
}

/// Deletes a crafted file (and its viewer page), unless they are kept.
fn done(path: &Path) {
    if std::env::var_os("GBELY_KEEP_CRAFTED").is_none() {
        let _ = std::fs::remove_file(path);
        let _ = std::fs::remove_file(format!("{}.html", path.display()));
    }
}

/// `gbely ARGS` under an address-space cap of the readers' budget and the margin; its exit
/// code, stderr and time.
fn capped(args: &[&str]) -> (Option<i32>, String, Duration) {
    let start = Instant::now();
    let out = Command::new("prlimit")
        .arg(format!("--as={}", READ_BUDGET + MARGIN))
        .arg(env!("CARGO_BIN_EXE_gbely"))
        .args(args)
        .current_dir(crafted_dir())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .expect("prlimit runs");
    // `verify` says on stdout where a replay and its re-simulation part (exit code 5).
    let said = if out.status.code() == Some(5) { &out.stdout } else { &out.stderr };
    (out.status.code(), String::from_utf8_lossy(said).into_owned(), start.elapsed())
}

/// Every reader on `file`: each ends in time, under the cap, with success or a one-line
/// refusal naming the file — never killed, never out of memory.
fn every_reader_within_budget(file: &Path) -> Vec<String> {
    let f = file.to_str().unwrap();
    let html = format!("{f}.html");
    let mut refusals = Vec::new();
    for args in [
        vec!["replay", "view", f, "-o", &html],
        vec!["replay", "verify", f],
        vec!["replay", "stats", f],
        vec!["replay", "stats", f, "--json"],
        vec!["replay", "show", f],
        vec!["replay", "show", f, "--round", "1", "--seat", "0", "--observation"],
    ] {
        let (code, err, took) = capped(&args);
        let case = format!("`gbely {}`", args.join(" "));
        assert!(took < Duration::from_secs(300), "{case} took {took:?}");
        assert!(!err.contains("memory allocation") && !err.contains("panicked"), "{case}: {err}");
        match code {
            Some(0) => {}
            // A refusal (1), or `verify` saying the crafted rounds are not what the rules make of
            // them (5): one line, naming the file.
            Some(1) | Some(5) => {
                let line = err.trim();
                assert_eq!(line.lines().count(), 1, "{case}: {err}");
                assert!(line.contains(f), "{case} should name the file: {err}");
                refusals.push(line.to_string());
            }
            other => panic!("{case} ended with {other:?} (killed or aborted: over the memory cap?): {err}"),
        }
    }
    refusals
}

/// Regression (issue 36, row 8): `replay view` of a 1.9 MB version 1 file of 70 rounds × 1 M
/// changes took 23 GB, `verify` 1.6 GB. Refused in one line, within the budget.
#[test]
fn a_v1_file_of_70_rounds_of_a_million_changes_stays_within_the_budget() {
    let path = crafted_dir().join("v1-changes.json.gz");
    v1_million_changes(&path, 70, 1_000_000);
    assert!(std::fs::metadata(&path).unwrap().len() < 16 << 20);
    let refusals = every_reader_within_budget(&path);
    assert_eq!(refusals.len(), 6, "every reader refuses it: {refusals:?}");
    assert!(refusals.iter().all(|r| r.contains("MiB") || r.contains("bytes uncompressed")), "{refusals:?}");
    done(&path);
    // Fewer changes that the file can hold, but too many for the viewer's work on a 1000×1000
    // map: what the readers can do they do, the rest is refused saying how much it would take.
    let path = crafted_dir().join("v1-fewer.json.gz");
    v1_million_changes(&path, 25, 200_000);
    let refusals = every_reader_within_budget(&path);
    assert!(refusals.iter().any(|r| r.contains("building the viewer's data would take about")), "{refusals:?}");
    done(&path);
}

/// Regression (issue 36, row 8): a 1.2 MB version 2 file of compact answers of a million
/// commands each.
#[test]
fn a_v2_file_of_compact_answers_of_a_million_commands_stays_within_the_budget() {
    let path = crafted_dir().join("v2-compact.json.gz");
    v2_compact(&path, 40, 1_000_000);
    let refusals = every_reader_within_budget(&path);
    assert!(!refusals.is_empty() && refusals.iter().all(|r| r.contains("MiB")), "{refusals:?}");
    done(&path);
    // Fewer rounds of them, which the file may hold: every reader works through them (a million
    // discarded commands a round) within the budget, or says why not.
    let path = crafted_dir().join("v2-fewer.json.gz");
    v2_compact(&path, 6, 1_000_000);
    every_reader_within_budget(&path);
    done(&path);
}

/// Version 3's cells as steps are bounded as version 2's indices are: the same file in its form.
#[test]
fn a_v3_file_of_compact_answers_of_a_million_commands_stays_within_the_budget() {
    let path = crafted_dir().join("v3-compact.json.gz");
    compact_file(&path, 3, 40, 1_000_000);
    let refusals = every_reader_within_budget(&path);
    assert!(!refusals.is_empty() && refusals.iter().all(|r| r.contains("MiB")), "{refusals:?}");
    done(&path);
}

/// Regression (issue 36, row 8): 16 MiB of items kept as received in 70 KB made `stats` take
/// 2.4 GB (each `0` of the text a JSON value of its own).
#[test]
fn items_kept_as_received_are_counted_by_what_they_parse_into() {
    let path = crafted_dir().join("raw.json.gz");
    raw_values(&path, 2, 4_000_000);
    assert!(std::fs::metadata(&path).unwrap().len() < 1 << 20);
    let refusals = every_reader_within_budget(&path);
    assert_eq!(refusals.len(), 6, "{refusals:?}");
    assert!(refusals.iter().all(|r| r.contains("more than 192 MiB of memory once read")), "{refusals:?}");
    done(&path);
}

/// A file well within the budget reads as before (nothing refused that fits).
#[test]
fn a_modest_crafted_file_is_read_by_every_reader() {
    let path = crafted_dir().join("modest.json.gz");
    raw_values(&path, 3, 1000);
    let refusals = every_reader_within_budget(&path);
    // Only `verify` may say that the crafted rounds are not what the rules make of them.
    assert!(refusals.iter().all(|r| r.contains("turn") || r.contains("round") || r.contains("differ")), "{refusals:?}");
    done(&path);
}
