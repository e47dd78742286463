//! Who plays a seat and how: the `Player` trait and in-process players (`player`), agent
//! processes with their harness, time limits and violations (`process`, feature `runner`), serving a Rust agent over the line protocol
//! (`serve`), stopping a match on Ctrl-C (`interrupt`), and sharing the cores between the
//! agents of many matches (`cores`).

#[cfg(feature = "runner")]
pub mod cores;
pub mod interrupt;
#[cfg(feature = "runner")]
pub mod platform;
pub mod player;
#[cfg(feature = "runner")]
pub mod process;
#[cfg(feature = "runner")]
pub mod sandbox;
pub mod serve;
