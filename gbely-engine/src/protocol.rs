//! The wire protocol (SPEC §5, §6): the observation as one JSON line, the answer parsed command
//! by command. A malformed command is one discarded command; only an answer that is not JSON,
//! or not an object with a `prikazy` list (or a list), is unreadable (a violation, SPEC §8).

use std::fmt::Write;

use gbely_rules::{Command, DiscardReason, Grid, Observation};
use serde_json::{Map as JsonMap, Value};

use crate::sim::Order;

/// Writes a number rounded to one decimal with a decimal point (`14.0`, `0.2`).
fn push_tenths(out: &mut String, x: f64) {
    // Values in an observation are already `round_tenth`ed; print them from integer tenths.
    let t = (x * 10.0).round();
    if t.is_finite() && t.abs() < 9.0e15 {
        let t = t as i64;
        if t < 0 {
            out.push('-');
        }
        let a = t.unsigned_abs();
        let _ = write!(out, "{}.{}", a / 10, a % 10);
    } else {
        let _ = write!(out, "{x:.1}");
    }
}

/// Writes the observation as one line of JSON with the exact wire names (SPEC §5).
pub fn write_observation(obs: &Observation, grid: &Grid, out: &mut String) {
    out.clear();
    let _ = write!(out, "{{\"kolo\":{},\"moja_zakladna\":\"", obs.round);
    grid.write_id(obs.base, out);
    out.push_str("\",\"moje_pola\":[");
    for (k, c) in obs.own.iter().enumerate() {
        if k > 0 {
            out.push(',');
        }
        out.push_str("{\"id\":\"");
        grid.write_id(c.cell, out);
        out.push_str("\",\"typ\":\"");
        out.push_str(c.terrain.wire());
        out.push_str("\",\"jednotky\":");
        push_tenths(out, c.units);
        out.push_str(",\"opevnenie\":");
        push_tenths(out, c.fortification);
        out.push_str(",\"susedia\":[");
        for (j, n) in c.neighbours.iter().enumerate() {
            if j > 0 {
                out.push(',');
            }
            out.push('"');
            grid.write_id(n, out);
            out.push('"');
        }
        out.push_str("]}");
    }
    out.push_str("],\"viditelne_susedne_pola\":[");
    for (k, v) in obs.visible.iter().enumerate() {
        if k > 0 {
            out.push(',');
        }
        out.push_str("{\"id\":\"");
        grid.write_id(v.cell, out);
        out.push_str("\",\"vlastnik\":\"");
        out.push_str(v.owner.wire());
        out.push_str("\",\"posadka\":");
        push_tenths(out, v.garrison);
        out.push_str(",\"opevnenie\":");
        push_tenths(out, v.fortification);
        out.push_str(",\"typ\":\"");
        out.push_str(v.terrain.wire());
        out.push_str("\"}");
    }
    out.push_str("]}");
}

/// The observation as a JSON string.
pub fn observation_json(obs: &Observation, grid: &Grid) -> String {
    let mut s = String::with_capacity(64 + obs.own.len() * 110 + obs.visible.len() * 80);
    write_observation(obs, grid, &mut s);
    s
}

/// Why an answer as a whole could not be read (a violation).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Unreadable {
    #[error("not JSON: {0}")]
    NotJson(String),
    #[error("not a JSON object with a `prikazy` list, nor a list")]
    NotCommands,
}

/// Reads an answer: `{"prikazy": [...]}` or a bare list. Unknown top-level keys are ignored.
pub fn parse_answer(text: &str) -> Result<Vec<Value>, Unreadable> {
    let v: Value = serde_json::from_str(text).map_err(|e| Unreadable::NotJson(e.to_string()))?;
    answer_from_value(v)
}

/// The command list of an already parsed answer.
pub fn answer_from_value(v: Value) -> Result<Vec<Value>, Unreadable> {
    match v {
        Value::Array(list) => Ok(list),
        Value::Object(mut map) => match map.remove("prikazy") {
            Some(Value::Array(list)) => Ok(list),
            _ => Err(Unreadable::NotCommands),
        },
        _ => Err(Unreadable::NotCommands),
    }
}

fn field<'a>(obj: &'a JsonMap<String, Value>, key: &str) -> Result<&'a Value, DiscardReason> {
    obj.get(key).ok_or(DiscardReason::MissingField)
}

fn cell_field(obj: &JsonMap<String, Value>, key: &str, grid: &Grid) -> Result<gbely_rules::Cell, DiscardReason> {
    match field(obj, key)? {
        Value::String(s) => grid.parse(s).ok_or(DiscardReason::UnknownCell),
        _ => Err(DiscardReason::WrongFieldType),
    }
}

fn amount_field(obj: &JsonMap<String, Value>, key: &str) -> Result<f64, DiscardReason> {
    match field(obj, key)? {
        // With arbitrary precision, `1e400` is a Number whose f64 is not finite: discarded here.
        Value::Number(n) => match n.as_f64() {
            Some(x) if x.is_finite() && x > 0.0 => Ok(x),
            _ => Err(DiscardReason::InvalidAmount),
        },
        _ => Err(DiscardReason::WrongFieldType),
    }
}

