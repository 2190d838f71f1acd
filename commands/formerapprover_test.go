package commands

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// An approval message sent to a budget owner who has since stopped being one keeps its buttons
// until they press one: the press is refused, and their copy of the message is edited to say
// that the request is no longer theirs to decide and who decides it, with no buttons left.
// Nothing new is posted for it, and the other approvers' copies are left alone.
func TestFormerApproversClickEditsTheirCopy(t *testing.T) {
	h := newWarnHarness(t)
	const greta, otto = "greta@kestrel.example", "otto@kestrel.example"
	edits := make(chan bot.Reply, 10)
	h.bot.Edits = bot.SenderFunc(func(_ context.Context, r bot.Reply) error {
		edits <- r
		return nil
	})
	id := leaseIn(t, mustOK(t, h.say(udo, "/gpu request 1 scratch for 6h")).Text).String()
	asked := h.notices(greta)
	if len(asked) != 1 || asked[0].Ref != "approval:"+id || len(asked[0].Actions) == 0 {
		t.Fatalf("greta's approval message: %+v", asked)
	}

	// greta is no longer falken's budget owner: otto is.
	p, err := policy.Load([]byte(strings.Replace(strings.Replace(warnPolicy, "budget_owners: [greta@kestrel.example]", "budget_owners: [otto@kestrel.example]", 1),
		"  - {user: greta@kestrel.example, groups: [g-falken]}", "  - {user: greta@kestrel.example, groups: [g-falken]}\n  - {user: otto@kestrel.example, groups: [g-falken]}", 1)), "kestrel.yaml")
	if err != nil {
		t.Fatal(err)
	}
	h.svc.Policy, h.svc.Directory = p, p

	for _, c := range []struct {
		name  string
		async bool // the edit goes on its own (the Deny form's check)
		press func() *bot.Reply
	}{
		{"approve", false, func() *bot.Reply {
			rs := h.bot.Handle(context.Background(), bot.Request{User: greta, Text: "/gpu approve " + id, Click: true})
			return &rs[0]
		}},
		{"deny", true, func() *bot.Reply {
			return h.bot.Check(context.Background(), bot.Request{User: greta, Text: "/gpu deny " + id})
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := c.press()
			if r == nil || !r.Error || !strings.Contains(r.Text, otto) {
				t.Errorf("greta's press: %+v", r)
			}
			var e bot.Reply
			if c.async {
				select {
				case e = <-edits:
				case <-time.After(time.Minute):
					t.Fatal("greta's copy was not edited")
				}
			} else {
				select {
				case e = <-edits:
				default:
					t.Fatal("greta's copy was not edited")
				}
			}
			if e.To != greta || e.Ref != "approval:"+id || !e.Update || !e.EditOnly || len(e.Actions) != 0 {
				t.Errorf("the edit of greta's copy: %+v", e)
			}
			if !strings.Contains(e.Text, "no longer") || !strings.Contains(e.Text, otto) || len(e.Sections) == 0 || !strings.Contains(e.Sections[0].Text, udo) {
				t.Errorf("the edited copy says %q %+v", e.Text, e.Sections)
			}
		})
	}

	// The requester pressing Approve (they may not decide their own request) edits nothing.
	if rs := h.bot.Handle(context.Background(), bot.Request{User: udo, Text: "/gpu approve " + id, Click: true}); !rs[0].Error {
		t.Fatalf("udo approved his own request: %q", rs[0].Text)
	}
	// otto decides as usual; nothing but greta's two presses edited anything.
	mustOK(t, h.say(otto, "/gpu approve "+id))
	if len(edits) != 0 {
		t.Errorf("more edits: %+v", <-edits)
	}
}

