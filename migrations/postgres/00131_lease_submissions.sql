-- Until when the job of a provisioning lease is being submitted by the replica that started it
-- (its sbatch, or its Kubernetes objects, and the scheduler's first word on them): meanwhile no
-- replica's reconcile pass adopts a job it finds for the lease, nor submits it again, and the
-- submission records the job with how to reach it. The replica renews it while its submission
-- runs, and clears it with what the submission says; one that died mid-submission leaves it to
-- lapse (QM_SUBMIT_GRACE after it was last renewed), after which any replica's pass takes the
-- lease over. NULL: no submission in flight, as for every lease before this migration.

-- +goose Up
ALTER TABLE leases ADD COLUMN submitting_until TIMESTAMPTZ;

-- +goose Down
ALTER TABLE leases DROP COLUMN submitting_until;
