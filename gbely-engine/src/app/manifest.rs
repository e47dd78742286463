//! A competition's published results, checkable by anyone: the manifest of the arena's public
//! archive (`gbely-results.tar.gz`), which names every published replay with its SHA-256 and the
//! figures published for its seats, and `gbely replay verify manifest.json`, which checks each
//! file's bytes against the manifest, re-simulates each replay ([`crate::replays::verify`]) and
//! compares the published figures with the replay's result. The arena writes this type, the
//! command line reads it: one description of the file.

use std::io::Write;
use std::path::{Component, Path};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The manifest's `format`: what tells it from a replay (`gbely-replay`).
pub const MANIFEST_FORMAT: &str = "gbely-results";

/// The manifest's `version`.
pub const MANIFEST_VERSION: u32 = 1;

/// The manifest of a competition's published results.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResultsManifest {
    /// Always [`MANIFEST_FORMAT`].
    pub format: String,
    /// [`MANIFEST_VERSION`].
    pub version: u32,
    /// The competition's name.
    pub competition: String,
    /// When the export was made (RFC 3339).
    pub generated: String,
    /// The archive's other documents (the board and the final as CSV and JSON).
    #[serde(default)]
    pub files: Vec<ManifestFile>,
    /// Every published replay.
    pub replays: Vec<ManifestReplay>,
}

/// A file of the archive.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ManifestFile {
    /// Relative to the manifest's folder, `/`-separated.
    pub path: String,
    /// Of the file's bytes, lowercase hex (what `sha256sum` prints).
    pub sha256: String,
    pub bytes: u64,
}

/// A published replay and what was published of its match.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ManifestReplay {
    #[serde(flatten)]
    pub file: ManifestFile,
    /// `leaderboard` (a submission's judged match) or `final`.
    pub kind: String,
    /// The submission it judged (a leaderboard match).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub submission: Option<i64>,
    /// Who it is, as the leaderboard shows them (a participant's agent name and version).
    pub name: String,
    /// Its place on the leaderboard, if it is on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub place: Option<u64>,
    /// Its place among the flash victories, if it is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flash: Option<u64>,
    /// The figures published for its seats: each must be the replay's result.
    pub sides: Vec<PublishedSide>,
}

/// What was published of one seat of a match.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PublishedSide {
    pub seat: u8,
    pub name: String,
    /// Percent of the map; `None`: disqualified.
    pub share: Option<f64>,
    pub cells: u32,
    pub tiebreak: Option<u32>,
    pub violations: u32,
}

/// The lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// The most a manifest file is read into memory: far more than a competition's (a few hundred
/// bytes a replay); a larger file is left to the replay reader, which reads within its budget.
const MAX_MANIFEST_BYTES: u64 = 64 << 20;

/// The manifest `file` holds, or `None` when it is no manifest (a replay): a plain JSON file
/// whose `format` is [`MANIFEST_FORMAT`]. A manifest that does not parse is an error.
pub fn read_if_manifest(file: &Path) -> Result<Option<ResultsManifest>, String> {
    let meta = std::fs::metadata(file).map_err(|e| format!("{}: {e}", file.display()))?;
    // Only a regular file can be a manifest: a device (/dev/zero never ends) or a named pipe
    // (it blocks) is left to the replay reader, which refuses it unopened and says what it is.
    if !meta.is_file() || meta.len() > MAX_MANIFEST_BYTES {
        return Ok(None);
    }
    #[derive(Deserialize)]
    struct Format {
        #[serde(default)]
        format: Option<String>,
    }
    let bytes = std::fs::read(file).map_err(|e| format!("{}: {e}", file.display()))?;
    if bytes.starts_with(&[0x1f, 0x8b]) {
        return Ok(None);
    }
    match serde_json::from_slice::<Format>(&bytes) {
        Ok(Format { format: Some(f) }) if f == MANIFEST_FORMAT => {
            let m: ResultsManifest = serde_json::from_slice(&bytes)
                .map_err(|e| format!("{}: not a results manifest: {e}", file.display()))?;
            if m.version != MANIFEST_VERSION {
                return Err(format!(
                    "{}: a results manifest of version {}; this gbely reads version {MANIFEST_VERSION}",
                    file.display(),
                    m.version
                ));
            }
            Ok(Some(m))
        }
        _ => Ok(None),
    }
}

/// How a manifest's check went.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ManifestCheck {
    /// Replays whose bytes, re-simulation and published figures all match.
    pub ok: usize,
    /// Replays or files that do not.
    pub mismatched: usize,
}

