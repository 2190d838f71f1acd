package commands

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
)

// ploverApproversPolicy is a policy of its own: team wrens, whose budget owner is bea, and desk as the
// fallback approver; a rule sends long requests to a budget owner.
const ploverApproversPolicy = `organization: Plover Works
currency: CHF
timezone: Europe/Zurich
classes:
  - name: mote
    sku: L4
    max_gpus: 2
    max_duration: 4h
default_quota: {gpus: {mote: 1}}
teams:
  - name: wrens
    idp_groups: [g-wrens]
    budget_owners: [bea@plover.example]
    quota: {gpus: {mote: 2}}
exceptions:
  - name: long-run
    when: request.duration > class.max_duration
    why: Longer than the class allows
approvals:
  fallback_approvers: [desk@plover.example]
backend: sim
directory:
  - {user: ivo@plover.example, groups: [g-wrens]}
  - {user: bea@plover.example, groups: [g-wrens]}
  - {user: cai@plover.example, groups: [g-wrens]}
  - {user: desk@plover.example, groups: [g-desk]}
sim:
  nodes:
    - {name: l4, count: 1, class: mote, gpus: 2}
`

// When serve starts on a policy that gives a waiting request's team other deciders (another
// budget owner, or none, so that the fallback approvers decide), those who decide now are sent
// the approval message with its buttons, once: not again at the next start, nor by another
// replica, and not to someone who holds a copy already.
func TestNewApproversAreSentAWaitingRequestWhenThePolicyChanges(t *testing.T) {
	const ivo, bea = "ivo@plover.example", "bea@plover.example"
	for _, tc := range []struct {
		name, old, new, decider, says string
	}{
		{"another budget owner", "budget_owners: [bea@plover.example]", "budget_owners: [cai@plover.example]",
			"cai@plover.example", "The policy now names cai@plover.example to decide the requests of team wrens."},
		{"no budget owner", "    budget_owners: [bea@plover.example]\n", "",
			"desk@plover.example", "The policy now names no budget owner of team wrens, so the fallback approvers (desk@plover.example) decide its requests."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "plover.yaml")
			if err := os.WriteFile(path, []byte(ploverApproversPolicy), 0o600); err != nil {
				t.Fatal(err)
			}
			h := newHarnessOn(t, path)
			h.bot.Edits = bot.SenderFunc(func(context.Context, bot.Reply) error { return nil })
			copies := map[string][]string{}
			h.bot.Copies = func(_ context.Context, ref string) ([]string, error) { return copies[ref], nil }
			ctx := context.Background()
			id := leaseIn(t, mustOK(t, h.say(ivo, "/gpu request 1 mote for 6h")).Text).String()
			for _, r := range h.notices(bea) {
				copies[r.Ref] = append(copies[r.Ref], r.To)
			}
			if len(copies["approval:"+id]) != 1 {
				t.Fatalf("bea's copies: %+v", copies)
			}
			if got := h.notices(tc.decider); len(got) != 0 {
				t.Fatalf("%s was sent %q before the policy changed", tc.decider, texts(got))
			}

			p, err := policy.Load([]byte(strings.Replace(ploverApproversPolicy, tc.old, tc.new, 1)), "plover.yaml")
			if err != nil {
				t.Fatal(err)
			}
			h.svc.Policy, h.svc.Directory = p, p
			h.bot.RetireFormerApprovers(ctx)
			got := h.notices(tc.decider)
			if len(got) != 1 || got[0].Ref != "approval:"+id || len(got[0].Actions) == 0 || !strings.Contains(got[0].Text, "Approval needed") ||
				!strings.Contains(got[0].Text, tc.says) {
				t.Fatalf("%s after the change was sent %+v; want the approval message with its buttons, saying %q", tc.decider, got, tc.says)
			}
			// The next start (bea's copy is still there to retire here) and another replica's send
			// nothing more.
			h.bot.RetireFormerApprovers(ctx)
			h.bot.RetireFormerApprovers(ctx)
			if again := h.notices(tc.decider); len(again) != 0 {
				t.Errorf("%s was sent it again: %q", tc.decider, texts(again))
			}
			if got := h.notices(ivo); len(got) != 0 {
				t.Errorf("the requester was sent %q", texts(got))
			}
			mustOK(t, h.say(tc.decider, "/gpu approve "+id))
		})
	}
}

