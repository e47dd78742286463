-- What a real event needs (issue 42), in SQLite's words as 0001.
-- Fair judging: the order in which jobs were claimed; the judges take next the participant
-- whose last claim is the oldest (round-robin by participant).
ALTER TABLE jobs ADD COLUMN claimed BIGINT NOT NULL DEFAULT 0;
-- The row a limited insert (sign-in e-mails, uploads) locks first, so that its count and its
-- insert are one step under parallel requests on both databases.
INSERT INTO meta (k, v) VALUES ('limits', 0);
-- Who asked for a sign-in e-mail (the requester's network address): limits per requester.
ALTER TABLE signins ADD COLUMN requester TEXT NOT NULL DEFAULT '';
CREATE INDEX signins_requester ON signins (requester, created);
CREATE INDEX signins_created ON signins (created);
CREATE INDEX submissions_uploaded ON submissions (email, uploaded);
-- The organisers' actions: who, what, when.
CREATE TABLE audit (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at BIGINT NOT NULL,
    who TEXT NOT NULL,
    what TEXT NOT NULL,
    detail TEXT NOT NULL
);
-- Who sat where in a final (JSON: each seat's agent, name and board place), so that a final
-- cut off by a crash can be continued with the same seats.
ALTER TABLE finals ADD COLUMN seating TEXT NOT NULL DEFAULT '';
