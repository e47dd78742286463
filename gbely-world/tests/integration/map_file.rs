//! The map file format: round trips, and malformed files refused with the line or cell at fault.

use gbely_world::{generate_duel, parse_map_file, reference_map, render_map, write_map_file};

const SMALL: &str = "\
gbely-map 1
# a comment line
name tiny
size 4 3          # width height
seat army P02_00
seat council P00_03
terrain
...B
.^~.
B...
garrison
1 2 3 0
4 5 6 7
0 8 1 2
end
";

fn check_err(text: &str, line: usize, words: &str) {
    let e = parse_map_file(text).expect_err("must be refused");
    assert_eq!(e.line, line, "{e}");
    assert!(e.to_string().contains(words), "`{e}` should mention `{words}`");
}

#[test]
fn maps_round_trip_through_the_file_format() {
    for m in [reference_map(), generate_duel("x", 33, 21).unwrap(), generate_duel("y", 120, 100).unwrap()] {
        let text = write_map_file(&m);
        let back = parse_map_file(&text).unwrap();
        assert_eq!(back, m);
        assert_eq!(back.fingerprint(), m.fingerprint());
        assert_eq!(write_map_file(&back), text);
    }
}

#[test]
fn a_small_hand_written_map_reads_as_written() {
    let m = parse_map_file(SMALL).unwrap();
    let g = m.grid();
    assert_eq!((m.width(), m.height(), m.name()), (4, 3, "tiny"));
    assert_eq!(g.id(m.seats()[0].base), "P02_00");
    assert_eq!(m.garrison(g.parse("P02_01").unwrap()), 8);
    assert_eq!(m.terrain(g.parse("P01_01").unwrap()), gbely_rules::Terrain::Hill);
    assert_eq!(m.terrain(g.parse("P01_02").unwrap()), gbely_rules::Terrain::River);
    assert_eq!(m.start_owner(g.parse("P00_03").unwrap()), Some(1));
    assert_eq!(m.start_owner(g.parse("P00_00").unwrap()), None);
}

#[test]
fn malformed_files_name_the_line_and_cell() {
    check_err("hello\n", 1, "first line");
    check_err(&SMALL.replace("gbely-map 1", "gbely-map 7"), 1, "version 7");
    check_err(&SMALL.replace("size 4 3", "size 4 x"), 4, "bad size");
    check_err(&SMALL.replace("seat army P02_00", "seat army P09_00"), 5, "P09_00");
    check_err(&SMALL.replace("seat army", "seat navy"), 5, "navy");
    check_err(&SMALL.replace(".^~.", ".^X."), 9, "P01_02");
    check_err(&SMALL.replace(".^~.", ".^~"), 9, "3 cells, expected 4");
    check_err(&SMALL.replace("4 5 6 7", "4 5 six 7"), 13, "P01_02");
    check_err(&SMALL.replace("4 5 6 7", "4 5 6"), 13, "3 values");
    check_err(&SMALL.replace("end\n", ""), 14, "file ends early");
    check_err(&format!("{SMALL}more\n"), 16, "after `end`");
}

/// Regression: errors found when the whole map is checked (seats, bases, owners) named line 1,
/// whatever line was at fault.
#[test]
fn seat_and_base_errors_name_the_line_at_fault() {
    // Seat 1 (line 6) sits on P00_03, which the terrain no longer marks as a base.
    check_err(&SMALL.replace("...B\n", "....\n"), 6, "seat 1: P00_03 is not a base cell");
    // Seat 1 on seat 0's base: the second seat line is at fault.
    check_err(&SMALL.replace("seat council P00_03", "seat council P02_00"), 6, "seat 1: base P02_00 is another");
    // An extra base that nobody owns: fine with no garrison, refused with one (garrison row 1 is line 13).
    let extra = SMALL.replace(".^~.", "B^~.");
    assert!(parse_map_file(&extra.replace("4 5 6 7", "0 5 6 7")).is_ok());
    check_err(&extra, 13, "P01_00: a neutral base has no garrison");
    // Owners (rows on lines 16–18): seat 0's base given to seat 1 on row 2, a seat that does not
    // exist on row 1.
    let owned = SMALL.replace("end\n", "owners\n...1\n....\n0...\nend\n");
    assert!(parse_map_file(&owned).is_ok());
    check_err(&owned.replace("0...\nend", "1...\nend"), 18, "seat 0: its base P02_00 is not its own");
    check_err(&owned.replace("\n....\n0...", "\n..5.\n0..."), 17, "cell P01_02: owner seat 5 does not exist");
    // One seat only: the line where the seats end (`terrain`, line 6).
    check_err(&SMALL.replace("seat council P00_03\n", ""), 6, "at least 2 seats");
}

#[test]
fn a_file_with_a_byte_order_mark_or_crlf_line_ends_reads_the_same() {
    let plain = parse_map_file(SMALL).unwrap();
    assert_eq!(parse_map_file(&format!("\u{feff}{SMALL}")).unwrap(), plain);
    assert_eq!(parse_map_file(&format!("\u{feff}{}", SMALL.replace('\n', "\r\n"))).unwrap(), plain);
    // Errors still count lines from the first.
    check_err(&format!("\u{feff}{}", SMALL.replace("size 4 3", "size 4 x")), 4, "bad size");
}

#[test]
fn the_text_rendering_shows_terrain_garrisons_and_seats() {
    let m = parse_map_file(SMALL).unwrap();
    let text = render_map(&m);
    let rows: Vec<&str> = text.lines().skip(2).collect();
    assert_eq!(rows, [".1.2.3C1", ".4^5~6.7", "A0.8.1.2"]);
    assert!(text.starts_with("tiny — 4×3, fingerprint "));
}
