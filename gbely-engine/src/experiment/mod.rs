//! Experiments with your own agents, in-process: a league of [`Decide`] factories played on all
//! cores, for comparing agents and sweeping a parameter (one entrant per value, each a closure),
//! and an A/B test of two of them ([`ab::ab`]: paired matches and the exact SPRT of `gbely ab`,
//! [`sprt`]). No agent processes, no files, no `cli` feature: a match of two Rust agents on the
//! reference map takes milliseconds.
//!
//! ```
//! use std::sync::Arc;
//! use gbely_engine::experiment::{league, Entrant, LeaguePlan};
//! use gbely_engine::gbely_rules::{Command, Decide, Observation};
//!
//! /// Stays home; `patience` is the parameter swept.
//! struct Idle { patience: u32 }
//! impl Decide for Idle {
//!     fn decide(&mut self, _: &Observation) -> Vec<Command> { Vec::new() }
//! }
//! // A parameter sweep is a league of one agent built with each value (and a built-in agent
//! // to measure them against).
//! let mut entrants: Vec<Entrant> =
//!     (1..=2).map(|p| Entrant::new(format!("idle {p}"), move || Idle { patience: p })).collect();
//! entrants.push(Entrant::builtin("template-rs").expect("a built-in agent"));
//! let map = Arc::new(gbely_engine::gbely_world::reference_map());
//! let plan = LeaguePlan { rounds: 30, ..LeaguePlan::new(vec![map]) };
//! let result = league(&entrants, &plan);
//! assert_eq!(result.games.len(), 6, "each pair plays each map in both seat orders");
//! assert_eq!(result.standings[0].name, "template-rs");
//! assert_eq!(result.standings[0].wins, 4);
//! println!("{result}");
//! ```

pub mod ab;
pub mod sprt;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use gbely_rules::Decide;
use gbely_world::Map;

use crate::game::{play, PlayOptions};
use crate::limits::TimeLimit;
use crate::runner::player::{DecidePlayer, Player};
use crate::session::MatchRecord;
use crate::sim::MatchConfig;

/// Makes a fresh agent for each match.
pub type Factory = Arc<dyn Fn() -> Box<dyn Decide + Send> + Send + Sync>;

/// One entrant of a league: a name and how to make its agent.
#[derive(Clone)]
pub struct Entrant {
    /// The name it is shown under.
    pub name: String,
    /// Makes its agent, once per match.
    pub make: Factory,
    /// The built-in agent it is, if one ([`Entrant::builtin`]).
    builtin: Option<&'static str>,
}

impl std::fmt::Debug for Entrant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Entrant").field("name", &self.name).finish_non_exhaustive()
    }
}

impl Entrant {
    /// A built-in agent (`council`, `council:easy`, `template-rs`, … see
    /// [`crate::builtins::BUILTIN_AGENTS`]); `None` for another name.
    pub fn builtin(name: &str) -> Option<Entrant> {
        let known = crate::builtins::builtin_of(name)?;
        let make: Factory = Arc::new(move || crate::builtins::builtin_agent(known).expect("a built-in agent"));
        Some(Entrant { name: known.to_string(), make, builtin: Some(known) })
    }

    /// An entrant whose agent `make` builds (called once per match, on any thread).
    pub fn new<D: Decide + Send + 'static>(
        name: impl Into<String>,
        make: impl Fn() -> D + Send + Sync + 'static,
    ) -> Entrant {
        Entrant { name: name.into(), make: Arc::new(move || Box::new(make()) as Box<dyn Decide + Send>), builtin: None }
    }
}

/// How a league is played.
#[derive(Clone, Debug)]
pub struct LeaguePlan {
    /// Every pair meets on every map.
    pub maps: Vec<Arc<Map>>,
    /// Matches per pair, map and seat order.
    pub games: u32,
    /// Rounds of each match.
    pub rounds: u32,
    /// Matches at once; 0: one per core.
    pub threads: usize,
    /// Each answer's time limit (SPEC §8), judged after `decide` returns; off by default, so
    /// that results do not depend on the machine.
    pub time_limit: TimeLimit,
}

impl LeaguePlan {
    /// One game per pair, map and seat order, full matches, all cores, no time limit.
    pub fn new(maps: Vec<Arc<Map>>) -> LeaguePlan {
        LeaguePlan { maps, games: 1, rounds: crate::limits::Defaults::ROUNDS, threads: 0, time_limit: TimeLimit::OFF }
    }
}

/// One played match of a league.
#[derive(Clone, Debug, PartialEq)]
pub struct Game {
    /// The entrants in seat 0 and seat 1 (indices into the entrants).
    pub seats: [usize; 2],
    /// The map (an index into the plan's maps).
    pub map: usize,
    /// Which game of the pair, map and seat order (0 … `games` − 1).
    pub game: u32,
    /// Cells each seat held at the end.
    pub cells: [u32; 2],
    /// Shares of the map in percent (`None`: disqualified).
    pub shares: [Option<f64>; 2],
    /// Violations of each seat (SPEC §8).
    pub violations: [usize; 2],
    /// +1 seat 0 won, −1 seat 1 won, 0 a draw (see [`winner`]).
    pub winner: i8,
}

