//! The map file format, version 1 (documented in `docs/map-format.md`).
//!
//! ```text
//! gbely-map 1
//! name gbely
//! size 60 60                 # width height
//! seat army P57_02           # seats in order: seat 0, seat 1, …
//! seat council P02_57
//! terrain                    # height rows of width chars: . luka  ^ vrch  ~ rieka  B base (luka)
//! ....^^~~..
//! garrison                   # height rows of width integers separated by spaces
//! 1 2 3 3 4 …
//! owners                     # optional: . neutral, 0-8 the seat owning the cell at the start
//! ..........
//! end
//! ```
//! Blank lines and everything after `#` are ignored. Without an `owners` section each seat owns
//! exactly its base. A malformed file is refused with the line (and cell) at fault.

use std::fmt::Write;

use gbely_rules::{Cell, Grid, Terrain};
use thiserror::Error;

use crate::map::{Fault, Map, Seat, SeatRole};

pub const MAP_FORMAT_VERSION: u32 = 1;
/// The largest starting garrison a map file may give a cell (the learning environments' bound on
/// units follows from it).
pub const MAX_GARRISON: u32 = 1_000_000;

/// Most cells in a row or a column of a map file.
pub(crate) const MAX_SIDE: u32 = 1000;

/// Why a map file was refused: the line (1-based) and what is wrong there.
#[derive(Debug, Error, PartialEq, Eq)]
#[error("line {line}: {message}")]
pub struct MapFileError {
    pub line: usize,
    pub message: String,
}

fn err(line: usize, message: impl Into<String>) -> MapFileError {
    MapFileError { line, message: message.into() }
}

fn terrain_char(t: Terrain, base: bool) -> char {
    match (t, base) {
        (_, true) => 'B',
        (t, _) => t.glyph(),
    }
}

/// Writes a map in the map file format. `parse_map_file(&write_map_file(m)) == m`.
pub fn write_map_file(map: &Map) -> String {
    let g = map.grid();
    let mut s = String::with_capacity(map.len() * 4 + 256);
    let _ = writeln!(s, "gbely-map {MAP_FORMAT_VERSION}");
    let _ = writeln!(s, "name {}", map.name());
    let _ = writeln!(s, "size {} {}", g.width(), g.height());
    for seat in map.seats() {
        let _ = writeln!(s, "seat {} {}", seat.role.wire(), g.id(seat.base));
    }
    s.push_str("terrain\n");
    for r in 0..g.height() {
        for c in 0..g.width() {
            let cell = g.cell(r, c);
            s.push(terrain_char(map.terrain(cell), map.is_base(cell)));
        }
        s.push('\n');
    }
    s.push_str("garrison\n");
    for r in 0..g.height() {
        for c in 0..g.width() {
            if c > 0 {
                s.push(' ');
            }
            let _ = write!(s, "{}", map.garrison(g.cell(r, c)));
        }
        s.push('\n');
    }
    let only_bases = g.cells().all(|c| match map.start_owner(c) {
        None => true,
        Some(k) => map.seats()[k as usize].base == c,
    });
    if !only_bases {
        s.push_str("owners\n");
        for r in 0..g.height() {
            for c in 0..g.width() {
                s.push(match map.start_owner(g.cell(r, c)) {
                    None => '.',
                    Some(k) => (b'0' + k) as char,
                });
            }
            s.push('\n');
        }
    }
    s.push_str("end\n");
    s
}

