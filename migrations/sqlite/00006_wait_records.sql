-- Wait records: what became of each request the queue-wait predictor estimated (the situation it
-- was predicted in and how long it waited), one opaque record per row, so that the predictor
-- starts from its history again after a restart.

-- +goose Up
CREATE TABLE wait_records (
    id     INTEGER PRIMARY KEY AUTOINCREMENT,
    class  TEXT NOT NULL,
    at     DATETIME NOT NULL,
    record TEXT NOT NULL
);

CREATE INDEX wait_records_at ON wait_records (at);

-- +goose Down
DROP TABLE wait_records;
