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
  - name: a100
    price_per_gpu_hour: 30
    isolation: shared
    max_gpus: 4
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
    - {name: a100, count: 1, class: a100, gpus: 4}
`

// A request that waits both for a rule about the quota and for another rule (a contractor's
// account, a length past the class's) is not told that a larger quota would spare it the
// decision: the other rule would still send it to a budget owner, and the reply says which.
func quotaRoomHarness(t *testing.T) *harness {
	file := filepath.Join(t.TempDir(), "fjord.yaml")
	if err := os.WriteFile(file, []byte(quotaRoomPolicy), 0o644); err != nil {
		t.Fatal(err)
	}
	return newHarnessOn(t, file)
}

// A request in a class of which the team has no quota at all is told so, and not that the
// team "holds 0 of its 0" GPUs of it; the approval card says the same.
func TestARequestInAClassWithoutQuotaSaysTheTeamHasNone(t *testing.T) {
	h := quotaRoomHarness(t)
	r := mustOK(t, h.say("per@fjord.example", "/gpu request 1 a100 for 1h"))
	card := ""
	for _, n := range h.notices("oda@fjord.example") {
		if strings.HasPrefix(n.Text, "Approval needed") {
			card = n.Text
		}
	}
	for _, text := range []string{r.Text, card} {
		if !strings.Contains(text, "Team speech has no quota of a100 GPUs.") || strings.Contains(text, "of its 0") {
			t.Errorf("a request in a class without quota: %q", text)
		}
	}
	// Once a budget owner lets it run, the team holds GPUs of the class without a quota of it.
	mustOK(t, h.say("oda@fjord.example", "/gpu approve L-1"))
	h.notices("per@fjord.example")
	r = mustOK(t, h.say("per@fjord.example", "/gpu request 1 a100 for 1h"))
	if !strings.Contains(r.Text, "Team speech holds 1 a100 GPU now, with no quota of them: L-1 (1, running).") {
		t.Errorf("a second request in a class without quota: %q", r.Text)
	}
	h.notices("oda@fjord.example")
	mustOK(t, h.say("oda@fjord.example", "/gpu approve L-2"))
	var edited string
	for _, n := range h.notices("oda@fjord.example") {
		edited = n.Text
	}
	if !strings.Contains(edited, "Team speech holds 2 a100 GPUs now, with no quota of them") {
		t.Errorf("the approval card, once approved: %q", edited)
	}
}

func TestALargerQuotaIsNotOfferedAsRoomWithoutADecisionWhereAnotherRuleApplies(t *testing.T) {
	h := quotaRoomHarness(t)
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

// A duration written with a decimal comma (1,5h) or with its minutes' unit left off (1h30), as
// many people write them, is refused with the way that works, which typed back is granted.
func TestADurationWithADecimalCommaOrBareMinutesSaysHowToWriteIt(t *testing.T) {
	h := quotaRoomHarness(t)
	for _, c := range []struct{ typed, want string }{
		{"1,5h", "1.5h"},
		{"2,25h", "2.25h"},
		{"1h30", "1h30m"},
		{"2h05", "2h05m"},
	} {
		r := h.say("per@fjord.example", "/gpu estimate 1 t4 "+c.typed)
		if !strings.Contains(r.Text, "like "+c.want) {
			t.Errorf("%s: %q does not say to write %s", c.typed, r.Text, c.want)
		}
		mustOK(t, h.say("per@fjord.example", "/gpu estimate 1 t4 "+c.want))
		r = h.say("per@fjord.example", "/gpu request 1 t4 for "+c.typed)
		if !strings.Contains(r.Text, "like "+c.want) {
			t.Errorf("request for %s: %q does not say to write %s", c.typed, r.Text, c.want)
		}
	}
	// A comma that is no decimal comma is not read as one.
	if r := h.say("per@fjord.example", "/gpu estimate 1 t4 1,000h"); strings.Contains(r.Text, "1.000h") {
		t.Errorf("1,000h: %q", r.Text)
	}
}
