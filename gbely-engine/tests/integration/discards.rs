//! Every reason a command is discarded (SPEC §6.2), each on its own. A discarded command costs
//! nothing, changes nothing, and the rest of the list is resolved.

use gbely_engine::sim::NEUTRAL;
use gbely_rules::DiscardReason;
use serde_json::{json, Value};

use crate::common::{attack, fortify, mv, Lab};

const FIELD: [&str; 3] = ["B....", "..^~.", "....B"];
const SEATS: [&str; 2] = ["P00_00", "P02_04"];

/// Seat 0 owns P00_00 (10 units) and P00_01 (5); P01_00 is neutral with 3; seat 1 owns P02_04.
/// Resolves `bad` and then a valid MOVE, and checks: exactly one discard with `reason`, nothing
/// changed by it, and the valid command after it was applied.
fn check(bad: Value, reason: DiscardReason) {
    let mut lab = Lab::new(&FIELD, &SEATS);
    lab.set("P00_00", 0, 10.0, 0.0);
    lab.set("P00_01", 0, 5.0, 0.0);
    lab.set("P01_00", NEUTRAL, 3.0, 0.0);
    let before: Vec<(u8, f64, f64)> =
        lab.m.map().grid().cells().map(|c| (lab.m.owner(c), lab.m.units(c), lab.m.fortification(c))).collect();
    let report = lab.resolve(&[json!([bad, mv("P00_00", "P00_01", 1.0)]), json!([])]);
    assert_eq!(report.discarded.len(), 1, "{:?}", report.discarded);
    assert_eq!(report.discarded[0].reason, reason);
    assert_eq!(report.discarded[0].index, 0);
    assert_eq!(report.discarded[0].seat, 0);
    let after: Vec<(u8, f64, f64)> =
        lab.m.map().grid().cells().map(|c| (lab.m.owner(c), lab.m.units(c), lab.m.fortification(c))).collect();
    let changed: Vec<usize> = (0..before.len()).filter(|&i| before[i] != after[i]).collect();
    assert_eq!(changed, [0, 1], "only the valid MOVE's cells change");
    assert_eq!(lab.units("P00_00"), 9.0);
    assert_eq!(lab.units("P00_01"), 6.0);
}

#[test]
fn an_item_that_is_not_an_object() {
    check(json!(5), DiscardReason::NotAnObject);
    check(json!("MOVE"), DiscardReason::NotAnObject);
    check(json!([1, 2]), DiscardReason::NotAnObject);
}

#[test]
fn an_unknown_command_type() {
    check(json!({"typ": "move", "z": "P00_00", "na": "P00_01", "pocet": 1}), DiscardReason::UnknownType);
    check(json!({"typ": "SPY", "pole": "P00_00"}), DiscardReason::UnknownType);
}

#[test]
fn a_missing_field() {
    check(json!({"z": "P00_00", "na": "P00_01", "pocet": 1}), DiscardReason::MissingField);
    check(json!({"typ": "MOVE", "z": "P00_00", "pocet": 1}), DiscardReason::MissingField);
    check(json!({"typ": "FORTIFY", "pole": "P00_00"}), DiscardReason::MissingField);
}

#[test]
fn a_field_of_the_wrong_type() {
    check(json!({"typ": "MOVE", "z": "P00_00", "na": "P00_01", "pocet": "5"}), DiscardReason::WrongFieldType);
    check(json!({"typ": "ATTACK", "z": 17, "na": "P01_00", "pocet": 5}), DiscardReason::WrongFieldType);
    check(json!({"typ": 1, "pole": "P00_00", "investicia": 1}), DiscardReason::WrongFieldType);
}

#[test]
fn an_id_that_is_not_a_cell_of_the_map() {
    check(mv("P00_00", "P09_09", 1.0), DiscardReason::UnknownCell);
    check(attack("P0_0", "P01_00", 1.0), DiscardReason::UnknownCell);
    check(fortify("X", 1.0), DiscardReason::UnknownCell);
}

