//! Profiles the Council's decision at full territory: `cargo run --release --example council_full`.
use std::sync::Arc;

use gbely_council::Council;
use gbely_engine::sim::{Match, MatchConfig};
use gbely_rules::Decide;

fn main() {
    let map = Arc::new(gbely_world::reference_map());
    let mut m = Match::new(map.clone(), MatchConfig::default());
    for c in map.grid().cells() {
        m.set_cell(c, 1, 5.0 + (c.0 % 7) as f64, 0.0);
    }
    m.set_cell(map.seats()[0].base, 0, 10.0, 0.0);
    let full = m.observe(1);
    let mut council = Council::new();
    let t = std::time::Instant::now();
    let n = 20_000;
    let mut cmds = 0;
    for _ in 0..n {
        cmds += std::hint::black_box(council.decide(&full)).len();
    }
    println!("{:.1} µs per decision, {} commands", t.elapsed().as_secs_f64() * 1e6 / n as f64, cmds / n);
}
