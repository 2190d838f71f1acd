package slurm

import (
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
)

// TestPendingForGood: a job pending for a reason Slurm never clears by itself (a limit the job
// goes over, an account it may not use) is failed and held, so that the service ends its lease and
// cancels it; one that waits for others (resources, group limits, a hold someone chose) waits.
func TestPendingForGood(t *testing.T) {
	for reason, never := range map[string]bool{
		"PartitionTimeLimit":              true,
		"PartitionNodeLimit":              true,
		"InvalidAccount":                  true,
		"InvalidQOS":                      true,
		"AssocMaxWallDurationPerJobLimit": true,
		"QOSMaxGRESPerJob":                true,
		"QOSMinGRES":                      true,
		"DependencyNeverSatisfied":        true,
		"Resources":                       false,
		"Priority":                        false,
		"AssocGrpGRES":                    false,
		"QOSMaxGRESPerUser":               false,
		"JobHeldAdmin":                    false,
		"ReqNodeNotAvail":                 false,
		"None":                            false,
	} {
		j := SqueueJob{JobID: "7", State: "PENDING", Reason: reason, Partition: "gpu-a100", Account: "vision", TimeLimit: 72 * time.Hour}.job(1)
		switch {
		case never && (j.State != qm.JobFailed || !j.Held || !strings.Contains(j.Reason, "Slurm: PENDING, "+reason)):
			t.Errorf("%s: %s held=%v %q, want failed and held", reason, j.State, j.Held, j.Reason)
		case !never && (j.State != qm.JobPending || j.Held):
			t.Errorf("%s: %s held=%v %q, want pending", reason, j.State, j.Held, j.Reason)
		}
	}
	j := SqueueJob{JobID: "7", State: "PENDING", Reason: "PartitionTimeLimit", Partition: "gpu-a100", TimeLimit: 72 * time.Hour}.job(1)
	if !strings.Contains(j.Reason, "(3d) is longer than partition gpu-a100") {
		t.Errorf("reason %q does not name the limit and the partition", j.Reason)
	}
}

// TestPendingOnDrainedNodes: Slurm gives a job whose nodes are all drained or down the reason
// Resources, as it gives one waiting for other jobs; its description (squeue --json's
// state_description) tells them apart, and so does ReqNodeNotAvail (the node it was placed on).
func TestPendingOnDrainedNodes(t *testing.T) {
	for _, c := range []struct {
		reason, desc, want string
	}{
		{"Resources", "Nodes required for job are DOWN, DRAINED or reserved for jobs in higher priority partitions", "drained"},
		{"ReqNodeNotAvail", "ReqNodeNotAvail, UnavailableNodes:gpu01", "drained"},
		{"Resources", "", "in use"},
		{"Resources", "Resources", "in use"},
	} {
		j := SqueueJob{JobID: "7", State: "PENDING", Reason: c.reason, Description: c.desc}.job(1)
		if j.State != qm.JobPending || !strings.Contains(j.Reason, c.want) || !strings.Contains(j.Reason, "(Slurm: "+c.reason) {
			t.Errorf("%s %q: %s %q; want pending, saying %q, with Slurm's reason", c.reason, c.desc, j.State, j.Reason, c.want)
		}
	}
}
