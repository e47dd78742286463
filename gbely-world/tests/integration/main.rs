//! The world crate's integration tests as one test program, each file here a module: one program
//! to link instead of one per file. A new file of tests goes here as a module. One file's tests:
//! `cargo test -p gbely-world --test integration golden_maps::`.

mod geography;
mod golden_maps;
mod map_file;
