//! Moving the interior's units to the front, shared by the Council's levels: each own cell that
//! is not on the front sends all its units one step along a shortest path through own territory
//! to the nearest front cell, where stepping onto a hill costs 2 (only 60 % get through in a
//! round) and onto any other cell 1.

use gbely_rules::{Cell, Command, Frontier, Observation, Terrain};

pub(crate) const FAR: u32 = u32::MAX;

pub(crate) fn step_cost(t: Terrain) -> u32 {
    if t == Terrain::Hill {
        2
    } else {
        1
    }
}

/// Per own cell: its distance to the front ([`FAR`] until reached) and the cost of stepping onto
/// it, side by side (the search reads both of a cell at once).
#[derive(Clone, Copy, Debug)]
struct Node {
    dist: u32,
    cost: u32,
}

/// Scratch space of [`ToFront::moves`], kept between rounds (nothing allocated once warm).
#[derive(Clone, Debug, Default)]
pub(crate) struct ToFront {
    nodes: Vec<Node>,
    buckets: [Vec<u32>; 3],
}

impl ToFront {
    /// Appends the moves of this round; `front` must index `obs`. Each own cell's own
    /// neighbours ([`Frontier::own_neighbours`]) are in its `neighbours` order: N, S, W, E.
    pub(crate) fn moves(&mut self, obs: &Observation, front: &Frontier, out: &mut Vec<Command>) {
        let own_nbr = front.own_neighbours();
        self.nodes.clear();
        self.nodes.extend(
            obs.own
                .iter()
                .enumerate()
                .map(|(i, o)| Node { dist: if front.is_frontier(i) { 0 } else { FAR }, cost: step_cost(o.terrain) }),
        );
        for b in self.buckets.iter_mut() {
            b.clear();
        }
        self.buckets[0].extend((0..obs.own.len() as u32).filter(|&i| front.is_frontier(i as usize)));
        self.distances(own_nbr);
        for (x, o) in obs.own.iter().enumerate() {
            let dx = self.nodes[x].dist;
            if front.is_frontier(x) || dx == FAR || o.units < 1.0 {
                continue;
            }
            // The next step on a shortest path: dist[y] + cost(y) == dist[x]; first in N,S,W,E.
            let mut next: Option<Cell> = None;
            for &y in &own_nbr[x] {
                // `Frontier::NOT_OWN` (no own neighbour) is past every index: one check for both.
                let Some(&n) = self.nodes.get(y as usize) else { continue };
                if n.dist != FAR && n.dist + n.cost == dx {
                    next = Some(obs.own[y as usize].cell);
                    break;
                }
            }
            if let Some(to) = next {
                // Asking for more than is there sends everything that is ready.
                out.push(Command::Move { from: o.cell, to, amount: o.units + 1.0 });
            }
        }
    }

    /// Dial's algorithm with step costs 1 and 2 (three rotating buckets) from the cells at 0.
    fn distances(&mut self, own_nbr: &[[u32; 4]]) {
        let nodes = &mut self.nodes[..];
        let buckets = &mut self.buckets;
        // The bucket of distance `d` is `d mod 3`, kept as `i` rather than divided for.
        let (mut d, mut i) = (0u32, 0usize);
        let mut empty_rounds = 0;
        while empty_rounds < 3 {
            let mut cur = std::mem::take(&mut buckets[i]);
            if cur.is_empty() {
                empty_rounds += 1;
            } else {
                empty_rounds = 0;
            }
            for &y in &cur {
                let Node { dist, cost } = nodes[y as usize];
                if dist != d {
                    continue;
                }
                let nd = d + cost;
                let j = i + cost as usize;
                let bucket = &mut buckets[if j >= 3 { j - 3 } else { j }];
                for &x in &own_nbr[y as usize] {
                    let Some(n) = nodes.get_mut(x as usize) else { continue };
                    if nd < n.dist {
                        n.dist = nd;
                        bucket.push(x);
                    }
                }
            }
            cur.clear();
            buckets[i] = cur;
            d += 1;
            i = if i == 2 { 0 } else { i + 1 };
        }
    }
}
