-- How much a lease's extensions added to its length (duration_ns holds the length granted,
-- extensions included): the length its owner asked for is duration_ns less this, which a request
-- to ask again for the lease asks for. 0 for a lease never extended, and for leases made before
-- this migration.

-- +goose Up
ALTER TABLE leases ADD COLUMN extended_ns INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE leases DROP COLUMN extended_ns;
