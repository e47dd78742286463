//! Replay sizes and the cost of recording, for the example matches on the reference map:
//! `cargo run --release -p gbely-engine --example replay_size`.
//!
//! For each match: its time without a replay, with the replay streamed as plain JSON and as
//! gzip as the engine writes it (level 6, on a thread of its own), and the sizes; and what gzip
//! levels 6 and 9 make of the plain text, for comparison. Built-in agents' commands are not
//! stored (a reader regenerates them); "stored" rows play the Rust expander as an agent of yours.
use std::io::Write;
use std::sync::Arc;
use std::time::Instant;

use agents::{Expander, Template};
use gbely_engine::game::{play, play_to, PlayOptions};
use gbely_engine::recorder::ReplayWriter;
use gbely_engine::runner::player::{DecidePlayer, Player};
use gbely_engine::sim::MatchConfig;
use gbely_rules::{Command, Decide, Notes, Observation};

type Make = dyn Fn() -> Box<dyn Player>;

/// The expander writing about 2 KiB of notes a round (what a seat may keep every round,
/// `recorder::NOTE_BYTES_PER_ROUND`): its cells and what it saw, numbers that change from round
/// to round, and a note on each of its first five attacks' targets.
#[derive(Default)]
struct Noted(Expander, Option<Notes>);

impl Decide for Noted {
    fn decide(&mut self, obs: &Observation) -> Vec<Command> {
        let cmds = self.0.decide(obs);
        let mut text = format!("round {}: {} cells, {} seen;", obs.round, obs.own.len(), obs.visible.len());
        let own = obs.own.iter().map(|c| (c.cell.0, c.units));
        let seen = obs.visible.iter().map(|v| (v.cell.0, v.garrison + v.fortification));
        for (k, (cell, units)) in own.chain(seen).cycle().enumerate() {
            if text.len() > 1900 {
                break;
            }
            text +=
                &format!(" #{cell} {units:.1}/{:.2};", ((k * 7919 + obs.round as usize * 31) % 1000) as f64 / 100.0);
        }
        let cells = cmds
            .iter()
            .filter_map(|c| match *c {
                Command::Attack { to, amount, .. } => Some((to, format!("target: sent {amount:.1}"))),
                _ => None,
            })
            .take(5)
            .collect();
        self.1 = Some(Notes { text, cells, draw: Vec::new() });
        cmds
    }
    fn notes(&mut self) -> Option<Notes> {
        self.1.take()
    }
}

fn players(a: &Make, b: &Make) -> (Box<dyn Player>, Box<dyn Player>) {
    (a(), b())
}

fn measure(name: &str, a: &Make, b: &Make) {
    let map = Arc::new(gbely_world::reference_map());
    let dir = std::env::temp_dir();
    let (mut pa, mut pb) = players(a, b);
    let t = Instant::now();
    let rec = {
        let mut ps: [&mut dyn Player; 2] = [pa.as_mut(), pb.as_mut()];
        play(map.clone(), &mut ps, PlayOptions::default(), &mut ())
    };
    let bare = t.elapsed().as_secs_f64();
    let streamed = |file: &str| {
        let (mut pa, mut pb) = players(a, b);
        let mut ps: [&mut dyn Player; 2] = [pa.as_mut(), pb.as_mut()];
        let w = ReplayWriter::create(&dir.join(file)).expect("temp dir");
        let t = Instant::now();
        let r = play_to(map.clone(), &mut ps, MatchConfig::default(), w, &mut ());
        (t.elapsed().as_secs_f64(), r.replay_written.expect("streamed").expect("written"))
    };
    let (plain_s, plain) = streamed("size.json");
    let (gz_s, gz) = streamed("size.json.gz");
    let text = std::fs::read(dir.join("size.json")).expect("written");
    let level = |l: u32| {
        let t = Instant::now();
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(l));
        enc.write_all(&text).expect("in memory");
        (enc.finish().expect("in memory").len(), t.elapsed().as_secs_f64())
    };
    let (default, default_s) = level(6);
    let (best, best_s) = level(9);
    println!(
        "{name:<28} match {bare:>6.3} s | plain {:>6.2} MB, {plain_s:>6.3} s | .gz as written {:>5.2} MB, {gz_s:>6.3} s \
         | level 6 {:>5.2} MB, +{default_s:.2} s | level 9 {:>5.2} MB, +{best_s:.2} s | shares {:.2} / {:.2}",
        plain as f64 / 1e6,
        gz as f64 / 1e6,
        default as f64 / 1e6,
        best as f64 / 1e6,
        rec.outcome[0].score.unwrap_or(0.0),
        rec.outcome[1].score.unwrap_or(0.0)
    );
}

fn main() {
    // The Rust examples as built-ins too: a replay regenerates their commands.
    let template =
        || Box::new(DecidePlayer::builtin("template", "template-rs", Template::default())) as Box<dyn Player>;
    let expander =
        || Box::new(DecidePlayer::builtin("expander", "expander-rs", Expander::default())) as Box<dyn Player>;
    // The Council as a built-in: its commands are regenerated on reading, not stored.
    let council = || Box::new(DecidePlayer::council("council")) as Box<dyn Player>;
    measure("template vs council", &template, &council);
    measure("expander vs council", &expander, &council);
    measure("expander vs expander", &expander, &expander);
    measure("council vs council", &council, &council);
    // An agent of yours: its commands are stored (in columns).
    let stored = || Box::new(DecidePlayer::new("expander", Expander::default())) as Box<dyn Player>;
    measure("expander (stored) vs council", &stored, &council);
    measure("expander (stored) × 2", &stored, &stored);
    // Notes: the most a seat keeps every round (2 KiB), for one seat and for both.
    let noted = || Box::new(DecidePlayer::new("expander", Noted::default())) as Box<dyn Player>;
    measure("expander + 2 KiB notes vs council", &noted, &council);
    measure("expander + 2 KiB notes × 2", &noted, &noted);
}