/// An entrant's line in the standings.
#[derive(Clone, Debug, PartialEq)]
pub struct Standing {
    /// Which entrant (an index into the entrants).
    pub entrant: usize,
    /// Its name.
    pub name: String,
    /// Matches played.
    pub played: u32,
    /// Matches won.
    pub wins: u32,
    /// Matches drawn.
    pub draws: u32,
    /// Matches lost.
    pub losses: u32,
    /// A win is 1, a draw ½.
    pub points: f64,
    /// The mean share of the map it held at the end, in percent (0 when disqualified).
    pub mean_share: f64,
}

/// What a league leaves: every match, and the standings (most points first).
#[derive(Clone, Debug, PartialEq)]
pub struct LeagueResult {
    /// In a fixed order (map, pair, seat order, game), whatever order they were played in.
    pub games: Vec<Game>,
    /// The entrants, most points first (then the higher mean share).
    pub standings: Vec<Standing>,
}

/// The winner of a duel (SPEC §10): more cells; on equal cells the earlier tie-break round; a
/// disqualified side has no score and loses (two disqualified: a draw). +1 seat 0, −1 seat 1,
/// 0 a draw.
pub fn winner(cells: [u32; 2], tiebreak: [Option<u32>; 2], disqualified: [bool; 2]) -> i8 {
    match disqualified {
        [true, true] => return 0,
        [true, false] => return -1,
        [false, true] => return 1,
        [false, false] => {}
    }
    match cells[0].cmp(&cells[1]) {
        std::cmp::Ordering::Greater => 1,
        std::cmp::Ordering::Less => -1,
        std::cmp::Ordering::Equal => match (tiebreak[0], tiebreak[1]) {
            (Some(a), Some(b)) if a < b => 1,
            (Some(a), Some(b)) if a > b => -1,
            _ => 0,
        },
    }
}

/// Plays every pair of `entrants` on every map, in both seat orders, `plan.games` times, on
/// `plan.threads` threads (in-process, deterministic: the result does not depend on the
/// number of threads).
///
/// # Panics
/// When a map is not a duel map (two seats).
pub fn league(entrants: &[Entrant], plan: &LeaguePlan) -> LeagueResult {
    assert!(plan.maps.iter().all(|m| m.seats().len() == 2), "a league plays duel maps");
    let mut pairings = Vec::new();
    for map in 0..plan.maps.len() {
        for a in 0..entrants.len() {
            for b in a + 1..entrants.len() {
                for game in 0..plan.games {
                    pairings.push(([a, b], map, game));
                    pairings.push(([b, a], map, game));
                }
            }
        }
    }
    let threads = match plan.threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
    .min(pairings.len().max(1));
    let next = AtomicUsize::new(0);
    let played: Mutex<Vec<Option<Game>>> = Mutex::new(vec![None; pairings.len()]);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(&(seats, map, game)) = pairings.get(k) else { break };
                let rec = play_pair(entrants, seats, &plan.maps[map], plan);
                let g = game_of(&rec, seats, map, game);
                played.lock().unwrap_or_else(|e| e.into_inner())[k] = Some(g);
            });
        }
    });
    let games: Vec<Game> = played.into_inner().unwrap_or_else(|e| e.into_inner()).into_iter().flatten().collect();
    let standings = standings(entrants, &games);
    LeagueResult { games, standings }
}

fn play_pair(entrants: &[Entrant], seats: [usize; 2], map: &Arc<Map>, plan: &LeaguePlan) -> MatchRecord {
    duel(&entrants[seats[0]], &entrants[seats[1]], map, plan.rounds, plan.time_limit)
}

/// One match of `x` (seat 0) against `y` (seat 1), fresh agents from their factories.
pub(crate) fn duel(x: &Entrant, y: &Entrant, map: &Arc<Map>, rounds: u32, limit: TimeLimit) -> MatchRecord {
    let mut names = [x.name.clone(), y.name.clone()];
    if names[0] == names[1] {
        names = [format!("{} (seat 0)", names[0]), format!("{} (seat 1)", names[1])];
    }
    let [n0, n1] = names;
    let player = |e: &Entrant, name: String| {
        let agent = (e.make)();
        match e.builtin {
            Some(b) => DecidePlayer::builtin(name, b, agent),
            None => DecidePlayer::new(name, agent),
        }
        .with_time_limit(limit)
    };
    let (mut a, mut b) = (player(x, n0), player(y, n1));
    let mut players: [&mut dyn Player; 2] = [&mut a, &mut b];
    let opts = PlayOptions { config: MatchConfig { rounds }, record: false };
    play(map.clone(), &mut players, opts, &mut ())
}

