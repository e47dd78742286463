//! Pictures of a match for `render()`: one colour per cell, the referee's view (every cell, not
//! one seat's observation), in the viewer's colours.

use gbely_engine::replays::{seat_colors, terrain_color};
use gbely_engine::sim::Match;
use gbely_world::{Map, SeatRole};

/// `#rrggbb` as bytes.
fn rgb(hex: &str) -> [u8; 3] {
    let v = u32::from_str_radix(hex.trim_start_matches('#'), 16).unwrap_or(0);
    [(v >> 16) as u8, (v >> 8) as u8, v as u8]
}

/// The colour of a base's mark: dark on every seat's and terrain's colour.
const BASE_MARK: [u8; 3] = [20, 22, 26];

/// An RGB picture of the match, `scale` pixels a cell, row-major (`height·scale × width·scale ×
/// 3`): an owned cell in its seat's colour, a neutral one in its terrain's, and each seat's base
/// with a dark square in its middle (when a cell has 3 pixels or more).
pub(crate) fn picture(map: &Map, state: &Match, scale: usize) -> Vec<u8> {
    let (h, w) = (map.height() as usize, map.width() as usize);
    let roles: Vec<SeatRole> = map.seats().iter().map(|s| s.role).collect();
    let seats: Vec<[u8; 3]> = seat_colors(&roles).iter().map(|c| rgb(c.hex)).collect();
    let grid = map.grid();
    let row_bytes = w * scale * 3;
    let mut out = vec![0u8; h * scale * row_bytes];
    for (i, &o) in state.owners().iter().enumerate() {
        let cell = gbely_rules::Cell(i as u32);
        let colour = seats.get(o as usize).copied().unwrap_or_else(|| rgb(terrain_color(map.terrain(cell)).hex));
        let (r, c) = grid.row_col(cell);
        let (r, c) = (r as usize, c as usize);
        for y in 0..scale {
            let line = &mut out[(r * scale + y) * row_bytes + c * scale * 3..][..scale * 3];
            for px in line.chunks_exact_mut(3) {
                px.copy_from_slice(&colour);
            }
        }
    }
    if scale >= 3 {
        let (from, to) = (scale / 3, scale - scale / 3);
        for seat in map.seats() {
            let (r, c) = grid.row_col(seat.base);
            let (r, c) = (r as usize, c as usize);
            for y in from..to {
                let line = &mut out[(r * scale + y) * row_bytes + (c * scale + from) * 3..][..(to - from) * 3];
                for px in line.chunks_exact_mut(3) {
                    px.copy_from_slice(&BASE_MARK);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    use gbely_engine::sim::MatchConfig;

    #[test]
    fn a_cell_is_its_owners_colour_and_a_base_is_marked() {
        let map = Arc::new(gbely_world::reference_map());
        let m = Match::new(map.clone(), MatchConfig { rounds: 150 });
        let scale = 4;
        let px = picture(&map, &m, scale);
        let w = map.width() as usize;
        assert_eq!(px.len(), map.height() as usize * scale * w * scale * 3);
        let at = |r: usize, c: usize, y: usize, x: usize| {
            let i = ((r * scale + y) * w * scale + c * scale + x) * 3;
            [px[i], px[i + 1], px[i + 2]]
        };
        // Seat 0's base (P57_02) belongs to seat 0 from the start: its corner pixel is seat 0's
        // colour (#d55e00), its middle the base's mark.
        assert_eq!(at(57, 2, 0, 0), [0xd5, 0x5e, 0x00]);
        assert_eq!(at(57, 2, 2, 2), BASE_MARK);
    }
}