// When the approvers of a team change while its request waits (the policy changed, and the
// service started on it), the copies of the approval message held by people who may no longer
// decide it are edited, without anyone pressing a button: each says who decides now and loses
// its buttons. Those who still decide keep theirs, and once nothing waits nothing is edited.
func TestFormerApproversCopiesAreEditedWhenThePolicyChanges(t *testing.T) {
	h := newWarnHarness(t)
	const greta, otto = "greta@kestrel.example", "otto@kestrel.example"
	var edits []bot.Reply
	h.bot.Edits = bot.SenderFunc(func(_ context.Context, r bot.Reply) error {
		edits = append(edits, r)
		return nil
	})
	copies := map[string][]string{}
	h.bot.Copies = func(_ context.Context, ref string) ([]string, error) { return copies[ref], nil }
	ctx := context.Background()
	id := leaseIn(t, mustOK(t, h.say(udo, "/gpu request 1 scratch for 6h")).Text).String()
	for _, r := range h.notices(greta) {
		copies[r.Ref] = append(copies[r.Ref], r.To)
	}
	if len(copies["approval:"+id]) != 1 {
		t.Fatalf("greta's copies: %+v", copies)
	}
	if n := h.bot.RetireFormerApprovers(ctx); n != 0 || len(edits) != 0 {
		t.Fatalf("with the approvers unchanged, %d edits: %+v", n, edits)
	}

	p, err := policy.Load([]byte(strings.Replace(strings.Replace(warnPolicy, "budget_owners: [greta@kestrel.example]", "budget_owners: [otto@kestrel.example]", 1),
		"  - {user: greta@kestrel.example, groups: [g-falken]}", "  - {user: greta@kestrel.example, groups: [g-falken]}\n  - {user: otto@kestrel.example, groups: [g-falken]}", 1)), "kestrel.yaml")
	if err != nil {
		t.Fatal(err)
	}
	h.svc.Policy, h.svc.Directory = p, p
	if n := h.bot.RetireFormerApprovers(ctx); n != 1 || len(edits) != 1 {
		t.Fatalf("after the change, %d edits: %+v", n, edits)
	}
	e := edits[0]
	if e.To != greta || e.Ref != "approval:"+id || !e.Update || !e.EditOnly || len(e.Actions) != 0 ||
		!strings.Contains(e.Text, id+" is no longer yours to decide") || !strings.Contains(e.Text, otto) {
		t.Errorf("the edit of greta's copy: %+v", e)
	}
	mustOK(t, h.say(otto, "/gpu approve "+id))
	if n := h.bot.RetireFormerApprovers(ctx); n != 0 {
		t.Errorf("with nothing waiting, %d more edits: %+v", n, edits[1:])
	}
}

// A budget owner named by group who leaves the group keeps no Approve and Deny buttons: when a
// re-check finds their groups changed, their copy of a request that waits is edited to say who
// decides now. Someone still in the group, or the requester, gets no such edit.
func TestLeavingTheApproversGroupEditsTheirCopies(t *testing.T) {
	const greta, otto = "greta@kestrel.example", "otto@kestrel.example"
	byGroup := strings.NewReplacer("budget_owners: [greta@kestrel.example]", "budget_owners: [g-leads]",
		"  - {user: greta@kestrel.example, groups: [g-falken]}", "  - {user: greta@kestrel.example, groups: [g-falken, g-leads]}\n  - {user: otto@kestrel.example, groups: [g-falken, g-leads]}")
	pol := byGroup.Replace(warnPolicy)
	p, err := policy.Load([]byte(pol), "kestrel.yaml")
	if err != nil {
		t.Fatal(err)
	}
	h := newWarnHarness(t)
	h.svc.Policy, h.svc.Directory = p, p
	id := leaseIn(t, mustOK(t, h.say(udo, "/gpu request 1 scratch for 6h")).Text).String()
	if got := h.notices(greta); len(got) != 1 || len(got[0].Actions) == 0 {
		t.Fatalf("greta's approval message: %+v", got)
	}

	left, err := policy.Load([]byte(strings.Replace(pol, "{user: greta@kestrel.example, groups: [g-falken, g-leads]}", "{user: greta@kestrel.example, groups: [g-falken]}", 1)), "kestrel.yaml")
	if err != nil {
		t.Fatal(err)
	}
	h.svc.Policy, h.svc.Directory = left, left
	ctx := context.Background()
	rs := h.bot.GroupsChanged(ctx, &qm.AccountLink{Email: greta, Groups: []string{"g-falken", "g-leads"}}, &qm.AccountLink{Email: greta, Groups: []string{"g-falken"}})
	var edits []bot.Reply
	for _, r := range rs {
		if r.EditOnly {
			edits = append(edits, r)
		}
	}
	if len(edits) != 1 || edits[0].To != greta || edits[0].Ref != "approval:"+id || !edits[0].Update || len(edits[0].Actions) != 0 ||
		!strings.Contains(edits[0].Text, "no longer yours to decide") || !strings.Contains(edits[0].Text, "g-leads decides") {
		t.Errorf("greta's groups changed: %+v", rs)
	}
	for _, who := range []string{otto, udo} {
		for _, r := range h.bot.GroupsChanged(ctx, &qm.AccountLink{Email: who, Groups: []string{"g-falken", "g-leads", "other"}}, &qm.AccountLink{Email: who, Groups: []string{"g-falken", "g-leads"}}) {
			if r.EditOnly {
				t.Errorf("%s's groups changed, and %s was edited: %+v", who, r.To, r)
			}
		}
	}
}

