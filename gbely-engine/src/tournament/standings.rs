//! From results to tables: the standings with the Elo fit ([`super::rating`]), the pair matrix
//! and rank confidence (LOS), the tables of each map, and a gauntlet's lines ([`gauntlet`]). The
//! same, to the last bit, for any order of the results.

use serde::Serialize;

use super::Outcome;

/// Who an entrant is in the tables.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Competitor {
    /// Its key: unique among the entrants (`gbely league`: `name@hash`).
    pub id: String,
    /// The name it is shown under.
    pub name: String,
}

/// One played match, as the tables count it.
#[derive(Clone, Debug, PartialEq)]
pub struct Game {
    /// The entrants in seat 0 and seat 1 (indices into the competitors).
    pub seats: [usize; 2],
    /// The map (an index into the map names).
    pub map: usize,
    /// Which game of the pair, map and seat order.
    pub game: u32,
    /// What it left.
    pub outcome: Outcome,
}

impl Game {
    /// +1 seat 0 won, −1 seat 1 won, 0 a draw (rules §10).
    pub fn winner(&self) -> i8 {
        self.outcome.winner()
    }
}

/// An entrant's line in the standings.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Standing {
    /// 1 for the first.
    pub rank: usize,
    /// The competitor's key.
    pub id: String,
    /// Its name.
    pub name: String,
    /// Which competitor (an index into the competitors).
    #[serde(skip)]
    pub entrant: usize,
    /// Matches played, won, drawn and lost.
    pub played: u32,
    /// Matches won.
    pub wins: u32,
    /// Matches drawn.
    pub draws: u32,
    /// Matches lost.
    pub losses: u32,
    /// Mean share of the map over its matches (a disqualified match counts 0).
    pub mean_share: f64,
    /// Elo rating from the maximum-likelihood fit over all results ([`super::rating`]), and its
    /// standard deviation: `rating ± 1.96 · uncertainty` is its 95 % interval.
    pub rating: f64,
    /// The rating's standard deviation.
    pub uncertainty: f64,
    /// Violations over all its matches (SPEC §8).
    pub violations: u32,
    /// Matches it was disqualified in.
    pub disqualified: u32,
}

impl Standing {
    /// A win 1, a draw ½.
    pub fn points(&self) -> f64 {
        self.wins as f64 + self.draws as f64 / 2.0
    }
}

/// One map's standings.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MapStandings {
    /// The map's name.
    pub map: String,
    /// The standings on it alone (its own rating fit).
    pub standings: Vec<Standing>,
}

/// Standings, the pair matrix and the rank confidence, from the results of a tournament; the
/// same for any order of the results.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Standings {
    /// Ranked by rating, then wins, then mean share, then id.
    pub standings: Vec<Standing>,
    /// `matrix[i][j]`: (wins, draws, losses) of entry `i` (standings order) against entry `j`.
    pub matrix: Vec<Vec<[u32; 3]>>,
    /// `los[i][j]`: the probability that entry `i` (standings order) is stronger than entry `j`.
    pub los: Vec<Vec<f64>>,
    /// The standings of each map that was played on, alone (its own rating fit), in the order of
    /// the map names given.
    pub per_map: Vec<MapStandings>,
    /// A gauntlet's tables (set by the caller for a gauntlet: [`gauntlet`]).
    pub gauntlet: Option<Gauntlet>,
}

/// The standings of `games` between `who` on the maps named `maps`: overall, and per map.
pub fn standings(who: &[Competitor], maps: &[String], games: &[Game]) -> Standings {
    let mut s = table(who, games);
    s.per_map = (0..maps.len())
        .filter(|&m| games.iter().any(|g| g.map == m))
        .map(|m| {
            let on: Vec<Game> = games.iter().filter(|g| g.map == m).cloned().collect();
            MapStandings { map: maps[m].clone(), standings: table(who, &on).standings }
        })
        .collect();
    s
}

