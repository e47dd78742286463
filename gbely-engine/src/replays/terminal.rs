//! Replays in the terminal: seat colours and one character per cell.

use std::fmt::Write as _;

use gbely_rules::Terrain;
use gbely_world::{Map, Replay, SeatRole};

use super::Frame;
use crate::text::printable;

/// A seat's colour: for the viewer (hex) and for terminals (the nearest xterm-256 colour).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeatColor {
    /// `#rrggbb`, for the viewer.
    pub hex: &'static str,
    /// The nearest xterm-256 colour, for terminals.
    pub ansi: u8,
}

/// The one table of seat colours: armies in seat order, then the Council's blue. Chosen to stay
/// apart under colour-blindness and to stand out on the viewer's dark page: the Okabe–Ito colours
/// plus a violet and a mint, checked by a test that simulates protanopia, deuteranopia and
/// tritanopia (Machado et al. 2009), measures the distance of every pair in CIELAB and the
/// contrast of each colour against the page's backgrounds. (The table had a wine red and a
/// charcoal for seats 6 and 7, and a navy Council: the charcoal disappeared on the dark page.)
const ARMY_COLORS: [SeatColor; 8] = [
    SeatColor { hex: "#d55e00", ansi: 166 },
    SeatColor { hex: "#cc79a7", ansi: 175 },
    SeatColor { hex: "#e69f00", ansi: 178 },
    SeatColor { hex: "#009e73", ansi: 35 },
    SeatColor { hex: "#f0e442", ansi: 221 },
    SeatColor { hex: "#56b4e9", ansi: 74 },
    SeatColor { hex: "#9944ff", ansi: 99 },
    SeatColor { hex: "#88ff88", ansi: 120 },
];
const COUNCIL_COLOR: SeatColor = SeatColor { hex: "#6677dd", ansi: 68 };

/// The colour of a neutral cell of each terrain (light, so that the seats' colours stand out),
/// for the viewer and for terminals.
pub fn terrain_color(t: Terrain) -> SeatColor {
    match t {
        Terrain::Meadow => SeatColor { hex: "#e4eccf", ansi: 254 },
        Terrain::Hill => SeatColor { hex: "#d6c09a", ansi: 180 },
        Terrain::River => SeatColor { hex: "#b9dcee", ansi: 153 },
    }
}

impl SeatColor {
    /// Whether text on this colour should be dark (light backgrounds) rather than white.
    pub fn wants_dark_text(&self) -> bool {
        let v = u32::from_str_radix(&self.hex[1..], 16).unwrap_or(0);
        let (r, g, b) = ((v >> 16) & 255, (v >> 8) & 255, v & 255);
        // Rec. 601 luma, good enough to choose between black and white text.
        r * 299 + g * 587 + b * 114 > 150_000
    }
}

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
        replay.seats.iter().map(|x| printable(&x.name)).collect::<Vec<_>>().join(" vs "),
        printable(map.name()),
        map.width(),
        map.height()
    );
    let roles: Vec<SeatRole> = map.seats().iter().map(|s| s.role).collect();
    let colors = seat_colors(&roles);
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
                let c = if o >= 0 { colors[o as usize] } else { terrain_color(map.terrain(cell)) };
                if last != Some(c.ansi) {
                    let fg = if c.wants_dark_text() { 16 } else { 15 };
                    let _ = write!(s, "\x1b[48;5;{}m\x1b[38;5;{fg}m", c.ansi);
                    last = Some(c.ansi);
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
    for (k, (seat, c)) in replay.seats.iter().zip(&colors).enumerate() {
        let ansi = c.ansi;
        let cells = frame.cells_of(k as i8);
        let units: f64 = (0..g.len()).filter(|&i| frame.owner[i] == k as i8).map(|i| frame.units[i]).sum();
        let swatch = if color { format!("\x1b[48;5;{ansi}m  \x1b[0m ") } else { String::new() };
        let _ = writeln!(
            s,
            "{swatch}seat {k} {:<20} {:>5} cells {:>6.2} %  {:>9.1} units",
            printable(&seat.name),
            cells,
            cells as f64 / total * 100.0,
            units
        );
    }
    s
}

