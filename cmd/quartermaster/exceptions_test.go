package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// to returns the messages addressed to who.
func to(msgs []message, who string) []message {
	var out []message
	for _, m := range msgs {
		if m.To == who {
			out = append(out, m)
		}
	}
	return out
}

func mustContain(t *testing.T, what string, msgs []message, subs ...string) {
	t.Helper()
	var all []string
	for _, m := range msgs {
		all = append(all, m.Text)
	}
	text := strings.Join(all, "\n---\n")
	for _, s := range subs {
		if !strings.Contains(text, s) {
			t.Errorf("%s: no %q in:\n%s", what, s, text)
		}
	}
}

// TestExceptionScenario walks the approval paths of the example policy in the console.
func TestExceptionScenario(t *testing.T) {
	t.Parallel()
	script := `
carl@contractor.example: /gpu request 1 interactive 2h
bob@acme.example: /gpu approve L-1
carl@contractor.example: /gpu approve L-1
dana@acme.example: /gpu status L-1
dana@acme.example: /gpu request 2 interactive 2h
dana@acme.example: /gpu approve L-2
dana@acme.example: /gpu approvals
dana@acme.example: /gpu approve L-1
alice@acme.example: /gpu request 1 interactive data restricted
dana@acme.example: /gpu deny L-3 restricted data needs a signed DPA
alice@acme.example: /gpu status L-3
bob@acme.example: /gpu request 2 train for 80h
:advance 25h
bob@acme.example: /gpu status L-4
`
	msgs := runConsoleScript(t, strings.TrimLeft(script, "\n"))
	byLine := func(prefix string) []message {
		var out []message
		for _, m := range msgs {
			if strings.HasPrefix(m.Text, prefix) {
				out = append(out, m)
			}
		}
		return out
	}
	carl := to(msgs, "carl@contractor.example")
	mustContain(t, "contractor waits", carl[:1], "L-1 waits for approval", "contractor", "dana@acme.example will decide")
	dana := to(msgs, "dana@acme.example")
	if len(dana) == 0 || len(dana[0].Actions) != 2 || dana[0].Actions[0].Command != "/gpu approve L-1" || dana[0].Actions[1].Command != "/gpu deny L-1" {
		t.Fatalf("the budget owner got no Approve/Deny for L-1: %+v", dana)
	}
	mustContain(t, "team channel", to(msgs, "#vision-gpu"), "Approval needed: carl@contractor.example")
	mustContain(t, "non-owner refused", to(msgs, "bob@acme.example"), "Only dana@acme.example or platform-leads@acme.example can decide L-1")
	mustContain(t, "requester refused", carl, "Only dana@acme.example or platform-leads@acme.example can decide L-1")
	mustContain(t, "nothing changed", byLine("L-1 for carl"), "L-1 for carl@contractor.example: pending_approval")
	mustContain(t, "self-approval refused", dana, "You cannot decide your own request L-2")
	mustContain(t, "approvals list", dana, "1 request waits for your decision", "carl@contractor.example asks for 1 × interactive")
	mustContain(t, "approved", dana, "Approved L-1")
	mustContain(t, "requester told and lease active", carl, "Approved by dana@acme.example: L-1 is active: 1 × interactive")
	mustContain(t, "all copies updated", to(msgs, "#vision-gpu"), "L-1 was approved by dana@acme.example at Mon 30 Nov 09:00 CST")
	// The fallback approver decides L-2, which its budget owner asked for.
	alice := to(msgs, "alice@acme.example")
	mustContain(t, "new data class waits", alice, "L-3 waits for approval", "new-data-class")
	mustContain(t, "denial told", alice, "L-3 was denied by dana@acme.example: restricted data needs a signed DPA")
	mustContain(t, "history", alice, "dana@acme.example: pending_approval → denied (denied by dana@acme.example: restricted data needs a signed DPA)")
	bob := to(msgs, "bob@acme.example")
	mustContain(t, "long request waits", bob, "L-4 waits for approval", "long-request")
	mustContain(t, "timeout told to requester", bob, "L-4 was denied: no decision within 1d")
	mustContain(t, "timeout told to approver", dana, "L-4 expired undecided")
	mustContain(t, "timeout history", bob, "system: pending_approval → denied (no decision within 1d)")
}

// TestQuotaIncreaseScenario: an approved increase raises the quota, is used, expires, and the quota
// falls back to its old value by itself.
func TestQuotaIncreaseScenario(t *testing.T) {
	t.Parallel()
	script := `
maya@acme.example: /gpu request 8 train 4h
maya@acme.example: /gpu quota request +8 train for 1d because paper deadline
lee@acme.example: /gpu approve L-2
maya@acme.example: /gpu quota
maya@acme.example: /gpu request 8 train 4h
:advance 25h
maya@acme.example: /gpu quota
maya@acme.example: /gpu request 8 train 4h
maya@acme.example: /gpu request 1 train 4h
`
	msgs := runConsoleScript(t, strings.TrimLeft(script, "\n"))
	maya := to(msgs, "maya@acme.example")
	mustContain(t, "first lease", maya[:1], "L-1 is active")
	mustContain(t, "increase asked", maya, "L-2 asks for +8 train GPUs for team language for 1d; lee@acme.example will decide")
	mustContain(t, "lee asked", to(msgs, "lee@acme.example"), "asks for +8 train GPUs for 1d because paper deadline")
	mustContain(t, "increase approved", maya, "Team language may hold 8 more train GPUs until")
	mustContain(t, "raised quota", maya, "train: 8 of 16 GPUs in use (8 + 8 approved increase)")
	mustContain(t, "used", maya, "L-3 is active: 8 × train")
	mustContain(t, "expired", maya, "L-2 ended: the 8 extra train GPUs of team language are gone, and its quota is back to 8")
	mustContain(t, "back to old quota", maya, "train: 0 of 8 GPUs in use")
	mustContain(t, "old quota binds again", maya, "L-4 is active", "L-5 waits for approval", "over-quota")
}

