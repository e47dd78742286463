//! Conformance of the stepwise [`Session`] (as OpenSpiel checks every game): random legal and
//! illegal play, random violations, on duel and final maps, with the invariants of the rules
//! checked after every step, and the recorded replay re-simulating to the same state.
//!
//! Expected values come from the rules (SPEC §3 production table, §4 order, §8 violations), not
//! from the engine: production is recomputed here from the terrain and the bases.

use std::sync::Arc;

use gbely_engine::replays::{recorded_answer, resimulate, verify};
use gbely_engine::runner::player::PlayerAnswer;
use gbely_engine::session::Session;
use gbely_engine::sim::{Match, MatchConfig, NEUTRAL};
use gbely_rules::ViolationKind;
use gbely_rules::{Cell, Terrain};
use gbely_world::{generate_final, FinalConfig, Map, SeatRole};
use proptest::prelude::*;
use serde_json::{json, Value};

/// SPEC §3: production per owned cell and round, and the base bonus.
fn production(t: Terrain) -> f64 {
    match t {
        Terrain::Meadow => 3.0,
        Terrain::Hill => 2.0,
        Terrain::River => 1.0,
    }
}
const BASE_BONUS: f64 = 5.0;

/// A small deterministic generator (the test's own; SplitMix64).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// A random answer for a seat: mostly commands on its own cells and their neighbours (many
/// valid), some malformed, sometimes a violation or nothing at all.
fn random_answer(rng: &mut Rng, obs: &gbely_rules::Observation, map: &Map) -> Option<PlayerAnswer> {
    let g = map.grid();
    match rng.below(20) {
        0 => return Some(PlayerAnswer::Violation { kind: ViolationKind::Timeout, detail: "test".into() }),
        1 => return None,
        _ => {}
    }
    let mut list = Vec::new();
    for _ in 0..rng.below(12) {
        if obs.own.is_empty() {
            break;
        }
        let own = &obs.own[rng.below(obs.own.len())];
        let from = g.id(own.cell);
        let nbrs: &[Cell] = own.neighbours.as_slice();
        let to = nbrs.get(rng.below(nbrs.len())).map_or_else(|| "P99_99".to_string(), |c| g.id(*c));
        let amount = match rng.below(6) {
            0 => json!(-1),
            1 => json!(0),
            2 => json!(own.units * 2.0),
            3 => json!("lots"),
            _ => json!((rng.below(200) as f64) / 10.0 + 0.1),
        };
        list.push(match rng.below(7) {
            0 | 1 => json!({"typ": "MOVE", "z": from, "na": to, "pocet": amount}),
            2..=4 => json!({"typ": "ATTACK", "z": from, "na": to, "pocet": amount}),
            5 => json!({"typ": "FORTIFY", "pole": from, "investicia": amount}),
            _ => json!({"typ": "JUMP", "z": from}),
        });
    }
    Some(PlayerAnswer::Raw(list))
}

/// The state as bits, for comparing a session with its re-simulation.
fn state_hash(m: &Match) -> Vec<(u8, u64, u64)> {
    (0..m.owners().len())
        .map(|i| (m.owners()[i], m.all_units()[i].to_bits(), m.all_fortifications()[i].to_bits()))
        .collect()
}

fn total(m: &Match) -> f64 {
    m.all_units().iter().sum::<f64>() + m.all_fortifications().iter().sum::<f64>()
}