/// The standings of `games` (without the per-map tables).
fn table(who: &[Competitor], games: &[Game]) -> Standings {
    use super::rating::{fit, Counts};
    let n = who.len();
    // In a fixed order: sums of shares then do not depend on the order the games came in.
    let mut games: Vec<&Game> = games.iter().filter(|g| g.seats.iter().all(|&k| k < n)).collect();
    games.sort_by_key(|g| (g.map, g.seats, g.game));
    let mut st: Vec<Standing> = who
        .iter()
        .enumerate()
        .map(|(k, e)| Standing {
            rank: 0,
            id: e.id.clone(),
            name: e.name.clone(),
            entrant: k,
            played: 0,
            wins: 0,
            draws: 0,
            losses: 0,
            mean_share: 0.0,
            rating: 0.0,
            uncertainty: 0.0,
            violations: 0,
            disqualified: 0,
        })
        .collect();
    let mut matrix = vec![vec![[0u32; 3]; n]; n];
    let mut counts = Counts::new(n);
    for g in games {
        let [a, b] = g.seats;
        let w = g.winner();
        counts.add(a, b, w);
        for (side, k, other) in [(0usize, a, b), (1usize, b, a)] {
            let s = &mut st[k];
            s.played += 1;
            s.mean_share += g.outcome.share(side);
            s.violations += g.outcome.violations[side];
            s.disqualified += g.outcome.disqualified[side] as u32;
            let slot = match if side == 0 { w } else { -w } {
                1 => 0,
                0 => 1,
                _ => 2,
            };
            match slot {
                0 => s.wins += 1,
                1 => s.draws += 1,
                _ => s.losses += 1,
            }
            matrix[k][other][slot] += 1;
        }
    }
    let f = fit(&counts);
    for (k, s) in st.iter_mut().enumerate() {
        if s.played > 0 {
            s.mean_share /= s.played as f64;
        }
        s.rating = f.rating[k];
        s.uncertainty = f.sd(k);
    }
    // Rank by rating, then wins, then mean share, then id: a total order. Ratings are compared
    // to a millionth of an Elo: equal points in a round robin give equal ratings (the likelihood
    // equations), which the fit reaches only to its last bits, and those must not rank anyone.
    let key = |r: f64| (r * 1e6).round() as i64;
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&x, &y| {
        let (a, b) = (&st[x], &st[y]);
        key(b.rating)
            .cmp(&key(a.rating))
            .then(b.wins.cmp(&a.wins))
            .then(b.mean_share.total_cmp(&a.mean_share))
            .then(a.id.cmp(&b.id))
            .then(x.cmp(&y))
    });
    let standings: Vec<Standing> =
        order.iter().enumerate().map(|(rank, &k)| Standing { rank: rank + 1, ..st[k].clone() }).collect();
    let matrix = order.iter().map(|&i| order.iter().map(|&j| matrix[i][j]).collect()).collect();
    let los = order.iter().map(|&i| order.iter().map(|&j| if i == j { 0.5 } else { f.los(i, j) }).collect()).collect();
    Standings { standings, matrix, los, per_map: Vec::new(), gauntlet: None }
}

/// One line of a gauntlet: the candidate's results against an opponent, on a map, or against
/// the whole field.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GauntletLine {
    /// The opponent's or the map's name (`field` for the whole).
    pub against: String,
    /// Games the candidate played here.
    pub played: u32,
    /// The candidate's wins.
    pub wins: u32,
    /// Its draws.
    pub draws: u32,
    /// Its losses.
    pub losses: u32,
    /// The candidate's mean game score (win 1, draw ½).
    pub score: f64,
    /// The candidate's Elo relative to the opponents here, `400 log10(score / (1 − score))`, and
    /// its 95 % interval (`None`: unbounded, after a clean sweep one way).
    pub elo: Option<f64>,
    /// The lower end of the interval.
    pub low: Option<f64>,
    /// The upper end of the interval.
    pub high: Option<f64>,
}

/// A gauntlet's result: the candidate against the field, each opponent and each map.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Gauntlet {
    /// The candidate's name.
    pub candidate: String,
    /// Against the whole field.
    pub field: GauntletLine,
    /// Against each opponent, in the order of the competitors.
    pub per_opponent: Vec<GauntletLine>,
    /// On each map, in the order of the map names.
    pub per_map: Vec<GauntletLine>,
}

impl GauntletLine {
    fn new(against: &str) -> GauntletLine {
        GauntletLine {
            against: against.to_string(),
            played: 0,
            wins: 0,
            draws: 0,
            losses: 0,
            score: 0.0,
            elo: None,
            low: None,
            high: None,
        }
    }

    fn add(&mut self, result: i8) {
        self.played += 1;
        match result {
            1 => self.wins += 1,
            0 => self.draws += 1,
            _ => self.losses += 1,
        }
    }

