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
