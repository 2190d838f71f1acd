-- Where a person's notices reach them on a chat platform once no account of theirs there is
-- linked: the chat account they last signed in from (single sign-on), kept when they sign out or
-- the identity provider revokes the sign-in, forgotten when a platform admin unlinks it or another
-- person signs in from it. Discord shows an app no email to look a person up by.

-- +goose Up
CREATE TABLE chat_accounts (
    email     TEXT NOT NULL,
    platform  TEXT NOT NULL,
    workspace TEXT NOT NULL,
    chat_user TEXT NOT NULL,
    linked_at DATETIME NOT NULL,
    PRIMARY KEY (email, platform)
);

CREATE INDEX chat_accounts_account ON chat_accounts (platform, workspace, chat_user);

-- +goose Down
DROP TABLE chat_accounts;
