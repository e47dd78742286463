//! The Council's behaviours on crafted positions (SPEC §11), its determinism, and calibration
//! against the example agents.

use std::sync::Arc;

use agents::{Expander, Template};
use gbely_council::{Council, StrongCouncil};
use gbely_engine::builtins::builtin_agent;
use gbely_engine::game::{play, PlayOptions};
use gbely_engine::runner::player::{DecidePlayer, Player};
use gbely_engine::sim::NEUTRAL;
use gbely_rules::{Command, Decide, Observation, Owner};

use crate::common::Lab;

/// A 7×5 field, all meadow but a hill at P02_03 and a river at P03_03. Seat 1 is the Council.
const FIELD: [&str; 5] = ["B......", ".......", "...^...", "...~...", "......B"];
const SEATS: [&str; 2] = ["P00_00", "P04_06"];

/// The Council's commands (seat 1) on a crafted position, as readable strings.
fn council_on(lab: &mut Lab) -> Vec<String> {
    let mut m = lab.m.clone();
    let obs = m.observe(1);
    let g = m.map().grid().clone();
    Council::new()
        .decide(&obs)
        .iter()
        .map(|c| match *c {
            Command::Attack { from, to, amount } => format!("ATTACK {} {} {}", g.id(from), g.id(to), amount),
            Command::Move { from, to, .. } => format!("MOVE {} {}", g.id(from), g.id(to)),
            Command::Fortify { cell, amount } => format!("FORTIFY {} {}", g.id(cell), amount),
        })
        .collect()
}

/// Seat 1 owns only P04_06 (its base) with `units`; every other cell neutral with garrison 9
/// unless set otherwise.
fn council_lab(units: f64) -> Lab {
    let mut lab = Lab::new(&FIELD, &SEATS);
    let cells: Vec<_> = lab.m.map().grid().cells().collect();
    for c in cells {
        if lab.m.owner(c) == NEUTRAL {
            lab.m.set_cell(c, NEUTRAL, 9.0, 0.0);
        }
    }
    lab.set("P04_06", 1, units, 0.0);
    lab
}

#[test]
fn it_takes_the_cheap_productive_neighbour_with_the_smallest_sure_force() {
    let mut lab = council_lab(10.0);
    lab.set("P04_05", NEUTRAL, 2.0, 0.0); // meadow: defence 2 → 3 surely wins
    lab.set("P03_06", NEUTRAL, 7.0, 0.0); // meadow: defence 7 → 8
    let cmds = council_on(&mut lab);
    assert_eq!(cmds, ["ATTACK P04_06 P04_05 3"]);

    // Same price, different production: the meadow over the river.
    let mut lab = council_lab(0.0);
    lab.set("P03_04", 1, 10.0, 0.0);
    lab.set("P02_04", NEUTRAL, 2.0, 0.0); // meadow, defence 2 → 3
    lab.set("P03_03", NEUTRAL, 1.5, 0.0); // river, defence 1.95 (+ rounding) → 3
    let cmds = council_on(&mut lab);
    assert_eq!(cmds[0], "ATTACK P03_04 P02_04 3");
}

#[test]
fn it_does_not_attack_what_it_cannot_take() {
    let mut lab = council_lab(8.0);
    // Neighbours P03_06 and P04_05 hold 9 (defence 9): 8 units cannot take them.
    let cmds = council_on(&mut lab);
    assert!(cmds.iter().all(|c| !c.starts_with("ATTACK")), "{cmds:?}");
}