/// A missing or mistyped field outranks an unknown cell or a bad amount (reported in field order).
fn structural<const N: usize>(errors: [Option<DiscardReason>; N]) -> Result<(), DiscardReason> {
    match errors
        .into_iter()
        .flatten()
        .find(|r| matches!(r, DiscardReason::MissingField | DiscardReason::WrongFieldType))
    {
        Some(r) => Err(r),
        None => Ok(()),
    }
}

/// Parses one command of the list. Field checks come in the order: type, cells, amount.
pub fn parse_command(v: &Value, grid: &Grid) -> Order {
    let Value::Object(obj) = v else {
        return Err(DiscardReason::NotAnObject);
    };
    let typ = match field(obj, "typ")? {
        Value::String(s) => s.as_str(),
        _ => return Err(DiscardReason::WrongFieldType),
    };
    match typ {
        "MOVE" | "ATTACK" => {
            let from = cell_field(obj, "z", grid);
            let to = cell_field(obj, "na", grid);
            let amount = amount_field(obj, "pocet");
            structural([from.err(), to.err(), amount.err()])?;
            let (from, to, amount) = (from?, to?, amount?);
            Ok(if typ == "MOVE" { Command::Move { from, to, amount } } else { Command::Attack { from, to, amount } })
        }
        "FORTIFY" => {
            let cell = cell_field(obj, "pole", grid);
            let amount = amount_field(obj, "investicia");
            structural([cell.err(), amount.err()])?;
            Ok(Command::Fortify { cell: cell?, amount: amount? })
        }
        _ => Err(DiscardReason::UnknownType),
    }
}

/// Parses every command of an answer.
pub fn parse_commands(list: &[Value], grid: &Grid) -> Vec<Order> {
    list.iter().map(|v| parse_command(v, grid)).collect()
}

fn amount_value(x: f64) -> Value {
    // Whole amounts are written as integers (`5`), others as the shortest round-trip decimal.
    if x.fract() == 0.0 && x.abs() < 9.0e15 {
        Value::from(x as i64)
    } else {
        serde_json::Number::from_f64(x).map(Value::Number).unwrap_or(Value::Null)
    }
}

/// The wire form of a typed command (for replays of in-process agents).
pub fn command_to_value(cmd: &Command, grid: &Grid) -> Value {
    let mut m = JsonMap::new();
    m.insert("typ".into(), Value::from(cmd.wire_type()));
    let id = |c: gbely_rules::Cell| {
        if c.index() < grid.len() {
            Value::from(grid.id(c))
        } else {
            Value::from(format!("#{}", c.0))
        }
    };
    match *cmd {
        Command::Move { from, to, amount } | Command::Attack { from, to, amount } => {
            m.insert("z".into(), id(from));
            m.insert("na".into(), id(to));
            m.insert("pocet".into(), amount_value(amount));
        }
        Command::Fortify { cell, amount } => {
            m.insert("pole".into(), id(cell));
            m.insert("investicia".into(), amount_value(amount));
        }
    }
    Value::Object(m)
}

/// Parses an observation back from its JSON (for tools and tests; agents read it themselves).
pub fn parse_observation(text: &str, grid: &Grid) -> Option<Observation> {
    use gbely_rules::{Neighbours, OwnCell, Owner, Terrain, VisibleCell};
    let v: Value = serde_json::from_str(text).ok()?;
    let num = |v: &Value| v.as_f64();
    let mut obs = Observation {
        round: v.get("kolo")?.as_u64()? as u32,
        base: grid.parse(v.get("moja_zakladna")?.as_str()?)?,
        ..Observation::default()
    };
    for c in v.get("moje_pola")?.as_array()? {
        let cell = grid.parse(c.get("id")?.as_str()?)?;
        let listed: Vec<gbely_rules::Cell> = c
            .get("susedia")?
            .as_array()?
            .iter()
            .map(|n| n.as_str().and_then(|s| grid.parse(s)))
            .collect::<Option<_>>()?;
        let neighbours: Neighbours = *grid.neighbours(cell);
        if neighbours.as_slice() != listed.as_slice() {
            return None;
        }
        obs.own.push(OwnCell {
            cell,
            terrain: Terrain::from_wire(c.get("typ")?.as_str()?)?,
            units: num(c.get("jednotky")?)?,
            fortification: num(c.get("opevnenie")?)?,
            neighbours,
        });
    }
    for c in v.get("viditelne_susedne_pola")?.as_array()? {
        obs.visible.push(VisibleCell {
            cell: grid.parse(c.get("id")?.as_str()?)?,
            owner: Owner::from_wire(c.get("vlastnik")?.as_str()?)?,
            garrison: num(c.get("posadka")?)?,
            fortification: num(c.get("opevnenie")?)?,
            terrain: Terrain::from_wire(c.get("typ")?.as_str()?)?,
        });
    }
    Some(obs)
}
