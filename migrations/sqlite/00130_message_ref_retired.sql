-- When the copy of an approval message posted to someone who may no longer decide it was edited
-- to say so (who decides now, without buttons): each such copy is edited once, not again at every
-- start. NULL: not edited for that, as for every copy saved before this migration.

-- +goose Up
ALTER TABLE message_refs ADD COLUMN retired_at DATETIME;

-- +goose Down
ALTER TABLE message_refs DROP COLUMN retired_at;
