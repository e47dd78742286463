//! What the generated maps look like (SPEC §2, §7), checked on the reference map and on seeded
//! maps of several sizes.

use gbely_rules::{Cell, Terrain};
use gbely_world::{generate_duel, generate_final, reference_map, FinalConfig, Map, MapStats};

fn maps() -> Vec<Map> {
    let mut v = vec![reference_map()];
    for (k, (w, h)) in [(60, 60), (40, 40), (30, 50), (90, 90), (24, 24)].into_iter().enumerate() {
        for s in 0..4 {
            v.push(generate_duel(&format!("geo-{k}-{s}"), w, h).unwrap());
        }
    }
    v
}

/// Connected components of the cells where `keep` holds (4-neighbourhood); `usize::MAX` elsewhere.
fn components(map: &Map, keep: impl Fn(Cell) -> bool) -> (Vec<usize>, Vec<usize>) {
    let g = map.grid();
    let mut comp = vec![usize::MAX; g.len()];
    let mut sizes = Vec::new();
    for start in g.cells() {
        if comp[start.index()] != usize::MAX || !keep(start) {
            continue;
        }
        let id = sizes.len();
        let mut stack = vec![start];
        comp[start.index()] = id;
        let mut size = 0;
        while let Some(c) = stack.pop() {
            size += 1;
            for n in g.neighbours(c).iter() {
                if comp[n.index()] == usize::MAX && keep(n) {
                    comp[n.index()] = id;
                    stack.push(n);
                }
            }
        }
        sizes.push(size);
    }
    (comp, sizes)
}

#[test]
fn reference_map_has_the_promised_bases() {
    let m = reference_map();
    let g = m.grid();
    assert_eq!((m.width(), m.height()), (60, 60));
    assert_eq!(g.id(m.seats()[0].base), "P57_02");
    assert_eq!(g.id(m.seats()[1].base), "P02_57");
    for s in m.seats() {
        assert!(m.is_base(s.base));
        assert_eq!(m.terrain(s.base), Terrain::Meadow);
        assert_eq!(m.garrison(s.base), 0);
    }
}

#[test]
fn maps_are_symmetric_under_180_degree_rotation() {
    for m in maps() {
        assert!(MapStats::of(&m).symmetric_180, "{}", m.name());
        let g = m.grid();
        assert_eq!(g.rotate180(m.seats()[0].base), m.seats()[1].base);
        let (h, _) = g.row_col(m.seats()[0].base);
        assert_eq!((h, g.row_col(m.seats()[0].base).1), (m.height() - 3, 2));
    }
}

#[test]
fn meadows_are_the_majority() {
    for m in maps() {
        let st = MapStats::of(&m);
        let meadow = st.terrain[0] as f64 / st.cells as f64;
        assert!((0.55..=0.70).contains(&meadow), "{}: meadow {meadow:.3}", m.name());
        assert!(st.terrain[1] > 0 && st.terrain[2] > 0, "{}", m.name());
    }
}

#[test]
fn neutral_garrisons_are_1_to_8() {
    for m in maps() {
        for c in m.grid().cells() {
            if m.start_owner(c).is_none() {
                assert!((1..=8).contains(&m.garrison(c)), "{} {}", m.name(), m.grid().id(c));
            }
        }
    }
}

#[test]
fn garrisons_rise_with_the_value_of_the_cell() {
    for m in maps() {
        let g = m.grid();
        let bases: Vec<Cell> = m.seats().iter().map(|s| s.base).collect();
        let dist = |c: Cell| {
            bases
                .iter()
                .map(|&b| {
                    let ((r1, c1), (r2, c2)) = (g.row_col(c), g.row_col(b));
                    r1.abs_diff(r2) + c1.abs_diff(c2)
                })
                .min()
                .unwrap()
        };
        let neutral: Vec<Cell> = g.cells().filter(|&c| m.start_owner(c).is_none()).collect();
        let dmax = neutral.iter().map(|&c| dist(c)).max().unwrap();
        let mean = |f: &dyn Fn(Cell) -> bool| {
            let v: Vec<f64> = neutral.iter().filter(|&&c| f(c)).map(|&c| m.garrison(c) as f64).collect();
            v.iter().sum::<f64>() / v.len() as f64
        };
        let near = mean(&|c| dist(c) <= 4);
        let middle = mean(&|c| dist(c) * 3 >= dmax * 2);
        assert!(near + 2.0 < middle, "{}: near the bases {near:.2}, middle {middle:.2}", m.name());
        for c in neutral.iter().filter(|&&c| dist(c) <= 2) {
            assert!(m.garrison(*c) <= 2, "{}: {} next to a base", m.name(), g.id(*c));
        }
        let meadow = mean(&|c| m.terrain(c) == Terrain::Meadow);
        let hill = mean(&|c| m.terrain(c) == Terrain::Hill);
        assert!(meadow > hill, "{}: meadow {meadow:.2} hill {hill:.2}", m.name());
    }
}

