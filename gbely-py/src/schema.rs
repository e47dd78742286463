//! The observation of the learning environments, described once: [`FIELDS`] (each array's name,
//! dtype, shape rule, bounds and the value of an unseen cell), the codes of terrain, owner and
//! action kind, and [`write_obs`], the one writer of a seat's arrays into an [`ObsOut`] — one
//! row of every field, handed out by whatever holds the memory (as OpenSpiel's
//! `Observer::WriteTensor` writes into an `Allocator`): new arrays ([`ObsVec`], `EnvCore`), a
//! match's row of a `VectorCore`'s batch, a round of a dataset's columns.
//!
//! [`Obs`] is a value per field (arrays, slices, borrows, iterators), and [`obs_fields!`] maps
//! one to another field by field, so the fields are listed in this module only. Where a map's
//! cells are in arrays over a larger grid (padding) is [`Layout`]'s one rule, for observations,
//! dataset labels and actions alike.
//!
//! Python reads the table as `gbely._gbely.OBS_SCHEMA` ([`schema_dict`]) and builds its spaces
//! and keys from it; `gbely.codec` keeps the codes as literals (it is standard-library only, as
//! it is inlined into submissions) and a test holds them to the table.

use gbely_rules::constants::{production, BASE_BONUS, STARTING_UNITS};
use gbely_rules::{Cell, Grid, Observation, Owner, Terrain};
use numpy::{PyArray1, PyArrayMethods};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

/// Actions per cell: stay, MOVE north/south/west/east, ATTACK north/south/west/east, FORTIFY.
pub(crate) const KINDS: usize = 10;
/// The action kinds by code: `MOVE + d` and `ATTACK + d` go toward direction `d` (0 N, 1 S, 2 W,
/// 3 E).
pub(crate) const KIND_NAMES: [&str; KINDS] = [
    "stay",
    "move_north",
    "move_south",
    "move_west",
    "move_east",
    "attack_north",
    "attack_south",
    "attack_west",
    "attack_east",
    "fortify",
];
/// The first MOVE kind (north), the first ATTACK kind, FORTIFY.
pub(crate) const MOVE: usize = 1;
pub(crate) const ATTACK: usize = 5;
pub(crate) const FORTIFY: usize = 9;

/// Terrain codes of the `terrain` array, by the terrain's §5 name.
pub(crate) const TERRAIN_CODES: [(&str, i8); 3] = [("luka", 0), ("vrch", 1), ("rieka", 2)];

/// Owner codes of the `owner` array: unseen, neutral (`hbp`), the seat itself, the Council
/// (`zastupitelstvo`); an army `armada_k` (k = 1 for the Council's view of seat 0) is
/// `ARMY_OFFSET + k`.
pub(crate) const UNSEEN: i8 = -1;
pub(crate) const NEUTRAL: i8 = 0;
pub(crate) const OWN: i8 = 1;
pub(crate) const COUNCIL: i8 = 2;
pub(crate) const ARMY_OFFSET: i8 = 2;
/// The most armies a map has (finalists of a final, SPEC §9): the largest owner code is
/// `ARMY_OFFSET + ARMIES`.
const ARMIES: i8 = 8;

pub(crate) fn owner_code(o: Owner) -> i8 {
    match o {
        Owner::Neutral => NEUTRAL,
        Owner::Council => COUNCIL,
        Owner::Army(k) => k as i8 + ARMY_OFFSET,
    }
}

pub(crate) fn terrain_code(t: Terrain) -> i8 {
    let name = match t {
        Terrain::Meadow => "luka",
        Terrain::Hill => "vrch",
        Terrain::River => "rieka",
    };
    TERRAIN_CODES.iter().find(|(n, _)| *n == name).map(|&(_, c)| c).expect("every terrain has a code")
}

/// How many values a field has: one per cell of the grid, `KINDS` per cell, or one.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Shape {
    Grid,
    GridKinds,
    One,
}

impl Shape {
    /// Values per row (one seat's observation) over a grid of `cells` cells.
    pub(crate) fn len(self, cells: usize) -> usize {
        match self {
            Shape::Grid => cells,
            Shape::GridKinds => cells * KINDS,
            Shape::One => 1,
        }
    }
    /// A row's numpy shape over a grid of (rows, columns).
    pub(crate) fn dims(self, (h, w): (usize, usize)) -> Vec<usize> {
        match self {
            Shape::Grid => vec![h, w],
            Shape::GridKinds => vec![h, w, KINDS],
            Shape::One => vec![1],
        }
    }
    fn name(self) -> &'static str {
        match self {
            Shape::Grid => "grid",
            Shape::GridKinds => "grid_kinds",
            Shape::One => "one",
        }
    }
}