// TestWithdrawnRequestsLeaveNothingToDecide: a request its requester cancels while it waits, and
// an extension whose lease ended before anyone decided, are withdrawn: the approvers' request
// cards are updated to say so (and lose their buttons), and a late approval is refused.
func TestWithdrawnRequestsLeaveNothingToDecide(t *testing.T) {
	t.Parallel()
	msgs := runConsoleScript(t, `alice@acme.example: /gpu request 2 interactive 2h
alice@acme.example: /gpu release L-1
alice@acme.example: /gpu request 1 interactive 2h
alice@acme.example: /gpu extend L-2 10h
:advance 3h
dana@acme.example: /gpu approve L-3
dana@acme.example: /gpu approvals
`)
	var withdrawn []message
	for _, m := range msgs {
		if strings.Contains(m.Text, "was withdrawn") {
			withdrawn = append(withdrawn, m)
			if len(m.Actions) != 0 {
				t.Errorf("a withdrawn request's card keeps its buttons: %+v", m)
			}
		}
	}
	mustContain(t, "the owner's cards", to(withdrawn, "dana@acme.example"),
		"L-1 was withdrawn (cancelled by alice@acme.example); nothing is left to decide.",
		"L-3 was withdrawn (L-2 expired before a budget owner decided); nothing is left to decide.")
	mustContain(t, "the team channel's cards", to(withdrawn, "#vision-gpu"), "L-1 was withdrawn", "L-3 was withdrawn")
	dana := to(msgs, "dana@acme.example")
	mustContain(t, "a late approval", dana[len(dana)-2:], "L-3 was withdrawn (L-2 expired before a budget owner decided) and no longer waits for a decision.", "Nothing waits for your decision.")
	for _, m := range msgs {
		if strings.Contains(m.Text, "expired undecided") || strings.Contains(m.Text, "L-3 was denied") {
			t.Errorf("a withdrawn extension was timed out as well: %+v", m)
		}
	}
}

// TestExceptionsNobodyCanDecideAreRefused: on a policy with neither budget owners nor fallback
// approvers, a request, a quota increase or an extension that a rule sends for approval is
// refused in one sentence that says who to ask, and nothing waits for a decision.
func TestExceptionsNobodyCanDecideAreRefused(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "tiny.yaml")
	if err := os.WriteFile(p, []byte(`organization: Tiny Lab
classes:
  - {name: gpu, max_gpus: 2, max_duration: 2h}
default_quota: {gpus: {gpu: 2}, gpu_hours_per_week: 100}
exceptions:
  - {name: big, when: request.gpus > class.max_gpus}
  - {name: long, when: request.duration > class.max_duration}
sim: {nodes: [{name: box, count: 1, class: gpu, gpus: 4}]}
directory:
  - {user: sam@tiny.example, groups: [lab]}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	msgs := runConsoleScript(t, `sam@tiny.example: /gpu request 3 gpu
sam@tiny.example: /gpu quota request +2 gpu because experiments
sam@tiny.example: /gpu request 1 gpu for 1h
sam@tiny.example: /gpu extend L-1 5h
sam@tiny.example: /gpu list
sam@tiny.example: /gpu catalog
sam@tiny.example: /gpu policy
`, "--policy", p)
	if len(msgs) != 7 {
		t.Fatalf("got %+v", msgs)
	}
	for _, i := range []int{0, 1, 3} {
		mustContain(t, "refusal", msgs[i:i+1], "nobody can decide the exceptions of team lab", "ask a platform admin to add budget_owners to team lab or approvals.fallback_approvers", "Example: /gpu ")
	}
	mustContain(t, "the request within the rules", msgs[2:3], "L-1 is active")
	if strings.Contains(msgs[4].Text, "L-2") || strings.Contains(msgs[4].Text, "pending") {
		t.Errorf("a refused exception left a lease behind: %s", msgs[4].Text)
	}
	// A class without a SKU, memory or description is shown without empty places.
	mustContain(t, "the grant", msgs[2:3], "1 × gpu on box-01")
	mustContain(t, "the catalog", msgs[5:6], "Tiny Lab GPU catalog (1 class):")
	mustContain(t, "the policy", msgs[6:7], "self-approval not allowed; fallback approvers: none")
	for _, m := range msgs[2:] {
		if strings.Contains(m.Text, "()") || strings.Contains(m.Text, ":  ") {
			t.Errorf("an empty place in %q", m.Text)
		}
	}
}
