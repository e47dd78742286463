//! The wire protocol (SPEC §5, §6): the observation as one JSON line, the answer parsed command
//! by command. A malformed command is one discarded command; only an answer that is not JSON,
//! or not an object with a `prikazy` list (or a list), is unreadable (a violation, SPEC §8).

use gbely_rules::{format_cell_id, parse_cell_id, Cell, Command, DiscardReason, Grid, Observation};
use serde_json::{Map as JsonMap, Value};

use crate::sim::Order;

/// Appends a number rounded to one decimal with a decimal point (`14.0`, `0.2`).
fn put_tenths(out: &mut Vec<u8>, x: f64) {
    // Values in an observation are already `round_tenth`ed; print them from integer tenths.
    let t = gbely_rules::round_half_away(x * 10.0);
    if t.is_finite() && t.abs() < 9.0e15 {
        let t = t as i64;
        if t < 0 {
            out.push(b'-');
        }
        let a = t.unsigned_abs();
        put_uint(out, a / 10);
        out.extend_from_slice(&[b'.', b'0' + (a % 10) as u8]);
    } else {
        out.extend_from_slice(format!("{x:.1}").as_bytes());
    }
}

/// Decimal digits of `v`, without the formatting machinery.
fn put_uint(out: &mut Vec<u8>, mut v: u64) {
    let mut buf = [0u8; 20];
    let mut n = buf.len();
    loop {
        n -= 1;
        buf[n] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[n..]);
}

/// `"P12_07"` with its quotes; rows and columns of 100+ take more digits.
#[inline]
fn put_id(out: &mut Vec<u8>, grid: &Grid, c: gbely_rules::Cell) {
    let (r, col) = grid.row_col(c);
    if r < 100 && col < 100 {
        let (r, col) = (r as u8, col as u8);
        out.extend_from_slice(&[
            b'"',
            b'P',
            b'0' + r / 10,
            b'0' + r % 10,
            b'_',
            b'0' + col / 10,
            b'0' + col % 10,
            b'"',
        ]);
    } else {
        out.push(b'"');
        let mut s = String::new();
        grid.write_id(c, &mut s);
        out.extend_from_slice(s.as_bytes());
        out.push(b'"');
    }
}

/// Writes the observation as one line of JSON with the exact wire names (SPEC §5).
pub fn write_observation(obs: &Observation, grid: &Grid, out: &mut Vec<u8>) {
    out.clear();
    out.reserve(64 + obs.own.len() * 112 + obs.visible.len() * 80);
    out.extend_from_slice(b"{\"kolo\":");
    put_uint(out, obs.round as u64);
    out.extend_from_slice(b",\"moja_zakladna\":");
    put_id(out, grid, obs.base);
    out.extend_from_slice(b",\"moje_pola\":[");
    for (k, c) in obs.own.iter().enumerate() {
        if k > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b"{\"id\":");
        put_id(out, grid, c.cell);
        out.extend_from_slice(b",\"typ\":\"");
        out.extend_from_slice(c.terrain.wire().as_bytes());
        out.extend_from_slice(b"\",\"jednotky\":");
        put_tenths(out, c.units);
        out.extend_from_slice(b",\"opevnenie\":");
        put_tenths(out, c.fortification);
        out.extend_from_slice(b",\"susedia\":[");
        for (j, n) in c.neighbours.iter().enumerate() {
            if j > 0 {
                out.push(b',');
            }
            put_id(out, grid, n);
        }
        out.extend_from_slice(b"]}");
    }
    out.extend_from_slice(b"],\"viditelne_susedne_pola\":[");
    for (k, v) in obs.visible.iter().enumerate() {
        if k > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b"{\"id\":");
        put_id(out, grid, v.cell);
        out.extend_from_slice(b",\"vlastnik\":\"");
        out.extend_from_slice(v.owner.wire().as_bytes());
        out.extend_from_slice(b"\",\"posadka\":");
        put_tenths(out, v.garrison);
        out.extend_from_slice(b",\"opevnenie\":");
        put_tenths(out, v.fortification);
        out.extend_from_slice(b",\"typ\":\"");
        out.extend_from_slice(v.terrain.wire().as_bytes());
        out.extend_from_slice(b"\"}");
    }
    out.extend_from_slice(b"]}");
}

/// The observation as a JSON string.
pub fn observation_json(obs: &Observation, grid: &Grid) -> String {
    let mut v = Vec::new();
    write_observation(obs, grid, &mut v);
    String::from_utf8(v).expect("the writer emits ASCII")
}

/// Why an answer as a whole could not be read (a violation).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Unreadable {
    /// The text is not JSON (with the parser's message).
    #[error("not JSON: {0}")]
    NotJson(String),
    /// JSON, but neither `{"prikazy": [...]}` nor a bare list.
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

