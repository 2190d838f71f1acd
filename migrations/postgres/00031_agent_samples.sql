-- Raw node agent samples: each accepted report's GPUs (utilization, memory, power, temperature,
-- errors, processes with their jobs) as the agent sent them, one row per node and instant. Kept
-- briefly (a day by default) for looking into what a node did; the hourly rollups per lease in
-- lease_usage_hourly are what lasts.

-- +goose Up
CREATE TABLE agent_samples (
    node        TEXT NOT NULL,
    at          TIMESTAMPTZ NOT NULL,
    received_at TIMESTAMPTZ NOT NULL,
    gpus        TEXT NOT NULL,
    PRIMARY KEY (node, at)
);

CREATE INDEX agent_samples_at ON agent_samples (at);

-- +goose Down
DROP TABLE agent_samples;
