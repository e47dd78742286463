//! Invariants under random commands on random maps (proptest).

use std::sync::Arc;

use gbely_engine::game::{play, PlayOptions};
use gbely_engine::runner::player::{Player, PlayerAnswer};
use gbely_engine::sim::{Match, MatchConfig, RoundReport, SideInput};
use gbely_engine::wire::parse_command;
use gbely_rules::{Grid, Observation};
use proptest::prelude::*;
use serde_json::{json, Value};

/// A random command in wire form: mostly plausible, sometimes nonsense.
fn command(size: u32) -> impl Strategy<Value = Value> {
    let id = (0..size + 2, 0..size + 2).prop_map(|(r, c)| Value::from(format!("P{r:02}_{c:02}")));
    let amount = prop_oneof![
        (1u32..40).prop_map(|x| json!(x)),
        (0.0f64..50.0).prop_map(|x| json!(x)),
        Just(json!(0)),
        Just(json!(-3)),
        Just(json!(1e300)),
        Just(json!("5")),
    ];
    prop_oneof![
        (id.clone(), id.clone(), amount.clone())
            .prop_map(|(z, na, p)| json!({"typ": "MOVE", "z": z, "na": na, "pocet": p})),
        (id.clone(), id.clone(), amount.clone())
            .prop_map(|(z, na, p)| json!({"typ": "ATTACK", "z": z, "na": na, "pocet": p})),
        (id.clone(), amount).prop_map(|(pole, i)| json!({"typ": "FORTIFY", "pole": pole, "investicia": i})),
        Just(json!(17)),
        Just(json!({"typ": "NUKE"})),
    ]
}

/// Commands that mostly name a side's own cells and their neighbours, so that many are valid.
fn near_own(obs: &Observation, grid: &Grid, picks: &[(u16, u16, u16, u8)]) -> Vec<Value> {
    let mut out = Vec::new();
    if obs.own.is_empty() {
        return out;
    }
    for &(a, b, amount, kind) in picks {
        let from = &obs.own[a as usize % obs.own.len()];
        let to = from.neighbours.as_slice()[b as usize % from.neighbours.len()];
        let (z, na) = (grid.id(from.cell), grid.id(to));
        let p = amount as f64 / 4.0;
        out.push(match kind % 3 {
            0 => json!({"typ": "ATTACK", "z": z, "na": na, "pocet": p}),
            1 => json!({"typ": "MOVE", "z": z, "na": na, "pocet": p}),
            _ => json!({"typ": "FORTIFY", "pole": z, "investicia": p}),
        });
    }
    out
}

fn named_cells(list: &[Value], grid: &Grid) -> Vec<usize> {
    let mut v = Vec::new();
    for c in list {
        for key in ["z", "na", "pole"] {
            if let Some(cell) = c.get(key).and_then(Value::as_str).and_then(|s| grid.parse(s)) {
                v.push(cell.index());
            }
        }
    }
    v
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn random_commands_keep_units_sane_and_touch_only_named_cells(
        seed in "[a-z]{1,8}",
        size in 12u32..20,
        rounds in proptest::collection::vec(
            (proptest::collection::vec(command(20), 0..12),
             proptest::collection::vec((any::<u16>(), any::<u16>(), 0u16..200, any::<u8>()), 0..30),
             proptest::collection::vec((any::<u16>(), any::<u16>(), 0u16..200, any::<u8>()), 0..30)),
            1..25),
    ) {
        let map = Arc::new(gbely_world::generate_duel(&seed, size, size).unwrap());
        let grid = map.grid().clone();
        let mut m = Match::new(map.clone(), MatchConfig::default());
        let mut report = RoundReport::default();
        for (noise, picks0, picks1) in rounds {
            if m.is_over() { break; }
            let o0 = m.observe(0);
            let o1 = m.observe(1);
            let mut l0 = near_own(&o0, &grid, &picks0);
            l0.extend(noise.iter().cloned());
            let l1 = near_own(&o1, &grid, &picks1);
            let before: Vec<(u8, f64, f64)> = grid.cells().map(|c| (m.owner(c), m.units(c), m.fortification(c))).collect();
            let mut named = named_cells(&l0, &grid);
            named.extend(named_cells(&l1, &grid));
            let inputs = [
                SideInput::Orders(l0.iter().map(|v| parse_command(v, &grid)).collect()),
                SideInput::Orders(l1.iter().map(|v| parse_command(v, &grid)).collect()),
            ];
            m.resolve_round(&inputs, &mut report);
            for c in grid.cells() {
                let (u, f) = (m.units(c), m.fortification(c));
                prop_assert!(u >= 0.0 && !u.is_nan(), "units {u} at {}", grid.id(c));
                prop_assert!(f >= 0.0 && !f.is_nan(), "fortification {f} at {}", grid.id(c));
                if !named.contains(&c.index()) {
                    prop_assert_eq!(before[c.index()], (m.owner(c), u, f), "{} changed without a command", grid.id(c));
                }
            }
            let counted: u32 = (0..2).map(|s| m.cell_count(s)).sum();
            let owned = grid.cells().filter(|&c| m.owner(c) != gbely_engine::NEUTRAL).count() as u32;
            prop_assert_eq!(counted, owned);
        }
    }

    #[test]
    fn the_same_inputs_twice_give_identical_replays(
        seed in "[a-z]{1,8}",
        picks in proptest::collection::vec(proptest::collection::vec((any::<u16>(), any::<u16>(), 0u16..200, any::<u8>()), 0..20), 1..30),
    ) {
        let run = || {
            let map = Arc::new(gbely_world::generate_duel(&seed, 16, 16).unwrap());
            let mut a = Scripted { picks: picks.clone(), round: 0, pending: Vec::new() };
            let mut b = Scripted { picks: picks.iter().rev().cloned().collect(), round: 0, pending: Vec::new() };
            let mut players: [&mut dyn Player; 2] = [&mut a, &mut b];
            let opts = PlayOptions { config: MatchConfig { rounds: picks.len() as u32 }, record: true };
            play(map, &mut players, opts, &mut ()).replay.unwrap().to_json()
        };
        let first = run();
        prop_assert_eq!(&first, &run());
        // And a replay re-plays to itself: its answers, submitted again to a recording session,
        // give the same document.
        let replay = gbely_world::Replay::from_json(&first).unwrap();
        let map = Arc::new(replay.map.to_map().unwrap());
        let names = replay.seats.iter().map(|s| s.name.clone()).collect();
        let mut again = gbely_engine::session::Session::new(map, MatchConfig { rounds: replay.rounds }, names);
        again.record();
        for t in &replay.turns {
            for (seat, a) in t.answers.iter().enumerate() {
                if let Some(a) = gbely_engine::replays::recorded_answer(a) {
                    again.submit(seat as u8, a);
                }
            }
            again.advance();
        }
        prop_assert_eq!(again.finish().replay.unwrap().to_json(), first);
    }
}

/// Plays the picked commands round by round, in wire form.
struct Scripted {
    picks: Vec<Vec<(u16, u16, u16, u8)>>,
    round: usize,
    pending: Vec<Value>,
}

impl Player for Scripted {
    fn name(&self) -> String {
        "scripted".into()
    }
    fn begin(&mut self, obs: &Observation, grid: &Grid) {
        let picks = self.picks.get(self.round).cloned().unwrap_or_default();
        self.pending = near_own(obs, grid, &picks);
        self.round += 1;
    }
    fn finish(&mut self) -> PlayerAnswer {
        PlayerAnswer::Raw(std::mem::take(&mut self.pending))
    }
}
