//! Helpers agents share: a dense cell → slot lookup over an observation, and combat arithmetic.

use crate::{Cell, Observation, Terrain};

/// Where a cell stands in an observation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    /// Index into `obs.own`.
    Own(usize),
    /// Index into `obs.visible`.
    Visible(usize),
    /// Not seen this round.
    Unseen,
}

/// A dense lookup from cells to their place in an observation, rebuilt each round without
/// allocating once it has grown (cheaper than a hash map and free of iteration order).
///
/// Keep one in the agent and [`rebuild`](CellLookup::rebuild) it at the start of each decision:
///
/// ```
/// use gbely_rules::{Cell, CellLookup, Neighbours, Observation, OwnCell, Owner, Slot, Terrain, VisibleCell};
///
/// // One own cell in the corner, its two neighbours visible (row-major: `P00_01` first).
/// let (corner, east, south) = (Cell::at(0, 0), Cell::at(0, 1), Cell::at(1, 0));
/// let seen = |cell| VisibleCell { cell, owner: Owner::Neutral, garrison: 3.0, fortification: 0.0, terrain: Terrain::Meadow };
/// let obs = Observation {
///     round: 0,
///     base: corner,
///     own: vec![OwnCell {
///         cell: corner,
///         terrain: Terrain::Meadow,
///         units: 10.0,
///         fortification: 0.0,
///         neighbours: Neighbours::from_cells(&[south, east]).unwrap(),
///     }],
///     visible: vec![seen(east), seen(south)],
/// };
///
/// let mut lookup = CellLookup::new();
/// lookup.rebuild(&obs);
/// assert_eq!(lookup.get(corner), Slot::Own(0));
/// assert_eq!(lookup.get(south), Slot::Visible(1));
/// assert_eq!(lookup.visible(east), Some(0));
/// assert_eq!(lookup.own(east), None);
/// assert_eq!(lookup.get(Cell::at(30, 30)), Slot::Unseen);
/// ```
#[derive(Clone, Debug, Default)]
pub struct CellLookup {
    /// Per cell its slot plus one ([`VISIBLE_BIT`] set for a visible cell), [`UNSEEN`] (0)
    /// where none, so that the table is cleared with zeros (a `memset`); longer than `len` when
    /// an earlier observation reached further (those cells are [`UNSEEN`] too).
    slots: Vec<u32>,
    /// One past the largest cell index of the last observation.
    len: usize,
    /// The cells the last rebuild wrote, when they were few for the table (`sparse`): the next
    /// rebuild clears just these rather than the whole table, so that it costs what the
    /// observation holds, not the map (an in-process agent of the final numbers its cells in
    /// rows of 1000: a table of 90 000 for a few hundred cells seen).
    written: Vec<u32>,
    sparse: bool,
}

const UNSEEN: u32 = 0;
const VISIBLE_BIT: u32 = 1 << 31;

/// Clearing by the list of cells written pays when they are fewer than one in this many of the
/// table's (a table is cleared whole with wide stores, a listed cell with one scattered store).
const SPARSE: usize = 16;

impl CellLookup {
    /// An empty lookup: every cell [`Slot::Unseen`] until [`rebuild`](CellLookup::rebuild).
    pub fn new() -> CellLookup {
        CellLookup::default()
    }

    /// Indexes `obs`: every own cell, every visible cell (every neighbour of an own cell is one
    /// or the other, so the table covers all of them).
    pub fn rebuild(&mut self, obs: &Observation) {
        if self.sparse {
            for &c in &self.written {
                self.slots[c as usize] = UNSEEN;
            }
        } else {
            self.slots.fill(UNSEEN);
        }
        self.written.clear();
        self.len = obs
            .own
            .iter()
            .map(|o| o.cell.0)
            .chain(obs.visible.iter().map(|v| v.cell.0))
            .max()
            .map_or(0, |m| m as usize + 1);
        if self.slots.len() < self.len {
            self.slots.resize(self.len, UNSEEN);
        }
        let seen = obs.own.len() + obs.visible.len();
        self.sparse = seen * SPARSE < self.slots.len();
        for (i, o) in obs.own.iter().enumerate() {
            self.slots[o.cell.index()] = i as u32 + 1;
        }
        for (i, v) in obs.visible.iter().enumerate() {
            self.slots[v.cell.index()] = (i as u32 + 1) | VISIBLE_BIT;
        }
        if self.sparse {
            self.written.extend(obs.own.iter().map(|o| o.cell.0).chain(obs.visible.iter().map(|v| v.cell.0)));
        }
    }

