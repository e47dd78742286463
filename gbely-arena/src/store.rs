//! The competition's data: one data layer over SQLite (a file, the default) or PostgreSQL (a URL),
//! through sqlx's `Any` driver with the same SQL for both, and the same migrations
//! (`migrations/`, in SQLite's words; PostgreSQL's generated ids are `BIGSERIAL`; sqlx records
//! what ran in `_sqlx_migrations`).
//!
//! Judging is a job queue in the database itself: a worker claims a job by one `UPDATE` that
//! only a queued job, or a running one whose lease has lapsed, satisfies (PostgreSQL re-checks
//! that condition on the locked row; SQLite writes one at a time), renews the lease while it
//! judges, and finishes it in one transaction that writes the result only while the job is
//! still its own attempt. A worker that died leaves a lapsed lease: the job is judged again,
//! and its late result, if it ever comes, is dropped. A submission has at most one result row
//! (the primary key), replaced by a re-judging. The claim is fair between participants (one with
//! no job being judged first, then round-robin by their last claim), and a newer upload
//! supersedes the same participant's uploads still queued.
//!
//! Every limit (sign-in e-mails, uploads, the final's "nothing pending") is one step: its
//! transaction locks the `limits` row of `meta` first, then counts and inserts, so that parallel
//! requests cannot all pass it, on either database.

use std::borrow::Cow;
use std::path::Path;

use sqlx::any::{AnyPoolOptions, AnyRow};
use sqlx::migrate::{Migration, MigrationType, Migrator};
use sqlx::{AnyPool, Row};

use crate::audit::Act;
use crate::i18n::Lang;

/// The words of a state: one mapping to and from what the database stores and the pages show,
/// the serde names the same words; a state compares equal to its word.
macro_rules! state_words {
    ($(#[$doc:meta])* $ty:ident { $($(#[$vdoc:meta])* $variant:ident => $word:literal),* $(,)? }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
        pub enum $ty {
            $($(#[$vdoc])* #[serde(rename = $word)] $variant),*
        }

        impl $ty {
            /// Every state, in declaration order.
            pub const ALL: &'static [$ty] = &[$($ty::$variant),*];

            /// The word stored in the database.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($ty::$variant => $word),*
                }
            }

            /// The state of a stored word, `None` for another word.
            pub fn from_word(word: &str) -> Option<$ty> {
                match word {
                    $($word => Some($ty::$variant),)*
                    _ => None,
                }
            }

            /// The state read from column `at` of a row: a word that is no state is an error,
            /// never guessed.
            fn read(r: &AnyRow, at: usize) -> Result<$ty, sqlx::Error> {
                let word: String = r.try_get(at)?;
                $ty::from_word(&word).ok_or_else(|| sqlx::Error::ColumnDecode {
                    index: at.to_string(),
                    source: format!("`{word}` is not a {}", stringify!($ty)).into(),
                })
            }
        }

        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl PartialEq<&str> for $ty {
            fn eq(&self, word: &&str) -> bool {
                self.as_str() == *word
            }
        }
    };
}

state_words!(
    /// Where a submission is.
    SubmissionState {
        /// Waiting for a judge.
        Queued => "queued",
        Checking => "checking",
        /// Its leaderboard match is being played.
        Running => "running",
        Scored => "scored",
        Disqualified => "disqualified",
        CheckFailed => "check_failed",
        /// The judge could not judge it (its fault, not the file's).
        Error => "error",
        /// A newer upload of the participant came before it was judged.
        Superseded => "superseded",
    }
);

impl SubmissionState {
    /// Whether it is waiting for or in the hands of a judge (its page updates by itself).
    pub fn is_being_judged(self) -> bool {
        matches!(self, SubmissionState::Queued | SubmissionState::Checking | SubmissionState::Running)
    }
}

state_words!(
    /// Where a final run is.
    FinalState {
        /// Being played (or, in the database of a server that died, cut off by the crash).
        Running => "running",
        /// Stopped with the server.
        Interrupted => "interrupted",
        Finished => "finished",
        /// Could not be played (the error is its result).
        Failed => "failed",
        /// Cut off, then set aside for a final run again from its start.
        Abandoned => "abandoned",
    }
);

/// A submission as stored.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Submission {
    pub id: i64,
    pub email: String,
    /// Unix seconds.
    pub uploaded: i64,
    /// The file's name as uploaded: shown, never a path.
    pub file_name: String,
    pub bytes: i64,
    /// The `AGENT_VERSION` the file gives itself (printable), empty when it gives none. (Rows
    /// written before 2026-12-07 hold the file's content identity here.)
    pub version: String,
    /// `AGENT_NAME` and `AGENT_VERSION` as `gbely` shows them (`Mravec 7`), or the file's stem.
    pub agent_name: String,
    pub state: SubmissionState,
    pub reason: String,
    /// The check's report (JSON), once checked.
    pub check: String,
    /// The file's name in the data folder's `submissions/`, chosen by the server (random), and
    /// written before the row.
    #[serde(skip)]
    pub stored: String,
}

impl Submission {
    /// Whether it failed the check and its reason is that check's problems (its report lists
    /// them; a re-judging keeps the old report until the new one, but not this state).
    pub fn failed_its_check(&self) -> bool {
        self.state == SubmissionState::CheckFailed && !self.check.is_empty()
    }

    /// The agent's name without its version, where a column of its own shows the version.
    pub fn name_alone(&self) -> &str {
        let suffix = self.agent_name.strip_suffix(self.version.as_str()).and_then(|n| n.strip_suffix(' '));
        suffix.filter(|n| !self.version.is_empty() && !n.is_empty()).unwrap_or(&self.agent_name)
    }
}

/// A submission's result.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Outcome {
    pub submission: i64,
    /// Percent of the map; `None`: disqualified.
    pub share: Option<f64>,
    pub cells: i64,
    pub tiebreak: Option<i64>,
    pub violations: i64,
    pub disqualified: Option<i64>,
    pub council_fell: Option<i64>,
    pub rounds: i64,
    /// Relative to the data folder.
    pub replay: String,
    pub log: String,
    pub judged: i64,
    /// The agent's slowest answers in the match (empty for results judged before they were kept).
    pub times: AnswerTimes,
}

/// A judged match's slowest answers of the agent, `(round, milliseconds)` slowest first (as
/// [`gbely_engine::session::MatchRecord::slowest`] keeps them), and the limit they were held to:
/// `results.slowest`, in JSON.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct AnswerTimes {
    pub limit: gbely_engine::limits::TimeLimit,
    pub slowest: Vec<(u32, u32)>,
}

impl AnswerTimes {
    /// `round 87: 1.91 s of 2 s, …`; empty when none were kept.
    pub fn text(&self) -> String {
        self.limit.slowest_text(&self.slowest)
    }

    fn column(&self) -> String {
        serde_json::to_string(self).expect("plain data")
    }

    /// The column as stored: '' (a result judged before the times were kept) is none.
    fn from_column(text: &str) -> Result<AnswerTimes, sqlx::Error> {
        if text.is_empty() {
            return Ok(AnswerTimes::default());
        }
        serde_json::from_str(text).map_err(|e| sqlx::Error::Decode(Box::new(e)))
    }
}

/// A claimed job.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Job {
    pub id: i64,
    pub submission: i64,
    pub attempt: i64,
}

