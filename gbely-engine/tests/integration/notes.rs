//! Agent notes (issue 24): what an agent file prints while deciding and its answer's `debug` key
//! reach the replay, `gbely replay show`, within bounds and at little cost in size.

use std::path::Path;
use std::process::Command;

fn gbely(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_gbely")).args(args).current_dir(dir).output().expect("gbely runs")
}

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("gbely-notes-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The template, printing one line a round when `chatty`.
fn template(chatty: bool) -> String {
    let source = include_str!("../../../agents/my_agent.py").replace("def decide(", "def _decide(");
    let print = if chatty { "    print('round %d: %d cells' % (stav['kolo'], len(stav['moje_pola'])))\n" } else { "" };
    format!("{source}\n\ndef decide(stav):\n{print}    return _decide(stav)\n")
}

#[test]
fn printed_lines_and_cell_notes_reach_the_replay_and_replay_show() {
    let dir = scratch("show");
    std::fs::write(
        dir.join("agent.py"),
        "def decide(stav):\n    print('thinking about round', stav['kolo'])\n    \
         return {'prikazy': [], 'debug': {'text': 'plan: wait', 'cells': {stav['moja_zakladna']: 'home', 'P99_99': 'off the map'}}}\n",
    )
    .unwrap();
    let out = gbely(&dir, &["play", "agent.py", "--rounds", "6", "--replay", "r.json", "--time-limit", "off"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let replay = gbely_engine::replays::read_replay(&dir.join("r.json")).unwrap();
    let base = replay.map.width * 57 + 2; // P57_02, seat 0's base on the reference map
    for (r, t) in replay.turns.iter().enumerate() {
        let want = gbely_world::replay::SeatNotes {
            seat: 0,
            text: format!("plan: wait\nthinking about round {r}"),
            cells: vec![(base, "home".into())],
            draw: Vec::new(),
        };
        assert_eq!(t.notes, [want], "round {r}: the cell off the map is left out");
    }
    let show = gbely(&dir, &["replay", "show", "r.json", "--round", "3", "--seat", "0", "--color", "never"]);
    let text = String::from_utf8_lossy(&show.stdout);
    assert!(show.status.success());
    assert!(
        text.contains(
            "# notes of seat 0 (agent.py) in round 3\n  plan: wait\n  thinking about round 3\n  P57_02: home\n"
        ),
        "{text}"
    );
    let verify = gbely(&dir, &["replay", "verify", "r.json"]);
    assert!(verify.status.success(), "{}", String::from_utf8_lossy(&verify.stdout));
    // A file whose notes name a seat or a cell that does not exist is refused, saying where.
    let file = std::fs::read_to_string(dir.join("r.json")).unwrap();
    for (from, to, why) in [
        (r#""notes":[{"seat":0"#, r#""notes":[{"seat":7"#, "turn 0: notes of seat 7, which does not exist (2 seats)"),
        (
            &*format!("[[{base},"),
            "[[99999,",
            "turn 0: seat 0's notes name cell #99999, which is not on the 3600-cell map",
        ),
    ] {
        std::fs::write(dir.join("bad.json"), file.replacen(from, to, 1)).unwrap();
        let err = gbely_engine::replays::read_replay(&dir.join("bad.json")).unwrap_err().to_string();
        assert!(err.contains(why), "{err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn notes_of_one_line_a_round_cost_little_in_size() {
    let dir = scratch("size");
    let mut sizes = Vec::new();
    for chatty in [false, true] {
        let file = format!("agent-{chatty}.py");
        std::fs::write(dir.join(&file), template(chatty)).unwrap();
        let replay = format!("r-{chatty}.json.gz");
        let out = gbely(&dir, &["play", &file, "--replay", &replay, "--time-limit", "off"]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        sizes.push(std::fs::metadata(dir.join(&replay)).unwrap().len() as f64);
    }
    let replay = gbely_engine::replays::read_replay(&dir.join("r-true.json.gz")).unwrap();
    assert_eq!(replay.turns.iter().filter(|t| !t.notes.is_empty()).count(), 150, "a line every round");
    assert!(sizes[1] <= 1.2 * sizes[0], "with notes {} bytes, without {}", sizes[1], sizes[0]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A program that writes its own lines on stdout (a Rust agent's `println!`) has them read as its
/// answers: the violation says how to log instead.
#[test]
fn a_program_printing_on_stdout_is_told_to_log_on_stderr() {
    let dir = scratch("stdout");
    let agent = "cmd:sh -c 'while read line; do echo thinking hard; done'";
    let out = gbely(&dir, &["play", agent, "--rounds", "1", "--json", "--no-replay"]);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("the --json document");
    let detail = doc["sides"][0]["details"]["violations"][0]["detail"].as_str().unwrap_or_default();
    assert!(detail.starts_with("the answer is not JSON"), "{doc}");
    assert!(
        detail.ends_with("(stdout is the protocol: log to stderr, e.g. eprintln! in Rust, not println!)"),
        "{detail}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
