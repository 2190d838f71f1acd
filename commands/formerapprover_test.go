package commands

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/internal/policy"
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