    /// Where `c` stands in the observation last indexed.
    #[inline]
    pub fn get(&self, c: Cell) -> Slot {
        match self.slots.get(c.index()) {
            None => Slot::Unseen,
            Some(&UNSEEN) => Slot::Unseen,
            Some(&s) if s & VISIBLE_BIT != 0 => Slot::Visible((s & !VISIBLE_BIT) as usize - 1),
            Some(&s) => Slot::Own(s as usize - 1),
        }
    }

    /// The index of `c` into `obs.own`, if the side owns it.
    #[inline]
    pub fn own(&self, c: Cell) -> Option<usize> {
        match self.get(c) {
            Slot::Own(i) => Some(i),
            _ => None,
        }
    }

    /// The index of `c` into `obs.visible`, if it is a visible foreign cell.
    #[inline]
    pub fn visible(&self, c: Cell) -> Option<usize> {
        match self.get(c) {
            Slot::Visible(i) => Some(i),
            _ => None,
        }
    }

    /// One past the largest cell index seen: a bound for per-cell scratch arrays.
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether nothing is indexed (before the first rebuild, or for an empty observation).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Who can attack what: for each visible cell, the own cells next to it, and which own cells are
/// on the frontier (next to a visible cell). Rebuilt each round without allocating once grown.
///
/// Attackers of a visible cell are listed in the order of `obs.own`; that order is part of the
/// example agents' and the Council's behaviour.
///
/// ```
/// use gbely_rules::{Cell, CellLookup, Frontier, Neighbours, Observation, OwnCell, Owner, Terrain, VisibleCell};
///
/// // Three own cells in the top-left corner; `P00_00` is enclosed by the other two.
/// //   own:     P00_00 P00_01 | P01_00
/// //   visible: P00_02 P01_01 P02_00
/// let own = |row, col, around: &[(u32, u32)]| OwnCell {
///     cell: Cell::at(row, col),
///     terrain: Terrain::Meadow,
///     units: 6.0,
///     fortification: 0.0,
///     neighbours: Neighbours::from_cells(&around.iter().map(|&(r, c)| Cell::at(r, c)).collect::<Vec<_>>()).unwrap(),
/// };
/// let seen = |row, col| VisibleCell {
///     cell: Cell::at(row, col),
///     owner: Owner::Council,
///     garrison: 4.0,
///     fortification: 0.0,
///     terrain: Terrain::Hill,
/// };
/// let obs = Observation {
///     round: 7,
///     base: Cell::at(0, 0),
///     own: vec![own(0, 0, &[(1, 0), (0, 1)]), own(0, 1, &[(1, 1), (0, 0), (0, 2)]), own(1, 0, &[(0, 0), (2, 0), (1, 1)])],
///     visible: vec![seen(0, 2), seen(1, 1), seen(2, 0)],
/// };
///
/// let (mut lookup, mut front) = (CellLookup::new(), Frontier::new());
/// lookup.rebuild(&obs);
/// front.rebuild(&obs, &lookup);
/// // `P01_01` (visible 1) can be attacked from `P00_01` and `P01_00` (own 1 and 2).
/// assert_eq!(front.attackers(1), [1, 2]);
/// assert_eq!(front.attackers(0), [1]);
/// assert!(!front.is_frontier(0));
/// assert!(front.is_frontier(1) && front.is_frontier(2));
/// // `P00_00`'s neighbours (south, east) are own cells 2 and 1.
/// let none = Frontier::NOT_OWN;
/// assert_eq!(front.own_neighbours()[0], [2, 1, none, none]);
/// ```
#[derive(Clone, Debug, Default)]
pub struct Frontier {
    /// `start[v]..start[v + 1]` indexes `attackers` for visible cell `v`.
    start: Vec<u32>,
    attackers: Vec<u32>,
    fill: Vec<u32>,
    frontier: Vec<bool>,
    /// Per own cell, its own neighbours as indices into `obs.own` ([`Frontier::NOT_OWN`] for the
    /// others), in the order of its `neighbours` list: found in the same pass, so an agent
    /// walking its territory needs no second lookup per neighbour.
    own_nbr: Vec<[u32; 4]>,
}

impl Frontier {
    /// An empty index, to [`rebuild`](Frontier::rebuild) each round.
    pub fn new() -> Frontier {
        Frontier::default()
    }