/// A path of the manifest as a path under its folder: relative, no `..` (a manifest names files
/// of its archive, nothing else of the machine).
fn inside(dir: &Path, path: &str) -> Result<std::path::PathBuf, String> {
    let p = Path::new(path);
    if path.is_empty() || p.components().any(|c| !matches!(c, Component::Normal(_))) {
        return Err(format!("`{path}` is not a path inside the archive"));
    }
    Ok(dir.join(p))
}

/// Checks the file against the manifest's SHA-256 and size, reading it through the hash (a
/// replay can be large; it is never held whole here).
fn check_file(dir: &Path, f: &ManifestFile) -> Result<(), String> {
    let path = inside(dir, &f.path)?;
    let mut file = std::fs::File::open(&path).map_err(|e| format!("cannot read it: {e}"))?;
    let mut hash = Sha256::new();
    let bytes = std::io::copy(&mut file, &mut hash).map_err(|e| format!("cannot read it: {e}"))?;
    let sha: String = hash.finalize().iter().map(|b| format!("{b:02x}")).collect();
    if sha != f.sha256.to_ascii_lowercase() {
        return Err(format!("its SHA-256 is {sha}, the manifest says {}", f.sha256));
    }
    if bytes != f.bytes {
        return Err(format!("it has {bytes} bytes, the manifest says {}", f.bytes));
    }
    Ok(())
}

/// One replay: its bytes, its re-simulation, its published figures. `Ok` with what was checked.
fn check_replay(dir: &Path, r: &ManifestReplay) -> Result<String, String> {
    check_file(dir, &r.file)?;
    let path = inside(dir, &r.file.path)?;
    let read = crate::replays::read_replay_or_cut(&path).map_err(|e| e.to_string())?;
    if read.cut_short {
        return Err("the file was cut short: not a whole match".into());
    }
    let replay = read.replay;
    let v = crate::replays::verify(&replay).map_err(|m| m.to_string())?;
    for p in &r.sides {
        let Some(side) = replay.result.sides.iter().find(|s| s.seat == p.seat) else {
            return Err(format!("the manifest publishes seat {}, which the match does not have", p.seat));
        };
        let published = (&p.name, p.share, p.cells, p.tiebreak, p.violations);
        let played = (&side.name, side.score, side.cells, side.tiebreak_round, side.violations);
        if published != played {
            return Err(format!(
                "seat {} is published as {} {}, the match gives {} {}",
                p.seat,
                p.name,
                figures(p.share, p.cells, p.tiebreak, p.violations),
                side.name,
                figures(side.score, side.cells, side.tiebreak_round, side.violations),
            ));
        }
    }
    Ok(format!("{} rounds re-simulated, {} published seat(s) match", v.rounds, r.sides.len()))
}

fn figures(share: Option<f64>, cells: u32, tiebreak: Option<u32>, violations: u32) -> String {
    let share = share.map_or("disqualified".to_string(), |s| format!("{s} %"));
    let tiebreak = tiebreak.map_or("—".to_string(), |t| t.to_string());
    format!("(share {share}, {cells} cells, tie-break round {tiebreak}, {violations} violations)")
}

/// Checks every file and replay the manifest names (paths relative to `dir`, the manifest's
/// folder), one line each on `out`, then a summary line.
pub fn check_manifest(out: &mut impl Write, dir: &Path, m: &ResultsManifest) -> std::io::Result<ManifestCheck> {
    let mut check = ManifestCheck::default();
    for f in &m.files {
        match check_file(dir, f) {
            Ok(_) => writeln!(out, "ok: {}: SHA-256 matches", f.path)?,
            Err(why) => {
                check.mismatched += 1;
                writeln!(out, "MISMATCH in {}: {why}", f.path)?
            }
        }
    }
    for r in &m.replays {
        let who = match (r.place, r.flash) {
            (Some(p), _) => format!("{}, place {p}: {}", r.kind, r.name),
            (None, Some(f)) => format!("{}, flash victory {f}: {}", r.kind, r.name),
            _ => format!("{}: {}", r.kind, r.name),
        };
        match check_replay(dir, r) {
            Ok(what) => {
                check.ok += 1;
                writeln!(out, "ok: {} ({who}): SHA-256 matches, {what}", r.file.path)?
            }
            Err(why) => {
                check.mismatched += 1;
                writeln!(out, "MISMATCH in {} ({who}): {why}", r.file.path)?
            }
        }
    }
    writeln!(
        out,
        "{}: {} replay(s) and {} file(s) of {}: {} replay(s) verified, {} mismatch(es)",
        if check.mismatched == 0 { "ok" } else { "MISMATCH" },
        m.replays.len(),
        m.files.len(),
        m.competition,
        check.ok,
        check.mismatched
    )?;
    Ok(check)
}
