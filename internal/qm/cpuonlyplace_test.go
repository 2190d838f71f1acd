package qm_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// A CPU-only lease on an exclusive class holds no GPU: it starts though every node of the class
// runs another team's leases, and the node its job runs on stays open to other teams' GPU leases.
func TestACPUOnlyLeaseOnAnExclusiveClassClaimsNoNode(t *testing.T) {
	ctx := context.Background()
	p := manyTeamsPolicy(t, 6, "")
	svc := newService(t, p, storetest.Open(t, storetest.MemorySQLite(t)))
	request := func(team, gpus int) *qm.Lease {
		t.Helper()
		r := qm.LeaseRequest{User: fmt.Sprintf("u%02d@x.example", team), Class: "train", GPUs: gpus, Duration: time.Hour}
		if gpus == 0 {
			r.CPUOnly, r.Template = true, "data-prep"
		}
		out, err := svc.Request(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		return out.Lease
	}
	cpu := request(0, 0)
	if cpu.State != qm.Active {
		t.Fatalf("a CPU-only train lease on a free cluster is %s (%s), want active", cpu.State, cpu.Reason)
	}
	// The lease names the node its job runs on, as the backend says (the sim runs it at once).
	if ref := cpu.Ref; cpu.Node == "" || ref == "" {
		t.Errorf("the running CPU-only lease names node %q (job %q), want the node the backend runs it on", cpu.Node, ref)
	}
	// Four other teams take the four train nodes, one each: the CPU-only job's node is theirs too.
	for team := 1; team <= 4; team++ {
		if l := request(team, 8); l.State != qm.Active {
			t.Errorf("team t%02d's 8 train GPUs after t00's CPU-only job are %s (%s), want active: the CPU-only job claimed a node", team, l.State, l.Reason)
		}
	}
	// Every node now runs another team's leases: a CPU-only job of a sixth team starts at once.
	if l := request(5, 0); l.State != qm.Active {
		t.Errorf("a CPU-only train lease while other teams hold every node is %s (%s), want active: it waits for no GPU node", l.State, l.Reason)
	}
}