    /// Indexes `obs`; `lookup` must have been rebuilt for the same observation.
    pub fn rebuild(&mut self, obs: &Observation, lookup: &CellLookup) {
        let (n_own, n_vis) = (obs.own.len(), obs.visible.len());
        self.frontier.clear();
        self.frontier.resize(n_own, false);
        self.start.clear();
        self.start.resize(n_vis + 1, 0);
        self.own_nbr.clear();
        self.own_nbr.resize(n_own, [Self::NOT_OWN; 4]);
        for (i, o) in obs.own.iter().enumerate() {
            let own = &mut self.own_nbr[i];
            for (k, nb) in o.neighbours.iter().enumerate() {
                match lookup.get(nb) {
                    Slot::Visible(v) => {
                        self.start[v + 1] += 1;
                        self.frontier[i] = true;
                    }
                    Slot::Own(j) => own[k] = j as u32,
                    Slot::Unseen => {}
                }
            }
        }
        for v in 0..n_vis {
            self.start[v + 1] += self.start[v];
        }
        self.attackers.clear();
        self.attackers.resize(self.start[n_vis] as usize, 0);
        self.fill.clear();
        self.fill.extend_from_slice(&self.start[..n_vis]);
        // Only frontier cells have visible neighbours.
        for (i, o) in obs.own.iter().enumerate().filter(|(i, _)| self.frontier[*i]) {
            for nb in o.neighbours.iter() {
                if let Some(v) = lookup.visible(nb) {
                    self.attackers[self.fill[v] as usize] = i as u32;
                    self.fill[v] += 1;
                }
            }
        }
    }

    /// The own cells (indices into `obs.own`) next to visible cell `v`, in `obs.own` order.
    #[inline]
    pub fn attackers(&self, v: usize) -> &[u32] {
        &self.attackers[self.start[v] as usize..self.start[v + 1] as usize]
    }

    /// Whether own cell `i` (an index into `obs.own`) has a visible neighbour.
    #[inline]
    pub fn is_frontier(&self, i: usize) -> bool {
        self.frontier[i]
    }

    /// No own cell: an entry of [`Frontier::own_neighbours`] for a neighbour that is not own
    /// (and for the unused places of a cell with fewer than four neighbours).
    pub const NOT_OWN: u32 = u32::MAX;

    /// Per own cell (indices into `obs.own`), its neighbours that are own cells, as indices into
    /// `obs.own`, in the order of the cell's `neighbours` list; [`Frontier::NOT_OWN`] elsewhere.
    #[inline]
    pub fn own_neighbours(&self) -> &[[u32; 4]] {
        &self.own_nbr
    }
}

/// The defence of a cell (SPEC §6.4): `garrison × bonus + fortification`.
#[inline]
pub fn defence(garrison: f64, fortification: f64, terrain: Terrain) -> f64 {
    garrison * terrain.defence_bonus() + fortification
}

/// The smallest whole force that surely takes a cell whose observed (rounded) garrison and
/// fortification are given: rounding can hide up to 0.05 of each, and combat is strict.
///
/// ```
/// use gbely_rules::{defence, sure_win, Terrain};
///
/// // A hill seen with `posadka` 4.0 and `opevnenie` 1.0 may really hold 4.05 and 1.05:
/// // 4.05 × 1.5 + 1.05 = 7.125, so 8 units take it whatever the rounding hid.
/// assert_eq!(sure_win(4.0, 1.0, Terrain::Hill), 8.0);
/// assert!(sure_win(4.0, 1.0, Terrain::Hill) > defence(4.05, 1.05, Terrain::Hill));
/// // A defence of exactly 9 is not beaten by 9 (SPEC §6.4: the attack must be greater).
/// assert_eq!(sure_win(9.0, 0.0, Terrain::Meadow), 10.0);
/// ```
#[inline]
pub fn sure_win(garrison: f64, fortification: f64, terrain: Terrain) -> f64 {
    (defence(garrison + 0.05, fortification + 0.05, terrain)).floor() + 1.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Grid, OwnCell, Owner, VisibleCell};

