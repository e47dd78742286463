use serde::{Deserialize, Serialize};

/// The terrain of a cell (SPEC §2). Wire names are Slovak.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Terrain {
    /// `luka`: meadow, oil fields. Production 3, defence × 1.0, passability 1.0.
    #[serde(rename = "luka")]
    Meadow,
    /// `vrch`: hill. Production 2, defence × 1.5, passability 0.6.
    #[serde(rename = "vrch")]
    Hill,
    /// `rieka`: river, a border cell. Production 1, defence × 1.3, passability 1.0.
    #[serde(rename = "rieka")]
    River,
}

impl Terrain {
    /// The three terrains: meadow, hill, river.
    pub const ALL: [Terrain; 3] = [Terrain::Meadow, Terrain::Hill, Terrain::River];

    /// The wire name (`luka`, `vrch`, `rieka`).
    pub const fn wire(self) -> &'static str {
        match self {
            Terrain::Meadow => "luka",
            Terrain::Hill => "vrch",
            Terrain::River => "rieka",
        }
    }

    /// The terrain of a wire name (`luka`, `vrch`, `rieka`).
    pub fn from_wire(s: &str) -> Option<Terrain> {
        Terrain::ALL.into_iter().find(|t| t.wire() == s)
    }

    /// The terrain's character in map files, terminal views and the viewer: `.` meadow,
    /// `^` hill, `~` river. The one table of glyphs.
    pub const fn glyph(self) -> char {
        match self {
            Terrain::Meadow => '.',
            Terrain::Hill => '^',
            Terrain::River => '~',
        }
    }

    /// The terrain of a map-file glyph (`.`, `^`, `~`).
    pub fn from_glyph(c: char) -> Option<Terrain> {
        Terrain::ALL.into_iter().find(|t| t.glyph() == c)
    }

    /// `PRODUKCIA`: units a cell of this terrain produces per round
    /// ([`constants::production`](crate::constants::production)).
    pub const fn production(self) -> f64 {
        crate::constants::production(self)
    }
    /// `TERENNY_BONUS`: the defence multiplier of the garrison
    /// ([`constants::defence_bonus`](crate::constants::defence_bonus)).
    pub const fn defence_bonus(self) -> f64 {
        crate::constants::defence_bonus(self)
    }
    /// `PRIECHODNOST`: the share of moved units that arrive on this terrain
    /// ([`constants::passability`](crate::constants::passability)).
    pub const fn passability(self) -> f64 {
        crate::constants::passability(self)
    }
}
