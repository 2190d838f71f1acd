package policy

import (
	"strings"
	"testing"
)

const kestrel = `organization: Kestrel Works
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

// policy check warns of a team whose weekly showback would reach nobody: no budget owners, no
// channel and no platform admins (fallback approvers) to send it to; and of a showback that goes
// nowhere at all, with no channel and no messages to budget owners.
func TestPolicyCheckWarnsOfAShowbackThatReachesNobody(t *testing.T) {
	for _, c := range []struct {
		name, old, new string
		want, not      []string
	}{
		{name: "every team reached", not: []string{"showback"}},
		{name: "no admins", old: "fallback_approvers: [ops@kestrel.example]", new: "fallback_approvers: []",
			want: []string{"team mill has no budget_owners, no channel and approvals.fallback_approvers is empty, so its weekly showback reaches nobody"},
			not:  []string{"team loom has no budget_owners, no channel", "team kiln has no budget_owners"}},
		{name: "no channel, no messages", old: `channel: "#kestrel-showback", dm_budget_owners: true`, new: `dm_budget_owners: false`,
			want: []string{"reports.showback has no channel and dm_budget_owners is false, so the weekly showback is sent nowhere"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := kestrel
			if c.old != "" {
				src = strings.Replace(src, c.old, c.new, 1)
			}
			p, err := Load([]byte(src), "kestrel.yaml")
			if err != nil {
				t.Fatal(err)
			}
			text := warningText(p.Warnings)
			for _, w := range c.want {
				if !strings.Contains(text, w) {
					t.Errorf("no warning %q in:\n%s", w, text)
				}
			}
			for _, w := range c.not {
				if strings.Contains(text, w) {
					t.Errorf("a warning %q in:\n%s", w, text)
				}
			}
		})
	}
}