impl Job {
    /// The folder of this attempt's files in the data folder: `judging/ID-ATTEMPT`.
    pub fn folder(&self) -> String {
        format!("judging/{}-{}", self.submission, self.attempt)
    }
}

/// How a job ended (in JSON, what a worker over HTTP reports: `{"judged": {…}}`,
/// `{"check_failed": {…}}`, `{"error": {"reason": "…"}}`; externally tagged: an internally tagged
/// enum would read its numbers through serde's buffer, which `arbitrary_precision` turns into maps).
#[derive(Debug, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Verdict {
    /// Judged: scored or disqualified (the state follows from the outcome).
    Judged { outcome: Outcome, reason: String, check: String },
    /// The check failed: no match was played.
    CheckFailed { reason: String, check: String },
    /// The judge could not play it (not the agent's fault: e.g. no sandbox).
    Error { reason: String },
}

/// A judge over HTTP, known by its token.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Worker {
    pub id: i64,
    /// What the organiser called it when issuing its token.
    pub name: String,
    pub created: i64,
    /// When its token was revoked.
    pub revoked: Option<i64>,
    /// Its last request (0: none yet).
    pub seen: i64,
    /// The machine it said it runs on.
    pub host: String,
    /// Jobs whose last judging it ended (a job judged again by another judge counts for that
    /// one).
    pub judged: i64,
    /// Its last measured speed: the figures, their share of the server's, and when.
    pub speed: Option<(crate::speed::Speed, f64, i64)>,
    /// Its judged uploads that stand disqualified by timeouts (the last judging was its):
    /// listed by [`Store::workers`] only (empty elsewhere).
    pub timeouts: Vec<i64>,
}

/// A line of the leaderboard.
#[derive(Clone, Debug, serde::Serialize)]
pub struct BoardRow {
    pub rank: usize,
    pub submission: Submission,
    pub outcome: Outcome,
    /// The participant's last upload is being judged: this result stands until it is.
    pub pending: bool,
}

/// An organiser's action.
#[derive(Clone, Debug, serde::Serialize)]
pub struct AuditEntry {
    /// Unix seconds.
    pub at: i64,
    pub who: String,
    pub what: String,
    pub detail: String,
    /// The act itself ([`Act`], JSON; '' for an entry from before it was kept).
    pub act: String,
}

/// A sign-in code to record.
#[derive(Clone, Copy, Debug)]
pub struct NewSignin<'a> {
    pub code_hash: &'a str,
    pub email: &'a str,
    /// Who asked: the requester's network address.
    pub requester: &'a str,
    pub now: i64,
    pub expires: i64,
}

/// The sign-in e-mails an hour may send (`[limits]`).
#[derive(Clone, Copy, Debug)]
pub struct SigninLimits {
    /// To one address, asked by one requester.
    pub per_address: i64,
    /// Asked by one requester, to any addresses.
    pub per_requester: i64,
    /// The whole site's, to addresses that have never signed in.
    pub total_new: i64,
}

/// Which sign-in limit refused an e-mail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SigninRefusal {
    Address,
    Requester,
    Site,
}

impl SigninRefusal {
    /// What the page says.
    pub fn why(self) -> &'static str {
        match self {
            SigninRefusal::Address => {
                "too many sign-in e-mails to this address in the last hour: use the last one sent, or try again later"
            }
            SigninRefusal::Requester => {
                "too many sign-in e-mails asked from your network in the last hour: try again later"
            }
            SigninRefusal::Site => {
                "the site has sent too many sign-in e-mails to new addresses in the last hour: try again later"
            }
        }
    }
}

/// A final as played.
#[derive(Clone, Debug, serde::Serialize)]
pub struct FinalRecord {
    pub id: i64,
    pub state: FinalState,
    pub started: i64,
    /// The results table (JSON) once played.
    pub result: String,
    pub replay: String,
    /// Who sat where (JSON, see the arena's `FinalSeats`).
    #[serde(skip)]
    pub seating: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Backend {
    Sqlite,
    Postgres,
}

/// The data layer.
#[derive(Clone, Debug)]
pub struct Store {
    pool: AnyPool,
    backend: Backend,
}

const SUBMISSION_COLUMNS: &str =
    "id, email, uploaded, file_name, bytes, version, agent_name, state, reason, check_report, stored";
const OUTCOME_COLUMNS: &str =
    "submission, share, cells, tiebreak, violations, disqualified, council_fell, rounds, replay, log, judged, slowest";

const WORKER_COLUMNS: &str = "w.id, w.name, w.created, w.revoked, w.seen, w.host, \
     (SELECT COUNT(*) FROM jobs j WHERE j.worker_id = w.id AND j.state = 'done'), \
     w.engine_ms, w.python_ms, w.speed, w.measured";

fn worker(r: &AnyRow) -> Result<Worker, sqlx::Error> {
    let revoked: i64 = r.try_get(3)?;
    Ok(Worker {
        id: r.try_get(0)?,
        name: r.try_get(1)?,
        created: r.try_get(2)?,
        revoked: (revoked != 0).then_some(revoked),
        seen: r.try_get(4)?,
        host: r.try_get(5)?,
        judged: r.try_get(6)?,
        speed: {
            let measured: i64 = r.try_get(10)?;
            let figures = crate::speed::Speed { engine_ms: r.try_get(7)?, python_ms: r.try_get(8)? };
            (measured != 0).then_some((figures, r.try_get(9)?, measured))
        },
        timeouts: Vec::new(),
    })
}

fn submission(r: &AnyRow) -> Result<Submission, sqlx::Error> {
    Ok(Submission {
        id: r.try_get(0)?,
        email: r.try_get(1)?,
        uploaded: r.try_get(2)?,
        file_name: r.try_get(3)?,
        bytes: r.try_get(4)?,
        version: r.try_get(5)?,
        agent_name: r.try_get(6)?,
        state: SubmissionState::read(r, 7)?,
        reason: r.try_get(8)?,
        check: r.try_get(9)?,
        stored: r.try_get(10)?,
    })
}

fn outcome(r: &AnyRow, at: usize) -> Result<Outcome, sqlx::Error> {
    Ok(Outcome {
        submission: r.try_get(at)?,
        share: r.try_get(at + 1)?,
        cells: r.try_get(at + 2)?,
        tiebreak: r.try_get(at + 3)?,
        violations: r.try_get(at + 4)?,
        disqualified: r.try_get(at + 5)?,
        council_fell: r.try_get(at + 6)?,
        rounds: r.try_get(at + 7)?,
        replay: r.try_get(at + 8)?,
        log: r.try_get(at + 9)?,
        judged: r.try_get(at + 10)?,
        times: AnswerTimes::from_column(&r.try_get::<String, _>(at + 11)?)?,
    })
}

/// A participant's uploads since an instant (`$1` the address, `$2` the instant): the upload
/// limit's count, asked before the file is written and again under the limits' lock.
const UPLOADS_SINCE: &str = "SELECT COUNT(*) FROM submissions WHERE email = $1 AND uploaded >= $2";

/// Jobs not done (queued or being judged): what the final waits for.
const PENDING_JOBS: &str = "SELECT COUNT(*) FROM jobs WHERE state <> 'done'";

/// A submission's columns (`s.`) then its result's (`r.`), as [`submission`] and [`outcome`]
/// read them from a joined row.
fn joined_columns() -> String {
    let prefixed = |cols: &str, t: &str| cols.split(", ").map(|c| format!("{t}.{c}")).collect::<Vec<_>>().join(", ");
    format!("{}, {}", prefixed(SUBMISSION_COLUMNS, "s"), prefixed(OUTCOME_COLUMNS, "r"))
}

/// The migrations, written for SQLite; PostgreSQL's differ in one word, the type of a
/// generated id, and are made from them.
const MIGRATIONS: &[(i64, &str, &str)] = &[
    (1, "arena", include_str!("migrations/0001_arena.sql")),
    (2, "event", include_str!("migrations/0002_event.sql")),
    (3, "times", include_str!("migrations/0003_times.sql")),
    (4, "export", include_str!("migrations/0004_export.sql")),
    (5, "language", include_str!("migrations/0005_language.sql")),
    (6, "indexes", include_str!("migrations/0006_indexes.sql")),
    (7, "workers", include_str!("migrations/0007_workers.sql")),
    (8, "audit act", include_str!("migrations/0008_audit_act.sql")),
];

fn migrator(backend: Backend) -> Migrator {
    let migrations: Vec<Migration> = MIGRATIONS
        .iter()
        .map(|&(v, d, sql)| {
            let sql = match backend {
                Backend::Sqlite => Cow::Borrowed(sql),
                Backend::Postgres => {
                    Cow::Owned(sql.replace("INTEGER PRIMARY KEY AUTOINCREMENT", "BIGSERIAL PRIMARY KEY"))
                }
            };
            Migration::new(v, Cow::Borrowed(d), MigrationType::Simple, sql, false)
        })
        .collect();
    Migrator { migrations: Cow::Owned(migrations), ignore_missing: false, locking: true, no_tx: false }
}

impl Store {
    /// Opens (and migrates) the database: `sqlite` is `arena.sqlite` in `data`.
    pub async fn open(database: &str, data: &Path) -> Result<Store, sqlx::Error> {
        sqlx::any::install_default_drivers();
        let (url, backend) = if database == "sqlite" {
            (format!("sqlite://{}?mode=rwc", data.join("arena.sqlite").display()), Backend::Sqlite)
        } else {
            (database.to_string(), Backend::Postgres)
        };
        let pool = AnyPoolOptions::new()
            .max_connections(if backend == Backend::Sqlite { 4 } else { 8 })
            .after_connect(move |conn, _| {
                Box::pin(async move {
                    if backend == Backend::Sqlite {
                        // Readers beside one writer; a writer waits for another (server and
                        // workers share the file) instead of failing.
                        sqlx::query("PRAGMA journal_mode = WAL").execute(&mut *conn).await?;
                        sqlx::query("PRAGMA busy_timeout = 10000").execute(&mut *conn).await?;
                        sqlx::query("PRAGMA synchronous = NORMAL").execute(&mut *conn).await?;
                    }
                    Ok(())
                })
            })
            .connect(&url)
            .await?;
        migrator(backend).run(&pool).await?;
        Ok(Store { pool, backend })
    }

