//! Who meets whom, where: the league's maps ([`league_maps`]) and its pairings (every pair on
//! every map, for every game, in both seat orders; or a gauntlet's), in a fixed order.

use std::sync::Arc;

use super::play::{LeagueError, LeagueMap};
use crate::app::runs::maps::load_map;
use crate::app::runs::RunError;

/// The maps a league plays: a comma-separated list of map names (`gbely`, `seed:TEXT`, files), or
/// a number N: N generated 60×60 maps drawn from the league seed (`seed:<seed>-1` …).
pub fn league_maps(maps: &str, seed: &str) -> Result<Vec<LeagueMap>, LeagueError> {
    let specs: Vec<String> = match maps.trim().parse::<u32>() {
        Ok(n) => (1..=n).map(|k| format!("seed:{seed}-{k}")).collect(),
        Err(_) => maps.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect(),
    };
    specs
        .into_iter()
        .map(|spec| Ok(LeagueMap { map: Arc::new(load_map(&spec, None)?), spec }))
        .collect::<Result<Vec<_>, RunError>>()
        .map_err(LeagueError::from)
}

/// One match of the league: who sits where, on which map, which repetition.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Pairing {
    pub map: usize,
    pub seat0: usize,
    pub seat1: usize,
    pub game: u32,
}

/// Who plays whom.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Schedule {
    /// Every entry against every other.
    RoundRobin,
    /// The first entry (the candidate) against each of the others (the field), and the field
    /// not among itself.
    Gauntlet,
}

/// The pairings of a schedule: for each pair it lets meet, each map and game, both seat orders.
pub fn schedule_pairings(schedule: Schedule, entries: usize, maps: usize, games: u32) -> Vec<Pairing> {
    let all = pairings(entries, maps, games);
    match schedule {
        Schedule::RoundRobin => all,
        Schedule::Gauntlet => all.into_iter().filter(|p| p.seat0 == 0 || p.seat1 == 0).collect(),
    }
}

/// Every match of a league: each unordered pair of entries, on each map, for each game, in both
/// seat orders. In a fixed order (map, pair, game, order), which is also the order ratings are
/// computed in.
pub fn pairings(entries: usize, maps: usize, games: u32) -> Vec<Pairing> {
    let mut out = Vec::new();
    for map in 0..maps {
        for a in 0..entries {
            for b in a + 1..entries {
                for game in 0..games {
                    out.push(Pairing { map, seat0: a, seat1: b, game });
                    out.push(Pairing { map, seat0: b, seat1: a, game });
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pair_meets_on_every_map_in_both_seat_orders() {
        let p = pairings(3, 2, 1);
        // 3 pairs × 2 orders × 2 maps.
        assert_eq!(p.len(), 12);
        for map in 0..2 {
            for a in 0..3 {
                for b in 0..3 {
                    let n = p.iter().filter(|x| x.map == map && x.seat0 == a && x.seat1 == b).count();
                    assert_eq!(n, usize::from(a != b), "map {map}: {a} vs {b}");
                }
            }
        }
        assert_eq!(pairings(4, 1, 3).len(), 6 * 2 * 3);
    }
}
