//! Serving a Rust [`Decide`] as an agent process: read observations from stdin, answer on
//! stdout, one JSON line each (SPEC §8). The map's size is not in the observation, so cells are
//! numbered on a virtual grid [`SERVE_WIDTH`] columns wide; agents treat cells as opaque anyway.
//!
//! ```no_run
//! // src/bin/my_agent.rs of a crate depending on gbely-engine and gbely-council:
//! fn main() -> std::io::Result<()> {
//!     gbely_engine::runner::serve::serve_stdio(&mut gbely_council::Council::new())
//! }
//! ```
//! Then: `gbely play --agent-cmd "target/release/my_agent"`.

use std::io::{BufRead, Write};

use gbely_rules::{
    format_cell_id, parse_cell_id, Cell, Command, Decide, Neighbours, Observation, OwnCell, Owner, Terrain, VisibleCell,
};
use serde_json::{json, Value};

/// Columns of the virtual grid used to number cells in a served agent.
pub const SERVE_WIDTH: u32 = 1024;

fn cell_of(id: &str) -> Option<Cell> {
    let (r, c) = parse_cell_id(id)?;
    (c < SERVE_WIDTH).then(|| Cell(r * SERVE_WIDTH + c))
}

fn id_of(c: Cell) -> String {
    format_cell_id(c.0 / SERVE_WIDTH, c.0 % SERVE_WIDTH)
}

fn neighbours_of(list: &[Value]) -> Option<Neighbours> {
    let cells: Vec<Cell> = list.iter().map(|v| v.as_str().and_then(cell_of)).collect::<Option<_>>()?;
    Neighbours::from_cells(&cells)
}

/// Parses a wire observation (SPEC §5) into the typed form, on the virtual grid.
pub fn parse_wire_observation(v: &Value) -> Option<Observation> {
    let mut obs = Observation {
        round: v.get("kolo")?.as_u64()? as u32,
        base: cell_of(v.get("moja_zakladna")?.as_str()?)?,
        ..Observation::default()
    };
    for c in v.get("moje_pola")?.as_array()? {
        obs.own.push(OwnCell {
            cell: cell_of(c.get("id")?.as_str()?)?,
            terrain: Terrain::from_wire(c.get("typ")?.as_str()?)?,
            units: c.get("jednotky")?.as_f64()?,
            fortification: c.get("opevnenie")?.as_f64()?,
            neighbours: neighbours_of(c.get("susedia")?.as_array()?)?,
        });
    }
    for c in v.get("viditelne_susedne_pola")?.as_array()? {
        obs.visible.push(VisibleCell {
            cell: cell_of(c.get("id")?.as_str()?)?,
            owner: Owner::from_wire(c.get("vlastnik")?.as_str()?)?,
            garrison: c.get("posadka")?.as_f64()?,
            fortification: c.get("opevnenie")?.as_f64()?,
            terrain: Terrain::from_wire(c.get("typ")?.as_str()?)?,
        });
    }
    Some(obs)
}

/// The wire answer for typed commands on the virtual grid.
pub fn wire_answer(cmds: &[Command]) -> Value {
    let list: Vec<Value> = cmds
        .iter()
        .map(|c| match *c {
            Command::Move { from, to, amount } => {
                json!({"typ": "MOVE", "z": id_of(from), "na": id_of(to), "pocet": amount})
            }
            Command::Attack { from, to, amount } => {
                json!({"typ": "ATTACK", "z": id_of(from), "na": id_of(to), "pocet": amount})
            }
            Command::Fortify { cell, amount } => json!({"typ": "FORTIFY", "pole": id_of(cell), "investicia": amount}),
        })
        .collect();
    json!({ "prikazy": list })
}

/// Runs `agent` over the line protocol on stdin/stdout until stdin closes.
pub fn serve_stdio(agent: &mut dyn Decide) -> std::io::Result<()> {
    let stdin = std::io::stdin();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for line in stdin.lock().lines() {
        let line = line?;
        let answer = match serde_json::from_str::<Value>(&line).ok().as_ref().and_then(parse_wire_observation) {
            Some(obs) => wire_answer(&agent.decide(&obs)),
            None => {
                eprintln!("gbely serve: could not read the observation; answering with no commands");
                json!({ "prikazy": [] })
            }
        };
        serde_json::to_writer(&mut out, &answer)?;
        out.write_all(b"\n")?;
        out.flush()?;
    }
    Ok(())
}
