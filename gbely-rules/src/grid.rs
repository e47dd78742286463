//! Cells, their ids (`P{row:02}_{col:02}`) and the 4-neighbourhood (SPEC §2).

use std::fmt;

/// A cell of a map, as its row-major index (`row * width + col`): the engine numbers by the map's
/// width, agents by [`AGENT_GRID_WIDTH`] (they are not told the map's size).
///
/// Cheap to copy and compare; the text id (`P57_02`) exists only at the wire boundary.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Cell(pub u32);

impl Cell {
    /// The cell's number as an index into per-cell arrays.
    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// The cell at `row`, `col` as agents number cells ([`AGENT_GRID_WIDTH`]).
    ///
    /// ```
    /// use gbely_rules::{Cell, AGENT_GRID_WIDTH};
    ///
    /// // `P57_02`, the first side's base on the reference map.
    /// let base = Cell::at(57, 2);
    /// assert_eq!(base, Cell(57 * AGENT_GRID_WIDTH + 2));
    /// assert_eq!(base.row_col(), (57, 2));
    /// ```
    #[inline]
    pub const fn at(row: u32, col: u32) -> Cell {
        Cell(row * AGENT_GRID_WIDTH + col)
    }

    /// The row and column of a cell as agents number cells ([`AGENT_GRID_WIDTH`]): what an
    /// agent may compute geometry from, in-process and served alike.
    ///
    /// ```
    /// use gbely_rules::{Cell, Observation};
    ///
    /// // Manhattan distance from an agent's home base (`moja_zakladna`) to a cell.
    /// fn distance_home(obs: &Observation, c: Cell) -> u32 {
    ///     let ((r0, c0), (r1, c1)) = (obs.base.row_col(), c.row_col());
    ///     r0.abs_diff(r1) + c0.abs_diff(c1)
    /// }
    /// let obs = Observation { base: Cell::at(57, 2), ..Observation::default() };
    /// assert_eq!(distance_home(&obs, Cell::at(55, 5)), 5);
    /// ```
    #[inline]
    pub const fn row_col(self) -> (u32, u32) {
        (self.0 / AGENT_GRID_WIDTH, self.0 % AGENT_GRID_WIDTH)
    }
}

/// How cells are numbered for agents (Rust `Decide`s, in-process and served over the line
/// protocol alike): `row * AGENT_GRID_WIDTH + col`, whatever the map's size, which an agent is
/// not told (SPEC §5). Row-major order is the map's: sorting cells sorts them as the rules do.
///
/// ```
/// use gbely_rules::{Cell, AGENT_GRID_WIDTH};
///
/// // Row-major: the whole of row 3 comes before row 4, whatever the map's width.
/// assert_eq!(Cell::at(3, 59).0, 3 * AGENT_GRID_WIDTH + 59);
/// assert!(Cell::at(3, 59) < Cell::at(4, 0));
/// // A neighbour one row down is `AGENT_GRID_WIDTH` cells further on.
/// assert_eq!(Cell(Cell::at(3, 7).0 + AGENT_GRID_WIDTH), Cell::at(4, 7));
/// ```
pub const AGENT_GRID_WIDTH: u32 = 1024;

/// Formats a cell id: `P{row:02}_{col:02}`; rows and cols of 100+ simply have more digits.
pub fn format_cell_id(row: u32, col: u32) -> String {
    format!("P{row:02}_{col:02}")
}

/// Parses a cell id in its one canonical form (`P05_17`, not `P5_17` nor `P005_17`).
///
/// Returns `(row, col)`; the caller checks that it lies on its map.
pub fn parse_cell_id(id: &str) -> Option<(u32, u32)> {
    let rest = id.strip_prefix('P')?;
    let (r, c) = rest.split_once('_')?;
    let row = parse_part(r)?;
    let col = parse_part(c)?;
    Some((row, col))
}

fn parse_part(s: &str) -> Option<u32> {
    if s.len() < 2 || s.len() > 9 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // Canonical: exactly two digits, or more digits without a leading zero.
    if s.len() > 2 && s.starts_with('0') {
        return None;
    }
    s.parse().ok()
}

/// Up to four neighbours in the order north, south, west, east, off-map cells omitted.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub struct Neighbours {
    cells: [Cell; 4],
    len: u8,
}

