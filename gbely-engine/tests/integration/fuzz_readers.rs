//! Fuzzing the readers of files a user may be handed: replays and maps.
//!
//! A real replay (a short match played here, with a violation and discarded commands) and a real
//! map file are mutated (byte flips, truncation, inserted bytes, duplicated or removed JSON array
//! entries, numbers made huge, negative or fractional, values swapped between fields, an extra
//! seat) and every reader runs on the result: `read_replay` (plain and gzip), `Replay::from_json`,
//! `frames`, `frame_after`, `verify`, `observation_at`, `stats`, the terminal rendering,
//! `viewer_html`, and `parse_map_file`. Any of them may refuse; none may panic, and the process
//! never has more than [`RESIDENT_CEILING`] resident (checked after every case).
//!
//! The default number of cases keeps this test quick in a debug build. A long session:
//!
//! ```text
//! GBELY_FUZZ_CASES=100000 cargo test -p gbely-engine --release --test integration fuzz_readers::
//! ```
//!
//! A failure prints the smallest mutation proptest found; it is kept in
//! `gbely-engine/tests/proptest-regressions/fuzz_readers.txt` and tried first on every later run.

use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use agents::Expander;
use gbely_council::Council;
use gbely_engine::game::{play, PlayOptions};
use gbely_engine::replays::viewer::viewer_html;
use gbely_engine::replays::{
    frame_after, frames, observation_at, read_replay, render_frame, stats, stats_text, verify, MAX_REPLAY_BYTES,
};
use gbely_engine::runner::player::{DecidePlayer, Player, PlayerAnswer};
use gbely_engine::sim::MatchConfig;
use gbely_rules::ViolationKind;
use gbely_rules::{Decide, Grid, Observation};
use gbely_world::{parse_map_file, render_map, write_map_file, Map, Replay};
use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::{json, Value};

// ---- Memory ----

/// Most memory this test process may ever have resident. Its inputs are small (the sample replay
/// is tens of kilobytes, the explicit cases' files a few megabytes): the readers need a small part
/// of this, and one that sized anything by a number from a file (a frame per claimed turn, a
/// buffer the size of the decompression cap) would go far past it.
const RESIDENT_CEILING: u64 = 1 << 30;

/// The most memory the process has had resident so far (Linux; 0 elsewhere). Tests run on
/// several threads of one process, so this is the process's high-water mark, not a case's:
/// checked after every case, it says that no case went past the ceiling. The process is the whole
/// integration test program (tests/integration): the other files' tests count too, but they hold
/// tens of megabytes in the process (their agents are other processes), these tests a few
/// hundred at most.
fn resident_peak() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        })
        .map_or(0, |kb| kb * 1024)
}

fn within_memory(case: &str) -> Result<(), TestCaseError> {
    let peak = resident_peak();
    prop_assert!(peak < RESIDENT_CEILING, "{case}: {peak} bytes resident");
    Ok(())
}

// ---- The inputs ----

/// Plays like the expander but misbehaves in chosen rounds, so the replay has a violation and
/// discarded commands.
struct Flaky {
    inner: Expander,
    round: u32,
    next: Option<PlayerAnswer>,
}

impl Player for Flaky {
    fn name(&self) -> String {
        "flaky".into()
    }
    fn begin(&mut self, obs: &Observation, _grid: &Grid) {
        self.next = Some(match self.round {
            2 => PlayerAnswer::Violation { kind: ViolationKind::Timeout, detail: "no answer within 2.0 s".into() },
            4 => PlayerAnswer::Raw(vec![json!(5), json!({"typ": "MOVE", "z": "P99_99", "na": "P00_00", "pocet": 1})]),
            _ => PlayerAnswer::Commands(self.inner.decide(obs)),
        });
        self.round += 1;
    }
    fn finish(&mut self) -> PlayerAnswer {
        self.next.take().unwrap()
    }
}

struct Sample {
    map: Map,
    map_text: String,
    replay: Replay,
    replay_text: String,
}

