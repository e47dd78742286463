//! # gbely-council
//!
//! The Council (Mestské zastupiteľstvo, SPEC §11): the built-in deterministic opponent.
//!
//! **Architecture Invariant:** the Council does no IO, reads no clock, uses no randomness and never
//! sees the engine's state: it decides from its observation alone, like any agent. The same
//! observation always gives the same commands.
//!
//! Its strategy, in the order it decides each round:
//! 1. **Expand** to the weaker neighbouring cells, best value per unit first (meadow > hill >
//!    river, enemy cells worth more), each with the smallest force that surely wins
//!    (`floor(defence) + 1`, allowing for the observation's rounding). A cell makes at most one
//!    attack a round, and a cell facing an enemy keeps enough units to hold it.
//! 2. **Concentrate** now and then: when no single cell can take a valuable target (a meadow or
//!    an enemy cell) but the neighbouring cells together can, they strike together.
//! 3. **Fortify**, sparingly: at most one cell a round, only where an enemy neighbour is strong
//!    enough to take it, and only a small part of its units (FORTIFY is a bad trade).
//! 4. **Move** units from the interior to the front along shortest paths through its own
//!    territory, where entering a hill costs more (only 60 % get through in a round).
//!
//! Levels: this is `council`, the leaderboard's. [`Council::easy`] (`council:easy`) leaves out
//! steps 2 and 4; [`StrongCouncil`] (`council:strong`) plays another way, see its module.
//!
//! It works unchanged with several enemies: every cell that is neither its own nor neutral
//! (`zastupitelstvo` as seen from a duel seat, `armada*` in the final) is an enemy.
//!
//! ```
//! use gbely_council::Council;
//! use gbely_rules::{Decide, Observation};
//! let mut council = Council::new();
//! assert!(council.decide(&Observation::default()).is_empty());
//! ```

use gbely_rules::{sure_win, CellLookup, Command, Decide, Frontier, Observation, Owner, Slot, Terrain, VisibleCell};

/// How the Council plays. The defaults are the Council of the leaderboard.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CouncilConfig {
    /// Extra value of taking an enemy cell over a neutral one of the same terrain.
    pub enemy_value: f64,
    /// Share of a threatened cell's spare units put into FORTIFY.
    pub fortify_share: f64,
    /// At most this many units into FORTIFY per round.
    pub fortify_cap: f64,
    /// Whether cells strike together when no single one can take a valuable target.
    pub concentrate: bool,
    /// Whether the interior's units move to the front (without it, only the front's own
    /// production fights: the `council:easy` level).
    pub reinforce: bool,
}

impl Default for CouncilConfig {
    fn default() -> Self {
        CouncilConfig { enemy_value: 2.0, fortify_share: 0.25, fortify_cap: 5.0, concentrate: true, reinforce: true }
    }
}

/// The Council. Keeps scratch buffers between rounds (it allocates nothing once warm) but no
/// memory of earlier rounds that changes a decision: its decision depends on the observation
/// only. [`Council::keeping`] keeps its distances to the front and repairs them instead of
/// searching them anew (the same decisions; not the default, see docs/speed.md).
#[derive(Clone, Debug, Default)]
pub struct Council {
    config: CouncilConfig,
    /// Keep the distances to the front from round to round and repair them
    /// ([`Council::keeping`]) instead of searching them anew.
    keep: bool,
    lookup: CellLookup,
    spare: Vec<f64>,
    used: Vec<bool>,
    threat: Vec<f64>,
    front: Frontier,
    to_front: ToFront,
    kept: KeptToFront,
    targets: Vec<(f64, f64, u32)>,
    helpers: Vec<u32>,
}

fn is_enemy(o: Owner) -> bool {
    o != Owner::Neutral
}

impl Council {
    pub fn new() -> Council {
        Council::with_config(CouncilConfig::default())
    }

    /// `council:easy`: the Council without its reinforcements and joint strikes. Only the
    /// front's own production fights, so the template agent can beat it.
    pub fn easy() -> Council {
        Council::with_config(CouncilConfig { concentrate: false, reinforce: false, ..CouncilConfig::default() })
    }

    pub fn with_config(config: CouncilConfig) -> Council {
        Council { config, ..Council::default() }
    }

    /// The same Council keeping its distances to the front from round to round and repairing
    /// them where cells changed hands, instead of searching them anew: its own memory of earlier
    /// observations, never the engine's state, and exactly the same decisions (tests compare
    /// them over whole matches). Not the default: on the workloads measured the repair costs
    /// more instructions than the search (docs/speed.md).
    #[doc(hidden)]
    pub fn keeping(self) -> Council {
        Council { keep: true, ..self }
    }

    /// How many decisions repaired the kept distances, and how many built them anew (tests
    /// check that a match exercises both).
    #[doc(hidden)]
    pub fn kept_stats(&self) -> (u64, u64) {
        (self.kept.repairs, self.kept.rebuilds)
    }

    fn index(&mut self, obs: &Observation) {
        self.lookup.rebuild(obs);
        self.front.rebuild(obs, &self.lookup);
        let n_own = obs.own.len();
        self.threat.clear();
        self.threat.resize(n_own, 0.0);
        // Only frontier cells have visible neighbours (the others' threat stays 0).
        for (i, o) in obs.own.iter().enumerate() {
            if !self.front.is_frontier(i) {
                continue;
            }
            for nb in o.neighbours.iter() {
                if let Slot::Visible(v) = self.lookup.get(nb) {
                    let vc = &obs.visible[v];
                    if is_enemy(vc.owner) {
                        self.threat[i] = self.threat[i].max(vc.garrison);
                    }
                }
            }
        }
    }

