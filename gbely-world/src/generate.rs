//! The seeded map generator (SPEC §7, seed 004).
//!
//! A seed text plus [`GEN_VERSION`] gives the same map forever, on every platform: the generator
//! uses its own integer PRNG (SplitMix64 seeded by FNV-1a of the seed), integer arithmetic only,
//! and no hash-map iteration. Every feature is drawn on one half of the map and mirrored by the
//! 180° rotation, so terrain, garrisons and bases map onto each other.
//!
//! A deliberate change to anything here must bump [`GEN_VERSION`] and rewrite the golden
//! fingerprints in `tests/integration/golden_maps.rs`.

use gbely_rules::{constants, Cell, Grid, Terrain};
use thiserror::Error;

use crate::map::{Fnv64, Map, Seat, SeatRole};

/// Version of the generator. Maps are reproducible for the same seed *and* version.
pub const GEN_VERSION: u32 = 1;

/// Smallest and largest side of a generated duel map.
pub const MIN_DUEL_SIZE: u32 = 12;
pub const MAX_SIZE: u32 = 500;

#[derive(Debug, Error, PartialEq, Eq)]
pub enum GenError {
    #[error("map size {width}×{height} is out of range: each side must be {min}…{max}")]
    Size { width: u32, height: u32, min: u32, max: u32 },
    #[error("a final map of side {size} with a Council radius {radius} and {extra_bases} extra bases is not possible: the side must be 30…500, the radius at most half the side minus 5, extra bases a multiple of 4")]
    Final { size: u32, radius: u32, extra_bases: u32 },
}

/// SplitMix64: tiny, well mixed, and fixed forever here (no library's value stability needed).
#[derive(Debug, Clone)]
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn from_seed(kind: &str, seed: &str, width: u32, height: u32) -> Rng {
        let mut h = Fnv64::new();
        h.write(kind.as_bytes());
        h.write(&GEN_VERSION.to_le_bytes());
        h.write(&width.to_le_bytes());
        h.write(&height.to_le_bytes());
        h.write(seed.as_bytes());
        Rng(h.finish())
    }
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix64(self.0)
    }
    /// Uniform in `0..n` (n ≥ 1), by the multiply-shift reduction.
    pub(crate) fn below(&mut self, n: u32) -> u32 {
        debug_assert!(n >= 1);
        (((self.next_u64() >> 32) * n as u64) >> 32) as u32
    }
    /// In `lo..hi` (hi > lo).
    pub(crate) fn range(&mut self, lo: u32, hi: u32) -> u32 {
        lo + self.below(hi - lo)
    }
    /// True with probability `num / den`.
    pub(crate) fn chance(&mut self, num: u32, den: u32) -> bool {
        self.below(den) < num
    }
}

pub(crate) fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn manhattan(g: &Grid, a: Cell, b: Cell) -> u32 {
    let (ar, ac) = g.row_col(a);
    let (br, bc) = g.row_col(b);
    ar.abs_diff(br) + ac.abs_diff(bc)
}

/// Terrain painted symmetrically, with cells near the bases kept as meadow.
struct Canvas<'a> {
    g: &'a Grid,
    terrain: Vec<Terrain>,
    protected: Vec<bool>,
}

impl Canvas<'_> {
    fn paint(&mut self, c: Cell, t: Terrain, over_river: bool) {
        for x in [c, self.g.rotate180(c)] {
            let i = x.index();
            if self.protected[i] || (!over_river && self.terrain[i] == Terrain::River) {
                continue;
            }
            self.terrain[i] = t;
        }
    }
    fn count(&self, t: Terrain) -> usize {
        self.terrain.iter().filter(|&&x| x == t).count()
    }
}

/// A 4-connected random walk from `from` to `to`, drifting toward the target with some wiggle.
fn walk(g: &Grid, rng: &mut Rng, from: (u32, u32), to: (u32, u32)) -> Vec<((u32, u32), bool)> {
    let (mut r, mut c) = (from.0 as i64, from.1 as i64);
    let (tr, tc) = (to.0 as i64, to.1 as i64);
    // Each step remembers whether it was vertical, so the channel can be widened sideways.
    let mut path = vec![((r as u32, c as u32), true)];
    let limit = 4 * (g.width() + g.height()) as usize;
    while (r, c) != (tr, tc) {
        let (dr, dc) = (tr - r, tc - c);
        let wiggle = path.len() < limit && rng.chance(1, 5);
        let vertical_pull = dr.unsigned_abs() as u32;
        let total = vertical_pull + dc.unsigned_abs() as u32;
        let mut vertical = rng.below(total) < vertical_pull;
        if wiggle {
            vertical = !vertical;
        }
        let (nr, nc) = if vertical {
            let s = if dr != 0 {
                dr.signum()
            } else if rng.chance(1, 2) {
                1
            } else {
                -1
            };
            (r + if wiggle && dr != 0 { -s } else { s }, c)
        } else {
            let s = if dc != 0 {
                dc.signum()
            } else if rng.chance(1, 2) {
                1
            } else {
                -1
            };
            (r, c + if wiggle && dc != 0 { -s } else { s })
        };
        // A wiggle never leaves the map nor steps back onto the path's previous cell.
        let prev = path.len().checked_sub(2).map(|i| path[i].0);
        if nr < 0 || nc < 0 || nr >= g.height() as i64 || nc >= g.width() as i64 || prev == Some((nr as u32, nc as u32))
        {
            continue;
        }
        r = nr;
        c = nc;
        path.push(((r as u32, c as u32), vertical));
    }
    path
}

