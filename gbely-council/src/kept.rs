//! The Council's distances to the front kept from round to round: what it remembers of its earlier
//! observations, repaired where cells changed hands instead of searched anew.
//!
//! The distances are a function of the observation alone (which cells are own, their terrain and
//! neighbour lists, which are on the front), so a repair that is exact gives the moves a fresh
//! search gives ([`ToFront`](crate::paths::ToFront), kept as the reference). Each round compares
//! the observation with the kept copy, cell by cell: cells gained and lost, cells that joined or
//! left the front. A kept cell whose terrain or neighbour list differs (another map), an own list
//! out of row-major order, or more changes than a search costs, and the state is built anew.
//!
//! The repair (sources and cells both added and removed, step costs 1 and 2):
//! 1. **Invalidate**, in the order of the old distances: a cell whose distance may have rested on
//!    a lost cell or on a cell that left the front keeps it only if a neighbour it is reached from
//!    still gives it exactly; otherwise it is forgotten, and so are the cells it gave theirs.
//!    Every distance kept is then one a path of the new territory gives (an upper bound).
//! 2. **Search** from the cells that joined the front and the forgotten and gained cells, each
//!    seeded from its neighbours: Dijkstra's search that lowers what it can. A cell whose
//!    distance is neither forgotten nor lowered kept an exact one.

use gbely_rules::{Cell, CellLookup, Command, Frontier, Neighbours, Observation, Slot, Terrain};

use crate::paths::{step_cost, FAR};

/// Per cell (indexed by the cell's number): what the kept state knows of it.
#[derive(Clone, Copy, Debug)]
struct Node {
    /// Its distance to the front when own ([`FAR`] when no path reaches the front); [`FAR`]
    /// for every cell that is not own.
    dist: u32,
    terrain: Terrain,
    /// The cost of stepping onto it ([`step_cost`] of its terrain).
    cost: u8,
    own: bool,
    /// On the front (a visible neighbour).
    front: bool,
    /// How many own cells list it among their neighbours (its entries in `from`).
    listed: u8,
}

const EMPTY: Node = Node { dist: FAR, terrain: Terrain::Meadow, cost: 1, own: false, front: false, listed: 0 };

/// At most this many own cells may list one cell (four on a grid); more, and the state is built
/// anew every round (an observation no map gives).
const LISTED: usize = 4;

/// More changed cells than one in this many own cells: a search from scratch costs less.
const REBUILD_SHARE: usize = 4;

/// A bucket queue of cells by distance (distances are small integers, at most twice the cells
/// owned): pushes in O(1), pops in increasing distance; the order within a distance is free
/// (neither pass depends on it). Its buckets are kept between rounds.
#[derive(Clone, Debug, Default)]
struct Queue {
    buckets: Vec<Vec<u32>>,
    /// No cell is queued below this distance.
    low: usize,
    len: usize,
}

impl Queue {
    fn clear(&mut self) {
        for b in &mut self.buckets {
            b.clear();
        }
        self.low = 0;
        self.len = 0;
    }

    fn push(&mut self, d: u32, c: u32) {
        let d = d as usize;
        if d >= self.buckets.len() {
            self.buckets.resize_with(d + 1, Vec::new);
        }
        self.buckets[d].push(c);
        self.low = self.low.min(d);
        self.len += 1;
    }

    fn pop(&mut self) -> Option<(u32, u32)> {
        while self.len > 0 {
            if let Some(c) = self.buckets[self.low].pop() {
                self.len -= 1;
                return Some((self.low as u32, c));
            }
            self.low += 1;
        }
        None
    }
}

/// The Council's memory of its last observation: distances to the front and what they rest on.
#[derive(Clone, Debug, Default)]
pub(crate) struct KeptToFront {
    /// Whether the state describes the last observation (false at first and after an
    /// observation it could not follow).
    valid: bool,
    nodes: Vec<Node>,
    /// Per cell, its neighbour list when it was own (to tell a different map).
    neighbours: Vec<Neighbours>,
    /// Per cell, the own cells whose neighbour lists hold it (`listed` of them): the cells a
    /// distance is reached from.
    from: Vec<[u32; LISTED]>,
    /// The own cells of the last observation, row-major.
    cells: Vec<u32>,
    next_cells: Vec<u32>,
    gained: Vec<u32>,
    lost: Vec<u32>,
    joined: Vec<u32>,
    left: Vec<u32>,
    forgotten: Vec<u32>,
    queue: Queue,
    buckets: [Vec<u32>; 3],
    /// Decisions whose state was repaired, and built anew (for tests that must see both).
    pub(crate) repairs: u64,
    pub(crate) rebuilds: u64,
}

