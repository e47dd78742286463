use gbely_rules::{sure_win, CellLookup, Command, Decide, Frontier, Observation, Owner};

/// A stronger example: cheapest valuable targets first with the smallest sure force, several
/// cells striking together when one is not enough, and the interior's units moved to the front
/// along shortest paths. Same as `expander.py` (which says the same in fewer lines; here the
/// scratch space is kept between rounds so that a decision allocates nothing once warm).
#[derive(Clone, Debug, Default)]
pub struct Expander {
    lookup: CellLookup,
    spare: Vec<f64>,
    front: Frontier,
    targets: Vec<(f64, f64, usize)>,
    around: Vec<usize>,
    dist: Vec<u32>,
    queue: Vec<usize>,
}

impl Decide for Expander {
    fn decide(&mut self, obs: &Observation) -> Vec<Command> {
        self.lookup.rebuild(obs);
        let mut out = Vec::with_capacity(obs.own.len());
        let n_own = obs.own.len();
        // Units each own cell can still send this round (0.05 covers the observation's rounding).
        self.spare.clear();
        self.spare.extend(obs.own.iter().map(|c| (c.units - 0.05).max(0.0)));
        self.front.rebuild(obs, &self.lookup);
        // Targets by value per unit: production, and +3 for an enemy cell (it also weakens them).
        self.targets.clear();
        self.targets.extend(obs.visible.iter().enumerate().map(|(v, t)| {
            let need = sure_win(t.garrison, t.fortification, t.terrain);
            let value = t.terrain.production() + if t.owner == Owner::Neutral { 0.0 } else { 3.0 };
            (value / need, need, v)
        }));
        self.targets.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.total_cmp(&b.1)).then(a.2.cmp(&b.2)));
        for k in 0..self.targets.len() {
            let (_, need, v) = self.targets[k];
            self.around.clear();
            self.around.extend(self.front.attackers(v).iter().map(|&a| a as usize));
            let spare = &self.spare;
            self.around.sort_by(|&a, &b| spare[b].total_cmp(&spare[a]).then(a.cmp(&b)));
            let total: f64 = self.around.iter().map(|&a| spare[a]).sum();
            if total < need {
                continue;
            }
            let mut missing = need;
            for &a in &self.around {
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
        // Breadth-first distance to the frontier through own cells; interior cells step closer.
        self.dist.clear();
        self.dist.resize(n_own, u32::MAX);
        self.queue.clear();
        for i in 0..n_own {
            if self.front.is_frontier(i) {
                self.dist[i] = 0;
                self.queue.push(i);
            }
        }
        // Each own cell's own neighbours, in its `neighbours` order (the frontier index has them).
        let own_nbr = self.front.own_neighbours();
        let mut head = 0;
        while head < self.queue.len() {
            let y = self.queue[head];
            head += 1;
            for &x in &own_nbr[y] {
                if x != Frontier::NOT_OWN && self.dist[x as usize] == u32::MAX {
                    self.dist[x as usize] = self.dist[y] + 1;
                    self.queue.push(x as usize);
                }
            }
        }
        for (x, c) in obs.own.iter().enumerate() {
            if self.front.is_frontier(x) || self.dist[x] == u32::MAX || c.units < 1.0 {
                continue;
            }
            let dist = &self.dist;
            let next = own_nbr[x].iter().find(|&&y| y != Frontier::NOT_OWN && dist[y as usize] + 1 == dist[x]);
            if let Some(&y) = next {
                out.push(Command::Move { from: c.cell, to: obs.own[y as usize].cell, amount: c.units + 1.0 });
            }
        }
        out
    }
}
