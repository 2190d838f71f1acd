-- The GPU utilization the console's :util last set for each lease on the simulated cluster: from
-- set_at on, and when its GPUs were last busy (idle reclaim counts from there). A console (or serve
-- on the sim backend) started again on the same database goes on with it for the leases still
-- running, instead of taking them for busy at the default.

-- +goose Up
CREATE TABLE sim_utilization (
    lease_id       INTEGER PRIMARY KEY REFERENCES leases (id) ON DELETE CASCADE,
    utilization    REAL NOT NULL,
    set_at         DATETIME NOT NULL,
    last_active_at DATETIME NOT NULL
);

-- +goose Down
DROP TABLE sim_utilization;