fn game_of(rec: &MatchRecord, seats: [usize; 2], map: usize, game: u32) -> Game {
    let o = &rec.outcome;
    Game {
        seats,
        map,
        game,
        cells: [o[0].cells, o[1].cells],
        shares: [o[0].score, o[1].score],
        violations: [rec.violations[0].len(), rec.violations[1].len()],
        winner: winner(
            [o[0].cells, o[1].cells],
            [o[0].tiebreak_round, o[1].tiebreak_round],
            [o[0].disqualified.is_some(), o[1].disqualified.is_some()],
        ),
    }
}

fn standings(entrants: &[Entrant], games: &[Game]) -> Vec<Standing> {
    let mut table: Vec<Standing> = entrants
        .iter()
        .enumerate()
        .map(|(k, e)| Standing {
            entrant: k,
            name: e.name.clone(),
            played: 0,
            wins: 0,
            draws: 0,
            losses: 0,
            points: 0.0,
            mean_share: 0.0,
        })
        .collect();
    for g in games {
        for (side, &e) in g.seats.iter().enumerate() {
            let s = &mut table[e];
            s.played += 1;
            s.mean_share += g.shares[side].unwrap_or(0.0);
            let result = if side == 0 { g.winner } else { -g.winner };
            match result {
                1 => s.wins += 1,
                0 => s.draws += 1,
                _ => s.losses += 1,
            }
        }
    }
    for s in &mut table {
        s.points = s.wins as f64 + s.draws as f64 / 2.0;
        if s.played > 0 {
            s.mean_share /= s.played as f64;
        }
    }
    table.sort_by(|a, b| {
        b.points.total_cmp(&a.points).then(b.mean_share.total_cmp(&a.mean_share)).then(a.entrant.cmp(&b.entrant))
    });
    table
}

/// The standings as a table: rank, name, played, wins, draws, losses, points, mean share.
impl std::fmt::Display for LeagueResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let width = self.standings.iter().map(|s| s.name.chars().count()).max().unwrap_or(5).max(5);
        writeln!(
            f,
            "  {:>4}  {:<width$}  {:>6}  {:>4}  {:>4}  {:>4}  {:>6}  {:>10}",
            "rank", "agent", "played", "won", "drew", "lost", "points", "mean share"
        )?;
        for (k, s) in self.standings.iter().enumerate() {
            writeln!(
                f,
                "  {:>4}  {:<width$}  {:>6}  {:>4}  {:>4}  {:>4}  {:>6.1}  {:>8.2} %",
                k + 1,
                s.name,
                s.played,
                s.wins,
                s.draws,
                s.losses,
                s.points,
                s.mean_share
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entrants() -> Vec<Entrant> {
        ["template-rs", "expander-rs", "council:easy"].map(|n| Entrant::builtin(n).expect("built in")).to_vec()
    }

    #[test]
    fn a_league_does_not_depend_on_the_number_of_threads_and_matches_a_match_played_alone() {
        let map = Arc::new(gbely_world::reference_map());
        let plan = LeaguePlan { rounds: 40, threads: 1, ..LeaguePlan::new(vec![map.clone()]) };
        let one = league(&entrants(), &plan);
        let two = league(&entrants(), &LeaguePlan { threads: 2, ..plan.clone() });
        assert_eq!(one, two);
        // Three pairs, both seat orders, one map, one game.
        assert_eq!(one.games.len(), 6);
        assert_eq!(one.standings.iter().map(|s| s.played).sum::<u32>(), 12);
        assert_eq!(one.standings.iter().map(|s| s.points).sum::<f64>(), 6.0, "one point a game");
        // The second game is expander-rs (seat 0) against template-rs: the same as playing it alone.
        let g = &one.games[1];
        assert_eq!(g.seats, [1, 0]);
        let mut a = crate::builtin_player("expander-rs", "expander-rs").unwrap();
        let mut b = crate::builtin_player("template-rs", "template-rs").unwrap();
        let mut players: [&mut dyn Player; 2] = [a.as_mut(), b.as_mut()];
        let rec = play(map, &mut players, PlayOptions { config: MatchConfig { rounds: 40 }, record: false }, &mut ());
        assert_eq!(g.cells, [rec.outcome[0].cells, rec.outcome[1].cells]);
        assert_eq!(g.shares, [rec.outcome[0].score, rec.outcome[1].score]);
    }

    #[test]
    fn the_winner_has_more_cells_then_the_earlier_tie_break_and_a_disqualified_side_loses() {
        assert_eq!(winner([10, 9], [None, None], [false, false]), 1);
        assert_eq!(winner([9, 10], [None, None], [false, false]), -1);
        assert_eq!(winner([10, 10], [Some(40), Some(41)], [false, false]), 1, "SPEC §10: the earlier round wins");
        assert_eq!(winner([10, 10], [Some(41), Some(40)], [false, false]), -1);
        assert_eq!(winner([10, 10], [Some(40), Some(40)], [false, false]), 0);
        assert_eq!(winner([99, 1], [None, None], [true, false]), -1, "no score when disqualified");
        assert_eq!(winner([1, 1], [None, None], [true, true]), 0);
    }
}