/// A field's upper bound: a value, every unit the grid can hold (units and fortification have no
/// cap in the rules, but no cell can hold more than all the units there are: see
/// [`all_units`]), or the last round's number (`rounds - 1`).
#[derive(Clone, Copy, PartialEq, Debug)]
pub(crate) enum High {
    Value(f64),
    AllUnits,
    LastRound,
}

/// What bounds every unit on a grid of `cells` cells after `rounds` rounds, as `(per_cell,
/// per_cell_round)`: `cells × (per_cell + rounds × per_cell_round)`. A cell starts with at most
/// the largest garrison a map file may give (or a base's starting units), and gains at most the
/// best terrain's production and the base bonus a round; units are never made otherwise, and a
/// fortification is bought with units (0.3 a unit), so it is bounded by the same.
pub(crate) fn all_units() -> (f64, f64) {
    let best = [Terrain::Meadow, Terrain::Hill, Terrain::River].map(production).into_iter().fold(0.0, f64::max);
    (f64::from(gbely_world::MAX_GARRISON) + STARTING_UNITS, best + BASE_BONUS)
}

/// One observation array.
#[derive(Debug)]
pub(crate) struct Field {
    /// The key in observation dicts.
    pub name: &'static str,
    /// The numpy dtype.
    pub dtype: &'static str,
    pub shape: Shape,
    pub low: f64,
    pub high: High,
    /// The value of an unseen cell, and of every padded cell (for `action_mask`: every kind 0
    /// but stay, which is 1).
    pub unseen: f64,
    /// In the observation space (`action_mask` is in `info` instead).
    pub observation: bool,
    pub doc: &'static str,
}

/// The fields, in the order of [`Obs`] (and of every dict of them).
pub(crate) const FIELDS: [Field; 8] = [
    Field {
        name: "terrain",
        dtype: "int8",
        shape: Shape::Grid,
        low: -1.0,
        high: High::Value(2.0),
        unseen: UNSEEN as f64,
        observation: true,
        doc: "-1 unseen, else the terrain's code (terrain)",
    },
    Field {
        name: "owner",
        dtype: "int8",
        shape: Shape::Grid,
        low: -1.0,
        high: High::Value((ARMY_OFFSET + ARMIES) as f64),
        unseen: UNSEEN as f64,
        observation: true,
        doc: "-1 unseen, else the owner's code (owner; armada_k is armada_offset + k)",
    },
    Field {
        name: "units",
        dtype: "float32",
        shape: Shape::Grid,
        low: 0.0,
        high: High::AllUnits,
        unseen: 0.0,
        observation: true,
        doc: "own jednotky and visible posadka, rounded as in §5; 0 unseen",
    },
    Field {
        name: "fortification",
        dtype: "float32",
        shape: Shape::Grid,
        low: 0.0,
        high: High::AllUnits,
        unseen: 0.0,
        observation: true,
        doc: "opevnenie, rounded as in §5; 0 unseen",
    },
    Field {
        name: "visible",
        dtype: "int8",
        shape: Shape::Grid,
        low: 0.0,
        high: High::Value(1.0),
        unseen: 0.0,
        observation: true,
        doc: "1 for own and visible cells",
    },
    Field {
        name: "base",
        dtype: "int8",
        shape: Shape::Grid,
        low: 0.0,
        high: High::Value(1.0),
        unseen: 0.0,
        observation: true,
        doc: "1 on moja_zakladna (other bases are not in §5)",
    },
    Field {
        name: "round",
        dtype: "int32",
        shape: Shape::One,
        low: 0.0,
        high: High::LastRound,
        unseen: 0.0,
        observation: true,
        doc: "kolo",
    },
    Field {
        name: "action_mask",
        dtype: "int8",
        shape: Shape::GridKinds,
        low: 0.0,
        high: High::Value(1.0),
        unseen: 0.0,
        observation: false,
        doc: "1 where the kind is legal from what the seat sees (stay always)",
    },
];

