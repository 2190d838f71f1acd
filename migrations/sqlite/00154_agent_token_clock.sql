-- How far each node's clock was ahead of the service's (negative: behind), in seconds, at the
-- last report the service took of it, as measured from the report's Quartermaster-Sent-At; NULL
-- where no report of the node said when it was sent. `quartermaster agent-token list` shows it.

-- +goose Up
ALTER TABLE agent_tokens ADD COLUMN clock_skew_s REAL;

-- +goose Down
ALTER TABLE agent_tokens DROP COLUMN clock_skew_s;
