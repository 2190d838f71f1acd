-- Changes of someone's groups that a re-check found, kept until they are told: each is written
-- in the same transaction as the change of the account link (or its deletion, for a sign-in the
-- identity provider revoked), so that a service stopped in the middle of a pass, after the new
-- groups were written and before they were told, tells them after it starts again. before_link
-- and after_link are the link before and after the change (JSON, without the provider's tokens;
-- after_link NULL: the sign-in was revoked and the account unlinked). claimed_by names the process
-- that tells the change (host/pid@start), until claimed_until: the pass that found it holds it
-- until the pass is done, and another replica takes it over only once that claim lapses.
-- told_at: when it was told.

-- +goose Up
CREATE TABLE group_notices (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    platform      TEXT NOT NULL,
    workspace     TEXT NOT NULL DEFAULT '',
    chat_user     TEXT NOT NULL,
    before_link   TEXT NOT NULL,
    after_link    TEXT,
    created_at    DATETIME NOT NULL,
    claimed_by    TEXT NOT NULL DEFAULT '',
    claimed_until DATETIME,
    told_at       DATETIME
);

CREATE INDEX group_notices_pending ON group_notices (id) WHERE told_at IS NULL;
CREATE INDEX group_notices_told ON group_notices (told_at);

-- +goose Down
DROP TABLE group_notices;
