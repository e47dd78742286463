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
    // Semantic errors: a seat whose base is not a base cell.
    check_err(&SMALL.replace("...B\n", "....\n"), 1, "not a base cell");
    // An extra base that nobody owns: fine with no garrison, refused with one.
    let extra = SMALL.replace(".^~.", "B^~.");
    assert!(parse_map_file(&extra.replace("4 5 6 7", "0 5 6 7")).is_ok());
    check_err(&extra, 1, "P01_00: a neutral base has no garrison");
}

#[test]
fn the_text_rendering_shows_terrain_garrisons_and_seats() {
    let m = parse_map_file(SMALL).unwrap();
    let text = render_map(&m);
    let rows: Vec<&str> = text.lines().skip(2).collect();
    assert_eq!(rows, [".1.2.3C1", ".4^5~6.7", "A0.8.1.2"]);
    assert!(text.starts_with("tiny — 4×3, fingerprint "));
}
