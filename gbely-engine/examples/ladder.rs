//! Calibrates the Council levels (`council:easy`, `council`, `council:strong`) against the example
//! agents on the reference map and 20 seeded maps, and times their decisions:
//! `cargo run --release -p gbely-engine --example ladder -- [MAPS]`.
//!
//! Each level plays the Council's seat (seat 1) against an example in seat 0, as on the
//! leaderboard. The figures are the level's share minus the example's, in points.
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use gbely_engine::builtins::builtin_agent;
use gbely_engine::game::{play, PlayOptions};
use gbely_engine::runner::player::{DecidePlayer, Player};
use gbely_rules::{Command, Decide, Observation};
use gbely_world::Map;

/// A built-in agent that also times its decisions of the last 20 rounds (full territory).
struct Timed {
    agent: Box<dyn Decide + Send>,
    late: Arc<Mutex<Vec<Duration>>>,
}

impl Decide for Timed {
    fn decide(&mut self, obs: &Observation) -> Vec<Command> {
        let t = Instant::now();
        let out = self.agent.decide(obs);
        if obs.round >= 130 {
            self.late.lock().unwrap().push(t.elapsed());
        }
        out
    }
}

/// (share of seat 0, share of seat 1); seat 1's late decision times go into `late`.
fn duel(map: &Arc<Map>, a: &str, b: &str, late: &Arc<Mutex<Vec<Duration>>>) -> (f64, f64) {
    let mut pa = DecidePlayer::new(a, builtin_agent(a).unwrap());
    let mut pb = DecidePlayer::new(b, Timed { agent: builtin_agent(b).unwrap(), late: late.clone() });
    let mut players: [&mut dyn Player; 2] = [&mut pa, &mut pb];
    let rec = play(map.clone(), &mut players, PlayOptions::default(), &mut ());
    (rec.outcome[0].score.unwrap_or(0.0), rec.outcome[1].score.unwrap_or(0.0))
}

fn main() {
    let n: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(20);
    let mut maps = vec![("gbely".to_string(), Arc::new(gbely_world::reference_map()))];
    for k in 0..n {
        let seed = format!("ladder-{k}");
        maps.push((seed.clone(), Arc::new(gbely_world::generate_duel(&seed, 60, 60).unwrap())));
    }
    let pairs = [
        ("template-rs", "council:easy"),
        ("expander-rs", "council:easy"),
        ("template-rs", "council"),
        ("expander-rs", "council"),
        ("template-rs", "council:strong"),
        ("expander-rs", "council:strong"),
        ("council", "council:strong"),
    ];
    print!("{:<10}", "map");
    for (a, b) in pairs {
        print!(" {:>16}", format!("{b}-{}", a.trim_end_matches("-rs")));
    }
    println!();
    let t = Instant::now();
    let mut margins = vec![Vec::new(); pairs.len()];
    let late: Vec<_> = pairs.iter().map(|_| Arc::new(Mutex::new(Vec::new()))).collect();
    for (name, map) in &maps {
        print!("{name:<10}");
        for (k, (a, b)) in pairs.iter().enumerate() {
            let (sa, sb) = duel(map, a, b, &late[k]);
            margins[k].push(sb - sa);
            print!(" {:>16}", format!("{:+.2}", sb - sa));
        }
        println!();
    }
    println!("\nlevel's share minus the example's, in points (seat 1 vs seat 0):");
    for (k, (a, b)) in pairs.iter().enumerate() {
        let m = &margins[k];
        let min = m.iter().copied().fold(f64::INFINITY, f64::min);
        let max = m.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let mean = m.iter().sum::<f64>() / m.len() as f64;
        let mut times = late[k].lock().unwrap().clone();
        times.sort();
        let pct = |p: usize| times[(times.len() - 1) * p / 100];
        println!(
            "  {b:<15} vs {a:<12} reference {:+7.2}  mean {mean:+7.2}  min {min:+7.2}  max {max:+7.2}  \
             decision in rounds 130-149: median {:.0?}, p99 {:.0?}",
            m[0],
            pct(50),
            pct(99)
        );
    }
    eprintln!("{} matches in {:.2?}", pairs.len() * maps.len(), t.elapsed());
}
