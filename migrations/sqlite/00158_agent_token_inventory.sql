-- Whether each node's agent matches what the scheduler's inventory holds for the node: NULL where
-- the service has not checked it (the node is not in the inventory, or has not reported since),
-- '' where it matches, else what differs (the GPUs the agent reports, those the inventory holds,
-- and what to check). `quartermaster agent-token list` shows it, and serve's /metrics as
-- quartermaster_agent_inventory_mismatch.

-- +goose Up
ALTER TABLE agent_tokens ADD COLUMN inventory_mismatch TEXT;

-- +goose Down
ALTER TABLE agent_tokens DROP COLUMN inventory_mismatch;