/// A value per observation field, in the order of [`FIELDS`]: `I` for the int8 fields, `F` for
/// the float32 ones, `R` for `round` (int32). Mapped field by field with [`obs_fields!`].
#[derive(Clone, Debug, Default)]
pub(crate) struct Obs<I, F, R> {
    pub terrain: I,
    pub owner: I,
    pub units: F,
    pub fortification: F,
    pub visible: I,
    pub base: I,
    pub round: R,
    pub mask: I,
}

/// `obs_fields!(obs, |field, x| body)`: the [`Obs`] of `body` for each field `x` of `obs` (an
/// `Obs`, `&Obs` or `&mut Obs`: `x` is then a value, `&` or `&mut`), `field` its entry of
/// [`FIELDS`]. The body is written once and typed per field, so it can be generic over the
/// three element types; `?` in it returns from the enclosing function.
macro_rules! obs_fields {
    ($obs:expr, |$f:pat_param, $x:pat_param| $body:expr) => {
        $crate::schema::obs_fields!(@each $obs, $f, $x, $body, [
            terrain 0, owner 1, units 2, fortification 3, visible 4, base 5, round 6, mask 7
        ])
    };
    (@each $obs:expr, $f:pat_param, $x:pat_param, $body:expr, [$($name:ident $i:tt),*]) => {{
        let $crate::schema::Obs { $($name),* } = $obs;
        $crate::schema::Obs { $($name: {
            let ($f, $x) = (&$crate::schema::FIELDS[$i], $name);
            $body
        }),* }
    }};
}
pub(crate) use obs_fields;

/// An element of an observation array.
pub(crate) trait Elem: Copy + Default + numpy::Element + Send {
    fn of(v: f64) -> Self;
}
impl Elem for i8 {
    fn of(v: f64) -> i8 {
        v as i8
    }
}
impl Elem for f32 {
    fn of(v: f64) -> f32 {
        v as f32
    }
}
impl Elem for i32 {
    fn of(v: f64) -> i32 {
        v as i32
    }
}

/// One seat's observation to write: a row of every field, over the arrays' grid (row-major).
pub(crate) type ObsOut<'a> = Obs<&'a mut [i8], &'a mut [f32], &'a mut [i32]>;

/// Observation arrays held in Rust: `rows` rows (seats, matches or rounds) of every field.
pub(crate) type ObsVec = Obs<Vec<i8>, Vec<f32>, Vec<i32>>;

impl ObsVec {
    /// `rows` rows over a grid of `cells` cells, zeros.
    pub(crate) fn new(rows: usize, cells: usize) -> ObsVec {
        obs_fields!(Obs::<(), (), ()>::default(), |f, _| vec![Elem::of(0.0); rows * f.shape.len(cells)])
    }

    /// Row `i`, to write.
    pub(crate) fn row(&mut self, i: usize, cells: usize) -> ObsOut<'_> {
        obs_fields!(self, |f, v| {
            let n = f.shape.len(cells);
            &mut v[i * n..][..n]
        })
    }

    /// Every row, to write (to hand to threads).
    pub(crate) fn rows(&mut self, cells: usize) -> impl Iterator<Item = ObsOut<'_>> {
        rows_of(obs_fields!(self, |f, v| v.chunks_mut(f.shape.len(cells))))
    }

    /// The rows `which`, in that order.
    pub(crate) fn gather(&self, which: &[usize], cells: usize) -> ObsVec {
        obs_fields!(self, |f, v| {
            let n = f.shape.len(cells);
            let mut out = Vec::with_capacity(which.len() * n);
            for &i in which {
                out.extend_from_slice(&v[i * n..][..n]);
            }
            out
        })
    }

    /// Keeps the first `rows` rows.
    pub(crate) fn truncate(&mut self, rows: usize, cells: usize) {
        let _ = obs_fields!(self, |f, v| v.truncate(rows * f.shape.len(cells)));
    }

    /// The arrays as numpy arrays (no copy) into `d`, each of shape `lead` + the field's over
    /// `grid` (rows, columns).
    pub(crate) fn put(
        self,
        py: Python<'_>,
        d: &Bound<'_, PyDict>,
        lead: &[usize],
        grid: (usize, usize),
    ) -> PyResult<()> {
        let _ = obs_fields!(self, |f, v| {
            let shape = [lead, &f.shape.dims(grid)].concat();
            d.set_item(f.name, PyArray1::from_vec(py, v).reshape(shape)?)?
        });
        Ok(())
    }
}

