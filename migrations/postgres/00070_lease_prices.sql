-- The price per GPU-hour of a lease's class when it was requested: a lease is billed, and counted
-- in the showback, at that price, so a later change of the catalog's price does not re-price
-- leases already made or weeks already reported. NULL for leases made before this migration,
-- which are priced at their class's price now.

-- +goose Up
ALTER TABLE leases ADD COLUMN price_per_gpu_hour DOUBLE PRECISION;

-- +goose Down
ALTER TABLE leases DROP COLUMN price_per_gpu_hour;
