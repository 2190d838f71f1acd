-- What identifies a node agent's report: the agent's run (a random id it picks when it starts) and
-- the report's sequence number in that run, kept with the raw sample. A report is a replay when the
-- node's samples already hold its run and sequence number (or, for a report without a run, from an
-- older agent, its time by the node's clock), not when it is dated before the node's last report:
-- a node whose clock was set back keeps reporting. Samples from before this step have no run (NULL).
-- Samples are kept by the time the service received them, which the second index serves.

-- +goose Up
ALTER TABLE agent_samples ADD COLUMN run TEXT;
ALTER TABLE agent_samples ADD COLUMN seq BIGINT;
CREATE UNIQUE INDEX agent_samples_run_seq ON agent_samples (node, run, seq);
CREATE INDEX agent_samples_received_at ON agent_samples (received_at);

-- +goose Down
DROP INDEX agent_samples_received_at;
DROP INDEX agent_samples_run_seq;
ALTER TABLE agent_samples DROP COLUMN seq;
ALTER TABLE agent_samples DROP COLUMN run;