// What a change of groups tells is queued in the outbox as GroupsChanged words it and sent as it
// was worded: the outbox's copy of each message renders to the same message, to the same person,
// an edit still an edit of the same approval message. The edit of greta's copy of the request is
// queued with that request's lease, so that it keeps its order with the request's other notices
// to her (the edit of its decision is not overtaken by it after an outage).
func TestWhatAChangeOfGroupsTellsIsQueuedAsWorded(t *testing.T) {
	const greta = "greta@kestrel.example"
	byGroup := strings.NewReplacer("budget_owners: [greta@kestrel.example]", "budget_owners: [g-leads]",
		"  - {user: greta@kestrel.example, groups: [g-falken]}", "  - {user: greta@kestrel.example, groups: [g-falken, g-leads]}\n  - {user: otto@kestrel.example, groups: [g-falken, g-leads]}")
	pol := byGroup.Replace(warnPolicy)
	p, err := policy.Load([]byte(pol), "kestrel.yaml")
	if err != nil {
		t.Fatal(err)
	}
	h := newWarnHarness(t)
	h.svc.Policy, h.svc.Directory = p, p
	id := leaseIn(t, mustOK(t, h.say(udo, "/gpu request 1 scratch for 6h")).Text)
	left, err := policy.Load([]byte(strings.Replace(pol, "{user: greta@kestrel.example, groups: [g-falken, g-leads]}", "{user: greta@kestrel.example, groups: [g-falken]}", 1)), "kestrel.yaml")
	if err != nil {
		t.Fatal(err)
	}
	h.svc.Policy, h.svc.Directory = left, left
	ctx := context.Background()
	before, after := &qm.AccountLink{Email: greta, Groups: []string{"g-falken", "g-leads"}}, &qm.AccountLink{Email: greta, Groups: []string{"g-falken"}}
	want := h.bot.GroupsChanged(ctx, before, after)
	ns := h.bot.GroupsChangedNotices(ctx, before, after)
	if len(ns) != len(want) || len(want) == 0 {
		t.Fatalf("%d notices for %d messages: %+v", len(ns), len(want), want)
	}
	edits := 0
	for i, n := range ns {
		raw, err := qm.EncodeNotice(n)
		if err != nil {
			t.Fatal(err)
		}
		kept, err := qm.DecodeNotice(raw)
		if err != nil {
			t.Fatal(err)
		}
		got := h.bot.RenderNotice(ctx, kept)
		w := want[i]
		if len(got) != 1 || got[0].To != w.To || got[0].Text != w.Text || got[0].Ref != w.Ref || got[0].Update != w.Update ||
			got[0].EditOnly != w.EditOnly || !reflect.DeepEqual(got[0].Sections, w.Sections) || !reflect.DeepEqual(got[0].Actions, w.Actions) {
			t.Errorf("message %d from the outbox:\n got %+v\nwant %+v", i, got, w)
		}
		if w.EditOnly {
			edits++
			if kept.LeaseID() != id {
				t.Errorf("the edit of greta's copy of %s is queued with lease %d", id, kept.LeaseID())
			}
		}
	}
	if edits != 1 {
		t.Errorf("%d edits of greta's copies: %+v", edits, want)
	}
}

