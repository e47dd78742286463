//! `gbely agents`: the agent files of a folder, with their names, versions and whether they would
//! pass the structural part of `gbely check` — the place to pick league entries from.

use super::*;
use crate::app::inspect::{inspect_source, isolation_warnings, AgentMeta};

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

/// One agent file: what it says of itself, and what the check would say of its source.
#[derive(Debug, serde::Serialize)]
struct Listed {
    file: String,
    name: String,
    meta: AgentMeta,
    bytes: u64,
    /// `ok`, `warn` (optional imports, a GAME_VERSION for other rules, network or process use)
    /// or `fail`.
    check: &'static str,
    /// Why it would fail or warn.
    why: Vec<String>,
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
        let file = f.file_name().map_or(String::new(), |n| n.to_string_lossy().into_owned());
        let bytes = std::fs::metadata(f).map_or(0, |m| m.len());
        let report = inspect_source(&py, f)?;
        let meta = AgentMeta::of(&report);
        let mut fail = Vec::new();
        let mut warn = Vec::new();
        if bytes > constants::MAX_SUBMISSION_BYTES {
            fail.push(format!("{bytes} bytes: more than 512 KiB"));
        }
        if let Some(e) = report["syntax_error"].as_str() {
            fail.push(format!("does not parse: {e}"));
        } else if let Some(p) = report["decide"]["problem"].as_str() {
            fail.push(p.to_string());
        } else if report["decide"].is_null() {
            fail.push("no top-level function decide(stav)".into());
        }
        let list = |k: &str| -> Vec<String> {
            report[k].as_array().into_iter().flatten().filter_map(|x| x.as_str().map(String::from)).collect()
        };
        if !list("non_stdlib").is_empty() {
            fail.push(format!("imports outside the standard library: {}", list("non_stdlib").join(", ")));
        }
        if !list("optional").is_empty() {
            warn.push(format!("optional imports: {}", list("optional").join(", ")));
        }
        warn.extend(meta.game_version_warning(&file));
        warn.extend(isolation_warnings(&report));
        let check = if !fail.is_empty() {
            "fail"
        } else if !warn.is_empty() {
            "warn"
        } else {
            "ok"
        };
        fail.extend(warn);
        listed.push(Listed { name: meta.display_name(&file), file, meta, bytes, check, why: fail });
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
