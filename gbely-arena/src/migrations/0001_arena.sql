-- The competition's tables, in SQLite's words; for PostgreSQL `INTEGER PRIMARY KEY AUTOINCREMENT`
-- becomes `BIGSERIAL PRIMARY KEY` (store.rs `migrator`), nothing else.
CREATE TABLE meta (k TEXT PRIMARY KEY, v BIGINT NOT NULL);
INSERT INTO meta (k, v) VALUES ('version', 0);

CREATE TABLE signins (
    code_hash TEXT PRIMARY KEY,
    email TEXT NOT NULL,
    created BIGINT NOT NULL,
    expires BIGINT NOT NULL,
    used BIGINT NOT NULL
);
CREATE INDEX signins_email ON signins (email, created);

CREATE TABLE sessions (
    id_hash TEXT PRIMARY KEY,
    email TEXT NOT NULL,
    csrf TEXT NOT NULL,
    created BIGINT NOT NULL,
    expires BIGINT NOT NULL
);

CREATE TABLE submissions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    email TEXT NOT NULL,
    uploaded BIGINT NOT NULL,
    file_name TEXT NOT NULL,
    bytes BIGINT NOT NULL,
    version TEXT NOT NULL,
    agent_name TEXT NOT NULL,
    state TEXT NOT NULL,
    reason TEXT NOT NULL,
    check_report TEXT NOT NULL,
    stored TEXT NOT NULL
);
CREATE INDEX submissions_email ON submissions (email, id);

CREATE TABLE jobs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    submission BIGINT NOT NULL REFERENCES submissions (id),
    state TEXT NOT NULL,
    attempt BIGINT NOT NULL,
    worker TEXT NOT NULL,
    lease_until BIGINT NOT NULL,
    created BIGINT NOT NULL
);
CREATE INDEX jobs_open ON jobs (state, id);

CREATE TABLE results (
    submission BIGINT PRIMARY KEY REFERENCES submissions (id),
    share DOUBLE PRECISION,
    cells BIGINT NOT NULL,
    tiebreak BIGINT,
    violations BIGINT NOT NULL,
    disqualified BIGINT,
    council_fell BIGINT,
    rounds BIGINT NOT NULL,
    replay TEXT NOT NULL,
    log TEXT NOT NULL,
    judged BIGINT NOT NULL
);

CREATE TABLE finals (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    state TEXT NOT NULL,
    started BIGINT NOT NULL,
    result TEXT NOT NULL,
    replay TEXT NOT NULL
);
