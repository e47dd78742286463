//! Prints a generated map and its figures: `cargo run -p gbely-world --example show_map -- SEED [W H]`.
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let map = match args.first().map(String::as_str) {
        None | Some("gbely") => gbely_world::reference_map(),
        Some(seed) => {
            let w = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(60);
            let h = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(w);
            gbely_world::generate_duel(seed, w, h).expect("valid size")
        }
    };
    print!("{}", gbely_world::render_map(&map));
    print!("{}", gbely_world::MapStats::of(&map));
}
