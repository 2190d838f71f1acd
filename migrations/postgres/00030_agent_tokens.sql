-- Node agent tokens: one bearer token per node, kept only as its SHA-256, and the newest report
-- the node sent (reports older than it are replays and are ignored). Revoking keeps the row, so a
-- new token for the node still refuses replays of the old reports.

-- +goose Up
CREATE TABLE agent_tokens (
    node           TEXT PRIMARY KEY,
    token_hash     TEXT NOT NULL UNIQUE,
    created_at     TIMESTAMPTZ NOT NULL,
    revoked_at     TIMESTAMPTZ,
    last_report_at TIMESTAMPTZ,
    last_seq       BIGINT NOT NULL DEFAULT 0
);

-- +goose Down
DROP TABLE agent_tokens;
