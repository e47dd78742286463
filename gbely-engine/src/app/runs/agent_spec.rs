//! What an agent spec names — an agent file, an example (`template`, `expander`), a built-in
//! agent or a `cmd:` command —, its display name, the check that it can run before anything is
//! written, and how it is started ([`resolve_agent`]).

use crate::builtins::builtin_of;
use std::path::Path;

use super::program::{absolute_words, check_program, command_program, windows_words};
use super::{Result, RunError};
use crate::runner::process::AgentCommand;

/// The example agents shipped inside the binary, usable by name (from the `agents` crate).
const TEMPLATE_PY: &str = agents::MY_AGENT_PY;
const EXPANDER_PY: &str = agents::EXPANDER_PY;

/// The file an agent spec names: `None` for a built-in agent, an example (`template`,
/// `expander`) or a `cmd:` command.
pub fn agent_file(spec: &str) -> Option<&Path> {
    let named = builtin_of(spec).is_some() || spec == "template" || spec == "expander" || spec.starts_with("cmd:");
    (!named).then(|| Path::new(spec))
}

/// Whether an agent spec is run by the Python interpreter (an agent file, `template`, `expander`).
pub fn is_python_agent(spec: &str) -> bool {
    spec == "template" || spec == "expander" || (!spec.starts_with("cmd:") && spec.ends_with(".py"))
}

/// A short display name for an agent spec (its file name, control characters shown escaped).
pub fn agent_name(spec: &str) -> String {
    let name = if let Some(cmd) = spec.strip_prefix("cmd:") {
        cmd.split_whitespace()
            .next()
            .map(|p| Path::new(p).file_name().map_or(p.to_string(), |f| f.to_string_lossy().into()))
            .unwrap_or_default()
    } else {
        Path::new(spec).file_name().map_or(spec.to_string(), |f| f.to_string_lossy().into_owned())
    };
    crate::text::printable(&name).into_owned()
}

pub fn file_stem(spec: &str) -> String {
    let n = agent_name(spec);
    n.strip_suffix(".py")
        .unwrap_or(&n)
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
        .collect()
}

/// What a user's agent spec names.
#[derive(Debug)]
pub enum AgentSpec {
    /// A built-in agent played in-process: `council`, `template-rs`, `expander-rs`.
    Builtin(&'static str),
    Process(AgentCommand),
}

/// Refuses a spec naming a file that is not there, or a `cmd:` command whose program cannot be
/// run, before anything is written: the match would only end in a disqualification.
pub fn check_spec(spec: &str) -> Result<()> {
    if let Some(cmd) = spec.strip_prefix("cmd:") {
        if cmd.trim().is_empty() {
            return Err(RunError::EmptyCommand);
        }
        let program = if cfg!(windows) { windows_words(cmd).into_iter().next() } else { command_program(cmd) };
        if let Some(program) = program {
            check_program(&program).map_err(|why| RunError::ProgramCannotRun { spec: spec.to_string(), why })?;
        }
        return Ok(());
    }
    let Some(path) = agent_file(spec) else { return Ok(()) };
    if !path.exists() {
        return Err(RunError::AgentNotFound(spec.to_string()));
    }
    if path.is_dir() {
        return Err(RunError::AgentIsAFolder(spec.to_string()));
    }
    // A named pipe or a device would block gbely (or never end) when it is read or copied.
    crate::files::check_regular(path)
        .map_err(|e| RunError::AgentNotAFile { spec: spec.to_string(), why: e.to_string() })?;
    // A file that is not Python runs as a program: it must be executable, and a script's
    // interpreter must exist.
    if cfg!(not(windows)) && !spec.ends_with(".py") {
        let program = if spec.contains('/') { spec.to_string() } else { format!("./{spec}") };
        check_program(&program).map_err(|why| RunError::ProgramCannotRun { spec: spec.to_string(), why })?;
    }
    Ok(())
}

/// Why an agent could not be prepared in `dir`.
pub(super) fn prepare(spec: &str, dir: &Path, error: std::io::Error) -> RunError {
    RunError::Prepare { spec: spec.to_string(), dir: dir.display().to_string(), error }
}

pub fn resolve_agent(spec: &str, run_dir: &Path, seat: usize, py: &str) -> Result<AgentSpec> {
    if let Some(b) = builtin_of(spec) {
        return Ok(AgentSpec::Builtin(b));
    }
    if let Some(cmd) = spec.strip_prefix("cmd:") {
        if cmd.trim().is_empty() {
            return Err(RunError::EmptyCommand);
        }
        let here = std::env::current_dir().map_err(|error| prepare(spec, run_dir, error))?;
        if cfg!(windows) {
            // No shell: the program runs with its words; those naming files here become absolute.
            let mut words = windows_words(cmd).into_iter().map(|w| {
                let candidate = here.join(&w);
                if !w.starts_with(['-', '/']) && candidate.exists() {
                    candidate.to_string_lossy().into_owned()
                } else {
                    w
                }
            });
            let program = words.next().ok_or(RunError::EmptyCommand)?;
            return Ok(AgentSpec::Process(AgentCommand::Exec { program, args: words.collect() }));
        }
        let cmd = absolute_words(cmd, &here);
        return Ok(AgentSpec::Process(AgentCommand::Exec {
            program: "/bin/sh".into(),
            args: vec!["-c".into(), format!("exec {cmd}")],
        }));
    }
    let builtin = match spec {
        "template" => Some(TEMPLATE_PY),
        "expander" => Some(EXPANDER_PY),
        _ => None,
    };
    if let Some(text) = builtin {
        let file = run_dir.join(format!("seat{seat}-{spec}.py"));
        std::fs::create_dir_all(run_dir).map_err(|error| prepare(spec, run_dir, error))?;
        std::fs::write(&file, text).map_err(|error| prepare(spec, run_dir, error))?;
        return Ok(AgentSpec::Process(AgentCommand::Python { file, python: py.to_string() }));
    }
    check_spec(spec)?;
    let path = Path::new(spec);
    let abs = std::fs::canonicalize(path).map_err(|error| prepare(spec, run_dir, error))?;
    if spec.ends_with(".py") {
        Ok(AgentSpec::Process(AgentCommand::Python { file: abs, python: py.to_string() }))
    } else {
        Ok(AgentSpec::Process(AgentCommand::Exec { program: abs.to_string_lossy().into_owned(), args: Vec::new() }))
    }
}
