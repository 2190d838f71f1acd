package qm_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store/storetest"
)

func examplePolicy(t *testing.T) *policy.Policy {
	t.Helper()
	p, err := policy.LoadFile("../../docs/quartermaster.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestGroupNamedLikeATeam: a group that no team lists gets a default-quota team of its own name,
// but never a listed team's: someone in a group called "vision" is not in team vision (whose
// group is ai-vision), and is given neither its quota nor its storage.
func TestGroupNamedLikeATeam(t *testing.T) {
	p := examplePolicy(t)
	p.Directory = append(p.Directory, &policy.Identity{User: "eve@acme.example", Groups: []string{"Vision"}},
		&policy.Identity{User: "finn@acme.example", Groups: []string{"robotics"}})
	svc := newService(t, p, storetest.Open(t, storetest.SQLite(t)))
	ctx := context.Background()
	if id, err := svc.Resolve(ctx, "eve@acme.example"); err != nil || len(id.Teams) != 0 {
		t.Fatalf("eve: %+v %v", id, err)
	}
	if _, err := svc.Request(ctx, qm.LeaseRequest{User: "eve@acme.example", Class: "interactive", Duration: time.Hour}); qm.ErrorCode(err) != qm.EFORBIDDEN || !strings.Contains(err.Error(), "belongs to no team") {
		t.Fatalf("eve's request: %v", err)
	}
	out, err := svc.Request(ctx, qm.LeaseRequest{User: "finn@acme.example", Class: "interactive", Duration: time.Hour})
	if err != nil || out.Lease.Team != "robotics" {
		t.Fatalf("an unlisted group still makes a team of its own: %+v %v", out, err)
	}
}

// TestApproverByGroup: a budget owner named by group decides through their group membership.
func TestApproverByGroup(t *testing.T) {
	p := examplePolicy(t)
	p.Teams[0].BudgetOwners = []string{"vision-leads"}
	p.Directory = append(p.Directory, &policy.Identity{User: "gil@acme.example", Groups: []string{"ai-vision", "vision-leads"}})
	svc := newService(t, p, storetest.Open(t, storetest.SQLite(t)))
	ctx := context.Background()
	out, err := svc.Request(ctx, qm.LeaseRequest{User: "alice@acme.example", Class: "train", GPUs: 8, Duration: 100 * time.Hour})
	if err != nil || out.Lease.State != qm.PendingApproval {
		t.Fatalf("request: %+v %v", out, err)
	}
	if _, err := svc.Decide(ctx, "bob@acme.example", out.Lease.ID, true, ""); qm.ErrorCode(err) != qm.EFORBIDDEN {
		t.Fatalf("bob, not in vision-leads, decided: %v", err)
	}
	if pending, _ := svc.Pending(ctx, "gil@acme.example"); len(pending) != 1 {
		t.Fatalf("gil's pending approvals: %d", len(pending))
	}
	if l, err := svc.Decide(ctx, "gil@acme.example", out.Lease.ID, false, "too long"); err != nil || l.State != qm.Denied {
		t.Fatalf("gil's decision: %+v %v", l, err)
	}
}
