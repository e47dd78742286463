-- The language each participant last used on the site (issue 45): their e-mails (results,
-- re-judgings) are written in it. A participant with no row gets the configuration's language.
-- Independent of the other migrations: it only adds this table.
CREATE TABLE participants (
    email TEXT PRIMARY KEY,
    lang TEXT NOT NULL
);
