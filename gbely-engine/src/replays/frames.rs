//! The state of any round, rebuilt from the map, production and the recorded changes.

use std::sync::Arc;

use gbely_rules::Cell;
use gbely_world::replay::{CellChange, Turn};
use gbely_world::{Map, Replay};

use crate::sim::{Match, MatchConfig};

/// The state of every cell at one moment.
#[derive(Clone, Debug, PartialEq)]
pub struct Frame {
    /// Per cell, row-major: the owning seat, or -1 for neutral (as replays write it).
    pub owner: Vec<i8>,
    /// Per cell, row-major: units, unrounded.
    pub units: Vec<f64>,
    /// Per cell, row-major: fortification, unrounded.
    pub fortification: Vec<f64>,
}

impl Frame {
    /// The state of a match now (as a replay writes it: [`Match::cell_states`]).
    pub fn of(m: &Match) -> Frame {
        let s = m.cell_states();
        Frame { owner: s.owner, units: s.units, fortification: s.fortification }
    }

    /// The starting state of a map.
    pub fn start(map: &Map) -> Frame {
        let m = Match::new(Arc::new(map.clone()), MatchConfig::default());
        Frame::of(&m)
    }

    /// Production of SPEC §4 step 1, exactly as the engine does it.
    pub fn produce(&mut self, map: &Map) {
        for i in 0..self.owner.len() {
            if self.owner[i] >= 0 {
                let c = Cell(i as u32);
                self.units[i] = crate::sim::produced(self.units[i], map.terrain(c).production(), map.is_base(c));
            }
        }
    }

    /// From the state at the end of the round before `turn` to the state at its end, as the file
    /// says: production, then the turn's changes.
    pub fn step(&mut self, map: &Map, turn: &Turn) -> Result<(), String> {
        self.produce(map);
        self.apply(&turn.changes, map.seats().len(), turn.round)
    }

    /// The turn's changes. [`Replay::check`] has seen that they fit the map; a replay built or
    /// changed in code gets an error here rather than a panic.
    fn apply(&mut self, changes: &[CellChange], seats: usize, round: u32) -> Result<(), String> {
        for &CellChange(cell, owner, units, fort) in changes {
            let i = cell as usize;
            if i >= self.owner.len() {
                return Err(format!("round {round}: a change for cell #{cell}, which is not on the map"));
            }
            if owner < -1 || owner as i64 >= seats as i64 {
                return Err(format!("round {round}: cell #{cell} given to seat {owner}, which does not exist"));
            }
            self.owner[i] = owner;
            self.units[i] = units;
            self.fortification[i] = fort;
        }
        Ok(())
    }

    /// How many cells `seat` owns (-1: how many are neutral).
    pub fn cells_of(&self, seat: i8) -> usize {
        self.owner.iter().filter(|&&o| o == seat).count()
    }
}

/// Most cell states [`frames`] holds at once (`(turns + 1) × cells`): about 1 GiB.
pub const MAX_FRAME_CELLS: usize = 64 << 20;

/// The state at the end of each round as the file says (index 0 = the start, `r + 1` = the end
/// of round `r`), rebuilt from production and the recorded changes.
///
/// Every frame at once: for short replays and tests. A reader that goes round by round keeps one
/// [`Frame`] and [`Frame::step`]s it; one round is [`frame_after`].
pub fn frames(replay: &Replay, map: &Map) -> Result<Vec<Frame>, String> {
    super::within_budget(replay, map, super::Work::Frames)?;
    let replay = &*super::expanded(replay)?;
    let wanted = (replay.turns.len() + 1).saturating_mul(map.len());
    if wanted > MAX_FRAME_CELLS {
        return Err(format!(
            "{} rounds of {} cells are too many to hold at once; read them round by round",
            replay.turns.len(),
            map.len()
        ));
    }
    let mut f = Frame::start(map);
    let mut out = Vec::with_capacity(replay.turns.len() + 1);
    out.push(f.clone());
    for t in &replay.turns {
        f.step(map, t)?;
        out.push(f.clone());
    }
    Ok(out)
}

/// The state at the end of round `round` as the file says, rebuilt from the start.
pub fn frame_after(replay: &Replay, map: &Map, round: u32) -> Result<Frame, String> {
    let replay = &*super::expanded(replay)?;
    let turns = replay
        .turns
        .get(..=round as usize)
        .ok_or_else(|| format!("round {round} was not played: the replay has {} rounds", replay.turns.len()))?;
    let mut f = Frame::start(map);
    for t in turns {
        f.step(map, t)?;
    }
    Ok(f)
}
