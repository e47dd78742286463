//! Profiles template vs template (benchmark (b)): `cargo run --release --example template_profile`.
use std::sync::Arc;

use agents::Template;
use gbely_engine::game::{play, DecidePlayer, PlayOptions, Player};

fn main() {
    let map = Arc::new(gbely_world::reference_map());
    let t = std::time::Instant::now();
    let n = 200;
    let mut cells = 0;
    for _ in 0..n {
        let (mut a, mut b) = (DecidePlayer::new("a", Template::default()), DecidePlayer::new("b", Template::default()));
        let mut players: [&mut dyn Player; 2] = [&mut a, &mut b];
        let rec = play(map.clone(), &mut players, PlayOptions::default(), &mut ());
        cells = rec.outcome[0].cells;
    }
    println!("{:.1} matches/s (seat 0 ends with {cells} cells)", n as f64 / t.elapsed().as_secs_f64());
}