impl KeptToFront {
    /// Appends the moves of this round, as [`ToFront::moves`](crate::paths::ToFront::moves)
    /// would; `lookup` and `front` must index `obs`. `None` when the observation is one the kept
    /// state cannot describe (the caller then searches from scratch).
    pub(crate) fn moves(
        &mut self,
        obs: &Observation,
        lookup: &CellLookup,
        front: &Frontier,
        out: &mut Vec<Command>,
    ) -> Option<()> {
        if self.valid && self.repair(obs, lookup, front) {
            self.repairs += 1;
        } else if self.rebuild(obs, lookup, front) {
            self.rebuilds += 1;
        } else {
            self.valid = false;
            return None;
        }
        self.valid = true;
        let nodes = &self.nodes;
        for (x, o) in obs.own.iter().enumerate() {
            let dx = nodes[o.cell.index()].dist;
            if front.is_frontier(x) || dx == FAR || o.units < 1.0 {
                continue;
            }
            // The next step on a shortest path: dist[y] + cost(y) == dist[x]; first in N,S,W,E.
            // Cells that are not own are at FAR.
            for y in o.neighbours.iter() {
                let n = nodes[y.index()];
                if n.dist != FAR && n.dist + n.cost as u32 == dx {
                    out.push(Command::Move { from: o.cell, to: y, amount: o.units + 1.0 });
                    break;
                }
            }
        }
        Some(())
    }

    /// Whether `obs` is one the state can follow: own cells in strictly row-major order, each
    /// indexed as own by `lookup` (not also listed as visible).
    fn own_in_order(obs: &Observation, lookup: &CellLookup) -> bool {
        let mut last: Option<Cell> = None;
        for (i, o) in obs.own.iter().enumerate() {
            if last.is_some_and(|l| l >= o.cell) || lookup.get(o.cell) != Slot::Own(i) {
                return false;
            }
            last = Some(o.cell);
        }
        true
    }

    /// Makes room for cells up to `c`.
    fn reach(&mut self, c: usize) {
        if c >= self.nodes.len() {
            self.nodes.resize(c + 1, EMPTY);
            self.neighbours.resize(c + 1, Neighbours::default());
            self.from.resize(c + 1, [0; LISTED]);
        }
    }

    /// Records own cell `x` (number `c`) with its terrain, neighbours and front flag; false when a
    /// cell would be listed by more own cells than a grid allows.
    fn add(&mut self, c: usize, terrain: Terrain, neighbours: Neighbours, on_front: bool) -> bool {
        if let Some(max) = neighbours.iter().map(|n| n.index()).max() {
            self.reach(max.max(c));
        } else {
            self.reach(c);
        }
        self.nodes[c] = Node {
            dist: if on_front { 0 } else { FAR },
            terrain,
            cost: step_cost(terrain) as u8,
            own: true,
            front: on_front,
            listed: self.nodes[c].listed,
        };
        self.neighbours[c] = neighbours;
        for n in neighbours.iter() {
            let k = &mut self.nodes[n.index()].listed;
            if *k as usize == LISTED {
                return false;
            }
            self.from[n.index()][*k as usize] = c as u32;
            *k += 1;
        }
        true
    }

    /// Forgets own cell `c`: no longer own, its neighbours no longer listed by it.
    fn remove(&mut self, c: usize) {
        let neighbours = self.neighbours[c];
        for n in neighbours.iter() {
            let k = self.nodes[n.index()].listed as usize;
            let from = &mut self.from[n.index()];
            // One entry per listing (a list may name a cell twice).
            if let Some(p) = from[..k].iter().position(|&f| f == c as u32) {
                from[p] = from[k - 1];
                self.nodes[n.index()].listed -= 1;
            }
        }
        let listed = self.nodes[c].listed;
        self.nodes[c] = Node { listed, ..EMPTY };
    }

