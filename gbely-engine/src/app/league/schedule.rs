//! The league's maps ([`league_maps`]); who meets whom on them is the tournament core's
//! ([`crate::tournament::schedule`], re-exported here).

use std::sync::Arc;

pub use crate::tournament::schedule::{pairings, schedule_pairings, Pairing, Schedule};

use super::play::LeagueMap;
use crate::app::entries::LeagueError;
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
