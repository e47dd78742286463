//! The final (SPEC §9): eight finalists, the Council in the centre.

use std::sync::Arc;

use agents::{Expander, Template};
use gbely_council::Council;
use gbely_engine::app::runs::final_match::{final_seating, final_table};
use gbely_engine::game::{play, PlayOptions};
use gbely_engine::runner::player::{DecidePlayer, Player, PlayerAnswer};
use gbely_engine::sim::{EndReason, Match, MatchConfig, Mode, RoundReport, SideInput, NEUTRAL};
use gbely_rules::ViolationKind;
use gbely_rules::{DiscardReason, Grid, Observation, Owner};
use gbely_world::{generate_final, FinalConfig, MapStats, SeatRole};
use serde_json::json;

use crate::common::Lab;

fn final_map(size: u32) -> Arc<gbely_world::Map> {
    Arc::new(generate_final("test-final", FinalConfig::for_size(size)).unwrap())
}

#[test]
fn final_maps_are_symmetric_with_eight_seats_and_the_council_in_the_centre() {
    for size in [90, 60, 41] {
        let m = final_map(size);
        let g = m.grid();
        assert_eq!((m.width(), m.height()), (size, size));
        assert_eq!(m.seats().len(), 9);
        assert!(m.seats()[..8].iter().all(|s| s.role == SeatRole::Army));
        assert_eq!(m.seats()[8].role, SeatRole::Council);
        let ids: Vec<String> = m.seats().iter().map(|s| g.id(s.base)).collect();
        let (n, h) = (size - 1, size / 2);
        // Clockwise from the bottom-left corner; corners even, edges odd.
        let want = [(n - 2, 2), (h, 2), (2, 2), (2, n - h), (2, n - 2), (n - h, n - 2), (n - 2, n - 2), (n - 2, h)];
        for (k, (r, c)) in want.iter().enumerate() {
            assert_eq!(ids[k], gbely_rules::format_cell_id(*r, *c), "seat {k} on {size}");
        }
        assert!(MapStats::of(&m).symmetric_90, "{size}");
        // The rotation takes seat k to seat k + 2 with everything around it.
        let rot = |c: gbely_rules::Cell| {
            let (r, col) = g.row_col(c);
            g.cell(col, size - 1 - r)
        };
        for k in 0..8 {
            assert_eq!(rot(m.seats()[k].base), m.seats()[(k + 2) % 8].base);
        }
        // The Council owns a central territory with strong garrisons and extra bases.
        let council: Vec<_> = g.cells().filter(|&c| m.start_owner(c) == Some(8)).collect();
        assert!(council.len() as u32 > size, "{}", council.len());
        assert!(council.iter().all(|&c| m.garrison(c) >= 8 || m.is_base(c)));
        assert!(council.iter().filter(|&&c| m.is_base(c)).count() >= 4);
        let centre = g.cell(size / 2, size / 2);
        assert_eq!(m.start_owner(centre), Some(8));
        // Neutral garrisons stay 1–8.
        assert!(g
            .cells()
            .filter(|&c| m.start_owner(c).is_none() && !m.is_base(c))
            .all(|c| (1..=8).contains(&m.garrison(c))));
    }
}

#[test]
fn final_maps_are_pinned_and_exportable() {
    let m = final_map(90);
    assert_eq!(m.fingerprint(), generate_final("test-final", FinalConfig::for_size(90)).unwrap().fingerprint());
    let text = gbely_world::write_map_file(&m);
    assert!(text.contains("\nowners\n"));
    assert_eq!(gbely_world::parse_map_file(&text).unwrap(), *m);
    assert_eq!(m.fingerprint(), "90c4d9b10908209f", "the final generator changed: bump GEN_VERSION");
}

