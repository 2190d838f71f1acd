-- Template parameters of a lease: the key=value words of /gpu submit, as a JSON object of strings
-- ('' when the lease has none), so the backend renders the job the user asked for.

-- +goose Up
ALTER TABLE leases ADD COLUMN params TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE leases DROP COLUMN params;