    /// Builds the state from `obs` alone; false for an observation it cannot describe.
    fn rebuild(&mut self, obs: &Observation, lookup: &CellLookup, front: &Frontier) -> bool {
        self.nodes.clear();
        self.neighbours.clear();
        self.from.clear();
        self.cells.clear();
        if !Self::own_in_order(obs, lookup) {
            return false;
        }
        for (i, o) in obs.own.iter().enumerate() {
            if !self.add(o.cell.index(), o.terrain, o.neighbours, front.is_frontier(i)) {
                return false;
            }
            self.cells.push(o.cell.0);
        }
        // Dial's algorithm with step costs 1 and 2 (three rotating buckets) from the front.
        for b in self.buckets.iter_mut() {
            b.clear();
        }
        self.buckets[0]
            .extend(obs.own.iter().enumerate().filter(|&(i, _)| front.is_frontier(i)).map(|(_, o)| o.cell.0));
        let mut d = 0u32;
        let mut empty_rounds = 0;
        while empty_rounds < 3 {
            let mut cur = std::mem::take(&mut self.buckets[(d % 3) as usize]);
            if cur.is_empty() {
                empty_rounds += 1;
            } else {
                empty_rounds = 0;
            }
            for &y in &cur {
                let Node { dist, cost, .. } = self.nodes[y as usize];
                if dist != d {
                    continue;
                }
                let nd = d + cost as u32;
                for x in self.neighbours[y as usize].iter() {
                    let n = &mut self.nodes[x.index()];
                    if n.own && nd < n.dist {
                        n.dist = nd;
                        self.buckets[(nd % 3) as usize].push(x.0);
                    }
                }
            }
            cur.clear();
            self.buckets[(d % 3) as usize] = cur;
            d += 1;
        }
        true
    }