#[test]
fn labels_are_relative_to_the_observer() {
    let m = Match::new(final_map(60), MatchConfig::default());
    assert_eq!(m.mode(), Mode::Final);
    // Seat j seen from seat i is armada_{((j − i) mod 8) + 1} (worked by hand).
    assert_eq!(m.label(0, 3), Owner::Army(4));
    assert_eq!(m.label(5, 2), Owner::Army(6)); // (2 − 5) mod 8 = 5 → armada_6
    assert_eq!(m.label(7, 0), Owner::Army(2)); // (0 − 7) mod 8 = 1 → armada_2
    assert_eq!(m.label(4, 4), Owner::Army(1));
    assert_eq!(m.label(2, 8), Owner::Council);
    assert_eq!(m.label(2, NEUTRAL), Owner::Neutral);
    // The Council sees finalists by absolute seat: seat 0 `armada`, seat k `armada_{k+1}`.
    assert_eq!(m.label(8, 0).wire(), "armada");
    assert_eq!(m.label(8, 7).wire(), "armada_8");
}

#[test]
fn a_finalist_sees_its_neighbour_as_a_relative_armada() {
    let map = final_map(60);
    let mut m = Match::new(map.clone(), MatchConfig::default());
    let g = map.grid();
    // Give seat 1 a cell next to seat 0's base; seat 0 must see it as armada_2, seat 1's own
    // view of seat 0's base is armada_8.
    let b0 = map.seats()[0].base;
    let next = g.neighbours(b0).as_slice()[0];
    m.start_round();
    m.set_cell(next, 1, 3.0, 0.0);
    let o0 = m.observe(0);
    assert_eq!(o0.visible_cell(next).unwrap().owner.wire(), "armada_2");
    let o1 = m.observe(1);
    assert_eq!(o1.visible_cell(b0).unwrap().owner.wire(), "armada_8");
}

#[test]
fn an_attack_on_a_finalist_is_discarded_at_no_cost() {
    let map = final_map(60);
    let g = map.grid().clone();
    let mut m = Match::new(map.clone(), MatchConfig::default());
    m.start_round();
    let b0 = map.seats()[0].base;
    let next = g.neighbours(b0).as_slice()[0];
    m.set_cell(next, 3, 2.0, 0.0);
    let before = m.units(b0);
    let attack =
        gbely_engine::wire::parse_command(&json!({"typ": "ATTACK", "z": g.id(b0), "na": g.id(next), "pocet": 10}), &g);
    let mut inputs = vec![SideInput::Orders(vec![]); 9];
    inputs[0] = SideInput::Orders(vec![attack]);
    let mut report = RoundReport::default();
    m.resolve_round(&inputs, &mut report);
    assert_eq!(report.discarded.len(), 1);
    assert_eq!(report.discarded[0].reason, DiscardReason::TargetFinalist);
    assert_eq!(m.units(b0), before, "its units are not spent");
    assert_eq!(m.owner(next), 3);
}

#[test]
fn the_resolution_order_rotates_over_nine_sides() {
    let mut lab = Lab::with_rounds(
        &["B.B.B", "..B..", "B.B.B"],
        &["P00_00", "P00_02", "P00_04", "P02_00", "P02_02", "P02_04", "P01_02"],
        30,
    );
    let mut report = RoundReport::default();
    assert_eq!(lab.m.seats(), 7);
    for round in 0..10u32 {
        let order: Vec<u8> = lab.m.resolution_order().collect();
        let start = (round % 7) as u8;
        let want: Vec<u8> = (0..7).map(|k| (start + k) % 7).collect();
        assert_eq!(order, want, "round {round}");
        lab.m.resolve_round(&vec![SideInput::Orders(vec![]); 7], &mut report);
    }
    let m = Match::new(final_map(60), MatchConfig::default());
    assert_eq!(m.resolution_order().collect::<Vec<_>>(), [0, 1, 2, 3, 4, 5, 6, 7, 8]);
    let mut m = m;
    for _ in 0..10 {
        m.resolve_round(&vec![SideInput::Orders(vec![]); 9], &mut report);
    }
    assert_eq!(m.round(), 10);
    assert_eq!(
        m.resolution_order().collect::<Vec<_>>(),
        [1, 2, 3, 4, 5, 6, 7, 8, 0],
        "round 10 starts at seat 10 mod 9 = 1"
    );
}

