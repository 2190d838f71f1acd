-- The spans in which a running lease's workspace did not run, its job back in the scheduler's
-- queue after a requeue or suspended, as a JSON list of {"kind", "from", "to"} ("to" absent while
-- it lasts). The time a job waited in the queue is not billed, and a pause is told to its owner
-- once. Empty for leases never paused; a lease paused before this migration (known by its reason
-- alone) gets its pause at the next reconcile pass, without being told again, and the wait before
-- that is billed.

-- +goose Up
ALTER TABLE leases ADD COLUMN pauses TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE leases DROP COLUMN pauses;