    pub fn backend_name(&self) -> &'static str {
        match self.backend {
            Backend::Sqlite => "SQLite",
            Backend::Postgres => "PostgreSQL",
        }
    }

    pub async fn close(&self) {
        self.pool.close().await;
    }

    /// The change counter: bumped by every write that a page shows.
    pub async fn version(&self) -> Result<i64, sqlx::Error> {
        sqlx::query("SELECT v FROM meta WHERE k = 'version'").fetch_one(&self.pool).await?.try_get(0)
    }

    async fn bump<'e, E: sqlx::Executor<'e, Database = sqlx::Any>>(e: E) -> Result<(), sqlx::Error> {
        sqlx::query("UPDATE meta SET v = v + 1 WHERE k = 'version'").execute(e).await.map(|_| ())
    }

    // — Sign-in —

    /// Locks the limits' row for the rest of `tx`: every limited insert counts and inserts
    /// under it, one at a time, on both databases (SQLite: the first write of a transaction
    /// takes the database's write lock; PostgreSQL: the row's lock, and each later statement
    /// of the transaction sees what the one before it committed).
    async fn lock_limits(tx: &mut sqlx::Transaction<'_, sqlx::Any>) -> Result<(), sqlx::Error> {
        sqlx::query("UPDATE meta SET v = v + 1 WHERE k = 'limits'").execute(&mut **tx).await.map(|_| ())
    }

    async fn count(
        tx: &mut sqlx::Transaction<'_, sqlx::Any>,
        sql: &str,
        binds: &[&str],
        since: i64,
    ) -> Result<i64, sqlx::Error> {
        let mut q = sqlx::query(sql);
        for b in binds {
            q = q.bind(*b);
        }
        q.bind(since).fetch_one(&mut **tx).await?.try_get(0)
    }

    /// Records a sign-in code if the limits allow another e-mail now, counting and inserting in
    /// one step (parallel requests cannot both pass a limit): `Ok(Err(why))` when one does not.
    ///
    /// The limits are per requester (a network address), for one address and for all, so that a
    /// stranger asking for someone else's address uses up only their own; and for the whole site,
    /// counted only over addresses that have never signed in, so that a flood of junk addresses
    /// stops new ones but never a participant who has signed in before.
    pub async fn add_signin_limited(
        &self,
        signin: &NewSignin<'_>,
        limits: &SigninLimits,
    ) -> Result<Result<(), SigninRefusal>, sqlx::Error> {
        let NewSignin { code_hash, email, requester, now, expires } = *signin;
        let since = now - 3600;
        let mut tx = self.pool.begin().await?;
        Self::lock_limits(&mut tx).await?;
        let mine = Self::count(
            &mut tx,
            "SELECT COUNT(*) FROM signins WHERE email = $1 AND requester = $2 AND created >= $3",
            &[email, requester],
            since,
        )
        .await?;
        let from_requester = Self::count(
            &mut tx,
            "SELECT COUNT(*) FROM signins WHERE requester = $1 AND created >= $2",
            &[requester],
            since,
        )
        .await?;
        let refusal = if mine >= limits.per_address {
            Some(SigninRefusal::Address)
        } else if from_requester >= limits.per_requester {
            Some(SigninRefusal::Requester)
        } else {
            let known: i64 = sqlx::query(
                "SELECT (SELECT COUNT(*) FROM sessions WHERE email = $1) + (SELECT COUNT(*) FROM submissions WHERE email = $1)",
            )
            .bind(email)
            .fetch_one(&mut *tx)
            .await?
            .try_get(0)?;
            let new_ones = if known > 0 {
                0
            } else {
                Self::count(
                    &mut tx,
                    "SELECT COUNT(*) FROM signins g WHERE created >= $1 AND NOT EXISTS \
                     (SELECT 1 FROM sessions x WHERE x.email = g.email) AND NOT EXISTS \
                     (SELECT 1 FROM submissions y WHERE y.email = g.email)",
                    &[],
                    since,
                )
                .await?
            };
            (known == 0 && new_ones >= limits.total_new).then_some(SigninRefusal::Site)
        };
        if let Some(why) = refusal {
            tx.rollback().await?;
            return Ok(Err(why));
        }
        sqlx::query(
            "INSERT INTO signins (code_hash, email, created, expires, used, requester) VALUES ($1, $2, $3, $4, 0, $5)",
        )
        .bind(code_hash)
        .bind(email)
        .bind(now)
        .bind(expires)
        .bind(requester)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(Ok(()))
    }