/// Plays `rounds` rounds of random play through a session and checks every invariant.
fn conform(map: Arc<Map>, rounds: u32, seed: u64) -> Result<(), TestCaseError> {
    let seats = map.seats().len();
    let g = map.grid().clone();
    let mut rng = Rng(seed);
    let names = (0..seats).map(|s| format!("seat {s}")).collect();
    let mut session = Session::new(map.clone(), MatchConfig { rounds }, names);
    session.record();
    let mut violations = vec![0u32; seats];
    while !session.is_over() {
        let before = session.state().clone();
        let mut answers = Vec::new();
        for s in 0..seats as u8 {
            if session.is_active(s) {
                let obs = session.observe(s);
                answers.push((s, random_answer(&mut rng, &obs, &map)));
            }
        }
        // Production (SPEC §4 step 1), cell by cell, the two additions in order.
        let produced = session.state();
        for c in g.cells() {
            let i = c.index();
            let want = if before.owner(c) == NEUTRAL {
                before.all_units()[i]
            } else {
                let u = before.all_units()[i] + production(map.terrain(c));
                if map.is_base(c) {
                    u + BASE_BONUS
                } else {
                    u
                }
            };
            prop_assert_eq!(produced.all_units()[i].to_bits(), want.to_bits(), "production at {}", g.id(c));
        }
        let after_production = total(produced);
        // Answers in a random order: the order of submission must not matter.
        while !answers.is_empty() {
            let (s, a) = answers.swap_remove(rng.below(answers.len()));
            if matches!(a, Some(PlayerAnswer::Violation { .. })) {
                violations[s as usize] += 1;
            }
            if let Some(a) = a {
                session.submit(s, a);
            }
        }
        let round = session.round();
        let report = session.advance().clone();
        let m = session.state();
        prop_assert_eq!(report.round, round);
        // Resolution only spends units: moved, lost in combat, or turned into fortification
        // (which is worth 0.3 of a unit), never created.
        prop_assert!(total(m) <= after_production * (1.0 + 1e-12) + 1e-9, "round {round}: units appeared");
        for c in g.cells() {
            let (u, f) = (m.all_units()[c.index()], m.all_fortifications()[c.index()]);
            prop_assert!(u >= 0.0 && u.is_finite() && f >= 0.0 && f.is_finite(), "{}: {u} {f}", g.id(c));
        }
        // Counts agree with the owners.
        for s in 0..seats as u8 {
            let owned = m.owners().iter().filter(|&&o| o == s).count() as u32;
            prop_assert_eq!(m.cell_count(s), owned, "round {}: seat {}", round, s);
        }
        // Final mode: a finalist's cell never passes to another finalist.
        if map.seats().len() > 2 {
            for c in g.cells() {
                let (was, now) = (before.owner(c), m.owner(c));
                let finalist = |o: u8| o != NEUTRAL && map.seats()[o as usize].role == SeatRole::Army;
                prop_assert!(!(finalist(was) && finalist(now) && was != now), "{} passed {was} → {now}", g.id(c));
            }
        }
    }
    let end = state_hash(session.state());
    let record = session.finish();
    // Violations: counted as submitted until the fourth disqualifies (SPEC §8).
    for (s, &submitted) in violations.iter().enumerate() {
        let o = &record.outcome[s];
        prop_assert_eq!(record.violations[s].len() as u32, o.violations);
        prop_assert_eq!(o.violations, submitted);
        prop_assert_eq!(o.disqualified.is_some(), submitted >= 4);
    }
    // The record re-simulates to the same state, and verifies.
    let replay = record.replay.expect("recorded");
    let again = resimulate(&replay, map.clone(), |_, _, _| true);
    prop_assert_eq!(state_hash(&again), end);
    prop_assert!(verify(&replay).is_ok(), "{:?}", verify(&replay));
    // And re-recording the recorded answers gives the same document, byte for byte.
    let mut s2 = Session::new(map, MatchConfig { rounds }, replay.seats.iter().map(|s| s.name.clone()).collect());
    s2.record();
    for t in &replay.turns {
        for (seat, a) in t.answers.iter().enumerate() {
            if let Some(a) = recorded_answer(a) {
                s2.submit(seat as u8, a);
            }
        }
        s2.advance();
    }
    prop_assert_eq!(s2.finish().replay.expect("recorded").to_json(), replay.to_json());
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn a_duel_session_keeps_the_rules_under_random_play(seed in any::<u64>(), name in "[a-z]{1,6}") {
        let map = Arc::new(gbely_world::generate_duel(&name, 16, 16).unwrap());
        conform(map, 40, seed)?;
    }

    #[test]
    fn a_final_session_keeps_the_rules_under_random_play(seed in any::<u64>()) {
        let map = Arc::new(generate_final("conformance", FinalConfig::for_size(41)).unwrap());
        conform(map, 15, seed)?;
    }
}

#[test]
fn nothing_submitted_is_no_commands_and_not_a_violation() {
    let map = Arc::new(gbely_world::generate_duel("quiet", 16, 16).unwrap());
    let mut s = Session::new(map, MatchConfig { rounds: 3 }, vec!["a".into(), "b".into()]);
    let start: Vec<u32> = (0..2).map(|k| s.state().cell_count(k)).collect();
    for _ in 0..3 {
        s.advance();
    }
    let rec = s.finish();
    assert_eq!(rec.violations, vec![Vec::new(), Vec::new()]);
    assert_eq!(rec.outcome.iter().map(|o| o.cells).collect::<Vec<_>>(), start);
    assert_eq!(rec.end_reason, gbely_engine::sim::EndReason::Rounds);
}

