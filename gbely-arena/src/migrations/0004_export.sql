-- The public export of the results (issue 45), in SQLite's words as 0001: when an organiser
-- opened it before the deadline (Unix seconds; 0: not opened by hand, it opens at the deadline).
INSERT INTO meta (k, v) VALUES ('export_opened', 0);
