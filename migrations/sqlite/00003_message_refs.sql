-- Message refs: where each copy of a chat message about one thing (a Ref such as 'approval:L-42')
-- was posted, so a later notice edits the copies in place. One row per posted copy.

-- +goose Up
CREATE TABLE message_refs (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    platform   TEXT NOT NULL,
    ref        TEXT NOT NULL,
    recipient  TEXT NOT NULL DEFAULT '',
    channel    TEXT NOT NULL,
    message_id TEXT NOT NULL,
    created_at DATETIME
);

CREATE UNIQUE INDEX message_refs_message ON message_refs (platform, channel, message_id);
CREATE INDEX message_refs_ref ON message_refs (platform, ref, id);

-- +goose Down
DROP TABLE message_refs;
