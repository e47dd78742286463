//! # gbely-engine
//!
//! The Gbely simulation ([`sim::Match`]), the wire protocol, playing matches with in-process or
//! process agents, and replays.
//!
//! ```
//! use std::sync::Arc;
//! use gbely_engine::gbely_rules::{Command, Decide, Observation};
//! use gbely_engine::{gbely_world, play, DecidePlayer, PlayOptions, Player};
//!
//! struct Idle;
//! impl Decide for Idle {
//!     fn decide(&mut self, _: &Observation) -> Vec<Command> { Vec::new() }
//! }
//! let map = Arc::new(gbely_world::reference_map());
//! let (mut a, mut b) = (DecidePlayer::new("idle", Idle), DecidePlayer::new("idle", Idle));
//! let mut players: [&mut dyn Player; 2] = [&mut a, &mut b];
//! let rec = play(map, &mut players, PlayOptions::default(), &mut ());
//! assert_eq!(rec.last_round, 149);
//! assert_eq!(rec.outcome[0].cells, 1);
//! ```

// Every public item of what a Rust agent author gets (`default-features = false`) is documented.
#![warn(missing_docs)]

// The `gbely` command line and its run set-up (feature `cli`) are not a library for agent
// authors; their items are documented where it helps, not by rule.
#[cfg(feature = "cli")]
#[allow(missing_docs)]
pub mod app;
pub mod builtins;
pub mod experiment;
pub mod files;
pub mod game;
pub mod limits;
pub mod recorder;
pub mod replays;
pub mod runner;
pub mod session;
pub mod sim;
pub mod text;
pub mod tournament;
pub mod wire;

pub use sim::{Match, MatchConfig, Mode, SideInput, NEUTRAL};

// What a Rust agent author needs, from the crate's root.
pub use game::{play, play_to, Observer, PlayOptions};
pub use limits::{Defaults, MemoryLimit, TimeLimit};
pub use runner::player::{builtin_player, DecidePlayer, Player, PlayerAnswer};
pub use session::{MatchRecord, Session};
// The crates the engine's API speaks in (`Arc<gbely_world::Map>`, `gbely_rules::Decide`), so
// that one dependency on `gbely-engine` is enough.
pub use gbely_rules;
pub use gbely_world;
