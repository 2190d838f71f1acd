-- Leases whose node agent reports, but whose newest report could not judge them (why): a GPU of
-- the lease reports no utilization ('no_utilization'), the lease's GPU is missing from the report
-- ('gpu_missing'), a GPU of its node it may work on is missing ('node_gpu_missing'), or a GPU of
-- its node is busy with no job's process while the lease has none ('unplaced_busy'). seen_at is that report's time on the
-- service's clock; the idle path compares it with lease_activity.seen_at, the newest report that
-- judged the lease, to tell a lease whose GPUs give nothing to judge by from one whose telemetry
-- is missing.

-- +goose Up
CREATE TABLE lease_unjudged (
    lease_id   BIGINT PRIMARY KEY,
    node       TEXT NOT NULL,
    seen_at    TIMESTAMPTZ NOT NULL,
    why        TEXT NOT NULL,
    interval_s DOUBLE PRECISION NOT NULL DEFAULT 0
);

CREATE INDEX lease_unjudged_seen ON lease_unjudged (seen_at);

-- +goose Down
DROP TABLE lease_unjudged;
