use gbely_rules::{sure_win, CellLookup, Command, Decide, Observation, Owner};

/// A stronger example: cheapest valuable targets first with the smallest sure force, several
/// cells striking together when one is not enough, and the interior's units moved to the front
/// along shortest paths. Same as `expander.py`.
#[derive(Clone, Debug, Default)]
pub struct Expander {
    lookup: CellLookup,
}

impl Decide for Expander {
    fn decide(&mut self, obs: &Observation) -> Vec<Command> {
        self.lookup.rebuild(obs);
        let mut out = Vec::new();
        // Units each own cell can still send this round (0.05 covers the observation's rounding).
        let mut spare: Vec<f64> = obs.own.iter().map(|c| (c.units - 0.05).max(0.0)).collect();
        let mut frontier = vec![false; obs.own.len()];
        // For each visible cell, the own cells next to it.
        let mut attackers: Vec<Vec<usize>> = vec![Vec::new(); obs.visible.len()];
        for (i, c) in obs.own.iter().enumerate() {
            for nb in c.neighbours.iter() {
                if let Some(v) = self.lookup.visible(nb) {
                    attackers[v].push(i);
                    frontier[i] = true;
                }
            }
        }
        // Targets by value per unit: production, and +3 for an enemy cell (it also weakens them).
        let mut targets: Vec<(f64, f64, usize)> = obs
            .visible
            .iter()
            .enumerate()
            .map(|(v, t)| {
                let need = sure_win(t.garrison, t.fortification, t.terrain);
                let value = t.terrain.production() + if t.owner == Owner::Neutral { 0.0 } else { 3.0 };
                (value / need, need, v)
            })
            .collect();
        targets.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.total_cmp(&b.1)).then(a.2.cmp(&b.2)));
        for &(_, need, v) in &targets {
            let mut around: Vec<usize> = attackers[v].clone();
            around.sort_by(|&a, &b| spare[b].total_cmp(&spare[a]).then(a.cmp(&b)));
            let total: f64 = around.iter().map(|&a| spare[a]).sum();
            if total < need {
                continue;
            }
            let mut missing = need;
            for a in around {
                if missing <= 0.0 {
                    break;
                }
                let send = spare[a].min(missing);
                if send <= 0.0 {
                    continue;
                }
                out.push(Command::Attack { from: obs.own[a].cell, to: obs.visible[v].cell, amount: send });
                spare[a] -= send;
                missing -= send;
            }
        }
        // Breadth-first distance to the frontier through own cells; interior cells step closer.
        let mut dist = vec![u32::MAX; obs.own.len()];
        let mut queue: std::collections::VecDeque<usize> = (0..obs.own.len()).filter(|&i| frontier[i]).collect();
        for &i in &queue {
            dist[i] = 0;
        }
        while let Some(y) = queue.pop_front() {
            for nb in obs.own[y].neighbours.iter() {
                if let Some(x) = self.lookup.own(nb) {
                    if dist[x] == u32::MAX {
                        dist[x] = dist[y] + 1;
                        queue.push_back(x);
                    }
                }
            }
        }
        for (x, c) in obs.own.iter().enumerate() {
            if frontier[x] || dist[x] == u32::MAX || c.units < 1.0 {
                continue;
            }
            let next = c.neighbours.iter().find(|&nb| self.lookup.own(nb).is_some_and(|y| dist[y] + 1 == dist[x]));
            if let Some(to) = next {
                out.push(Command::Move { from: c.cell, to, amount: c.units + 1.0 });
            }
        }
        out
    }
}