/// A 14×14 duel of 8 rounds: small, so that a case is quick, with every kind of entry.
fn sample() -> &'static Sample {
    static SAMPLE: OnceLock<Sample> = OnceLock::new();
    SAMPLE.get_or_init(|| {
        let map = gbely_world::generate_duel("fuzz", 14, 14).unwrap();
        let mut flaky = Flaky { inner: Expander::default(), round: 0, next: None };
        let mut council = DecidePlayer::new("council", Council::new());
        let mut players: [&mut dyn Player; 2] = [&mut flaky, &mut council];
        let opts = PlayOptions { config: MatchConfig { rounds: 8 }, record: true };
        let replay = play(Arc::new(map.clone()), &mut players, opts, &mut ()).replay.unwrap();
        verify(&replay).expect("the sample replay verifies");
        let replay_text = replay.to_json();
        Sample { map_text: write_map_file(&map), map, replay, replay_text }
    })
}

fn scratch() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("gbely-fuzz-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    })
    .clone()
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

// ---- Running every reader ----

/// Every reader of a replay that was accepted; their results may be errors.
fn read_all(replay: &Replay) {
    let Ok(map) = replay.check() else { return };
    let _ = frames(replay, &map);
    let _ = verify(replay);
    let last = replay.turns.len() as u32;
    for round in [0, last / 2, last.saturating_sub(1), last, u32::MAX] {
        for seat in [0, 1, 2, 8, u8::MAX] {
            let _ = observation_at(replay, round, seat);
        }
        if let Ok(frame) = frame_after(replay, &map, round) {
            let _ = render_frame(replay, &map, &frame, Some(round), true);
            let _ = render_frame(replay, &map, &frame, None, false);
        }
    }
    if let Ok(s) = stats(replay) {
        let _ = stats_text(replay, &s);
    }
    let _ = viewer_html(replay);
}

/// A replay's bytes through every reader: the text parser, and files plain and gzip-compressed.
fn check_replay_bytes(bytes: &[u8], case: &str) -> Result<(), TestCaseError> {
    if let Ok(replay) = Replay::from_json(&String::from_utf8_lossy(bytes)) {
        read_all(&replay);
    }
    let dir = scratch();
    let thread = format!("{:?}", std::thread::current().id()).replace(|c: char| !c.is_ascii_alphanumeric(), "");
    for (name, content) in [("r.json", bytes.to_vec()), ("r.json.gz", gzip(bytes))] {
        let path = dir.join(format!("{thread}-{name}"));
        std::fs::write(&path, &content).unwrap();
        if let Ok(replay) = read_replay(&path) {
            read_all(&replay);
        }
    }
    within_memory(case)
}

fn check_map_text(text: &str, case: &str) -> Result<(), TestCaseError> {
    if let Ok(map) = parse_map_file(text) {
        let _ = render_map(&map);
        // What parses writes back to the same map.
        let again = parse_map_file(&write_map_file(&map));
        prop_assert_eq!(again.as_ref(), Ok(&map), "{}", case);
    }
    within_memory(case)
}

// ---- Mutations ----

/// Mutations of bytes, for any text.
#[derive(Clone, Debug)]
enum ByteEdit {
    Flip(Index, u8),
    Truncate(Index),
    Insert(Index, u8),
    Remove(Index, Index),
}

fn byte_edit() -> impl Strategy<Value = ByteEdit> {
    prop_oneof![
        (any::<Index>(), 1..=255u8).prop_map(|(i, x)| ByteEdit::Flip(i, x)),
        any::<Index>().prop_map(ByteEdit::Truncate),
        (any::<Index>(), prop::sample::select(b"{}[],:\"0123456789-.eE \n#\xff".to_vec()))
            .prop_map(|(i, b)| ByteEdit::Insert(i, b)),
        (any::<Index>(), any::<Index>()).prop_map(|(i, j)| ByteEdit::Remove(i, j)),
    ]
}

fn apply_bytes(text: &[u8], edits: &[ByteEdit]) -> Vec<u8> {
    let mut b = text.to_vec();
    for e in edits {
        if b.is_empty() {
            break;
        }
        match e {
            ByteEdit::Flip(i, x) => {
                let i = i.index(b.len());
                b[i] ^= x;
            }
            ByteEdit::Truncate(i) => b.truncate(i.index(b.len())),
            ByteEdit::Insert(i, x) => b.insert(i.index(b.len() + 1), *x),
            ByteEdit::Remove(i, j) => {
                let i = i.index(b.len());
                let n = j.index(64.min(b.len() - i) + 1);
                b.drain(i..i + n);
            }
        }
    }
    b
}

/// Numbers that break a reader that trusts them.
const NUMBERS: &[&str] = &[
    "0",
    "-1",
    "-129",
    "255",
    "256",
    "65536",
    "4294967295",
    "4294967296",
    "18446744073709551616",
    "-9223372036854775809",
    "1e308",
    "-1e308",
    "1e400",
    "0.5",
    "-0.0",
    "1000000",
];

/// Mutations of the JSON document, each at a node picked among all of its nodes.
#[derive(Clone, Debug)]
enum JsonEdit {
    /// An array entry is repeated.
    Duplicate(Index),
    /// An array entry goes.
    Remove(Index),
    /// A number becomes one of [`NUMBERS`].
    Number(Index, Index),
    /// A value becomes null, a string, `"NaN"`, an empty array or object.
    Retype(Index, u8),
    /// Two entries of an object swap their values.
    Swap(Index, Index, Index),
    /// An object loses a field.
    Drop(Index, Index),
    /// One seat more: the last seat record repeated with the next number.
    ExtraSeat,
}

fn json_edit() -> impl Strategy<Value = JsonEdit> {
    prop_oneof![
        1 => any::<Index>().prop_map(JsonEdit::Duplicate),
        1 => any::<Index>().prop_map(JsonEdit::Remove),
        3 => (any::<Index>(), any::<Index>()).prop_map(|(i, n)| JsonEdit::Number(i, n)),
        1 => (any::<Index>(), 0..5u8).prop_map(|(i, k)| JsonEdit::Retype(i, k)),
        1 => (any::<Index>(), any::<Index>(), any::<Index>()).prop_map(|(i, a, b)| JsonEdit::Swap(i, a, b)),
        1 => (any::<Index>(), any::<Index>()).prop_map(|(i, k)| JsonEdit::Drop(i, k)),
        1 => Just(JsonEdit::ExtraSeat),
    ]
}

/// JSON pointers of every node of `v`, in document order.
fn pointers(v: &Value, at: String, out: &mut Vec<String>) {
    match v {
        Value::Array(a) => {
            for (k, x) in a.iter().enumerate() {
                pointers(x, format!("{at}/{k}"), out);
            }
        }
        Value::Object(o) => {
            for (k, x) in o {
                pointers(x, format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")), out);
            }
        }
        _ => {}
    }
    out.push(at);
}

/// The node `i` picks, among those `keep` accepts.
fn pick<'a>(doc: &'a mut Value, i: &Index, keep: impl Fn(&Value) -> bool) -> Option<&'a mut Value> {
    let mut all = Vec::new();
    pointers(doc, String::new(), &mut all);
    all.retain(|p| doc.pointer(p).is_some_and(&keep));
    let p = all.get(i.index(all.len().max(1)))?.clone();
    doc.pointer_mut(&p)
}