#[test]
fn it_moves_interior_units_toward_the_front_avoiding_hills() {
    let mut lab = council_lab(0.0);
    // Own block around the hill; the front is the row-0 side. P03_03 (river) is interior; its
    // shortest ways to the front go through P02_03 (hill) or P02_02/P02_04 detours.
    for id in [
        "P04_06", "P04_05", "P04_04", "P04_03", "P04_02", "P03_06", "P03_05", "P03_04", "P03_02", "P03_03", "P02_06",
        "P02_05", "P02_04", "P02_03", "P02_02", "P03_01", "P04_01", "P02_01", "P04_00", "P03_00", "P02_00",
    ] {
        lab.set(id, 1, 0.0, 0.0);
    }
    lab.set("P04_04", 1, 12.0, 0.0);
    lab.set("P03_03", 1, 12.0, 0.0);
    let cmds = council_on(&mut lab);
    // P04_04 steps north (P03_04, meadow) toward row 2 (the front, next to row 1's neutrals).
    assert!(cmds.contains(&"MOVE P04_04 P03_04".to_string()), "{cmds:?}");
    // P03_03 is interior too: it sends its units on (which way is the next test's subject).
    assert!(cmds.iter().any(|c| c.starts_with("MOVE P03_03 ")), "{cmds:?}");
    // Front cells keep their units (they attack or hold).
    assert!(!cmds.iter().any(|c| c.starts_with("MOVE P02_")), "{cmds:?}");
}

#[test]
fn it_prefers_a_meadow_path_to_a_hill_of_the_same_length() {
    // P02_00 can step north onto the hill P01_00 or east onto the meadow P02_01; both are on
    // the front (each touches a neutral cell). North comes first in neighbour order, but only
    // 60 % of a column gets onto a hill in a round: the Council takes the meadow.
    let rows = ["...B.", "^^..B", "....."];
    let seats = ["P00_03", "P01_04"];
    let mut lab = Lab::new(&rows, &seats);
    for c in lab.m.map().grid().cells().collect::<Vec<_>>() {
        lab.m.set_cell(c, NEUTRAL, 30.0, 0.0);
    }
    lab.set("P00_03", 0, 5.0, 0.0);
    lab.set("P01_04", 1, 1.0, 0.0);
    for id in ["P01_00", "P02_01"] {
        lab.set(id, 1, 0.0, 0.0);
    }
    lab.set("P02_00", 1, 10.0, 0.0);
    let cmds = council_on(&mut lab);
    assert!(cmds.contains(&"MOVE P02_00 P02_01".to_string()), "{cmds:?}");
}

#[test]
fn it_concentrates_on_a_valuable_target_no_single_cell_can_take() {
    let mut lab = council_lab(0.0);
    lab.set("P03_05", 1, 6.0, 0.0);
    lab.set("P02_04", 1, 6.0, 0.0);
    lab.set("P04_05", 1, 0.0, 0.0);
    lab.set("P03_06", 1, 0.0, 0.0);
    lab.set("P02_05", NEUTRAL, 9.0, 0.0); // meadow, defence 9 → 10 needed; each has 6
    for id in ["P01_04", "P02_03", "P03_04", "P02_06", "P01_05"] {
        lab.set(id, NEUTRAL, 30.0, 0.0);
    }
    let cmds = council_on(&mut lab);
    let strikes: Vec<&String> = cmds.iter().filter(|c| c.contains(" P02_05 ")).collect();
    assert_eq!(strikes.len(), 2, "{cmds:?}");
    let total: f64 = strikes.iter().map(|c| c.rsplit(' ').next().unwrap().parse::<f64>().unwrap()).sum();
    assert_eq!(total, 10.0, "{cmds:?}");
}

#[test]
fn it_fortifies_a_threatened_border_and_not_a_safe_one() {
    let mut lab = council_lab(0.0);
    lab.set("P02_06", 1, 8.0, 0.0);
    lab.set("P01_06", 0, 30.0, 0.0); // an enemy that can take P02_06 (defence 8)
    let cmds = council_on(&mut lab);
    assert!(cmds.iter().any(|c| c.starts_with("FORTIFY P02_06 ")), "{cmds:?}");
    let amount: f64 =
        cmds.iter().find(|c| c.starts_with("FORTIFY")).unwrap().rsplit(' ').next().unwrap().parse().unwrap();
    assert!(amount <= 2.0, "sparingly: {amount}");

    let mut lab = council_lab(0.0);
    lab.set("P02_06", 1, 8.0, 0.0);
    lab.set("P01_06", 0, 3.0, 0.0); // a weak enemy: no threat
    let cmds = council_on(&mut lab);
    assert!(!cmds.iter().any(|c| c.starts_with("FORTIFY")), "{cmds:?}");
}

