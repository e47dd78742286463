//! From stored results to tables: who won a match ([`MatchRow::winner`]), the standings with the
//! Elo fit ([`standings`], [`crate::app::rating`]), the pair matrix and rank confidence, and a
//! gauntlet's lines ([`gauntlet`]). The same for any order of the results.

use std::collections::BTreeMap;

use serde::Serialize;

use super::play::{Entry, MatchRow};

// Who won is read from a stored row by the tables (and the A/B test), never while playing: it
// lives with the standings that count it.
impl MatchRow {
    /// +1 when seat 0 won, −1 when seat 1 won, 0 for a draw (SPEC §10: more cells; on equal cells
    /// the earlier tie-break round; a disqualified side has no score and loses).
    pub fn winner(&self) -> i8 {
        crate::experiment::winner(self.cells, self.tiebreak, self.disqualified)
    }
}

/// An entry's line in the standings.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Standing {
    pub rank: usize,
    pub id: String,
    pub name: String,
    pub played: u32,
    pub wins: u32,
    pub draws: u32,
    pub losses: u32,
    /// Mean share of the map over its matches (a disqualified match counts 0).
    pub mean_share: f64,
    /// Elo rating from the maximum-likelihood fit over all results ([`crate::app::rating`]), and its
    /// standard deviation: `rating ± 1.96 · uncertainty` is its 95 % interval.
    pub rating: f64,
    pub uncertainty: f64,
    pub violations: u32,
    pub disqualified: u32,
}

/// One map's standings.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MapStandings {
    pub map: String,
    pub standings: Vec<Standing>,
}

/// Standings, the pair matrix and the rank confidence, from the results of a league; the same
/// for any order of the results.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Standings {
    pub standings: Vec<Standing>,
    /// `matrix[i][j]`: (wins, draws, losses) of entry `i` (standings order) against entry `j`.
    pub matrix: Vec<Vec<[u32; 3]>>,
    /// `los[i][j]`: the probability that entry `i` (standings order) is stronger than entry `j`.
    pub los: Vec<Vec<f64>>,
    /// The standings of each map alone (its own rating fit), maps sorted by name.
    pub per_map: Vec<MapStandings>,
    /// A gauntlet's tables (set by the caller for `--gauntlet`).
    pub gauntlet: Option<Gauntlet>,
}

pub fn standings(entries: &[Entry], rows: &[MatchRow]) -> Standings {
    let mut s = table(entries, rows);
    let mut maps: Vec<&str> = Vec::new();
    for r in rows {
        if !maps.contains(&r.map.as_str()) {
            maps.push(&r.map);
        }
    }
    // Maps in a fixed order too: sorted.
    maps.sort_unstable();
    s.per_map = maps
        .iter()
        .map(|m| {
            let on: Vec<MatchRow> = rows.iter().filter(|r| r.map == *m).cloned().collect();
            MapStandings { map: m.to_string(), standings: table(entries, &on).standings }
        })
        .collect();
    s
}

