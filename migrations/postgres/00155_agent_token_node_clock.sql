-- Each node's token row no longer keeps the newest report's time and number by the node's own
-- clock (last_report_at, last_seq): nothing read them, and a node whose clock ran ahead and was
-- set back left them stuck ahead, the number that of a run long gone. Whether a node still
-- reports goes by last_received_at, on the service's clock (migration 152).
-- Down adds them back, last_report_at from the newest kept raw sample of each node, by its clock
-- (else when its last report came in), which the version before migration 152 judges by.

-- +goose Up
ALTER TABLE agent_tokens DROP COLUMN last_report_at;
ALTER TABLE agent_tokens DROP COLUMN last_seq;

-- +goose Down
ALTER TABLE agent_tokens ADD COLUMN last_report_at TIMESTAMPTZ;
ALTER TABLE agent_tokens ADD COLUMN last_seq BIGINT NOT NULL DEFAULT 0;
UPDATE agent_tokens SET last_report_at = COALESCE(
    (SELECT MAX(s.at) FROM agent_samples s WHERE s.node = agent_tokens.node), last_received_at);
