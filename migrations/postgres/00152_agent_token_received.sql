-- When the service last took a report of each node, by the service's clock. last_report_at is the
-- newest report's time by the node's own clock, which may be days off: which nodes still report
-- (a GPU another node's agent still reports is not this node's to report) is judged by this one.
-- A node whose samples are kept gets the newest one's arrival; others keep their node's time.

-- +goose Up
ALTER TABLE agent_tokens ADD COLUMN last_received_at TIMESTAMPTZ;
UPDATE agent_tokens SET last_received_at = COALESCE(
    (SELECT MAX(s.received_at) FROM agent_samples s WHERE s.node = agent_tokens.node), last_report_at);

-- +goose Down
ALTER TABLE agent_tokens DROP COLUMN last_received_at;
