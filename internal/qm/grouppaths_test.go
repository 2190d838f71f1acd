package qm_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/sim"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// pathDirectory is single sign-on through a provider that sends full group paths (Keycloak's
// "Full group path"): a person's groups as the provider wrote them, and who is in each.
type pathDirectory map[string][]string

func (d pathDirectory) Groups(_ context.Context, user string) ([]string, bool) {
	g, ok := d[user]
	return g, ok
}

func (d pathDirectory) Members(group string) []string {
	var out []string
	for u, gs := range d {
		if policy.Contains(gs, group) {
			out = append(out, u)
		}
	}
	slices.Sort(out)
	return out
}

const groupPathsPolicy = `organization: Keycloak Co
classes:
  - {name: gpu, max_gpus: 8, max_duration: 8h}
default_quota: {gpus: {gpu: 1}, gpu_hours_per_week: 10}
teams:
  - {name: team-a, idp_groups: [team-a], budget_owners: [a-leads], quota: {gpus: {gpu: 8}, gpu_hours_per_week: 100}}
  - {name: ml, idp_groups: [/parent/ml]}
  - {name: research-path, idp_groups: [/research]}
  - {name: research-flat, idp_groups: [research]}
exceptions:
  - {name: contractor, when: "'contractors' in user.groups"}
approvals: {timeout: 24h, fallback_approvers: [platform]}
backend: sim
sim: {nodes: [{name: n, count: 1, class: gpu, gpus: 8}]}
`

// TestTopLevelGroupPathsMatchGroupNames: a provider that sends groups as paths (/team-a) puts
// people in the teams, rules and approvers that name the group (team-a), unless the policy
// names the path itself (/research is not research); a nested path (/parent/team-a) matches
// only a policy that writes it in full (/parent/ml).
func TestTopLevelGroupPathsMatchGroupNames(t *testing.T) {
	p, err := policy.Load([]byte(groupPathsPolicy), "keycloak.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := pathDirectory{
		"ann@k.example": {"/team-a"},
		"nat@k.example": {"/parent/team-a"},
		"mo@k.example":  {"/parent/ml"},
		"rex@k.example": {"/research"},
		"con@k.example": {"/team-a", "/contractors"},
		"lea@k.example": {"/team-a", "/a-leads"},
		"pat@k.example": {"/platform"},
	}
	clock := sim.NewClock(time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC))
	cl := sim.New(p, clock)
	svc := &qm.Service{Policy: p, Store: storetest.Open(t, storetest.SQLite(t)), Clock: clock, Backend: cl, Telemetry: cl, Directory: dir}
	ctx := context.Background()
	for user, want := range map[string][]string{
		"ann@k.example": {"team-a"},
		"mo@k.example":  {"ml"},
		"rex@k.example": {"research-path"},
	} {
		if id, err := svc.Resolve(ctx, user); err != nil || !slices.Equal(id.Teams, want) {
			t.Errorf("%s (%v): teams %v, %v; want %v", user, dir[user], id.Teams, err, want)
		}
	}
	if id, _ := svc.Resolve(ctx, "nat@k.example"); slices.Contains(id.Teams, "team-a") {
		t.Errorf("/parent/team-a is in team-a, whose group is team-a: %v", id.Teams)
	}
	out, err := svc.Request(ctx, qm.LeaseRequest{User: "con@k.example", Class: "gpu", GPUs: 1, Duration: time.Hour})
	if err != nil || out.Lease.State != qm.PendingApproval {
		t.Fatalf("a request of someone in /contractors, which the rule names contractors: %+v %v", out, err)
	}
	if pending, _ := svc.Pending(ctx, "lea@k.example"); len(pending) != 1 {
		t.Errorf("lea, in /a-leads (budget owners: a-leads), has %d approvals waiting; want 1", len(pending))
	}
	if !svc.IsPlatformAdmin(ctx, "pat@k.example") {
		t.Error("pat, in /platform (fallback approvers: platform), is no platform admin")
	}
	if d, err := svc.Decide(ctx, "lea@k.example", out.Lease.ID, true, ""); err != nil || d.Lease.State == qm.PendingApproval {
		t.Errorf("lea's approval: %+v %v", d, err)
	}
}
