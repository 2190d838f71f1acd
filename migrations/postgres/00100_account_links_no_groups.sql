-- When a re-check of a link's groups last found that the identity provider gave no groups claim
-- at all (no ID token on refresh, none in userinfo): the groups of the last confirmed read are
-- kept, unconfirmed. NULL: the provider gave groups at the last sign-in or re-check since.

-- +goose Up
ALTER TABLE account_links ADD COLUMN no_groups_at TIMESTAMPTZ;

-- +goose Down
ALTER TABLE account_links DROP COLUMN no_groups_at;
