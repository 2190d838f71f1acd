package qm_test

import (
	"context"
	"fmt"
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
	if d, err := svc.Decide(ctx, "gil@acme.example", out.Lease.ID, false, "too long"); err != nil || d.Lease.State != qm.Denied {
		t.Fatalf("gil's decision: %+v %v", d, err)
	}
}

// TestGroupThatLooksLikeATeamNameJoinsNoTeam: a person whose groups meet no team's idp_groups is
// never put in a listed team, nor in a team of their own whose name looks like one, whatever the
// group's case, spacing, separators, digits for letters, invisible characters or letters from
// another alphabet; nothing they ask for is charged to that team.
func TestGroupThatLooksLikeATeamNameJoinsNoTeam(t *testing.T) {
	lookAlikes := []string{"Vision", "VISION", "vision ", " vision", "vision-", "vi_sion", "v1sion", "visi0n", "vіsion" /* Cyrillic і */, "viſion" /* long s */, "ｖｉｓｉｏｎ", "vision\u200b", "vi\u0301sion"}
	p := examplePolicy(t)
	for i, g := range lookAlikes {
		p.Directory = append(p.Directory, &policy.Identity{User: fmt.Sprintf("mallory%02d@acme.example", i), Groups: []string{g}})
	}
	svc := newService(t, p, storetest.Open(t, storetest.SQLite(t)))
	ctx := context.Background()
	for i, g := range lookAlikes {
		user := fmt.Sprintf("mallory%02d@acme.example", i)
		id, err := svc.Resolve(ctx, user)
		if err != nil || len(id.Teams) != 0 {
			t.Errorf("group %q: teams %q, %v", g, id.Teams, err)
			continue
		}
		out, err := svc.Request(ctx, qm.LeaseRequest{User: user, Class: "interactive", Duration: time.Hour})
		if qm.ErrorCode(err) != qm.EFORBIDDEN || !strings.Contains(err.Error(), "belongs to no team") {
			t.Errorf("group %q: request %+v %v", g, out, err)
		}
		if _, err := svc.Request(ctx, qm.LeaseRequest{User: user, Class: "train", GPUs: 8, Duration: time.Hour, Team: "vision"}); qm.ErrorCode(err) != qm.EFORBIDDEN {
			t.Errorf("group %q: asking for team vision by name: %v", g, err)
		}
	}
	held, err := svc.List(ctx, qm.LeaseFilter{Team: "vision"})
	if err != nil || len(held) != 0 {
		t.Fatalf("leases charged to vision: %d %v", len(held), err)
	}
}

// TestGroupSpelledWithOtherLettersIsAnotherGroup: groups are one group only when their text is the
// same, A to Z in any case: ai-viſion (a long s) is not ai-vision, so it joins no team and gets no
// train GPU; AI-Vision is ai-vision. The same holds for approvers named by group.
func TestGroupSpelledWithOtherLettersIsAnotherGroup(t *testing.T) {
	p := examplePolicy(t)
	p.Teams[0].BudgetOwners = []string{"vision-leads"}
	p.Directory = append(p.Directory,
		&policy.Identity{User: "mallory@acme.example", Groups: []string{"ai-viſion", "viſion-leads"}},
		&policy.Identity{User: "nina@acme.example", Groups: []string{"AI-Vision"}})
	svc := newService(t, p, storetest.Open(t, storetest.SQLite(t)))
	ctx := context.Background()
	if id, err := svc.Resolve(ctx, "mallory@acme.example"); err != nil || len(id.Teams) != 0 {
		t.Fatalf("mallory (ai-viſion): %+v %v", id, err)
	}
	if id, err := svc.Resolve(ctx, "nina@acme.example"); err != nil || len(id.Teams) != 1 || id.Teams[0] != "vision" {
		t.Fatalf("nina (AI-Vision): %+v %v", id, err)
	}
	out, err := svc.Request(ctx, qm.LeaseRequest{User: "nina@acme.example", Class: "train", GPUs: 16, Duration: time.Hour})
	if err != nil || out.Lease.State != qm.PendingApproval {
		t.Fatalf("nina's request: %+v %v", out, err)
	}
	// Someone who may not decide is answered as for a lease that does not exist (see
	// commands/leaks_test.go); either way nothing is decided.
	if _, err := svc.Decide(ctx, "mallory@acme.example", out.Lease.ID, true, ""); err == nil ||
		(qm.ErrorCode(err) != qm.EFORBIDDEN && qm.ErrorCode(err) != qm.ENOTFOUND) {
		t.Fatalf("mallory, in viſion-leads, decided for vision-leads: %v", err)
	}
	if l, err := svc.Get(ctx, out.Lease.ID); err != nil || l.State != qm.PendingApproval {
		t.Fatalf("after mallory's click nina's request is %+v %v, want still waiting", l, err)
	}
}

