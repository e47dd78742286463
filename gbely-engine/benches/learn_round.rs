//! Where a learning environment's match-round goes, on the reference map against the Council,
//! one core: the round `gbely.env.VectorEnv` plays, without numpy (a learner drawing random
//! legal per-cell actions from a fixed pseudo-random sequence, as `gbely-py/bench_env.py` does).
//! Prints µs per match-round for each part: the learner's observation, the Council's
//! observation, the Council's decision, submitting and resolving (production included), and the
//! learner's commands (decoding, outside the timed parts).
//!
//! On a busy machine the wall clock counts time other processes took the core: the parts are
//! timed with the wall clock, then scaled to the thread's CPU time (preemption falls on every
//! part in proportion to its length), and both totals are shown.
//!
//! `cargo bench -p gbely-engine --bench learn_round` (add `-- --quick` for a short run, or
//! `-- --digest` for a digest of every command and every state of the run instead: a speed-up
//! must leave it unchanged; `-- --count` plays it once for `tools/instructions`, which counts
//! each part's instructions; `-- --changes` says how much of each observation changed since the
//! side's last one: what an observation handed over as a change list would carry; `--kept` with
//! any of them plays the Council that keeps its distances to the front, `Council::keeping`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use gbely_council::Council;
use gbely_engine::runner::player::PlayerAnswer;
use gbely_engine::session::Session;
use gbely_engine::sim::MatchConfig;
use gbely_rules::{Cell, Command, Decide, Grid, Observation};

/// A small deterministic generator (the same sequence on every machine).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn unit(&mut self) -> f64 {
        self.next() as f64 / (1u64 << 31) as f64
    }
}

fn toward(grid: &Grid, c: Cell, d: usize) -> Option<Cell> {
    let (r, col) = grid.row_col(c);
    match d {
        0 if r > 0 => Some(grid.cell(r - 1, col)),
        1 if r + 1 < grid.height() => Some(grid.cell(r + 1, col)),
        2 if col > 0 => Some(grid.cell(r, col - 1)),
        3 if col + 1 < grid.width() => Some(grid.cell(r, col + 1)),
        _ => None,
    }
}

/// Random legal per-cell actions as commands (the environment's mask and amounts).
fn learner(obs: &Observation, grid: &Grid, rng: &mut Lcg, own: &mut [bool], out: &mut Vec<Command>) {
    out.clear();
    for c in &obs.own {
        own[c.cell.index()] = true;
    }
    let mut legal = Vec::with_capacity(10);
    for c in &obs.own {
        legal.clear();
        legal.push(0);
        if c.units > 0.0 {
            legal.push(9);
            for d in 0..4 {
                if let Some(n) = toward(grid, c.cell, d) {
                    legal.push(if own[n.index()] { 1 + d } else { 5 + d });
                }
            }
        }
        let k = legal[rng.next() as usize % legal.len()];
        let f = rng.unit();
        if k == 0 {
            continue;
        }
        let amount = f * c.units;
        if amount <= 0.0 {
            continue;
        }
        out.push(match k {
            1..=4 => Command::Move { from: c.cell, to: toward(grid, c.cell, k - 1).unwrap(), amount },
            5..=8 => Command::Attack { from: c.cell, to: toward(grid, c.cell, k - 5).unwrap(), amount },
            _ => Command::Fortify { cell: c.cell, amount },
        });
    }
    for c in &obs.own {
        own[c.cell.index()] = false;
    }
}

/// The CPU time this thread has used (on macOS, which counts no thread alone, the process's:
/// the same here, as the bench runs on one thread).
fn cpu_time() -> Duration {
    use nix::sys::resource::{getrusage, UsageWho};
    #[cfg(any(target_os = "linux", target_os = "android"))]
    let who = UsageWho::RUSAGE_THREAD;
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let who = UsageWho::RUSAGE_SELF;
    let u = getrusage(who).expect("getrusage");
    let us = |t: nix::sys::time::TimeVal| Duration::from_micros(t.tv_sec() as u64 * 1_000_000 + t.tv_usec() as u64);
    us(u.user_time()) + us(u.system_time())
}