    fn attackers(&self, v: usize) -> &[u32] {
        self.front.attackers(v)
    }

    fn expand(&mut self, obs: &Observation, out: &mut Vec<Command>) {
        let n_own = obs.own.len();
        self.spare.clear();
        self.used.clear();
        self.used.resize(n_own, false);
        for (i, o) in obs.own.iter().enumerate() {
            // Keep enough to hold against the strongest enemy neighbour; 0.05 covers rounding.
            let keep = if self.threat[i] > 0.0 { self.threat[i] / o.terrain.defence_bonus() } else { 0.0 };
            self.spare.push((o.units - 0.05 - keep).max(0.0));
        }
        let enemy_value = self.config.enemy_value;
        rank_targets(
            obs,
            |c| c.terrain.production() + if is_enemy(c.owner) { enemy_value } else { 0.0 },
            &mut self.targets,
        );
        for k in 0..self.targets.len() {
            let (_, need, v) = self.targets[k];
            let v = v as usize;
            let target = &obs.visible[v];
            let mut best: Option<u32> = None;
            for &a in self.attackers(v) {
                if self.used[a as usize] {
                    continue;
                }
                if best.is_none_or(|b| self.spare[a as usize] > self.spare[b as usize]) {
                    best = Some(a);
                }
            }
            let Some(best) = best else { continue };
            if self.spare[best as usize] >= need {
                out.push(Command::Attack { from: obs.own[best as usize].cell, to: target.cell, amount: need });
                self.spare[best as usize] -= need;
                self.used[best as usize] = true;
                continue;
            }
            let valuable = target.terrain == Terrain::Meadow || is_enemy(target.owner);
            if !valuable || !self.config.concentrate {
                continue;
            }
            self.helpers.clear();
            let mut total = 0.0;
            for &a in self.front.attackers(v) {
                if !self.used[a as usize] && self.spare[a as usize] >= 1.0 {
                    self.helpers.push(a);
                    total += self.spare[a as usize];
                }
            }
            if self.helpers.len() < 2 || total < need {
                continue;
            }
            // Strongest first, each sends what is still missing.
            let spare = &self.spare;
            self.helpers.sort_by(|&a, &b| spare[b as usize].total_cmp(&spare[a as usize]).then(a.cmp(&b)));
            let mut missing = need;
            for h in 0..self.helpers.len() {
                if missing <= 0.0 {
                    break;
                }
                let a = self.helpers[h] as usize;
                let send = self.spare[a].min(missing);
                out.push(Command::Attack { from: obs.own[a].cell, to: target.cell, amount: send });
                self.spare[a] -= send;
                self.used[a] = true;
                missing -= send;
            }
        }
    }

    fn fortify(&mut self, obs: &Observation, out: &mut Vec<Command>) {
        // At most one cell: the one whose strongest enemy neighbour exceeds its defence the most.
        let mut pick: Option<(f64, usize)> = None;
        for (i, o) in obs.own.iter().enumerate() {
            if self.threat[i] <= 0.0 {
                continue;
            }
            let defence = (o.units - 0.05).max(0.0) * o.terrain.defence_bonus() + o.fortification;
            let excess = self.threat[i] - defence;
            if excess > 0.0 && pick.is_none_or(|(e, _)| excess > e) {
                pick = Some((excess, i));
            }
        }
        if let Some((_, i)) = pick {
            let amount = (obs.own[i].units * self.config.fortify_share).min(self.config.fortify_cap).floor();
            if amount >= 1.0 && !self.used[i] {
                out.push(Command::Fortify { cell: obs.own[i].cell, amount });
                self.used[i] = true;
            }
        }
    }
}

impl Decide for Council {
    fn decide(&mut self, obs: &Observation) -> Vec<Command> {
        let mut out = Vec::with_capacity(obs.own.len());
        if obs.own.is_empty() {
            return out;
        }
        self.index(obs);
        self.expand(obs, &mut out);
        self.fortify(obs, &mut out);
        if self.config.reinforce && !(self.keep && self.kept.moves(obs, &self.lookup, &self.front, &mut out).is_some())
        {
            self.to_front.moves(obs, &self.front, &mut out);
        }
        out
    }
}

mod kept;
mod paths;
mod strong;

use kept::KeptToFront;
use paths::ToFront;

pub use strong::{StrongConfig, StrongCouncil};

/// Every visible cell as a target, `(value per unit of force, the smallest sure force, its index)`,
/// best value per unit first; ties: the cheaper, then row-major. `value` is the level's worth of
/// a cell; the force is [`sure_win`]'s.
fn rank_targets(obs: &Observation, value: impl Fn(&VisibleCell) -> f64, targets: &mut Vec<(f64, f64, u32)>) {
    targets.clear();
    for (v, c) in obs.visible.iter().enumerate() {
        let need = sure_win(c.garrison, c.fortification, c.terrain);
        targets.push((value(c) / need, need, v as u32));
    }
    targets.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.total_cmp(&b.1)).then(a.2.cmp(&b.2)));
}