#[test]
fn it_treats_every_army_as_an_enemy() {
    // A hand-made final-mode observation: two different finalists next to the Council.
    let lab = council_lab(10.0);
    let mut m = lab.m.clone();
    let mut obs: Observation = m.observe(1);
    for v in obs.visible.iter_mut() {
        v.owner = Owner::Army(3);
        v.garrison = 30.0;
    }
    let cmds = Council::new().decide(&obs);
    assert!(
        cmds.iter().any(|c| matches!(c, Command::Fortify { .. })),
        "an armada_3 neighbour of 30 is a threat: {cmds:?}"
    );
    // And an armada cell weak enough is attacked like any enemy.
    for v in obs.visible.iter_mut() {
        v.garrison = 1.0;
    }
    let cmds = Council::new().decide(&obs);
    assert!(cmds.iter().any(|c| matches!(c, Command::Attack { .. })), "{cmds:?}");
}

#[test]
fn the_same_observation_gives_the_same_commands() {
    let map = Arc::new(gbely_world::reference_map());
    let mut m = gbely_engine::Match::new(map, Default::default());
    let mut c = Council::new();
    let mut report = Default::default();
    for _ in 0..30 {
        let obs = m.observe(1);
        let first = c.decide(&obs);
        assert_eq!(first, c.decide(&obs));
        assert_eq!(first, Council::new().decide(&obs));
        let other = Council::new().decide(&m.observe(0));
        m.resolve_round(
            &[
                gbely_engine::SideInput::Orders(other.into_iter().map(Ok).collect()),
                gbely_engine::SideInput::Orders(first.into_iter().map(Ok).collect()),
            ],
            &mut report,
        );
    }
}

fn shares(map: &Arc<gbely_world::Map>, a: impl Decide, b: impl Decide, record: bool) -> (f64, f64, Option<String>) {
    let mut pa = DecidePlayer::new("a", a);
    let mut pb = DecidePlayer::new("b", b);
    let mut players: [&mut dyn Player; 2] = [&mut pa, &mut pb];
    let rec = play(map.clone(), &mut players, PlayOptions { record, ..Default::default() }, &mut ());
    (rec.outcome[0].score.unwrap(), rec.outcome[1].score.unwrap(), rec.replay.map(|r| r.to_json()))
}

#[test]
fn council_against_council_twice_gives_identical_replays() {
    let map = Arc::new(gbely_world::reference_map());
    let (_, _, a) = shares(&map, Council::new(), Council::new(), true);
    let (_, _, b) = shares(&map, Council::new(), Council::new(), true);
    assert_eq!(a, b);
}

#[test]
fn calibration_template_loses_and_expander_wins() {
    let mut maps = vec![Arc::new(gbely_world::reference_map())];
    for seed in ["calib-a", "calib-b", "calib-c"] {
        maps.push(Arc::new(gbely_world::generate_duel(seed, 60, 60).unwrap()));
    }
    for map in &maps {
        let (t, c) = {
            let s = shares(map, Template::default(), Council::new(), false);
            (s.0, s.1)
        };
        assert!(c - t >= 8.0, "{}: the template should lose clearly: {t:.2} vs the Council {c:.2}", map.name());
        let (e, c) = {
            let s = shares(map, Expander::default(), Council::new(), false);
            (s.0, s.1)
        };
        assert!(e - c >= 3.0, "{}: the expander should beat the Council: {e:.2} vs {c:.2}", map.name());
    }
}

// --- The ladder of levels: `council:easy`, `council`, `council:strong` ---