/// The notes of an answer (its `debug` key, which the rules ignore; see [`gbely_rules::Notes`]):
/// a string is the round's text; an object may have `text` and `log` (joined as the text) and
/// `cells`, an object from cell ids to notes (ids not on the map are left out; a note that is
/// not a string is written as JSON). `None` when there is no `debug` key or nothing in it.
pub fn notes_from_value(v: &Value, ids: &impl CellIds) -> Option<gbely_rules::Notes> {
    let debug = v.as_object()?.get("debug")?;
    let text_of = |v: &Value| match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    };
    let mut notes = gbely_rules::Notes::default();
    match debug {
        Value::Object(d) => {
            let parts: Vec<String> =
                ["text", "log"].iter().filter_map(|k| d.get(*k).map(text_of)).filter(|t| !t.is_empty()).collect();
            notes.text = parts.join("\n");
            if let Some(Value::Object(cells)) = d.get("cells") {
                for (id, note) in cells.iter().take(gbely_rules::Notes::MAX_CELLS + 1) {
                    if let Some(c) = ids.cell(id) {
                        notes.cells.push((c, text_of(note)));
                    }
                }
            }
        }
        other => notes.text = text_of(other),
    }
    (!notes.is_empty()).then(|| notes.bounded())
}

/// The `debug` key of a wire answer for typed notes (served agents).
pub fn notes_to_value(notes: &gbely_rules::Notes, ids: &impl CellIds) -> Value {
    let mut d = JsonMap::new();
    if !notes.text.is_empty() {
        d.insert("text".into(), Value::from(notes.text.as_str()));
    }
    if !notes.cells.is_empty() {
        let cells: JsonMap<String, Value> =
            notes.cells.iter().map(|(c, t)| (ids.id(*c), Value::from(t.as_str()))).collect();
        d.insert("cells".into(), Value::Object(cells));
    }
    Value::Object(d)
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

/// How cell ids become cells and back. The engine uses the map's own [`Grid`]; a served agent,
/// which is not told the map's size (SPEC §5), uses a [`VirtualGrid`]. Both number cells
/// row-major (`row × width + column`), so cells sort the same way under either.
pub trait CellIds {
    /// The cell of an id (`P57_02`); `None` when it is not one, or not on the grid.
    fn cell(&self, id: &str) -> Option<Cell>;
    /// The id of a cell.
    fn id(&self, c: Cell) -> String;
}

impl CellIds for Grid {
    fn cell(&self, id: &str) -> Option<Cell> {
        self.parse(id)
    }
    fn id(&self, c: Cell) -> String {
        if c.index() < self.len() {
            Grid::id(self, c)
        } else {
            format!("#{}", c.0)
        }
    }
}

/// Row-major numbering on a grid `width` columns wide and as tall as needed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VirtualGrid {
    /// Columns per row (agents use [`gbely_rules::AGENT_GRID_WIDTH`]).
    pub width: u32,
}

impl CellIds for VirtualGrid {
    fn cell(&self, id: &str) -> Option<Cell> {
        let (r, c) = parse_cell_id(id)?;
        if c >= self.width {
            return None;
        }
        Some(Cell(r.checked_mul(self.width)?.checked_add(c)?))
    }
    fn id(&self, c: Cell) -> String {
        format_cell_id(c.0 / self.width, c.0 % self.width)
    }
}

/// The wire form of a typed command (replays of in-process agents, served agents' answers).
pub fn command_to_value(cmd: &Command, ids: &impl CellIds) -> Value {
    let mut m = JsonMap::new();
    m.insert("typ".into(), Value::from(cmd.wire_type()));
    let id = |c: Cell| Value::from(ids.id(c));
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

/// Parses an observation back from its JSON text (tools and tests).
pub fn parse_observation(text: &str, ids: &impl CellIds) -> Option<Observation> {
    observation_from_value(&serde_json::from_str(text).ok()?, ids)
}

/// Reads a wire observation (SPEC §5) into the typed form: the one parser, used by tools and by
/// served agents. `None` when a field is missing or malformed.
pub fn observation_from_value(v: &Value, ids: &impl CellIds) -> Option<Observation> {
    use gbely_rules::{Neighbours, OwnCell, Owner, Terrain, VisibleCell};
    let num = |v: &Value| v.as_f64();
    let mut obs = Observation {
        round: v.get("kolo")?.as_u64()? as u32,
        base: ids.cell(v.get("moja_zakladna")?.as_str()?)?,
        ..Observation::default()
    };
    for c in v.get("moje_pola")?.as_array()? {
        let listed: Vec<Cell> = c
            .get("susedia")?
            .as_array()?
            .iter()
            .map(|n| n.as_str().and_then(|s| ids.cell(s)))
            .collect::<Option<_>>()?;
        obs.own.push(OwnCell {
            cell: ids.cell(c.get("id")?.as_str()?)?,
            terrain: Terrain::from_wire(c.get("typ")?.as_str()?)?,
            units: num(c.get("jednotky")?)?,
            fortification: num(c.get("opevnenie")?)?,
            neighbours: Neighbours::from_cells(&listed)?,
        });
    }
    for c in v.get("viditelne_susedne_pola")?.as_array()? {
        obs.visible.push(VisibleCell {
            cell: ids.cell(c.get("id")?.as_str()?)?,
            owner: Owner::from_wire(c.get("vlastnik")?.as_str()?)?,
            garrison: num(c.get("posadka")?)?,
            fortification: num(c.get("opevnenie")?)?,
            terrain: Terrain::from_wire(c.get("typ")?.as_str()?)?,
        });
    }
    Some(obs)
}
