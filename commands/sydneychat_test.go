package commands

import (
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/internal/qm"
)

// actionFor is the command of the button of r whose label starts with label, or "".
func actionFor(r bot.Reply, label string) string {
	for _, a := range r.Actions {
		if strings.HasPrefix(a.Label, label) {
			return a.Command
		}
	}
	return ""
}

// /gpu status of a lease under an idle warning offers Keep, as the warning does, and the button
// works when pressed; a lease that is not warned offers none.
func TestStatusOfAnIdleWarnedLeaseOffersKeep(t *testing.T) {
	for _, tc := range []struct{ policy, user, request string }{
		{sydneyPolicy, "ravi@wattle.example", "/gpu request 1 notebook for 3h"},
		{"../docs/quartermaster.example.yaml", "alice@acme.example", "/gpu request 1 interactive for 4h"},
	} {
		h := newHarnessOn(t, tc.policy)
		id := leaseIn(t, mustOK(t, h.say(tc.user, tc.request)).Text)
		if k := actionFor(h.say(tc.user, "/gpu status "+id.String()), "Keep"); k != "" {
			t.Errorf("%s: status of a lease that is not idle offers Keep (%s)", tc.policy, k)
		}
		h.sim.SetUtilization(h.lease(id), 0)
		for i := 0; i < 48 && h.lease(id).State != qm.IdleWarned; i++ {
			h.advance(5 * time.Minute)
		}
		r := h.say(tc.user, "/gpu status "+id.String())
		keep := actionFor(r, "Keep")
		if keep != "/gpu keep "+id.String() {
			t.Fatalf("%s: status of an idle-warned lease offers %+v; want Keep as /gpu keep %s", tc.policy, r.Actions, id)
		}
		if r := h.say(tc.user, keep); r.Error {
			t.Errorf("%s: %s", keep, r.Text)
		}
	}
}
