-- Lease events: the audit trail, one row per state change, in id order.

-- +goose Up
CREATE TABLE lease_events (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    lease_id   INTEGER NOT NULL REFERENCES leases (id) ON DELETE CASCADE,
    at         DATETIME,
    actor      TEXT NOT NULL DEFAULT '',
    from_state TEXT NOT NULL DEFAULT '',
    to_state   TEXT NOT NULL DEFAULT '',
    reason     TEXT NOT NULL DEFAULT ''
);

CREATE INDEX lease_events_lease ON lease_events (lease_id, id);

-- +goose Down
DROP TABLE lease_events;