/// Rows of an `Obs` of per-field row iterators.
pub(crate) fn rows_of<'a, I, F, R>(mut it: Obs<I, F, R>) -> impl Iterator<Item = ObsOut<'a>>
where
    I: Iterator<Item = &'a mut [i8]>,
    F: Iterator<Item = &'a mut [f32]>,
    R: Iterator<Item = &'a mut [i32]>,
{
    std::iter::from_fn(move || {
        let o = obs_fields!(&mut it, |_, x| x.next());
        Some(obs_fields!(o, |_, x| x?))
    })
}

/// Where a map's cells are in arrays over a grid at least as large: the map at the top-left, its
/// row r, column c at the arrays' row r, column c. Every other cell is padding and looks exactly
/// like an unseen cell (see [`FIELDS`]), so a grid larger than every map hides the map's size.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Layout {
    /// The map's (rows, columns).
    pub map: (usize, usize),
    /// The arrays' (rows, columns).
    pub grid: (usize, usize),
}

impl Layout {
    pub(crate) fn new(map: &Grid, grid: (usize, usize)) -> Layout {
        Layout { map: (map.height() as usize, map.width() as usize), grid }
    }

    /// The map's own size: no padding.
    pub(crate) fn of_map(map: &Grid) -> Layout {
        Layout::new(map, (map.height() as usize, map.width() as usize))
    }

    pub(crate) fn cells(&self) -> usize {
        self.grid.0 * self.grid.1
    }

    /// The index in the arrays of a map's cell.
    pub(crate) fn at(&self, c: Cell) -> usize {
        if self.map.1 == self.grid.1 {
            c.index() // the map's rows are the arrays' first rows
        } else {
            let i = c.index();
            (i / self.map.1) * self.grid.1 + i % self.map.1
        }
    }

    /// The map's part of arrays over the grid (map-shaped): a prefix when the map's rows are the
    /// arrays' rows, else the rows' first columns copied into `buf`.
    pub(crate) fn map_part<'a, T: Copy>(&self, v: &'a [T], buf: &'a mut Vec<T>) -> &'a [T] {
        let ((mh, mw), w) = (self.map, self.grid.1);
        if w == mw {
            return &v[..mh * mw];
        }
        buf.clear();
        for r in 0..mh {
            buf.extend_from_slice(&v[r * w..][..mw]);
        }
        buf
    }
}

/// The neighbour of `c` toward N, S, W, E (`d` = 0 … 3), if on the map.
pub(crate) fn toward(grid: &Grid, c: Cell, d: usize) -> Option<Cell> {
    let (r, col) = grid.row_col(c);
    let (w, h) = (grid.width(), grid.height());
    match d {
        0 if r > 0 => Some(grid.cell(r - 1, col)),
        1 if r + 1 < h => Some(grid.cell(r + 1, col)),
        2 if col > 0 => Some(grid.cell(r, col - 1)),
        3 if col + 1 < w => Some(grid.cell(r, col + 1)),
        _ => None,
    }
}

/// Writes a seat's observation into `out`, a row over `layout`'s grid (padded cells as unseen
/// cells). `finalist`: the seat is a finalist of a final (it may not attack other finalists,
/// SPEC §9), which the action mask follows.
pub(crate) fn write_obs(obs: &Observation, grid: &Grid, finalist: bool, layout: Layout, out: ObsOut<'_>) {
    write_obs_over(obs, grid, finalist, layout, out, None);
}

/// The cells of a row of arrays that [`write_obs_over`] wrote last, so that it clears just those
/// before writing the next observation there: what a step costs then grows with what the seat
/// sees, not with the grid (clearing a 60×60 row of every field is 57.6 kB, and it pushed the
/// next match's state out of the caches). Only for arrays nothing else writes into.
#[derive(Default)]
pub(crate) struct Written {
    /// Whether the row has been written whole once (before that its contents are unknown).
    filled: bool,
    /// The array indices of the cells written last: the base, own and visible cells.
    cells: Vec<u32>,
}

