//! The stand's history: every match, league and A/B test started from it, in an embedded SQLite
//! database (`stand.sqlite` in the stand's data folder), with its request, its result, its
//! replay and the versions (content identities) of the agents it played.

use std::path::Path;

use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ToSql, ToSqlOutput, ValueRef};
use rusqlite::{params, Connection, OptionalExtension};
use serde_json::Value;

/// Where a run is. Stored, sent to the page and shown as its word (`queued`, `running`, …):
/// [`RunStatus::as_str`] is the one mapping.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// Waiting for the scheduler.
    Queued,
    Running,
    /// Played to its end.
    Finished,
    /// Stopped while running (from the page, or the stand stopped with it).
    Interrupted,
    /// Could not be played (the error is its result).
    Failed,
    /// Stopped before it started.
    Cancelled,
}

impl RunStatus {
    /// Every status, in declaration order.
    pub const ALL: [RunStatus; 6] = [
        RunStatus::Queued,
        RunStatus::Running,
        RunStatus::Finished,
        RunStatus::Interrupted,
        RunStatus::Failed,
        RunStatus::Cancelled,
    ];

    /// The word stored in the database and sent to the page (the serde name).
    pub const fn as_str(self) -> &'static str {
        match self {
            RunStatus::Queued => "queued",
            RunStatus::Running => "running",
            RunStatus::Finished => "finished",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Failed => "failed",
            RunStatus::Cancelled => "cancelled",
        }
    }

    /// The status of a word, `None` for another word.
    pub fn from_word(word: &str) -> Option<RunStatus> {
        RunStatus::ALL.into_iter().find(|s| s.as_str() == word)
    }

    /// Whether the run is not over yet (it can be stopped, not deleted).
    pub fn is_active(self) -> bool {
        matches!(self, RunStatus::Queued | RunStatus::Running)
    }
}

impl std::fmt::Display for RunStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl ToSql for RunStatus {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::from(self.as_str()))
    }
}

impl FromSql for RunStatus {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<RunStatus> {
        let word = value.as_str()?;
        RunStatus::from_word(word).ok_or_else(|| FromSqlError::Other(format!("run status `{word}`").into()))
    }
}

/// One stored run.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub id: i64,
    /// `duel`, `final`, `league` or `ab`.
    pub kind: String,
    pub title: String,
    /// When it was asked for (UTC, `YYYY-MM-DD HH:MM:SS`).
    pub created: String,
    pub status: RunStatus,
    /// What was asked for, as the page sent it (checked).
    pub request: Value,
    /// The result document (`gbely play --json`'s, `gbely league --json`'s, `gbely ab --json`'s).
    pub result: Value,
    pub replay: Option<String>,
    /// `{agent file or spec: content hash}`.
    pub versions: Value,
}

/// The database.
#[derive(Debug)]
pub struct History {
    db: Connection,
}

fn json_of(text: Option<String>) -> Value {
    text.and_then(|t| serde_json::from_str(&t).ok()).unwrap_or(Value::Null)
}

