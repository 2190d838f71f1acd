package showback_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/schedule"
	"github.com/acme/quartermaster/reports/showback"
)

const groupOwnersPolicy = `organization: Weir Hydraulics
currency: EUR
timezone: Europe/Amsterdam
backend: slurm
classes:
  - {name: flume, price_per_gpu_hour: 2, max_gpus: 4, max_duration: 24h, slurm: {partition: flume}}
default_quota: {gpus: {flume: 1}, gpu_hours_per_week: 20}
teams:
  - {name: sluice, idp_groups: [g-sluice], budget_owners: [grp-sluice-leads], channel: "#sluice-gpu", quota: {gpus: {flume: 4}, gpu_hours_per_week: 100}}
  - {name: dyke, idp_groups: [g-dyke], budget_owners: [grp-dyke-leads], quota: {gpus: {flume: 4}, gpu_hours_per_week: 100}}
  - {name: polder, idp_groups: [g-polder], budget_owners: [joost@weir.example, grp-polder-leads], quota: {gpus: {flume: 4}, gpu_hours_per_week: 100}}
approvals:
  fallback_approvers: [ops@weir.example]
reports:
  showback: {schedule: "MON 08:00", dm_budget_owners: true}
`

// groupsOnly is a directory that says a person's groups but cannot list a group's members.
type groupsOnly struct{}

func (groupsOnly) Groups(context.Context, string) ([]string, bool) { return nil, false }

// A team whose budget owners are groups whose members the directory does not know gets its
// weekly showback where a team without budget owners does (its channel, else the platform
// admins), and no message is addressed to a group's name, which a chat would take for a channel.
func TestAShowbackForGroupsOfUnknownMembersReachesSomeone(t *testing.T) {
	p, err := policy.Load([]byte(groupOwnersPolicy), "weir.yaml")
	if err != nil {
		t.Fatal(err)
	}
	svc := &qm.Service{Policy: p, Directory: groupsOnly{}}
	w, _ := showback.ParseWeek("2026-W10", showback.Week{})
	from := w.Start(p.Location)
	var leases []*qm.Lease
	for i, team := range []string{"sluice", "dyke", "polder"} {
		st := from.Add(time.Duration(i+1) * time.Hour)
		leases = append(leases, &qm.Lease{ID: qm.LeaseID(i + 1), User: "u@weir.example", Team: team, Class: "flume", GPUs: 1, State: qm.Expired,
			CreatedAt: st, StartedAt: st, ExpiresAt: st.Add(2 * time.Hour), EndedAt: st.Add(2 * time.Hour)})
	}
	sched, err := schedule.ParseWeekly(p.Reports.Showback.Schedule, p.Location)
	if err != nil {
		t.Fatal(err)
	}
	var got recorded
	pub := &showback.Publisher{Reports: &showback.Service{Policy: p, Source: fixedSource{leases}, Clock: fixedClock(from.Add(8 * 24 * time.Hour))},
		Ledger: &memLedger{}, Deliver: &got, Schedule: sched, Owner: "r1", People: svc.People}
	if posted, err := pub.Publish(context.Background(), w); err != nil || !posted {
		t.Fatalf("Publish = %v, %v", posted, err)
	}
	byTo := map[string]bot.Reply{}
	var to []string
	for _, m := range got {
		byTo[m.To] = m
		to = append(to, m.To)
	}
	slices.Sort(to)
	if want := "#sluice-gpu,joost@weir.example,ops@weir.example"; strings.Join(to, ",") != want {
		t.Fatalf("the week went to %s; want %s", strings.Join(to, ","), want)
	}
	for who, want := range map[string]string{
		"#sluice-gpu":        "team sluice used 2.00 GPU-hours",
		"ops@weir.example":   "team dyke used 2.00 GPU-hours",
		"joost@weir.example": "team polder used 2.00 GPU-hours",
	} {
		if !strings.Contains(byTo[who].Text, want) {
			t.Errorf("the message to %s lacks %q: %s", who, want, byTo[who].Text)
		}
	}
}
