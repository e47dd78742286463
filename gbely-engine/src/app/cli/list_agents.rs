//! `gbely agents`: the agent files of a folder, with their names, versions and whether they would
//! pass the structural part of `gbely check` — the place to pick league entries from.

use super::*;
use crate::app::inspect::list_agent;

#[derive(Debug, Args)]
pub(super) struct AgentsArgs {
    /// The folder to list.
    #[arg(default_value = "agents")]
    dir: PathBuf,
    /// The Python interpreter that reads the files (default: $GBELY_PYTHON, else python3; on Windows python, else py).
    #[arg(long)]
    python: Option<String>,
    /// As one JSON document.
    #[arg(long)]
    json: bool,
}

pub(super) fn cmd_agents(a: AgentsArgs) -> Result<u8> {
    let py = python(a.python.as_deref());
    let mut files: Vec<PathBuf> = std::fs::read_dir(&a.dir)
        .with_context(|| format!("cannot list {}", a.dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "py") && p.is_file())
        .collect();
    files.sort();
    let mut listed = Vec::new();
    for f in &files {
        listed.push(list_agent(&py, f)?);
    }
    let mut out = std::io::stdout().lock();
    if a.json {
        serde_json::to_writer(&mut out, &json!({"dir": a.dir.display().to_string(), "agents": listed}))?;
        writeln!(out)?;
        return Ok(exit::OK);
    }
    if listed.is_empty() {
        writeln!(out, "no agent files (*.py) in {}", a.dir.display())?;
        return Ok(exit::OK);
    }
    // File names and what the files say (names, GAME_VERSION, syntax errors) are shown escaped.
    use crate::text::printable;
    for l in &mut listed {
        l.file = printable(&l.file).into_owned();
        l.why.iter_mut().for_each(|w| *w = printable(w).into_owned());
    }
    let fw = listed.iter().map(|l| l.file.chars().count()).max().unwrap_or(4).max(4);
    let nw = listed.iter().map(|l| l.name.chars().count()).max().unwrap_or(4).max(4);
    writeln!(out, "{:<fw$}  {:<nw$}  {:>9}  check", "file", "name", "size")?;
    for l in &listed {
        let why = if l.why.is_empty() { String::new() } else { format!(": {}", l.why.join("; ")) };
        writeln!(out, "{:<fw$}  {:<nw$}  {:>7} B  {}{why}", l.file, l.name, l.bytes, l.check)?;
    }
    writeln!(out, "(the source only: `gbely check FILE` also plays a short match with timings)")?;
    Ok(exit::OK)
}