/// Reads a map file. Every error names the line, and the cell where one is at fault.
pub fn parse_map_file(text: &str) -> Result<Map, MapFileError> {
    // Editors on Windows may start a UTF-8 file with a byte order mark; it is not content.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    // (1-based line number, content without comment, trimmed)
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.split('#').next().unwrap_or("").trim()))
        .filter(|(_, l)| !l.is_empty());
    let last_line = text.lines().count().max(1);
    let mut next = |what: &str| lines.next().ok_or_else(|| err(last_line, format!("file ends early: expected {what}")));

    let (ln, header) = next("the header `gbely-map 1`")?;
    match header.split_whitespace().collect::<Vec<_>>()[..] {
        ["gbely-map", v] => match v.parse::<u32>() {
            Ok(MAP_FORMAT_VERSION) => {}
            Ok(other) => {
                return Err(err(
                    ln,
                    format!("map format version {other} is not supported (this build reads {MAP_FORMAT_VERSION})"),
                ))
            }
            Err(_) => return Err(err(ln, format!("bad version `{v}`"))),
        },
        _ => return Err(err(ln, "not a gbely map file: the first line must be `gbely-map 1`")),
    }

    let (ln, name_line) = next("`name NAME`")?;
    let name = name_line
        .strip_prefix("name ")
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .ok_or_else(|| err(ln, "expected `name NAME`"))?
        .to_string();

    let (ln, size_line) = next("`size WIDTH HEIGHT`")?;
    let (width, height) = match size_line.split_whitespace().collect::<Vec<_>>()[..] {
        ["size", w, h] => match (w.parse::<u32>(), h.parse::<u32>()) {
            (Ok(w), Ok(h)) if (1..=MAX_SIDE).contains(&w) && (1..=MAX_SIDE).contains(&h) => (w, h),
            _ => return Err(err(ln, format!("bad size `{w} {h}`: two integers 1…{MAX_SIDE} expected"))),
        },
        _ => return Err(err(ln, "expected `size WIDTH HEIGHT`")),
    };
    let g = Grid::new(width, height);
    let n = g.len();

    let mut seats = Vec::new();
    let mut seat_lines = Vec::new();
    let (mut ln, mut line) = next("`seat ROLE CELL` or `terrain`")?;
    while let Some(rest) = line.strip_prefix("seat ") {
        let parts: Vec<&str> = rest.split_whitespace().collect();
        let [role, id] = parts[..] else {
            return Err(err(ln, "expected `seat army|council CELL`"));
        };
        let role = match role {
            "army" => SeatRole::Army,
            "council" => SeatRole::Council,
            other => return Err(err(ln, format!("unknown seat role `{other}` (army or council)"))),
        };
        let base =
            g.parse(id).ok_or_else(|| err(ln, format!("seat base `{id}` is not a cell of a {width}×{height} map")))?;
        seats.push(Seat { role, base });
        seat_lines.push(ln);
        (ln, line) = next("`terrain`")?;
    }
    if line != "terrain" {
        return Err(err(ln, format!("expected `seat …` or `terrain`, found `{line}`")));
    }
    let terrain_line = ln;
    // The line of each row of each section, to name the line of a cell at fault.
    let (mut terrain_rows, mut garrison_rows, mut owner_rows) = (Vec::new(), Vec::new(), Vec::new());

    let mut terrain = vec![Terrain::Meadow; n];
    let mut base = vec![false; n];
    for r in 0..height {
        let (ln, row) = next(&format!("terrain row {r}"))?;
        terrain_rows.push(ln);
        if row.chars().count() != width as usize {
            return Err(err(ln, format!("terrain row {r} has {} cells, expected {width}", row.chars().count())));
        }
        for (c, ch) in row.chars().enumerate() {
            let cell = g.cell(r, c as u32);
            let i = cell.index();
            (terrain[i], base[i]) = match ch {
                'B' => (Terrain::Meadow, true),
                other if Terrain::from_glyph(other).is_some() => (Terrain::from_glyph(other).expect("checked"), false),
                other => return Err(err(ln, format!("cell {}: unknown terrain `{other}` (. ^ ~ B)", g.id(cell)))),
            };
        }
    }

    let (ln, line) = next("`garrison`")?;
    if line != "garrison" {
        return Err(err(ln, format!("expected `garrison`, found `{line}`")));
    }
    let mut garrison = vec![0u32; n];
    for r in 0..height {
        let (ln, row) = next(&format!("garrison row {r}"))?;
        garrison_rows.push(ln);
        let vals: Vec<&str> = row.split_whitespace().collect();
        if vals.len() != width as usize {
            return Err(err(ln, format!("garrison row {r} has {} values, expected {width}", vals.len())));
        }
        for (c, v) in vals.into_iter().enumerate() {
            let cell = g.cell(r, c as u32);
            garrison[cell.index()] = v.parse::<u32>().ok().filter(|&x| x <= MAX_GARRISON).ok_or_else(|| {
                err(ln, format!("cell {}: garrison `{v}` is not an integer 0…{MAX_GARRISON}", g.id(cell)))
            })?;
        }
    }

    let mut start_owner = vec![None; n];
    let (ln, mut line) = next("`owners` or `end`")?;
    let mut end_ln = ln;
    if line == "owners" {
        for r in 0..height {
            let (ln, row) = next(&format!("owners row {r}"))?;
            owner_rows.push(ln);
            if row.chars().count() != width as usize {
                return Err(err(ln, format!("owners row {r} has {} cells, expected {width}", row.chars().count())));
            }
            for (c, ch) in row.chars().enumerate() {
                let cell = g.cell(r, c as u32);
                start_owner[cell.index()] = match ch {
                    '.' => None,
                    '0'..='8' => Some(ch as u8 - b'0'),
                    other => {
                        return Err(err(ln, format!("cell {}: unknown owner `{other}` (. or a seat 0-8)", g.id(cell))))
                    }
                };
            }
        }
        (end_ln, line) = next("`end`")?;
    } else {
        for (k, s) in seats.iter().enumerate() {
            start_owner[s.base.index()] = Some(k as u8);
        }
    }
    if line != "end" {
        return Err(err(end_ln, format!("expected `end`, found `{line}`")));
    }
    if let Some((ln, extra)) = lines.next() {
        return Err(err(ln, format!("unexpected text after `end`: `{extra}`")));
    }

    let map = Map { name, grid: g, terrain, base, garrison, start_owner, seats };
    map.validate_at().map_err(|(fault, m)| {
        let row = |c: Cell| map.grid().row_col(c).0 as usize;
        let line = match fault {
            Fault::SeatCount => seat_lines.get(9).copied().unwrap_or(terrain_line),
            Fault::Seat(k) => seat_lines[k],
            Fault::SeatOwner(k) => owner_rows.get(row(map.seats[k].base)).copied().unwrap_or(seat_lines[k]),
            Fault::Terrain(c) => terrain_rows[row(c)],
            Fault::Owner(c) => owner_rows.get(row(c)).copied().unwrap_or(terrain_line),
            Fault::Garrison(c) => garrison_rows[row(c)],
        };
        err(line, format!("invalid map: {m}"))
    })?;
    Ok(map)
}

