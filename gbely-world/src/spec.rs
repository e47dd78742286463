//! Naming a map on a command line, and a map's figures.

use std::fmt;

use gbely_rules::Terrain;

use crate::{generate_duel, reference_map, GenError, Map};

/// How a user names a map: `gbely`, `seed:TEXT` (a duel map), `final:TEXT` (a final map), or a
/// file path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MapSpec {
    Reference,
    Seed(String),
    Final(String),
    File(String),
}

impl MapSpec {
    pub fn parse(s: &str) -> MapSpec {
        if s == gbely_rules::constants::REFERENCE_MAP {
            MapSpec::Reference
        } else if let Some(seed) = s.strip_prefix("seed:") {
            MapSpec::Seed(seed.to_string())
        } else if let Some(seed) = s.strip_prefix("final:") {
            MapSpec::Final(seed.to_string())
        } else {
            MapSpec::File(s.to_string())
        }
    }

    /// Builds a generated map (`size` applies to seeded maps). Files are read by the caller.
    pub fn generate(&self, size: Option<(u32, u32)>) -> Option<Result<Map, GenError>> {
        match self {
            MapSpec::Reference => Some(match size {
                None | Some((60, 60)) => Ok(reference_map()),
                Some((w, h)) => generate_duel("gbely", w, h),
            }),
            MapSpec::Seed(seed) => {
                let (w, h) = size.unwrap_or((60, 60));
                Some(generate_duel(seed, w, h))
            }
            MapSpec::Final(seed) => {
                let size = match size {
                    None => 90,
                    Some((w, h)) if w == h => w,
                    Some((w, h)) => return Some(Err(GenError::Final { size: w.max(h), radius: 0, extra_bases: 0 })),
                };
                Some(crate::generate_final(seed, crate::FinalConfig::for_size(size)))
            }
            MapSpec::File(_) => None,
        }
    }
}

/// Figures of a map.
#[derive(Clone, Debug, PartialEq)]
pub struct MapStats {
    pub cells: usize,
    /// Cells of each terrain, in the order luka, vrch, rieka.
    pub terrain: [usize; 3],
    /// Neutral cells by starting garrison (index = garrison, up to 9; larger ones in the last).
    pub garrison_histogram: [usize; 10],
    pub bases: usize,
    pub symmetric_180: bool,
    /// Invariant under the 90° rotation (final maps).
    pub symmetric_90: bool,
}

impl MapStats {
    pub fn of(map: &Map) -> MapStats {
        let g = map.grid();
        let mut terrain = [0; 3];
        let mut hist = [0; 10];
        let mut bases = 0;
        for c in g.cells() {
            terrain[Terrain::ALL.iter().position(|&t| t == map.terrain(c)).unwrap_or(0)] += 1;
            if map.start_owner(c).is_none() && !map.is_base(c) {
                hist[(map.garrison(c) as usize).min(9)] += 1;
            }
            bases += map.is_base(c) as usize;
        }
        let symmetric_180 = g.cells().all(|c| {
            let m = g.rotate180(c);
            map.terrain(c) == map.terrain(m) && map.garrison(c) == map.garrison(m) && map.is_base(c) == map.is_base(m)
        });
        let symmetric_90 = g.width() == g.height()
            && g.cells().all(|c| {
                let (r, col) = g.row_col(c);
                let m = g.cell(col, g.height() - 1 - r);
                map.terrain(c) == map.terrain(m)
                    && map.garrison(c) == map.garrison(m)
                    && map.is_base(c) == map.is_base(m)
                    && map.start_owner(c).map(|s| s == 8) == map.start_owner(m).map(|s| s == 8)
            });
        MapStats { cells: map.len(), terrain, garrison_histogram: hist, bases, symmetric_180, symmetric_90 }
    }
}

impl fmt::Display for MapStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pct = |n: usize| n as f64 * 100.0 / self.cells as f64;
        writeln!(f, "cells        {}", self.cells)?;
        for (t, n) in Terrain::ALL.iter().zip(self.terrain) {
            writeln!(f, "{:<12} {:>5}  {:5.1} %", t.wire(), n, pct(n))?;
        }
        writeln!(f, "bases        {}", self.bases)?;
        let sym = match (self.symmetric_90, self.symmetric_180) {
            (true, _) => "yes (90° rotation)",
            (false, true) => "yes (180° rotation)",
            _ => "no",
        };
        writeln!(f, "symmetric    {sym}")?;
        write!(f, "garrisons   ")?;
        for (g, n) in self.garrison_histogram.iter().enumerate() {
            if *n > 0 {
                write!(f, " {g}:{n}")?;
            }
        }
        writeln!(f)
    }
}
