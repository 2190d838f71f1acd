-- The reporting interval of the node agent whose report last covered a lease, in seconds: how
-- old a lease's telemetry may grow before it counts as missing follows it. 0 for rows written
-- before this migration, which keep the fixed limit.

-- +goose Up
ALTER TABLE lease_activity ADD COLUMN interval_s REAL NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE lease_activity DROP COLUMN interval_s;
