package commands

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const quotaRoomPolicy = `organization: Fjord Compute
currency: NOK
timezone: Europe/Oslo
classes:
  - name: t4
    price_per_gpu_hour: 9
    isolation: shared
    max_gpus: 2
    max_duration: 6h
default_quota: {gpus: {t4: 0}}
teams:
  - name: speech
    idp_groups: [speech]
    budget_owners: [oda@fjord.example]
    quota: {gpus: {t4: 1}, gpu_hours_per_week: 100}
    data_classes: [open]
exceptions:
  - name: outside-vendor
    when: "'vendors' in user.groups"
    why: Vendor accounts need a budget owner
  - name: too-long
    when: request.duration > class.max_duration
    why: Longer than the class allows
  - name: beyond-quota
    when: usage.gpus_in_use + request.gpus > team.quota.gpus[class.name]
    why: Beyond the team's quota
approvals: {self_approval: false}
backend: sim
directory:
  - {user: oda@fjord.example, groups: [speech]}
  - {user: per@fjord.example, groups: [speech]}
  - {user: vik@vendor.example, groups: [speech, vendors]}
sim:
  nodes:
    - {name: t4, count: 1, class: t4, gpus: 4}
`

// A request that waits both for a rule about the quota and for another rule (a contractor's
// account, a length past the class's) is not told that a larger quota would spare it the
// decision: the other rule would still send it to a budget owner, and the reply says which.
func TestALargerQuotaIsNotOfferedAsRoomWithoutADecisionWhereAnotherRuleApplies(t *testing.T) {
	file := filepath.Join(t.TempDir(), "fjord.yaml")
	if err := os.WriteFile(file, []byte(quotaRoomPolicy), 0o644); err != nil {
		t.Fatal(err)
	}
	h := newHarnessOn(t, file)
	mustOK(t, h.say("per@fjord.example", "/gpu request 1 t4 for 2h"))

	for _, c := range []struct{ user, text, rule string }{
		{"vik@vendor.example", "/gpu request 1 t4 for 1h", "outside-vendor"},
		{"per@fjord.example", "/gpu request 1 t4 for 10h", "too-long"},
	} {
		r := mustOK(t, h.say(c.user, c.text))
		if !strings.Contains(r.Text, "waits for approval") || !strings.Contains(r.Text, "/gpu quota request +1 t4") {
			t.Fatalf("%s: %q", c.text, r.Text)
		}
		if strings.Contains(r.Text, "without a decision") {
			t.Errorf("%s: a larger quota would not spare the %s rule's decision, yet the reply says so: %q", c.text, c.rule, r.Text)
		}
		if !strings.Contains(r.Text, "still") || !strings.Contains(r.Text, c.rule) {
			t.Errorf("%s: the reply does not say the %s rule still needs a decision: %q", c.text, c.rule, r.Text)
		}
	}

	// Only the quota in the way: the larger quota is room without a decision, as before.
	r := mustOK(t, h.say("per@fjord.example", "/gpu request 1 t4 for 1h"))
	if !strings.Contains(r.Text, "For room without a decision next time") {
		t.Errorf("only the quota in the way: %q", r.Text)
	}
}
