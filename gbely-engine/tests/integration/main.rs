//! The engine's integration tests as one test program, each file here a module (as ripgrep's
//! `tests/`): every test program links the whole engine again, and one program links it once. A
//! new file of tests goes here as a module, not beside it as another `tests/*.rs`. One file's
//! tests: `cargo test -p gbely-engine --test integration cli::`.
//!
//! The modules' tests run side by side on libtest's threads, in one process. So a test leaves
//! alone what the whole process shares: the environment, the current folder, signal handlers, and
//! the engine's stop flag (after `runner::interrupt::request` every match of every test ends at
//! once, and nothing in a test lowers the flag again); its scratch folder comes from
//! [`common::scratch`], which names it after the test's file. Two programs stay apart
//! (gbely-engine/Cargo.toml says why): `tests/os_runner.rs` and `tests/sandbox.rs`.

#[path = "../common/mod.rs"]
mod common;

mod ab;
mod ab_forks;
mod agent_output;
mod architecture;
mod cli;
mod cli_runner;
mod council;
mod discards;
mod fair_runner;
mod final_mode;
mod fork;
mod fuzz_readers;
mod golden_playthrough;
mod hostile_files;
mod league;
mod notes;
mod processes;
mod properties;
mod reader_memory;
mod replays;
mod rerun;
mod resume;
mod rust_template;
mod session_conformance;
mod spec_examples;
mod tournament;
mod transfer;
mod viewer;