    /// Sign-in e-mails sent since `since` (the tests' and the load bench's view).
    pub async fn signins_since(&self, since: i64) -> Result<i64, sqlx::Error> {
        sqlx::query("SELECT COUNT(*) FROM signins WHERE created >= $1")
            .bind(since)
            .fetch_one(&self.pool)
            .await?
            .try_get(0)
    }

    /// The address a sign-in code was sent to, if the code is unused and unexpired (it is used
    /// up now: one code, one session).
    pub async fn take_signin(&self, code_hash: &str, now: i64) -> Result<Option<String>, sqlx::Error> {
        let row = sqlx::query(
            "UPDATE signins SET used = $2 WHERE code_hash = $1 AND used = 0 AND expires > $2 RETURNING email",
        )
        .bind(code_hash)
        .bind(now)
        .fetch_optional(&self.pool)
        .await?;
        row.map(|r| r.try_get(0)).transpose()
    }

    /// The address of an unused, unexpired code, without using it.
    pub async fn peek_signin(&self, code_hash: &str, now: i64) -> Result<Option<String>, sqlx::Error> {
        let row = sqlx::query("SELECT email FROM signins WHERE code_hash = $1 AND used = 0 AND expires > $2")
            .bind(code_hash)
            .bind(now)
            .fetch_optional(&self.pool)
            .await?;
        row.map(|r| r.try_get(0)).transpose()
    }

    pub async fn add_session(
        &self,
        id_hash: &str,
        email: &str,
        csrf: &str,
        now: i64,
        expires: i64,
    ) -> Result<(), sqlx::Error> {
        sqlx::query("INSERT INTO sessions (id_hash, email, csrf, created, expires) VALUES ($1, $2, $3, $4, $5)")
            .bind(id_hash)
            .bind(email)
            .bind(csrf)
            .bind(now)
            .bind(expires)
            .execute(&self.pool)
            .await
            .map(|_| ())
    }

    /// A session's address and form token.
    pub async fn session(&self, id_hash: &str, now: i64) -> Result<Option<(String, String)>, sqlx::Error> {
        let row = sqlx::query("SELECT email, csrf FROM sessions WHERE id_hash = $1 AND expires > $2")
            .bind(id_hash)
            .bind(now)
            .fetch_optional(&self.pool)
            .await?;
        row.map(|r| Ok((r.try_get(0)?, r.try_get(1)?))).transpose()
    }

    pub async fn end_session(&self, id_hash: &str) -> Result<(), sqlx::Error> {
        sqlx::query("DELETE FROM sessions WHERE id_hash = $1").bind(id_hash).execute(&self.pool).await.map(|_| ())
    }

    // — Participants —

    /// Keeps `lang` as the language `email` last used (their e-mails are written in it).
    pub async fn set_language(&self, email: &str, lang: &str) -> Result<(), sqlx::Error> {
        sqlx::query(
            "INSERT INTO participants (email, lang) VALUES ($1, $2) ON CONFLICT (email) DO UPDATE SET lang = $2",
        )
        .bind(email)
        .bind(lang)
        .execute(&self.pool)
        .await
        .map(|_| ())
    }

    /// The language `email` last used, if any is known.
    pub async fn language(&self, email: &str) -> Result<Option<String>, sqlx::Error> {
        let row = sqlx::query("SELECT lang FROM participants WHERE email = $1")
            .bind(email)
            .fetch_optional(&self.pool)
            .await?;
        row.map(|r| r.try_get(0)).transpose()
    }

    // — Submissions —

    /// Uploads `email` made since `since`.
    pub async fn uploads_since(&self, email: &str, since: i64) -> Result<i64, sqlx::Error> {
        sqlx::query(UPLOADS_SINCE).bind(email).bind(since).fetch_one(&self.pool).await?.try_get(0)
    }

    /// Records an upload (its file is written by the caller under `stored`) and queues its
    /// judging, in one transaction, if the participant has made fewer than `per_hour` uploads
    /// in the hour before it (`Ok(None)` otherwise): the count and the insert are one step, so
    /// that parallel uploads cannot all pass the limit. The participant's older uploads still
    /// waiting in the queue are superseded (the last upload counts: judging them would only
    /// delay the others').
    pub async fn add_submission(&self, s: &Submission, per_hour: i64) -> Result<Option<i64>, sqlx::Error> {
        let mut tx = self.pool.begin().await?;
        Self::lock_limits(&mut tx).await?;
        let made = Self::count(&mut tx, UPLOADS_SINCE, &[&s.email], s.uploaded - 3600).await?;
        if made >= per_hour {
            tx.rollback().await?;
            return Ok(None);
        }
        let id: i64 = sqlx::query(
            "INSERT INTO submissions (email, uploaded, file_name, bytes, version, agent_name, state, reason, check_report, stored) \
             VALUES ($1, $2, $3, $4, $5, $6, 'queued', '', '', $7) RETURNING id",
        )
        .bind(&s.email)
        .bind(s.uploaded)
        .bind(&s.file_name)
        .bind(s.bytes)
        .bind(&s.version)
        .bind(&s.agent_name)
        .bind(&s.stored)
        .fetch_one(&mut *tx)
        .await?
        .try_get(0)?;
        let older = "SELECT j.submission FROM jobs j JOIN submissions t ON t.id = j.submission \
                     WHERE t.email = $1 AND t.id <> $2 AND j.state = 'queued'";
        sqlx::query(&format!("UPDATE submissions SET state = 'superseded', reason = $3 WHERE id IN ({older})"))
            .bind(&s.email)
            .bind(id)
            .bind(crate::judge::Trouble::Superseded.said(Lang::En, &id.to_string()))
            .execute(&mut *tx)
            .await?;
        sqlx::query(&format!("UPDATE jobs SET state = 'done' WHERE state = 'queued' AND submission IN ({older})"))
            .bind(&s.email)
            .bind(id)
            .execute(&mut *tx)
            .await?;
        Self::queue(&mut tx, id, s.uploaded).await?;
        Self::bump(&mut *tx).await?;
        tx.commit().await?;
        Ok(Some(id))
    }

    async fn queue(tx: &mut sqlx::Transaction<'_, sqlx::Any>, submission: i64, now: i64) -> Result<(), sqlx::Error> {
        // One open job a submission: a re-judging of a queued one adds nothing.
        let open: i64 = sqlx::query("SELECT COUNT(*) FROM jobs WHERE submission = $1 AND state <> 'done'")
            .bind(submission)
            .fetch_one(&mut **tx)
            .await?
            .try_get(0)?;
        if open == 0 {
            sqlx::query(
                "INSERT INTO jobs (submission, state, attempt, worker, lease_until, created) VALUES ($1, 'queued', 0, '', 0, $2)",
            )
            .bind(submission)
            .bind(now)
            .execute(&mut **tx)
            .await?;
        }
        Ok(())
    }

    pub async fn submission(&self, id: i64) -> Result<Option<Submission>, sqlx::Error> {
        let q = format!("SELECT {SUBMISSION_COLUMNS} FROM submissions WHERE id = $1");
        sqlx::query(&q).bind(id).fetch_optional(&self.pool).await?.map(|r| submission(&r)).transpose()
    }

    pub async fn submissions_of(&self, email: &str) -> Result<Vec<Submission>, sqlx::Error> {
        let q = format!("SELECT {SUBMISSION_COLUMNS} FROM submissions WHERE email = $1 ORDER BY id DESC");
        sqlx::query(&q).bind(email).fetch_all(&self.pool).await?.iter().map(submission).collect()
    }

