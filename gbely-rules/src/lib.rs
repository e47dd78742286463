//! # gbely-rules
//!
//! The vocabulary of the Gbely oil battle: the constants of SPEC §12, terrain, cells and their
//! ids, the typed protocol (observation, commands, discard reasons) and the [`Decide`] trait.
//!
//! This crate does no IO, reads no clock and cannot fail.
//!
//! ```
//! use gbely_rules::{Grid, Terrain, constants};
//!
//! let grid = Grid::new(60, 60);
//! let base = grid.parse("P57_02").unwrap();
//! assert_eq!(grid.neighbours(base).len(), 4);
//! assert_eq!(Terrain::Hill.defence_bonus(), 1.5);
//! assert_eq!(constants::ROUNDS, 150);
//! ```

#![warn(missing_docs)]

pub mod constants;
mod grid;
mod lookup;
mod protocol;
mod terrain;
mod vocab;

pub use grid::{format_cell_id, parse_cell_id, Cell, Grid, Neighbours, AGENT_GRID_WIDTH};
pub use lookup::{defence, sure_win, CellLookup, Frontier, Slot};
pub use protocol::{
    round_half_away, round_tenth, Command, Decide, DiscardReason, Drawing, Notes, Observation, OwnCell, Owner, Shape,
    VisibleCell,
};
pub use terrain::Terrain;
pub use vocab::{EndReason, Mode, SeatRole, ViolationKind};
