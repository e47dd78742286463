//! The application around the engine (feature `cli`): the `gbely` command line, and the run
//! set-up it shares with the Python package (naming maps and agents, run folders, results).

pub mod ab;
pub mod check;
pub mod cli;
pub mod entries;
pub mod inspect;
pub mod league;
pub mod manifest;
pub mod requests;
pub mod rerun;
pub mod runs;
pub mod service;
pub mod stand;
pub mod transfer;
pub mod web;
