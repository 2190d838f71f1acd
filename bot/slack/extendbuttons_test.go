package slack_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/docs"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/sim"
)

// latestEdit is the newest chat.update of message m, and whether there is one.
func (e *env) latestEdit(m message) (message, bool) {
	_, updates, _, _ := e.slack.snapshot()
	for i := len(updates) - 1; i >= 0; i-- {
		if updates[i].Channel == m.Channel && updates[i].TS == m.TS {
			return updates[i], true
		}
	}
	return message{}, false
}

func hasButton(m message, label string) bool {
	for _, b := range buttonsIn(m.Blocks) {
		if strings.HasPrefix(b.Label, label) {
			return true
		}
	}
	return false
}

// An expiry warning's Extend button, pressed past what the class gives without approval, asks
// for an extension that waits for a budget owner: the warning itself is edited in the owner's
// DM, Extend giving way to who decides it; once it is denied, the warning offers Extend again.
func TestTheWarningFollowsTheExtensionItAsked(t *testing.T) {
	for _, db := range databases {
		t.Run(db.name, func(t *testing.T) {
			e := newEnv(t, db.url(t))
			clock := e.svc.Clock.(*sim.Clock)
			e.ask("UALICE", "request 1 interactive for 8h")
			id := e.leases()[0].ID.String()
			for range 31 { // to the warning, 15 minutes before the end, as the service's loop does
				clock.Advance(15 * time.Minute)
				if err := e.svc.Tick(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			e.wait()
			var warning message
			for _, m := range e.postsTo(dm("UALICE")) {
				if strings.Contains(m.Text, id+" ends at") {
					warning = m
				}
			}
			if warning.TS == "" || !hasButton(warning, "Extend") {
				t.Fatalf("no expiry warning with Extend: %+v", e.postsTo(dm("UALICE")))
			}
			ans := e.press("UALICE", warning, buttonLabelled(t, warning, "Extend"))
			m := regexp.MustCompile(`waits for approval as (L-[0-9]+)`).FindStringSubmatch(ans.Text)
			if m == nil {
				t.Fatalf("Extend past 8h answered %q", ans.Text)
			}
			ext := m[1]
			edited, ok := e.latestEdit(warning)
			if !ok || hasButton(edited, "Extend") || !hasButton(edited, "Release") ||
				!strings.Contains(textIn(edited.Blocks), "("+ext+", ") || !strings.Contains(textIn(edited.Blocks), "already waiting for approval by dana@acme.example") {
				t.Fatalf("the warning while %s waits: %+v", ext, edited)
			}
			e.ask("UDANA", "deny "+ext+" not this week")
			if edited, ok := e.latestEdit(warning); !ok || !hasButton(edited, "Extend") || strings.Contains(textIn(edited.Blocks), "already waiting") {
				t.Errorf("the warning once %s was denied: %+v", ext, edited)
			}
		})
	}
}

// When the approvers of a team change while its request waits (the service started on a changed
// policy), the former approver's copy in their DM is edited through chat.update to say who
// decides now, its buttons gone; the team channel's copy is left alone, and nothing is posted.
func TestFormerApproversCopyIsEditedWhenTheApproversChange(t *testing.T) {
	for _, db := range databases {
		t.Run(db.name, func(t *testing.T) {
			e := newEnv(t, db.url(t))
			e.bot.Edits = bot.SenderFunc(func(ctx context.Context, r bot.Reply) error { return e.current().Send(ctx, r) })
			e.bot.Copies = e.db.MessageRefRecipients
			id := overQuota(e)
			toDana, _ := approvalCopies(e, id)
			posts, _, _, _ := e.slack.snapshot()
			p, err := policy.Load([]byte(strings.Replace(string(docs.ExamplePolicy), "budget_owners: [dana@acme.example]", "budget_owners: [lee@acme.example]", 1)), docs.ExamplePolicyName)
			if err != nil {
				t.Fatal(err)
			}
			e.svc.Policy, e.svc.Directory = p, directory{p}
			if n := e.bot.RetireFormerApprovers(context.Background()); n != 1 {
				t.Errorf("%d copies edited, want dana's", n)
			}
			e.wait()
			after, updates, _, _ := e.slack.snapshot()
			if len(updates) != 1 || updates[0].Channel != toDana.Channel || updates[0].TS != toDana.TS || len(buttonsIn(updates[0].Blocks)) != 0 ||
				!strings.Contains(textIn(updates[0].Blocks), id+" is no longer yours to decide") || !strings.Contains(textIn(updates[0].Blocks), "lee@acme.example decides") {
				t.Errorf("updates = %+v; want dana's copy, saying lee decides, without buttons", updates)
			}
			if len(after) != len(posts) {
				t.Errorf("posted %+v", after[len(posts):])
			}
		})
	}
}
