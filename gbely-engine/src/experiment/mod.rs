//! Experiments with your own agents, in-process: a league of [`Decide`] factories played on all
//! cores, for comparing agents and sweeping a parameter (one entrant per value, each a closure),
//! and an A/B test of two of them ([`ab::ab`]: paired matches and the exact SPRT of `gbely ab`,
//! [`sprt`]). No agent processes, no files, no `cli` feature: a match of two Rust agents on the
//! reference map takes milliseconds. Both are the [`crate::tournament`] core with an arena of
//! factories, so a league here ranks exactly as `gbely league` ranks the same results (the Elo
//! fit, then wins, then mean share).
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
//! assert_eq!(result.table.standings[0].name, "template-rs");
//! assert_eq!(result.table.standings[0].wins, 4);
//! println!("{result}");
//! ```

pub mod ab;
/// The exact statistics of the A/B test (the tournament core's).
pub use crate::tournament::sprt;
pub use crate::tournament::{winner, Game, Standing, Standings};

use std::sync::Arc;

use gbely_rules::Decide;
use gbely_world::Map;

use crate::game::{play, PlayOptions};
use crate::limits::TimeLimit;
use crate::runner::player::{DecidePlayer, Player};
use crate::session::MatchRecord;
use crate::sim::MatchConfig;
use crate::tournament::{self as core, Arena, Competitor, Outcome};

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

/// What a league leaves: every match, and the standings.
#[derive(Clone, Debug, PartialEq)]
pub struct LeagueResult {
    /// In a fixed order (map, pair, game, seat order), whatever order they were played in.
    pub games: Vec<Game>,
    /// The tables of [`crate::tournament::standings()`], as `gbely league` computes them: ranked by
    /// the Elo fit, then wins, then mean share; the pair matrix, LOS and per-map tables.
    pub table: Standings,
}

/// The entrants of an experiment as an arena: fresh agents from their factories, in-process.
pub(crate) struct Factories<'a> {
    pub(crate) entrants: &'a [&'a Entrant],
    /// A match's map is `maps[m.map % maps.len()]`.
    pub(crate) maps: &'a [Arc<Map>],
    pub(crate) rounds: u32,
    pub(crate) limit: TimeLimit,
}

impl Arena for Factories<'_> {
    type Played = Outcome;
    type Error = std::convert::Infallible;

    fn play(&self, m: &core::Match) -> Result<Outcome, Self::Error> {
        let map = &self.maps[m.map % self.maps.len()];
        let [x, y] = m.seats.map(|k| self.entrants[k]);
        Ok(Outcome::of(&duel(x, y, map, self.rounds, self.limit)))
    }

    fn outcome(&self, played: &Outcome) -> Option<Outcome> {
        Some(*played)
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
    let pairings = core::pairings(entrants.len(), plan.maps.len(), plan.games);
    let who: Vec<&Entrant> = entrants.iter().collect();
    let arena = Factories { entrants: &who, maps: &plan.maps, rounds: plan.rounds, limit: plan.time_limit };
    let mut games = Vec::with_capacity(pairings.len());
    core::league::play_league(&arena, &pairings, plan.threads, &|| false, |k, played| {
        let Ok(outcome) = played;
        let p = &pairings[k];
        games.push(Game { seats: [p.seat0, p.seat1], map: p.map, game: p.game, outcome });
        core::Flow::Go
    });
    let table = core::standings(&competitors(entrants), &map_names(&plan.maps), &games);
    LeagueResult { games, table }
}

/// The entrants as the tables know them: by name (the first of two with the same name keeps it,
/// the others get their number).
fn competitors(entrants: &[Entrant]) -> Vec<Competitor> {
    entrants
        .iter()
        .enumerate()
        .map(|(k, e)| {
            let twice = entrants[..k].iter().any(|o| o.name == e.name);
            let id = if twice { format!("{}#{k}", e.name) } else { e.name.clone() };
            Competitor { id, name: e.name.clone() }
        })
        .collect()
}

/// The maps' names for the per-map tables (`1: gbely`, …: maps may share a name).
fn map_names(maps: &[Arc<Map>]) -> Vec<String> {
    maps.iter().enumerate().map(|(k, m)| format!("{}: {}", k + 1, m.name())).collect()
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

/// The standings as a table: rank, name, played, wins, draws, losses, mean share, Elo with its
/// 95 % interval.
impl std::fmt::Display for LeagueResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let rows = &self.table.standings;
        let width = rows.iter().map(|s| s.name.chars().count()).max().unwrap_or(5).max(5);
        writeln!(
            f,
            "  {:>4}  {:<width$}  {:>6}  {:>4}  {:>4}  {:>4}  {:>10}  {:>17}",
            "rank", "agent", "played", "won", "drew", "lost", "mean share", "Elo [95 %]"
        )?;
        for s in rows {
            let half = 1.96 * s.uncertainty;
            let elo = format!("{:+.0} [{:+.0}, {:+.0}]", s.rating + 0.0, s.rating - half + 0.0, s.rating + half + 0.0);
            writeln!(
                f,
                "  {:>4}  {:<width$}  {:>6}  {:>4}  {:>4}  {:>4}  {:>8.2} %  {:>17}",
                s.rank, s.name, s.played, s.wins, s.draws, s.losses, s.mean_share, elo
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
        assert_eq!(one.table.standings.iter().map(|s| s.played).sum::<u32>(), 12);
        assert_eq!(one.table.standings.iter().map(|s| s.points()).sum::<f64>(), 6.0, "one point a game");
        // The second game is expander-rs (seat 0) against template-rs: the same as playing it alone.
        let g = &one.games[1];
        assert_eq!(g.seats, [1, 0]);
        let mut a = crate::builtin_player("expander-rs", "expander-rs").unwrap();
        let mut b = crate::builtin_player("template-rs", "template-rs").unwrap();
        let mut players: [&mut dyn Player; 2] = [a.as_mut(), b.as_mut()];
        let rec = play(map, &mut players, PlayOptions { config: MatchConfig { rounds: 40 }, record: false }, &mut ());
        assert_eq!(g.outcome.cells, [rec.outcome[0].cells, rec.outcome[1].cells]);
        assert_eq!(g.outcome.score, [rec.outcome[0].score, rec.outcome[1].score]);
    }
}
