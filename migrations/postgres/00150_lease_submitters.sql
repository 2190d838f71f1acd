-- Who holds the claim on a provisioning lease's submission (submitting_until): the process,
-- as host/pid@start, that submits its job. A process that starts on the same host releases at
-- once the claims of a predecessor there that no longer runs (killed, or its container restarted),
-- so that its first reconcile pass adopts the job that predecessor submitted and did not record,
-- instead of waiting QM_SUBMIT_GRACE for the claim to lapse. '': nobody named (a claim made before
-- this migration, or by a process that names none), left to lapse as before.

-- +goose Up
ALTER TABLE leases ADD COLUMN submitting_by TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE leases DROP COLUMN submitting_by;
