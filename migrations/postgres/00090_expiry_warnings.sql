-- The end time of a lease its owner was last warned of, shortly before it: each end is warned
-- of once, by whichever replica gets there first, and an extension (a new end) is warned of
-- again. NULL: no warning sent, as for leases ended before this migration.

-- +goose Up
ALTER TABLE leases ADD COLUMN expiry_warned_for TIMESTAMPTZ;

-- +goose Down
ALTER TABLE leases DROP COLUMN expiry_warned_for;
