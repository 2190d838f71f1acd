package qm_test

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/qm/qmtest"
	"github.com/acme/quartermaster/internal/sim"
	"github.com/acme/quartermaster/internal/store/storetest"
	"github.com/acme/quartermaster/internal/testkit"
)

// groupsOnly is a directory that says a person's groups but cannot list a group's members.
type groupsOnly map[string][]string

func (d groupsOnly) Groups(_ context.Context, user string) ([]string, bool) {
	g, ok := d[user]
	return g, ok
}

// membersOf is a directory that lists members too (as single sign-on does, of those who signed in).
type membersOf struct{ groupsOnly }

func (d membersOf) Members(group string) []string {
	var out []string
	for u, gs := range d.groupsOnly {
		if policy.Contains(gs, group) {
			out = append(out, u)
		}
	}
	slices.Sort(out)
	return out
}

const unreachableGroupPolicy = `organization: Genome Lab
classes:
  - {name: seq, max_gpus: 2, max_duration: 8h}
default_quota: {gpus: {seq: 8}, gpu_hours_per_week: 100}
teams:
  - {name: genomics, idp_groups: [gen], budget_owners: [priya@gen.example, grp-gen-leads], channel: "#gen-gpu"}
  - {name: proteomics, idp_groups: [prot], budget_owners: [grp-prot-leads]}
exceptions:
  - {name: many, when: request.gpus > class.max_gpus, why: More GPUs than the class allows}
approvals: {timeout: 24h, fallback_approvers: [ops@gen.example]}
backend: sim
sim: {nodes: [{name: n, count: 2, class: seq, gpus: 8}]}
`

// An approver group whose members the directory does not know is not posted to as if its name
// were a channel: the approval notice goes to the team's other approvers and its channel, or to
// the fallback approvers when nobody else is left; the log names the group, once, and what to set.
func TestAGroupWithNoKnownMembersIsNotARecipient(t *testing.T) {
	p, err := policy.Load([]byte(unreachableGroupPolicy), "genome.yaml")
	if err != nil {
		t.Fatal(err)
	}
	people := groupsOnly{"kiri@gen.example": {"gen"}, "sam@gen.example": {"prot"}, "priya@gen.example": {"gen"}, "ops@gen.example": {"ops"}}
	for name, dir := range map[string]qm.Directory{"a directory that lists no members": people, "a directory that knows none of the group": membersOf{people}} {
		t.Run(name, func(t *testing.T) {
			clock := sim.NewClock(time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC))
			cl := sim.New(p, clock)
			var log testkit.SyncBuffer
			notices := &qmtest.NoticeLog{}
			svc := &qm.Service{Policy: p, Store: storetest.Open(t, storetest.SQLite(t)), Clock: clock, Backend: cl, Telemetry: cl,
				Directory: dir, Notifier: notices, Logger: slog.New(slog.NewTextHandler(&log, nil))}
			ctx := context.Background()
			for _, c := range []struct {
				user string
				want []string
			}{
				{"kiri@gen.example", []string{"priya@gen.example", "#gen-gpu"}},
				{"kiri@gen.example", []string{"priya@gen.example", "#gen-gpu"}},
				{"sam@gen.example", []string{"ops@gen.example"}},
			} {
				out, err := svc.Request(ctx, qm.LeaseRequest{User: c.user, Class: "seq", GPUs: 4, Duration: time.Hour})
				if err != nil || out.Lease.State != qm.PendingApproval {
					t.Fatalf("%s's request: %+v %v", c.user, out, err)
				}
				got := notices.Of(qm.NoticeApprovalRequest, out.Lease.ID)
				if len(got) != 1 || !slices.Equal(got[0].To, c.want) {
					t.Errorf("%s's request was sent to %v; want %v", c.user, got, c.want)
				}
			}
			for _, g := range []string{"grp-gen-leads", "grp-prot-leads"} {
				if n := strings.Count(log.String(), g); n != 1 {
					t.Errorf("the log names %s %d times, want once:\n%s", g, n, log.String())
				}
			}
			if !strings.Contains(log.String(), "budget_owners") {
				t.Errorf("the log does not say what to set:\n%s", log.String())
			}
		})
	}
}
