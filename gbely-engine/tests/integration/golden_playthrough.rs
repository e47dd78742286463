//! Golden playthroughs: seeded matches written out as text and compared on every run, and the
//! replay of the same match written twice, byte for byte.
//!
//! After a deliberate change of the rules, the Council or the example agents, rewrite the files
//! with `GBELY_BLESS=1 cargo test -p gbely-engine --test integration golden_playthrough::` and
//! review the diff.

use std::fmt::Write;
use std::sync::Arc;

use agents::{Expander, Template};
use gbely_council::Council;
use gbely_engine::game::{play, Observer, PlayOptions};
use gbely_engine::runner::player::{DecidePlayer, Player};
use gbely_engine::session::MatchRecord;
use gbely_engine::sim::{Match, RoundReport};
use gbely_rules::Decide;

/// One line per round: cells and units per seat (units as exact bit patterns would be unreadable,
/// so to 1e-9), captures, discards; then the result.
#[derive(Default)]
struct Transcript(String);

impl Observer for Transcript {
    fn round_done(&mut self, m: &Match, report: &RoundReport) {
        let g = m.map().grid();
        let caps: Vec<String> =
            report.captures.iter().take(6).map(|c| format!("{}>{}", c.seat, g.id(c.cell))).collect();
        let _ = writeln!(
            self.0,
            "r{:03} cells {:>4} {:>4} units {:>16.9} {:>16.9} captures {:>3} [{}{}] discarded {}",
            report.round,
            m.cell_count(0),
            m.cell_count(1),
            m.unit_total(0),
            m.unit_total(1),
            report.captures.len(),
            caps.join(" "),
            if report.captures.len() > 6 { " …" } else { "" },
            report.discarded.len(),
        );
    }
}

fn run(seed: &str, size: u32, a: impl Decide, b: impl Decide) -> (String, MatchRecord) {
    let map = Arc::new(gbely_world::generate_duel(seed, size, size).unwrap());
    let mut pa = DecidePlayer::new("a", a);
    let mut pb = DecidePlayer::new("b", b);
    let mut players: [&mut dyn Player; 2] = [&mut pa, &mut pb];
    let mut t = Transcript::default();
    let _ = writeln!(t.0, "map {} {}x{} fingerprint {}", map.name(), size, size, map.fingerprint());
    let rec = play(map, &mut players, PlayOptions { record: true, ..PlayOptions::default() }, &mut t);
    for o in &rec.outcome {
        let _ = writeln!(t.0, "seat {} cells {} score {:?} tiebreak {:?}", o.seat, o.cells, o.score, o.tiebreak_round);
    }
    let _ = writeln!(t.0, "ended {:?} after round {}", rec.end_reason, rec.last_round);
    (t.0, rec)
}

fn check(name: &str, text: &str) {
    check_file(&format!("{name}.txt"), text)
}

fn check_file(name: &str, text: &str) {
    let path = format!("{}/tests/golden/{name}", env!("CARGO_MANIFEST_DIR"));
    if std::env::var_os("GBELY_BLESS").is_some() {
        std::fs::write(&path, text).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e} (GBELY_BLESS=1 writes it)"));
    if want != text {
        let first = want.lines().zip(text.lines()).position(|(a, b)| a != b).unwrap_or(0);
        panic!(
            "{name}: the playthrough differs from {path} at line {}:\n  want: {}\n  got:  {}",
            first + 1,
            want.lines().nth(first).unwrap_or(""),
            text.lines().nth(first).unwrap_or("")
        );
    }
}

#[test]
fn expander_against_the_council_on_seed_golden() {
    let (text, rec) = run("golden", 30, Expander::default(), Council::new());
    check("expander-vs-council-golden-30", &text);
    // The same match again gives a byte-identical replay.
    let (_, again) = run("golden", 30, Expander::default(), Council::new());
    assert_eq!(rec.replay.unwrap().to_json(), again.replay.unwrap().to_json());
}

#[test]
fn template_against_the_council_on_seed_golden() {
    let (text, _) = run("golden", 30, Template::default(), Council::new());
    check("template-vs-council-golden-30", &text);
}