/// The standings of `rows` (without the per-map tables).
fn table(entries: &[Entry], rows: &[MatchRow]) -> Standings {
    use crate::app::rating::{fit, Counts};
    let n = entries.len();
    let index: BTreeMap<&str, usize> = entries.iter().enumerate().map(|(k, e)| (e.id.as_str(), k)).collect();
    // In key order: sums of shares then do not depend on the order the rows came in.
    let mut rows: Vec<&MatchRow> = rows.iter().collect();
    rows.sort_by(|a, b| a.key.cmp(&b.key));
    let mut st: Vec<Standing> = entries
        .iter()
        .map(|e| Standing {
            rank: 0,
            id: e.id.clone(),
            name: e.name.clone(),
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
    for row in rows {
        let (Some(&a), Some(&b)) = (index.get(row.seat0.as_str()), index.get(row.seat1.as_str())) else {
            continue;
        };
        let w = row.winner();
        counts.add(a, b, w);
        for (side, k, other) in [(0usize, a, b), (1usize, b, a)] {
            let s = &mut st[k];
            s.played += 1;
            s.mean_share += row.score[side].unwrap_or(0.0);
            s.violations += row.violations[side];
            s.disqualified += row.disqualified[side] as u32;
            let mine = if side == 0 { w } else { -w };
            let slot = match mine {
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
    // Rank by rating, then wins, then mean share, then id: a total order.
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&x, &y| {
        let (a, b) = (&st[x], &st[y]);
        b.rating
            .total_cmp(&a.rating)
            .then(b.wins.cmp(&a.wins))
            .then(b.mean_share.total_cmp(&a.mean_share))
            .then(a.id.cmp(&b.id))
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
    pub played: u32,
    pub wins: u32,
    pub draws: u32,
    pub losses: u32,
    /// The candidate's mean game score (win 1, draw ½).
    pub score: f64,
    /// The candidate's Elo relative to the opponents here, `400 log10(score / (1 − score))`, and
    /// its 95 % interval (`None`: unbounded, after a clean sweep one way).
    pub elo: Option<f64>,
    pub low: Option<f64>,
    pub high: Option<f64>,
}

/// A gauntlet's result: the candidate against the field, each opponent and each map.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Gauntlet {
    pub candidate: String,
    pub field: GauntletLine,
    pub per_opponent: Vec<GauntletLine>,
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

/// The gauntlet of `entries[0]` against the others, from the rows that involve it.
pub fn gauntlet(entries: &[Entry], rows: &[MatchRow]) -> Gauntlet {
    let cand = &entries[0];
    let mut field = GauntletLine::new("field");
    let mut per_opponent: Vec<GauntletLine> = entries[1..].iter().map(|e| GauntletLine::new(&e.name)).collect();
    let mut maps: BTreeMap<String, GauntletLine> = BTreeMap::new();
    for row in rows {
        let (side, other) = if row.seat0 == cand.id {
            (1i8, &row.seat1)
        } else if row.seat1 == cand.id {
            (-1i8, &row.seat0)
        } else {
            continue;
        };
        let Some(k) = entries[1..].iter().position(|e| &e.id == other) else { continue };
        let result = side * row.winner();
        field.add(result);
        per_opponent[k].add(result);
        maps.entry(row.map.clone()).or_insert_with(|| GauntletLine::new(&row.map)).add(result);
    }
    field.finish();
    per_opponent.iter_mut().for_each(GauntletLine::finish);
    let mut per_map: Vec<GauntletLine> = maps.into_values().collect();
    per_map.iter_mut().for_each(GauntletLine::finish);
    Gauntlet { candidate: cand.name.clone(), field, per_opponent, per_map }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A round robin of `n` entries on `maps` maps, both seats, with outcomes drawn from their
    /// strengths (entry k is 40·k Elo weaker than entry 0), and draws.
    fn round_robin(n: usize, maps: usize, seed: u64) -> (Vec<Entry>, Vec<MatchRow>) {
        let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        let mut uniform = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64
        };
        let entries: Vec<Entry> = (0..n)
            .map(|k| Entry { id: format!("e{k}@0"), name: format!("e{k}"), spec: String::new(), hash: "0".into() })
            .collect();
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
                    let mut r = row(cells, [None, None], [false, false]);
                    r.key = format!("m{m}|e{a}|e{b}");
                    r.map = format!("m{m}");
                    r.seat0 = entries[a].id.clone();
                    r.seat1 = entries[b].id.clone();
                    r.score = [Some(cells[0] as f64 / 2.3), Some(cells[1] as f64 / 2.3)];
                    rows.push(r);
                }
            }
        }
        (entries, rows)
    }

    #[test]
    fn the_ranking_does_not_depend_on_the_order_of_the_matches() {
        // Weng-Lin updated match by match gave 6 different rankings over 2000 orders of one
        // league; the fit over all results gives one, to the last bit.
        let (entries, mut rows) = round_robin(5, 5, 1);
        let first = standings(&entries, &rows);
        let mut x: u64 = 12345;
        for _ in 0..200 {
            for i in (1..rows.len()).rev() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                rows.swap(i, (x % (i as u64 + 1)) as usize);
            }
            assert_eq!(standings(&entries, &rows), first);
        }
    }

    #[test]
    fn in_a_round_robin_more_points_rank_higher() {
        // Everyone plays everyone equally often: the fit's ratings are in the order of the points
        // (the likelihood equations say Σⱼ nᵢⱼ P(rᵢ − rⱼ) + rᵢ/(c σ²) = pointsᵢ, increasing in rᵢ).
        for seed in 0..20 {
            let (entries, rows) = round_robin(5, 5, seed);
            let s = standings(&entries, &rows);
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
    fn a_gauntlet_counts_the_candidate_against_each_opponent_and_map() {
        let (entries, rows) = round_robin(3, 2, 5);
        let g = gauntlet(&entries, &rows);
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

    fn row(cells: [u32; 2], tiebreak: [Option<u32>; 2], dq: [bool; 2]) -> MatchRow {
        MatchRow {
            key: String::new(),
            map: String::new(),
            seat0: "a".into(),
            seat1: "b".into(),
            game: 0,
            cells,
            score: [Some(1.0), Some(1.0)],
            tiebreak,
            disqualified: dq,
            violations: [0, 0],
            ended_by: "rounds".into(),
            rounds: 150,
            seconds: 0.0,
        }
    }

    #[test]
    fn the_winner_has_more_cells_then_the_earlier_tie_break() {
        assert_eq!(row([10, 9], [Some(50), Some(20)], [false, false]).winner(), 1);
        assert_eq!(row([9, 10], [Some(5), Some(20)], [false, false]).winner(), -1);
        assert_eq!(row([10, 10], [Some(30), Some(40)], [false, false]).winner(), 1);
        assert_eq!(row([10, 10], [Some(40), Some(30)], [false, false]).winner(), -1);
        assert_eq!(row([10, 10], [Some(40), Some(40)], [false, false]).winner(), 0);
        assert_eq!(row([50, 1], [Some(1), Some(1)], [true, false]).winner(), -1);
        assert_eq!(row([50, 1], [Some(1), Some(1)], [true, true]).winner(), 0);
    }
}
