//! Shares of the example agents against the Council on the reference map and seeded maps:
//! `cargo run --release -p gbely-engine --example calibrate -- [MAPS]`.
use std::sync::Arc;
use std::time::Instant;

use agents::{Expander, Template};
use gbely_council::Council;
use gbely_engine::game::{play, DecidePlayer, PlayOptions, Player};
use gbely_rules::Decide;
use gbely_world::Map;

fn duel(map: &Arc<Map>, a: impl Decide, b: impl Decide) -> (f64, f64, u32) {
    let mut pa = DecidePlayer::new("a", a);
    let mut pb = DecidePlayer::new("b", b);
    let mut players: [&mut dyn Player; 2] = [&mut pa, &mut pb];
    let rec = play(map.clone(), &mut players, PlayOptions::default(), &mut ());
    (rec.outcome[0].score.unwrap_or(0.0), rec.outcome[1].score.unwrap_or(0.0), rec.last_round)
}

fn main() {
    let n: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(20);
    let mut maps = vec![("gbely".to_string(), Arc::new(gbely_world::reference_map()))];
    for k in 0..n {
        let seed = format!("calibration-{k}");
        maps.push((seed.clone(), Arc::new(gbely_world::generate_duel(&seed, 60, 60).unwrap())));
    }
    println!("{:<16} {:>17} {:>17} {:>17}", "map", "template|council", "expander|council", "council|council");
    let t = Instant::now();
    for (name, map) in &maps {
        let a = duel(map, Template::default(), Council::new());
        let b = duel(map, Expander::default(), Council::new());
        let c = duel(map, Council::new(), Council::new());
        println!(
            "{:<16} {:>7.2} | {:>6.2} {:>7.2} | {:>6.2} {:>7.2} | {:>6.2}   (ends {}, {}, {})",
            name, a.0, a.1, b.0, b.1, c.0, c.1, a.2, b.2, c.2
        );
    }
    eprintln!("{:.2?}", t.elapsed());
}
