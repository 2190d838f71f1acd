-- Inbox: a chat command that was acknowledged to the platform, kept until its work is done.
-- A process that acknowledged a command and died before running it leaves its row here; once
-- the row's claim runs out (or at once, when the process that claimed it ran on the same host
-- and no longer runs), a live process claims it and runs the command, or tells its sender that
-- it was not run. claimed_by names the claiming process (host/pid).

-- +goose Up
CREATE TABLE inbox (
    key           TEXT PRIMARY KEY,
    platform      TEXT NOT NULL,
    payload       TEXT NOT NULL,
    received_at   DATETIME NOT NULL,
    claimed_until DATETIME NOT NULL,
    claimed_by    TEXT NOT NULL DEFAULT ''
);

CREATE INDEX inbox_claimed ON inbox (platform, claimed_until);

-- +goose Down
DROP TABLE inbox;
