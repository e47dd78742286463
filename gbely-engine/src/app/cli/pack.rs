//! `gbely pack`: a policy's weights into one standard-library agent file. The work is the Python
//! package's `gbely.pack` (it reads numpy files and times the packed agent's pure-Python
//! inference), run here with the user's Python; `python -m gbely pack` runs it directly.

use super::*;

pub(super) fn cmd_pack(a: PackArgs) -> Result<u8> {
    let py = resolve_python(&python(a.python.as_deref()))?;
    let found = std::process::Command::new(&py)
        .args(["-c", "import gbely.pack"])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .with_context(|| format!("cannot run {py}"))?;
    if !found.success() {
        bail!("`gbely pack` is part of the Python package: pip install gbely for {py} (or name another Python with --python)");
    }
    let mut cmd = std::process::Command::new(&py);
    cmd.args(["-m", "gbely.pack"]).arg(&a.policy).arg(&a.agent).arg("-o").arg(&a.output);
    cmd.args(["--rounds", &a.rounds.to_string()]);
    if a.no_timing {
        cmd.arg("--no-timing");
    }
    let status = cmd.status().with_context(|| format!("cannot run {py}"))?;
    Ok(if status.success() { exit::OK } else { exit::ERROR })
}