#[test]
fn strong_carries_the_rest_of_its_units_with_the_attack() {
    // Own base P04_06 with 12 units; P04_05 a meadow of garrison 2: the smallest sure force is
    // floor(2.05 + 0.05) + 1 = 3. The other neighbour, P03_06, holds 9 (needs 10 > 12 − 3). The
    // rest (12 − 0.05 − 3 = 8.95 → 8 whole units) goes along with the attack: 11.
    let mut lab = council_lab(12.0);
    lab.set("P04_05", NEUTRAL, 2.0, 0.0);
    let mut m = lab.m.clone();
    let obs = m.observe(1);
    let cmds = StrongCouncil::new().decide(&obs);
    assert_eq!(cmds, [Command::Attack { from: lab.cell("P04_06"), to: lab.cell("P04_05"), amount: 11.0 }]);
}

#[test]
fn strong_splits_the_rest_between_its_targets_and_pools_for_any_target() {
    // Two targets of garrison 2 (need 3 each) from 20 units: 20 − 0.05 − 6 = 13.95 left, 6 each.
    let mut lab = council_lab(20.0);
    lab.set("P04_05", NEUTRAL, 2.0, 0.0);
    lab.set("P03_06", NEUTRAL, 2.0, 0.0);
    let mut m = lab.m.clone();
    let obs = m.observe(1);
    let cmds = StrongCouncil::new().decide(&obs);
    let amounts: Vec<f64> =
        cmds.iter().map(|c| if let Command::Attack { amount, .. } = c { *amount } else { 0.0 }).collect();
    assert_eq!(amounts, [9.0, 9.0], "{cmds:?}");

    // A river of garrison 5 (worst case behind the rounding 5.05 × 1.3 + 0.05 = 6.615 → 7) next
    // to two cells of 5 units, neither enough alone: they strike together. The Council does not
    // pool for a river (only for meadows and enemy cells). Every other neighbour holds 9.
    let mut lab = council_lab(0.0);
    lab.set("P04_03", 1, 5.0, 0.0);
    lab.set("P03_04", 1, 5.0, 0.0);
    lab.set("P03_03", NEUTRAL, 5.0, 0.0);
    let mut m = lab.m.clone();
    let obs = m.observe(1);
    let river = lab.cell("P03_03");
    let on_river = |cmds: &[Command]| -> f64 {
        cmds.iter()
            .map(|c| {
                if let Command::Attack { to, amount, .. } = *c {
                    if to == river {
                        amount
                    } else {
                        0.0
                    }
                } else {
                    0.0
                }
            })
            .sum()
    };
    let council = Council::new().decide(&obs);
    assert_eq!(on_river(&council), 0.0, "{council:?}");
    let strong = StrongCouncil::new().decide(&obs);
    assert_eq!(strong.len(), 2, "{strong:?}");
    // 4.95 + 4.95 ready: 7 to take it, and the whole 2 left over carried along.
    assert!((on_river(&strong) - 9.0).abs() < 1e-9, "{strong:?}");
}

/// Shares on the reference map and on `n` seeded maps: (map, share of seat 0, share of seat 1).
fn ladder(a: &str, b: &str, n: usize) -> Vec<(String, f64, f64)> {
    let mut maps = vec![Arc::new(gbely_world::reference_map())];
    maps.extend((0..n).map(|k| Arc::new(gbely_world::generate_duel(&format!("ladder-{k}"), 60, 60).unwrap())));
    maps.iter()
        .map(|map| {
            let mut pa = DecidePlayer::new(a, builtin_agent(a).unwrap());
            let mut pb = DecidePlayer::new(b, builtin_agent(b).unwrap());
            let mut players: [&mut dyn Player; 2] = [&mut pa, &mut pb];
            let rec = play(map.clone(), &mut players, PlayOptions::default(), &mut ());
            (map.name().to_string(), rec.outcome[0].score.unwrap(), rec.outcome[1].score.unwrap())
        })
        .collect()
}

