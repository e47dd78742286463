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
    notes_of_debug(v.as_object()?.get("debug")?, ids)
}

/// The notes of an answer's `debug` value (see [`notes_from_value`]).
fn notes_of_debug(debug: &Value, ids: &impl CellIds) -> Option<gbely_rules::Notes> {
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
            if let Some(draw) = d.get("draw") {
                notes.draw = drawings_of(draw, ids);
            }
        }
        other => notes.text = text_of(other),
    }
    (!notes.is_empty()).then(|| notes.bounded())
}

/// The drawings of a `debug` object's `draw` list (see [`gbely_rules::Drawing`]): each
/// `{"dot": ID}`, `{"fill": ID}`, `{"line": [ID, ID]}` or `{"label": ID, "text": "…"}`, with an
/// optional `"color"` (`#rgb` or `#rrggbb`; none, or another text: the seat's colour). An item
/// that is none of these, or names a cell not on the map, is left out.
fn drawings_of(v: &Value, ids: &impl CellIds) -> Vec<gbely_rules::Drawing> {
    use gbely_rules::{Drawing, Shape};
    let Value::Array(items) = v else {
        return Vec::new();
    };
    let one = |item: &Value| -> Option<Drawing> {
        let o = item.as_object()?;
        let cell = |k: &str| o.get(k).and_then(Value::as_str).and_then(|id| ids.cell(id));
        let shape = if let Some(c) = cell("dot") {
            Shape::Dot(c)
        } else if let Some(c) = cell("fill") {
            Shape::Fill(c)
        } else if let Some(c) = cell("label") {
            let text = match o.get("text") {
                Some(Value::String(t)) => t.clone(),
                Some(Value::Null) | None => String::new(),
                Some(other) => other.to_string(),
            };
            Shape::Label(c, text)
        } else {
            match o.get("line")?.as_array()?.as_slice() {
                [a, b] => Shape::Line(ids.cell(a.as_str()?)?, ids.cell(b.as_str()?)?),
                _ => return None,
            }
        };
        Some(Drawing { shape, color: o.get("color").and_then(Value::as_str).and_then(Drawing::parse_color) })
    };
    items.iter().filter_map(one).take(gbely_rules::Notes::MAX_DRAWINGS + 1).collect()
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
    if !notes.draw.is_empty() {
        use gbely_rules::Shape;
        let draw = notes.draw.iter().map(|dr| {
            let mut o = JsonMap::new();
            match &dr.shape {
                Shape::Dot(c) => o.insert("dot".into(), Value::from(ids.id(*c))),
                Shape::Fill(c) => o.insert("fill".into(), Value::from(ids.id(*c))),
                Shape::Line(a, b) => o.insert("line".into(), Value::from(vec![ids.id(*a), ids.id(*b)])),
                Shape::Label(c, t) => {
                    o.insert("text".into(), Value::from(t.as_str()));
                    o.insert("label".into(), Value::from(ids.id(*c)))
                }
            };
            if dr.color.is_some() {
                o.insert("color".into(), Value::from(dr.color_text()));
            }
            Value::Object(o)
        });
        d.insert("draw".into(), Value::Array(draw.collect()));
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

/// How many of an answer's items that are discarded as they are read (not an object, a missing
/// or mistyped field, an unknown cell, a bad amount) [`read_answer`] keeps one by one; the rest
/// are counted, never held. One more than the replay records one by one
/// (`recorder::KEPT_DISCARDS_PER_ANSWER`), so the replay's cut falls where it did and the
/// replay is the same.
pub const DISCARDED_ITEMS_KEPT: usize = 1001;

/// A debug value up to this size is read as before (into a JSON value); a larger one by a
/// reader that keeps only what the notes can hold.
const DEBUG_READ_WHOLE: usize = 64 << 10;

/// An answer line as [`read_answer`] reads it: each command parsed, without ever holding the
/// items of a flood.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReadAnswer {
    /// The commands in the answer's order, each parsed on its own ([`parse_command`]); the
    /// discarded items past the first [`DISCARDED_ITEMS_KEPT`] are left out (see `left_out`).
    pub orders: Vec<Order>,
    /// The items of the discarded commands among `orders`, in their order (what a replay keeps).
    pub discarded_items: Vec<Value>,
    /// The discarded items left out of `orders`, by reason.
    pub left_out: std::collections::BTreeMap<DiscardReason, u32>,
    /// The answer's notes (its `debug` key), as [`notes_from_value`] reads them.
    pub notes: Option<gbely_rules::Notes>,
}

/// Reads an agent's answer line (SPEC §6, §8): `{"prikazy": [...]}` or a bare list, unknown keys
/// ignored, the notes from its `debug` key; the same commands, discards and notes as parsing it
/// into a JSON value with [`parse_answer`] and [`notes_from_value`], in memory bounded by the
/// line's size and the commands it carries out, however many junk items it holds.
///
/// Text is data: a line that is JSON but for invalid UTF-8 or lone surrogate escapes (`\udc80`,
/// what Python's `json.dumps` writes for a lone surrogate) inside its strings is read with
/// replacement characters (U+FFFD) there. Only a line that is not JSON even so, or not an
/// answer, is [`Unreadable`].
pub fn read_answer(line: &[u8], grid: &Grid) -> Result<ReadAnswer, Unreadable> {
    match read_answer_exact(line, grid) {
        Err(Unreadable::NotJson(e)) => match lenient_text(line) {
            Some(text) => read_answer_exact(text.as_bytes(), grid).map_err(|_| Unreadable::NotJson(e)),
            None => Err(Unreadable::NotJson(e)),
        },
        other => other,
    }
}

fn read_answer_exact(line: &[u8], grid: &Grid) -> Result<ReadAnswer, Unreadable> {
    let mut de = serde_json::Deserializer::from_slice(line);
    let top = serde::de::DeserializeSeed::deserialize(AnswerSeed { grid }, &mut de)
        .and_then(|top| de.end().map(|()| top))
        .map_err(|e| Unreadable::NotJson(e.to_string()))?;
    match top {
        Top::List(read) => Ok(read),
        Top::Object { prikazy: Some(Some(mut read)), debug } => {
            if let Some(raw) = debug {
                // Its strings were passed over, not decoded: one with a lone surrogate escape
                // is read again with a replacement character.
                read.notes = notes_of_raw(raw, grid).or_else(|| {
                    let text = lenient_text(raw.get().as_bytes())?;
                    notes_of_raw(serde_json::from_str(&text).ok()?, grid)
                });
            }
            Ok(read)
        }
        Top::Object { .. } | Top::Other => Err(Unreadable::NotCommands),
    }
}

/// The line with invalid UTF-8 replaced and lone surrogate escapes inside strings written as
/// `\ufffd`; `None` when there was nothing to replace.
fn lenient_text(line: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(line);
    let b = text.as_bytes();
    let hex = |at: usize| -> Option<u32> {
        let h = std::str::from_utf8(b.get(at..at + 4)?).ok()?;
        u32::from_str_radix(h, 16).ok().filter(|_| h.bytes().all(|c| c.is_ascii_hexdigit()))
    };
    let mut out = String::with_capacity(text.len());
    let (mut i, mut in_string, mut from, mut changed) = (0, false, 0, matches!(text, std::borrow::Cow::Owned(_)));
    while i < b.len() {
        match b[i] {
            b'"' => in_string = !in_string,
            b'\\' if in_string => {
                if b.get(i + 1) == Some(&b'u') {
                    if let Some(u) = hex(i + 2) {
                        let high = (0xd800..0xdc00).contains(&u);
                        let paired = high
                            && b.get(i + 6) == Some(&b'\\')
                            && b.get(i + 7) == Some(&b'u')
                            && hex(i + 8).is_some_and(|l| (0xdc00..0xe000).contains(&l));
                        if paired {
                            i += 12;
                            continue;
                        }
                        if (0xd800..0xe000).contains(&u) {
                            out.push_str(&text[from..i]);
                            out.push_str("\\ufffd");
                            changed = true;
                            i += 6;
                            from = i;
                            continue;
                        }
                    }
                }
                i += 2;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out.push_str(&text[from.min(text.len())..]);
    changed.then_some(out)
}

/// What the top of an answer line held.
#[derive(Default)]
enum Top<'de> {
    List(ReadAnswer),
    /// An object: its (last) `prikazy` key (`Some(None)`: not a list) and its (last) `debug` key.
    Object {
        prikazy: Option<Option<ReadAnswer>>,
        debug: Option<&'de serde_json::value::RawValue>,
    },
    #[default]
    Other,
}

struct AnswerSeed<'g> {
    grid: &'g Grid,
}

impl<'de> serde::de::DeserializeSeed<'de> for AnswerSeed<'_> {
    type Value = Top<'de>;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Top<'de>, D::Error> {
        d.deserialize_any(self)
    }
}

/// Any JSON value that is not a list or an object is no answer.
macro_rules! other_values {
    ($($name:ident: $t:ty),*) => {
        $(fn $name<E: serde::de::Error>(self, _: $t) -> Result<Self::Value, E> { Ok(Self::Value::default()) })*
    };
}

impl<'de> serde::de::Visitor<'de> for AnswerSeed<'_> {
    type Value = Top<'de>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an answer")
    }
    other_values!(visit_bool: bool, visit_i64: i64, visit_u64: u64, visit_f64: f64, visit_str: &str);
    fn visit_unit<E: serde::de::Error>(self) -> Result<Top<'de>, E> {
        Ok(Top::Other)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, seq: A) -> Result<Top<'de>, A::Error> {
        read_items(seq, self.grid).map(Top::List)
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Top<'de>, A::Error> {
        let (mut prikazy, mut debug) = (None, None);
        // A key given twice counts with its last value, as in a JSON object read whole.
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            match key.as_ref() {
                "prikazy" => prikazy = Some(map.next_value_seed(ItemsSeed { grid: self.grid })?),
                "debug" => debug = Some(map.next_value::<&'de serde_json::value::RawValue>()?),
                _ => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
        }
        Ok(Top::Object { prikazy, debug })
    }
}