    /// The score, the Elo and the Wilson score interval of the score (95 %), as Elo: it stays
    /// inside (0, 1) for a sweep (`n / (n + z²)` after `n` wins), so a sweep has a finite bound on
    /// one side. Counting a draw as half a win in a binomial overstates the variance a little:
    /// the interval errs wide.
    fn finish(&mut self) {
        if self.played == 0 {
            return;
        }
        let n = self.played as f64;
        let p = (self.wins as f64 + self.draws as f64 / 2.0) / n;
        self.score = p;
        let z: f64 = 1.959_964;
        let centre = (p + z * z / (2.0 * n)) / (1.0 + z * z / n);
        let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / (1.0 + z * z / n);
        let elo = |s: f64| (s > 1e-12 && s < 1.0 - 1e-12).then(|| 400.0 * (s / (1.0 - s)).log10());
        self.elo = elo(p);
        self.low = elo(centre - half);
        self.high = elo(centre + half);
    }
}

/// The gauntlet of `who[0]` (the candidate) against the others, from the games that involve it.
pub fn gauntlet(who: &[Competitor], maps: &[String], games: &[Game]) -> Gauntlet {
    let mut field = GauntletLine::new("field");
    let mut per_opponent: Vec<GauntletLine> = who[1..].iter().map(|e| GauntletLine::new(&e.name)).collect();
    let mut per_map: Vec<GauntletLine> = maps.iter().map(|m| GauntletLine::new(m)).collect();
    for g in games {
        let (side, other) = match g.seats {
            [0, other] => (1i8, other),
            [other, 0] => (-1i8, other),
            _ => continue,
        };
        if other == 0 || other >= who.len() || g.map >= maps.len() {
            continue;
        }
        let result = side * g.winner();
        field.add(result);
        per_opponent[other - 1].add(result);
        per_map[g.map].add(result);
    }
    field.finish();
    per_opponent.iter_mut().for_each(GauntletLine::finish);
    per_map.retain(|l| l.played > 0);
    per_map.iter_mut().for_each(GauntletLine::finish);
    Gauntlet { candidate: who[0].name.clone(), field, per_opponent, per_map }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A round robin of `n` entries on `maps` maps, both seats, with outcomes drawn from their
    /// strengths (entry k is 40·k Elo weaker than entry 0), and draws.
    fn round_robin(n: usize, maps: usize, seed: u64) -> (Vec<Competitor>, Vec<String>, Vec<Game>) {
        let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        let mut uniform = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64
        };
        let entries: Vec<Competitor> =
            (0..n).map(|k| Competitor { id: format!("e{k}@0"), name: format!("e{k}") }).collect();
        let mut rows = Vec::new();
        for m in 0..maps {
            for a in 0..n {
                for b in 0..n {
                    if a == b {
                        continue;
                    }
                    let p = 1.0 / (1.0 + 10f64.powf(-40.0 * (b as f64 - a as f64) / 400.0));
                    let u = uniform();
                    let cells = if u < 0.05 {
                        [100, 100]
                    } else if u < 0.05 + 0.95 * p {
                        [120, 80]
                    } else {
                        [80, 120]
                    };
                    let score = [Some(cells[0] as f64 / 2.3), Some(cells[1] as f64 / 2.3)];
                    let outcome = Outcome { cells, score, ..Outcome::default() };
                    rows.push(Game { seats: [a, b], map: m, game: 0, outcome });
                }
            }
        }
        (entries, (0..maps).map(|m| format!("m{m}")).collect(), rows)
    }

    #[test]
    fn the_ranking_does_not_depend_on_the_order_of_the_matches() {
        // Weng-Lin updated match by match gave 6 different rankings over 2000 orders of one
        // league; the fit over all results gives one, to the last bit.
        let (entries, maps, mut rows) = round_robin(5, 5, 1);
        let first = standings(&entries, &maps, &rows);
        let mut x: u64 = 12345;
        for _ in 0..200 {
            for i in (1..rows.len()).rev() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                rows.swap(i, (x % (i as u64 + 1)) as usize);
            }
            assert_eq!(standings(&entries, &maps, &rows), first);
        }
    }

    #[test]
    fn in_a_round_robin_more_points_rank_higher() {
        // Everyone plays everyone equally often: the fit's ratings are in the order of the points
        // (the likelihood equations say Σⱼ nᵢⱼ P(rᵢ − rⱼ) + rᵢ/(c σ²) = pointsᵢ, increasing in rᵢ).
        for seed in 0..20 {
            let (entries, maps, rows) = round_robin(5, 5, seed);
            let s = standings(&entries, &maps, &rows);
            let points: Vec<f64> = s.standings.iter().map(|x| x.wins as f64 + x.draws as f64 / 2.0).collect();
            for k in 1..points.len() {
                assert!(points[k - 1] >= points[k], "seed {seed}: {points:?}");
                if points[k - 1] > points[k] {
                    assert!(s.los[k - 1][k] > 0.5);
                }
            }
            // Per map too, and the LOS matrix is complementary.
            assert_eq!(s.per_map.len(), 5);
            for i in 0..5 {
                for j in 0..5 {
                    if i != j {
                        assert!((s.los[i][j] + s.los[j][i] - 1.0).abs() < 1e-6);
                    }
                }
            }
        }
    }

    #[test]
    fn equal_points_in_a_round_robin_are_ranked_by_wins_then_mean_share() {
        // Four entrants, each beating the next around a circle and drawing across it: 1½ points
        // each, so equal ratings; "c" held the most of the map, then "a", "d", "b".
        let who: Vec<Competitor> =
            ["a", "b", "c", "d"].iter().map(|n| Competitor { id: n.to_string(), name: n.to_string() }).collect();
        let share = [50.0, 40.0, 60.0, 45.0];
        let game = |x: usize, y: usize, cells: [u32; 2]| Game {
            seats: [x, y],
            map: 0,
            game: 0,
            outcome: Outcome { cells, score: [Some(share[x]), Some(share[y])], ..Outcome::default() },
        };
        let games = vec![
            game(0, 1, [2, 1]),
            game(1, 2, [2, 1]),
            game(2, 3, [2, 1]),
            game(3, 0, [2, 1]),
            game(0, 2, [1, 1]),
            game(1, 3, [1, 1]),
        ];
        let s = standings(&who, &["m".to_string()], &games);
        let names: Vec<&str> = s.standings.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(names, ["c", "a", "d", "b"]);
        assert!(s.standings.iter().all(|x| x.points() == 1.5 && x.rating.abs() < 1e-6), "{:?}", s.standings);
    }

    #[test]
    fn a_gauntlet_counts_the_candidate_against_each_opponent_and_map() {
        let (entries, maps, rows) = round_robin(3, 2, 5);
        let g = gauntlet(&entries, &maps, &rows);
        // Only the candidate's matches: 2 opponents × 2 maps × 2 seats.
        assert_eq!(g.field.played, 8);
        assert_eq!(g.per_opponent.iter().map(|l| l.played).collect::<Vec<_>>(), [4, 4]);
        assert_eq!(g.per_map.iter().map(|l| l.played).collect::<Vec<_>>(), [4, 4]);
        let total = |ls: &[GauntletLine]| ls.iter().map(|l| l.wins * 2 + l.draws).sum::<u32>();
        assert_eq!(total(&g.per_opponent), g.field.wins * 2 + g.field.draws);
        assert_eq!(total(&g.per_map), g.field.wins * 2 + g.field.draws);

        // 3 wins, 1 loss: score ¾, Elo 400 log10 3 = 190.8; Wilson with z = 1.96, n = 4:
        // centre (0.75 + 0.48019) / 1.96037 = 0.62753, half 1.96 √(0.046875 + 0.060024) / 1.96037
        // = 0.32688, so [0.30065, 0.95441]: 400 log10(0.30065 / 0.69935) = −146.7 and
        // 400 log10(0.95441 / 0.04559) = +528.3.
        let mut l = GauntletLine::new("x");
        for r in [1, 1, 1, -1] {
            l.add(r);
        }
        l.finish();
        assert!((l.elo.unwrap() - 190.85).abs() < 0.01, "{l:?}");
        assert!((l.low.unwrap() + 146.7).abs() < 0.1 && (l.high.unwrap() - 528.3).abs() < 0.1, "{l:?}");
        // A sweep: no estimate, a finite lower bound (n / (n + z²) = 4 / 7.8415 = 0.51010: +7.0).
        let mut l = GauntletLine::new("x");
        for _ in 0..4 {
            l.add(1);
        }
        l.finish();
        assert_eq!((l.elo, l.high), (None, None));
        assert!((l.low.unwrap() - 7.0).abs() < 0.1, "{l:?}");
    }
}
