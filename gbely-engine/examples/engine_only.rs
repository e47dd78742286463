//! Profiles the engine alone on recorded commands (benchmark (a)): `cargo run --release --example engine_only`.
use std::sync::Arc;

use agents::Expander;
use gbely_engine::sim::{Match, MatchConfig, RoundReport, SideInput};
use gbely_rules::{Decide, Observation};

fn main() {
    let map = Arc::new(gbely_world::reference_map());
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
    let n = 300;
    let mut obs = [Observation::default(), Observation::default()];
    let t = std::time::Instant::now();
    let (mut t_obs, mut t_res) = (0.0, 0.0);
    for _ in 0..n {
        let mut m = Match::new(map.clone(), MatchConfig::default());
        for inputs in &rounds {
            let t0 = std::time::Instant::now();
            m.observe_into(0, &mut obs[0]);
            m.observe_into(1, &mut obs[1]);
            let t1 = std::time::Instant::now();
            m.resolve_round(inputs, &mut report);
            t_obs += (t1 - t0).as_secs_f64();
            t_res += t1.elapsed().as_secs_f64();
        }
    }
    let total = t.elapsed().as_secs_f64();
    println!(
        "{:.1} matches/s; per match: observations {:.2} ms, resolution {:.2} ms",
        n as f64 / total,
        t_obs / n as f64 * 1e3,
        t_res / n as f64 * 1e3
    );
}
