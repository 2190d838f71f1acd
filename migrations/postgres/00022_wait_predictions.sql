-- Wait predictions: the queue wait predicted for a lease when it was asked for (what its requester
-- was told), one row per lease, the first prediction kept. The showback compares them with the
-- waits that followed.

-- +goose Up
CREATE TABLE lease_wait_predictions (
    lease_id   BIGINT PRIMARY KEY,
    median_ns  BIGINT NOT NULL,
    p90_ns     BIGINT NOT NULL,
    at         TIMESTAMPTZ NOT NULL
);

-- +goose Down
DROP TABLE lease_wait_predictions;
