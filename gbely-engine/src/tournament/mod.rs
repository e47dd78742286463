//! Tournaments: who meets whom, how the matches are spread over the cores, who won, and what the
//! results say. One core for every way of playing many matches — your own `Decide` factories
//! in-process ([`crate::experiment`]), agent processes with a journal (`gbely league`,
//! `gbely ab`, `gbely.league`, `gbely.ab`), a Ray cluster — each a user of the same pieces:
//!
//! * [`schedule`]: the pairings of a round robin or a gauntlet ([`Pairing`], [`Schedule`]);
//!   an A/B test's pairs are [`ab::AbDesign`]'s;
//! * [`scheduler`]: the one scheduler, [`scheduler::run_in_order`]: tasks on worker threads,
//!   results handed back in task order, never more than a window ahead of what was read;
//! * [`outcome`]: what a duel leaves ([`Outcome`]) and who won it (rules §10, [`winner`]);
//! * [`mod@standings`]: the tables — counts, the Elo maximum-likelihood fit ([`rating`]), the LOS
//!   matrix, per-map tables, a gauntlet's lines — the same for any order of the results;
//! * [`ab`] and [`sprt`]: the A/B test's pairs and scoring, and the exact SPRT;
//! * [`league`]: a league's pairings played over the scheduler.
//!
//! How a match is played is the [`Arena`]'s business: the core never starts an agent, opens a
//! file or reads a clock.
//!
//! ```
//! use gbely_engine::tournament::{pairings, standings, Competitor, Game, Outcome};
//!
//! // Two entrants, one map, both seat orders: "a" wins both.
//! let who = ["a", "b"].map(|n| Competitor { id: n.into(), name: n.into() });
//! let won = |seats| Game {
//!     seats,
//!     map: 0,
//!     game: 0,
//!     outcome: Outcome { cells: if seats[0] == 0 { [30, 10] } else { [10, 30] }, ..Outcome::default() },
//! };
//! let games: Vec<Game> = pairings(2, 1, 1).iter().map(|p| won([p.seat0, p.seat1])).collect();
//! let table = standings(&who, &["gbely".to_string()], &games);
//! assert_eq!(table.standings[0].name, "a");
//! assert_eq!((table.standings[0].wins, table.standings[1].losses), (2, 2));
//! assert!(table.los[0][1] > 0.5);
//! ```

pub mod ab;
pub mod league;
pub mod outcome;
pub mod rating;
pub mod schedule;
pub mod scheduler;
pub mod sprt;
pub mod standings;

pub use outcome::{game_score, winner, Outcome};
pub use schedule::{pairings, schedule_pairings, Pairing, Schedule};
pub use scheduler::{run_in_order, Flow, Workers};
pub use standings::{gauntlet, standings, Competitor, Game, Gauntlet, GauntletLine, MapStandings, Standing, Standings};

/// One match a tournament asks its [`Arena`] to play.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Match {
    /// The task it belongs to: a league's pairing (its place in the list played), an A/B test's
    /// pair number.
    pub index: usize,
    /// Which match of the task: 0 in a league; 0 or 1 in an A/B pair.
    pub leg: usize,
    /// The entrants in seat 0 and seat 1 (indices the arena knows; an A/B test's are
    /// [`ab::A`], [`ab::B`] and [`ab::OPPONENT`]).
    pub seats: [usize; 2],
    /// The map: an index into a league's maps; an A/B test's pair number (the arena picks the
    /// pair's map from it).
    pub map: usize,
    /// Which game of the pairing (0 … games − 1).
    pub game: u32,
}

/// How a tournament's matches are played: in-process `Decide` factories, agent processes through
/// the match service, a Ray worker, a server. Called from the scheduler's worker threads.
pub trait Arena: Sync {
    /// What a played match leaves (at least its [`Outcome`]).
    type Played: Send;
    /// Why a match could not be played; stops the tournament.
    type Error: Send;
    /// Plays one match.
    fn play(&self, m: &Match) -> Result<Self::Played, Self::Error>;
    /// Its outcome; `None` when it was interrupted (it does not count and is played again).
    fn outcome(&self, played: &Self::Played) -> Option<Outcome>;
}