    fn own(grid: &Grid, c: Cell) -> OwnCell {
        OwnCell { cell: c, terrain: Terrain::Meadow, units: 1.0, fortification: 0.0, neighbours: *grid.neighbours(c) }
    }

    fn seen(c: Cell) -> VisibleCell {
        VisibleCell { cell: c, owner: Owner::Neutral, garrison: 0.0, fortification: 0.0, terrain: Terrain::Hill }
    }

    #[test]
    fn a_rebuild_forgets_the_cells_of_the_observation_before() {
        let grid = Grid::new(60, 60);
        let far = grid.cell(59, 59);
        let near = grid.cell(0, 0);
        let mut big = Observation::default();
        big.own.push(own(&grid, near));
        big.own.push(own(&grid, far));
        big.visible.push(seen(grid.cell(59, 58)));
        let mut lookup = CellLookup::new();
        lookup.rebuild(&big);
        assert_eq!(lookup.len(), far.index() + 1);
        assert_eq!(lookup.get(far), Slot::Own(1));
        assert_eq!(lookup.get(grid.cell(59, 58)), Slot::Visible(0));

        // A smaller observation after it: the far cells are unseen, the bound is the new one.
        let mut small = Observation::default();
        small.visible.push(seen(near));
        small.own.push(own(&grid, grid.cell(0, 1)));
        lookup.rebuild(&small);
        assert_eq!(lookup.len(), grid.cell(0, 1).index() + 1);
        assert_eq!(lookup.get(far), Slot::Unseen);
        assert_eq!(lookup.get(grid.cell(59, 58)), Slot::Unseen);
        assert_eq!(lookup.get(near), Slot::Visible(0));
        assert_eq!(lookup.get(grid.cell(0, 1)), Slot::Own(0));

        lookup.rebuild(&Observation::default());
        assert!(lookup.is_empty());
        assert_eq!(lookup.get(near), Slot::Unseen);
        assert_eq!(lookup.get(grid.cell(0, 1)), Slot::Unseen);

        // Dense and sparse observations in turn (the table cleared whole, then by its list).
        let small_grid = Grid::new(4, 4);
        let mut dense = Observation::default();
        dense.own.extend(small_grid.cells().map(|c| own(&small_grid, c)));
        let mut lookup = CellLookup::new();
        for _ in 0..2 {
            lookup.rebuild(&dense);
            assert!((0..16).all(|i| lookup.get(Cell(i)) == Slot::Own(i as usize)));
            lookup.rebuild(&big);
            assert_eq!(lookup.get(far), Slot::Own(1));
            assert!((1..16).all(|i| lookup.get(Cell(i)) == Slot::Unseen));
            lookup.rebuild(&small);
            assert_eq!(lookup.get(far), Slot::Unseen);
            assert_eq!(lookup.get(Cell(1)), Slot::Own(0));
            assert!((2..16).all(|i| lookup.get(Cell(i)) == Slot::Unseen));
        }
    }

    #[test]
    fn sure_win_beats_the_worst_case_behind_the_rounding() {
        // Defence exactly 9 on a meadow: rounding could hide up to 9.05 → 10.
        assert_eq!(sure_win(9.0, 0.0, Terrain::Meadow), 10.0);
        // Hill with 4: 4.05 × 1.5 = 6.075 → 7.
        assert_eq!(sure_win(4.0, 0.0, Terrain::Hill), 7.0);
        for g in [0.0, 0.3, 1.0, 2.5, 7.9] {
            for t in Terrain::ALL {
                let need = sure_win(g, 0.0, t);
                assert!(need > (g + 0.049) * t.defence_bonus());
            }
        }
    }
}
