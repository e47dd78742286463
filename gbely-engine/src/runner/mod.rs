//! Who plays a seat and how: the `Player` trait and in-process players (`player`), agent
//! processes with their harness, time limits and violations (`process`, feature `runner`), serving a Rust agent over the line protocol
//! (`serve`), the sandbox and its system-call policy (`sandbox`, `seccomp`), stopping a match on Ctrl-C (`interrupt`), and sharing the cores between the
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
#[cfg(feature = "runner")]
pub mod seccomp;
pub mod serve;