/// Draws a river along a path: a wide river is two cells wide, narrowing to one at crossing
/// places; a narrow one is one cell wide.
fn draw_river(cv: &mut Canvas<'_>, rng: &mut Rng, path: &[((u32, u32), bool)], wide: bool) {
    let g = cv.g;
    let mut until_narrow = rng.range(6, 12);
    let mut narrow_left = 0;
    for &((r, c), vertical) in path {
        cv.paint(g.cell(r, c), Terrain::River, true);
        if !wide {
            continue;
        }
        if narrow_left > 0 {
            narrow_left -= 1;
            continue;
        }
        until_narrow -= 1;
        if until_narrow == 0 {
            narrow_left = rng.range(1, 3);
            until_narrow = rng.range(7, 13);
            continue;
        }
        let side = if vertical { (r, c + 1) } else { (r + 1, c) };
        if side.0 < g.height() && side.1 < g.width() {
            cv.paint(g.cell(side.0, side.1), Terrain::River, true);
        }
    }
}

/// One hill range: from `at`, a line wandering in one of eight directions (turning now and
/// then) for a length drawn from `len`, each cell painted with a ragged fringe of neighbours.
pub(crate) fn hill_range(g: &Grid, rng: &mut Rng, at: (i64, i64), len: (u32, u32), paint: &mut dyn FnMut(Cell)) {
    const DIRS: [(i64, i64); 8] = [(-1, -1), (-1, 0), (-1, 1), (0, 1), (1, 1), (1, 0), (1, -1), (0, -1)];
    let (mut r, mut c) = at;
    let mut d = rng.below(8) as usize;
    for _ in 0..rng.range(len.0, len.1) {
        let cell = g.cell(r as u32, c as u32);
        paint(cell);
        for nb in g.neighbours(cell).iter() {
            if rng.chance(1, 2) {
                paint(nb);
            }
        }
        if rng.chance(1, 3) {
            d = if rng.chance(1, 2) { (d + 1) % 8 } else { (d + 7) % 8 };
        }
        r += DIRS[d].0;
        c += DIRS[d].1;
        if r < 0 || c < 0 || r >= g.height() as i64 || c >= g.width() as i64 {
            break;
        }
    }
}

