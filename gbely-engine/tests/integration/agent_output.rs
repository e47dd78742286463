//! What agents write is data (issue 36, rows 6, 7, 14 and 15): lone surrogates and bytes that
//! are not UTF-8 in their prints and notes cost no violation, a note that cannot be written
//! drops that note only; their names and notes reach the terminal escaped, in every command that
//! prints them; lines after a round's answer are dropped and counted, never read as the next
//! round's answer; a flood of junk items is counted without being held.
#![cfg(unix)]

use crate::common::scratch;

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

fn gbely(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gbely")).args(args).current_dir(dir).output().expect("gbely runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn json_of(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}{}", text(&out.stdout), text(&out.stderr)))
}

/// Seat 0's notes in each round of a replay.
fn notes_of(replay: &gbely_world::Replay) -> Vec<Option<&gbely_world::replay::SeatNotes>> {
    replay.turns.iter().map(|t| t.notes.iter().find(|n| n.seat == 0)).collect()
}

/// Row 6: printing and noting a lone surrogate made every answer unreadable (four violations
/// disqualified the agent); a cell note under a key that is not a string made the answer "not
/// JSON". Now the prints and notes are kept with U+FFFD, the bad note alone is dropped, and the
/// commands are carried out.
#[test]
fn lone_surrogates_in_prints_and_notes_and_a_bad_cell_id_cost_no_violation() {
    let dir = scratch("surrogates");
    std::fs::write(
        dir.join("odd.py"),
        "def decide(stav):\n    print('printed \\udc80 here')\n    me = stav['moja_zakladna']\n    \
         return {'prikazy': [{'typ': 'FORTIFY', 'pole': me, 'investicia': 1}],\n            \
         'debug': {'text': 'plan \\ud800', 'cells': {me: 'home \\udfff', (1, 2): 'a key that is no id'}}}\n",
    )
    .unwrap();
    let out = gbely(
        &dir,
        &["play", "odd.py", "--map", "seed:odd", "--size", "16", "--rounds", "6", "--replay", "r.json", "--json"],
    );
    let doc = json_of(&out);
    let side = &doc["sides"][0];
    assert_eq!(side["violations"], 0, "{doc}");
    assert_eq!(side["details"]["discarded"], serde_json::json!({}), "every FORTIFY of its base was carried out");
    assert_eq!(doc["rounds_played"], 6);
    let replay = gbely_engine::replays::read_replay(&dir.join("r.json")).unwrap();
    let width = replay.map.width;
    for (round, notes) in notes_of(&replay).into_iter().enumerate() {
        let notes = notes.unwrap_or_else(|| panic!("round {round} has its notes"));
        assert_eq!(notes.text, "plan \u{fffd}\nprinted \u{fffd} here", "round {round}");
        assert_eq!(notes.cells.len(), 1, "only the note under a cell id is kept: {:?}", notes.cells);
        let (cell, note) = &notes.cells[0];
        assert_eq!(gbely_rules::format_cell_id(cell / width, cell % width), replay.seats[0].base);
        assert_eq!(note, "home \u{fffd}");
    }
}

/// Row 6, for any program: bytes that are not UTF-8 inside the strings of an answer are kept as
/// U+FFFD; outside a string the line is not JSON, and that is still a violation.
#[test]
fn bytes_that_are_not_utf8_inside_an_answers_strings_are_replacement_characters() {
    let dir = scratch("not-utf8");
    std::fs::write(
        dir.join("bytes.sh"),
        "#!/bin/sh\nn=0\nwhile read line; do\n  n=$((n+1))\n  if [ $n -eq 3 ]; then printf '[\\377]\\n'; \
         else printf '{\"prikazy\":[],\"debug\":{\"text\":\"caf\\351 \\377\"}}\\n'; fi\ndone\n",
    )
    .unwrap();
    let out = gbely(
        &dir,
        &[
            "play",
            "cmd:sh bytes.sh",
            "--map",
            "seed:b",
            "--size",
            "16",
            "--rounds",
            "4",
            "--replay",
            "r.json",
            "--json",
        ],
    );
    let doc = json_of(&out);
    let violations = doc["sides"][0]["details"]["violations"].as_array().unwrap().clone();
    assert_eq!(violations.len(), 1, "only the line that is not JSON: {violations:?}");
    assert_eq!(violations[0]["round"], 2);
    assert!(violations[0]["detail"].as_str().unwrap().contains("not JSON"), "{violations:?}");
    let replay = gbely_engine::replays::read_replay(&dir.join("r.json")).unwrap();
    let notes = notes_of(&replay);
    for round in [0, 1, 3] {
        assert_eq!(notes[round].map(|n| n.text.as_str()), Some("caf\u{fffd} \u{fffd}"), "round {round}");
    }
}