#[test]
fn rivers_cross_the_map_and_cut_it_into_regions_with_places_to_cross() {
    for m in maps() {
        let g = m.grid();
        let river = |c: Cell| m.terrain(c) == Terrain::River;
        // One connected river system holds the main river, from edge to edge.
        let (rcomp, rsizes) = components(&m, river);
        let main = (0..rsizes.len()).max_by_key(|&i| rsizes[i]).unwrap();
        let edges = |c: Cell| {
            let (r, col) = g.row_col(c);
            r == 0 || col == 0 || r + 1 == m.height() || col + 1 == m.width()
        };
        let touching = g.cells().filter(|&c| rcomp[c.index()] == main && edges(c)).count();
        assert!(touching >= 2, "{}: the main river reaches the edges", m.name());
        // Without the river, the two bases are in different regions: it separates them.
        let (land, _) = components(&m, |c| !river(c));
        let (b0, b1) = (m.seats()[0].base, m.seats()[1].base);
        assert_ne!(land[b0.index()], land[b1.index()], "{}: the river separates the bases", m.name());
        // Places to cross: a single river cell between two land cells of different regions.
        let crossings = g
            .cells()
            .filter(|&c| river(c))
            .filter(|&c| {
                let (r, col) = g.row_col(c);
                let pairs = [
                    (r > 0 && r + 1 < m.height()).then(|| (g.cell(r - 1, col), g.cell(r + 1, col))),
                    (col > 0 && col + 1 < m.width()).then(|| (g.cell(r, col - 1), g.cell(r, col + 1))),
                ];
                pairs.into_iter().flatten().any(|(a, b)| !river(a) && !river(b) && land[a.index()] != land[b.index()])
            })
            .count();
        assert!(crossings >= 2, "{}: {crossings} one-cell crossings", m.name());
    }
}

#[test]
fn hills_come_in_ranges() {
    for m in maps() {
        let g = m.grid();
        let hill = |c: Cell| m.terrain(c) == Terrain::Hill;
        let hills: Vec<Cell> = g.cells().filter(|&c| hill(c)).collect();
        let clustered = hills.iter().filter(|&&c| g.neighbours(c).iter().filter(|&n| hill(n)).count() >= 2).count();
        assert!(
            clustered * 10 >= hills.len() * 7,
            "{}: {clustered} of {} hills have 2+ hill neighbours",
            m.name(),
            hills.len()
        );
        let (_, sizes) = components(&m, hill);
        let biggest = sizes.iter().max().copied().unwrap_or(0);
        assert!(biggest >= 15, "{}: the largest range has {biggest} cells", m.name());
    }
}

#[test]
fn sizes_out_of_range_are_refused() {
    assert!(generate_duel("x", 11, 60).is_err());
    assert!(generate_duel("x", 60, 501).is_err());
    assert!(generate_duel("x", 12, 12).is_ok());
}

#[test]
fn final_configs_out_of_range_are_refused() {
    let cfg =
        |size, council_radius, extra_bases| FinalConfig { size, council_radius, council_garrison: 8, extra_bases };
    // The side is 30…500.
    assert!(generate_final("x", cfg(29, 3, 4)).is_err());
    assert!(generate_final("x", cfg(501, 3, 4)).is_err());
    // The radius is at most half the side minus 5: 10 on a side of 30 or 31, not 11.
    for size in [30, 31] {
        assert!(generate_final("x", cfg(size, 10, 4)).is_ok(), "{size}");
        assert!(generate_final("x", cfg(size, 11, 4)).is_err(), "{size}");
    }
    // Extra bases come in fours.
    assert!(generate_final("x", cfg(40, 4, 0)).is_ok());
    assert!(generate_final("x", cfg(40, 4, 2)).is_err());
    assert!(generate_final("x", cfg(40, 4, 8)).is_ok());
}

#[test]
fn extra_final_bases_step_out_along_the_diagonals() {
    // Side 90, radius 9: the ring k sits at offset 9 · 2 / 5 + k = 3 + k from the centre's
    // top-left cell P44_44, in its four rotations. With 16 extra bases k = 0…3, at P41_41 … P38_38.
    // The fourth ring lies outside the Council's disc (doubled distance from the centre 13 · √2 > 18),
    // so it is neutral: a neutral base has no garrison.
    let m = generate_final("rings", FinalConfig { extra_bases: 16, ..FinalConfig::default() }).unwrap();
    let g = m.grid();
    for (k, at) in [41u32, 40, 39, 38].into_iter().enumerate() {
        for (r, c) in [(at, at), (at, 89 - at), (89 - at, 89 - at), (89 - at, at)] {
            let cell = g.cell(r, c);
            assert!(m.is_base(cell), "ring {k}: {}", g.id(cell));
            assert_eq!(m.terrain(cell), Terrain::Meadow, "{}", g.id(cell));
            if k < 3 {
                assert_eq!(m.start_owner(cell), Some(8), "{}", g.id(cell));
            } else {
                assert_eq!(m.start_owner(cell), None, "{}", g.id(cell));
                assert_eq!(m.garrison(cell), 0, "{}", g.id(cell));
            }
        }
    }
    // 8 seats, the central 2 × 2 block and the 16 extra.
    assert_eq!(g.cells().filter(|&c| m.is_base(c)).count(), 8 + 4 + 16);
}
