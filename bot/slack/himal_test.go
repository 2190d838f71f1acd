package slack_test

import (
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// newHimalEnv is the product on a policy of its own names: Himal Compute in Kathmandu, billing in
// CHF; team glacier decided by two budget owners (pema and sonam) with the channel #glacier-gpus,
// and a rule (vendor) on the email of an outside firm's staff.
func newHimalEnv(t *testing.T) *env {
	t.Helper()
	p, err := policy.LoadFile("../../commands/testdata/himal.yaml")
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvOn(t, storetest.SQLite(t), p, []string{"glacier", "monsoon", "yeti"})
	e.slack.setUsers(map[string]string{
		"UPEMA":  "pema@himal.example",
		"USONAM": "sonam@himal.example",
		"UKARMA": "karma@himal.example",
		"UDAWA":  "dawa@vendor.example",
		"URINA":  "rina@himal.example",
	})
	return e
}

// A request that a rule sends to a team of two budget owners posts Approve and Deny to each of
// them and to the team's channel. A teammate's press, another team's budget owner's, and the
// requester's own change nothing; a budget owner's press on her own request is refused, naming
// the other owner; the other owner's press on the channel's copy decides it, and every copy is
// edited to say so, without buttons.
func TestTwoBudgetOwnersDecideWithButtonsInSlack(t *testing.T) {
	e := newHimalEnv(t)
	find := func(ch, id string) message {
		t.Helper()
		for _, m := range e.postsTo(ch) {
			if strings.Contains(m.Text, "Approval needed") && strings.Contains(m.Text, id) {
				return m
			}
		}
		t.Fatalf("no approval message for %s in %s: %+v", id, ch, e.postsTo(ch))
		return message{}
	}
	trigger := e.command("UDAWA", "request 1 sketch for 1h")
	e.wait()
	if r := e.responseTo(trigger); !strings.Contains(r.Text, "L-1 waits for approval") || !strings.Contains(r.Text, "vendor") ||
		!strings.Contains(r.Text, "pema@himal.example or sonam@himal.example will decide") {
		t.Fatalf("the vendor's request: %q", r.Text)
	}
	toPema, toSonam, toChannel := find(dm("UPEMA"), "L-1"), find(dm("USONAM"), "L-1"), find("CGLACIERGPUS", "L-1")
	for _, who := range []string{"UKARMA", "URINA", "UDAWA"} {
		e.click(who, toChannel, findButton(t, toChannel.Blocks, "/gpu approve L-1"))
		e.wait()
	}
	if l := e.lease("L-1"); l.State != qm.PendingApproval {
		t.Fatalf("after presses by people who may not decide: %s", l.State)
	}
	_, updates, _, _ := e.slack.snapshot()
	if len(updates) != 0 {
		t.Fatalf("presses by people who may not decide edited %d messages", len(updates))
	}

	// A budget owner's own request goes to the other owner; her own press is refused.
	trigger = e.command("UPEMA", "request 2 forge for 30h")
	e.wait()
	if r := e.responseTo(trigger); !strings.Contains(r.Text, "L-2 waits for approval") || !strings.Contains(r.Text, "so sonam@himal.example will decide") {
		t.Fatalf("pema's own request: %q", r.Text)
	}
	own := find(dm("USONAM"), "L-2")
	e.click("UPEMA", own, findButton(t, own.Blocks, "/gpu approve L-2"))
	e.wait()
	_, _, responses, _ := e.slack.snapshot()
	if last := responses[len(responses)-1]; !strings.Contains(last.Text, "You cannot decide your own request L-2; only sonam@himal.example or ops@himal.example can.") {
		t.Errorf("pema's press on her own request: %q", last.Text)
	}
	if l := e.lease("L-2"); l.State != qm.PendingApproval {
		t.Fatalf("after pema pressed Approve on her own request: %s", l.State)
	}

	e.click("USONAM", toChannel, findButton(t, toChannel.Blocks, "/gpu approve L-1"))
	e.wait()
	if l := e.lease("L-1"); l.State != qm.Active || l.DecidedBy != "sonam@himal.example" {
		t.Fatalf("after sonam's approval: %s decided by %q", l.State, l.DecidedBy)
	}
	_, updates, _, _ = e.slack.snapshot()
	edited := map[string]bool{}
	for _, u := range updates {
		if strings.Contains(u.Text, "L-1") {
			if !strings.Contains(u.Text, "approved by sonam@himal.example") || len(buttonsIn(u.Blocks)) != 0 {
				t.Errorf("an edited copy: %q with buttons %v", u.Text, buttonsIn(u.Blocks))
			}
			edited[u.Channel+"/"+u.TS] = true
		}
	}
	for _, m := range []message{toPema, toSonam, toChannel} {
		if !edited[m.Channel+"/"+m.TS] {
			t.Errorf("the copy in %s was not edited; edits: %+v", m.Channel, updates)
		}
	}
	told := false
	for _, m := range e.postsTo(dm("UDAWA")) {
		told = told || strings.Contains(m.Text, "Approved by sonam@himal.example: L-1 is active")
	}
	if !told {
		t.Errorf("the vendor was not told; their DMs: %+v", e.postsTo(dm("UDAWA")))
	}
}