fn apply_json(doc: &mut Value, e: &JsonEdit) {
    match e {
        JsonEdit::Duplicate(i) => {
            if let Some(Value::Array(a)) = pick(doc, i, |v| v.as_array().is_some_and(|a| !a.is_empty())) {
                let k = i.index(a.len());
                a.insert(k, a[k].clone());
            }
        }
        JsonEdit::Remove(i) => {
            if let Some(Value::Array(a)) = pick(doc, i, |v| v.as_array().is_some_and(|a| !a.is_empty())) {
                a.remove(i.index(a.len()));
            }
        }
        JsonEdit::Number(i, n) => {
            if let Some(v) = pick(doc, i, Value::is_number) {
                *v = serde_json::from_str(NUMBERS[n.index(NUMBERS.len())]).unwrap();
            }
        }
        JsonEdit::Retype(i, k) => {
            if let Some(v) = pick(doc, i, |_| true) {
                *v = [json!(null), json!("P00_00"), json!("NaN"), json!([]), json!({})][*k as usize % 5].clone();
            }
        }
        JsonEdit::Swap(i, a, b) => {
            if let Some(Value::Object(o)) = pick(doc, i, |v| v.as_object().is_some_and(|o| o.len() >= 2)) {
                let keys: Vec<String> = o.keys().cloned().collect();
                let (ka, kb) = (&keys[a.index(keys.len())], &keys[b.index(keys.len())]);
                let va = o[ka].clone();
                let vb = std::mem::replace(o.get_mut(kb).unwrap(), va);
                o[ka] = vb;
            }
        }
        JsonEdit::Drop(i, k) => {
            if let Some(Value::Object(o)) = pick(doc, i, |v| v.as_object().is_some_and(|o| !o.is_empty())) {
                let key = o.keys().nth(k.index(o.len())).unwrap().clone();
                o.shift_remove(&key);
            }
        }
        JsonEdit::ExtraSeat => {
            if let Some(Value::Array(seats)) = doc.pointer_mut("/seats") {
                if let Some(mut last) = seats.last().cloned() {
                    last["seat"] = json!(seats.len());
                    seats.push(last);
                }
            }
        }
    }
}

