//! Which Python interpreter runs Python agents: the one named (`--python`, `$GBELY_PYTHON`, the
//! default), resolved once to the executable it really runs.

use std::path::Path;

use super::{Result, RunError};

/// The interpreter run when none is named: `python3` on Unix; `python` on Windows, where
/// `python3` is often only the Store's installer stub (and the `py` launcher is tried when
/// `python` does not run, see [`resolve_python`]).
pub const DEFAULT_PYTHON: &str = if cfg!(windows) { "python" } else { "python3" };

/// The Python interpreter the user named: `--python`, else `$GBELY_PYTHON`, else [`DEFAULT_PYTHON`].
pub fn python(given: Option<&str>) -> String {
    given.map(str::to_string).or_else(|| std::env::var("GBELY_PYTHON").ok()).unwrap_or_else(|| DEFAULT_PYTHON.into())
}

/// The interpreter `python` names, resolved once to the executable it really runs
/// (`sys.executable`). A version manager's shim (pyenv, asdf) is then not run again at every
/// start of an agent, where its own start-up would count toward the agent's round. When the
/// interpreter runs but does not say, its name is kept; when it cannot be run at all, that is
/// the error, before any match.
///
/// On Windows, when the default `python` gives no interpreter, the `py` launcher is asked: it
/// names the newest Python installed, which agents then run with directly.
pub fn resolve_python(python: &str) -> Result<String> {
    let first = sys_executable(python);
    if cfg!(windows) && python == DEFAULT_PYTHON && !matches!(first, Ok(Some(_))) {
        if let Ok(Some(exe)) = sys_executable("py") {
            return Ok(exe);
        }
    }
    match first {
        Ok(exe) => Ok(exe.unwrap_or_else(|| python.to_string())),
        Err(error) => Err(RunError::NoPython { python: python.to_string(), error }),
    }
}

/// The `sys.executable` an interpreter reports; `None` when it runs but does not name a file.
fn sys_executable(python: &str) -> std::io::Result<Option<String>> {
    let out = std::process::Command::new(python)
        .args(["-c", "import sys; print(sys.executable)"])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()?;
    let exe = String::from_utf8_lossy(&out.stdout).trim().to_string();
    Ok((out.status.success() && !exe.is_empty() && Path::new(&exe).is_file()).then_some(exe))
}
