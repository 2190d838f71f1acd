-- Indexes for reading one week of leases (the showback): leases created before the week's end
-- that had not ended before its start, those that started in it, and each team's first lease.

-- +goose Up
CREATE INDEX leases_created_at ON leases (created_at);
CREATE INDEX leases_ended_at ON leases (ended_at);
CREATE INDEX leases_team_created ON leases (team, created_at);
CREATE INDEX leases_started_at ON leases (started_at);

-- +goose Down
DROP INDEX leases_started_at;
DROP INDEX leases_team_created;
DROP INDEX leases_ended_at;
DROP INDEX leases_created_at;
