//! The exceptions gbely raises about maps, agents and replays. They are defined in Python
//! (`gbely/_errors.py`) so that each can also be a `ValueError` (one base class per exception is
//! all a native exception type can have); here they are imported by name.

pyo3::import_exception_bound!(gbely._errors, Error);
pub use Error as GbelyError;
pyo3::import_exception_bound!(gbely._errors, MapError);
pyo3::import_exception_bound!(gbely._errors, AgentError);
pyo3::import_exception_bound!(gbely._errors, ReplayError);
pyo3::import_exception_bound!(gbely._errors, TimeLimitWarning);

/// An agent named by text (a file, `council`, `template`, `cmd:COMMAND`, …), read once where it
/// comes in from Python; what does not read is an `AgentError`.
pub fn agent_spec(text: &str) -> pyo3::PyResult<gbely_engine::app::runs::agent_spec::AgentSpec> {
    text.parse().map_err(|e: gbely_engine::app::runs::RunError| AgentError::new_err(e.to_string()))
}
