//! Your agent: a [`Decide`] gets the typed observation of one round (rules §5) and returns its
//! commands (§6). Cells are [`Cell`](gbely_engine::gbely_rules::Cell)s (opaque numbers), never
//! strings; the engine turns them into ids like `P57_02` only on the wire.
//!
//! Logging: `eprintln!`, never `println!`. When the agent is served as a process (`my-agent
//! serve`), stdout is the protocol: one stray line there is an unreadable answer, a violation.
//! stderr goes to the agent's log.

use gbely_engine::gbely_rules::{sure_win, CellLookup, Command, Decide, Frontier, Observation, Owner};

/// Takes the neighbours that give the most production per unit spent, with the smallest force
/// that surely wins (several own cells strike together when one is not enough), and moves the
/// interior's units one step closer to the frontier each round.
#[derive(Clone, Debug, Default)]
pub struct MyAgent {
    /// Units sent beyond the sure win against a cell someone holds: its owner may reinforce it
    /// before our attack lands (in a duel the other side resolves first in every odd round).
    /// Neutral cells never act, so they get no margin. The parameter `league` sweeps.
    pub margin: f64,
    // Scratch space kept between rounds: a decision allocates little once warm.
    lookup: CellLookup,
    front: Frontier,
}

impl MyAgent {
    pub fn new(margin: f64) -> MyAgent {
        MyAgent { margin, ..MyAgent::default() }
    }
}

impl Decide for MyAgent {
    fn decide(&mut self, obs: &Observation) -> Vec<Command> {
        // Where each cell stands in `obs` (own or visible), and who can attack what.
        self.lookup.rebuild(obs);
        self.front.rebuild(obs, &self.lookup);
        let mut out = Vec::with_capacity(obs.own.len());
        // Units each own cell can still send (0.05 covers the observation's rounding to 0.1).
        let mut spare: Vec<f64> = obs.own.iter().map(|c| (c.units - 0.05).max(0.0)).collect();

        // Targets, most production per unit needed first (ties: cheaper, then in `visible` order).
        let mut targets: Vec<(f64, f64, usize)> = obs
            .visible
            .iter()
            .enumerate()
            .map(|(v, t)| {
                let extra = if t.owner == Owner::Neutral { 0.0 } else { self.margin };
                let need = sure_win(t.garrison, t.fortification, t.terrain) + extra;
                (t.terrain.production() / need, need, v)
            })
            .collect();
        targets.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.total_cmp(&b.1)).then(a.2.cmp(&b.2)));
        for (_, need, v) in targets {
            // The own cells next to the target, most spare units first.
            let mut around: Vec<usize> = self.front.attackers(v).iter().map(|&a| a as usize).collect();
            around.sort_by(|&a, &b| spare[b].total_cmp(&spare[a]).then(a.cmp(&b)));
            if around.iter().map(|&a| spare[a]).sum::<f64>() < need {
                continue; // not enough to take it surely: a failed attack loses every unit sent
            }
            // When the first strikes already take the cell (the observation rounds to 0.1), the
            // rest are discarded as an attack on an own cell: a discard costs nothing (§6.2).
            let mut missing = need;
            for a in around {
                let send = spare[a].min(missing);
                if send <= 0.0 {
                    break;
                }
                out.push(Command::Attack { from: obs.own[a].cell, to: obs.visible[v].cell, amount: send });
                spare[a] -= send;
                missing -= send;
            }
        }

        // The interior: distance to the frontier through own cells (breadth first), and each
        // interior cell sends its units to a neighbour one step closer.
        let mut dist = vec![u32::MAX; obs.own.len()];
        let mut queue: Vec<usize> = (0..obs.own.len()).filter(|&i| self.front.is_frontier(i)).collect();
        for &i in &queue {
            dist[i] = 0;
        }
        let mut head = 0;
        while let Some(&y) = queue.get(head) {
            head += 1;
            for nb in obs.own[y].neighbours.iter() {
                if let Some(x) = self.lookup.own(nb) {
                    if dist[x] == u32::MAX {
                        dist[x] = dist[y] + 1;
                        queue.push(x);
                    }
                }
            }
        }
        for (x, c) in obs.own.iter().enumerate() {
            if dist[x] == 0 || dist[x] == u32::MAX || c.units < 1.0 {
                continue;
            }
            let closer = c.neighbours.iter().find(|&nb| self.lookup.own(nb).is_some_and(|y| dist[y] + 1 == dist[x]));
            if let Some(to) = closer {
                // Asking for more than is ready sends what is ready (§6.1).
                out.push(Command::Move { from: c.cell, to, amount: c.units + 1.0 });
            }
        }
        out
    }
}