    /// Repairs the state for `obs`, the observation after the one it describes; false when
    /// `obs` cannot be explained as cells changing hands on the same map (or changes too much).
    fn repair(&mut self, obs: &Observation, lookup: &CellLookup, front: &Frontier) -> bool {
        self.gained.clear();
        self.lost.clear();
        self.joined.clear();
        self.left.clear();
        self.next_cells.clear();
        // Walk the kept own cells and the observation's together (both row-major).
        let mut j = 0;
        let mut last: Option<Cell> = None;
        for (i, o) in obs.own.iter().enumerate() {
            let c = o.cell;
            if last.is_some_and(|l| l >= c) || lookup.get(c) != Slot::Own(i) {
                return false;
            }
            last = Some(c);
            while j < self.cells.len() && self.cells[j] < c.0 {
                self.lost.push(self.cells[j]);
                j += 1;
            }
            let on_front = front.is_frontier(i);
            if j < self.cells.len() && self.cells[j] == c.0 {
                j += 1;
                let n = &self.nodes[c.index()];
                if n.terrain != o.terrain || self.neighbours[c.index()] != o.neighbours {
                    return false;
                }
                if n.front != on_front {
                    if on_front { &mut self.joined } else { &mut self.left }.push(c.0);
                }
            } else {
                self.gained.push(c.0);
            }
            self.next_cells.push(c.0);
        }
        self.lost.extend_from_slice(&self.cells[j..]);
        let changed = self.gained.len() + self.lost.len() + self.joined.len() + self.left.len();
        if changed * REBUILD_SHARE > obs.own.len() {
            return false;
        }
        std::mem::swap(&mut self.cells, &mut self.next_cells);

        // Ownership first: lost cells leave (their neighbours' distances may have rested on
        // them), gained cells arrive unreached (or at 0 on the front), cells that joined the
        // front are at 0.
        self.queue.clear();
        for k in 0..self.lost.len() {
            let c = self.lost[k] as usize;
            for n in self.neighbours[c].iter() {
                let d = self.nodes[n.index()].dist;
                if d != FAR {
                    self.queue.push(d, n.0);
                }
            }
            self.remove(c);
        }
        for k in 0..self.gained.len() {
            let c = self.gained[k] as usize;
            let i = lookup.own(Cell(c as u32)).expect("gained cells are own");
            let o = &obs.own[i];
            if !self.add(c, o.terrain, o.neighbours, front.is_frontier(i)) {
                return false;
            }
        }
        for &c in &self.joined {
            let n = &mut self.nodes[c as usize];
            n.front = true;
            n.dist = 0;
        }
        for &c in &self.left {
            self.nodes[c as usize].front = false;
            self.queue.push(0, c);
        }

        // 1. Invalidate, by old distance: a candidate keeps its distance only with a neighbour
        // that still gives it exactly; otherwise it is forgotten and the cells it gave theirs
        // become candidates.
        self.forgotten.clear();
        while let Some((d, c)) = self.queue.pop() {
            let n = self.nodes[c as usize];
            if !n.own || n.front || n.dist != d {
                continue;
            }
            let k = n.listed as usize;
            let held = self.from[c as usize][..k].iter().any(|&y| {
                let m = self.nodes[y as usize];
                m.own && m.dist != FAR && m.dist + m.cost as u32 == d
            });
            if held {
                continue;
            }
            self.nodes[c as usize].dist = FAR;
            self.forgotten.push(c);
            let through = d + n.cost as u32;
            for z in self.neighbours[c as usize].iter() {
                let m = self.nodes[z.index()];
                if m.own && !m.front && m.dist == through {
                    self.queue.push(through, z.0);
                }
            }
        }

        // 2. Search: seeds are the cells that joined the front, and the forgotten and gained
        // cells at the best distance their neighbours give.
        for k in 0..self.joined.len() {
            self.queue.push(0, self.joined[k]);
        }
        for k in 0..self.forgotten.len() + self.gained.len() {
            let c = if k < self.forgotten.len() { self.forgotten[k] } else { self.gained[k - self.forgotten.len()] };
            let n = self.nodes[c as usize];
            if n.front {
                self.queue.push(0, c);
                continue;
            }
            let best = self.from[c as usize][..n.listed as usize]
                .iter()
                .map(|&y| self.nodes[y as usize])
                .filter(|m| m.own && m.dist != FAR)
                .map(|m| m.dist + m.cost as u32)
                .min();
            if let Some(b) = best {
                if b < n.dist {
                    self.nodes[c as usize].dist = b;
                    self.queue.push(b, c);
                }
            }
        }
        while let Some((d, c)) = self.queue.pop() {
            let n = self.nodes[c as usize];
            if n.dist != d {
                continue;
            }
            let through = d + n.cost as u32;
            for z in self.neighbours[c as usize].iter() {
                let m = &mut self.nodes[z.index()];
                if m.own && through < m.dist {
                    m.dist = through;
                    self.queue.push(through, z.0);
                }
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use gbely_rules::{Decide, Grid, OwnCell, Owner, VisibleCell};

    use crate::Council;

    use super::*;

    /// A small deterministic generator.
    struct Lcg(u64);

    impl Lcg {
        fn below(&mut self, n: usize) -> usize {
            self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((self.0 >> 33) % n as u64) as usize
        }
    }

    /// What a side owning `owned` sees: own cells with units, their foreign neighbours visible.
    fn observe(grid: &Grid, terrain: &[Terrain], owned: &[bool], round: u32) -> Observation {
        let mut obs = Observation { round, ..Observation::default() };
        let mut seen = vec![false; grid.len()];
        for c in grid.cells().filter(|c| owned[c.index()]) {
            obs.own.push(OwnCell {
                cell: c,
                terrain: terrain[c.index()],
                units: (c.0 % 5) as f64,
                fortification: 0.0,
                neighbours: *grid.neighbours(c),
            });
            for n in grid.neighbours(c).iter().filter(|n| !owned[n.index()]) {
                seen[n.index()] = true;
            }
        }
        obs.visible.extend(grid.cells().filter(|c| seen[c.index()]).map(|c| VisibleCell {
            cell: c,
            owner: if c.0 % 3 == 0 { Owner::Council } else { Owner::Neutral },
            garrison: (c.0 % 11) as f64,
            fortification: 0.0,
            terrain: terrain[c.index()],
        }));
        obs
    }

    /// Territories that grow, shrink, split and merge a few cells at a time (and now and then a
    /// lot at once): the kept Council decides each as the from-scratch one does, repairing most.
    #[test]
    fn repairs_give_the_distances_a_search_from_scratch_gives() {
        for (seed, w, h) in [(1u64, 12u32, 12u32), (2, 30, 17), (3, 41, 41)] {
            let grid = Grid::new(w, h);
            let mut rng = Lcg(seed);
            let terrain: Vec<Terrain> = (0..grid.len())
                .map(|_| match rng.below(10) {
                    0..=5 => Terrain::Meadow,
                    6..=8 => Terrain::Hill,
                    _ => Terrain::River,
                })
                .collect();
            let mut owned = vec![false; grid.len()];
            for k in 0..grid.len() / 2 {
                owned[(k * 7) % grid.len()] = rng.below(3) > 0;
            }
            let mut council = Council::new().keeping();
            for round in 0..400 {
                let flips = if round % 50 == 49 { grid.len() / 3 } else { 1 + rng.below(6) };
                for _ in 0..flips {
                    // Mostly cells next to the border (captures and losses), now and then anywhere.
                    let c = Cell(rng.below(grid.len()) as u32);
                    let border = grid.neighbours(c).iter().any(|n| owned[n.index()] != owned[c.index()]);
                    if border || rng.below(8) == 0 {
                        owned[c.index()] = !owned[c.index()];
                    }
                }
                let obs = observe(&grid, &terrain, &owned, round);
                let kept = council.decide(&obs);
                assert_eq!(kept, Council::new().decide(&obs), "seed {seed}, round {round}");
            }
            let (repairs, rebuilds) = council.kept_stats();
            assert!(repairs > 300 && rebuilds > 0, "seed {seed}: repairs {repairs}, rebuilds {rebuilds}");
        }
    }
}
