-- The GPUs a lease was asked for where they were rounded up to whole nodes of its class (6 asked
-- on nodes of 4 GPUs each hold 8): its replies, messages and cards say that the GPUs asked for
-- take those whole nodes. 0 where nothing was rounded, and for leases made before this migration.

-- +goose Up
ALTER TABLE leases ADD COLUMN asked_gpus INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE leases DROP COLUMN asked_gpus;
