package policy

import (
	"context"
	"strings"
	"testing"
	"time"
)

// orbitPolicy is a small policy with names of its own; the reference's promises must hold for it.
const orbitPolicy = `organization: Orbit Labs
classes:
  - name: notebook
    sku: A10
    max_gpus: 1
    max_duration: 6h
    idle_timeout: %s
    idle_grace: 5m
  - name: bulk
    sku: A100
    max_gpus: 4
    max_duration: 48h
    idle_timeout: 1h
teams:
  - name: comets
    idp_groups: [comets]
    quota: {gpus: {notebook: 2, bulk: 8}, gpu_hours_per_week: 200}
exceptions:
  - name: big-spend
    when: request.gpu_hours > 100
  - name: wide
    when: request.gpus >= 3.5
  - name: pricey
    when: class.price_per_gpu_hour * 2.0 > 5
sim:
  nodes: [{name: nb, count: 1, class: notebook, gpus: 4}, {name: bk, count: 1, class: bulk, gpus: 8}]
`

func loadOrbit(t *testing.T, idle string) (*Policy, error) {
	t.Helper()
	return Load([]byte(strings.Replace(orbitPolicy, "%s", idle, 1)), "orbit.yaml")
}

// TestIdleTimeoutZeroTurnsReclaimOff: docs/policy.md says idle_timeout: 0 turns idle reclaim off;
// a bare 0 loads (it used to be refused for want of a unit), as do 0m and 0s.
func TestIdleTimeoutZeroTurnsReclaimOff(t *testing.T) {
	for _, v := range []string{"0", "0m", "0s", `"0"`} {
		p, err := loadOrbit(t, v)
		if err != nil {
			t.Fatalf("idle_timeout: %s: %v", v, err)
		}
		c, _ := p.Class("notebook")
		if c.IdleTimeout.Duration != 0 {
			t.Errorf("idle_timeout: %s reads %v", v, c.IdleTimeout.Duration)
		}
	}
	if _, err := loadOrbit(t, "-0"); err == nil {
		t.Error("idle_timeout: -0 loaded; it is not a duration")
	}
	_, err := loadOrbit(t, "soon")
	if err == nil || !strings.Contains(err.Error(), `"soon" is not a duration`) {
		t.Errorf("idle_timeout: soon: %v", err)
	}
}

// TestRulesCompareIntWithDouble: request.gpu_hours > 100 (a double against an int) type-checks and
// fires past the boundary; request.gpus >= 3.5 likewise the other way round.
func TestRulesCompareIntWithDouble(t *testing.T) {
	p, err := loadOrbit(t, "30m")
	if err != nil {
		t.Fatal(err)
	}
	team, class := p.RuleInputFor("comets", "bulk")
	in := RuleInput{Request: RuleRequest{Kind: "lease", GPUs: 3, Class: "bulk", Duration: 10 * time.Hour, GPUHours: 100},
		Team: team, Class: class}
	if got := p.Evaluate(context.Background(), in); len(got) != 0 {
		t.Fatalf("at the boundaries %v matched", got)
	}
	in.Request.GPUHours = 100.5
	in.Request.GPUs = 4
	got := p.Evaluate(context.Background(), in)
	if len(got) != 2 || got[0].Rule != "big-spend" || got[1].Rule != "wide" {
		t.Fatalf("past the boundaries: %v", got)
	}
}

// TestRuleArithmeticStillWantsOneType: mixing int and double in arithmetic stays an error, with
// the rule's line, as docs/policy.md says.
func TestRuleArithmeticStillWantsOneType(t *testing.T) {
	src := strings.Replace(strings.Replace(orbitPolicy, "%s", "30m", 1), "class.price_per_gpu_hour * 2.0 > 5", "class.price_per_gpu_hour * 2 > 5", 1)
	_, err := Load([]byte(src), "orbit.yaml")
	if err == nil || !strings.Contains(err.Error(), "pricey") || !strings.Contains(err.Error(), "_*_") {
		t.Fatalf("price * 2: %v", err)
	}
}