impl History {
    /// Opens (or creates) the database at `path`. Runs that were queued or running when the
    /// stand last stopped are marked `interrupted` (their matches were stopped with it).
    pub fn open(path: &Path) -> rusqlite::Result<History> {
        let db = Connection::open(path)?;
        db.busy_timeout(std::time::Duration::from_secs(5))?;
        db.execute_batch(
            "CREATE TABLE IF NOT EXISTS runs (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                kind TEXT NOT NULL,
                title TEXT NOT NULL,
                created TEXT NOT NULL DEFAULT (datetime('now')),
                status TEXT NOT NULL,
                request TEXT NOT NULL,
                result TEXT,
                replay TEXT,
                versions TEXT
            );",
        )?;
        db.execute(
            "UPDATE runs SET status = ?1 WHERE status IN (?2, ?3)",
            params![RunStatus::Interrupted, RunStatus::Queued, RunStatus::Running],
        )?;
        Ok(History { db })
    }

    /// Stores a new run, `queued`; its id.
    pub fn add(&self, kind: &str, title: &str, request: &Value, versions: &Value) -> rusqlite::Result<i64> {
        self.db.execute(
            "INSERT INTO runs (kind, title, status, request, versions) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![kind, title, RunStatus::Queued, request.to_string(), versions.to_string()],
        )?;
        Ok(self.db.last_insert_rowid())
    }

    pub fn set_status(&self, id: i64, status: RunStatus) -> rusqlite::Result<()> {
        self.db.execute("UPDATE runs SET status = ?2 WHERE id = ?1", params![id, status])?;
        Ok(())
    }

    /// The run's end: its status, result and replay.
    pub fn finish(&self, id: i64, status: RunStatus, result: &Value, replay: Option<&str>) -> rusqlite::Result<()> {
        self.db.execute(
            "UPDATE runs SET status = ?2, result = ?3, replay = ?4 WHERE id = ?1",
            params![id, status, result.to_string(), replay],
        )?;
        Ok(())
    }

    pub fn delete(&self, id: i64) -> rusqlite::Result<bool> {
        Ok(self.db.execute("DELETE FROM runs WHERE id = ?1", params![id])? > 0)
    }

    fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Row> {
        Ok(Row {
            id: r.get(0)?,
            kind: r.get(1)?,
            title: r.get(2)?,
            created: r.get(3)?,
            status: r.get(4)?,
            request: json_of(r.get(5)?),
            result: json_of(r.get(6)?),
            replay: r.get(7)?,
            versions: json_of(r.get(8)?),
        })
    }

    const COLUMNS: &'static str = "id, kind, title, created, status, request, result, replay, versions";

    pub fn get(&self, id: i64) -> rusqlite::Result<Option<Row>> {
        self.db
            .query_row(&format!("SELECT {} FROM runs WHERE id = ?1", Self::COLUMNS), params![id], Self::row)
            .optional()
    }

    /// Every run, newest first.
    pub fn all(&self) -> rusqlite::Result<Vec<Row>> {
        let mut q = self.db.prepare(&format!("SELECT {} FROM runs ORDER BY id DESC", Self::COLUMNS))?;
        let rows = q.query_map([], Self::row)?.collect();
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn runs_are_kept_across_openings_and_unfinished_ones_marked_interrupted() {
        let dir = std::env::temp_dir().join(format!("gbely-stand-history-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("stand.sqlite");
        let _ = std::fs::remove_file(&path);
        {
            let h = History::open(&path).unwrap();
            let a = h.add("duel", "a vs council", &json!({"kind": "duel"}), &json!({"a.py": "12"})).unwrap();
            let b = h.add("league", "league of 3", &json!({"kind": "league"}), &json!({})).unwrap();
            h.set_status(b, RunStatus::Running).unwrap();
            h.finish(a, RunStatus::Finished, &json!({"winner": 0}), Some("r.json.gz")).unwrap();
            assert_eq!(h.all().unwrap().iter().map(|r| r.id).collect::<Vec<_>>(), vec![b, a]);
        }
        let h = History::open(&path).unwrap();
        let rows = h.all().unwrap();
        assert_eq!(rows[0].status.as_str(), "interrupted", "running when the stand stopped");
        assert_eq!(rows[1].status.as_str(), "finished");
        assert_eq!(rows[1].result, json!({"winner": 0}));
        assert_eq!(rows[1].replay.as_deref(), Some("r.json.gz"));
        assert_eq!(rows[1].versions, json!({"a.py": "12"}));
        assert!(h.delete(rows[1].id).unwrap());
        assert!(h.get(rows[1].id).unwrap().is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[cfg(test)]
mod status_tests {
    use super::*;

    /// The words stored and sent to the page are the ones used before the enum, one each; the
    /// serde names are the same words.
    #[test]
    fn run_statuses_are_their_words() {
        let words: Vec<&str> = RunStatus::ALL.iter().map(|s| s.as_str()).collect();
        assert_eq!(words, ["queued", "running", "finished", "interrupted", "failed", "cancelled"]);
        for s in RunStatus::ALL {
            assert_eq!(serde_json::to_value(s).unwrap(), s.as_str());
            assert_eq!(RunStatus::from_word(s.as_str()), Some(s));
        }
        assert_eq!(RunStatus::from_word("done"), None);
        let active: Vec<RunStatus> = RunStatus::ALL.into_iter().filter(|s| s.is_active()).collect();
        assert_eq!(active, [RunStatus::Queued, RunStatus::Running]);
    }
}