/// The value of `prikazy`: the command list, or (`None`) anything else.
struct ItemsSeed<'g> {
    grid: &'g Grid,
}

impl<'de> serde::de::DeserializeSeed<'de> for ItemsSeed<'_> {
    type Value = Option<ReadAnswer>;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Option<ReadAnswer>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for ItemsSeed<'_> {
    type Value = Option<ReadAnswer>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a command list")
    }
    other_values!(visit_bool: bool, visit_i64: i64, visit_u64: u64, visit_f64: f64, visit_str: &str);
    fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?.is_some() {}
        Ok(None)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        read_items(seq, self.grid).map(Some)
    }
}

/// Each item read, parsed and dropped: only the commands and the first discarded items stay.
fn read_items<'de, A: serde::de::SeqAccess<'de>>(mut seq: A, grid: &Grid) -> Result<ReadAnswer, A::Error> {
    let mut read = ReadAnswer::default();
    while let Some(item) = seq.next_element::<Value>()? {
        let order = parse_command(&item, grid);
        match order {
            Ok(_) => read.orders.push(order),
            Err(reason) if read.discarded_items.len() >= DISCARDED_ITEMS_KEPT => {
                *read.left_out.entry(reason).or_default() += 1;
            }
            Err(_) => {
                read.orders.push(order);
                read.discarded_items.push(item);
            }
        }
    }
    Ok(read)
}

