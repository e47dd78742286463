//! The worked examples of SPEC.md, each with its numbers computed by hand from the SPEC.

use std::sync::Arc;

use gbely_engine::sim::{EndReason, Match, MatchConfig, SideInput, NEUTRAL};
use gbely_engine::wire::{observation_json, parse_answer, parse_command};
use gbely_rules::{DiscardReason, Owner};
use serde_json::json;

use crate::common::{attack, fortify, mv, Lab};

/// A 5×3 field: seat 0's base top-left, seat 1's bottom-right, a hill at P01_02, a river at P01_03.
const FIELD: [&str; 3] = ["B....", "..^~.", "....B"];
const SEATS: [&str; 2] = ["P00_00", "P02_04"];

fn field() -> Lab {
    Lab::new(&FIELD, &SEATS)
}

#[test]
fn round_zero_production_is_18_on_a_base() {
    // 10 starting units + 3 (luka) + 5 (base bonus).
    let mut m = Match::new(Arc::new(gbely_world::reference_map()), MatchConfig::default());
    let obs = m.observe(0);
    assert_eq!(obs.round, 0);
    assert_eq!(obs.own.len(), 1);
    assert_eq!(obs.own[0].units, 18.0);
    assert_eq!(m.map().grid().id(obs.base), "P57_02");
    let json = observation_json(&obs, m.map().grid());
    assert!(json.contains(r#""id":"P57_02","typ":"luka","jednotky":18.0,"opevnenie":0.0,"susedia":["P56_02","P58_02","P57_01","P57_03"]"#), "{json}");
    assert_eq!(m.observe(1).own[0].units, 18.0);
}

#[test]
fn production_adds_terrain_then_base_bonus_on_every_owned_cell() {
    let mut m = Match::new(crate::common::lab_map(&FIELD, &SEATS), MatchConfig::default());
    let g = m.map().grid().clone();
    m.set_cell(g.parse("P01_02").unwrap(), 0, 1.0, 0.0); // hill: +2
    m.set_cell(g.parse("P01_03").unwrap(), 0, 1.0, 0.0); // river: +1
    m.set_cell(g.parse("P00_01").unwrap(), NEUTRAL, 4.0, 0.0); // neutral: nothing
    m.start_round();
    assert_eq!(m.units(g.parse("P00_00").unwrap()), 18.0);
    assert_eq!(m.units(g.parse("P01_02").unwrap()), 3.0);
    assert_eq!(m.units(g.parse("P01_03").unwrap()), 2.0);
    assert_eq!(m.units(g.parse("P00_01").unwrap()), 4.0);
}

#[test]
fn attack_of_9_on_defence_9_fails_and_10_captures_leaving_1() {
    let mut lab = field();
    lab.set("P00_00", 0, 30.0, 0.0);
    lab.set("P00_01", NEUTRAL, 9.0, 0.0);
    lab.resolve(&[json!([attack("P00_00", "P00_01", 9.0)]), json!([])]);
    assert_eq!(lab.owner("P00_01"), NEUTRAL, "strict: 9 does not beat 9");
    assert_eq!(lab.units("P00_01"), 0.0, "the failed attack lowers the garrison by 9 / 1.0");
    assert_eq!(lab.units("P00_00"), 21.0);

    let mut lab = field();
    lab.set("P00_00", 0, 30.0, 0.0);
    lab.set("P00_01", NEUTRAL, 9.0, 0.0);
    let report = lab.resolve(&[json!([attack("P00_00", "P00_01", 10.0)]), json!([])]);
    assert_eq!(lab.owner("P00_01"), 0);
    assert_eq!(lab.units("P00_01"), 1.0);
    assert_eq!(lab.units("P00_00"), 20.0);
    assert_eq!(report.captures.len(), 1);
}

#[test]
fn failed_attack_on_a_hill_consumes_garrison_before_fortification() {
    // Hill P01_02: 4 units × 1.5 = 6, fortification 2 → defence 8.
    let mut lab = field();
    lab.set("P01_01", 0, 20.0, 0.0);
    lab.set("P01_02", NEUTRAL, 4.0, 2.0);
    // 5 ≤ 6: only the garrison pays, 5 / 1.5 of it.
    lab.resolve(&[json!([attack("P01_01", "P01_02", 5.0)]), json!([])]);
    assert_eq!(lab.units("P01_02"), 4.0 - 5.0 / 1.5);
    assert!((lab.units("P01_02") - 0.6667).abs() < 1e-3);
    assert_eq!(lab.fort("P01_02"), 2.0);

    let mut lab = field();
    lab.set("P01_01", 0, 20.0, 0.0);
    lab.set("P01_02", NEUTRAL, 4.0, 2.0);
    // 7 > 6: the garrison is gone, the fortification pays the other 1.
    lab.resolve(&[json!([attack("P01_01", "P01_02", 7.0)]), json!([])]);
    assert_eq!(lab.units("P01_02"), 0.0);
    assert_eq!(lab.fort("P01_02"), 1.0);
    assert_eq!(lab.owner("P01_02"), NEUTRAL);
    // 8 on defence 8 would fail; after the 7 the defence is 1, so 2 takes it with 1 left.
    lab.set("P01_01", 0, 20.0, 0.0);
    lab.resolve(&[json!([attack("P01_01", "P01_02", 2.0)]), json!([])]);
    assert_eq!(lab.owner("P01_02"), 0);
    assert_eq!(lab.units("P01_02"), 1.0);
    assert_eq!(lab.fort("P01_02"), 0.0, "fortification resets on capture");
}

#[test]
fn two_attacks_of_6_on_defence_9_capture_leaving_3() {
    let mut lab = field();
    lab.set("P00_01", 0, 6.0, 0.0);
    lab.set("P01_00", 0, 6.0, 0.0);
    lab.set("P01_01", NEUTRAL, 9.0, 0.0);
    lab.resolve(&[json!([attack("P00_01", "P01_01", 6.0), attack("P01_00", "P01_01", 6.0)]), json!([])]);
    assert_eq!(lab.owner("P01_01"), 0);
    assert_eq!(lab.units("P01_01"), 3.0);
    assert_eq!(lab.units("P00_01"), 0.0);
    assert_eq!(lab.units("P01_00"), 0.0);
}

#[test]
fn move_of_10_into_a_hill_delivers_6_and_the_4_left_cannot_act_again() {
    let mut lab = field();
    lab.set("P01_01", 0, 10.0, 0.0);
    lab.set("P01_02", 0, 0.0, 0.0);
    lab.set("P00_01", 0, 0.0, 0.0);
    let report = lab.resolve(&[
        json!([mv("P01_01", "P01_02", 10.0), mv("P01_01", "P00_01", 4.0), attack("P01_01", "P02_01", 1.0)]),
        json!([]),
    ]);
    assert_eq!(lab.units("P01_02"), 6.0);
    assert_eq!(lab.units("P01_01"), 4.0);
    assert_eq!(lab.units("P00_01"), 0.0);
    let reasons: Vec<_> = report.discarded.iter().map(|d| (d.index, d.reason)).collect();
    assert_eq!(reasons, [(1, DiscardReason::NoReadyUnits), (2, DiscardReason::NoReadyUnits)]);
}

#[test]
fn moved_in_units_cannot_move_on_in_the_same_round() {
    let mut lab = field();
    lab.set("P00_01", 0, 10.0, 0.0);
    lab.set("P00_02", 0, 0.0, 0.0);
    lab.set("P00_03", 0, 0.0, 0.0);
    let report = lab.resolve(&[json!([mv("P00_01", "P00_02", 10.0), mv("P00_02", "P00_03", 10.0)]), json!([])]);
    assert_eq!(lab.units("P00_02"), 10.0, "they arrived and they defend");
    assert_eq!(lab.units("P00_03"), 0.0);
    assert_eq!(report.discarded[0].reason, DiscardReason::NoReadyUnits);
    // A cell's own units are ready: after 5 arrive, the 3 that were there may still leave.
    let mut lab = field();
    lab.set("P00_01", 0, 5.0, 0.0);
    lab.set("P00_02", 0, 3.0, 0.0);
    lab.set("P00_03", 0, 0.0, 0.0);
    lab.resolve(&[json!([mv("P00_01", "P00_02", 5.0), mv("P00_02", "P00_03", 100.0)]), json!([])]);
    assert_eq!(lab.units("P00_02"), 5.0);
    assert_eq!(lab.units("P00_03"), 3.0);
}

#[test]
fn captured_units_cannot_act_in_the_same_round() {
    let mut lab = field();
    lab.set("P00_00", 0, 20.0, 0.0);
    lab.set("P00_01", NEUTRAL, 1.0, 0.0);
    lab.set("P00_02", NEUTRAL, 1.0, 0.0);
    let report = lab.resolve(&[json!([attack("P00_00", "P00_01", 15.0), attack("P00_01", "P00_02", 5.0)]), json!([])]);
    assert_eq!(lab.owner("P00_01"), 0);
    assert_eq!(lab.units("P00_01"), 14.0);
    assert_eq!(lab.owner("P00_02"), NEUTRAL);
    assert_eq!(report.discarded[0].reason, DiscardReason::NoReadyUnits);
}

#[test]
fn amounts_are_clamped_to_the_ready_units() {
    let mut lab = field();
    lab.set("P00_00", 0, 10.0, 0.0);
    lab.set("P00_01", 0, 0.0, 0.0);
    lab.resolve(&[json!([mv("P00_00", "P00_01", 1000.0)]), json!([])]);
    assert_eq!(lab.units("P00_00"), 0.0);
    assert_eq!(lab.units("P00_01"), 10.0);

    let mut lab = field();
    lab.set("P00_00", 0, 10.0, 0.0);
    lab.set("P00_01", NEUTRAL, 3.0, 0.0);
    lab.resolve(&[json!([attack("P00_00", "P00_01", 1e300)]), json!([])]);
    assert_eq!(lab.owner("P00_01"), 0);
    assert_eq!(lab.units("P00_01"), 7.0);

    // A fractional amount is fine and exact.
    let mut lab = field();
    lab.set("P00_00", 0, 10.0, 0.0);
    lab.set("P00_01", 0, 0.0, 0.0);
    lab.resolve(&[json!([mv("P00_00", "P00_01", 2.5)]), json!([])]);
    assert_eq!(lab.units("P00_00"), 7.5);
}

#[test]
fn fortify_10_gives_3_and_is_spent_after_the_garrison() {
    let mut lab = field();
    lab.set("P00_00", 0, 12.0, 0.0);
    lab.resolve(&[json!([fortify("P00_00", 10.0)]), json!([])]);
    assert_eq!(lab.fort("P00_00"), 3.0);
    assert_eq!(lab.units("P00_00"), 2.0);
    let obs = {
        let mut m = lab.m.clone();
        m.observe(0)
    };
    assert_eq!(obs.own_cell(lab.cell("P00_00")).unwrap().fortification, 3.0);
    // FORTIFY asks for 100 but only 2 are ready: 0.3 × 2 more.
    lab.m.start_round();
    lab.set("P00_00", 0, 2.0, 3.0);
    lab.resolve(&[json!([fortify("P00_00", 100.0)]), json!([])]);
    assert_eq!(lab.fort("P00_00"), 3.0 + 0.3 * 2.0);
    assert_eq!(lab.units("P00_00"), 0.0);
}

#[test]
fn resolution_order_alternates_by_round() {
    // Both sides attack the neutral P01_02 (hill, garrison 2 → defence 3) with 10.
    // On an even round seat 0 goes first and takes it (leftover 7); seat 1's 10 then beats 7 × 1.5.
    let setup = |lab: &mut Lab| {
        lab.set("P01_01", 0, 10.0, 0.0);
        lab.set("P01_03", 1, 10.0, 0.0);
        lab.set("P01_02", NEUTRAL, 2.0, 0.0);
    };
    let orders = [json!([attack("P01_01", "P01_02", 10.0)]), json!([attack("P01_03", "P01_02", 10.0)])];
    let mut lab = field();
    assert_eq!(lab.m.resolution_order().collect::<Vec<_>>(), [0, 1]);
    setup(&mut lab);
    lab.resolve(&orders);
    assert_eq!(lab.owner("P01_02"), 0, "round 0: seat 0 first; 10 on 7 × 1.5 = 10.5 fails");
    assert_eq!(lab.units("P01_02"), 7.0 - 10.0 / 1.5);

    lab.m.start_round();
    assert_eq!(lab.m.round(), 1);
    assert_eq!(lab.m.resolution_order().collect::<Vec<_>>(), [1, 0]);
    setup(&mut lab);
    lab.resolve(&orders);
    assert_eq!(lab.owner("P01_02"), 1, "round 1: seat 1 first");
    assert_eq!(lab.units("P01_02"), 7.0 - 10.0 / 1.5);
}

#[test]
fn observation_values_are_rounded_to_one_decimal() {
    let mut lab = field();
    lab.set("P00_00", 0, 0.15, 0.25);
    lab.set("P00_01", NEUTRAL, 1.9999999999954965, 0.04);
    lab.set("P01_00", 1, 14.0, 0.0);
    let mut m = lab.m.clone();
    let obs = m.observe(0);
    assert_eq!(obs.own[0].units, 0.2);
    assert_eq!(obs.own[0].fortification, 0.3);
    let json = observation_json(&obs, m.map().grid());
    assert!(json.contains(r#""jednotky":0.2,"opevnenie":0.3"#), "{json}");
    assert!(json.contains(r#"{"id":"P00_01","vlastnik":"hbp","posadka":2.0,"opevnenie":0.0,"typ":"luka"}"#), "{json}");
    assert!(
        json.contains(r#"{"id":"P01_00","vlastnik":"zastupitelstvo","posadka":14.0,"opevnenie":0.0,"typ":"luka"}"#),
        "{json}"
    );
    // Exactly the keys of SPEC §5, in order.
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["kolo", "moja_zakladna", "moje_pola", "viditelne_susedne_pola"]);
}

#[test]
fn in_a_duel_each_side_sees_the_other_as_the_council() {
    let mut lab = field();
    lab.set("P00_01", 1, 5.0, 0.0);
    lab.set("P01_04", 0, 5.0, 0.0);
    let mut m = lab.m.clone();
    let seen_by_0 = m.observe(0);
    let seen_by_1 = m.observe(1);
    assert_eq!(seen_by_0.visible_cell(lab.cell("P00_01")).unwrap().owner, Owner::Council);
    assert_eq!(seen_by_1.visible_cell(lab.cell("P01_04")).unwrap().owner, Owner::Council);
    assert_eq!(m.map().grid().id(seen_by_1.base), "P02_04");
}

#[test]
fn visible_cells_are_the_foreign_neighbours_each_once_row_major() {
    let mut lab = field();
    lab.set("P01_01", 0, 1.0, 0.0);
    let mut m = lab.m.clone();
    let obs = m.observe(0);
    let g = m.map().grid();
    let ids: Vec<String> = obs.visible.iter().map(|v| g.id(v.cell)).collect();
    // Own: P00_00, P01_01. Foreign neighbours: P00_01 (of both), P01_00 (of both), P01_02, P02_01.
    assert_eq!(ids, ["P00_01", "P01_00", "P01_02", "P02_01"]);
    let own: Vec<String> = obs.own.iter().map(|o| g.id(o.cell)).collect();
    assert_eq!(own, ["P00_00", "P01_01"]);
}

#[test]
fn the_base_stays_in_the_observation_after_it_is_lost() {
    let mut lab = field();
    lab.set("P00_00", 1, 5.0, 0.0);
    lab.set("P01_01", 0, 5.0, 0.0);
    let mut m = lab.m.clone();
    let obs = m.observe(0);
    assert_eq!(m.map().grid().id(obs.base), "P00_00");
    assert!(obs.own_cell(obs.base).is_none());
}

#[test]
fn the_match_ends_at_the_end_of_the_round_of_an_elimination() {
    // Round 1 (odd): seat 1 resolves first and takes seat 0's only cell; seat 0's commands of
    // that round are then discarded, and the match ends after this round.
    let mut lab = field();
    lab.resolve(&[json!([]), json!([])]);
    lab.m.start_round();
    assert_eq!(lab.m.round(), 1);
    lab.set("P00_00", 0, 2.0, 0.0);
    lab.set("P00_01", 1, 10.0, 0.0);
    lab.set("P02_03", 1, 0.0, 0.0);
    let report = lab.resolve(&[
        json!([attack("P00_00", "P00_01", 2.0)]),
        json!([attack("P00_01", "P00_00", 10.0), mv("P02_04", "P02_03", 1.0)]),
    ]);
    assert_eq!(lab.owner("P00_00"), 1);
    assert_eq!(lab.units("P02_03"), 1.0, "the rest of the round is resolved");
    assert_eq!(report.eliminated, [0]);
    assert_eq!(report.discarded[0].seat, 0);
    assert_eq!(report.discarded[0].reason, DiscardReason::SourceNotOwned);
    assert!(lab.m.is_over());
    assert_eq!(lab.m.end_reason(), Some(EndReason::Elimination));
    assert_eq!(lab.m.round(), 1);
    assert_eq!(lab.m.council_fell(), None);
    let out = lab.m.outcome();
    assert_eq!(out[0].cells, 0);
    assert_eq!(out[0].eliminated, Some(1));
    // P02_04 (base), P02_03, P00_01 and the captured P00_00.
    assert_eq!(out[1].cells, 4);
    assert_eq!(out[1].score, Some(4.0 / 15.0 * 100.0));
}

#[test]
fn a_match_lasts_150_rounds_numbered_0_to_149() {
    let mut m = Match::new(crate::common::lab_map(&FIELD, &SEATS), MatchConfig::default());
    let mut rounds = Vec::new();
    let mut report = Default::default();
    while !m.is_over() {
        let obs = m.observe(0);
        rounds.push(obs.round);
        m.resolve_round(&[SideInput::Orders(vec![]), SideInput::Orders(vec![])], &mut report);
    }
    assert_eq!(rounds.len(), 150);
    assert_eq!(rounds.last(), Some(&149));
    assert_eq!(m.end_reason(), Some(EndReason::Rounds));
    // 10 + 150 × (3 + 5) on each base, nothing spent.
    assert_eq!(m.units(m.map().seats()[0].base), 10.0 + 150.0 * 8.0);
}

#[test]
fn tie_break_is_the_first_round_that_reached_the_final_count() {
    let mut lab = Lab::with_rounds(&FIELD, &SEATS, 10);
    // Cells of seat 0 at the end of rounds 0..9: 1,2,3,5,5,4,4,4,5,5 → final 5, first reached at 3.
    let plan: [&[&str]; 10] = [
        &[],
        &["P00_01"],
        &["P00_01", "P00_02"],
        &["P00_01", "P00_02", "P00_03", "P00_04"],
        &["P00_01", "P00_02", "P00_03", "P00_04"],
        &["P00_01", "P00_02", "P00_03"],
        &["P00_01", "P00_02", "P00_03"],
        &["P00_01", "P00_02", "P00_03"],
        &["P00_01", "P00_02", "P00_03", "P01_00"],
        &["P00_01", "P00_02", "P00_03", "P01_00"],
    ];
    for cells in plan {
        lab.m.start_round();
        for id in ["P00_01", "P00_02", "P00_03", "P00_04", "P01_00"] {
            let owner = if cells.contains(&id) { 0 } else { NEUTRAL };
            lab.set(id, owner, 1.0, 0.0);
        }
        lab.resolve(&[json!([]), json!([])]);
    }
    assert!(lab.m.is_over());
    assert_eq!(lab.m.history(0), [1, 2, 3, 5, 5, 4, 4, 4, 5, 5]);
    let out = lab.m.outcome();
    assert_eq!(out[0].cells, 5);
    assert_eq!(out[0].tiebreak_round, Some(3));
    assert_eq!(out[1].tiebreak_round, Some(0));
    assert_eq!(out[0].score, Some(5.0 / 15.0 * 100.0));
}

#[test]
fn the_fourth_violation_disqualifies_and_ends_a_duel_after_its_round() {
    let mut lab = field();
    let mut report = Default::default();
    for round in 0..4 {
        lab.m.start_round();
        // Seat 1 still resolves in the round of the disqualification.
        let grid = lab.m.map().grid().clone();
        let order = parse_command(&mv("P02_04", "P02_03", 1.0), &grid);
        lab.set("P02_03", 1, 0.0, 0.0);
        lab.m.resolve_round(&[SideInput::Violation, SideInput::Orders(vec![order])], &mut report);
        assert_eq!(lab.m.violations(0), round + 1);
        if round < 3 {
            assert!(!lab.m.is_over());
            assert!(lab.m.is_active(0));
        }
    }
    assert_eq!(report.disqualified, [0]);
    assert_eq!(lab.units("P02_03"), 1.0);
    assert!(lab.m.is_over());
    assert_eq!(lab.m.end_reason(), Some(EndReason::Disqualification));
    let out = lab.m.outcome();
    assert_eq!(out[0].score, None);
    assert_eq!(out[0].tiebreak_round, None);
    assert_eq!(out[0].disqualified, Some(3));
}

#[test]
fn a_violation_loses_only_that_rounds_commands() {
    let mut lab = field();
    let mut report = Default::default();
    lab.m.resolve_round(&[SideInput::Violation, SideInput::Orders(vec![])], &mut report);
    assert_eq!(report.violations, [0]);
    assert_eq!(lab.units("P00_00"), 18.0);
    assert!(!lab.m.is_over());
}

#[test]
fn answers_are_json_objects_with_prikazy_or_lists() {
    assert_eq!(parse_answer(r#"{"prikazy": []}"#).unwrap().len(), 0);
    assert_eq!(parse_answer(r#"[{"typ":"MOVE"}]"#).unwrap().len(), 1);
    assert_eq!(parse_answer(r#"{"prikazy": [1, 2], "debug": {"x": 1}}"#).unwrap().len(), 2);
    for bad in
        ["", "nonsense", "{}", r#"{"prikazy": 5}"#, "5", "null", r#"[{"typ":"MOVE","pocet":NaN}]"#, r#"[Infinity]"#]
    {
        assert!(parse_answer(bad).is_err(), "{bad}");
    }
    // A number too large for an f64 does not make the answer unreadable.
    let list = parse_answer(r#"[{"typ":"MOVE","z":"P00_00","na":"P00_01","pocet":1e400}]"#).unwrap();
    assert_eq!(list.len(), 1);
}

#[test]
fn a_garrison_worn_down_to_nothing_by_rounding_is_clamped_to_0() {
    // River P01_03 (× 1.3) holds 0.9; an attack of exactly 0.9 × 1.3 does not exceed the
    // defence, so the garrison pays k / 1.3, which in f64 is a hair above 0.9: the result
    // would be −1.1e-16 and is clamped to 0 (SPEC §3).
    let mut lab = field();
    lab.set("P01_04", 0, 5.0, 0.0);
    lab.set("P01_03", NEUTRAL, 0.9, 0.0);
    let k = 0.9 * 1.3;
    assert!(0.9 - k / 1.3 < 0.0, "the rounding this test is about");
    lab.resolve(&[json!([attack("P01_04", "P01_03", k)]), json!([])]);
    assert_eq!(lab.owner("P01_03"), NEUTRAL);
    assert_eq!(lab.units("P01_03"), 0.0);
}

#[test]
fn a_disqualified_finalist_is_skipped_whatever_it_sends() {
    // Three seats make a final (the last is the Council). Seat 0's fourth violation in round 3
    // disqualifies it; the match goes on, and from round 4 its commands are neither resolved nor
    // discarded (SPEC §4, §9), while its base keeps producing: 10 + 5 × (3 + 5) = 50.
    let mut lab = Lab::new(&["B...B", ".....", "....B"], &["P00_00", "P00_04", "P02_04"]);
    let mut report = Default::default();
    for _ in 0..4 {
        let idle = || SideInput::Orders(vec![]);
        lab.m.resolve_round(&[SideInput::Violation, idle(), idle()], &mut report);
    }
    assert_eq!(report.disqualified, [0]);
    assert!(!lab.m.is_over());
    lab.set("P00_01", 0, 0.0, 0.0);
    let grid = lab.m.map().grid().clone();
    let orders =
        vec![parse_command(&fortify("P00_00", 5.0), &grid), parse_command(&attack("P00_00", "P00_01", 1.0), &grid)];
    let idle = || SideInput::Orders(vec![]);
    lab.m.resolve_round(&[SideInput::Orders(orders), idle(), idle()], &mut report);
    assert_eq!(report.discarded, []);
    assert_eq!(lab.units("P00_00"), 50.0);
    assert_eq!(lab.fort("P00_00"), 0.0);
}

#[test]
fn an_attack_spends_ready_units_and_the_rest_may_still_move() {
    // P00_00 has 10 ready; attacking with 4 leaves 6 ready, so a MOVE of 100 sends those 6.
    let mut lab = field();
    lab.set("P00_00", 0, 10.0, 0.0);
    lab.set("P00_01", NEUTRAL, 2.0, 0.0);
    lab.set("P01_00", 0, 0.0, 0.0);
    let report = lab.resolve(&[json!([attack("P00_00", "P00_01", 4.0), mv("P00_00", "P01_00", 100.0)]), json!([])]);
    assert_eq!(report.discarded, []);
    assert_eq!((lab.owner("P00_01"), lab.units("P00_01")), (0, 2.0));
    assert_eq!(lab.units("P01_00"), 6.0);
    assert_eq!(lab.units("P00_00"), 0.0);
}
