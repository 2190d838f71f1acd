package policy

import (
	"strings"
	"testing"
	"time"
)

// A rule that sends more GPUs, or a longer time, of a class to approval for everyone is found by
// probing the rules: the class reaches less without approval than its max_gpus and max_duration
// say, the rule is named, and policy check warns of each limit. A rule for one team only changes
// that team's reach, and is no warning.
func TestRulesCutAClassShortOfItsLimits(t *testing.T) {
	p, err := LoadFile("../../commands/testdata/plover.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r, ok := p.ReachFor("osprey", "tides")
	if !ok || r.GPUs != 8 || r.GPUsRule != "big-request" || r.Duration != 24*time.Hour || r.DurationRule != "long-run" || r.Undecided || r.ByUser {
		t.Errorf("osprey for tides: %+v; want 8 GPUs (big-request) for 24h (long-run)", r)
	}
	if r, _ := p.ReachFor("wren", "tides"); r.Limited() || r.GPUs != 4 || r.Duration != 12*time.Hour {
		t.Errorf("wren for tides: %+v; want its own limits", r)
	}
	if r, _ := p.ReachFor("wren", "dunes"); r.GPUs != 1 || r.GPUsRule != "dunes-wren" {
		t.Errorf("wren for dunes: %+v; want 1 GPU (dunes-wren)", r)
	}
	if !p.ReachByTeam("wren", nil) || p.ReachByTeam("osprey", nil) {
		t.Errorf("wren by team %v, osprey by team %v; want only wren", p.ReachByTeam("wren", nil), p.ReachByTeam("osprey", nil))
	}
	var warned []string
	for _, w := range p.Warnings {
		if strings.Contains(w.Msg, "never reached without one") {
			warned = append(warned, w.Msg)
		}
	}
	want := []string{
		`exception rule "big-request" sends a request of class osprey for more than 8 GPUs to approval for every team, so its max_gpus of 16 is never reached without one; the catalog says up to 8 GPUs; write max_gpus: 8, or change the rule`,
		`exception rule "long-run" sends a request of class osprey for longer than 1d to approval for every team, so its max_duration of 3d is never reached without one; the catalog says up to 1d; write max_duration: 1d, or change the rule`,
	}
	if strings.Join(warned, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(warned, "\n"), strings.Join(want, "\n"))
	}
}

// A rule the probe cannot evaluate says nothing new: the class's own limits stand, and no warning.
func TestAnUndecidableRuleSaysNothingNew(t *testing.T) {
	src := `organization: Plover
currency: EUR
timezone: UTC
classes:
  - {name: lark, sku: L4, isolation: shared, price_per_gpu_hour: 1, max_gpus: 8, max_duration: 8h, slurm: {partition: lark, gres: "gpu:l4"}}
default_quota: {gpus: {lark: 8}}
exceptions:
  - name: odd
    when: request.gpus > 2 && request.gpus / (request.gpus - 3) > 0
approvals: {timeout: 24h, fallback_approvers: [root@plover.example]}
backend: sim
sim: {nodes: [{name: l4, count: 2, class: lark, gpus: 8}]}
`
	p, err := Load([]byte(src), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r, _ := p.ReachFor("lark", "")
	if !r.Undecided || r.Limited() || r.GPUs != 8 || r.Duration != 8*time.Hour {
		t.Errorf("lark: %+v; want the class's own limits, undecided", r)
	}
	for _, w := range p.Warnings {
		if strings.Contains(w.Msg, "never reached") {
			t.Errorf("warned %q", w.Msg)
		}
	}
}

// A rule that answers a budget owner otherwise than a member is said to look at who asks, and the
// member's figure is the one given; no warning, as the class's limit is reachable for some.
func TestAReachThatDependsOnWhoAsksIsSaidSo(t *testing.T) {
	src := `organization: Plover
currency: EUR
timezone: UTC
classes:
  - {name: lark, sku: L4, isolation: shared, price_per_gpu_hour: 1, max_gpus: 8, max_duration: 8h, slurm: {partition: lark, gres: "gpu:l4"}}
default_quota: {gpus: {lark: 8}}
teams:
  - {name: finches, idp_groups: [g-finches], budget_owners: [mara@plover.example]}
exceptions:
  - name: members-small
    when: "!(user.name in team.budget_owners) && request.gpus > 2"
approvals: {timeout: 24h, fallback_approvers: [root@plover.example]}
backend: sim
sim: {nodes: [{name: l4, count: 2, class: lark, gpus: 8}]}
`
	p, err := Load([]byte(src), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r, _ := p.ReachFor("lark", "finches")
	if !r.ByUser || r.GPUs != 2 || r.GPUsRule != "members-small" {
		t.Errorf("lark for finches: %+v; want 2 GPUs (members-small), by user", r)
	}
	for _, w := range p.Warnings {
		if strings.Contains(w.Msg, "never reached") {
			t.Errorf("warned %q", w.Msg)
		}
	}
}
