-- Lease usage: what a lease's GPUs did, rolled up per hour, from whatever telemetry reports it (the
-- simulated cluster's utilization, the node agent). The showback reads idle GPU-hours and mean
-- utilization from here.

-- +goose Up
CREATE TABLE lease_usage_hourly (
    lease_id         BIGINT NOT NULL,
    hour             TIMESTAMPTZ NOT NULL,
    gpu_seconds      DOUBLE PRECISION NOT NULL DEFAULT 0,
    idle_gpu_seconds DOUBLE PRECISION NOT NULL DEFAULT 0,
    util_sum         DOUBLE PRECISION NOT NULL DEFAULT 0,
    samples          BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (lease_id, hour)
);

CREATE INDEX lease_usage_hourly_hour ON lease_usage_hourly (hour);

-- +goose Down
DROP TABLE lease_usage_hourly;