/// Generates a 180°-symmetric duel map from any seed text.
///
/// Bases: seat 0 (`armada`) at row `H−3`, col 2; seat 1 (the Council) at its image.
///
/// ```
/// let a = gbely_world::generate_duel("my seed", 40, 30).unwrap();
/// let b = gbely_world::generate_duel("my seed", 40, 30).unwrap();
/// assert_eq!(a.fingerprint(), b.fingerprint());
/// assert_eq!(a.grid().id(a.seats()[0].base), "P27_02");
/// ```
pub fn generate_duel(seed: &str, width: u32, height: u32) -> Result<Map, GenError> {
    for s in [width, height] {
        if !(MIN_DUEL_SIZE..=MAX_SIZE).contains(&s) {
            return Err(GenError::Size { width, height, min: MIN_DUEL_SIZE, max: MAX_SIZE });
        }
    }
    let g = Grid::new(width, height);
    let n = g.len();
    let mut rng = Rng::from_seed("duel", seed, width, height);
    let base0 = g.cell(height - 3, 2);
    let base1 = g.rotate180(base0);
    let protected: Vec<bool> =
        g.cells().map(|c| manhattan(&g, c, base0) <= 2 || manhattan(&g, c, base1) <= 2).collect();
    let mut cv = Canvas { g: &g, terrain: vec![Terrain::Meadow; n], protected };

    // Rivers. The main river runs through the centre from one edge of the top-left quarter to
    // the mirrored edge, separating the two bases; tributaries branch off it to the other edges.
    let (h, w) = (height, width);
    for r in [h / 2 - 1, h / 2] {
        for c in [w / 2 - 1, w / 2] {
            cv.paint(g.cell(r, c), Terrain::River, true);
        }
    }
    let to_top = rng.chance(1, 2);
    let main_target = if to_top { (0, rng.range(w / 8, w / 2)) } else { (rng.range(h / 8, h / 2), 0) };
    let main = walk(&g, &mut rng, (h / 2, w / 2), main_target);
    draw_river(&mut cv, &mut rng, &main, true);
    let tributaries = (w + h) / 100;
    let mut on_path = vec![false; n];
    let mut mark = |path: &[((u32, u32), bool)]| {
        for &((r, c), _) in path {
            let cell = g.cell(r, c);
            on_path[cell.index()] = true;
            on_path[g.rotate180(cell).index()] = true;
        }
    };
    mark(&main);
    for k in 0..tributaries {
        let from = main[rng.range(main.len() as u32 / 4, main.len() as u32 * 3 / 4) as usize].0;
        let toward_left = to_top ^ (k % 2 == 1);
        let target = if toward_left {
            (rng.range(from.0.max(h / 5), (h / 2).max(from.0 + 1)), 0)
        } else {
            (0, rng.range(from.1.max(w / 5), (w / 2).max(from.1 + 1)))
        };
        let path = walk(&g, &mut rng, from, target);
        draw_river(&mut cv, &mut rng, &path, false);
        mark(&path);
    }
    // Places to cross: every few cells where the main river runs straight, its sides are land
    // again, so a single river cell stands between the two regions.
    let mut k = 3;
    while k + 1 < main.len() {
        let ((r0, c0), _) = main[k - 1];
        let ((r, c), _) = main[k];
        let ((r1, c1), _) = main[k + 1];
        let sides = if c0 == c && c1 == c && c > 0 && c + 1 < w {
            Some([(r, c - 1), (r, c + 1)])
        } else if r0 == r && r1 == r && r > 0 && r + 1 < h {
            Some([(r - 1, c), (r + 1, c)])
        } else {
            None
        };
        match sides {
            Some(sides) if sides.iter().all(|&(sr, sc)| !on_path[g.cell(sr, sc).index()]) => {
                for (sr, sc) in sides {
                    cv.paint(g.cell(sr, sc), Terrain::Meadow, true);
                }
                k += rng.range(8, 14) as usize;
            }
            _ => k += 1,
        }
    }

    // Hills in ranges until about 28 % of the map is hill.
    let hill_target = n * 28 / 100;
    let mut attempts = 0;
    while cv.count(Terrain::Hill) < hill_target && attempts < 10_000 {
        attempts += 1;
        let start = rng.below(n as u32 / 2);
        let at = (start as i64 / w as i64, start as i64 % w as i64);
        hill_range(&g, &mut rng, at, (5, 5 + (w.min(h) / 6).min(10)), &mut |cell| cv.paint(cell, Terrain::Hill, false));
    }

    // Garrisons: higher for meadow, higher toward the contested middle, low next to the bases.
    let dist: Vec<u32> = g.cells().map(|c| manhattan(&g, c, base0).min(manhattan(&g, c, base1))).collect();
    let dmax = *dist.iter().max().unwrap_or(&1);
    let jitter_key = rng.next_u64();
    let mut garrison = vec![0u32; n];
    let (lo, hi) = constants::NEUTRAL_GARRISON;
    for c in g.cells() {
        let i = c.index();
        let canon = c.0.min(g.rotate180(c).0) as u64;
        let mut v = 1 + (6 * dist[i]) / dmax.max(1);
        if cv.terrain[i] == Terrain::Meadow {
            v += 1;
        }
        let j = mix64(jitter_key ^ canon.wrapping_mul(0x9e37_79b9_7f4a_7c15)) % 3;
        v = (v + j as u32).saturating_sub(1).clamp(lo, hi);
        if dist[i] <= 2 {
            v = v.min(2);
        }
        garrison[i] = v;
    }

    let mut base = vec![false; n];
    let mut start_owner = vec![None; n];
    for (k, b) in [base0, base1].into_iter().enumerate() {
        base[b.index()] = true;
        garrison[b.index()] = 0;
        start_owner[b.index()] = Some(k as u8);
        cv.terrain[b.index()] = Terrain::Meadow;
    }
    let map = Map {
        name: format!("seed:{seed}"),
        grid: g.clone(),
        terrain: cv.terrain,
        base,
        garrison,
        start_owner,
        seats: vec![Seat { role: SeatRole::Army, base: base0 }, Seat { role: SeatRole::Council, base: base1 }],
    };
    debug_assert_eq!(map.validate(), Ok(()));
    Ok(map)
}

/// The reference map `gbely`: 60×60, bases `P57_02` and `P02_57` (SPEC §2).
pub fn reference_map() -> Map {
    generate_duel(constants::REFERENCE_MAP, constants::MAP_SIZE, constants::MAP_SIZE)
        .expect("the reference size is valid")
        .with_name(constants::REFERENCE_MAP)
}
