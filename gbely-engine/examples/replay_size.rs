//! Replay sizes of the example matches on the reference map (plain and gzip):
//! `cargo run --release -p gbely-engine --example replay_size`.
use std::sync::Arc;

use agents::{Expander, Template};
use gbely_council::Council;
use gbely_engine::game::{play, DecidePlayer, PlayOptions, Player};
use gbely_rules::Decide;

fn size(name: &str, a: impl Decide, b: impl Decide) {
    let map = Arc::new(gbely_world::reference_map());
    let mut pa = DecidePlayer::new("a", a);
    let mut pb = DecidePlayer::new("b", b);
    let mut players: [&mut dyn Player; 2] = [&mut pa, &mut pb];
    let rec = play(map, &mut players, PlayOptions { record: true, ..Default::default() }, &mut ());
    let dir = std::env::temp_dir();
    let plain = gbely_engine::record::write_replay(&dir.join("size.json"), rec.replay.as_ref().unwrap()).unwrap();
    let gz = gbely_engine::record::write_replay(&dir.join("size.json.gz"), rec.replay.as_ref().unwrap()).unwrap();
    println!(
        "{name:<22} {:>9.2} MB plain {:>7.2} MB gzip   shares {:.2} / {:.2}",
        plain as f64 / 1e6,
        gz as f64 / 1e6,
        rec.outcome[0].score.unwrap_or(0.0),
        rec.outcome[1].score.unwrap_or(0.0)
    );
}

fn main() {
    size("template vs council", Template::default(), Council::new());
    size("expander vs council", Expander::default(), Council::new());
    size("council vs council", Council::new(), Council::new());
}
