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
    let out = isolated(python)
        .args(["-c", "import sys; print(sys.executable)"])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()?;
    let exe = String::from_utf8_lossy(&out.stdout).trim().to_string();
    Ok((out.status.success() && !exe.is_empty() && Path::new(&exe).is_file()).then_some(exe))
}

/// A command that runs `python` on gbely's own behalf (the interpreter probe, reading an agent's
/// source, `gbely pack`), isolated from every file a user or an agent put anywhere: `-I` (no
/// `PYTHON*` variables, no user site, neither the working folder nor a script's folder on
/// `sys.path`) and started in a folder of no one's (`/`; the temporary folder on Windows). So
/// a `json.py`, `ast.py`, `sitecustomize.py` or `encodings/` beside an agent or in the folder
/// gbely was started in is never imported: no agent code runs outside the sandbox. Paths given
/// to it must be absolute.
pub fn isolated(python: &str) -> std::process::Command {
    let mut c = std::process::Command::new(python);
    c.arg("-I").current_dir(neutral_folder());
    c
}

/// A folder no user or agent writes: the root on Unix, the temporary folder on Windows.
fn neutral_folder() -> std::path::PathBuf {
    if cfg!(windows) {
        std::env::temp_dir()
    } else {
        std::path::PathBuf::from("/")
    }
}
