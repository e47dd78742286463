//! Engine speed on the reference map, one core. Prints matches per second for:
//! (a) the engine alone re-playing the recorded commands of a full 150-round match between two
//!     expanding agents (production, resolution and both observations every round);
//! (b) two in-process template agents (attack the weakest neighbour), deciding every round;
//! (c) the Council against the expander, and the Council's time per decision at full territory;
//! (d) a whole final: eight in-process expanders and the Council on a 90×90 final map.
//!
//! `cargo bench -p gbely-engine --bench engine` (add `-- --quick` for a short run, as CI does;
//! `-- --count PART` plays one part once for `tools/instructions`, which counts its
//! instructions: `final`, `full` (the Council's decision and the engine's round at full
//! territory), `replay` and `no-replay` (a match streamed to a replay file, and not)).

use std::sync::Arc;
use std::time::{Duration, Instant};

use agents::{Expander, Template};
use gbely_council::Council;
use gbely_engine::game::{play, PlayOptions};
use gbely_engine::runner::player::{DecidePlayer, Player};
use gbely_engine::sim::{Match, MatchConfig, RoundReport, SideInput};
use gbely_rules::{Command, Decide, Observation};
use gbely_world::Map;

fn per_second(budget: Duration, mut f: impl FnMut()) -> (f64, u32) {
    f(); // warm up
    let start = Instant::now();
    let mut n = 0;
    while start.elapsed() < budget || n < 3 {
        f();
        n += 1;
    }
    (n as f64 / start.elapsed().as_secs_f64(), n)
}

fn record_orders(map: &Arc<Map>) -> Vec<[SideInput; 2]> {
    let mut m = Match::new(map.clone(), MatchConfig::default());
    let (mut a, mut b) = (Expander::default(), Expander::default());
    let mut rounds = Vec::new();
    let mut report = RoundReport::default();
    while !m.is_over() {
        let oa = m.observe(0);
        let ob = m.observe(1);
        let inputs = [
            SideInput::Orders(a.decide(&oa).into_iter().map(Ok).collect()),
            SideInput::Orders(b.decide(&ob).into_iter().map(Ok).collect()),
        ];
        m.resolve_round(&inputs, &mut report);
        rounds.push(inputs);
    }
    rounds
}

/// A final: eight in-process expanders and the Council; the rounds it lasted.
#[inline(never)]
fn final_match(fmap: &Arc<Map>) -> u32 {
    let mut players: Vec<Box<dyn Player>> =
        (0..8).map(|k| Box::new(DecidePlayer::new(format!("e{k}"), Expander::default())) as Box<dyn Player>).collect();
    players.push(Box::new(DecidePlayer::new("council", Council::new())));
    let mut refs: Vec<&mut dyn Player> = players.iter_mut().map(|p| p.as_mut() as &mut dyn Player).collect();
    play(fmap.clone(), &mut refs, PlayOptions::default(), &mut ()).last_round + 1
}

/// A match whose Council owns the whole map but one cell (seat 0's base).
fn full_territory(map: &Arc<Map>) -> Match {
    let mut m = Match::new(map.clone(), MatchConfig::default());
    for c in map.grid().cells() {
        m.set_cell(c, 1, 5.0 + (c.0 % 7) as f64, 0.0);
    }
    m.set_cell(map.seats()[0].base, 0, 10.0, 0.0);
    m
}

#[inline(never)]
fn council_full_decision(council: &mut Council, full: &Observation) -> Vec<Command> {
    council.decide(full)
}

/// The engine's own work for a round at full territory: production, both observations, and
/// resolving the Council's commands (every interior cell moves).
#[inline(never)]
fn engine_full_round(m: &mut Match, inputs: &[SideInput; 2], obs: &mut [Observation; 2], report: &mut RoundReport) {
    m.start_round();
    m.observe_into(0, &mut obs[0]);
    m.observe_into(1, &mut obs[1]);
    m.resolve_round(inputs, report);
}

/// Two in-process expanders (their commands stored in the replay, as an agent's are), with the
/// replay streamed to `replay` as the engine writes it, or without one; the rounds played.
#[inline(never)]
fn expander_match(map: &Arc<Map>, replay: Option<&std::path::Path>) -> u32 {
    let (mut a, mut b) = (DecidePlayer::new("a", Expander::default()), DecidePlayer::new("b", Expander::default()));
    let mut players: [&mut dyn Player; 2] = [&mut a, &mut b];
    let record = match replay {
        Some(path) => {
            let writer = gbely_engine::recorder::ReplayWriter::create(path).expect("a replay file");
            gbely_engine::game::play_to(map.clone(), &mut players, MatchConfig::default(), writer, &mut ())
        }
        None => play(map.clone(), &mut players, PlayOptions::default(), &mut ()),
    };
    record.last_round + 1
}

