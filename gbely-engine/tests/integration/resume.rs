//! A match continued from a replay cut short (`MatchPlan::resume`: a final after a crash): the
//! rounds the replay holds are played again from its answers, the agents take over from the
//! first round it lacks, and with agents that keep no memory between rounds the continued
//! match's replay is byte for byte the uninterrupted one's — its violations included, counted
//! once, and none for the restart.

use gbely_engine::app::runs::agent_spec::AgentSpec;
use std::path::Path;
use std::sync::Arc;

use gbely_engine::app::runs::RunError;
use gbely_engine::app::service::{run, MatchPlan, Played, Recording, Seat};
use gbely_engine::replays::{read_replay, read_replay_or_cut};

use crate::common::scratch;

/// The example expander, keeping no memory between rounds, answering nonsense in rounds 3 and
/// 20 (two violations: one before the cut, one after).
fn agent(dir: &Path) -> String {
    let src = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../agents/expander.py")).unwrap();
    let nonsense = "def decide(stav):\n    if stav[\"kolo\"] in (3, 20):\n        return \"nonsense\"\n";
    assert!(src.contains("def decide(stav):\n"));
    let path = dir.join("memoryless.py");
    std::fs::write(&path, src.replacen("def decide(stav):\n", nonsense, 1)).unwrap();
    path.display().to_string()
}

fn plan(spec: &str, dir: &Path, replay: &str) -> MatchPlan {
    let mut plan = MatchPlan::new(
        Arc::new(gbely_world::reference_map()),
        vec![Seat::spec(spec.parse().unwrap(), "memoryless"), Seat::spec(AgentSpec::COUNCIL, "council")],
    );
    plan.rounds = 30;
    plan.python = "python3".into();
    plan.run_dir = Some(dir.join(replay.replace('.', "-")));
    plan.recording = Recording::File(dir.join(replay));
    plan
}

fn play(plan: MatchPlan) -> Played {
    run(plan, &mut ()).unwrap()
}

#[test]
fn a_match_continued_from_its_cut_replay_is_the_uninterrupted_one_byte_for_byte() {
    let dir = scratch("continued");
    let spec = agent(&dir);
    let whole = play(plan(&spec, &dir, "whole.json"));
    let bytes = std::fs::read(dir.join("whole.json")).unwrap();
    assert_eq!(whole.record.violations[0].len(), 2, "{:?}", whole.record.violations[0]);

    // What a kill -9 at about round 12 leaves: the file cut mid-way, read up to its last round.
    std::fs::write(dir.join("cut.json"), &bytes[..bytes.len() * 2 / 5]).unwrap();
    let cut = read_replay_or_cut(&dir.join("cut.json")).unwrap();
    assert!(cut.cut_short);
    let kept = cut.replay.turns.len();
    assert!((5..25).contains(&kept), "{kept} rounds kept");

    let mut resumed = plan(&spec, &dir, "resumed.json");
    resumed.resume = Some(Arc::new(cut.replay));
    let resumed = play(resumed);
    // Byte for byte but for the answer times, which are measured: the rounds replayed keep the
    // original's times, the rounds played again have times of their own.
    let (mut a, mut b) =
        (read_replay(&dir.join("whole.json")).unwrap(), read_replay(&dir.join("resumed.json")).unwrap());
    for (k, (x, y)) in a.turns.iter().zip(&b.turns).enumerate() {
        assert!(x.answer_ms[0].is_some() && x.answer_ms[1].is_none(), "round {k}: {:?}", x.answer_ms);
        assert!(y.answer_ms[0].is_some() && y.answer_ms[1].is_none(), "round {k}: {:?}", y.answer_ms);
        if k < kept {
            assert_eq!(x.answer_ms, y.answer_ms, "round {k} was replayed: its times are the original's");
        }
    }
    assert_eq!(without_times(&mut a), bytes_without_times(&bytes));
    assert!(
        without_times(&mut b) == without_times(&mut a),
        "the continued match's replay differs from the uninterrupted one's"
    );
    // The agent was asked only from the first round the cut replay lacked; its violations are
    // the original's, the restart counting none.
    let stats = resumed.record.agents[0].expect("an agent process");
    assert_eq!(stats.answered_rounds as usize, 30 - kept);
    assert_eq!(resumed.record.violations[0], whole.record.violations[0]);
    assert_eq!(resumed.record.outcome[0].score, whole.record.outcome[0].score);
    assert_eq!(resumed.record.outcome[0].tiebreak_round, whole.record.outcome[0].tiebreak_round);
    read_replay(&dir.join("resumed.json")).unwrap();
}

#[test]
fn a_replay_of_another_map_or_length_is_refused_before_anything_runs() {
    let dir = scratch("refused");
    let spec = agent(&dir);
    let mut short = plan(&spec, &dir, "short.json");
    short.rounds = 3;
    play(short);
    let replay = Arc::new(read_replay(&dir.join("short.json")).unwrap());
    let mut other_length = plan(&spec, &dir, "x.json");
    other_length.resume = Some(Arc::clone(&replay));
    assert!(matches!(run(other_length, &mut ()), Err(RunError::Resume(why)) if why.contains("3 rounds")));
    let mut other_map = plan(&spec, &dir, "y.json");
    other_map.rounds = 3;
    other_map.map = Arc::new(gbely_world::generate_duel("other", 60, 60).unwrap());
    other_map.resume = Some(replay);
    assert!(matches!(run(other_map, &mut ()), Err(RunError::Resume(why)) if why.contains("map")));
}

/// A replay's JSON without its answer times (the only part of a replay that is measured, not
/// played: `gbely replay verify` leaves them out too).
fn without_times(replay: &mut gbely_world::Replay) -> String {
    for t in &mut replay.turns {
        t.answer_ms.clear();
    }
    replay.to_json()
}

/// [`without_times`] of a file's bytes, also checking that the file is the replay's own JSON.
fn bytes_without_times(bytes: &[u8]) -> String {
    let text = std::str::from_utf8(bytes).unwrap();
    let mut replay = gbely_world::Replay::from_json(text).unwrap();
    assert_eq!(replay.to_json(), text.trim_end(), "a file gbely wrote is its replay's JSON");
    without_times(&mut replay)
}