// TestContractorGroupInAnyCaseNeedsApproval: rules see groups with A to Z in lower case, so the
// example's contractor rule ('contractors' in user.groups) stops a person whose IdP writes the
// group Contractors, as it stops one in contractors.
func TestContractorGroupInAnyCaseNeedsApproval(t *testing.T) {
	p := examplePolicy(t)
	p.Directory = append(p.Directory, &policy.Identity{User: "cleo@contractor.example", Groups: []string{"ai-vision", "Contractors"}})
	svc := newService(t, p, storetest.Open(t, storetest.SQLite(t)))
	out, err := svc.Request(context.Background(), qm.LeaseRequest{User: "cleo@contractor.example", Class: "interactive", Duration: time.Hour})
	if err != nil || out.Lease.State != qm.PendingApproval || !strings.Contains(out.Lease.Rules, "contractor") {
		t.Fatalf("a contractor in Contractors got %+v %v", out, err)
	}
}

// TestApproverGroupOfTheRequesterAlone: a team whose budget owners are a group with the requester
// as its only member has nobody else to decide: without self-approval the request goes to the
// fallback approvers, who are named to the requester and see it waiting; with no fallback
// approvers it is refused at once rather than left waiting for nobody.
func TestApproverGroupOfTheRequesterAlone(t *testing.T) {
	ctx := context.Background()
	setup := func(fallback []string) *qm.Service {
		p := examplePolicy(t)
		p.Teams[0].BudgetOwners = []string{"vision-leads"}
		p.Approvals.FallbackApprovers = fallback
		p.Directory = append(p.Directory, &policy.Identity{User: "gil@acme.example", Groups: []string{"ai-vision", "vision-leads"}})
		return newService(t, p, storetest.Open(t, storetest.SQLite(t)))
	}
	svc := setup([]string{"platform-leads@acme.example"})
	out, err := svc.Request(ctx, qm.LeaseRequest{User: "gil@acme.example", Class: "train", GPUs: 8, Duration: 100 * time.Hour})
	if err != nil || out.Lease.State != qm.PendingApproval {
		t.Fatalf("request: %+v %v", out, err)
	}
	if fmt.Sprint(out.Approvers) != "[platform-leads@acme.example]" {
		t.Fatalf("the requester is told %v decide, want the fallback approver", out.Approvers)
	}
	if pending, _ := svc.Pending(ctx, "platform-leads@acme.example"); len(pending) != 1 {
		t.Fatalf("the fallback approver's pending approvals: %d", len(pending))
	}
	if _, err := svc.Decide(ctx, "gil@acme.example", out.Lease.ID, true, ""); qm.ErrorCode(err) != qm.EFORBIDDEN || !strings.Contains(err.Error(), "only platform-leads@acme.example can.") {
		t.Fatalf("gil approved his own request: %v", err)
	}

	svc = setup(nil)
	if out, err := svc.Request(ctx, qm.LeaseRequest{User: "gil@acme.example", Class: "train", GPUs: 8, Duration: 100 * time.Hour}); qm.ErrorCode(err) != qm.EFORBIDDEN || !strings.Contains(err.Error(), "nobody can decide the exceptions of team vision") {
		t.Fatalf("with nobody but the requester to decide: %+v %v", out, err)
	}
	out, err = svc.Request(ctx, qm.LeaseRequest{User: "alice@acme.example", Class: "train", GPUs: 8, Duration: 100 * time.Hour})
	if err != nil || fmt.Sprint(out.Approvers) != "[vision-leads]" {
		t.Fatalf("another member's request: %+v %v", out, err)
	}
}
