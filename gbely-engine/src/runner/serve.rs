//! Serving a Rust [`Decide`] as an agent process: read observations from stdin, answer on
//! stdout, one JSON line each (SPEC §8). The map's size is not in the observation, so cells are
//! numbered on a virtual grid [`SERVE_WIDTH`] columns wide, as they are for a `DecidePlayer`
//! in-process ([`gbely_rules::AGENT_GRID_WIDTH`]): an agent sees the same cells both ways.
//! Only answers go to stdout: an agent logs with `eprintln!` (a `println!` would be read as its
//! answer).
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

use crate::wire::{command_to_value, notes_to_value, observation_from_value, VirtualGrid};

/// Columns of the virtual grid cells are numbered on for agents, served and in-process
/// ([`gbely_rules::AGENT_GRID_WIDTH`]).
pub const SERVE_WIDTH: u32 = gbely_rules::AGENT_GRID_WIDTH;

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
            Some(obs) => {
                let mut answer = wire_answer(&agent.decide(&obs));
                // Notes travel in the answer's `debug` key, which the rules (and the judge) ignore.
                if let Some(notes) = agent.notes().filter(|n| !n.is_empty()) {
                    answer["debug"] = notes_to_value(&notes, &SERVE_GRID);
                }
                answer
            }
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use gbely_rules::{Cell, Grid, Observation};
    use gbely_world::Replay;

    use super::*;
    use crate::game::{play, PlayOptions};
    use crate::runner::player::{DecidePlayer, Player, PlayerAnswer};
    use crate::sim::MatchConfig;

    /// An agent that steers by geometry: from each own cell with units to spare it attacks the
    /// westernmost foreign neighbour (the smallest column, then the largest row).
    struct Westward;

    impl Decide for Westward {
        fn decide(&mut self, obs: &Observation) -> Vec<Command> {
            let mut out = Vec::new();
            for own in obs.own.iter().filter(|o| o.units >= 3.0) {
                let target = own
                    .neighbours
                    .iter()
                    .filter(|c| obs.visible_cell(*c).is_some())
                    .min_by_key(|c: &Cell| (c.row_col().1, u32::MAX - c.row_col().0));
                if let Some(to) = target {
                    out.push(Command::Attack { from: own.cell, to, amount: own.units - 1.0 });
                }
            }
            out
        }
    }

    /// The agent as `serve_stdio` plays it: the observation written as the engine sends it,
    /// read back on the served numbering, the answer written as the wire answer.
    struct Wire {
        agent: Westward,
        answer: Option<Vec<Value>>,
    }

    impl Player for Wire {
        fn name(&self) -> String {
            "westward".into()
        }
        fn begin(&mut self, obs: &Observation, grid: &Grid) {
            let line = crate::wire::observation_json(obs, grid);
            let seen = parse_wire_observation(&serde_json::from_str(&line).unwrap()).expect("a wire observation");
            let answer = wire_answer(&self.agent.decide(&seen));
            self.answer = answer["prikazy"].as_array().cloned();
        }
        fn finish(&mut self) -> PlayerAnswer {
            PlayerAnswer::Raw(self.answer.take().unwrap_or_default())
        }
    }

    fn replay_of(agent: &mut dyn Player) -> Replay {
        let map = Arc::new(gbely_world::generate_duel("numbering", 45, 33).unwrap());
        let mut council = DecidePlayer::council("council");
        let mut players: [&mut dyn Player; 2] = [agent, &mut council];
        let opts = PlayOptions { config: MatchConfig { rounds: 40 }, record: true };
        play(map, &mut players, opts, &mut ()).replay.expect("recorded")
    }

    /// Geometry an agent computes from its cells is the same in-process and served: the same
    /// match, the same replay (on a map narrower than the served grid, and not square).
    #[test]
    fn an_agent_sees_the_same_cells_in_process_and_served() {
        let in_process = replay_of(&mut DecidePlayer::new("westward", Westward));
        let served = replay_of(&mut Wire { agent: Westward, answer: None });
        assert!(in_process.result.sides[0].cells > 20, "it plays: {:?}", in_process.result);
        assert_eq!(in_process.turns, served.turns);
        assert_eq!(in_process.final_state, served.final_state);
        assert_eq!(in_process.result, served.result);
    }

    #[test]
    fn cells_off_the_map_come_back_as_no_cell() {
        let grid = Grid::new(45, 33);
        let c = Cell(2 * 45 + 7);
        let agent = crate::runner::player::agent_cell(c, &grid);
        assert_eq!(agent.row_col(), (2, 7));
        assert_eq!(crate::runner::player::map_cell(agent, &grid), c);
        assert_eq!(crate::runner::player::map_cell(Cell::at(2, 45), &grid), Cell(u32::MAX));
        assert_eq!(crate::runner::player::map_cell(Cell::at(33, 0), &grid), Cell(u32::MAX));
    }
}
