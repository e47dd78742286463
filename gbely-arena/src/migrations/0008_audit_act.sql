-- The audit log keeps each organiser's act itself (`audit.rs`, JSON), from which /org says it in
-- the reader's language; `what` and `detail` stay its English words ('' for entries before).
ALTER TABLE audit ADD COLUMN act TEXT NOT NULL DEFAULT '';