/// Mutations of map file lines (the map format is line-based).
#[derive(Clone, Debug)]
enum LineEdit {
    Duplicate(Index),
    Remove(Index),
    /// A number on a line becomes one of [`NUMBERS`].
    Number(Index, Index, Index),
    Swap(Index, Index),
}

fn line_edit() -> impl Strategy<Value = LineEdit> {
    prop_oneof![
        1 => any::<Index>().prop_map(LineEdit::Duplicate),
        1 => any::<Index>().prop_map(LineEdit::Remove),
        2 => (any::<Index>(), any::<Index>(), any::<Index>()).prop_map(|(l, w, n)| LineEdit::Number(l, w, n)),
        1 => (any::<Index>(), any::<Index>()).prop_map(|(a, b)| LineEdit::Swap(a, b)),
    ]
}

fn apply_lines(text: &str, edits: &[LineEdit]) -> String {
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    for e in edits {
        if lines.is_empty() {
            break;
        }
        let n = lines.len();
        match e {
            LineEdit::Duplicate(i) => {
                let k = i.index(n);
                lines.insert(k, lines[k].clone());
            }
            LineEdit::Remove(i) => {
                lines.remove(i.index(n));
            }
            LineEdit::Number(l, w, x) => {
                let k = l.index(n);
                let mut words: Vec<String> = lines[k].split(' ').map(String::from).collect();
                let m = words.len();
                words[w.index(m)] = NUMBERS[x.index(NUMBERS.len())].to_string();
                lines[k] = words.join(" ");
            }
            LineEdit::Swap(a, b) => lines.swap(a.index(n), b.index(n)),
        }
    }
    lines.join("\n") + "\n"
}

fn cases() -> u32 {
    std::env::var("GBELY_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(48)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn replay_readers_survive_byte_edits(edits in prop::collection::vec(byte_edit(), 1..4)) {
        let bytes = apply_bytes(sample().replay_text.as_bytes(), &edits);
        check_replay_bytes(&bytes, &format!("{edits:?}"))?;
    }

    #[test]
    fn replay_readers_survive_json_edits(edits in prop::collection::vec(json_edit(), 1..4)) {
        let mut doc: Value = serde_json::from_str(&sample().replay_text).unwrap();
        for e in &edits {
            apply_json(&mut doc, e);
        }
        check_replay_bytes(doc.to_string().as_bytes(), &format!("{edits:?}"))?;
    }

    #[test]
    fn map_file_reader_survives_edits(
        lines in prop::collection::vec(line_edit(), 0..3),
        bytes in prop::collection::vec(byte_edit(), 0..3),
    ) {
        let text = apply_lines(&sample().map_text, &lines);
        let text = String::from_utf8_lossy(&apply_bytes(text.as_bytes(), &bytes)).into_owned();
        check_map_text(&text, &format!("{lines:?} {bytes:?}"))?;
    }
}