    pub async fn all_submissions(&self) -> Result<Vec<Submission>, sqlx::Error> {
        let q = format!("SELECT {SUBMISSION_COLUMNS} FROM submissions ORDER BY id DESC");
        sqlx::query(&q).fetch_all(&self.pool).await?.iter().map(submission).collect()
    }

    /// The latest submission of each identity (the one that counts).
    pub async fn current_ids(&self) -> Result<Vec<i64>, sqlx::Error> {
        sqlx::query("SELECT MAX(id) FROM submissions GROUP BY email")
            .fetch_all(&self.pool)
            .await?
            .iter()
            .map(|r| r.try_get(0))
            .collect()
    }

    pub async fn outcome(&self, submission: i64) -> Result<Option<Outcome>, sqlx::Error> {
        let q = format!("SELECT {OUTCOME_COLUMNS} FROM results WHERE submission = $1");
        sqlx::query(&q).bind(submission).fetch_optional(&self.pool).await?.map(|r| outcome(&r, 0)).transpose()
    }

    /// Every result row (a test's and the organiser's view: one a submission at most).
    pub async fn all_outcomes(&self) -> Result<Vec<Outcome>, sqlx::Error> {
        let q = format!("SELECT {OUTCOME_COLUMNS} FROM results ORDER BY submission");
        sqlx::query(&q).fetch_all(&self.pool).await?.iter().map(|r| outcome(r, 0)).collect()
    }

    pub async fn set_state(&self, id: i64, state: SubmissionState) -> Result<(), sqlx::Error> {
        let mut tx = self.pool.begin().await?;
        sqlx::query("UPDATE submissions SET state = $2 WHERE id = $1")
            .bind(id)
            .bind(state.as_str())
            .execute(&mut *tx)
            .await?;
        Self::bump(&mut *tx).await?;
        tx.commit().await
    }

    /// Judges submissions again (`None`: every identity's current one).
    pub async fn rejudge(&self, ids: Option<&[i64]>, now: i64) -> Result<usize, sqlx::Error> {
        let ids = match ids {
            Some(ids) => ids.to_vec(),
            None => self.current_ids().await?,
        };
        let mut tx = self.pool.begin().await?;
        for &id in &ids {
            sqlx::query("UPDATE submissions SET state = 'queued', reason = '' WHERE id = $1")
                .bind(id)
                .execute(&mut *tx)
                .await?;
            Self::queue(&mut tx, id, now).await?;
        }
        Self::bump(&mut *tx).await?;
        tx.commit().await?;
        Ok(ids.len())
    }

    // — The judges' queue —

    /// Takes a job that is queued or whose lease lapsed, for `lease` seconds, fairly between
    /// participants: first the participants with no job being judged now, then the one whose
    /// last job was claimed longest ago (round-robin), then the oldest job. One participant's
    /// uploads never keep another's waiting behind them.
    /// `worker` names the judge in the job (`HOST:ROLE:PID:K`), `worker_id` is the HTTP worker's
    /// number ([`Store::add_worker`]), 0 for a judge of the database's own.
    pub async fn claim(&self, worker: &str, worker_id: i64, now: i64, lease: i64) -> Result<Option<Job>, sqlx::Error> {
        // The candidates in order, then each taken by an update that only a still claimable job
        // satisfies. (One update with the choice as its subquery lost jobs on PostgreSQL: judges
        // claiming at once chose the same row, the later ones found it taken and claimed
        // nothing while other jobs waited.) A round that takes none of its candidates means
        // other judges took them all: the next round chooses again, until nothing is claimable.
        let same_participant = "FROM jobs k JOIN submissions t ON t.id = k.submission WHERE t.email = s.email";
        let choose = format!(
            "SELECT j.id FROM jobs j JOIN submissions s ON s.id = j.submission \
             WHERE (j.state = 'queued' OR (j.state = 'running' AND j.lease_until < $1)) \
             ORDER BY (SELECT COUNT(*) {same_participant} AND k.state = 'running' AND k.lease_until >= $1), \
                      (SELECT COALESCE(MAX(k.claimed), 0) {same_participant}), j.id \
             LIMIT 8"
        );
        let take = "UPDATE jobs SET state = 'running', worker = $1, worker_id = $4, lease_until = $2, \
                    attempt = attempt + 1, claimed = (SELECT COALESCE(MAX(c.claimed), 0) + 1 FROM jobs c) \
                    WHERE id = $5 AND (state = 'queued' OR (state = 'running' AND lease_until < $3)) \
                    RETURNING id, submission, attempt";
        loop {
            let candidates: Vec<i64> = sqlx::query(&choose)
                .bind(now)
                .fetch_all(&self.pool)
                .await?
                .iter()
                .map(|r| r.try_get(0))
                .collect::<Result<_, _>>()?;
            if candidates.is_empty() {
                return Ok(None);
            }
            for id in candidates {
                let row = sqlx::query(take)
                    .bind(worker)
                    .bind(now + lease)
                    .bind(now)
                    .bind(worker_id)
                    .bind(id)
                    .fetch_optional(&self.pool)
                    .await?;
                if let Some(r) = row {
                    return Ok(Some(Job { id: r.try_get(0)?, submission: r.try_get(1)?, attempt: r.try_get(2)? }));
                }
            }
        }
    }

    /// Whether `job`'s submission was judged before it (a re-judging's job): an earlier job of
    /// the same submission has ended.
    pub async fn judged_before(&self, job: &Job) -> Result<bool, sqlx::Error> {
        let earlier: i64 =
            sqlx::query("SELECT COUNT(*) FROM jobs WHERE submission = $1 AND id < $2 AND state = 'done'")
                .bind(job.submission)
                .bind(job.id)
                .fetch_one(&self.pool)
                .await?
                .try_get(0)?;
        Ok(earlier > 0)
    }

