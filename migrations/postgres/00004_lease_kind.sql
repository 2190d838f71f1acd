-- Lease kinds: a workspace (''), a quota increase ('quota') or an extension ('extend') of the lease
-- parent_id. Quota increases and extensions are exceptions decided like any request.

-- +goose Up
ALTER TABLE leases ADD COLUMN kind TEXT NOT NULL DEFAULT '';
ALTER TABLE leases ADD COLUMN parent_id BIGINT NOT NULL DEFAULT 0;
ALTER TABLE leases ADD COLUMN because TEXT NOT NULL DEFAULT '';
CREATE INDEX leases_kind_state ON leases (kind, state);

-- +goose Down
DROP INDEX leases_kind_state;
ALTER TABLE leases DROP COLUMN because;
ALTER TABLE leases DROP COLUMN parent_id;
ALTER TABLE leases DROP COLUMN kind;
