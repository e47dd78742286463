//! `gbely pack`: a policy's weights into one standard-library agent file. The work is the Python
//! package's `gbely.pack` (it reads numpy files and times the packed agent's pure-Python
//! inference), run here with the user's Python, isolated (`python -I` in a folder of no one's:
//! see [`isolated`]) so that no module in the working folder is imported; `python -m gbely pack`
//! runs it directly.

use super::*;
use crate::app::runs::interpreter::isolated;

pub(super) fn cmd_pack(a: PackArgs) -> Result<u8> {
    let py = resolve_python(&python(a.python.as_deref()))?;
    let found = isolated(&py)
        .args(["-c", "import gbely.pack"])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .with_context(|| format!("cannot run {py}"))?;
    if !found.success() {
        bail!(
            "`gbely pack` is part of the Python package: pip install gbely for {py} (or name another Python with \
             --python); it runs isolated (`python -I`), so a package in the user site or the current folder is not seen"
        );
    }
    // Started in another folder: the paths are made absolute from here.
    let here = std::env::current_dir().context("cannot read the current folder")?;
    let mut cmd = isolated(&py);
    cmd.args(["-m", "gbely.pack"])
        .arg(here.join(&a.policy))
        .arg(here.join(&a.agent))
        .arg("-o")
        .arg(here.join(&a.output));
    cmd.args(["--rounds", &a.rounds.to_string()]);
    cmd.args(["--dtype", &a.dtype]);
    if a.no_timing {
        cmd.arg("--no-timing");
    }
    let status = cmd.status().with_context(|| format!("cannot run {py}"))?;
    Ok(if status.success() { exit::OK } else { exit::ERROR })
}