    /// Renews a job's lease; `false`: it is no longer this attempt's (another worker took it).
    pub async fn renew(&self, job: &Job, until: i64) -> Result<bool, sqlx::Error> {
        let done = sqlx::query("UPDATE jobs SET lease_until = $3 WHERE id = $1 AND attempt = $2 AND state = 'running'")
            .bind(job.id)
            .bind(job.attempt)
            .bind(until)
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    /// The job `id` while its attempt `attempt` is being judged by the HTTP worker `worker_id`
    /// (what a worker's request about a job must show before the server reads or keeps anything).
    pub async fn held(&self, id: i64, attempt: i64, worker_id: i64) -> Result<Option<Job>, sqlx::Error> {
        let row = sqlx::query(
            "SELECT id, submission, attempt FROM jobs \
             WHERE id = $1 AND attempt = $2 AND state = 'running' AND worker_id = $3",
        )
        .bind(id)
        .bind(attempt)
        .bind(worker_id)
        .fetch_optional(&self.pool)
        .await?;
        row.map(|r| Ok(Job { id: r.try_get(0)?, submission: r.try_get(1)?, attempt: r.try_get(2)? })).transpose()
    }

    /// Gives a job back to the queue (its worker is stopping).
    pub async fn release(&self, job: &Job) -> Result<(), sqlx::Error> {
        let mut tx = self.pool.begin().await?;
        if Self::requeue(&mut tx, job.id, job.attempt, job.submission).await? {
            Self::bump(&mut *tx).await?;
        }
        tx.commit().await
    }

    /// Puts attempt `attempt` of job `job`, if it still runs, and its submission back in the
    /// queue, in `tx`: whether it did.
    async fn requeue(
        tx: &mut sqlx::Transaction<'_, sqlx::Any>,
        job: i64,
        attempt: i64,
        submission: i64,
    ) -> Result<bool, sqlx::Error> {
        let mine = sqlx::query(
            "UPDATE jobs SET state = 'queued', lease_until = 0 WHERE id = $1 AND attempt = $2 AND state = 'running'",
        )
        .bind(job)
        .bind(attempt)
        .execute(&mut **tx)
        .await?;
        if mine.rows_affected() == 1 {
            sqlx::query("UPDATE submissions SET state = 'queued' WHERE id = $1")
                .bind(submission)
                .execute(&mut **tx)
                .await?;
        }
        Ok(mine.rows_affected() == 1)
    }

    /// Ends a job with its verdict, in one transaction; `false` (and nothing written) when the
    /// job is no longer this attempt's.
    pub async fn finish(&self, job: &Job, verdict: &Verdict, now: i64) -> Result<bool, sqlx::Error> {
        let mut tx = self.pool.begin().await?;
        let mine = sqlx::query(
            "UPDATE jobs SET state = 'done', lease_until = $3 WHERE id = $1 AND attempt = $2 AND state = 'running'",
        )
        .bind(job.id)
        .bind(job.attempt)
        .bind(now)
        .execute(&mut *tx)
        .await?;
        if mine.rows_affected() != 1 {
            tx.rollback().await?;
            return Ok(false);
        }
        let (state, reason, check) = match verdict {
            Verdict::Judged { outcome, reason, check } => {
                // The share is bound as a number always, with whether it is there beside it:
                // sqlx 0.8.6's `Any` driver binds a missing f64 as PostgreSQL's float4, and the
                // statement it caches with that type then refuses the next real share ("incorrect
                // binary data format": a disqualification, then a score, on one connection).
                let q = format!(
                    "INSERT INTO results ({OUTCOME_COLUMNS}) VALUES ($1, CASE WHEN $12 = 1 THEN $2 ELSE NULL END, \
                     $3, $4, $5, $6, $7, $8, $9, $10, $11, $13) \
                     ON CONFLICT (submission) DO UPDATE SET share = excluded.share, cells = excluded.cells, \
                     tiebreak = excluded.tiebreak, violations = excluded.violations, \
                     disqualified = excluded.disqualified, council_fell = excluded.council_fell, \
                     rounds = excluded.rounds, replay = excluded.replay, log = excluded.log, judged = excluded.judged, \
                     slowest = excluded.slowest"
                );
                sqlx::query(&q)
                    .bind(job.submission)
                    .bind(outcome.share.unwrap_or(0.0))
                    .bind(outcome.cells)
                    .bind(outcome.tiebreak)
                    .bind(outcome.violations)
                    .bind(outcome.disqualified)
                    .bind(outcome.council_fell)
                    .bind(outcome.rounds)
                    .bind(&outcome.replay)
                    .bind(&outcome.log)
                    .bind(now)
                    .bind(i64::from(outcome.share.is_some()))
                    .bind(outcome.times.column())
                    .execute(&mut *tx)
                    .await?;
                let state = if outcome.disqualified.is_some() {
                    SubmissionState::Disqualified
                } else {
                    SubmissionState::Scored
                };
                (state, reason.as_str(), check.as_str())
            }
            Verdict::CheckFailed { reason, check } => {
                sqlx::query("DELETE FROM results WHERE submission = $1").bind(job.submission).execute(&mut *tx).await?;
                (SubmissionState::CheckFailed, reason.as_str(), check.as_str())
            }
            Verdict::Error { reason } => (SubmissionState::Error, reason.as_str(), ""),
        };
        sqlx::query("UPDATE submissions SET state = $2, reason = $3, check_report = $4 WHERE id = $1")
            .bind(job.submission)
            .bind(state.as_str())
            .bind(reason)
            .bind(check)
            .execute(&mut *tx)
            .await?;
        Self::bump(&mut *tx).await?;
        tx.commit().await?;
        Ok(true)
    }

    /// Jobs by state (the organiser's page, the tests).
    pub async fn job_counts(&self) -> Result<Vec<(String, i64)>, sqlx::Error> {
        sqlx::query("SELECT state, COUNT(*) FROM jobs GROUP BY state ORDER BY state")
            .fetch_all(&self.pool)
            .await?
            .iter()
            .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
            .collect()
    }

    /// Jobs not yet done: uploads and re-judgings queued or being judged. The final waits for
    /// none of them to be left.
    pub async fn pending_jobs(&self) -> Result<i64, sqlx::Error> {
        sqlx::query(PENDING_JOBS).fetch_one(&self.pool).await?.try_get(0)
    }

    // — Judges over HTTP —

    /// Records a worker token (its SHA-256: the token itself is shown once and never kept).
    pub async fn add_worker(&self, name: &str, token_hash: &str, now: i64) -> Result<i64, sqlx::Error> {
        let mut tx = self.pool.begin().await?;
        let id: i64 = sqlx::query(
            "INSERT INTO workers (name, token_hash, created, revoked, seen, host) VALUES ($1, $2, $3, 0, 0, '') \
             RETURNING id",
        )
        .bind(name)
        .bind(token_hash)
        .bind(now)
        .fetch_one(&mut *tx)
        .await?
        .try_get(0)?;
        Self::bump(&mut *tx).await?;
        tx.commit().await?;
        Ok(id)
    }

    /// The worker whose token hashes to `token_hash` (revoked ones too: the caller refuses them),
    /// its last request set to `now` and, when it names one, its host.
    pub async fn worker_of_token(
        &self,
        token_hash: &str,
        now: i64,
        host: Option<&str>,
    ) -> Result<Option<Worker>, sqlx::Error> {
        sqlx::query("UPDATE workers SET seen = $2, host = COALESCE($3, host) WHERE token_hash = $1 AND revoked = 0")
            .bind(token_hash)
            .bind(now)
            .bind(host)
            .execute(&self.pool)
            .await?;
        let q = format!("SELECT {WORKER_COLUMNS} FROM workers w WHERE token_hash = $1");
        sqlx::query(&q).bind(token_hash).fetch_optional(&self.pool).await?.as_ref().map(worker).transpose()
    }

    /// Every worker token issued, newest first, with the jobs each has judged and the uploads
    /// it disqualified by timeouts.
    pub async fn workers(&self) -> Result<Vec<Worker>, sqlx::Error> {
        let q = format!("SELECT {WORKER_COLUMNS} FROM workers w ORDER BY id DESC");
        let mut workers: Vec<Worker> =
            sqlx::query(&q).fetch_all(&self.pool).await?.iter().map(worker).collect::<Result<_, _>>()?;
        for w in &mut workers {
            w.timeouts = self.timeout_disqualifications(w.id).await?;
        }
        Ok(workers)
    }

    /// The uploads that stand disqualified by timeouts (SPEC §8: the fourth violation a
    /// timeout) whose last judging was the worker `worker_id`'s: what a slow machine may have
    /// done to them, to be judged again.
    pub async fn timeout_disqualifications(&self, worker_id: i64) -> Result<Vec<i64>, sqlx::Error> {
        let rows = sqlx::query(
            "SELECT s.id, s.reason FROM submissions s WHERE s.state = 'disqualified' \
             AND (SELECT j.worker_id FROM jobs j WHERE j.submission = s.id AND j.state = 'done' \
                  ORDER BY j.id DESC LIMIT 1) = $1 \
             ORDER BY s.id",
        )
        .bind(worker_id)
        .fetch_all(&self.pool)
        .await?;
        let mut ids = Vec::new();
        for r in &rows {
            let reason: String = r.try_get(1)?;
            if crate::judge::disqualifying_kind(&reason).as_deref() == Some("timeout") {
                ids.push(r.try_get(0)?);
            }
        }
        Ok(ids)
    }

    /// Records a worker's measured speed and its share of the server's.
    pub async fn set_worker_speed(
        &self,
        id: i64,
        figures: &crate::speed::Speed,
        share: f64,
        now: i64,
    ) -> Result<(), sqlx::Error> {
        let mut tx = self.pool.begin().await?;
        sqlx::query("UPDATE workers SET engine_ms = $2, python_ms = $3, speed = $4, measured = $5 WHERE id = $1")
            .bind(id)
            .bind(figures.engine_ms)
            .bind(figures.python_ms)
            .bind(share)
            .bind(now)
            .execute(&mut *tx)
            .await?;
        Self::bump(&mut *tx).await?;
        tx.commit().await
    }

    /// Revokes a worker's token; the jobs it holds go back to the queue at once (their lease
    /// lapsed: a result it sends for them later is dropped once another judge takes them).
    /// `false`: no such worker, or revoked before.
    pub async fn revoke_worker(&self, id: i64, now: i64) -> Result<bool, sqlx::Error> {
        let mut tx = self.pool.begin().await?;
        let done = sqlx::query("UPDATE workers SET revoked = $2 WHERE id = $1 AND revoked = 0")
            .bind(id)
            .bind(now)
            .execute(&mut *tx)
            .await?;
        if done.rows_affected() == 1 {
            let held =
                sqlx::query("SELECT id, attempt, submission FROM jobs WHERE worker_id = $1 AND state = 'running'")
                    .bind(id)
                    .fetch_all(&mut *tx)
                    .await?;
            for row in held {
                Self::requeue(&mut tx, row.try_get(0)?, row.try_get(1)?, row.try_get(2)?).await?;
            }
            Self::bump(&mut *tx).await?;
        }
        tx.commit().await?;
        Ok(done.rows_affected() == 1)
    }

    // — The leaderboard —

    /// Each participant's row (SPEC §10: share, then the tie-break round; equal on both, equal
    /// rank; then the earlier upload): the result of their last upload. While that upload is
    /// still being judged (a new upload, a re-judging), the last result they had stays, marked
    /// `pending`, until the new one replaces it; a disqualified or check-failed last upload
    /// takes the row away (the last upload counts).
    pub async fn board(&self) -> Result<Vec<BoardRow>, sqlx::Error> {
        // Only the uploads the walk below looks at: each participant's from the newest that
        // settles their place back to it — scored, disqualified, failed the check, or with a
        // result or a check report of its own — and none superseded. Older ones are never met
        // (the walk stops at the settling one), and at an event's size (10 000 uploads) reading
        // them all made every change of the board cost hundreds of milliseconds.
        let q = format!(
            "SELECT {SUBMISSION_COLUMNS} FROM submissions s WHERE s.state <> 'superseded' AND s.id >= COALESCE(\
             (SELECT MAX(t.id) FROM submissions t WHERE t.email = s.email AND t.state <> 'superseded' AND \
             (t.state IN ('scored', 'disqualified', 'check_failed') OR t.check_report <> '' \
              OR EXISTS (SELECT 1 FROM results r WHERE r.submission = t.id))), 0) \
             ORDER BY s.id DESC"
        );
        let subs: Vec<Submission> =
            sqlx::query(&q).fetch_all(&self.pool).await?.iter().map(submission).collect::<Result<_, _>>()?;
        let mut outcomes: std::collections::HashMap<i64, Outcome> =
            self.all_outcomes().await?.into_iter().map(|o| (o.submission, o)).collect();
        let mut rows: Vec<(Submission, Outcome, bool)> = Vec::new();
        let mut done: std::collections::HashSet<String> = std::collections::HashSet::new();
        // Participants whose last upload is still being judged.
        let mut waiting: std::collections::HashSet<String> = std::collections::HashSet::new();
        // Newest first: each participant's uploads are met from the last one back.
        for s in subs {
            if done.contains(&s.email) {
                continue;
            }
            let judged = |o: &Outcome| o.disqualified.is_none() && o.share.is_some();
            match s.state {
                SubmissionState::Superseded => continue,
                SubmissionState::Scored => {
                    done.insert(s.email.clone());
                    if let Some(o) = outcomes.remove(&s.id).filter(judged) {
                        let pending = waiting.contains(&s.email);
                        rows.push((s, o, pending));
                    }
                }
                // Being judged (or the judge failed it): its earlier result while it had one, else
                // the participant's result before it.
                SubmissionState::Queued
                | SubmissionState::Checking
                | SubmissionState::Running
                | SubmissionState::Error => {
                    if let Some(o) = outcomes.remove(&s.id) {
                        done.insert(s.email.clone());
                        if judged(&o) {
                            rows.push((s, o, true));
                        }
                    } else if !s.check.is_empty() {
                        // Judged before without a result: it had failed the check.
                        done.insert(s.email.clone());
                    } else {
                        waiting.insert(s.email.clone());
                    }
                }
                _ => {
                    done.insert(s.email.clone());
                }
            }
        }
        rows.sort_by(|(sa, a, _), (sb, b, _)| {
            let key = |o: &Outcome| (o.share.unwrap_or(-1.0), o.tiebreak.unwrap_or(i64::MAX));
            let (ka, kb) = (key(a), key(b));
            kb.0.total_cmp(&ka.0).then(ka.1.cmp(&kb.1)).then(sa.uploaded.cmp(&sb.uploaded)).then(sa.id.cmp(&sb.id))
        });
        let mut out: Vec<BoardRow> = Vec::with_capacity(rows.len());
        for (k, (s, o, pending)) in rows.into_iter().enumerate() {
            let rank = match out.last() {
                Some(prev) if prev.outcome.share == o.share && prev.outcome.tiebreak == o.tiebreak => prev.rank,
                _ => k + 1,
            };
            out.push(BoardRow { rank, submission: s, outcome: o, pending });
        }
        Ok(out)
    }

    /// The flash victories: each identity's lowest round in which the Council fell, of any
    /// submission judged and not disqualified, lowest first (earlier upload first on a tie).
    pub async fn flash(&self) -> Result<Vec<(Submission, Outcome)>, sqlx::Error> {
        let cols = joined_columns();
        let q = format!(
            "SELECT {cols} FROM submissions s JOIN results r ON r.submission = s.id \
             WHERE r.council_fell IS NOT NULL AND r.disqualified IS NULL AND s.state <> 'check_failed' \
             ORDER BY r.council_fell, s.uploaded, s.id"
        );
        let rows = sqlx::query(&q).fetch_all(&self.pool).await?;
        let mut seen = std::collections::HashSet::new();
        let mut out = Vec::new();
        for r in &rows {
            let (s, o) = (submission(r)?, outcome(r, 11)?);
            if seen.insert(s.email.clone()) {
                out.push((s, o));
            }
        }
        Ok(out)
    }

    // — The organisers' actions —

    /// Records an organiser's action.
    pub async fn audit(&self, at: i64, who: &str, act: &Act) -> Result<(), sqlx::Error> {
        let (what, detail) = act.said(Lang::En);
        let mut tx = self.pool.begin().await?;
        sqlx::query("INSERT INTO audit (at, who, what, detail, act) VALUES ($1, $2, $3, $4, $5)")
            .bind(at)
            .bind(who)
            .bind(what)
            .bind(detail)
            .bind(act.to_json())
            .execute(&mut *tx)
            .await?;
        Self::bump(&mut *tx).await?;
        tx.commit().await
    }

    /// The organisers' actions, newest first.
    pub async fn audit_log(&self, limit: i64) -> Result<Vec<AuditEntry>, sqlx::Error> {
        sqlx::query("SELECT at, who, what, detail, act FROM audit ORDER BY id DESC LIMIT $1")
            .bind(limit)
            .fetch_all(&self.pool)
            .await?
            .iter()
            .map(|r| {
                Ok(AuditEntry {
                    at: r.try_get(0)?,
                    who: r.try_get(1)?,
                    what: r.try_get(2)?,
                    detail: r.try_get(3)?,
                    act: r.try_get(4)?,
                })
            })
            .collect()
    }

    // — The public export —

    /// When an organiser opened the public export by hand (Unix seconds), if one did.
    pub async fn export_opened(&self) -> Result<Option<i64>, sqlx::Error> {
        let v: i64 =
            sqlx::query("SELECT v FROM meta WHERE k = 'export_opened'").fetch_one(&self.pool).await?.try_get(0)?;
        Ok((v > 0).then_some(v))
    }

    /// Opens the public export at `now` (an organiser's button); `false` when it had been
    /// opened already (the first opening's instant stays).
    pub async fn open_export(&self, now: i64) -> Result<bool, sqlx::Error> {
        let mut tx = self.pool.begin().await?;
        let done = sqlx::query("UPDATE meta SET v = $1 WHERE k = 'export_opened' AND v = 0")
            .bind(now.max(1))
            .execute(&mut *tx)
            .await?;
        Self::bump(&mut *tx).await?;
        tx.commit().await?;
        Ok(done.rows_affected() == 1)
    }

    // — The final —

    /// Records the final's start, unless a job is still pending (an upload made by the deadline,
    /// a re-judging): `Ok(Err(pending))` then. The count and the insert are one step, as for
    /// the limits.
    pub async fn start_final(&self, now: i64, seating: &str) -> Result<Result<i64, i64>, sqlx::Error> {
        let mut tx = self.pool.begin().await?;
        Self::lock_limits(&mut tx).await?;
        let pending: i64 = sqlx::query(PENDING_JOBS).fetch_one(&mut *tx).await?.try_get(0)?;
        if pending > 0 {
            tx.rollback().await?;
            return Ok(Err(pending));
        }
        let id = sqlx::query(
            "INSERT INTO finals (state, started, result, replay, seating) VALUES ('running', $1, '', '', $2) RETURNING id",
        )
        .bind(now)
        .bind(seating)
        .fetch_one(&mut *tx)
        .await?
        .try_get(0)?;
        Self::bump(&mut *tx).await?;
        tx.commit().await?;
        Ok(Ok(id))
    }

    pub async fn end_final(&self, id: i64, state: FinalState, result: &str, replay: &str) -> Result<(), sqlx::Error> {
        let mut tx = self.pool.begin().await?;
        sqlx::query("UPDATE finals SET state = $2, result = $3, replay = $4 WHERE id = $1")
            .bind(id)
            .bind(state.as_str())
            .bind(result)
            .bind(replay)
            .execute(&mut *tx)
            .await?;
        Self::bump(&mut *tx).await?;
        tx.commit().await
    }

    /// Marks a final cut off (by a crash: still `running` in the database; or by a stop:
    /// `interrupted`) as running again; `false` when it is neither.
    pub async fn resume_final(&self, id: i64) -> Result<bool, sqlx::Error> {
        let mut tx = self.pool.begin().await?;
        let done =
            sqlx::query("UPDATE finals SET state = 'running' WHERE id = $1 AND state IN ('running', 'interrupted')")
                .bind(id)
                .execute(&mut *tx)
                .await?;
        Self::bump(&mut *tx).await?;
        tx.commit().await?;
        Ok(done.rows_affected() == 1)
    }

    /// The latest final run.
    pub async fn last_final(&self) -> Result<Option<FinalRecord>, sqlx::Error> {
        let row =
            sqlx::query("SELECT id, state, started, result, replay, seating FROM finals ORDER BY id DESC LIMIT 1")
                .fetch_optional(&self.pool)
                .await?;
        row.map(|r| {
            Ok(FinalRecord {
                id: r.try_get(0)?,
                state: FinalState::read(&r, 1)?,
                started: r.try_get(2)?,
                result: r.try_get(3)?,
                replay: r.try_get(4)?,
                seating: r.try_get(5)?,
            })
        })
        .transpose()
    }
}

#[cfg(test)]
mod state_tests {
    use super::*;

