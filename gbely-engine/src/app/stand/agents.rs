//! The stand's folder: its agent files (`*.py`) and map files (`*.map`), looked at every second,
//! each file read (`gbely agents`' listing) when it is new or changed and checked (`gbely check`'s
//! test match) in the background; and the one way a name from the page becomes a path.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde_json::{json, Value};

use crate::app::check::CheckReport;
use crate::app::entries::content_id;
use crate::app::inspect::Listed;

/// Why a name from the page is not a file of the folder.
pub fn refusal(name: &str) -> Option<&'static str> {
    if name.is_empty() || name.len() > 255 {
        return Some("not a file name");
    }
    if name.contains(['/', '\\', '\0']) || name == "." || name == ".." {
        return Some("a file name, not a path: the stand plays only the files of its folder");
    }
    if name.starts_with('.') {
        return Some("hidden files are not played");
    }
    None
}

/// The path of the file `name` of `folder` (canonical), refusing names that are paths and files
/// that lead out of the folder (a symbolic link to elsewhere), or that are not regular files.
pub fn resolve(folder: &Path, name: &str) -> Result<PathBuf, String> {
    if let Some(why) = refusal(name) {
        return Err(format!("`{name}`: {why}"));
    }
    let path = folder.join(name);
    let real = path.canonicalize().map_err(|e| format!("`{name}`: not in the folder ({e})"))?;
    if real.parent() != Some(folder) {
        return Err(format!("`{name}` leads out of the folder (a link to {}): refused", real.display()));
    }
    if !real.is_file() {
        return Err(format!("`{name}` is not a regular file"));
    }
    Ok(real)
}

/// Where a file's full check stands.
#[derive(Clone, Debug)]
pub enum Check {
    /// Waits for the checker.
    Waiting,
    Running,
    Done(Box<CheckReport>),
    /// The check could not run (the file vanished, the interpreter is missing).
    Failed(String),
    /// The source fails already: no test match is played.
    Skipped,
}

/// One agent file of the folder.
#[derive(Clone, Debug)]
pub struct AgentFile {
    pub file: String,
    pub bytes: u64,
    pub modified: Option<SystemTime>,
    /// The content's identity, as a league's entry ([`content_id`]).
    pub hash: String,
    /// `gbely agents`' line of it, or why it could not be read or is refused.
    pub listed: Result<Listed, String>,
    pub check: Check,
}

impl AgentFile {
    /// What the page shows of it.
    pub fn to_json(&self) -> Value {
        let (name, version, verdict, why) = match &self.listed {
            Ok(l) => (l.name.clone(), l.meta.version.clone(), l.check.to_string(), l.why.clone()),
            Err(e) => (self.file.clone(), None, "fail".to_string(), vec![e.clone()]),
        };
        let (check, report) = match &self.check {
            Check::Waiting => ("waiting", Value::Null),
            Check::Running => ("running", Value::Null),
            Check::Done(r) => (
                if r.ok() {
                    if r.warnings.is_empty() {
                        "ok"
                    } else {
                        "warn"
                    }
                } else {
                    "fail"
                },
                r.to_json(),
            ),
            Check::Failed(e) => ("error", json!({"error": e})),
            Check::Skipped => ("fail", Value::Null),
        };
        json!({
            "file": self.file, "name": name, "version": version, "bytes": self.bytes, "hash": self.hash,
            "source": verdict, "why": why, "check": check, "report": report,
        })
    }
}

/// The folder as last looked at.
#[derive(Debug, Default)]
pub struct Folder {
    pub agents: BTreeMap<String, AgentFile>,
    pub maps: Vec<String>,
}

/// An agent file as the folder lists it: its name, size and time of change.
pub type FileSeen = (String, u64, Option<SystemTime>);

/// What the folder holds now: `(agent files with size and time, map files)`, names sorted.
pub fn look(folder: &Path) -> (Vec<FileSeen>, Vec<String>) {
    let mut agents = Vec::new();
    let mut maps = Vec::new();
    for e in std::fs::read_dir(folder).into_iter().flatten().flatten() {
        let Some(name) = e.file_name().to_str().map(str::to_string) else { continue };
        if refusal(&name).is_some() {
            continue;
        }
        // A link is listed by what it leads to (sizes and times of the target).
        let meta = std::fs::metadata(e.path()).ok();
        if name.ends_with(".py") {
            agents.push((name, meta.as_ref().map_or(0, |m| m.len()), meta.and_then(|m| m.modified().ok())));
        } else if name.ends_with(".map") && meta.is_some_and(|m| m.is_file()) {
            maps.push(name);
        }
    }
    agents.sort();
    maps.sort();
    (agents, maps)
}

/// Reads the agent file `name` of `folder`: its identity and `gbely agents`' line.
pub fn read(folder: &Path, py: &str, name: &str, bytes: u64, modified: Option<SystemTime>) -> AgentFile {
    let path = resolve(folder, name);
    let content = path.as_ref().ok().and_then(|p| crate::files::read_bounded(p, 1 << 20).ok());
    let hash = content.as_deref().map_or_else(String::new, content_id);
    let listed = match &path {
        Err(e) => Err(e.clone()),
        Ok(p) => crate::app::inspect::list_agent(py, p).map_err(|e| e.to_string()),
    };
    let check = match &listed {
        Ok(l) if l.check != "fail" => Check::Waiting,
        _ => Check::Skipped,
    };
    AgentFile { file: name.to_string(), bytes, modified, hash, listed, check }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_are_paths_or_hidden_are_refused() {
        for bad in ["../x.py", "a/b.py", "..", ".", "", ".hidden.py", "c:\\x.py", "x\0.py"] {
            assert!(refusal(bad).is_some(), "{bad:?}");
        }
        assert_eq!(refusal("my_agent.py"), None);
        assert_eq!(refusal("v2..final.py"), None);
    }

    #[cfg(unix)]
    #[test]
    fn a_link_out_of_the_folder_is_refused_and_one_inside_is_followed() {
        let base = std::env::temp_dir().join(format!("gbely-stand-resolve-{}", std::process::id()));
        let folder = base.join("agents");
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(base.join("outside.py"), "def decide(s): return []\n").unwrap();
        std::fs::write(folder.join("inside.py"), "def decide(s): return []\n").unwrap();
        let _ = std::fs::remove_file(folder.join("out.py"));
        let _ = std::fs::remove_file(folder.join("alias.py"));
        std::os::unix::fs::symlink(base.join("outside.py"), folder.join("out.py")).unwrap();
        std::os::unix::fs::symlink("inside.py", folder.join("alias.py")).unwrap();
        let folder = folder.canonicalize().unwrap();
        assert!(resolve(&folder, "out.py").unwrap_err().contains("leads out of the folder"));
        assert!(resolve(&folder, "../outside.py").is_err());
        assert_eq!(resolve(&folder, "alias.py").unwrap(), folder.join("inside.py"));
        assert!(resolve(&folder, "missing.py").is_err());
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn the_hash_is_fnv1a_64() {
        // FNV-1a 64 of "" and of "a" (the published test vectors).
        assert_eq!(content_id(b""), "cbf29ce484222325");
        assert_eq!(content_id(b"a"), "af63dc4c8601ec8c");
    }
}
