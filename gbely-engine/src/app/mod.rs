//! The application around the engine (feature `cli`): the `gbely` command line, and the run
//! set-up it shares with the Python package (naming maps and agents, run folders, results).

// `run_ab`'s doc links the private `COMMIT_PAIRS`; ab.rs was being moved when the docs were
// checked, so it was left alone. The fix is there: write `COMMIT_PAIRS` without the link, and
// drop this allow.
#[allow(rustdoc::private_intra_doc_links)]
pub mod ab;
pub mod cli;
pub mod inspect;
pub mod league;
pub mod rating;
pub mod runs;
pub mod service;
pub mod watch;