#[derive(Default)]
struct Parts {
    cpu: Duration,
    observe: Duration,
    council_observe: Duration,
    council_decide: Duration,
    resolve: Duration,
    learner: Duration,
    rounds: u64,
    council_cells: u64,
    learner_cells: u64,
    council_cmds: u64,
    learner_cmds: u64,
    /// With `--changes`: per side (learner, Council), what changed since its last observation.
    changes: [Changes; 2],
}

/// How much of a side's observations changed from one round to the next, summed over rounds.
#[derive(Default)]
struct Changes {
    /// Observations compared (each with the side's observation one round before).
    compared: u64,
    /// Own cells in them, and those new, or whose units or fortification differ (as observed,
    /// rounded): the own cells a change list must name.
    own: u64,
    own_changed: u64,
    /// Own cells lost since the last observation.
    own_lost: u64,
    /// Visible cells in them, and those new or whose owner, garrison or fortification differ.
    visible: u64,
    visible_changed: u64,
    /// Visible cells no longer visible.
    visible_gone: u64,
}

impl Changes {
    /// Compares `now` with `before` (both in row-major order, as the engine writes them).
    fn add(&mut self, before: &Observation, now: &Observation) {
        self.compared += 1;
        self.own += now.own.len() as u64;
        self.visible += now.visible.len() as u64;
        let (changed, gone) = diff(&before.own, &now.own, |o| o.cell, |a, b| a == b);
        self.own_changed += changed;
        self.own_lost += gone;
        let (changed, gone) = diff(&before.visible, &now.visible, |v| v.cell, |a, b| a == b);
        self.visible_changed += changed;
        self.visible_gone += gone;
    }
    fn print(&self, who: &str) {
        let per = |x: u64| x as f64 / self.compared.max(1) as f64;
        println!(
            "  {who}: own cells {:.0}, changed or new {:.0} ({:.0} %), lost {:.1}; visible cells {:.0}, changed or new {:.0} ({:.0} %), gone {:.1}",
            per(self.own),
            per(self.own_changed),
            100.0 * self.own_changed as f64 / self.own.max(1) as f64,
            per(self.own_lost),
            per(self.visible),
            per(self.visible_changed),
            100.0 * self.visible_changed as f64 / self.visible.max(1) as f64,
            per(self.visible_gone),
        );
    }
}

/// Of two lists sorted by cell: how many entries of `now` are new or differ from `before`'s, and
/// how many of `before`'s cells `now` lacks.
fn diff<T>(before: &[T], now: &[T], cell: impl Fn(&T) -> Cell, same: impl Fn(&T, &T) -> bool) -> (u64, u64) {
    let (mut i, mut changed, mut gone) = (0, 0, 0);
    for x in now {
        while i < before.len() && cell(&before[i]) < cell(x) {
            gone += 1;
            i += 1;
        }
        if i < before.len() && cell(&before[i]) == cell(x) {
            if !same(&before[i], x) {
                changed += 1;
            }
            i += 1;
        } else {
            changed += 1;
        }
    }
    (changed, gone + (before.len() - i) as u64)
}

/// FNV-1a over 64-bit words.
struct Digest(u64);

impl Digest {
    fn word(&mut self, w: u64) {
        for b in w.to_le_bytes() {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x100000001b3);
        }
    }
    fn commands(&mut self, cmds: &[Command]) {
        for c in cmds {
            match *c {
                Command::Move { from, to, amount } => [1, from.0 as u64, to.0 as u64, amount.to_bits()],
                Command::Attack { from, to, amount } => [2, from.0 as u64, to.0 as u64, amount.to_bits()],
                Command::Fortify { cell, amount } => [3, cell.0 as u64, 0, amount.to_bits()],
            }
            .into_iter()
            .for_each(|w| self.word(w));
        }
    }
    fn state(&mut self, s: &Session) {
        let m = s.state();
        for ((&o, u), f) in m.owners().iter().zip(m.all_units()).zip(m.all_fortifications()) {
            self.word(o as u64);
            self.word(u.to_bits());
            self.word(f.to_bits());
        }
    }
}

