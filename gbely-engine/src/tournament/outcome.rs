//! What a duel leaves, and who won it.

use serde::{Deserialize, Serialize};

use crate::session::MatchRecord;

/// The outcome of a duel, seat 0 then seat 1.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    /// Cells each seat held at the end.
    pub cells: [u32; 2],
    /// Shares of the map in percent (`None`: disqualified, no score).
    pub score: [Option<f64>; 2],
    /// The round each seat reached its final cell count (the tie-break of rules §10).
    pub tiebreak: [Option<u32>; 2],
    /// Whether each seat was disqualified.
    pub disqualified: [bool; 2],
    /// Violations of each seat (SPEC §8).
    pub violations: [u32; 2],
}

impl Outcome {
    /// The first two seats of a match record.
    pub fn of(rec: &MatchRecord) -> Outcome {
        let o = &rec.outcome;
        Outcome {
            cells: [o[0].cells, o[1].cells],
            score: [o[0].score, o[1].score],
            tiebreak: [o[0].tiebreak_round, o[1].tiebreak_round],
            disqualified: [o[0].disqualified.is_some(), o[1].disqualified.is_some()],
            violations: [o[0].violations, o[1].violations],
        }
    }

    /// +1 seat 0 won, −1 seat 1 won, 0 a draw (see [`winner`]).
    pub fn winner(&self) -> i8 {
        winner(self.cells, self.tiebreak, self.disqualified)
    }

    /// A share for the tables: a disqualified side scores 0.
    pub fn share(&self, seat: usize) -> f64 {
        self.score[seat].unwrap_or(0.0)
    }
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

/// A game's score for the side whose result it is: a win 1, a draw ½, a loss 0.
pub fn game_score(result: i8) -> f64 {
    match result {
        1 => 1.0,
        0 => 0.5,
        _ => 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_winner_has_more_cells_then_the_earlier_tie_break_and_a_disqualified_side_loses() {
        assert_eq!(winner([10, 9], [None, None], [false, false]), 1);
        assert_eq!(winner([9, 10], [None, None], [false, false]), -1);
        assert_eq!(winner([10, 9], [Some(50), Some(20)], [false, false]), 1, "cells first");
        assert_eq!(winner([10, 10], [Some(40), Some(41)], [false, false]), 1, "SPEC §10: the earlier round wins");
        assert_eq!(winner([10, 10], [Some(41), Some(40)], [false, false]), -1);
        assert_eq!(winner([10, 10], [Some(40), Some(40)], [false, false]), 0);
        assert_eq!(winner([99, 1], [None, None], [true, false]), -1, "no score when disqualified");
        assert_eq!(winner([1, 1], [None, None], [true, true]), 0);
        assert_eq!([1, 0, -1].map(game_score), [1.0, 0.5, 0.0]);
    }
}