/// The notes of a `debug` value as it stands in the line.
fn notes_of_raw(raw: &serde_json::value::RawValue, ids: &impl CellIds) -> Option<gbely_rules::Notes> {
    let text = raw.get();
    if text.len() <= DEBUG_READ_WHOLE {
        return notes_of_debug(&serde_json::from_str(text).ok()?, ids);
    }
    // A large one: only what the notes can hold, read one part at a time (a flood of items in
    // it is passed over, not held). Its texts that are not strings are kept as written.
    let text_of = |raw: &serde_json::value::RawValue| -> String {
        let t = raw.get().trim();
        match t.as_bytes().first() {
            Some(b'"') => serde_json::from_str::<String>(t).unwrap_or_default(),
            _ if t == "null" => String::new(),
            _ if t.len() <= DEBUG_READ_WHOLE => {
                serde_json::from_str::<Value>(t).map_or_else(|_| t.to_string(), |v| v.to_string())
            }
            _ => t.to_string(),
        }
    };
    let mut notes = gbely_rules::Notes::default();
    match text.trim_start().as_bytes().first() {
        Some(b'{') => {
            let parts: LeanDebug = serde_json::from_str(text).ok()?;
            let texts: Vec<String> =
                [parts.text, parts.log].iter().flatten().map(|r| text_of(r)).filter(|t| !t.is_empty()).collect();
            notes.text = texts.join("\n");
            for (id, note) in parts.cells.0 {
                if let Some(c) = ids.cell(&id) {
                    notes.cells.push((c, text_of(note)));
                }
            }
            // Drawings are read from a `draw` list of at most DEBUG_READ_WHOLE bytes; a larger
            // one is passed over.
            if let Some(draw) = parts.draw.filter(|r| r.get().len() <= DEBUG_READ_WHOLE) {
                if let Ok(v) = serde_json::from_str::<Value>(draw.get()) {
                    notes.draw = drawings_of(&v, ids);
                }
            }
        }
        _ => notes.text = text_of(raw),
    }
    (!notes.is_empty()).then(|| notes.bounded())
}