impl Neighbours {
    /// Up to four cells, in the order given; `None` for more than four.
    pub fn from_cells(cells: &[Cell]) -> Option<Neighbours> {
        if cells.len() > 4 {
            return None;
        }
        let mut n = Neighbours::default();
        n.cells[..cells.len()].copy_from_slice(cells);
        n.len = cells.len() as u8;
        Some(n)
    }
    /// The neighbours as a slice, north, south, west, east.
    #[inline]
    pub fn as_slice(&self) -> &[Cell] {
        &self.cells[..self.len as usize]
    }
    /// Whether `c` is one of these neighbours.
    #[inline]
    pub fn contains(&self, c: Cell) -> bool {
        self.as_slice().contains(&c)
    }
    /// How many neighbours: 2 in a corner, 3 on an edge, 4 inside.
    #[inline]
    pub fn len(&self) -> usize {
        self.len as usize
    }
    /// Whether there are none (only on a map of one cell).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// The same neighbours with each cell renumbered by `f` (another numbering of the grid).
    #[inline]
    pub fn map(&self, f: impl Fn(Cell) -> Cell) -> Neighbours {
        let mut n = Neighbours { len: self.len, ..Neighbours::default() };
        for (to, &c) in n.cells.iter_mut().zip(self.as_slice()) {
            *to = f(c);
        }
        n
    }
    /// The neighbours in order, north, south, west, east.
    pub fn iter(&self) -> impl Iterator<Item = Cell> + '_ {
        self.as_slice().iter().copied()
    }
}

impl fmt::Debug for Neighbours {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

/// The geometry of a rectangular map: size, ids and neighbours.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grid {
    width: u32,
    height: u32,
    neighbours: Vec<Neighbours>,
}

impl Grid {
    /// A grid of `width × height` cells. Both must be at least 1.
    pub fn new(width: u32, height: u32) -> Grid {
        assert!(width >= 1 && height >= 1, "a grid has at least one cell");
        let mut neighbours = Vec::with_capacity((width * height) as usize);
        for r in 0..height {
            for c in 0..width {
                let mut n = Neighbours::default();
                let mut push = |rr: u32, cc: u32| {
                    n.cells[n.len as usize] = Cell(rr * width + cc);
                    n.len += 1;
                };
                if r > 0 {
                    push(r - 1, c);
                }
                if r + 1 < height {
                    push(r + 1, c);
                }
                if c > 0 {
                    push(r, c - 1);
                }
                if c + 1 < width {
                    push(r, c + 1);
                }
                neighbours.push(n);
            }
        }
        Grid { width, height, neighbours }
    }

    /// Number of columns.
    #[inline]
    pub fn width(&self) -> u32 {
        self.width
    }
    /// Number of rows.
    #[inline]
    pub fn height(&self) -> u32 {
        self.height
    }
    /// Number of cells.
    #[inline]
    pub fn len(&self) -> usize {
        self.neighbours.len()
    }
    /// Always `false`: [`Grid::new`] makes at least one cell.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.neighbours.is_empty()
    }
    /// The cell at `row`, `col` as this map numbers cells (`row * width + col`); both must lie
    /// on the map.
    #[inline]
    pub fn cell(&self, row: u32, col: u32) -> Cell {
        debug_assert!(row < self.height && col < self.width);
        Cell(row * self.width + col)
    }
    /// The row and column of a cell of this map (numbered by the map's width, unlike
    /// [`Cell::row_col`]).
    #[inline]
    pub fn row_col(&self, c: Cell) -> (u32, u32) {
        (c.0 / self.width, c.0 % self.width)
    }
    /// The neighbours of a cell (SPEC §2): north, south, west, east, off-map cells omitted.
    #[inline]
    pub fn neighbours(&self, c: Cell) -> &Neighbours {
        &self.neighbours[c.index()]
    }
    /// Every cell's neighbours, row-major ([`Grid::neighbours`] of each cell).
    #[inline]
    pub fn all_neighbours(&self) -> &[Neighbours] {
        &self.neighbours
    }
    /// Whether `a` and `b` share a side (no diagonals, no wrapping).
    #[inline]
    pub fn are_neighbours(&self, a: Cell, b: Cell) -> bool {
        self.neighbours[a.index()].contains(b)
    }
    /// All cells in row-major order.
    pub fn cells(&self) -> impl Iterator<Item = Cell> {
        (0..self.len() as u32).map(Cell)
    }
    /// The image of a cell under the 180° rotation `(r, c) → (H−1−r, W−1−c)`.
    #[inline]
    pub fn rotate180(&self, c: Cell) -> Cell {
        Cell(self.len() as u32 - 1 - c.0)
    }
    /// The text id of a cell (`P57_02`).
    pub fn id(&self, c: Cell) -> String {
        let (r, col) = self.row_col(c);
        format_cell_id(r, col)
    }
    /// Writes the id of a cell into `out` without allocating (on the hot path of every
    /// observation sent to an agent process).
    pub fn write_id(&self, c: Cell, out: &mut String) {
        let (r, col) = self.row_col(c);
        let mut buf = [0u8; 24];
        buf[0] = b'P';
        let mut n = 1 + put_2digits(&mut buf[1..], r);
        buf[n] = b'_';
        n += 1;
        n += put_2digits(&mut buf[n..], col);
        out.push_str(std::str::from_utf8(&buf[..n]).expect("ASCII digits"));
    }

    /// The cell with this id, if it is on this map.
    pub fn parse(&self, id: &str) -> Option<Cell> {
        let (r, c) = parse_cell_id(id)?;
        (r < self.height && c < self.width).then(|| self.cell(r, c))
    }
}

