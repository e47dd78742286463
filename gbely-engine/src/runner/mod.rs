//! Running agents outside the engine: agent processes with their harness, time limits and
//! violations (`process`, feature `runner`), serving a Rust agent over the line protocol
//! (`serve`), and stopping a match on Ctrl-C (`interrupt`).

pub mod interrupt;
#[cfg(feature = "runner")]
pub mod process;
pub mod serve;
