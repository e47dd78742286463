//! Who meets whom, where: a league's pairings (every pair on every map, for every game, in both
//! seat orders; or a gauntlet's), in a fixed order.

/// One match of the league: who sits where, on which map, which repetition.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Pairing {
    /// The map (an index into the league's maps).
    pub map: usize,
    /// The entrant in seat 0 (an index into the entrants).
    pub seat0: usize,
    /// The entrant in seat 1.
    pub seat1: usize,
    /// Which game of the pair, map and seat order (0 … games − 1).
    pub game: u32,
}

impl Pairing {
    /// The match the arena plays for it, the `index`-th of the list played.
    pub fn at(&self, index: usize) -> super::Match {
        super::Match { index, leg: 0, seats: [self.seat0, self.seat1], map: self.map, game: self.game }
    }
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
