-- Lease activity: what the node agents last saw of each lease's GPUs, found through the lease's
-- Slurm job or pod. seen_at is the newest report that covered the lease; last_active_at the last
-- time its GPUs were busy or their memory in use changed (NULL: never seen busy). The idle path
-- reads this.

-- +goose Up
CREATE TABLE lease_activity (
    lease_id       INTEGER PRIMARY KEY,
    node           TEXT NOT NULL,
    seen_at        DATETIME NOT NULL,
    last_active_at DATETIME,
    utilization    REAL NOT NULL DEFAULT 0,
    mem_used       INTEGER NOT NULL DEFAULT 0
);

CREATE INDEX lease_activity_seen ON lease_activity (seen_at);

-- +goose Down
DROP TABLE lease_activity;