#[test]
fn calibration_strong_beats_the_expander_by_ten_points_on_every_map() {
    // The margin: at least 10 points of share, on the reference map and on 20 generated
    // maps, playing the Council's seat as on the leaderboard.
    for (map, expander, strong) in ladder("expander-rs", "council:strong", 20) {
        assert!(strong - expander >= 10.0, "{map}: council:strong {strong:.2} vs the expander {expander:.2}");
    }
}

#[test]
fn calibration_easy_loses_to_the_template_which_loses_to_the_council() {
    for (map, template, easy) in ladder("template-rs", "council:easy", 3) {
        assert!(template - easy >= 5.0, "{map}: the template {template:.2} should beat council:easy {easy:.2}");
    }
    for (map, template, council) in ladder("template-rs", "council", 3) {
        assert!(council - template >= 5.0, "{map}: the Council {council:.2} should beat the template {template:.2}");
    }
}

#[test]
fn every_level_decides_the_same_way_from_the_same_observation() {
    let map = Arc::new(gbely_world::reference_map());
    for level in ["council:easy", "council:strong"] {
        let mut m = gbely_engine::Match::new(map.clone(), Default::default());
        let mut agent = builtin_agent(level).unwrap();
        let mut report = Default::default();
        for _ in 0..40 {
            let obs = m.observe(1);
            let first = agent.decide(&obs);
            assert_eq!(first, agent.decide(&obs), "{level}");
            assert_eq!(first, builtin_agent(level).unwrap().decide(&obs), "{level}");
            let other = Expander::default().decide(&m.observe(0));
            m.resolve_round(
                &[
                    gbely_engine::SideInput::Orders(other.into_iter().map(Ok).collect()),
                    gbely_engine::SideInput::Orders(first.into_iter().map(Ok).collect()),
                ],
                &mut report,
            );
        }
    }
}

// --- The Council's kept distances: exactly a fresh Council's decisions ---

/// Plays a whole match on `map` with `players` (one per seat; `None` for a Council that keeps
/// its distances to the front from round to round), and checks every such Council's commands
/// each round against the from-scratch Council's on the same observation, and every 10th round
/// against a fresh keeping Council's. Returns how many decisions repaired and rebuilt the kept state.
fn kept_council_matches_fresh(map: gbely_world::Map, mut players: Vec<Option<Box<dyn Decide>>>) -> (u64, u64) {
    let name = map.name().to_string();
    let mut m = gbely_engine::Match::new(Arc::new(map), Default::default());
    assert_eq!(players.len(), m.seats());
    let mut councils: Vec<Council> = players.iter().map(|_| Council::new().keeping()).collect();
    let mut report = Default::default();
    let mut obs = Observation::default();
    while !m.is_over() {
        let mut inputs = Vec::new();
        for seat in 0..m.seats() {
            if !m.is_active(seat as u8) {
                inputs.push(gbely_engine::SideInput::Nothing);
                continue;
            }
            m.observe_into(seat as u8, &mut obs);
            let cmds = match &mut players[seat] {
                Some(p) => p.decide(&obs),
                None => {
                    let kept = councils[seat].decide(&obs);
                    let reference = Council::new().decide(&obs);
                    assert_eq!(kept, reference, "{name}, round {}, seat {seat}: kept against from scratch", m.round());
                    if m.round().is_multiple_of(10) {
                        assert_eq!(
                            kept,
                            Council::new().keeping().decide(&obs),
                            "{name}, round {}, seat {seat}: fresh",
                            m.round()
                        );
                    }
                    kept
                }
            };
            inputs.push(gbely_engine::SideInput::Orders(cmds.into_iter().map(Ok).collect()));
        }
        m.resolve_round(&inputs, &mut report);
    }
    let t = councils.iter().map(|c| c.kept_stats()).fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    t
}

fn expander() -> Option<Box<dyn Decide>> {
    Some(Box::new(Expander::default()))
}

