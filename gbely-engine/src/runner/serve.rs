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

use gbely_rules::{Command, Decide, Observation};
use serde_json::{json, Value};

use crate::wire::{command_to_value, observation_from_value, VirtualGrid};

/// Columns of the virtual grid used to number cells in a served agent.
pub const SERVE_WIDTH: u32 = 1024;

/// The numbering of a served agent's cells: row-major on a grid [`SERVE_WIDTH`] wide.
pub const SERVE_GRID: VirtualGrid = VirtualGrid { width: SERVE_WIDTH };

/// Parses a wire observation (SPEC §5) into the typed form, on the virtual grid (the engine's
/// own parser, [`observation_from_value`]).
pub fn parse_wire_observation(v: &Value) -> Option<Observation> {
    observation_from_value(v, &SERVE_GRID)
}

/// The wire answer for typed commands on the virtual grid.
pub fn wire_answer(cmds: &[Command]) -> Value {
    let list: Vec<Value> = cmds.iter().map(|c| command_to_value(c, &SERVE_GRID)).collect();
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
