//! The stand's history: every match, league and A/B test started from it, in an embedded SQLite
//! database (`stand.sqlite` in the stand's data folder), with its request, its result, its
//! replay and the versions (content identities) of the agents it played.

use std::path::Path;

use rusqlite::{params, Connection, OptionalExtension};
use serde_json::Value;

/// One stored run.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub id: i64,
    /// `duel`, `final`, `league` or `ab`.
    pub kind: String,
    pub title: String,
    /// When it was asked for (UTC, `YYYY-MM-DD HH:MM:SS`).
    pub created: String,
    /// `queued`, `running`, `finished`, `interrupted`, `failed` or `cancelled`.
    pub status: String,
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
            );
            UPDATE runs SET status = 'interrupted' WHERE status IN ('queued', 'running');",
        )?;
        Ok(History { db })
    }

    /// Stores a new run, `queued`; its id.
    pub fn add(&self, kind: &str, title: &str, request: &Value, versions: &Value) -> rusqlite::Result<i64> {
        self.db.execute(
            "INSERT INTO runs (kind, title, status, request, versions) VALUES (?1, ?2, 'queued', ?3, ?4)",
            params![kind, title, request.to_string(), versions.to_string()],
        )?;
        Ok(self.db.last_insert_rowid())
    }

    pub fn set_status(&self, id: i64, status: &str) -> rusqlite::Result<()> {
        self.db.execute("UPDATE runs SET status = ?2 WHERE id = ?1", params![id, status])?;
        Ok(())
    }

    /// The run's end: its status, result and replay.
    pub fn finish(&self, id: i64, status: &str, result: &Value, replay: Option<&str>) -> rusqlite::Result<()> {
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
            h.set_status(b, "running").unwrap();
            h.finish(a, "finished", &json!({"winner": 0}), Some("r.json.gz")).unwrap();
            assert_eq!(h.all().unwrap().iter().map(|r| r.id).collect::<Vec<_>>(), vec![b, a]);
        }
        let h = History::open(&path).unwrap();
        let rows = h.all().unwrap();
        assert_eq!(rows[0].status, "interrupted", "running when the stand stopped");
        assert_eq!(rows[1].status, "finished");
        assert_eq!(rows[1].result, json!({"winner": 0}));
        assert_eq!(rows[1].replay.as_deref(), Some("r.json.gz"));
        assert_eq!(rows[1].versions, json!({"a.py": "12"}));
        assert!(h.delete(rows[1].id).unwrap());
        assert!(h.get(rows[1].id).unwrap().is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