fn eight_and_the_council(map: Arc<gbely_world::Map>, mut seat0: Box<dyn Player>) -> gbely_engine::session::MatchRecord {
    let mut players: Vec<Box<dyn Player>> = vec![];
    players.push(std::mem::replace(&mut seat0, Box::new(DecidePlayer::new("x", Template::default()))));
    for k in 1..8 {
        if k % 2 == 0 {
            players.push(Box::new(DecidePlayer::new(format!("expander {k}"), Expander::default())));
        } else {
            players.push(Box::new(DecidePlayer::new(format!("template {k}"), Template::default())));
        }
    }
    players.push(Box::new(DecidePlayer::new("council", Council::new())));
    let mut refs: Vec<&mut dyn Player> = players.iter_mut().map(|p| p.as_mut() as &mut dyn Player).collect();
    play(map, &mut refs, PlayOptions { record: true, ..Default::default() }, &mut ())
}

#[test]
fn a_full_final_ends_with_a_table_that_adds_up_to_100() {
    let map = final_map(90);
    let rec = eight_and_the_council(map.clone(), Box::new(DecidePlayer::new("expander 0", Expander::default())));
    assert_eq!(rec.last_round, 149);
    let rows = final_table(&map, &rec);
    assert_eq!(rows.len(), 8);
    assert_eq!(rows.iter().map(|r| r.rank.unwrap()).collect::<Vec<_>>(), (1..=8).collect::<Vec<_>>());
    assert!(rows.windows(2).all(|w| w[0].share >= w[1].share));
    let finalists: f64 = rows.iter().map(|r| r.share.unwrap()).sum();
    let council = rec.outcome[8].score.unwrap();
    let neutral =
        (map.len() as u32 - rec.outcome.iter().map(|o| o.cells).sum::<u32>()) as f64 / map.len() as f64 * 100.0;
    assert!((finalists + council + neutral - 100.0).abs() < 1e-9, "{finalists} + {council} + {neutral}");
    assert!(rows.iter().all(|r| r.cells > 1), "every finalist expanded");
    gbely_engine::replays::verify(rec.replay.as_ref().unwrap()).unwrap();
}

/// Crashes from round 10 on.
struct Crasher;

impl Player for Crasher {
    fn name(&self) -> String {
        "crasher".into()
    }
    fn begin(&mut self, _obs: &Observation, _grid: &Grid) {}
    fn finish(&mut self) -> PlayerAnswer {
        PlayerAnswer::Violation { kind: ViolationKind::Crash, detail: "gone".into() }
    }
}

#[test]
fn a_disqualified_finalist_keeps_its_cells_while_the_rest_play_on() {
    let map = final_map(60);
    let rec = eight_and_the_council(map.clone(), Box::new(Crasher));
    let o = &rec.outcome[0];
    assert_eq!(o.disqualified, Some(3));
    assert_eq!(o.score, None);
    assert_eq!(rec.end_reason, EndReason::Rounds, "the final goes on");
    assert_eq!(rec.last_round, 149);
    assert!(o.cells >= 1 || o.eliminated.is_some());
    let rows = final_table(&map, &rec);
    assert_eq!(rows.last().unwrap().seat, 0);
    assert!(rows.last().unwrap().disqualified && rows.last().unwrap().rank.is_none());
    // Its base kept producing: unless the Council took it, it holds far more than it started with.
    let replay = rec.replay.unwrap();
    let b0 = map.seats()[0].base.index();
    if replay.final_state.owner[b0] == 0 {
        assert!(replay.final_state.units[b0] > 500.0, "{}", replay.final_state.units[b0]);
    }
}

#[test]
fn seats_are_assigned_reproducibly_and_can_be_chosen() {
    let map = final_map(60);
    let a = final_seating(&map, &[]).unwrap();
    assert_eq!(a, final_seating(&map, &[]).unwrap());
    let mut sorted = a.clone();
    sorted.sort();
    assert_eq!(sorted, (0..8).collect::<Vec<_>>());
    let pinned = final_seating(&map, &[5, 2]).unwrap();
    assert_eq!(pinned[5], 0, "entry 0 plays seat 5");
    assert_eq!(pinned[2], 1, "entry 1 plays seat 2");
    assert!(final_seating(&map, &[8]).is_err());
    assert!(final_seating(&map, &[1, 1]).is_err());
}