/// The name and notes of a hostile agent: a screen clear, an OSC 52 clipboard write, a bell, a
/// newline that forges a standings row, a CR, a backspace, a bidi override and some HTML.
const EVIL: &str = r#"AGENT_NAME = "evil\x1b[2J\x1b]52;c;aGk=\x07\n   1  forged row\r\x08\u202e <b>x</b>"
def decide(stav):
    print("note \x1b[31mred\x1b]52;c;aGk=\x07\rback\x08\u202e")
    if stav["kolo"] == 2:
        raise ValueError("boom \x1b[2J\x9b1m")
    return {"prikazy": [], "debug": {"cells": {stav["moja_zakladna"]: "cell \x1b[5m\n"}}}
"#;

/// No control character (but the line breaks of the output itself) and no bidi control.
#[track_caller]
fn assert_printable(what: &str, out: &Output) {
    for (stream, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        let s = text(bytes);
        let bad: Vec<char> = s
            .chars()
            .filter(|&c| {
                (c.is_control() && c != '\n')
                    || ('\u{202a}'..='\u{202e}').contains(&c)
                    || ('\u{2066}'..='\u{2069}').contains(&c)
            })
            .collect();
        assert!(bad.is_empty(), "{what}: raw {bad:?} on {stream}:\n{s}");
        assert!(!s.lines().any(|l| l.trim_start().starts_with("1  forged row")), "{what}: a forged line:\n{s}");
    }
}

/// Row 7: `AGENT_NAME`, notes and what decide raised were printed raw by `play`, `check`,
/// `agents`, `league` and `replay show`: the terminal cleared, the clipboard written, a
/// standings row forged. Now each shows them escaped (`\x1b`, `\n`), and the league's HTML
/// report escapes them as HTML.
#[test]
fn control_sequences_in_names_and_notes_reach_no_terminal() {
    let dir = scratch("control");
    std::fs::write(dir.join("evil.py"), EVIL).unwrap();
    std::fs::write(dir.join("plain.py"), "def decide(stav):\n    return []\n").unwrap();
    let escaped = r"evil\x1b[2J\x1b]52;c;aGk=\x07\n   1  forged row\r\x08\u{202e} <b>x</b>";

    let play =
        gbely(&dir, &["play", "evil.py", "--map", "seed:c", "--size", "16", "--rounds", "4", "--replay", "r.json"]);
    assert_eq!(play.status.code(), Some(0), "{}", text(&play.stderr));
    assert_printable("play", &play);
    let shown = text(&play.stdout);
    assert!(shown.starts_with(&format!("{escaped} vs council")), "{shown}");
    assert!(shown.contains(r"decide raised ValueError: boom \x1b[2J\u{9b}1m"), "{shown}");

    let check = gbely(&dir, &["check", "evil.py", "--rounds", "4"]);
    assert_printable("check", &check);
    let shown = text(&check.stdout);
    assert!(shown.contains(&format!("name {escaped}")), "{shown}");
    assert!(shown.contains(r"boom \x1b[2J"), "{shown}");

    let agents = gbely(&dir, &["agents", "."]);
    assert_printable("agents", &agents);
    assert!(text(&agents.stdout).contains(escaped), "{}", text(&agents.stdout));

    let league =
        gbely(&dir, &["league", "evil.py", "plain.py", "--maps", "seed:c", "--rounds", "3", "--db", "l.sqlite"]);
    assert_eq!(league.status.code(), Some(0), "{}", text(&league.stderr));
    assert_printable("league", &league);
    assert!(text(&league.stdout).contains(escaped), "{}", text(&league.stdout));
    let report = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .chain(std::fs::read_dir(dir.join("gbely-league")).into_iter().flatten().flatten().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "html"))
        .expect("the league's report");
    let html = std::fs::read_to_string(&report).unwrap();
    assert!(!html.contains('\x1b') && !html.contains("<b>x</b>"), "{html}");
    assert!(html.contains("&lt;b&gt;x&lt;/b&gt;"), "{html}");

    // The replay keeps what the agent noted as it was (data); `replay show` escapes it, and the
    // names of a crafted replay too.
    let show = gbely(&dir, &["replay", "show", "r.json", "--round", "1"]);
    assert_printable("replay show", &show);
    let shown = text(&show.stdout);
    assert!(shown.contains(r"note \x1b[31mred\x1b]52;c;aGk=\x07\rback\x08\u{202e}"), "{shown}");
    assert!(shown.contains(r"cell \x1b[5m\n"), "{shown}");
    let mut doc: Value = serde_json::from_slice(&std::fs::read(dir.join("r.json")).unwrap()).unwrap();
    doc["seats"][0]["name"] = Value::from("crafted\x1b]52;c;aGk=\x07\n   1  forged row");
    std::fs::write(dir.join("crafted.json"), doc.to_string()).unwrap();
    for args in [
        &["replay", "show", "crafted.json", "--round", "1"][..],
        &["replay", "show", "crafted.json", "--round", "1", "--seat", "0", "--observation"],
        &["replay", "stats", "crafted.json"],
    ] {
        let out = gbely(&dir, args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", text(&out.stderr));
        assert_printable(&format!("{args:?}"), &out);
        assert!(text(&out.stdout).contains(r"crafted\x1b]52;c;aGk=\x07\n   1  forged row"), "{}", text(&out.stdout));
    }
}

