-- Single sign-on: account links tie a chat account (platform, workspace, user id) to the identity
-- it proved at the organisation's identity provider; login links are one-time sign-in links, kept
-- only as hashes of their secrets, as is the state of the login each one starts.

-- +goose Up
CREATE TABLE account_links (
    platform   TEXT NOT NULL,
    workspace  TEXT NOT NULL DEFAULT '',
    chat_user  TEXT NOT NULL,
    issuer     TEXT NOT NULL,
    subject    TEXT NOT NULL,
    email      TEXT NOT NULL,
    idp_groups TEXT NOT NULL DEFAULT '',
    login_at   DATETIME NOT NULL,
    checked_at DATETIME NOT NULL,
    tokens     BLOB,
    PRIMARY KEY (platform, workspace, chat_user)
);

CREATE INDEX account_links_email ON account_links (email);
CREATE INDEX account_links_checked ON account_links (checked_at);

CREATE TABLE login_links (
    hash       TEXT PRIMARY KEY,
    platform   TEXT NOT NULL,
    workspace  TEXT NOT NULL DEFAULT '',
    chat_user  TEXT NOT NULL,
    chat_email TEXT NOT NULL DEFAULT '',
    resume     TEXT NOT NULL DEFAULT '',
    created_at DATETIME NOT NULL,
    expires_at DATETIME NOT NULL,
    opened_at  DATETIME,
    state_hash TEXT UNIQUE,
    done_at    DATETIME
);

CREATE INDEX login_links_expires ON login_links (expires_at);

-- +goose Down
DROP TABLE login_links;
DROP TABLE account_links;