    #[test]
    fn a_name_alone_drops_the_version_its_own_column_shows() {
        let sub = |name: &str, version: &str| Submission {
            id: 1,
            email: String::new(),
            uploaded: 0,
            file_name: "a.py".into(),
            bytes: 1,
            version: version.into(),
            agent_name: name.into(),
            state: SubmissionState::Queued,
            reason: String::new(),
            check: String::new(),
            stored: String::new(),
        };
        assert_eq!(sub("Mravec 7", "7").name_alone(), "Mravec");
        assert_eq!(sub("Mravec 7", "").name_alone(), "Mravec 7", "no version: the name as it is");
        assert_eq!(sub("Mravec17", "7").name_alone(), "Mravec17", "not a word of its own");
        assert_eq!(sub("7", "7").name_alone(), "7", "never an empty name");
        assert_eq!(sub("Mravec 7 b", "7").name_alone(), "Mravec 7 b");
    }

    /// The words stored, shown on the pages and used by the pages' CSS are the ones stored
    /// before the enums (no migration), one each; the serde names are the same words.
    #[test]
    fn states_are_their_stored_words() {
        let words = |all: &[&'static str]| all.to_vec();
        assert_eq!(
            SubmissionState::ALL.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
            words(&["queued", "checking", "running", "scored", "disqualified", "check_failed", "error", "superseded"])
        );
        assert_eq!(
            FinalState::ALL.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
            words(&["running", "interrupted", "finished", "failed", "abandoned"])
        );
        for &s in SubmissionState::ALL {
            assert_eq!(SubmissionState::from_word(s.as_str()), Some(s));
            assert_eq!(serde_json::to_value(s).unwrap(), s.as_str());
            assert!(s == s.as_str());
        }
        for &s in FinalState::ALL {
            assert_eq!(FinalState::from_word(s.as_str()), Some(s));
            assert_eq!(serde_json::to_value(s).unwrap(), s.as_str());
        }
        assert_eq!(SubmissionState::from_word("done"), None);
        let judged: Vec<_> = SubmissionState::ALL.iter().filter(|s| s.is_being_judged()).collect();
        assert_eq!(judged, [&SubmissionState::Queued, &SubmissionState::Checking, &SubmissionState::Running]);
    }
}
