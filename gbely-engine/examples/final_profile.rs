//! Profiles a whole final with eight in-process expanders: `cargo run --release --example final_profile`.
use std::sync::Arc;

use agents::Expander;
use gbely_council::Council;
use gbely_engine::game::{play, DecidePlayer, PlayOptions, Player};

fn main() {
    let map = Arc::new(gbely_world::generate_final("bench", gbely_world::FinalConfig::default()).unwrap());
    let t = std::time::Instant::now();
    let n = 10;
    for _ in 0..n {
        let mut players: Vec<Box<dyn Player>> = (0..8)
            .map(|k| Box::new(DecidePlayer::new(format!("e{k}"), Expander::default())) as Box<dyn Player>)
            .collect();
        players.push(Box::new(DecidePlayer::new("council", Council::new())));
        let mut refs: Vec<&mut dyn Player> = players.iter_mut().map(|p| p.as_mut() as &mut dyn Player).collect();
        play(map.clone(), &mut refs, PlayOptions::default(), &mut ());
    }
    println!("{:.1} finals/s", n as f64 / t.elapsed().as_secs_f64());
}
