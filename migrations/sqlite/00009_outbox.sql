-- The outbox: every notice (a DM, a channel post, an edit of an earlier message) is written here in
-- the same transaction as the change that causes it, one row per recipient, and sent from here by
-- a sender that claims rows, delivers them in order per lease and recipient, and marks them sent. A crash loses
-- none; a claim that lapses (its sender died mid-delivery) is taken again.

-- +goose Up
CREATE TABLE outbox (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    lease_id      INTEGER NOT NULL,
    recipient     TEXT NOT NULL,
    notice        TEXT NOT NULL,
    created_at    DATETIME NOT NULL,
    next_at       DATETIME NOT NULL,
    attempts      INTEGER NOT NULL DEFAULT 0,
    claimed_by    TEXT NOT NULL DEFAULT '',
    claimed_until DATETIME,
    sent_at       DATETIME,
    last_error    TEXT NOT NULL DEFAULT ''
);

CREATE INDEX outbox_pending ON outbox (lease_id, recipient, id) WHERE sent_at IS NULL;
CREATE INDEX outbox_sent ON outbox (sent_at);

-- +goose Down
DROP TABLE outbox;