// When the service starts on a policy that gives a waiting request's team other approvers, and
// none of them reaches anyone (a group nobody signed in or listed is in), the former approver's
// copy is retired and the request goes to the fallback approvers, once, saying why: as when the
// last budget owner signed in signs out. On SQLite and PostgreSQL.
func TestPolicyChangeHandsAnUnreachedRequestToTheFallbackApprovers(t *testing.T) {
	// Mostly waiting on its databases (a schema migrated for each case), with nothing shared
	// with other tests: it waits while they run.
	t.Parallel()
	for name, url := range map[string]func(testing.TB) string{"sqlite": storetest.SQLite, "postgres": storetest.Postgres} {
		t.Run(name, func(t *testing.T) {
			const greta, ops = "greta@kestrel.example", "ops@kestrel.example"
			f := filepath.Join(t.TempDir(), "kestrel.yaml")
			if err := os.WriteFile(f, []byte(warnPolicy), 0o644); err != nil {
				t.Fatal(err)
			}
			h := newHarnessOnStore(t, f, url(t))
			var edits []bot.Reply
			h.bot.Edits = bot.SenderFunc(func(_ context.Context, r bot.Reply) error {
				edits = append(edits, r)
				return nil
			})
			copies := map[string][]string{}
			h.bot.Copies = func(_ context.Context, ref string) ([]string, error) { return copies[ref], nil }
			ctx := context.Background()
			id := leaseIn(t, mustOK(t, h.say(udo, "/gpu request 1 scratch for 6h")).Text).String()
			for _, r := range h.notices(greta) {
				copies[r.Ref] = append(copies[r.Ref], r.To)
			}
			if got := h.notices(ops); len(got) != 0 {
				t.Fatalf("the fallback approver was asked while greta decides: %+v", got)
			}

			p, err := policy.Load([]byte(strings.Replace(warnPolicy, "budget_owners: [greta@kestrel.example]", "budget_owners: [g-falken-leads]", 1)), "kestrel.yaml")
			if err != nil {
				t.Fatal(err)
			}
			h.svc.Policy, h.svc.Directory = p, p
			if n := h.bot.RetireFormerApprovers(ctx); n != 1 || len(edits) != 1 || !strings.Contains(edits[0].Text, ops) {
				t.Fatalf("greta's copy after the change (%d edits): %+v", n, edits)
			}
			got := h.notices(ops)
			if len(got) != 1 || got[0].Ref != "approval:"+id || len(got[0].Actions) == 0 ||
				!strings.Contains(got[0].PlainText(), "policy now names g-falken-leads to decide the requests of team falken") {
				t.Fatalf("the fallback approver's messages: %+v", got)
			}
			copies[got[0].Ref] = append(copies[got[0].Ref], ops)
			// Started again on the same policy: nothing more.
			h.bot.RetireFormerApprovers(ctx)
			if more := h.notices(ops); len(more) != 0 {
				t.Errorf("the fallback approver was sent it again: %+v", more)
			}
			// Nor when someone later signs out (the hand-over is once, whatever brought it).
			lid, _ := qm.ParseLeaseID(id)
			if again, err := h.svc.HandOverUnreached(ctx, lid, nil); err != nil || again {
				t.Errorf("handed over again after a sign-out: %v %v", again, err)
			}
			if more := h.notices(ops); len(more) != 0 {
				t.Errorf("the fallback approver was sent it again: %+v", more)
			}
			mustOK(t, h.say(ops, "/gpu approve "+id))
		})
	}
}
