-- When the unbroken run of node agent reports that covers a lease began: a lease whose reports
-- stopped for longer than its telemetry may be missing, then came back, starts a new run, and its
-- idle period with it (the time nobody saw is not idle time). NULL for rows written before this
-- migration, which keep their idle period as it was.

-- +goose Up
ALTER TABLE lease_activity ADD COLUMN observed_since TIMESTAMPTZ;

-- +goose Down
ALTER TABLE lease_activity DROP COLUMN observed_since;
