//! Replay sizes and the cost of recording, for the example matches on the reference map:
//! `cargo run --release -p gbely-engine --example replay_size`.
//!
//! For each match: its time without a replay, with the replay streamed as plain JSON and as
//! gzip (the fast level the engine writes), and the sizes; and the best gzip level for
//! comparison.
use std::io::Write;
use std::sync::Arc;
use std::time::Instant;

use agents::{Expander, Template};
use gbely_council::Council;
use gbely_engine::game::{play, play_to, DecidePlayer, PlayOptions, Player};
use gbely_engine::record::ReplayWriter;
use gbely_engine::sim::MatchConfig;
use gbely_rules::Decide;

fn players<A: Decide, B: Decide>(a: &dyn Fn() -> A, b: &dyn Fn() -> B) -> (DecidePlayer<A>, DecidePlayer<B>) {
    (DecidePlayer::new("a", a()), DecidePlayer::new("b", b()))
}

fn measure<A: Decide, B: Decide>(name: &str, a: &dyn Fn() -> A, b: &dyn Fn() -> B) {
    let map = Arc::new(gbely_world::reference_map());
    let dir = std::env::temp_dir();
    let (mut pa, mut pb) = players(a, b);
    let t = Instant::now();
    let rec = {
        let mut ps: [&mut dyn Player; 2] = [&mut pa, &mut pb];
        play(map.clone(), &mut ps, PlayOptions::default(), &mut ())
    };
    let bare = t.elapsed().as_secs_f64();
    let streamed = |file: &str| {
        let (mut pa, mut pb) = players(a, b);
        let mut ps: [&mut dyn Player; 2] = [&mut pa, &mut pb];
        let w = ReplayWriter::create(&dir.join(file)).expect("temp dir");
        let t = Instant::now();
        let r = play_to(map.clone(), &mut ps, MatchConfig::default(), w, &mut ());
        (t.elapsed().as_secs_f64(), r.replay_written.expect("streamed").expect("written"))
    };
    let (plain_s, plain) = streamed("size.json");
    let (gz_s, gz) = streamed("size.json.gz");
    let text = std::fs::read(dir.join("size.json")).expect("written");
    let t = Instant::now();
    let mut best = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    best.write_all(&text).expect("in memory");
    let best = best.finish().expect("in memory").len();
    let best_s = t.elapsed().as_secs_f64();
    println!(
        "{name:<20} match {bare:>6.3} s | plain {:>6.2} MB, {plain_s:>6.3} s | gzip fast {:>5.2} MB, {gz_s:>6.3} s \
         | gzip best {:>5.2} MB, +{best_s:.2} s | shares {:.2} / {:.2}",
        plain as f64 / 1e6,
        gz as f64 / 1e6,
        best as f64 / 1e6,
        rec.outcome[0].score.unwrap_or(0.0),
        rec.outcome[1].score.unwrap_or(0.0)
    );
}

fn main() {
    measure("template vs council", &Template::default, &Council::new);
    measure("expander vs council", &Expander::default, &Council::new);
    measure("expander vs expander", &Expander::default, &Expander::default);
    measure("council vs council", &Council::new, &Council::new);
}