// The parts, each a function of its own (never inlined), so that `tools/instructions` can count
// each one's instructions (callgrind's inclusive cost of the function).

#[inline(never)]
fn observe_learner(s: &mut Session, obs: &mut Observation) {
    s.observe_into(0, obs);
}

#[inline(never)]
fn observe_council(s: &mut Session, obs: &mut Observation) {
    s.observe_into(1, obs);
}

#[inline(never)]
fn council_decides(council: &mut Council, obs: &Observation) -> Vec<Command> {
    council.decide(obs)
}

/// Both sides' commands submitted, production and resolution.
#[inline(never)]
fn resolve(s: &mut Session, learner: Vec<Command>, council: Vec<Command>) {
    s.submit(0, PlayerAnswer::Commands(learner));
    s.submit(1, PlayerAnswer::Commands(council));
    s.advance();
}

fn run(map: &Arc<gbely_world::Map>, matches: usize, rounds: u32, p: &mut Parts, mut digest: Option<&mut Digest>) {
    let grid = map.grid().clone();
    let new = || {
        let mut s = Session::new(map.clone(), MatchConfig { rounds }, vec!["learner".into(), "council".into()]);
        s.set_builtin(1, Some("council"));
        s
    };
    let mut sessions: Vec<Session> = (0..matches).map(|_| new()).collect();
    // `--kept`: the Council keeping its distances to the front from round to round
    // (`Council::keeping`, the same decisions), to count what the repair costs.
    let kept = std::env::args().any(|a| a == "--kept");
    let mut councils: Vec<Council> =
        (0..matches).map(|_| if kept { Council::new().keeping() } else { Council::new() }).collect();
    let mut rngs: Vec<Lcg> = (0..matches).map(|k| Lcg(k as u64 + 1)).collect();
    let mut obs = Observation::default();
    // With `--changes`: each match's last observations, the learner's and the Council's.
    let counting_changes = std::env::args().any(|a| a == "--changes");
    let mut last: Vec<[Option<Observation>; 2]> = (0..matches).map(|_| [None, None]).collect();
    let mut own = vec![false; grid.len()];
    let mut cmds = Vec::new();
    let cpu = cpu_time();
    for _ in 0..rounds {
        for m in 0..matches {
            let s = &mut sessions[m];
            let t0 = Instant::now();
            observe_learner(s, &mut obs);
            let t1 = Instant::now();
            if counting_changes {
                if let Some(before) = &last[m][0] {
                    p.changes[0].add(before, &obs);
                }
                last[m][0] = Some(obs.clone());
            }
            learner(&obs, &grid, &mut rngs[m], &mut own, &mut cmds);
            p.learner_cells += obs.own.len() as u64;
            p.learner_cmds += cmds.len() as u64;
            let t2 = Instant::now();
            observe_council(s, &mut obs);
            let t3 = Instant::now();
            if counting_changes {
                if let Some(before) = &last[m][1] {
                    p.changes[1].add(before, &obs);
                }
                last[m][1] = Some(obs.clone());
            }
            let theirs = council_decides(&mut councils[m], &obs);
            p.council_cells += obs.own.len() as u64;
            p.council_cmds += theirs.len() as u64;
            let t4 = Instant::now();
            if let Some(d) = digest.as_deref_mut() {
                d.commands(&cmds);
                d.commands(&theirs);
            }
            resolve(s, cmds.clone(), theirs);
            let t5 = Instant::now();
            if let Some(d) = digest.as_deref_mut() {
                d.state(s);
            }
            if s.is_over() || !s.is_active(0) {
                *s = new();
                last[m] = [None, None];
            }
            p.observe += t1 - t0;
            p.learner += t2 - t1;
            p.council_observe += t3 - t2;
            p.council_decide += t4 - t3;
            p.resolve += t5 - t4;
            p.rounds += 1;
        }
    }
    p.cpu = cpu_time() - cpu;
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let map = Arc::new(gbely_world::reference_map());
    if std::env::args().any(|a| a == "--digest") {
        let mut d = Digest(0xcbf29ce484222325);
        run(&map, 16, 150, &mut Parts::default(), Some(&mut d));
        println!("digest of every command and state: {:016x}", d.0);
        return;
    }
    if std::env::args().any(|a| a == "--changes") {
        let mut p = Parts::default();
        run(&map, 16, 150, &mut p, None);
        println!("16 matches × 150 rounds, the reference map, random legal learner vs the Council: each side's");
        println!("observation against its observation one round before, per round:");
        p.changes[0].print("the learner");
        p.changes[1].print("the Council");
        println!(
            "  commands per round: learner {:.0}, Council {:.0}",
            p.learner_cmds as f64 / p.rounds as f64,
            p.council_cmds as f64 / p.rounds as f64
        );
        return;
    }
    if std::env::args().any(|a| a == "--count") {
        // One run for `tools/instructions` (under callgrind): what each part's count is per.
        let rounds = if quick { 20 } else { 150 };
        let mut p = Parts::default();
        run(&map, 16, rounds, &mut p, None);
        for part in ["observe_learner", "observe_council", "council_decides", "resolve"] {
            println!("callgrind: learn_round::{part} {} match-rounds", p.rounds);
        }
        println!(
            "callgrind-note: own cells per round: learner {:.0}, Council {:.0}",
            p.learner_cells as f64 / p.rounds as f64,
            p.council_cells as f64 / p.rounds as f64
        );
        return;
    }
    let repeat = if quick { 1 } else { 5 };
    let mut best: Option<Parts> = None;
    for _ in 0..repeat {
        let mut p = Parts::default();
        run(&map, 16, 150, &mut p, None);
        if best.as_ref().is_none_or(|b| p.cpu < b.cpu) {
            best = Some(p);
        }
    }
    let p = best.expect("one run");
    let wall = p.observe + p.council_observe + p.council_decide + p.resolve + p.learner;
    // Wall-clock parts scaled to the CPU time.
    let scale = p.cpu.as_secs_f64() / wall.as_secs_f64();
    let us = |d: Duration| d.as_secs_f64() * scale * 1e6 / p.rounds as f64;
    let engine = us(p.observe + p.council_observe + p.council_decide + p.resolve);
    println!("16 matches × 150 rounds, the reference map, random legal learner vs the Council (best of {repeat}):");
    println!(
        "  CPU time {:.1} ms, wall clock {:.1} ms (the parts below: CPU time)",
        p.cpu.as_secs_f64() * 1e3,
        wall.as_secs_f64() * 1e3
    );
    println!(
        "  own cells per round: learner {:.0}, Council {:.0}; commands per round: learner {:.0}, Council {:.0}",
        p.learner_cells as f64 / p.rounds as f64,
        p.council_cells as f64 / p.rounds as f64,
        p.learner_cmds as f64 / p.rounds as f64,
        p.council_cmds as f64 / p.rounds as f64
    );
    println!("  learner's observation          {:7.2} µs per match-round", us(p.observe));
    println!("  Council's observation          {:7.2} µs", us(p.council_observe));
    println!("  Council's decision             {:7.2} µs", us(p.council_decide));
    println!("  production and resolution      {:7.2} µs", us(p.resolve));
    println!(
        "  = the engine's round           {engine:7.2} µs   (drawing the learner's actions: {:.2} µs, not counted)",
        us(p.learner)
    );
}