/// [`write_obs`] into a row that held the observation recorded in `written` (when given): the
/// cells written then are set back to unseen, the rest of the row is unseen already.
pub(crate) fn write_obs_over(
    obs: &Observation,
    grid: &Grid,
    finalist: bool,
    layout: Layout,
    out: ObsOut<'_>,
    written: Option<&mut Written>,
) {
    let mut out = out;
    let mut written = written;
    match written.as_deref_mut() {
        Some(w) if w.filled => {
            for &i in &w.cells {
                let i = i as usize;
                let _ = obs_fields!(&mut out, |f, x| match f.shape {
                    Shape::Grid => x[i] = Elem::of(f.unseen),
                    Shape::GridKinds => x[i * KINDS..][..KINDS].fill(Elem::of(f.unseen)),
                    Shape::One => {}
                });
                out.mask[i * KINDS] = 1; // staying is always possible
            }
        }
        _ => {
            let _ = obs_fields!(&mut out, |f, x| x.fill(Elem::of(f.unseen)));
            for k in out.mask.iter_mut().step_by(KINDS) {
                *k = 1; // staying is always possible
            }
        }
    }
    if let Some(w) = written.as_deref_mut() {
        w.filled = true;
        w.cells.clear();
        let at = |c: Cell| layout.at(c) as u32;
        w.cells.push(at(obs.base));
        w.cells.extend(obs.own.iter().map(|c| at(c.cell)));
        w.cells.extend(obs.visible.iter().map(|v| at(v.cell)));
    }
    let at = |c: Cell| layout.at(c);
    out.round[0] = obs.round as i32;
    out.base[at(obs.base)] = 1;
    for c in &obs.own {
        let i = at(c.cell);
        out.terrain[i] = terrain_code(c.terrain);
        out.owner[i] = OWN;
        out.units[i] = c.units as f32;
        out.fortification[i] = c.fortification as f32;
        out.visible[i] = 1;
    }
    for v in &obs.visible {
        let i = at(v.cell);
        out.terrain[i] = terrain_code(v.terrain);
        out.owner[i] = owner_code(v.owner);
        out.units[i] = v.garrison as f32;
        out.fortification[i] = v.fortification as f32;
        out.visible[i] = 1;
    }
    for c in &obs.own {
        if c.units <= 0.0 {
            continue;
        }
        let m = &mut out.mask[at(c.cell) * KINDS..][..KINDS];
        m[FORTIFY] = 1;
        for d in 0..4 {
            let Some(n) = toward(grid, c.cell, d) else { continue };
            let o = out.owner[at(n)];
            if o == OWN {
                m[MOVE + d] = 1;
            } else if !finalist || o == NEUTRAL || o == COUNCIL {
                m[ATTACK + d] = 1;
            }
        }
    }
}

/// The table for Python (`gbely._gbely.OBS_SCHEMA`): `fields` (per field `name`, `dtype`,
/// `shape` — `grid`, `grid_kinds` or `one` —, `low`, `high` — a number, `"all_units"` or
/// `"last_round"` —, `unseen`, `observation`, `doc`), `kinds` (names by code), `terrain`
/// (code by name), `owner` (code by name: `unseen`, `hbp`, `own`, `zastupitelstvo`) and
/// `armada_offset`, and `all_units`: `(per_cell, per_cell_round)` of [`all_units`].
pub(crate) fn schema_dict(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let fields = FIELDS
        .iter()
        .map(|f| {
            let d = PyDict::new(py);
            d.set_item("name", f.name)?;
            d.set_item("dtype", f.dtype)?;
            d.set_item("shape", f.shape.name())?;
            d.set_item("low", f.low)?;
            match f.high {
                High::Value(v) => d.set_item("high", v)?,
                High::AllUnits => d.set_item("high", "all_units")?,
                High::LastRound => d.set_item("high", "last_round")?,
            }
            d.set_item("unseen", f.unseen)?;
            d.set_item("observation", f.observation)?;
            d.set_item("doc", f.doc)?;
            Ok(d)
        })
        .collect::<PyResult<Vec<_>>>()?;
    let d = PyDict::new(py);
    d.set_item("fields", PyTuple::new(py, fields)?)?;
    d.set_item("kinds", PyTuple::new(py, KIND_NAMES)?)?;
    let terrain = PyDict::new(py);
    for (name, code) in TERRAIN_CODES {
        terrain.set_item(name, code)?;
    }
    d.set_item("terrain", terrain)?;
    let owner = PyDict::new(py);
    for (name, code) in [("unseen", UNSEEN), ("hbp", NEUTRAL), ("own", OWN), ("zastupitelstvo", COUNCIL)] {
        owner.set_item(name, code)?;
    }
    d.set_item("owner", owner)?;
    d.set_item("armada_offset", ARMY_OFFSET)?;
    d.set_item("all_units", all_units())?;
    Ok(d)
}
