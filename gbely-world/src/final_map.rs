//! Final maps (SPEC §9): eight finalists around the Council's reinforced centre.
//!
//! **Symmetry.** A final map is square and invariant under the 90° rotation
//! `(r, c) → (c, N−1−r)`: terrain, garrisons, bases and owners map onto each other. The rotation
//! takes seat `k` to seat `k + 2 (mod 8)`, so the four **corner** seats (0, 2, 4, 6) are
//! equivalent to each other and so are the four **edge** seats (1, 3, 5, 7).
//!
//! **The two classes.** A corner seat has two map edges at its back and the most neutral land
//! of its own, furthest from the Council (about `N` steps away). An edge seat sits mid-side, about
//! `N / 2` steps from the Council's border: it meets the reinforcements sooner and has
//! neighbouring finalists on both flanks.
//!
//! Seats, clockwise: 0 bottom-left corner, 1 left edge, 2 top-left corner, 3 top edge,
//! 4 top-right corner, 5 right edge, 6 bottom-right corner, 7 bottom edge; seat 8 is the Council.

use gbely_rules::{Cell, Grid, Terrain};

use crate::generate::{hill_range, mix64, GenError, Rng, GEN_VERSION};
use crate::map::{Map, Seat, SeatRole};

/// How strong the Council's centre is ("posily z VÚC").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FinalConfig {
    /// Side of the square map.
    pub size: u32,
    /// Radius (Euclidean, in cells) of the Council's starting territory.
    pub council_radius: u32,
    /// Garrison on the edge of the Council's territory; it rises by one every two cells inward.
    pub council_garrison: u32,
    /// Extra bases (+5 per round each) in the centre besides the central block; a multiple of 4.
    pub extra_bases: u32,
}

impl Default for FinalConfig {
    fn default() -> Self {
        FinalConfig { size: 90, council_radius: 9, council_garrison: 8, extra_bases: 4 }
    }
}

impl FinalConfig {
    /// The default centre for a map of side `size`, scaled from 90.
    pub fn for_size(size: u32) -> FinalConfig {
        FinalConfig { size, council_radius: (size / 10).max(3), ..FinalConfig::default() }
    }
}

/// Smallest side of a final map.
pub const MIN_FINAL_SIZE: u32 = 30;

fn rot(g: &Grid, c: Cell) -> Cell {
    let (r, col) = g.row_col(c);
    g.cell(col, g.height() - 1 - r)
}

/// Paints symmetrically under the four rotations.
fn orbit(g: &Grid, c: Cell) -> [Cell; 4] {
    let a = rot(g, c);
    let b = rot(g, a);
    [c, a, b, rot(g, b)]
}

