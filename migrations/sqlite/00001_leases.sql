-- Leases: one row per request for GPUs, through its whole lifecycle.
-- Times are DATETIME text the driver writes as '2006-01-02 15:04:05.999999+00:00': always UTC, at
-- most six fraction digits, trailing zeros dropped. A zero time.Time is NULL. Comparing that text
-- orders the instants, since '+' sorts before '.' and '.' before the digits.
-- gpu_index lists the GPU indexes on node, like '0,1'.
-- AUTOINCREMENT keeps a lease id from ever being handed out twice.

-- +goose Up
CREATE TABLE leases (
    id                  INTEGER PRIMARY KEY AUTOINCREMENT,
    user_name           TEXT NOT NULL,
    team                TEXT NOT NULL,
    class               TEXT NOT NULL,
    gpus                INTEGER NOT NULL,
    duration_ns         INTEGER NOT NULL DEFAULT 0,
    template            TEXT NOT NULL DEFAULT '',
    data_class          TEXT NOT NULL DEFAULT '',
    exclusive           BOOLEAN NOT NULL DEFAULT 0,
    state               TEXT NOT NULL,
    node                TEXT NOT NULL DEFAULT '',
    gpu_index           TEXT NOT NULL DEFAULT '',
    rules               TEXT NOT NULL DEFAULT '',
    reason              TEXT NOT NULL DEFAULT '',
    connect             TEXT NOT NULL DEFAULT '',
    ref                 TEXT NOT NULL DEFAULT '',
    request_key         TEXT CHECK (request_key <> ''),
    created_at          DATETIME,
    started_at          DATETIME,
    expires_at          DATETIME,
    ended_at            DATETIME,
    kept_at             DATETIME,
    warned_at           DATETIME,
    decided_by          TEXT NOT NULL DEFAULT '',
    decided_at          DATETIME,
    reclaimed_gpu_hours REAL NOT NULL DEFAULT 0,
    extensions          INTEGER NOT NULL DEFAULT 0
);

CREATE UNIQUE INDEX leases_request_key ON leases (request_key) WHERE request_key IS NOT NULL;
CREATE INDEX leases_team_state ON leases (team, state);
CREATE INDEX leases_state ON leases (state);
CREATE INDEX leases_user ON leases (user_name);
CREATE INDEX leases_class_state ON leases (class, state);

-- +goose Down
DROP TABLE leases;
