//! Crafted positions for tests: small hand-made maps and one helper to resolve a round.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::Arc;

use gbely_engine::sim::{Match, MatchConfig, Order, RoundReport, SideInput};
use gbely_engine::wire::parse_command;
use gbely_rules::Cell;
use gbely_world::{parse_map_file, Map};

/// A map from rows of `.` luka, `^` vrch, `~` rieka, `B` base. The bases become seats in the
/// order given by `seats` (cell ids); roles: all `army` but the last, which is `council`.
/// Every neutral garrison is 0: tests set the cells they care about.
pub fn lab_map(rows: &[&str], seats: &[&str]) -> Arc<Map> {
    let w = rows[0].len();
    let mut text = format!("gbely-map 1\nname lab\nsize {w} {}\n", rows.len());
    for (k, s) in seats.iter().enumerate() {
        let role = if k + 1 == seats.len() { "council" } else { "army" };
        text.push_str(&format!("seat {role} {s}\n"));
    }
    text.push_str("terrain\n");
    for r in rows {
        text.push_str(r);
        text.push('\n');
    }
    text.push_str("garrison\n");
    for _ in rows {
        text.push_str(&vec!["0"; w].join(" "));
        text.push('\n');
    }
    text.push_str("end\n");
    Arc::new(parse_map_file(&text).expect("lab map"))
}

/// A lab match already past this round's production, ready for crafted cells.
pub struct Lab {
    pub m: Match,
}

impl Lab {
    pub fn new(rows: &[&str], seats: &[&str]) -> Lab {
        Lab::with_rounds(rows, seats, 150)
    }

    pub fn with_rounds(rows: &[&str], seats: &[&str], rounds: u32) -> Lab {
        let mut m = Match::new(lab_map(rows, seats), MatchConfig { rounds });
        m.start_round();
        Lab { m }
    }

    pub fn cell(&self, id: &str) -> Cell {
        self.m.map().grid().parse(id).unwrap_or_else(|| panic!("no cell {id}"))
    }

    /// Sets a cell: owner seat (or `NEUTRAL`), units, fortification.
    pub fn set(&mut self, id: &str, owner: u8, units: f64, fort: f64) {
        let c = self.cell(id);
        self.m.set_cell(c, owner, units, fort);
    }

    pub fn units(&self, id: &str) -> f64 {
        self.m.units(self.cell(id))
    }
    pub fn fort(&self, id: &str) -> f64 {
        self.m.fortification(self.cell(id))
    }
    pub fn owner(&self, id: &str) -> u8 {
        self.m.owner(self.cell(id))
    }

    /// Resolves a round: per seat, a list of commands in wire JSON.
    pub fn resolve(&mut self, per_seat: &[serde_json::Value]) -> RoundReport {
        let grid = self.m.map().grid().clone();
        let inputs: Vec<SideInput> = per_seat
            .iter()
            .map(|list| {
                let orders: Vec<Order> =
                    list.as_array().expect("a list").iter().map(|v| parse_command(v, &grid)).collect();
                SideInput::Orders(orders)
            })
            .collect();
        let mut report = RoundReport::default();
        self.m.resolve_round(&inputs, &mut report);
        report
    }
}

/// `{"typ":"ATTACK","z":..,"na":..,"pocet":..}`
pub fn attack(z: &str, na: &str, pocet: f64) -> serde_json::Value {
    serde_json::json!({"typ": "ATTACK", "z": z, "na": na, "pocet": pocet})
}
pub fn mv(z: &str, na: &str, pocet: f64) -> serde_json::Value {
    serde_json::json!({"typ": "MOVE", "z": z, "na": na, "pocet": pocet})
}
pub fn fortify(pole: &str, investicia: f64) -> serde_json::Value {
    serde_json::json!({"typ": "FORTIFY", "pole": pole, "investicia": investicia})
}

/// How many processes have `marker` in their command line (Linux `/proc`).
pub fn processes_with(marker: &str) -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| std::fs::read(e.ok()?.path().join("cmdline")).ok())
        .filter(|c| String::from_utf8_lossy(c).contains(marker))
        .count()
}

/// A fresh, empty folder for one test: `gbely-test-PID-FILE-NAME` in the temporary folder, FILE
/// being the name of the test's file (`cli` for `cli.rs`). Each test program has its own PID, so
/// programs running side by side do not meet; the files of one program (tests/integration) share
/// its PID, and a name needs to be unique within its file only.
#[track_caller]
pub fn scratch(name: &str) -> PathBuf {
    let caller = std::path::Path::new(std::panic::Location::caller().file());
    let file = caller.file_stem().and_then(|s| s.to_str()).unwrap_or("test");
    let dir = std::env::temp_dir().join(format!("gbely-test-{}-{file}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