/// A plain-text picture of a map for terminals: one character per cell for terrain, a digit for
/// the starting garrison, seats as `A` (army) / `C` (council) followed by the seat number.
pub fn render_map(map: &Map) -> String {
    let g = map.grid();
    let mut s = String::with_capacity(map.len() * 3 + 200);
    let _ = writeln!(s, "{} — {}×{}, fingerprint {}", map.name(), g.width(), g.height(), map.fingerprint());
    s.push_str("legend: .n meadow  ^n hill  ~n river (n = garrison)  Ak/Ck seat k's base  b extra base\n");
    for r in 0..g.height() {
        for c in 0..g.width() {
            let cell: Cell = g.cell(r, c);
            if let Some(k) = map.seats().iter().position(|s| s.base == cell) {
                let role = if map.seats()[k].role == SeatRole::Army { 'A' } else { 'C' };
                s.push(role);
                s.push(char::from_digit(k as u32, 10).unwrap_or('?'));
                continue;
            }
            s.push(if map.is_base(cell) { 'b' } else { terrain_char(map.terrain(cell), false) });
            let gar = map.garrison(cell);
            s.push(if gar <= 9 { char::from_digit(gar, 10).unwrap_or('?') } else { '+' });
        }
        s.push('\n');
    }
    s
}
