use gbely_rules::{defence, CellLookup, Command, Decide, Observation};

/// The naive template agent: each cell attacks its weakest visible neighbour with all its units
/// when it has more than that neighbour's defence. Same as `my_agent.py`.
#[derive(Clone, Debug, Default)]
pub struct Template {
    lookup: CellLookup,
}

impl Decide for Template {
    fn decide(&mut self, obs: &Observation) -> Vec<Command> {
        self.lookup.rebuild(obs);
        let mut out = Vec::with_capacity(obs.own.len());
        for cell in &obs.own {
            // The weakest foreign neighbour: the lowest defence, the first one on ties.
            let mut weakest: Option<(f64, gbely_rules::Cell)> = None;
            for nb in cell.neighbours.iter() {
                if let Some(v) = self.lookup.visible(nb) {
                    let t = &obs.visible[v];
                    let d = defence(t.garrison, t.fortification, t.terrain);
                    if weakest.is_none_or(|(w, _)| d < w) {
                        weakest = Some((d, t.cell));
                    }
                }
            }
            if let Some((d, target)) = weakest {
                if cell.units > d {
                    out.push(Command::Attack { from: cell.cell, to: target, amount: cell.units });
                }
            }
        }
        out
    }
}