/// A large `debug` object: its `text`, `log` and the first cells of `cells` (a key given twice
/// counts with its last value, in the place of its first).
#[derive(Default)]
struct LeanDebug<'a> {
    text: Option<&'a serde_json::value::RawValue>,
    log: Option<&'a serde_json::value::RawValue>,
    cells: FirstCells<'a>,
    draw: Option<&'a serde_json::value::RawValue>,
}

impl<'de> serde::Deserialize<'de> for LeanDebug<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = LeanDebug<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("notes")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut d = LeanDebug::default();
                while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                    match key.as_ref() {
                        "text" => d.text = Some(map.next_value()?),
                        "log" => d.log = Some(map.next_value()?),
                        "cells" => d.cells = map.next_value()?,
                        "draw" => d.draw = Some(map.next_value()?),
                        _ => {
                            map.next_value::<serde::de::IgnoredAny>()?;
                        }
                    }
                }
                Ok(d)
            }
        }
        d.deserialize_map(V)
    }
}

#[derive(Default)]
struct FirstCells<'a>(Vec<(String, &'a serde_json::value::RawValue)>);

impl<'de> serde::Deserialize<'de> for FirstCells<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = FirstCells<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("cell notes")
            }
            other_values!(visit_bool: bool, visit_i64: i64, visit_u64: u64, visit_f64: f64, visit_str: &str);
            fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
                Ok(FirstCells::default())
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(FirstCells::default())
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut kept: Vec<(String, &'de serde_json::value::RawValue)> = Vec::new();
                while let Some(id) = map.next_key::<String>()? {
                    let note = map.next_value::<&'de serde_json::value::RawValue>()?;
                    if let Some(slot) = kept.iter_mut().find(|(k, _)| *k == id) {
                        slot.1 = note;
                    } else if kept.len() <= gbely_rules::Notes::MAX_CELLS {
                        kept.push((id, note));
                    }
                }
                Ok(FirstCells(kept))
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid() -> Grid {
        Grid::new(16, 16)
    }

    /// What parsing the line whole gave: the commands, the notes.
    fn whole(line: &str) -> Result<(Vec<Order>, Option<gbely_rules::Notes>), Unreadable> {
        let v: Value = serde_json::from_str(line).map_err(|e| Unreadable::NotJson(e.to_string()))?;
        let notes = notes_from_value(&v, &grid());
        Ok((parse_commands(&answer_from_value(v)?, &grid()), notes))
    }

    #[test]
    fn reading_item_by_item_gives_what_reading_whole_gave() {
        for line in [
            r#"{"prikazy":[{"typ":"MOVE","z":"P01_01","na":"P01_02","pocet":3}],"debug":"plan"}"#,
            r#"[{"typ":"FORTIFY","pole":"P00_00","investicia":1.5},7,{"typ":"X"}]"#,
            r#"{"prikazy":[1],"prikazy":[{"typ":"FORTIFY","pole":"P00_00","investicia":2}],"x":{"y":[1,2]}}"#,
            r#"{"debug":{"text":"a","log":"b","cells":{"P01_01":"c","P99_99":"d","P01_01":"e","P02_02":[1, 2]}},"prikazy":[]}"#,
            r#"{"debug":{"text":[1, {"a": null}]},"prikazy":[],"debug":null}"#,
            "{\"prikazy\": [ {\"typ\": \"ATTACK\", \"z\": \"P03_03\", \"na\": \"P03_04\", \"pocet\": 1e400} ] }",
        ] {
            let read = read_answer(line.as_bytes(), &grid()).unwrap();
            assert_eq!(Ok((read.orders, read.notes)), whole(line), "{line}");
        }
        for line in [r#"{"prikazy":5}"#, "5", r#""x""#, "null", r#"{"prikazy":{"a":1}}"#, "{}"] {
            assert_eq!(read_answer(line.as_bytes(), &grid()), Err(Unreadable::NotCommands), "{line}");
        }
        for line in ["", "{", "[1,]", r#"{"prikazy":[]} x"#, "[NaN]"] {
            let (Err(Unreadable::NotJson(a)), Err(Unreadable::NotJson(b))) =
                (read_answer(line.as_bytes(), &grid()), whole(line))
            else {
                panic!("{line}")
            };
            assert_eq!(a, b, "{line}");
        }
    }

    #[test]
    fn lone_surrogates_and_invalid_utf8_in_strings_are_replacement_characters() {
        let line = br#"{"prikazy":[{"typ":"FORTIFY","pole":"P00_00","investicia":1}],"debug":{"text":"a\udc80b \ud83d\ude00","cells":{"P00_00":"x\ud800"}}}"#;
        let read = read_answer(line, &grid()).unwrap();
        assert_eq!(read.orders.len(), 1);
        assert!(read.orders[0].is_ok());
        let notes = read.notes.unwrap();
        assert_eq!(notes.text, "a\u{fffd}b \u{1f600}");
        assert_eq!(notes.cells, vec![(Cell(0), "x\u{fffd}".to_string())]);
        let mut bytes = br#"{"prikazy":[],"debug":"caf"#.to_vec();
        bytes.extend_from_slice(&[0xff, 0xe9]);
        bytes.extend_from_slice(br#""}"#);
        assert_eq!(read_answer(&bytes, &grid()).unwrap().notes.unwrap().text, "caf\u{fffd}\u{fffd}");
        // Outside strings nothing is made readable.
        assert!(matches!(read_answer(b"[\xff]", &grid()), Err(Unreadable::NotJson(_))));
        assert!(matches!(read_answer(br#"["\udc80"] \u"#, &grid()), Err(Unreadable::NotJson(_))));
    }

    #[test]
    fn a_flood_of_junk_items_is_counted_not_held() {
        let line = format!("{{\"prikazy\":[{}]}}", vec!["0"; 100_000].join(","));
        let read = read_answer(line.as_bytes(), &grid()).unwrap();
        assert_eq!(read.orders.len(), DISCARDED_ITEMS_KEPT);
        assert_eq!(read.discarded_items.len(), DISCARDED_ITEMS_KEPT);
        assert_eq!(read.left_out[&DiscardReason::NotAnObject] as usize, 100_000 - DISCARDED_ITEMS_KEPT);
    }

    #[test]
    fn a_large_debug_value_gives_the_same_notes() {
        let big = "x".repeat(DEBUG_READ_WHOLE);
        let cells: Vec<String> = (0..200).map(|k| format!("\"P{:02}_{:02}\":\"n{k}\"", k / 16, k % 16)).collect();
        let line = format!(
            "{{\"prikazy\":[],\"debug\":{{\"text\":\"{big}\",\"junk\":[{}],\"cells\":{{\"P00_00\":1,{},\"P00_00\":\"last\"}}}}}}",
            vec!["0"; 50_000].join(","),
            cells.join(",")
        );
        let read = read_answer(line.as_bytes(), &grid()).unwrap();
        assert_eq!(read.notes, whole(&line).unwrap().1);
    }

    #[test]
    fn drawings_are_read_from_the_debug_keys_draw_within_their_bounds() {
        use gbely_rules::{Cell, Drawing, Shape};
        let line = r##"{"prikazy":[],"debug":{"draw":[
            {"dot":"P01_02","color":"#FF00ff"},{"fill":"P00_00","color":"red"},{"line":["P00_00","P15_15"],"color":"#0f8"},
            {"label":"P02_03","text":"seventeen letters"},{"label":"P02_04","text":5},
            {"dot":"P16_00"},{"line":["P00_00"]},{"dot":7},{"circle":"P00_00"},"dot"]}}"##;
        let notes = whole(line).unwrap().1.unwrap();
        // Cell ids on the 16 × 16 grid: P01_02 is 1 × 16 + 2. Colours #rgb and #rrggbb; another
        // text is the seat's colour. The label cut to 16 characters (the last one "…"); the
        // drawings off the grid, incomplete or of no shape left out.
        assert_eq!(
            notes.draw,
            [
                Drawing { shape: Shape::Dot(Cell(18)), color: Some([255, 0, 255]) },
                Drawing { shape: Shape::Fill(Cell(0)), color: None },
                Drawing { shape: Shape::Line(Cell(0), Cell(255)), color: Some([0, 255, 136]) },
                Drawing { shape: Shape::Label(Cell(35), "seventeen lette…".into()), color: None },
                Drawing { shape: Shape::Label(Cell(36), "5".into()), color: None },
            ]
        );
        assert_eq!(notes.text, "");
        assert_eq!(notes.draw[2].color_text(), "#00ff88");
        // Typed notes go back to the same wire form (a served agent's answer).
        let back = serde_json::json!({ "debug": notes_to_value(&notes, &grid()) });
        assert_eq!(notes_from_value(&back, &grid()).unwrap(), notes);
        // At most 64 a round, the rest counted in the text.
        let many: Vec<String> = (0..70).map(|k| format!("{{\"dot\":\"P00_{:02}\"}}", k % 16)).collect();
        let line = format!("{{\"prikazy\":[],\"debug\":{{\"text\":\"t\",\"draw\":[{}]}}}}", many.join(","));
        let notes = whole(&line).unwrap().1.unwrap();
        assert_eq!(notes.draw.len(), 64);
        assert_eq!(notes.text, "t [1 more drawings cut]", "the 65th is counted, no more are read");
        // A large debug value (read in parts) gives the same drawings.
        let big = format!(
            "{{\"prikazy\":[],\"debug\":{{\"text\":\"{}\",\"draw\":[{{\"dot\":\"P01_02\"}}]}}}}",
            "x".repeat(DEBUG_READ_WHOLE)
        );
        let read = read_answer(big.as_bytes(), &grid()).unwrap();
        assert_eq!(read.notes, whole(&big).unwrap().1);
        assert_eq!(read.notes.unwrap().draw, [Drawing { shape: Shape::Dot(Cell(18)), color: None }]);
    }
}