/// Writes `v` with at least two digits; returns the length.
fn put_2digits(buf: &mut [u8], v: u32) -> usize {
    if v < 100 {
        buf[0] = b'0' + (v / 10) as u8;
        buf[1] = b'0' + (v % 10) as u8;
        return 2;
    }
    let mut digits = [0u8; 10];
    let (mut n, mut x) = (0, v);
    while x > 0 {
        digits[n] = b'0' + (x % 10) as u8;
        x /= 10;
        n += 1;
    }
    for k in 0..n {
        buf[k] = digits[n - 1 - k];
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_format_and_parse() {
        assert_eq!(format_cell_id(57, 2), "P57_02");
        assert_eq!(format_cell_id(2, 57), "P02_57");
        assert_eq!(format_cell_id(123, 7), "P123_07");
        assert_eq!(parse_cell_id("P57_02"), Some((57, 2)));
        assert_eq!(parse_cell_id("P123_07"), Some((123, 7)));
        for bad in ["", "P", "P5_02", "P05_2", "P005_02", "p05_02", "P05-02", "P05_02x", "Q05_02", "P+5_02", "P05__02"]
        {
            assert_eq!(parse_cell_id(bad), None, "{bad}");
        }
    }

    #[test]
    fn grid_ids_round_trip_and_stay_on_the_map() {
        let g = Grid::new(60, 60);
        let c = g.parse("P57_02").unwrap();
        assert_eq!(g.row_col(c), (57, 2));
        assert_eq!(g.id(c), "P57_02");
        let mut s = String::new();
        g.write_id(g.cell(3, 45), &mut s);
        assert_eq!(s, "P03_45");
        assert_eq!(g.parse("P60_00"), None);
        assert_eq!(g.parse("P00_60"), None);
        let big = Grid::new(120, 101);
        let mut s = String::new();
        big.write_id(big.cell(100, 119), &mut s);
        assert_eq!(s, "P100_119");
        assert_eq!(big.parse("P100_119"), Some(big.cell(100, 119)));
    }

    #[test]
    fn neighbours_north_south_west_east_without_wrap() {
        let g = Grid::new(60, 60);
        let ids = |id: &str| -> Vec<String> { g.neighbours(g.parse(id).unwrap()).iter().map(|c| g.id(c)).collect() };
        // The example of SPEC §2.
        assert_eq!(ids("P12_07"), ["P11_07", "P13_07", "P12_06", "P12_08"]);
        assert_eq!(ids("P00_00"), ["P01_00", "P00_01"]);
        assert_eq!(ids("P59_59"), ["P58_59", "P59_58"]);
        assert_eq!(ids("P00_30"), ["P01_30", "P00_29", "P00_31"]);
        assert_eq!(ids("P30_59"), ["P29_59", "P31_59", "P30_58"]);
    }

    #[test]
    fn renumbered_neighbours_are_the_renumbered_cells_in_order() {
        let g = Grid::new(90, 90);
        // The agents' numbering (rows of 1000) of a corner, an edge and an inner cell.
        let agent = |c: Cell| Cell::at(c.0 / 90, c.0 % 90);
        for c in [g.cell(0, 0), g.cell(0, 45), g.cell(89, 89), g.cell(40, 41)] {
            let n = g.neighbours(c);
            let want: Vec<Cell> = n.iter().map(agent).collect();
            let got = n.map(agent);
            assert_eq!(got.as_slice(), want.as_slice());
            // Equal as values too (the unused places stay as `from_cells` leaves them).
            assert_eq!(got, Neighbours::from_cells(&want).unwrap());
        }
    }

    #[test]
    fn rotation_maps_the_two_bases_onto_each_other() {
        let g = Grid::new(60, 60);
        assert_eq!(g.id(g.rotate180(g.parse("P57_02").unwrap())), "P02_57");
    }
}
