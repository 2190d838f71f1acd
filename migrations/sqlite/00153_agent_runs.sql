-- What the service keeps of a node's reports once their raw samples are forgotten (a day after
-- they came in): for each agent run, the highest sequence number it forgot, and for the reports
-- without a run (older agents, run ''), the latest of their times by the node's clock. A report at
-- or below that is older than what the service keeps, and so are the same report sent again, a
-- day or a year later, whatever its Quartermaster-Sent-At: it is ignored as too_old instead of
-- being taken as new. A run's row is kept a year after its newest forgotten sample came in
-- (forgot_received_at, the service's clock).

-- +goose Up
CREATE TABLE agent_runs (
    node               TEXT NOT NULL,
    run                TEXT NOT NULL,
    forgot_seq         INTEGER NOT NULL,
    forgot_at          DATETIME NOT NULL,
    forgot_received_at DATETIME NOT NULL,
    PRIMARY KEY (node, run)
);

-- +goose Down
DROP TABLE agent_runs;