#[test]
fn an_amount_that_is_not_a_finite_number_above_zero() {
    check(mv("P00_00", "P00_01", 0.0), DiscardReason::InvalidAmount);
    check(mv("P00_00", "P00_01", -3.0), DiscardReason::InvalidAmount);
    let huge: Value = serde_json::from_str(r#"{"typ":"FORTIFY","pole":"P00_00","investicia":1e400}"#).unwrap();
    check(huge, DiscardReason::InvalidAmount);
    let digits = format!(r#"{{"typ":"ATTACK","z":"P00_00","na":"P01_00","pocet":{}}}"#, "9".repeat(400));
    check(serde_json::from_str(&digits).unwrap(), DiscardReason::InvalidAmount);
}

#[test]
fn a_source_the_side_does_not_own() {
    check(mv("P01_00", "P00_00", 1.0), DiscardReason::SourceNotOwned);
    check(attack("P02_04", "P02_03", 1.0), DiscardReason::SourceNotOwned);
    check(fortify("P01_00", 1.0), DiscardReason::SourceNotOwned);
}

#[test]
fn a_move_into_a_cell_the_side_does_not_own() {
    check(mv("P00_00", "P01_00", 1.0), DiscardReason::TargetNotOwned);
}

#[test]
fn cells_that_are_not_neighbours() {
    check(mv("P00_00", "P00_00", 1.0), DiscardReason::NotAdjacent);
    check(attack("P00_00", "P01_01", 1.0), DiscardReason::NotAdjacent);
    check(attack("P00_01", "P02_04", 1.0), DiscardReason::NotAdjacent);
}

#[test]
fn an_attack_on_an_own_cell() {
    check(attack("P00_00", "P00_01", 1.0), DiscardReason::TargetOwnCell);
}

#[test]
fn a_source_with_no_ready_units() {
    let mut lab = Lab::new(&FIELD, &SEATS);
    lab.set("P00_00", 0, 0.0, 0.0);
    lab.set("P00_01", 0, 5.0, 0.0);
    let report = lab.resolve(&[json!([mv("P00_00", "P00_01", 1.0), mv("P00_01", "P00_00", 2.0)]), json!([])]);
    assert_eq!(report.discarded.len(), 1);
    assert_eq!(report.discarded[0].reason, DiscardReason::NoReadyUnits);
    assert_eq!(lab.units("P00_00"), 2.0);
}

#[test]
fn an_attack_on_a_cell_captured_earlier_in_the_same_step() {
    let mut lab = Lab::new(&FIELD, &SEATS);
    lab.set("P00_00", 0, 10.0, 0.0);
    lab.set("P00_01", 0, 5.0, 0.0);
    lab.set("P01_00", NEUTRAL, 1.0, 0.0);
    lab.set("P01_01", NEUTRAL, 9.0, 0.0);
    let report = lab.resolve(&[json!([attack("P00_00", "P01_00", 5.0), attack("P00_00", "P01_00", 5.0)]), json!([])]);
    assert_eq!(report.discarded[0].reason, DiscardReason::TargetOwnCell);
    assert_eq!(report.discarded[0].index, 1);
    assert_eq!(lab.units("P00_00"), 5.0, "the second attack cost nothing");
}

/// Final mode: two finalists and the Council on a 5×3 field.
#[test]
fn an_attack_on_another_finalist_costs_nothing() {
    let rows = ["B...B", ".....", "..B.."];
    let seats = ["P00_00", "P00_04", "P02_02"];
    let mut lab = Lab::new(&rows, &seats);
    lab.set("P00_01", 0, 10.0, 0.0);
    lab.set("P00_02", 1, 1.0, 0.0);
    lab.set("P01_01", 2, 1.0, 0.0);
    let report = lab.resolve(&[
        json!([attack("P00_01", "P00_02", 10.0), attack("P00_01", "P01_01", 4.0)]),
        json!([]),
        json!([]),
    ]);
    assert_eq!(report.discarded.len(), 1);
    assert_eq!(report.discarded[0].reason, DiscardReason::TargetFinalist);
    assert_eq!(lab.owner("P00_02"), 1);
    // The Council's cell can be attacked: 4 > 1 takes it, 3 left; 6 stay on the source.
    assert_eq!(lab.owner("P01_01"), 0);
    assert_eq!(lab.units("P01_01"), 3.0);
    assert_eq!(lab.units("P00_01"), 6.0);
}

#[test]
fn the_council_may_attack_finalists() {
    let rows = ["B...B", ".....", "..B.."];
    let seats = ["P00_00", "P00_04", "P02_02"];
    let mut lab = Lab::new(&rows, &seats);
    lab.set("P01_02", 2, 10.0, 0.0);
    lab.set("P00_02", 1, 1.0, 0.0);
    let report = lab.resolve(&[json!([]), json!([]), json!([attack("P01_02", "P00_02", 5.0)])]);
    assert!(report.discarded.is_empty());
    assert_eq!(lab.owner("P00_02"), 2);
}

#[test]
fn typed_commands_are_checked_like_wire_commands() {
    use gbely_engine::sim::{Order, RoundReport, SideInput};
    use gbely_rules::{Cell, Command};
    let mut lab = Lab::new(&FIELD, &SEATS);
    let orders: Vec<Order> = vec![
        Ok(Command::Move { from: Cell(0), to: Cell(1), amount: f64::NAN }),
        Ok(Command::Fortify { cell: Cell(0), amount: -1.0 }),
        Ok(Command::Attack { from: Cell(0), to: Cell(999), amount: 1.0 }),
        // The field has 15 cells, 0…14: cell 15 is the first one off the map; 0 is not above 0.
        Ok(Command::Move { from: Cell(0), to: Cell(15), amount: 1.0 }),
        Ok(Command::Attack { from: Cell(15), to: Cell(14), amount: 1.0 }),
        Ok(Command::Fortify { cell: Cell(15), amount: 1.0 }),
        Ok(Command::Fortify { cell: Cell(0), amount: 0.0 }),
    ];
    let mut report = RoundReport::default();
    lab.m.resolve_round(&[SideInput::Orders(orders), SideInput::Orders(vec![])], &mut report);
    let reasons: Vec<_> = report.discarded.iter().map(|d| d.reason).collect();
    use DiscardReason::{InvalidAmount, UnknownCell};
    assert_eq!(
        reasons,
        [InvalidAmount, InvalidAmount, UnknownCell, UnknownCell, UnknownCell, UnknownCell, InvalidAmount]
    );
    assert_eq!(lab.units("P00_00"), 18.0);
}
