-- Judges that work over HTTP (`gbely arena worker --server URL`, issue 45), in SQLite's words
-- as 0001. A worker is known by its token, of which only the SHA-256 is kept; `revoked` is when
-- an organiser revoked it (0: valid); `seen` its last request and `host` the machine it named.
CREATE TABLE workers (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL,
    token_hash TEXT NOT NULL UNIQUE,
    created BIGINT NOT NULL,
    revoked BIGINT NOT NULL,
    seen BIGINT NOT NULL,
    host TEXT NOT NULL
);
-- Which of them holds or held a job (0: a judge of the database's own).
ALTER TABLE jobs ADD COLUMN worker_id BIGINT NOT NULL DEFAULT 0;
-- Its last measured speed (`speed.rs`): the workload's milliseconds, engine and Python, its
-- share of the server's own figures then, and when (0: never measured).
ALTER TABLE workers ADD COLUMN engine_ms DOUBLE PRECISION NOT NULL DEFAULT 0;
ALTER TABLE workers ADD COLUMN python_ms DOUBLE PRECISION NOT NULL DEFAULT 0;
ALTER TABLE workers ADD COLUMN speed DOUBLE PRECISION NOT NULL DEFAULT 0;
ALTER TABLE workers ADD COLUMN measured BIGINT NOT NULL DEFAULT 0;