/// Generates a final map from any seed text.
///
/// ```
/// use gbely_world::{generate_final, FinalConfig};
/// let m = generate_final("finale", FinalConfig::default()).unwrap();
/// assert_eq!((m.width(), m.seats().len()), (90, 9));
/// assert_eq!(m.grid().id(m.seats()[0].base), "P87_02");
/// ```
pub fn generate_final(seed: &str, cfg: FinalConfig) -> Result<Map, GenError> {
    let n = cfg.size;
    if !(MIN_FINAL_SIZE..=crate::MAX_SIZE).contains(&n)
        || cfg.council_radius * 2 + 10 > n
        || !cfg.extra_bases.is_multiple_of(4)
    {
        return Err(GenError::Final { size: n, radius: cfg.council_radius, extra_bases: cfg.extra_bases });
    }
    let g = Grid::new(n, n);
    let total = g.len();
    let mut rng = Rng::from_seed("final", seed, n, n);
    // Twice the distance from the centre, so that even sizes stay in integers.
    let centre2 = |c: Cell| {
        let (r, col) = g.row_col(c);
        let (dr, dc) = ((2 * r) as i64 - (n as i64 - 1), (2 * col) as i64 - (n as i64 - 1));
        (dr * dr + dc * dc) as u64
    };
    let in_council = |c: Cell| centre2(c) <= (2 * cfg.council_radius as u64).pow(2);

    // Seat bases: a corner and an edge cell, and their rotations.
    let corner = g.cell(n - 3, 2);
    let edge = g.cell(n / 2, 2);
    let mut seat_bases = Vec::new();
    let (co, eo) = (orbit(&g, corner), orbit(&g, edge));
    for k in 0..4 {
        seat_bases.push(co[k]);
        seat_bases.push(eo[k]);
    }
    let dist_to = |a: Cell, b: Cell| {
        let ((r1, c1), (r2, c2)) = (g.row_col(a), g.row_col(b));
        r1.abs_diff(r2) + c1.abs_diff(c2)
    };
    let near_seat = |c: Cell| seat_bases.iter().map(|&b| dist_to(c, b)).min().unwrap_or(0);

    // Terrain: meadows, hill ranges and rivers drawn in a pinwheel, each in all four rotations.
    let mut terrain = vec![Terrain::Meadow; total];
    let protected = |c: Cell| near_seat(c) <= 2 || in_council(c);
    let paint = |terrain: &mut Vec<Terrain>, c: Cell, t: Terrain| {
        for x in orbit(&g, c) {
            if !protected(x) && (t == Terrain::River || terrain[x.index()] != Terrain::River) {
                terrain[x.index()] = t;
            }
        }
    };
    // Rivers: from the Council's border out to the left edge, between seat 0's corner and the
    // left edge seat's region (and rotated): they separate the finalists' home regions.
    let rivers = 1 + n / 60;
    for k in 0..rivers {
        let start_r = n / 2 + cfg.council_radius / 2 + 1 + rng.below(3) + k * 3;
        let target_r = n / 2 + (n - 3 - n / 2) / 2 + rng.below(5);
        let (mut r, mut c) = (start_r as i64, (n / 2 - cfg.council_radius - 1) as i64);
        let mut guard = 0;
        while c > 0 && guard < 4 * n {
            guard += 1;
            paint(&mut terrain, g.cell(r as u32, c as u32), Terrain::River);
            let dr = target_r as i64 - r;
            if dr != 0 && rng.below(3) == 0 {
                r += dr.signum();
            } else if rng.below(6) == 0 {
                r += if rng.chance(1, 2) { 1 } else { -1 };
                r = r.clamp(1, n as i64 - 2);
            } else {
                c -= 1;
            }
        }
        if c == 0 {
            paint(&mut terrain, g.cell(r as u32, 0), Terrain::River);
        }
    }
    // Hill ranges up to about 26 % of the map.
    let target = total * 26 / 100;
    let mut tries = 0;
    while terrain.iter().filter(|&&t| t == Terrain::Hill).count() < target && tries < 20_000 {
        tries += 1;
        let at = (rng.below(n) as i64, rng.below(n) as i64);
        hill_range(&g, &mut rng, at, (5, 16), &mut |cell| paint(&mut terrain, cell, Terrain::Hill));
    }

    // Bases: the seats', the central block (the Council's home is its top-left cell), and the
    // extra ring at half the Council's radius on the diagonals.
    let mut base = vec![false; total];
    let mut start_owner: Vec<Option<u8>> = vec![None; total];
    for c in g.cells() {
        let (r, col) = g.row_col(c);
        let central = (2 * r as i64 - (n as i64 - 1)).abs() <= 1 && (2 * col as i64 - (n as i64 - 1)).abs() <= 1;
        if central {
            base[c.index()] = true;
        }
        if in_council(c) {
            start_owner[c.index()] = Some(8);
            terrain[c.index()] = if central { Terrain::Meadow } else { terrain[c.index()] };
        }
    }
    for k in 0..cfg.extra_bases / 4 {
        // On the diagonal, well inside the Council's disc (√2 · (off + ½) < radius).
        let off = ((cfg.council_radius * 2) / 5).max(1) + k;
        let at = ((n - 1) / 2).saturating_sub(off);
        for x in orbit(&g, g.cell(at, at)) {
            base[x.index()] = true;
            terrain[x.index()] = Terrain::Meadow;
        }
    }
    let council_home = g.cell((n - 1) / 2, (n - 1) / 2);
    for (k, &b) in seat_bases.iter().enumerate() {
        base[b.index()] = true;
        terrain[b.index()] = Terrain::Meadow;
        start_owner[b.index()] = Some(k as u8);
    }

    // Garrisons. Neutral land: 1 … 8, low next to a finalist, rising toward the centre, higher
    // for meadow. The Council's land: strong, rising toward the centre.
    let key = rng.next_u64();
    let far = g.cells().map(near_seat).max().unwrap_or(1).max(1);
    let mut garrison = vec![0u32; total];
    for c in g.cells() {
        let i = c.index();
        let canon = orbit(&g, c).iter().map(|x| x.0).min().unwrap_or(c.0) as u64;
        if start_owner[i] == Some(8) {
            let depth = cfg.council_radius as u64 * 2 - (centre2(c) as f64).sqrt().floor() as u64;
            garrison[i] = cfg.council_garrison + (depth / 4) as u32;
            continue;
        }
        if start_owner[i].is_some() || base[i] {
            continue;
        }
        let d = near_seat(c);
        let mut v = 1 + (6 * d) / far;
        if terrain[i] == Terrain::Meadow {
            v += 1;
        }
        let j = mix64(key ^ canon.wrapping_mul(0x9e37_79b9_7f4a_7c15)) % 3;
        v = (v + j as u32).saturating_sub(1).clamp(1, 8);
        if d <= 2 {
            v = v.min(2);
        }
        garrison[i] = v;
    }
    let mut seats: Vec<Seat> = seat_bases.iter().map(|&b| Seat { role: SeatRole::Army, base: b }).collect();
    seats.push(Seat { role: SeatRole::Council, base: council_home });
    let _ = GEN_VERSION;
    let map = Map { name: format!("final:{seed}"), grid: g.clone(), terrain, base, garrison, start_owner, seats };
    debug_assert_eq!(map.validate(), Ok(()));
    Ok(map)
}