/// `--count PART`: one part, once, under callgrind (`tools/instructions`). Prints what the
/// counts are per: `callgrind: FUNCTION N UNIT` for a function's inclusive count, `callgrind-total:
/// N UNIT` for the whole run's (compared with another run's).
fn count(part: &str, map: &Arc<Map>) {
    match part {
        "final" => {
            let fmap = Arc::new(gbely_world::generate_final("bench", gbely_world::FinalConfig::default()).unwrap());
            let rounds = final_match(&fmap);
            println!("callgrind: engine::final_match {rounds} final-rounds");
        }
        "full" => {
            let mut m = full_territory(map);
            let full = m.observe(1);
            let mut council = Council::new();
            let k = 20;
            let mut cmds = Vec::new();
            for _ in 0..k {
                cmds = std::hint::black_box(council_full_decision(&mut council, &full));
            }
            let inputs = [SideInput::Orders(vec![]), SideInput::Orders(cmds.into_iter().map(Ok).collect())];
            let (mut obs, mut report) = ([Observation::default(), Observation::default()], RoundReport::default());
            for _ in 0..k {
                let mut mm = m.clone();
                engine_full_round(&mut mm, &inputs, &mut obs, &mut report);
            }
            println!("callgrind: engine::council_full_decision {k} decisions");
            println!("callgrind: engine::engine_full_round {k} rounds");
        }
        "replay" | "no-replay" => {
            let dir = std::env::temp_dir().join(format!("gbely-engine-bench-{}", std::process::id()));
            std::fs::create_dir_all(&dir).expect("a temporary folder");
            let path = dir.join("replay.json.gz");
            let rounds = expander_match(map, (part == "replay").then_some(path.as_path()));
            let _ = std::fs::remove_dir_all(&dir);
            println!("callgrind-total: {rounds} match-rounds");
        }
        other => panic!("--count {other}: final, full, replay or no-replay"),
    }
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let args: Vec<String> = std::env::args().collect();
    if let Some(k) = args.iter().position(|a| a == "--count") {
        let map = Arc::new(gbely_world::reference_map());
        count(args.get(k + 1).map_or("", String::as_str), &map);
        return;
    }
    let budget = Duration::from_millis(if quick { 200 } else { 3000 });
    let map = Arc::new(gbely_world::reference_map());

    // (a) Engine alone.
    let recorded = record_orders(&map);
    let mut obs = [Observation::default(), Observation::default()];
    let mut report = RoundReport::default();
    let mut final_cells = (0, 0);
    let (mut t_obs, mut t_res) = (Duration::ZERO, Duration::ZERO);
    let (rate_a, n) = per_second(budget, || {
        let mut m = Match::new(map.clone(), MatchConfig::default());
        for inputs in &recorded {
            let t0 = Instant::now();
            m.observe_into(0, &mut obs[0]);
            m.observe_into(1, &mut obs[1]);
            let t1 = Instant::now();
            m.resolve_round(inputs, &mut report);
            t_obs += t1 - t0;
            t_res += t1.elapsed();
        }
        final_cells = (m.cell_count(0), m.cell_count(1));
    });
    let per = |t: Duration| t.as_secs_f64() * 1e3 / (n + 1) as f64;
    println!("(a) engine alone, replaying expander vs expander: {rate_a:8.0} matches/s  ({n} matches; final cells {final_cells:?}; goal ≥ 1000)");
    println!("    per match: observations {:.2} ms, production and resolution {:.2} ms", per(t_obs), per(t_res));

    // (b) Two template agents deciding every round.
    let (rate_b, n) = per_second(budget, || {
        let (mut a, mut b) = (DecidePlayer::new("a", Template::default()), DecidePlayer::new("b", Template::default()));
        let mut players: [&mut dyn Player; 2] = [&mut a, &mut b];
        play(map.clone(), &mut players, PlayOptions::default(), &mut ());
    });
    println!("(b) template vs template, deciding every round:   {rate_b:8.0} matches/s  ({n} matches; goal ≥ 300)");

    // (c) Council vs expander with decisions.
    let (rate_c, n) = per_second(budget, || {
        let (mut a, mut b) = (DecidePlayer::new("a", Expander::default()), DecidePlayer::new("b", Council::new()));
        let mut players: [&mut dyn Player; 2] = [&mut a, &mut b];
        play(map.clone(), &mut players, PlayOptions::default(), &mut ());
    });
    println!("(c) expander vs council:                          {rate_c:8.0} matches/s  ({n} matches)");

    // (d) The final: eight in-process expanders and the Council on a 90×90 final map.
    let fmap = Arc::new(gbely_world::generate_final("bench", gbely_world::FinalConfig::default()).unwrap());
    let (rate_d, n) = per_second(budget, || {
        final_match(&fmap);
    });
    println!("(d) final, 8 expanders + council at 90×90:        {rate_d:8.1} matches/s  ({n} matches; goal ≥ 30)");

    // The Council's decision at full territory: it owns the whole map but one cell.
    let mut m = full_territory(&map);
    let full = m.observe(1);
    let mut council = Council::new();
    let (decisions, n) = per_second(budget, || {
        std::hint::black_box(council_full_decision(&mut council, &full));
    });
    let mut obs = Observation::default();
    let (observations, _) = per_second(budget, || m.observe_into(1, &mut obs));
    // The engine's own work for such a round: production, both observations, and resolving the
    // Council's commands (every interior cell moves).
    let cmds = Council::new().decide(&full);
    let inputs = [SideInput::Orders(vec![]), SideInput::Orders(cmds.iter().copied().map(Ok).collect())];
    let mut both = [Observation::default(), Observation::default()];
    let mut report = RoundReport::default();
    let (engine_rounds, _) = per_second(budget, || {
        let mut mm = m.clone();
        engine_full_round(&mut mm, &inputs, &mut both, &mut report);
    });
    let (clones, _) = per_second(budget, || {
        std::hint::black_box(m.clone());
    });
    println!(
        "    council decision at full territory ({} cells): {:6.1} µs  ({n} decisions); building that observation: {:6.1} µs; the engine's round there: {:6.1} µs",
        full.own.len(),
        1e6 / decisions,
        1e6 / observations,
        1e6 / engine_rounds - 1e6 / clones
    );
}
