-- What an event of thousands of participants asks of the database (the load run of
-- docs/arena.md): a sign-in looks a participant's sessions up by address, and the judges' queue
-- looks a submission's jobs up (one open job a submission; the claim's fairness counts each
-- participant's running jobs). Without these, both scanned whole tables inside write
-- transactions: at 2 000 sign-ins a sign-in waited past SQLite's busy timeout.
CREATE INDEX sessions_email ON sessions (email);
CREATE INDEX jobs_submission ON jobs (submission, state);