// ---- Explicit cases ----

/// The sample replay's text with `turns` replaced by `turns` copies of a minimal turn and
/// `rounds` set.
fn with_turns(rounds: u64, turns: usize) -> Vec<u8> {
    let mut doc: Value = serde_json::from_str(&sample().replay_text).unwrap();
    doc["rounds"] = json!(rounds);
    doc["turns"] = json!(["@@"]);
    let text = doc.to_string();
    let (head, tail) = text.split_once("\"@@\"").unwrap();
    let mut out = Vec::with_capacity(turns * 80);
    out.extend_from_slice(head.as_bytes());
    for r in 0..turns {
        if r > 0 {
            out.push(b',');
        }
        write!(out, r#"{{"round":{r},"answers":["out","out"],"cells":[0,0],"units":[0,0],"changes":[]}}"#).unwrap();
    }
    out.extend_from_slice(tail.as_bytes());
    out
}

/// Regression: a 2.8 MB gzip file claiming a million turns made `replay stats` and `show` ask for
/// 60 GB (a frame per turn) after parsing all of it into 400 MB.
#[test]
fn a_small_file_claiming_a_million_turns_is_refused_quickly() {
    let path = scratch().join("million.json.gz");
    for rounds in [1_000_000u64, 100_000] {
        std::fs::write(&path, gzip(&with_turns(rounds, 1_000_000))).unwrap();
        let start = Instant::now();
        let e = read_replay(&path).unwrap_err().to_string();
        assert!(e.contains("100000 turns"), "{e}");
        assert!(resident_peak() < RESIDENT_CEILING);
        assert!(start.elapsed() < Duration::from_secs(20), "{:?}", start.elapsed());
    }
    // Turns within the rounds have the structure of a replay; re-simulation finds they are not
    // what the rules make of the answers.
    let small = Replay::from_json(std::str::from_utf8(&with_turns(3, 3)).unwrap()).unwrap();
    assert!(verify(&small).is_err());
}

/// A map file or a replay's map record claiming 10000×10000 cells is refused before anything is
/// sized by it; 1000×1000 with no rows costs the tables of one such map, no more.
#[test]
fn a_huge_map_is_refused_quickly() {
    for text in [
        "gbely-map 1\nname x\nsize 10000 10000\nseat army P00_00\nterrain\n",
        "gbely-map 1\nname x\nsize 1000 1000\nseat army P00_00\nseat army P00_01\nterrain\n...\n",
    ] {
        let start = Instant::now();
        assert!(parse_map_file(text).is_err());
        assert!(resident_peak() < RESIDENT_CEILING);
        assert!(start.elapsed() < Duration::from_secs(2));
    }
    let mut doc: Value = serde_json::from_str(&sample().replay_text).unwrap();
    let file = doc["map"]["file"].as_str().unwrap().replace("size 14 14", "size 10000 10000");
    doc["map"]["file"] = json!(file);
    doc["map"]["width"] = json!(10000);
    doc["map"]["height"] = json!(10000);
    let e = Replay::from_json(&doc.to_string()).unwrap_err().to_string();
    assert!(e.contains("bad size `10000 10000`"), "{e}");
}

/// A gzip bomb of junk is refused at its first bad byte, not inflated to the cap: 1 GiB of zeros
/// compressed into one megabyte, as gzip members one after another.
#[test]
fn a_gzip_bomb_is_not_inflated_whole() {
    let member = gzip(&vec![0u8; 16 << 20]);
    let path = scratch().join("bomb.json.gz");
    let mut file = std::fs::File::create(&path).unwrap();
    file.write_all(&gzip(b"{\"format\": \"gbely-replay\", \"version\": 1, ")).unwrap();
    for _ in 0..=(MAX_REPLAY_BYTES >> 24) {
        file.write_all(&member).unwrap();
    }
    drop(file);
    let start = Instant::now();
    let e = read_replay(&path).unwrap_err().to_string();
    assert!(e.contains("not a replay"), "{e}");
    assert!(resident_peak() < RESIDENT_CEILING);
    assert!(start.elapsed() < Duration::from_secs(5), "{:?}", start.elapsed());
}

/// The sample replay's text with the answer of seat 0 in `turns` `turns` (one that sent
/// commands) replaced by `answer`, a JSON text written into the file as it is.
fn with_answers(answer: &str, turns: &[usize]) -> Vec<u8> {
    let mut doc: Value = serde_json::from_str(&sample().replay_text).unwrap();
    for &t in turns {
        doc["turns"][t]["answers"][0] = json!(format!("@@{t}@@"));
    }
    let mut text = doc.to_string();
    for &t in turns {
        text = text.replace(&format!("\"@@{t}@@\""), answer);
    }
    text.into_bytes()
}

/// Regression (issue 22, item 6): a 293 KB replay whose answer held 100 M `raw` items made
/// `replay stats` and `verify` abort after asking for 4.8 GB. Every array of an answer is
/// bounded while it is parsed, as the per-seat and per-cell arrays are, and the values kept as
/// received are bounded by their text, per answer and per replay: each file is refused at once,
/// in one line saying which bound it passed.
#[test]
fn a_replay_with_a_huge_answer_is_refused_quickly() {
    let zeros = |n: usize| {
        let mut s = String::with_capacity(2 * n);
        for k in 0..n {
            s.push_str(if k == 0 { "0" } else { ",0" });
        }
        s
    };
    let many = zeros(5_000_000); // 5 M items: more than an answer may hold (2^20)
    let string = format!("\"{}\"", "a".repeat(6 << 20)); // one item of 6 MiB
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (
            with_answers(&format!(r#"{{"compact":{{"k":"r","d":[],"n":[],"raw":[{many}]}}}}"#), &[1]),
            "more than 1048576 items",
        ),
        (with_answers(&format!(r#"{{"commands":[{many}]}}"#), &[1]), "more than 1048576 items"),
        (
            with_answers(&format!(r#"{{"compact":{{"k":"r","d":[],"n":[],"raw":[[{many}]]}}}}"#), &[1]),
            "more than 8388608 bytes of JSON",
        ),
        (
            with_answers(&format!(r#"{{"compact":{{"k":"r","d":[],"n":[],"raw":[{string},{string}]}}}}"#), &[1]),
            "more than 8388608 bytes of JSON",
        ),
        (
            with_answers(&format!(r#"{{"compact":{{"k":"r","d":[],"n":[],"raw":[{string}]}}}}"#), &[1, 2, 3]),
            "more than 16777216 bytes of JSON in all",
        ),
        (
            with_answers(&format!(r#"{{"compact":{{"k":"","d":[{many}],"n":[]}}}}"#), &[1]),
            "more than 2097152 entries where there are at most 2097152 cells of an answer's commands",
        ),
        (
            with_answers(&format!(r#"{{"compact":{{"k":"","d":[],"n":[{many}]}}}}"#), &[1]),
            "more than 1048576 entries where there are at most 1048576 items of an answer",
        ),
    ];
    let path = scratch().join("huge-answer.json.gz");
    for (text, want) in cases {
        std::fs::write(&path, gzip(&text)).unwrap();
        let start = Instant::now();
        let e = read_replay(&path).unwrap_err().to_string();
        assert!(e.contains(want), "`{e}` should say `{want}`");
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(resident_peak() < RESIDENT_CEILING);
        assert!(start.elapsed() < Duration::from_secs(5), "{want}: {:?}", start.elapsed());
        let e = Replay::from_json(std::str::from_utf8(&text).unwrap()).unwrap_err().to_string();
        assert!(e.contains(want), "`{e}` should say `{want}`");
    }
    // Within the bounds, an answer of the same shape reads.
    let text = with_answers(r#"{"compact":{"k":"r","d":[],"n":[],"raw":[[0,0,0]]}}"#, &[1]);
    assert!(Replay::from_json(std::str::from_utf8(&text).unwrap()).is_ok());
}

/// Every structural fault is refused when the file is read, saying what and where.
#[test]
fn each_structural_fault_is_named_where_it_is() {
    let s = sample();
    let cells = s.map.len();
    // A turn whose seat 0 sent commands, to edit.
    let compact =
        |a: &gbely_world::replay::Answer| matches!(a, gbely_world::replay::Answer::Compact(c) if !c.cells.is_empty());
    let t = s.replay.turns.iter().position(|t| compact(&t.answers[0])).unwrap();
    fn edit_compact(r: &mut Replay, t: usize, f: impl Fn(&mut gbely_world::replay::CompactCommands)) {
        if let gbely_world::replay::Answer::Compact(c) = &mut r.turns[t].answers[0] {
            f(c)
        }
    }
    type Edit = Box<dyn Fn(&mut Replay)>;
    let cases: Vec<(Edit, &str)> = vec![
        (Box::new(|r| r.map.fingerprint = "0123456789abcdef".into()), "fingerprint is 0123456789abcdef"),
        (Box::new(|r| r.map.width = 15), "map record says 15×14"),
        (
            Box::new(|r| {
                let extra = r.seats[1].clone();
                r.seats.push(gbely_world::replay::SeatRecord { seat: 2, ..extra });
            }),
            "lists 3 seats, its map has 2",
        ),
        (Box::new(|r| r.seats[1].seat = 0), "seats[1] is numbered seat 0"),
        (Box::new(|r| r.seats[0].base = "P00_00".into()), "seat 0: its base is `P00_00`"),
        (Box::new(|r| r.seats[1].role = gbely_rules::SeatRole::Army), "seat 1: its role is `army`"),
        (Box::new(|r| r.rounds = 0), "configured for 0 rounds"),
        (Box::new(|r| r.rounds = 100_001), "configured for 100001 rounds"),
        (Box::new(|r| r.rounds = 5), "has 8 turns for 5 rounds"),
        (Box::new(|r| r.turns[3].round = 4), "turn 3 is numbered round 4"),
        (
            Box::new(|r| {
                r.turns[2].answers.pop();
            }),
            "turn 2: 1 answers for 2 seats",
        ),
        (Box::new(|r| r.turns[6].cells.push(0)), "turn 6: 3 cell counts for 2 seats"),
        (Box::new(|r| r.turns[7].units.clear()), "turn 7: 0 unit totals for 2 seats"),
        (Box::new(move |r| edit_compact(r, t, |c| c.cells[0] = cells as u32)), "cell #196 is not on the map"),
        (Box::new(move |r| edit_compact(r, t, |c| c.kinds.push('M'))), "compact commands: kinds"),
        (Box::new(move |r| edit_compact(r, t, |c| c.kinds.push('X'))), "unknown command kind `X`"),
        (Box::new(move |r| edit_compact(r, t, |c| c.amounts[0] = -1.0)), "amount -1 is not a positive number"),
        (
            Box::new(move |r| {
                edit_compact(r, t, |c| {
                    c.cut =
                        Some(gbely_world::replay::Cut { at: c.kinds.len() as u32 + 1, left_out: Default::default() })
                })
            }),
            "the cut after item",
        ),
        (
            Box::new(move |r| r.turns[t].answers[0] = gbely_world::replay::Answer::Regen),
            "seat 0's commands are to be regenerated, but the seat names no built-in agent",
        ),
        (Box::new(|r| r.version = 1), "a version 1 replay cannot hold compact commands"),
        (Box::new(|r| r.version = 2), "a version 2 replay cannot hold cells as steps (`d`"),
        (
            Box::new(move |r| edit_compact(r, t, |c| c.form = gbely_world::replay::CellsForm::Indices)),
            "a version 4 replay cannot hold cells as indices (`c`",
        ),
        (Box::new(|r| r.turns[2].answer_ms = vec![Some(5); 3]), "turn 2: 3 answer times for 2 seats"),
        (
            Box::new(|r| {
                r.version = 3;
                r.turns[1].answer_ms = vec![Some(5), None];
            }),
            "turn 1: a version 3 replay cannot hold answer times",
        ),
        (
            Box::new(|r| {
                r.version = 3;
                r.fork = Some(gbely_world::replay::ForkRecord { source: "ab".repeat(32), round: 4 });
            }),
            "a version 3 replay cannot say where it was forked from",
        ),
        (
            Box::new(|r| r.fork = Some(gbely_world::replay::ForkRecord { source: "ab".repeat(32), round: r.rounds })),
            "it says the match was forked at round",
        ),
        (
            Box::new(|r| {
                let t = r.turns.iter_mut().find(|t| !t.discarded.is_empty()).unwrap();
                t.discarded[0].seat = 7;
            }),
            "discarded[0] names seat 7",
        ),
        (Box::new(|r| r.final_state.units.push(0.0)), "final `units` has 197 cells, the map 196"),
        (Box::new(|r| r.final_state.owner[20] = 5), "final `owner` gives cell P01_06 to seat 5"),
        (Box::new(|r| r.result.sides.truncate(1)), "the result has 1 sides for 2 seats"),
        (Box::new(|r| r.result.sides.swap(0, 1)), "result sides[0] is numbered seat 1"),
    ];
    for (edit, want) in cases {
        let mut r = s.replay.clone();
        edit(&mut r);
        let e = Replay::from_json(&r.to_json()).unwrap_err().to_string();
        assert!(e.contains(want), "`{e}` should say `{want}`");
        assert_eq!(e.lines().count(), 1, "{e}");
        // The readers refuse a replay built in code the same way.
        assert!(verify(&r).unwrap_err().to_string().contains(want));
        assert!(viewer_html(&r).unwrap_err().contains(want));
    }
    // Version 3's steps (`d`) that leave the cells, in the file's text: the turn, the seat, the step.
    let t1 = s.replay.turns[1].answers[0].clone();
    assert!(matches!(t1, gbely_world::replay::Answer::Compact(_)), "{t1:?}");
    for (answer, want) in [
        (
            r#"{"compact":{"k":"F","d":[-1],"n":[1]}}"#,
            "turn 1: seat 0's compact commands: d[0] = -1 steps from cell #0 to -1, which is no cell",
        ),
        (
            r#"{"compact":{"k":"MF","d":[5,-1,-5],"n":[1,1]}}"#,
            "turn 1: seat 0's compact commands: d[2] = -5 steps from cell #4 to -1, which is no cell",
        ),
        (
            r#"{"compact":{"k":"F","d":[196],"n":[1]}}"#,
            "turn 1: seat 0's compact commands: cell #196 is not on the map (196 cells): the sum of d[0..=0]",
        ),
        (r#"{"compact":{"k":"F","d":[1],"c":[1],"n":[1]}}"#, "turn 1: seat 0's compact commands: it has both"),
        (r#"{"compact":{"k":"F","n":[1]}}"#, "turn 1: seat 0's compact commands: it has no cells"),
        (r#"{"compact":{"k":"F","d":[1.5],"n":[1]}}"#, "expected i64"),
        (r#"{"compact":{"k":"F","d":[1],"n":[0]}}"#, "amount 0 is not a positive number: n[0]"),
    ] {
        let text = with_answers(answer, &[1]);
        let e = Replay::from_json(std::str::from_utf8(&text).unwrap()).unwrap_err().to_string();
        assert!(e.contains(want), "`{e}` should say `{want}`");
        assert_eq!(e.lines().count(), 1, "{e}");
    }
    // A match stopped by Ctrl-C: fewer turns than rounds, and a valid file.
    let mut interrupted = s.replay.clone();
    interrupted.rounds = 150;
    interrupted.result.ended_by = gbely_rules::EndReason::Interrupted;
    assert!(Replay::from_json(&interrupted.to_json()).is_ok());
}
