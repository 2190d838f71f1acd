-- Showback weeks: one row per ISO week (like '2026-W48') whose weekly report some replica has
-- claimed. The claim and this row are written in one statement, so two replicas can never both
-- hold a week: a claim is taken when the week has no row, or its claim ran out (claim_until) and it
-- was not posted. posted_at is set once every message of the week went out.
-- Showback deliveries: each message of a week that went out (the channel post, each budget
-- owner's DM), so a replica that takes over a claim sends only what is missing.

-- +goose Up
CREATE TABLE showback_weeks (
    week        TEXT PRIMARY KEY,
    claimed_by  TEXT NOT NULL,
    claimed_at  TIMESTAMPTZ NOT NULL,
    claim_until TIMESTAMPTZ NOT NULL,
    attempts    INTEGER NOT NULL DEFAULT 1,
    posted_at   TIMESTAMPTZ
);

CREATE TABLE showback_deliveries (
    week         TEXT NOT NULL REFERENCES showback_weeks (week) ON DELETE CASCADE,
    recipient    TEXT NOT NULL,
    delivered_by TEXT NOT NULL,
    delivered_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (week, recipient)
);

-- +goose Down
DROP TABLE showback_deliveries;
DROP TABLE showback_weeks;