/// The key to [`render_frame`]'s characters and colours: one line per seat (swatch, digit, base
/// letter, name) and one for the neutral cells, in the same colours as the map and the viewer.
pub fn render_legend(replay: &Replay, map: &Map, color: bool) -> String {
    let roles: Vec<SeatRole> = map.seats().iter().map(|s| s.role).collect();
    let colors = seat_colors(&roles);
    let swatch = |c: SeatColor, text: &str| {
        if color {
            let fg = if c.wants_dark_text() { 16 } else { 15 };
            format!("\x1b[48;5;{}m\x1b[38;5;{fg}m{text}\x1b[0m", c.ansi)
        } else {
            text.to_string()
        }
    };
    let mut s = String::from("legend:");
    for (k, (seat, c)) in replay.seats.iter().zip(&colors).enumerate() {
        let glyphs = format!("{}{}", (b'0' + k as u8) as char, (b'A' + k as u8) as char);
        if k > 0 && k % 3 == 0 {
            s.push_str("\n       ");
        }
        let _ = write!(s, "  {} {} ({})", swatch(*c, &glyphs), printable(&seat.name), seat.role.wire());
    }
    s.push_str("\n       ");
    for t in Terrain::ALL {
        let _ = write!(s, "  {} {}", swatch(terrain_color(t), &t.glyph().to_string()), t.wire());
    }
    let _ = writeln!(s, "  {} neutral base", swatch(terrain_color(Terrain::Meadow), "b"));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// sRGB hex → CIELAB (D65), after an optional colour-vision-deficiency matrix applied in
    /// linear RGB (Machado, Oliveira & Fernandes 2009, severity 1).
    fn lab(hex: &str, cvd: &[[f64; 3]; 3]) -> [f64; 3] {
        let v = u32::from_str_radix(&hex[1..], 16).unwrap();
        let lin = |c: u32| {
            let c = c as f64 / 255.0;
            if c <= 0.04045 {
                c / 12.92
            } else {
                ((c + 0.055) / 1.055).powf(2.4)
            }
        };
        let rgb = [lin(v >> 16 & 255), lin(v >> 8 & 255), lin(v & 255)];
        let s: Vec<f64> = (0..3).map(|i| (0..3).map(|j| cvd[i][j] * rgb[j]).sum::<f64>().clamp(0.0, 1.0)).collect();
        let x = 0.4124 * s[0] + 0.3576 * s[1] + 0.1805 * s[2];
        let y = 0.2126 * s[0] + 0.7152 * s[1] + 0.0722 * s[2];
        let z = 0.0193 * s[0] + 0.1192 * s[1] + 0.9505 * s[2];
        let f = |t: f64| if t > 0.008856 { t.cbrt() } else { 7.787 * t + 16.0 / 116.0 };
        let (fx, fy, fz) = (f(x / 0.95047), f(y), f(z / 1.08883));
        [116.0 * fy - 16.0, 500.0 * (fx - fy), 200.0 * (fy - fz)]
    }

    const VISIONS: [(&str, [[f64; 3]; 3]); 4] = [
        ("normal", [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]),
        (
            "protanopia",
            [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]],
        ),
        (
            "deuteranopia",
            [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.011820, 0.042940, 0.968881]],
        ),
        (
            "tritanopia",
            [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602], [0.004733, 0.691367, 0.303900]],
        ),
    ];

    fn distance(a: &str, b: &str, cvd: &[[f64; 3]; 3]) -> f64 {
        let (p, q) = (lab(a, cvd), lab(b, cvd));
        ((p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2) + (p[2] - q[2]).powi(2)).sqrt()
    }

    #[test]
    fn seat_colours_stay_apart_under_colour_blindness() {
        // A final: eight armies and the Council. ΔE (CIE76) of 10 is clearly visible side by side;
        // the table keeps every pair of seats at least 15 apart for every vision (16.1 at the
        // closest: bluish green and sky blue for tritanopes; the old table's wine red and charcoal
        // were 13.6 apart for deuteranopes).
        let mut roles = vec![SeatRole::Army; 8];
        roles.push(SeatRole::Council);
        let seats: Vec<&str> = seat_colors(&roles).iter().map(|c| c.hex).collect();
        let terrain: Vec<&str> = Terrain::ALL.iter().map(|&t| terrain_color(t).hex).collect();
        for (vision, m) in &VISIONS {
            for (i, a) in seats.iter().enumerate() {
                for b in &seats[i + 1..] {
                    let d = distance(a, b, m);
                    assert!(d >= 15.0, "{vision}: seats {a} and {b} are {d:.1} apart");
                }
                for t in &terrain {
                    let d = distance(a, t, m);
                    assert!(d >= 10.0, "{vision}: seat {a} and terrain {t} are {d:.1} apart");
                }
            }
        }
        // The test can fail: the old table had orange and olive 7.2 apart for deuteranopes.
        assert!(distance("#ff7f0e", "#bcbd22", &VISIONS[2].1) < 12.0);
    }

    /// WCAG 2 contrast ratio of two colours, after a colour-vision-deficiency matrix.
    fn contrast(a: &str, b: &str, cvd: &[[f64; 3]; 3]) -> f64 {
        // The L* of `lab` back to relative luminance Y.
        let y = |hex: &str| {
            let l = lab(hex, cvd)[0];
            let fy = (l + 16.0) / 116.0;
            if fy > 0.206893 {
                fy.powi(3)
            } else {
                (fy - 16.0 / 116.0) / 7.787
            }
        };
        let (p, q) = (y(a), y(b));
        (p.max(q) + 0.05) / (p.min(q) + 0.05)
    }

    /// The viewer page's dark backgrounds (`--bg`, `--panel`, `--map`, `--fog` in its
    /// stylesheet), read from the template so that the test follows the page.
    fn page_backgrounds() -> Vec<String> {
        let page = include_str!("viewer.html");
        ["--bg", "--panel", "--map", "--fog"]
            .iter()
            .map(|var| {
                let at = page.find(&format!("{var}: #")).unwrap_or_else(|| panic!("viewer.html sets {var}"));
                page[at + var.len() + 2..at + var.len() + 9].to_string()
            })
            .collect()
    }

    #[test]
    fn seat_colours_stand_out_on_the_page_background() {
        // WCAG 2's 3:1 for the parts of a graphic that must be seen (1.4.11), for every vision:
        // the swatches, the chart lines and the owned cells next to the fog.
        let mut roles = vec![SeatRole::Army; 8];
        roles.push(SeatRole::Council);
        let backgrounds = page_backgrounds();
        assert_eq!(backgrounds.len(), 4);
        for (vision, m) in &VISIONS {
            for c in seat_colors(&roles) {
                for bg in &backgrounds {
                    let k = contrast(c.hex, bg, m);
                    assert!(k >= 3.0, "{vision}: seat {} on {bg}: contrast {k:.2}", c.hex);
                }
            }
        }
        // The test can fail: the old table's charcoal seat 7 on the panel.
        assert!(contrast("#333333", "#1d2026", &VISIONS[0].1) < 1.5);
    }

    #[test]
    fn text_colour_follows_the_background() {
        assert!(terrain_color(Terrain::Meadow).wants_dark_text());
        assert!(!COUNCIL_COLOR.wants_dark_text());
        assert!(ARMY_COLORS[4].wants_dark_text(), "yellow");
    }
}
