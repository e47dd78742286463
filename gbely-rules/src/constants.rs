//! The constants of SPEC §12 (`pravidla`), English names with the Slovak wire name beside each.

use crate::Terrain;

/// `BONUS_ZAKLADNE`: extra units per round on every owned base cell.
pub const BASE_BONUS: f64 = 5.0;
/// `UCINNOST_OPEVNENIA`: fortification bought per invested unit.
pub const FORTIFY_EFFICIENCY: f64 = 0.3;
/// `ZACIATOCNE_JEDNOTKY`: units on each side's home base at the start.
pub const STARTING_UNITS: f64 = 10.0;
/// `VELKOST_MAPY`: side of the reference (training) map. Does not hold on final maps.
pub const MAP_SIZE: u32 = 60;
/// `POCET_KOL`: rounds in a match, numbered 0 … 149.
pub const ROUNDS: u32 = 150;
/// `POSADKA_NEUTRAL`: the smallest and largest neutral garrison at generation time.
pub const NEUTRAL_GARRISON: (u32, u32) = (1, 8);
/// `LIMIT_KOLA_S`: seconds an agent has per round.
pub const ROUND_TIME_LIMIT_S: f64 = 2.0;
/// `POVOLENE_PORUSENIA`: violations allowed; the next one disqualifies.
pub const ALLOWED_VIOLATIONS: u32 = 3;
/// `REFERENCNA_MAPA`: the name of the reference map.
pub const REFERENCE_MAP: &str = "gbely";

/// The version of the rules this crate implements. An agent file may say which rules it was
/// written for (`GAME_VERSION = 1` at top level); a different number gets a warning.
pub const GAME_VERSION: u32 = 1;
/// Submission limit: one `.py` file of at most this many bytes (512 KiB).
pub const MAX_SUBMISSION_BYTES: u64 = 512 * 1024;

/// `PRODUKCIA`: units a cell of this terrain produces per round.
pub const fn production(t: Terrain) -> f64 {
    match t {
        Terrain::Meadow => 3.0,
        Terrain::Hill => 2.0,
        Terrain::River => 1.0,
    }
}

/// `TERENNY_BONUS`: defence multiplier of the garrison.
pub const fn defence_bonus(t: Terrain) -> f64 {
    match t {
        Terrain::Meadow => 1.0,
        Terrain::Hill => 1.5,
        Terrain::River => 1.3,
    }
}

/// `PRIECHODNOST`: share of a MOVE that arrives on a cell of this terrain in the same round.
pub const fn passability(t: Terrain) -> f64 {
    match t {
        Terrain::Meadow => 1.0,
        Terrain::Hill => 0.6,
        Terrain::River => 1.0,
    }
}

/// The `pravidla` module given to Python agents: it imports nothing (SPEC §12).
pub const PRAVIDLA_PY: &str = r#""""Constants of the Gbely rules (SPEC §12). This module imports nothing."""

PRODUKCIA = {"luka": 3, "vrch": 2, "rieka": 1}
TERENNY_BONUS = {"luka": 1.0, "vrch": 1.5, "rieka": 1.3}
PRIECHODNOST = {"luka": 1.0, "vrch": 0.6, "rieka": 1.0}
BONUS_ZAKLADNE = 5
UCINNOST_OPEVNENIA = 0.3
ZACIATOCNE_JEDNOTKY = 10
VELKOST_MAPY = 60
POCET_KOL = 150
POSADKA_NEUTRAL = (1, 8)
LIMIT_KOLA_S = 2
POVOLENE_PORUSENIA = 3
REFERENCNA_MAPA = "gbely"
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_of_spec_section_2() {
        assert_eq!(production(Terrain::Meadow), 3.0);
        assert_eq!(production(Terrain::Hill), 2.0);
        assert_eq!(production(Terrain::River), 1.0);
        assert_eq!(defence_bonus(Terrain::Meadow), 1.0);
        assert_eq!(defence_bonus(Terrain::Hill), 1.5);
        assert_eq!(defence_bonus(Terrain::River), 1.3);
        assert_eq!(passability(Terrain::Meadow), 1.0);
        assert_eq!(passability(Terrain::Hill), 0.6);
        assert_eq!(passability(Terrain::River), 1.0);
    }

    /// The `pravidla` text and the Rust constants are one fact written twice: every value of the
    /// Python module must be the Rust one.
    #[test]
    fn pravidla_values_are_the_rust_constants() {
        let value = |name: &str| -> String {
            let line = PRAVIDLA_PY.lines().find(|l| l.starts_with(&format!("{name} = "))).expect(name);
            line[name.len() + 3..].trim().to_string()
        };
        let number = |text: &str| -> f64 { text.trim().parse().expect(text) };
        // {"luka": 3, "vrch": 2, "rieka": 1} → per terrain, in the Rust table's terms.
        let per_terrain = |name: &str, f: fn(Terrain) -> f64| {
            let text = value(name);
            let body = text.trim_start_matches('{').trim_end_matches('}');
            let mut seen = 0;
            for entry in body.split(',') {
                let (k, v) = entry.split_once(':').expect(name);
                let t = Terrain::from_wire(k.trim().trim_matches('"')).expect(name);
                assert_eq!(number(v), f(t), "{name}[{}]", t.wire());
                seen += 1;
            }
            assert_eq!(seen, Terrain::ALL.len(), "{name} names every terrain");
        };
        per_terrain("PRODUKCIA", production);
        per_terrain("TERENNY_BONUS", defence_bonus);
        per_terrain("PRIECHODNOST", passability);
        assert_eq!(number(&value("BONUS_ZAKLADNE")), BASE_BONUS);
        assert_eq!(number(&value("UCINNOST_OPEVNENIA")), FORTIFY_EFFICIENCY);
        assert_eq!(number(&value("ZACIATOCNE_JEDNOTKY")), STARTING_UNITS);
        assert_eq!(number(&value("VELKOST_MAPY")), MAP_SIZE as f64);
        assert_eq!(number(&value("POCET_KOL")), ROUNDS as f64);
        assert_eq!(value("POSADKA_NEUTRAL"), format!("({}, {})", NEUTRAL_GARRISON.0, NEUTRAL_GARRISON.1));
        assert_eq!(number(&value("LIMIT_KOLA_S")), ROUND_TIME_LIMIT_S);
        assert_eq!(number(&value("POVOLENE_PORUSENIA")), ALLOWED_VIOLATIONS as f64);
        assert_eq!(value("REFERENCNA_MAPA"), format!("\"{REFERENCE_MAP}\""));
    }

    #[test]
    fn pravidla_module_imports_nothing_and_names_every_constant() {
        assert!(!PRAVIDLA_PY.lines().any(|l| l.starts_with("import ") || l.starts_with("from ")));
        for name in [
            "PRODUKCIA",
            "TERENNY_BONUS",
            "PRIECHODNOST",
            "BONUS_ZAKLADNE",
            "UCINNOST_OPEVNENIA",
            "ZACIATOCNE_JEDNOTKY",
            "VELKOST_MAPY",
            "POCET_KOL",
            "POSADKA_NEUTRAL",
            "LIMIT_KOLA_S",
            "POVOLENE_PORUSENIA",
            "REFERENCNA_MAPA",
        ] {
            assert!(PRAVIDLA_PY.contains(&format!("\n{name} = ")), "{name} missing");
        }
    }
}
