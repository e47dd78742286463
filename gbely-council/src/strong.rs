//! `council:strong`: the Council's stronger level. Same rules for itself as the Council (no IO, no
//! clock, no randomness, no memory of earlier rounds: the observation alone decides), played better.
//!
//! What it does differently from the Council:
//! 1. **The attack carries the army forward.** After every target has its smallest sure force, a
//!    cell that attacked sends the rest of its units along, split between its targets. A unit
//!    acts once a round, so units left behind walk one cell a round to catch up; units that
//!    arrive with a capture take the next ring of cells the next round. The front advances
//!    every round instead of waiting for reinforcements, and the army is where the war is.
//! 2. **Every target can be taken together**: any cells next to a target pool their spare units
//!    when one alone is not enough (the Council pools only for meadows and enemy cells).
//! 3. **Targets are valued for the rest of the match**: a cell is worth one cell of score plus
//!    its production over the rounds that are left, more when it is the enemy's (taking it also
//!    shrinks the enemy), per unit of the smallest sure force.
//! 4. **No fortification, no reserve**: 0.3 defence per unit is a bad trade when the same units
//!    can take a cell next round.
//!
//! Interior units move to the front along hill-aware shortest paths, as the Council's do.

use gbely_rules::{CellLookup, Command, Decide, Frontier, Observation, Owner, VisibleCell};

use crate::paths::ToFront;
use crate::rank_targets;

/// How `council:strong` plays.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StrongConfig {
    /// Worth of one cell of score, in units of production per round.
    pub cell_value: f64,
    /// Extra worth of taking an enemy cell over a neutral one.
    pub enemy_value: f64,
}

impl Default for StrongConfig {
    fn default() -> Self {
        StrongConfig { cell_value: 1.0, enemy_value: 3.0 }
    }
}

/// The Council's stronger level (`council:strong`).
#[derive(Clone, Debug, Default)]
pub struct StrongCouncil {
    config: StrongConfig,
    lookup: CellLookup,
    front: Frontier,
    /// Units each own cell can still send this round.
    spare: Vec<f64>,
    targets: Vec<(f64, f64, u32)>,
    around: Vec<u32>,
    to_front: ToFront,
    /// Per own cell, how many attacks it makes this round.
    attacks: Vec<u32>,
}

impl StrongCouncil {
    pub fn new() -> StrongCouncil {
        StrongCouncil::with_config(StrongConfig::default())
    }

    pub fn with_config(config: StrongConfig) -> StrongCouncil {
        StrongCouncil { config, ..StrongCouncil::default() }
    }

    fn index(&mut self, obs: &Observation) {
        self.lookup.rebuild(obs);
        self.front.rebuild(obs, &self.lookup);
    }

    /// Attacks: targets by value per unit of their smallest sure force, every neighbouring cell
    /// pooling its spare units when one is not enough; then the rest carried forward.
    fn attack(&mut self, obs: &Observation, out: &mut Vec<Command>) {
        // 0.05 covers the observation's rounding.
        self.spare.clear();
        self.spare.extend(obs.own.iter().map(|o| (o.units - 0.05).max(0.0)));
        let left = f64::from(150u32.saturating_sub(obs.round));
        let config = &self.config;
        let value = |c: &VisibleCell| {
            let enemy = if c.owner != Owner::Neutral { config.enemy_value } else { 0.0 };
            config.cell_value + c.terrain.production() * left / 150.0 + enemy
        };
        rank_targets(obs, value, &mut self.targets);
        for k in 0..self.targets.len() {
            let (_, need, v) = self.targets[k];
            let v = v as usize;
            self.around.clear();
            self.around.extend_from_slice(self.front.attackers(v));
            let spare = &self.spare;
            self.around.sort_by(|&a, &b| spare[b as usize].total_cmp(&spare[a as usize]).then(a.cmp(&b)));
            let total: f64 = self.around.iter().map(|&a| spare[a as usize]).sum();
            if total < need {
                continue;
            }
            let mut missing = need;
            for &a in &self.around {
                let a = a as usize;
                if missing <= 0.0 {
                    break;
                }
                let send = self.spare[a].min(missing);
                if send <= 0.0 {
                    continue;
                }
                out.push(Command::Attack { from: obs.own[a].cell, to: obs.visible[v].cell, amount: send });
                self.spare[a] -= send;
                missing -= send;
            }
        }
        // Carry the rest forward, split between the cell's targets (whole units; asking for
        // more than is there is harmless, but never needed).
        self.attacks.clear();
        self.attacks.resize(obs.own.len(), 0);
        for c in out.iter() {
            if let Command::Attack { from, .. } = *c {
                self.attacks[self.lookup.own(from).expect("attacks come from own cells")] += 1;
            }
        }
        for c in out.iter_mut() {
            if let Command::Attack { from, amount, .. } = c {
                let a = self.lookup.own(*from).expect("attacks come from own cells");
                *amount += (self.spare[a] / f64::from(self.attacks[a])).floor();
            }
        }
    }
}

impl Decide for StrongCouncil {
    fn decide(&mut self, obs: &Observation) -> Vec<Command> {
        let mut out = Vec::with_capacity(obs.own.len());
        if obs.own.is_empty() {
            return out;
        }
        self.index(obs);
        self.attack(obs, &mut out);
        self.to_front.moves(obs, &self.front, &mut out);
        out
    }
}
