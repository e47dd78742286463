//! A discarded command said with what its round shows: a "target not owned" (or "source not
//! owned") whose cell the seat held when it decided, but that a seat resolved before it took in
//! the same round. All sides decide on the same state and are resolved one after another (SPEC
//! §4 step 3), so an agent cannot see this coming; the replay knows it from the round's captures
//! in resolution order.

use gbely_rules::{Command, DiscardReason};
use serde_json::Value;

use crate::sim::CaptureEvent;

/// The place of `seat` in round `round`'s resolution order of `seats` seats (0: resolved first):
/// the order starts at seat `round mod n` and goes on cyclically (SPEC §4 step 3; in a duel, seat
/// 0 first on even rounds and seat 1 first on odd ones, which is the same rule for `n = 2`).
pub fn resolution_place(round: u32, seats: usize, seat: u8) -> usize {
    let n = seats.max(1);
    (seat as usize % n + n - round as usize % n) % n
}

/// The cell a discard of `reason` is about: a MOVE's target for "target not owned", the source
/// (or FORTIFY's cell) for "source not owned"; `None` for every other reason.
pub fn discarded_cell(reason: DiscardReason, command: &Command) -> Option<u32> {
    match (reason, *command) {
        (DiscardReason::TargetNotOwned, Command::Move { to, .. }) => Some(to.0),
        (DiscardReason::SourceNotOwned, Command::Move { from, .. } | Command::Attack { from, .. }) => Some(from.0),
        (DiscardReason::SourceNotOwned, Command::Fortify { cell, .. }) => Some(cell.0),
        _ => None,
    }
}

/// The seat that took `cell` from `seat` earlier in round `round`: the first of the round's
/// `captures` (in resolution order) of that cell from `seat` by a seat resolved before `seat`.
/// `None` when no seat did (the cell was never the seat's, or was lost in an earlier round).
pub fn taken_earlier(round: u32, seats: usize, seat: u8, cell: u32, captures: &[CaptureEvent]) -> Option<u8> {
    let place = resolution_place(round, seats, seat);
    captures
        .iter()
        .find(|c| c.cell.0 == cell && c.from == seat && resolution_place(round, seats, c.seat) < place)
        .map(|c| c.seat)
}

/// [`taken_earlier`] for a recorded discard of `seat`'s command `item` (the JSON item of its list).
pub fn taken_by(
    round: u32,
    seats: usize,
    seat: u8,
    reason: DiscardReason,
    item: Option<&Value>,
    grid: &gbely_rules::Grid,
    captures: &[CaptureEvent],
) -> Option<u8> {
    let command = crate::wire::parse_command(item?, grid).ok()?;
    let cell = discarded_cell(reason, &command)?;
    taken_earlier(round, seats, seat, cell, captures)
}

/// "target not owned (taken by seat 1, council, earlier in this round)": the reason in words,
/// with the seat that took the cell where one did (`names`: the seats' names).
pub fn reason_text(reason: DiscardReason, taken_by: Option<u8>, names: &[String]) -> String {
    let words = reason.code().replace('_', " ");
    match taken_by {
        Some(k) => {
            let name = names.get(k as usize).map_or(String::new(), |n| format!(", {},", crate::text::printable(n)));
            format!("{words} (taken by seat {k}{name} earlier in this round)")
        }
        None => words,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gbely_rules::Cell;

    fn cap(seat: u8, cell: u32, from: u8) -> CaptureEvent {
        CaptureEvent { seat, cell: Cell(cell), from }
    }

    #[test]
    fn the_resolution_order_is_that_of_spec_section_4() {
        // A duel: seat 0 first on even rounds, seat 1 first on odd ones.
        assert_eq!((resolution_place(0, 2, 0), resolution_place(0, 2, 1)), (0, 1));
        assert_eq!((resolution_place(7, 2, 0), resolution_place(7, 2, 1)), (1, 0));
        // A final of nine seats, round 10: the order starts at seat 10 mod 9 = 1, so 1, 2, …, 8, 0.
        let order: Vec<usize> = (0..9).map(|s| resolution_place(10, 9, s)).collect();
        assert_eq!(order, [8, 0, 1, 2, 3, 4, 5, 6, 7]);
    }

    #[test]
    fn a_cell_taken_by_a_seat_resolved_earlier_is_named() {
        // Round 3 of a duel: the Council (seat 1) resolves first and takes cell 42 from seat 0;
        // seat 0's MOVE to 42 then finds it not its own.
        let caps = [cap(1, 40, 0), cap(1, 42, 0)];
        assert_eq!(taken_earlier(3, 2, 0, 42, &caps), Some(1));
        // Round 4: seat 0 resolves first, so a capture by seat 1 came after its commands.
        assert_eq!(taken_earlier(4, 2, 0, 42, &caps), None);
        // A cell that was never seat 0's (taken from the neutral side) says nothing.
        assert_eq!(taken_earlier(3, 2, 0, 42, &[cap(1, 42, crate::sim::NEUTRAL)]), None);
        // Final round 10 (order 1, 2, …, 8, 0): seat 5 took it from seat 6 before seat 6's turn;
        // seat 7 resolving after seat 0 cannot have taken anything from seat 0 before it.
        let caps = [cap(5, 9, 6), cap(8, 9, 5)];
        assert_eq!(taken_earlier(10, 9, 6, 9, &caps), Some(5));
        assert_eq!(taken_earlier(10, 9, 0, 9, &[cap(7, 9, 0)]), Some(7));
        assert_eq!(taken_earlier(9, 9, 0, 9, &[cap(7, 9, 0)]), None);
    }

    #[test]
    fn the_reason_names_the_seat() {
        let names = vec!["expander".to_string(), "council".to_string()];
        assert_eq!(
            reason_text(DiscardReason::TargetNotOwned, Some(1), &names),
            "target not owned (taken by seat 1, council, earlier in this round)"
        );
        assert_eq!(reason_text(DiscardReason::NoReadyUnits, None, &names), "no ready units");
    }
}