// At start, every request that waits for approval is sent to each person who decides it now and
// holds no copy of it, once, saying why: a policy that keeps the budget owner and adds another
// sends the added one, and a request whose former approver's copy was retired at an earlier start
// that ended before the new ones were sent is sent to them at the next. Nobody who holds a copy
// is sent another.
func TestWaitingRequestsAreSentToDecidersWithoutACopyAtStart(t *testing.T) {
	const ivo, bea, cai = "ivo@plover.example", "bea@plover.example", "cai@plover.example"
	for _, tc := range []struct {
		name, new, says string
		beaHolds        bool
	}{
		{"an added budget owner", "budget_owners: [bea@plover.example, cai@plover.example]",
			"The policy now also names cai@plover.example to decide the requests of team wrens.", true},
		{"the former copy retired before the new one was sent", "budget_owners: [cai@plover.example]",
			"The policy now names cai@plover.example to decide the requests of team wrens.", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "plover.yaml")
			if err := os.WriteFile(path, []byte(ploverApproversPolicy), 0o600); err != nil {
				t.Fatal(err)
			}
			h := newHarnessOn(t, path)
			h.bot.Edits = bot.SenderFunc(func(context.Context, bot.Reply) error { return nil })
			copies := map[string][]string{}
			h.bot.Copies = func(_ context.Context, ref string) ([]string, error) { return copies[ref], nil }
			ctx := context.Background()
			id := leaseIn(t, mustOK(t, h.say(ivo, "/gpu request 1 mote for 6h")).Text).String()
			for _, r := range h.notices(bea) {
				if tc.beaHolds {
					copies[r.Ref] = append(copies[r.Ref], r.To)
				}
			}
			p, err := policy.Load([]byte(strings.Replace(ploverApproversPolicy, "budget_owners: [bea@plover.example]", tc.new, 1)), "plover.yaml")
			if err != nil {
				t.Fatal(err)
			}
			h.svc.Policy, h.svc.Directory = p, p
			h.bot.RetireFormerApprovers(ctx)
			got := h.notices(cai)
			if len(got) != 1 || got[0].Ref != "approval:"+id || len(got[0].Actions) == 0 || !strings.Contains(got[0].Text, tc.says) {
				t.Fatalf("cai after the change was sent %+v; want the approval message with its buttons, saying %q", got, tc.says)
			}
			if again := h.notices(bea); len(again) != 0 {
				t.Errorf("bea was sent %q", texts(again))
			}
			h.bot.RetireFormerApprovers(ctx)
			h.bot.RetireFormerApprovers(ctx)
			if again := h.notices(cai); len(again) != 0 {
				t.Errorf("cai was sent it again: %q", texts(again))
			}
			if got := h.notices(ivo); len(got) != 0 {
				t.Errorf("the requester was sent %q", texts(got))
			}
			mustOK(t, h.say(cai, "/gpu approve "+id))
		})
	}
}

// A start that finds a request's approval message still waiting to be delivered to its budget
// owner (the chat platform was down, or another replica sends it now) does not send them another.
func TestAnApprovalMessageWaitingToBeDeliveredIsNotSentAgainAtStart(t *testing.T) {
	const ivo, bea = "ivo@plover.example", "bea@plover.example"
	path := filepath.Join(t.TempDir(), "plover.yaml")
	if err := os.WriteFile(path, []byte(ploverApproversPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	h := newHarnessOn(t, path)
	h.bot.Edits = bot.SenderFunc(func(context.Context, bot.Reply) error { return nil })
	h.bot.Copies = func(context.Context, string) ([]string, error) { return nil, nil } // nothing posted yet
	queued := map[qm.LeaseID][]string{}
	h.bot.Queued = func(_ context.Context, id qm.LeaseID) ([]string, error) { return queued[id], nil }
	id := leaseIn(t, mustOK(t, h.say(ivo, "/gpu request 1 mote for 6h")).Text)
	if len(h.notices(bea)) != 1 {
		t.Fatal("bea was not asked")
	}
	queued[id] = []string{bea}
	h.bot.RetireFormerApprovers(context.Background())
	if again := h.notices(bea); len(again) != 0 {
		t.Errorf("bea was sent it again: %q", texts(again))
	}
}
