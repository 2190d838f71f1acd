-- Command keys: every state-changing command or click that a chat platform may deliver again
-- (Slack's retries, a redelivery after a restart, another replica) leaves its delivery key here,
-- written in the same transaction as the change it made, so a repeat finds it and changes
-- nothing. The lease is the one the command acted on.

-- +goose Up
CREATE TABLE command_keys (
    key        TEXT PRIMARY KEY,
    lease_id   INTEGER NOT NULL,
    created_at DATETIME NOT NULL
);

CREATE INDEX command_keys_created ON command_keys (created_at);

-- +goose Down
DROP TABLE command_keys;
