-- Lease activity: what the node agents last saw of each lease's GPUs, found through the lease's
-- Slurm job or pod. seen_at is the newest report that covered the lease; last_active_at the last
-- time its GPUs were busy or their memory in use changed (NULL: never seen busy). The idle path
-- reads this.

-- +goose Up
CREATE TABLE lease_activity (
    lease_id       BIGINT PRIMARY KEY,
    node           TEXT NOT NULL,
    seen_at        TIMESTAMPTZ NOT NULL,
    last_active_at TIMESTAMPTZ,
    utilization    DOUBLE PRECISION NOT NULL DEFAULT 0,
    mem_used       BIGINT NOT NULL DEFAULT 0
);

CREATE INDEX lease_activity_seen ON lease_activity (seen_at);

-- +goose Down
DROP TABLE lease_activity;