#[test]
fn the_kept_council_decides_as_a_fresh_one_on_the_reference_map() {
    let map = || gbely_world::reference_map();
    let mut total = (0, 0);
    for players in [
        vec![expander(), None],
        vec![None, None],
        vec![Some(Box::new(StrongCouncil::new()) as Box<dyn Decide>), None],
        vec![Some(Box::new(Template::default()) as Box<dyn Decide>), None],
    ] {
        let (r, b) = kept_council_matches_fresh(map(), players);
        total = (total.0 + r, total.1 + b);
    }
    // Both paths ran: most decisions repair, a few (the first rounds, big changes) rebuild.
    assert!(total.0 > 4 * total.1 && total.1 > 0, "repairs and rebuilds: {total:?}");
}

#[test]
fn the_kept_council_decides_as_a_fresh_one_on_generated_maps() {
    for (seed, w, h) in [
        ("kept-a", 12, 12),
        ("kept-g", 12, 12),
        ("kept-b", 20, 31),
        ("kept-c", 45, 45),
        ("kept-h", 60, 33),
        ("kept-d", 100, 80),
        ("kept-e", 160, 160),
    ] {
        let map = || gbely_world::generate_duel(seed, w, h).unwrap();
        let (repairs, rebuilds) = kept_council_matches_fresh(map(), vec![expander(), None]);
        assert!(repairs > 0 && rebuilds > 0, "{seed}: repairs {repairs}, rebuilds {rebuilds}");
        kept_council_matches_fresh(map(), vec![None, Some(Box::new(StrongCouncil::new()))]);
        kept_council_matches_fresh(map(), vec![None, None]);
    }
}

/// The final's eight armies and the Council in the centre: kept Councils in the centre and on
/// every other army's seat, the expander on the others.
#[test]
fn the_kept_council_decides_as_a_fresh_one_in_a_final() {
    for (seed, size) in [("kept", 40), ("kept-90", 90)] {
        let map = gbely_world::generate_final(seed, gbely_world::FinalConfig::for_size(size)).unwrap();
        assert_eq!(map.seats().len(), 9);
        let players = (0..9).map(|k| if k % 2 == 0 { None } else { expander() }).collect();
        let (repairs, rebuilds) = kept_council_matches_fresh(map, players);
        assert!(repairs > 0 && rebuilds > 0, "{seed}: repairs {repairs}, rebuilds {rebuilds}");
    }
}

/// Observations no round follows: another seat's, another map's, rounds skipped and gone back
/// to, the same one twice; every one decided as a fresh Council decides it.
#[test]
fn the_kept_council_follows_any_sequence_of_observations() {
    let mut seen = Vec::new();
    for map in [gbely_world::reference_map(), gbely_world::generate_duel("kept-f", 30, 24).unwrap()] {
        let mut m = gbely_engine::Match::new(Arc::new(map), Default::default());
        let (mut a, mut b) = (Expander::default(), Council::new());
        let mut report = Default::default();
        while !m.is_over() {
            let (oa, ob) = (m.observe(0), m.observe(1));
            let inputs = [
                gbely_engine::SideInput::Orders(a.decide(&oa).into_iter().map(Ok).collect()),
                gbely_engine::SideInput::Orders(b.decide(&ob).into_iter().map(Ok).collect()),
            ];
            seen.push(oa);
            seen.push(ob);
            m.resolve_round(&inputs, &mut report);
        }
    }
    // A fixed walk through them: small and large jumps, back and forth, repeats.
    let mut council = Council::new().keeping();
    let mut k = 7usize;
    for step in 0..600usize {
        k = match step % 5 {
            0 => (k + 2) % seen.len(),
            1 => k,
            2 => (k + 6) % seen.len(),
            3 => (k * 7919 + 13) % seen.len(),
            _ => k.saturating_sub(4),
        };
        let obs = &seen[k];
        assert_eq!(council.decide(obs), Council::new().decide(obs), "observation {k}, step {step}");
    }
    let (repairs, rebuilds) = council.kept_stats();
    assert!(repairs > 100 && rebuilds > 10, "repairs {repairs}, rebuilds {rebuilds}");
}
