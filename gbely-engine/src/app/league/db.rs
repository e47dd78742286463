//! The league's SQLite database: its entries, its settings, and one row per played match under
//! the match's key, so that a league resumes where it stopped and grows by new entries.
//! (Its SQLite file is opened by [`open_db`], as the A/B journals are.)

use std::collections::BTreeSet;
use std::path::Path;

use rusqlite::{params, Connection, OptionalExtension};

use super::play::MatchRow;
use crate::app::entries::{open_db, Entry, LeagueError};

/// The league's database.
pub struct LeagueDb {
    conn: Connection,
    path: String,
}

impl std::fmt::Debug for LeagueDb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeagueDb").field("path", &self.path).finish()
    }
}

impl LeagueDb {
    pub fn open(path: &Path) -> Result<LeagueDb, LeagueError> {
        let (conn, path) = open_db(
            path,
            "PRAGMA journal_mode = WAL;
             CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL);
             CREATE TABLE IF NOT EXISTS entries (id TEXT PRIMARY KEY, name TEXT NOT NULL, spec TEXT NOT NULL, hash TEXT NOT NULL);
             CREATE TABLE IF NOT EXISTS matches (
                key TEXT PRIMARY KEY, map TEXT NOT NULL, seat0 TEXT NOT NULL, seat1 TEXT NOT NULL,
                game INTEGER NOT NULL, cells0 INTEGER NOT NULL, cells1 INTEGER NOT NULL,
                score0 REAL, score1 REAL, tiebreak0 INTEGER, tiebreak1 INTEGER,
                dq0 INTEGER NOT NULL, dq1 INTEGER NOT NULL, violations0 INTEGER NOT NULL,
                violations1 INTEGER NOT NULL, ended_by TEXT NOT NULL, rounds INTEGER NOT NULL,
                seconds REAL NOT NULL);",
        )?;
        Ok(LeagueDb { conn, path })
    }

    fn err(&self, error: rusqlite::Error) -> LeagueError {
        LeagueError::Db { path: self.path.clone(), error }
    }

    /// Records the settings on first use and refuses a league played with other ones.
    pub fn check_settings(&self, settings: &str) -> Result<(), LeagueError> {
        let old: Option<String> = self
            .conn
            .query_row("SELECT v FROM meta WHERE k = 'settings'", [], |r| r.get(0))
            .optional()
            .map_err(|e| self.err(e))?;
        match old {
            Some(old) if old != settings => {
                Err(LeagueError::Settings { path: self.path.clone(), what: format!("{old} (now {settings})") })
            }
            Some(_) => Ok(()),
            None => {
                self.conn
                    .execute("INSERT INTO meta (k, v) VALUES ('settings', ?1)", params![settings])
                    .map_err(|e| self.err(e))?;
                Ok(())
            }
        }
    }

    pub fn add_entry(&self, e: &Entry) -> Result<(), LeagueError> {
        self.conn
            .execute(
                "INSERT OR IGNORE INTO entries (id, name, spec, hash) VALUES (?1, ?2, ?3, ?4)",
                params![e.id, e.name, e.spec.to_string(), e.hash],
            )
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    pub fn played(&self) -> Result<BTreeSet<String>, LeagueError> {
        let mut st = self.conn.prepare("SELECT key FROM matches").map_err(|e| self.err(e))?;
        let keys = st.query_map([], |r| r.get::<_, String>(0)).map_err(|e| self.err(e))?;
        keys.collect::<Result<_, _>>().map_err(|e| self.err(e))
    }

    pub fn store(&self, row: &MatchRow) -> Result<(), LeagueError> {
        self.conn
            .execute(
                "INSERT OR REPLACE INTO matches VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)",
                params![
                    row.key, row.map, row.seat0, row.seat1, row.game, row.cells[0], row.cells[1], row.score[0],
                    row.score[1], row.tiebreak[0], row.tiebreak[1], row.disqualified[0], row.disqualified[1],
                    row.violations[0], row.violations[1], row.ended_by.wire(), row.rounds, row.seconds
                ],
            )
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    /// The stored results of these keys, in key order.
    pub fn rows(&self, keys: &BTreeSet<String>) -> Result<Vec<MatchRow>, LeagueError> {
        let mut st = self.conn.prepare("SELECT * FROM matches ORDER BY key").map_err(|e| self.err(e))?;
        let rows = st
            .query_map([], |r| {
                Ok(MatchRow {
                    key: r.get(0)?,
                    map: r.get(1)?,
                    seat0: r.get(2)?,
                    seat1: r.get(3)?,
                    game: r.get(4)?,
                    cells: [r.get(5)?, r.get(6)?],
                    score: [r.get(7)?, r.get(8)?],
                    tiebreak: [r.get(9)?, r.get(10)?],
                    disqualified: [r.get(11)?, r.get(12)?],
                    violations: [r.get(13)?, r.get(14)?],
                    ended_by: {
                        let word: String = r.get(15)?;
                        crate::sim::EndReason::from_wire(&word).ok_or_else(|| {
                            rusqlite::Error::FromSqlConversionFailure(
                                15,
                                rusqlite::types::Type::Text,
                                format!("ended_by `{word}` is no end of a match").into(),
                            )
                        })?
                    },
                    rounds: r.get(16)?,
                    seconds: r.get(17)?,
                })
            })
            .map_err(|e| self.err(e))?;
        let all: Vec<MatchRow> = rows.collect::<Result<_, _>>().map_err(|e| self.err(e))?;
        Ok(all.into_iter().filter(|r| keys.contains(&r.key)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::EndReason;

    /// A row's end is stored as its wire name (the databases of earlier versions hold the same
    /// words) and read back as the enum; a word that is no end is refused, not guessed.
    #[test]
    fn a_rows_end_is_stored_as_its_wire_name_and_read_back() {
        let dir = std::env::temp_dir().join(format!("gbely-league-db-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let db = LeagueDb::open(&dir.join("league.sqlite")).unwrap();
        let row = |key: &str, ended_by| MatchRow {
            key: key.into(),
            map: "gbely".into(),
            seat0: "a".into(),
            seat1: "b".into(),
            game: 0,
            cells: [3, 1],
            score: [Some(75.0), Some(25.0)],
            tiebreak: [None, None],
            disqualified: [false, false],
            violations: [0, 0],
            ended_by,
            rounds: 10,
            seconds: 0.5,
        };
        for (k, end) in EndReason::ALL.iter().enumerate() {
            db.store(&row(&format!("k{k}"), *end)).unwrap();
        }
        let words: Vec<String> = {
            let mut st = db.conn.prepare("SELECT ended_by FROM matches ORDER BY key").unwrap();
            let words = st.query_map([], |r| r.get(0)).unwrap().collect::<Result<_, _>>().unwrap();
            words
        };
        assert_eq!(words, ["rounds", "elimination", "disqualification", "council_fell", "interrupted", "unfinished"]);
        let keys = (0..EndReason::ALL.len()).map(|k| format!("k{k}")).collect();
        let back: Vec<EndReason> = db.rows(&keys).unwrap().iter().map(|r| r.ended_by).collect();
        assert_eq!(back, EndReason::ALL);
        db.conn.execute("UPDATE matches SET ended_by = 'boredom' WHERE key = 'k0'", []).unwrap();
        let e = db.rows(&keys).unwrap_err().to_string();
        assert!(e.contains("ended_by `boredom`"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
