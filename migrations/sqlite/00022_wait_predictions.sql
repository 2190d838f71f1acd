-- Wait predictions: the queue wait predicted for a lease when it was asked for (what its requester
-- was told), one row per lease, the first prediction kept. The showback compares them with the
-- waits that followed.

-- +goose Up
CREATE TABLE lease_wait_predictions (
    lease_id   INTEGER PRIMARY KEY,
    median_ns  INTEGER NOT NULL,
    p90_ns     INTEGER NOT NULL,
    at         DATETIME NOT NULL
);

-- +goose Down
DROP TABLE lease_wait_predictions;