/// Row 14: three answer lines a round. The surplus used to be read as the next round's answer;
/// now the first line after each observation is the answer and the two after it are dropped,
/// counted in `--json` (`timing.dropped_lines`), in the summary and in the agent's log.
#[test]
fn lines_after_a_rounds_answer_are_dropped_and_counted() {
    let dir = scratch("three-lines");
    // One write of three lines: a valid answer, then a list whose command would be discarded,
    // then a line that is not JSON — read as an answer, either would show.
    std::fs::write(
        dir.join("three.sh"),
        "#!/bin/sh\nwhile read line; do printf '%s\\n%s\\n%s\\n' '{\"prikazy\":[]}' '[{\"typ\":\"SURPLUS\"}]' 'not json'; done\n",
    )
    .unwrap();
    let rounds = 12;
    let args = ["play", "cmd:sh three.sh", "--map", "seed:t", "--size", "16", "--rounds", "12", "--run-dir", "run"];
    let out = gbely(&dir, &[&args[..], &["--no-replay", "--json"]].concat());
    let doc = json_of(&out);
    let side = &doc["sides"][0];
    assert_eq!(side["violations"], 0, "{doc}");
    assert_eq!(side["details"]["discarded"], serde_json::json!({}), "no surplus line was read as an answer: {doc}");
    assert_eq!(side["details"]["timing"]["dropped_lines"], 2 * rounds, "{doc}");
    let log = std::fs::read_to_string(dir.join(side["details"]["log"].as_str().unwrap())).unwrap();
    assert!(log.contains("dropped 2 line(s) written after a round's answer"), "{log}");
    let out = gbely(&dir, &[&args[..], &["--no-replay"]].concat());
    let summary = text(&out.stdout);
    assert!(
        summary.contains(&format!("note: sh: {} line(s) written after a round's answer were dropped", 2 * rounds)),
        "{summary}"
    );
}

