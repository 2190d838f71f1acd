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

const ownerlessPolicy = `organization: Kestrel Works
currency: GBP
timezone: Europe/London
backend: slurm
classes:
  - {name: bench, price_per_gpu_hour: 1.25, max_gpus: 4, max_duration: 24h, slurm: {partition: bench}}
default_quota: {gpus: {bench: 1}, gpu_hours_per_week: 20}
teams:
  - {name: kiln, idp_groups: [g-kiln], budget_owners: [ada@kestrel.example], quota: {gpus: {bench: 4}, gpu_hours_per_week: 100}}
  - {name: loom, idp_groups: [g-loom], channel: "#loom-gpus", quota: {gpus: {bench: 4}, gpu_hours_per_week: 100}}
  - {name: mill, idp_groups: [g-mill], quota: {gpus: {bench: 4}, gpu_hours_per_week: 100}}
approvals:
  fallback_approvers: [ops@kestrel.example]
reports:
  showback: {schedule: "TUE 07:30", channel: "#kestrel-showback", dm_budget_owners: true}
`

// Every team's weekly showback reaches someone: its budget owners, or, for a team without any,
// its channel where the policy gives one, else the platform admins (the fallback approvers),
// who also get the lines of a team the policy does not list.
func TestATeamWithoutBudgetOwnersGetsItsShowbackToo(t *testing.T) {
	p, err := policy.Load([]byte(ownerlessPolicy), "kestrel.yaml")
	if err != nil {
		t.Fatal(err)
	}
	w, _ := showback.ParseWeek("2026-W10", showback.Week{})
	from := w.Start(p.Location)
	var leases []*qm.Lease
	for i, team := range []string{"kiln", "loom", "mill", "quarry"} {
		st := from.Add(time.Duration(i+1) * time.Hour)
		leases = append(leases, &qm.Lease{ID: qm.LeaseID(i + 1), User: "u@kestrel.example", Team: team, Class: "bench", GPUs: 1, State: qm.Expired,
			CreatedAt: st, StartedAt: st, ExpiresAt: st.Add(2 * time.Hour), EndedAt: st.Add(2 * time.Hour)})
	}
	sched, err := schedule.ParseWeekly(p.Reports.Showback.Schedule, p.Location)
	if err != nil {
		t.Fatal(err)
	}
	var got recorded
	pub := &showback.Publisher{Reports: &showback.Service{Policy: p, Source: fixedSource{leases}, Clock: fixedClock(from.Add(8 * 24 * time.Hour))},
		Ledger: &memLedger{}, Deliver: &got, Schedule: sched, Owner: "r1"}
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
	if want := "#kestrel-showback,#loom-gpus,ada@kestrel.example,ops@kestrel.example"; strings.Join(to, ",") != want {
		t.Fatalf("the week went to %s; want %s", strings.Join(to, ","), want)
	}
	for who, want := range map[string][]string{
		"ada@kestrel.example": {"team kiln used 2.00 GPU-hours"},
		"#loom-gpus":          {"team loom used 2.00 GPU-hours"},
		"ops@kestrel.example": {"team mill used 2.00 GPU-hours", "team quarry used 2.00 GPU-hours"},
	} {
		for _, w := range want {
			if !strings.Contains(byTo[who].Text, w) {
				t.Errorf("the message to %s lacks %q: %s", who, w, byTo[who].Text)
			}
		}
	}
	if strings.Contains(byTo["ops@kestrel.example"].Text, "kiln") || strings.Contains(byTo["ops@kestrel.example"].Text, "loom") {
		t.Errorf("the admins got the lines of teams that have someone: %s", byTo["ops@kestrel.example"].Text)
	}
}
