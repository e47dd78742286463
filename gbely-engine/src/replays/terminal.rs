//! Replays in the terminal: seat colours and one character per cell.

use std::fmt::Write as _;

use gbely_rules::Terrain;
use gbely_world::{Map, Replay, SeatRole};

use super::Frame;

/// A seat's colour: for the viewer (hex) and for terminals (the nearest xterm-256 colour).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeatColor {
    pub hex: &'static str,
    pub ansi: u8,
}

/// The one table of seat colours: armies in seat order, then the Council's blue.
const ARMY_COLORS: [SeatColor; 8] = [
    SeatColor { hex: "#d62728", ansi: 160 },
    SeatColor { hex: "#8e44ad", ansi: 129 },
    SeatColor { hex: "#ff7f0e", ansi: 208 },
    SeatColor { hex: "#17becf", ansi: 37 },
    SeatColor { hex: "#e377c2", ansi: 170 },
    SeatColor { hex: "#bcbd22", ansi: 142 },
    SeatColor { hex: "#8c564b", ansi: 94 },
    SeatColor { hex: "#00a86b", ansi: 240 },
];
const COUNCIL_COLOR: SeatColor = SeatColor { hex: "#1f3fbf", ansi: 26 };

/// The colour of each seat of a map, by role: armies take the table in order.
pub fn seat_colors(roles: &[SeatRole]) -> Vec<SeatColor> {
    let mut armies = 0;
    roles
        .iter()
        .map(|r| match r {
            SeatRole::Council => COUNCIL_COLOR,
            SeatRole::Army => {
                armies += 1;
                ARMY_COLORS[(armies - 1) % ARMY_COLORS.len()]
            }
        })
        .collect()
}

/// A frame for terminals: one character per cell (neutral: `.` `^` `~` by terrain; owned: the
/// seat's digit; a base: the seat's letter `A`, `B`, …, `b` for a neutral base), with ANSI
/// colours when `color` is set, and a figures line per seat.
pub fn render_frame(replay: &Replay, map: &Map, frame: &Frame, round: Option<u32>, color: bool) -> String {
    let g = map.grid();
    let mut s = String::new();
    let label = round.map_or("the start".to_string(), |r| format!("the end of round {r}"));
    let _ = writeln!(
        s,
        "{} on {} ({}×{}) at {label}",
        replay.seats.iter().map(|x| x.name.as_str()).collect::<Vec<_>>().join(" vs "),
        map.name(),
        map.width(),
        map.height()
    );
    let roles: Vec<SeatRole> = map.seats().iter().map(|s| s.role).collect();
    let colors: Vec<u8> = seat_colors(&roles).iter().map(|c| c.ansi).collect();
    for r in 0..g.height() {
        let mut last: Option<u8> = None;
        for c in 0..g.width() {
            let cell = g.cell(r, c);
            let i = cell.index();
            let o = frame.owner[i];
            let ch = match (o, map.is_base(cell)) {
                (-1, true) => 'b',
                (-1, false) => map.terrain(cell).glyph(),
                (k, true) => (b'A' + k as u8) as char,
                (k, false) => (b'0' + k as u8) as char,
            };
            if color {
                let bg = if o >= 0 {
                    colors[o as usize]
                } else {
                    match map.terrain(cell) {
                        Terrain::Meadow => 22,
                        Terrain::Hill => 94,
                        Terrain::River => 24,
                    }
                };
                if last != Some(bg) {
                    let _ = write!(s, "\x1b[48;5;{bg}m\x1b[38;5;15m");
                    last = Some(bg);
                }
            }
            s.push(ch);
        }
        if color {
            s.push_str("\x1b[0m");
        }
        s.push('\n');
    }
    let total = g.len() as f64;
    for (k, (seat, ansi)) in replay.seats.iter().zip(&colors).enumerate() {
        let cells = frame.cells_of(k as i8);
        let units: f64 = (0..g.len()).filter(|&i| frame.owner[i] == k as i8).map(|i| frame.units[i]).sum();
        let swatch = if color { format!("\x1b[48;5;{ansi}m  \x1b[0m ") } else { String::new() };
        let _ = writeln!(
            s,
            "{swatch}seat {k} {:<20} {:>5} cells {:>6.2} %  {:>9.1} units",
            seat.name,
            cells,
            cells as f64 / total * 100.0,
            units
        );
    }
    s
}
