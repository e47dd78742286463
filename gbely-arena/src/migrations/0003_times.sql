-- Where the judged match's time went (issue 43): the agent's slowest answers and the limit they
-- were held to, as JSON ({"limit": 2.0, "slowest": [[round, ms], …]}, slowest first); '' for a
-- result judged before this was kept.
ALTER TABLE results ADD COLUMN slowest TEXT NOT NULL DEFAULT '';
