//! # agents
//!
//! Example agents. The Python files next to this crate (`my_agent.py`, `expander.py`) and the
//! Rust [`Decide`](gbely_rules::Decide) implementations here play the same strategies:
//!
//! * [`Template`] — the template of the rules (`my_agent.py`): every cell attacks its weakest
//!   visible neighbour with everything it has, when that is more than the neighbour's defence.
//!   It plans nothing, and loses to the Council.
//! * [`Expander`] — takes the cheapest valuable cells with the smallest force that surely wins,
//!   lets several cells strike together, and moves the interior's units to the front.
//!   It beats the Council on the reference map.

mod expander;
mod template;

pub use expander::Expander;
pub use template::Template;

/// The Python template agent (`agents/my_agent.py`).
pub const MY_AGENT_PY: &str = include_str!("../my_agent.py");
/// The Python expander (`agents/expander.py`).
pub const EXPANDER_PY: &str = include_str!("../expander.py");
