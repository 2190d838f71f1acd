-- How well the GPUs the service chose for a lease are connected: 'island' (one NVLink island of
-- one node), 'spread' (across islands of one node), 'nodes' (whole nodes), or '' when not known
-- (the scheduler placed it, or the node's islands were not known). The showback reports the share
-- of multi-GPU leases that got one island.

-- +goose Up
ALTER TABLE leases ADD COLUMN gpu_connection TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE leases DROP COLUMN gpu_connection;