/// Row 15: an agent answering 8 MiB of junk items every round (4 M items a round, 12 M in
/// all). The engine used to parse each answer whole into JSON values (some 80 bytes an item),
/// peaking at hundreds of MB; now it reads item by item and counts the junk past the first
/// discarded items. The bound is the peak resident memory of the largest process (gbely or its
/// agent), with a wide margin over what is measured (docs/protocol.md: about 16 MB; 678 MB before).
#[test]
fn a_flood_of_junk_items_is_read_in_bounded_memory() {
    let dir = scratch("junk-flood");
    std::fs::write(
        dir.join("junk.py"),
        "import sys\nn = (8 * 1024 * 1024 - 64) // 2\nline = ('{\"prikazy\":[' + '0,' * (n - 1) + '0]}\\n').encode()\n\
         for _ in sys.stdin.buffer:\n    sys.stdout.buffer.write(line)\n    sys.stdout.buffer.flush()\n",
    )
    .unwrap();
    let per_round = (8 * 1024 * 1024 - 64) / 2;
    // A cap on the address space, should the engine regress (this test must not take the machine).
    let script = format!(
        "ulimit -v 3000000; exec python3 -c 'import resource, subprocess, sys\n\
         code = subprocess.run(sys.argv[1:]).returncode\n\
         print(\"maxrss\", resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)\n\
         sys.exit(code)' '{}' play --agent-cmd 'python3 junk.py' --map seed:junk --size 20 --rounds 3 --time-limit 60 \
         --replay r.json --json",
        env!("CARGO_BIN_EXE_gbely")
    );
    let out = Command::new("/bin/sh").arg("-c").arg(&script).current_dir(&dir).output().unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let doc = json_of(&out);
    assert_eq!(doc["sides"][0]["violations"], 0, "{doc}");
    assert_eq!(doc["sides"][0]["details"]["discarded"]["not_an_object"], 3 * per_round, "every item counted");
    let kib: u64 = err.lines().find_map(|l| l.strip_prefix("maxrss ")).and_then(|k| k.trim().parse().ok()).expect(&err);
    eprintln!("peak resident memory of the largest process: {} MB", kib / 1024);
    assert!(kib < 120 * 1024, "peak resident memory {} MB", kib / 1024);
    // The replay keeps the first 1000 discarded items of each answer and counts the rest.
    let replay = gbely_engine::replays::read_replay(&dir.join("r.json")).unwrap();
    for t in &replay.turns {
        let gbely_world::replay::Answer::Compact(c) = &t.answers[0] else { panic!("{:?}", t.answers[0]) };
        let cut = c.cut.as_ref().expect("cut");
        assert_eq!(cut.at, 1000);
        assert_eq!(cut.left_out[&gbely_rules::DiscardReason::NotAnObject] as usize, per_round - 1000);
    }
    let verify = gbely(&dir, &["replay", "verify", "r.json"]);
    assert_eq!(verify.status.code(), Some(0), "{}", text(&verify.stdout));
}

/// Row 15, the replay: an answer read item by item (what agent processes now hand in) records
/// the same replay and the same discards as the same answer read whole, a flood of junk items
/// and commands carried out after it included.
#[test]
fn an_answer_read_item_by_item_records_what_the_answer_read_whole_did() {
    use gbely_engine::runner::player::PlayerAnswer;
    use gbely_engine::session::Session;
    use serde_json::json;
    let map = std::sync::Arc::new(gbely_world::generate_duel("items", 20, 20).unwrap());
    let names = vec!["a".to_string(), "b".to_string()];
    let mut whole = Session::new(map.clone(), Default::default(), names.clone());
    let mut by_item = Session::new(map.clone(), Default::default(), names);
    whole.record();
    by_item.record();
    for round in 0..6 {
        let obs = whole.observe(0);
        let g = whole.grid().clone();
        let mut list = Vec::new();
        for own in &obs.own {
            if let Some(n) = own.neighbours.as_slice().first() {
                list.push(json!({"typ": "MOVE", "z": g.id(own.cell), "na": g.id(*n), "pocet": 1}));
            }
        }
        list.extend(std::iter::repeat_n(json!(0), 700 + 300 * round));
        list.push(json!({"typ": "FORTIFY", "pole": g.id(obs.base), "investicia": 1}));
        list.extend(std::iter::repeat_n(json!({}), 400));
        list.push(json!({"typ": "ATTACK", "z": "P99_99", "na": g.id(obs.base), "pocet": 2}));
        list.push(json!({"typ": "FORTIFY", "pole": g.id(obs.base), "investicia": 0.5}));
        let line = json!({"prikazy": list, "debug": {"text": format!("round {round}")}}).to_string();
        let read = gbely_engine::wire::read_answer(line.as_bytes(), &g).unwrap();
        assert!(read.orders.len() < list.len(), "round {round}: the junk past the first items is counted");
        whole.submit(0, PlayerAnswer::Raw(list));
        by_item.submit(0, PlayerAnswer::Read(read));
        for s in [&mut whole, &mut by_item] {
            s.submit(1, PlayerAnswer::Raw(Vec::new()));
            s.advance();
        }
    }
    let text = |s: &Session| serde_json::to_string(&s.replay_so_far().unwrap()).unwrap();
    assert_eq!(text(&by_item), text(&whole));
    let (a, b) = (whole.finish(), by_item.finish());
    assert_eq!(b.discards, a.discards);
    assert!(a.discards[0][&gbely_rules::DiscardReason::NotAnObject] > 5000);
}
