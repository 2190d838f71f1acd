-- A team's first login: the first time anyone of the team signed in with single sign-on. The
-- showback's time-to-first-GPU runs from a team's first contact, its first login or its first
-- lease request, whichever came first. A row is written once and never changed.

-- +goose Up
CREATE TABLE team_logins (
    team           TEXT PRIMARY KEY,
    first_login_at TIMESTAMPTZ NOT NULL
);

-- +goose Down
DROP TABLE team_logins;
