//! The whole map: size, terrain, bases, starting garrisons and owners, seats.

pub use gbely_rules::SeatRole;
use gbely_rules::{Cell, Grid, Terrain};

/// One side's place on the map: its home base.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seat {
    pub role: SeatRole,
    pub base: Cell,
}

/// Most seats a map has (an army per finalist and the Council).
pub(crate) const MAX_SEATS: usize = 9;

/// A map ready to play. Built by the generator or read from a map file; always valid.
///
/// **Invariants:** every base is `luka`; every seat's base is a base cell owned by that seat at
/// the start; a neutral base has garrison 0; starting owners name existing seats.
#[derive(Clone, Debug, PartialEq)]
pub struct Map {
    pub(crate) name: String,
    pub(crate) grid: Grid,
    pub(crate) terrain: Vec<Terrain>,
    pub(crate) base: Vec<bool>,
    pub(crate) garrison: Vec<u32>,
    pub(crate) start_owner: Vec<Option<u8>>,
    pub(crate) seats: Vec<Seat>,
}

impl Map {
    pub fn name(&self) -> &str {
        &self.name
    }
    pub fn grid(&self) -> &Grid {
        &self.grid
    }
    pub fn width(&self) -> u32 {
        self.grid.width()
    }
    pub fn height(&self) -> u32 {
        self.grid.height()
    }
    /// Number of cells.
    pub fn len(&self) -> usize {
        self.grid.len()
    }
    pub fn is_empty(&self) -> bool {
        self.grid.is_empty()
    }
    pub fn terrain(&self, c: Cell) -> Terrain {
        self.terrain[c.index()]
    }
    pub fn terrains(&self) -> &[Terrain] {
        &self.terrain
    }
    pub fn is_base(&self, c: Cell) -> bool {
        self.base[c.index()]
    }
    /// The garrison a cell starts with (neutral 1–8 on generated duel maps); a seat's home base
    /// starts with `ZACIATOCNE_JEDNOTKY` instead, whatever is written here.
    pub fn garrison(&self, c: Cell) -> u32 {
        self.garrison[c.index()]
    }
    /// The seat owning a cell at the start, `None` for neutral.
    pub fn start_owner(&self, c: Cell) -> Option<u8> {
        self.start_owner[c.index()]
    }
    pub fn seats(&self) -> &[Seat] {
        &self.seats
    }
    /// Renamed copy (the name is not part of the fingerprint).
    pub fn with_name(mut self, name: impl Into<String>) -> Map {
        self.name = name.into();
        self
    }

    /// A 64-bit FNV-1a fingerprint of everything that matters for play (not the name), as 16 hex
    /// digits. Pinned by golden tests: a change means the map changed.
    pub fn fingerprint(&self) -> String {
        let mut h = Fnv64::new();
        h.write(b"gbely-map-fingerprint-1");
        h.write(&self.width().to_le_bytes());
        h.write(&self.height().to_le_bytes());
        for i in 0..self.len() {
            let t = match self.terrain[i] {
                Terrain::Meadow => 0u8,
                Terrain::Hill => 1,
                Terrain::River => 2,
            };
            h.write(&[t, self.base[i] as u8, self.start_owner[i].map_or(255, |s| s)]);
            h.write(&self.garrison[i].to_le_bytes());
        }
        for s in &self.seats {
            h.write(&[matches!(s.role, SeatRole::Council) as u8]);
            h.write(&s.base.0.to_le_bytes());
        }
        format!("{:016x}", h.finish())
    }

    /// Checks the invariants; used by every constructor.
    pub(crate) fn validate(&self) -> Result<(), String> {
        self.validate_at().map_err(|(_, m)| m)
    }

    /// [`Map::validate`], also saying what is at fault, so a map file can name the line.
    pub(crate) fn validate_at(&self) -> Result<(), (Fault, String)> {
        let g = &self.grid;
        if self.seats.len() < 2 {
            return Err((Fault::SeatCount, format!("a map needs at least 2 seats, found {}", self.seats.len())));
        }
        if self.seats.len() > MAX_SEATS {
            return Err((Fault::SeatCount, format!("a map has at most {MAX_SEATS} seats, found {}", self.seats.len())));
        }
        for c in g.cells() {
            let i = c.index();
            if self.base[i] && self.terrain[i] != Terrain::Meadow {
                return Err((Fault::Terrain(c), format!("cell {}: a base must be luka", g.id(c))));
            }
            if let Some(s) = self.start_owner[i] {
                if s as usize >= self.seats.len() {
                    return Err((Fault::Owner(c), format!("cell {}: owner seat {s} does not exist", g.id(c))));
                }
            } else if self.base[i] && self.garrison[i] != 0 {
                return Err((Fault::Garrison(c), format!("cell {}: a neutral base has no garrison", g.id(c))));
            }
        }
        for (k, s) in self.seats.iter().enumerate() {
            if s.base.index() >= g.len() {
                return Err((Fault::Seat(k), format!("seat {k}: base is off the map")));
            }
            if !self.base[s.base.index()] {
                return Err((Fault::Seat(k), format!("seat {k}: {} is not a base cell", g.id(s.base))));
            }
            // Before the ownership check: two seats on one base leave the first without it.
            if let Some(other) = self.seats.iter().skip(k + 1).position(|o| o.base == s.base) {
                let later = k + 1 + other;
                return Err((
                    Fault::Seat(later),
                    format!("seat {later}: base {} is another seat's base", g.id(s.base)),
                ));
            }
            if self.start_owner[s.base.index()] != Some(k as u8) {
                return Err((
                    Fault::SeatOwner(k),
                    format!("seat {k}: its base {} is not its own at the start", g.id(s.base)),
                ));
            }
        }
        Ok(())
    }
}

/// What a broken invariant is about (for naming the line of a map file).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fault {
    /// Too few or too many seats.
    SeatCount,
    /// A seat's base cell.
    Seat(usize),
    /// The starting owner of a seat's base.
    SeatOwner(usize),
    /// A cell's terrain.
    Terrain(Cell),
    /// A cell's starting owner.
    Owner(Cell),
    /// A cell's garrison.
    Garrison(Cell),
}

/// FNV-1a, 64-bit: tiny, fixed forever, no dependency.
#[derive(Debug)]
pub(crate) struct Fnv64(u64);

impl Fnv64 {
    pub(crate) fn new() -> Fnv64 {
        Fnv64(0xcbf2_9ce4_8422_2325)
    }
    pub(crate) fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= b as u64;
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    pub(crate) fn finish(&self) -> u64 {
        self.0
    }
}
