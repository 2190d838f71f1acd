package commands

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/internal/policy"
)

// A workspace submitted from a template that expires offers to request it again as it was asked:
// the same template and parameters, team and length; pressed, the button asks for exactly that.
func TestRequestAgainAsksForWhatWasAsked(t *testing.T) {
	h := templatesOn(t, otherPolicy)
	ctx := context.Background()
	first := mustOK(t, h.say("rita@borealis.example", "/gpu request 1 dev for 1h template jupyterlab root=notebooks/exp-1"))
	l1, err := h.svc.Get(ctx, leaseIn(t, first.Text))
	if err != nil {
		t.Fatal(err)
	}
	h.advance(90 * time.Minute)
	again := againIn(t, h.notices("rita@borealis.example"))
	l2, err := h.svc.Get(ctx, leaseIn(t, mustOK(t, h.say("rita@borealis.example", again)).Text))
	if err != nil {
		t.Fatal(err)
	}
	if l2.Class != l1.Class || l2.GPUs != l1.GPUs || l2.Duration != l1.Duration || l2.Template != l1.Template ||
		l2.Params["root"] != "notebooks/exp-1" || l2.Team != l1.Team || l2.DataClass != l1.DataClass || l2.Exclusive != l1.Exclusive {
		t.Errorf("%q asked for %+v; want what %s asked for, %+v", again, *l2, l1.ID, *l1)
	}
}

// A lease whose class has since left the catalog offers no Request again: the request would be
// refused.
func TestRequestAgainIsNotOfferedForAClassThatIsGone(t *testing.T) {
	h := newHarnessOn(t, otherPolicy)
	mustOK(t, h.say("rita@borealis.example", "/gpu request 1 dev for 1h"))
	p := *h.svc.Policy
	p.Classes = []*policy.Class{p.Classes[1]}
	h.svc.Policy = &p
	h.advance(90 * time.Minute)
	ns := h.notices("rita@borealis.example")
	last := ns[len(ns)-1]
	if !strings.Contains(last.Text, "expired") {
		t.Fatalf("the last message is %q; want the expiry", last.Text)
	}
	if hasAction(last, "Request again") {
		t.Errorf("the expiry of a lease of a class no longer in the catalog offers %+v", last.Actions)
	}
}

func hasAction(r bot.Reply, label string) bool {
	for _, a := range r.Actions {
		if a.Label == label {
			return true
		}
	}
	return false
}