#[test]
fn a_session_finished_early_is_marked_interrupted() {
    let map = Arc::new(gbely_world::generate_duel("early", 16, 16).unwrap());
    let mut s = Session::new(map, MatchConfig { rounds: 10 }, vec!["a".into(), "b".into()]);
    s.record();
    s.submit(0, PlayerAnswer::Raw(vec![Value::from(5)]));
    s.advance();
    let rec = s.finish();
    assert!(rec.interrupted());
    assert_eq!(rec.rounds_played(), 1);
    let replay = rec.replay.unwrap();
    assert_eq!(replay.result.ended_by, gbely_rules::EndReason::Interrupted);
    assert_eq!(replay.turns.len(), 1);
    assert!(verify(&replay).is_ok());
}

/// Plays a session and, from round `split` on, a copy and a restored snapshot (through JSON) with
/// the same answers: all three end in the same state, bit for bit, with the same tallies.
fn snapshot_twins(map: Arc<Map>, rounds: u32, split: u32, seed: u64) {
    let seats = map.seats().len();
    let names: Vec<String> = (0..seats).map(|s| format!("seat {s}")).collect();
    let mut rng = Rng(seed);
    let mut s = Session::new(map.clone(), MatchConfig { rounds }, names);
    let play = |s: &mut Session, answers: &[Option<PlayerAnswer>]| {
        for (seat, a) in answers.iter().enumerate() {
            if let Some(a) = a.clone() {
                s.submit(seat as u8, a);
            }
        }
        s.advance();
    };
    let mut twins: Vec<Session> = Vec::new();
    while !s.is_over() {
        if s.round() == split && twins.is_empty() {
            let text = serde_json::to_string(&s.snapshot().expect("not recording")).unwrap();
            let restored = Session::restore(map.clone(), serde_json::from_str(&text).unwrap()).unwrap();
            twins = vec![s.try_clone().expect("not recording"), restored];
        }
        let answers: Vec<Option<PlayerAnswer>> = (0..seats)
            .map(|seat| {
                let obs = s.observe(seat as u8);
                random_answer(&mut rng, &obs, &map)
            })
            .collect();
        play(&mut s, &answers);
        for t in &mut twins {
            play(t, &answers);
        }
    }
    assert_eq!(twins.len(), 2, "the match reached round {split}");
    let expected = (state_hash(s.state()), s.state().outcome());
    for t in twins {
        assert!(t.is_over());
        assert_eq!((state_hash(t.state()), t.state().outcome()), expected);
        let (a, b) = (t.finish(), Session::finish(s.try_clone().unwrap()));
        assert_eq!((a.discards, a.violations), (b.discards, b.violations));
    }
}

#[test]
fn a_copy_and_a_restored_snapshot_play_on_as_the_session_does() {
    snapshot_twins(Arc::new(gbely_world::generate_duel("twins", 16, 16).unwrap()), 40, 12, 7);
    snapshot_twins(Arc::new(generate_final("twins", FinalConfig::for_size(41)).unwrap()), 15, 5, 9);
}

#[test]
fn a_snapshot_that_does_not_fit_the_map_is_refused() {
    let map = Arc::new(gbely_world::generate_duel("fit", 16, 16).unwrap());
    let mut s = Session::new(map.clone(), MatchConfig { rounds: 5 }, vec!["a".into(), "b".into()]);
    s.advance();
    let good = s.snapshot().unwrap();
    let other = Arc::new(gbely_world::generate_duel("fit", 18, 18).unwrap());
    assert!(Session::restore(other, good.clone()).unwrap_err().contains("cells"));
    let mut bad = good.clone();
    bad.state.owner[0] = 7;
    assert!(Session::restore(map.clone(), bad).unwrap_err().contains("owner 7"));
    let mut bad = good.clone();
    bad.state.units[3] = f64::NAN;
    assert!(Session::restore(map.clone(), bad).unwrap_err().contains("non-finite"));
    let mut recording = Session::new(map, MatchConfig { rounds: 5 }, vec!["a".into(), "b".into()]);
    recording.record();
    assert!(recording.snapshot().is_none() && recording.try_clone().is_none());
}
