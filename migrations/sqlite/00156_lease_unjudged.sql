-- Leases whose node agent reports, but whose newest report could not judge them: a GPU of the
-- lease reports no utilization (why = 'no_utilization'). seen_at is that report's time on the
-- service's clock; the idle path compares it with lease_activity.seen_at, the newest report that
-- judged the lease, to tell a lease whose GPUs give nothing to judge by from one whose telemetry
-- is missing.

-- +goose Up
CREATE TABLE lease_unjudged (
    lease_id   INTEGER PRIMARY KEY,
    node       TEXT NOT NULL,
    seen_at    DATETIME NOT NULL,
    why        TEXT NOT NULL,
    interval_s REAL NOT NULL DEFAULT 0
);

CREATE INDEX lease_unjudged_seen ON lease_unjudged (seen_at);

-- +goose Down
DROP TABLE lease_unjudged;