/// The replay file itself (format version 4) of a seeded match, pinned byte for byte: the
/// expander in compact commands (cells as steps), the built-in Council regenerated. In-process
/// agents are not timed, so the file holds no answer times and is the version 3 file's text but
/// for its version: version 4 only adds fields.
#[test]
fn replay_version_4_golden() {
    let replay = golden_v2_match();
    assert_eq!(replay.version, 4);
    let mut text = replay.to_json();
    text.push('\n');
    check_file("replay-v4-golden-20.json", &text);
    assert!(gbely_engine::replays::verify(&replay).is_ok());
    let v3 = golden("replay-v3-golden-20.json");
    assert_eq!(text, v3.replacen("\"version\":3,", "\"version\":4,", 1));
}

/// The version 3 file, written by the engine before version 4, still reads, verifies and writes
/// back byte for byte.
#[test]
fn replay_version_3_golden_still_reads_verifies_and_writes_back() {
    let text = golden("replay-v3-golden-20.json");
    let v3 = gbely_world::Replay::from_json(&text).unwrap();
    assert_eq!(v3.version, 3);
    assert!(gbely_engine::replays::verify(&v3).is_ok());
    assert_eq!(v3.to_json() + "\n", text);
}

/// The match of `replay-v2-golden-20.json` (pinned when version 2 was written) and of
/// `replay-v3-golden-20.json`.
fn golden_v2_match() -> gbely_world::Replay {
    let map = Arc::new(gbely_world::generate_duel("golden-v2", 16, 16).unwrap());
    let mut a = DecidePlayer::new("expander", Expander::default());
    let mut b = DecidePlayer::council("council");
    let mut players: [&mut dyn Player; 2] = [&mut a, &mut b];
    let opts = PlayOptions { config: gbely_engine::sim::MatchConfig { rounds: 20 }, record: true };
    play(map, &mut players, opts, &mut ()).replay.unwrap()
}

fn golden(name: &str) -> String {
    let path = format!("{}/tests/golden/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The version 2 file, written by the engine before version 3, still reads, verifies and writes
/// back byte for byte; and it holds the same match as the version 3 file: the same commands, the
/// cells and the amounts' bits the same, only written in another form.
#[test]
fn replay_version_2_golden_still_reads_and_is_the_version_3_match() {
    use gbely_world::replay::{Answer, CellsForm};
    let text = golden("replay-v2-golden-20.json");
    let v2 = gbely_world::Replay::from_json(&text).unwrap();
    assert_eq!(v2.version, 2);
    assert!(gbely_engine::replays::verify(&v2).is_ok());
    assert_eq!(v2.to_json() + "\n", text);
    let v3 = gbely_world::Replay::from_json(&golden("replay-v3-golden-20.json")).unwrap();
    assert_eq!(v3.version, 3);
    let mut commands = 0;
    for (a, b) in v2.turns.iter().zip(&v3.turns) {
        for (x, y) in a.answers.iter().zip(&b.answers) {
            match (x, y) {
                (Answer::Compact(x), Answer::Compact(y)) => {
                    assert_eq!((x.form, y.form), (CellsForm::Indices, CellsForm::Steps));
                    assert_eq!((&x.kinds, &x.cells, &x.raw, &x.cut), (&y.kinds, &y.cells, &y.raw, &y.cut));
                    let bits = |c: &[f64]| c.iter().map(|a| a.to_bits()).collect::<Vec<_>>();
                    assert_eq!(bits(&x.amounts), bits(&y.amounts));
                    commands += x.kinds.len();
                }
                (x, y) => assert_eq!(x, y),
            }
        }
        assert_eq!((&a.discarded, &a.cells, &a.units, &a.notes), (&b.discarded, &b.cells, &b.units, &b.notes));
    }
    assert!(commands > 500, "{commands}");
    assert_eq!((v2.turns.len(), &v2.final_state, &v2.result), (v3.turns.len(), &v3.final_state, &v3.result));
}
