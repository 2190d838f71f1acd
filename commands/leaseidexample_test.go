package commands

import (
	"strings"
	"testing"
)

// A lease command typed without its lease id is refused with an example that names a lease of
// the asker's own, and works when typed: their latest live lease (for status, else their latest
// lease), else /gpu list; for approve and deny, the latest request waiting for their decision,
// else /gpu approvals. No example names a lease that is not theirs to name.
func TestALeaseCommandWithoutItsIDShowsTheAskersOwnLease(t *testing.T) {
	for _, tc := range []struct{ policy, user, approver, class string }{
		{sydneyPolicy, "ravi@wattle.example", "priya@wattle.example", "notebook"},
		{"../docs/quartermaster.example.yaml", "alice@acme.example", "dana@acme.example", "interactive"},
	} {
		t.Run(tc.class, func(t *testing.T) {
			h := newHarnessOn(t, tc.policy)
			u, a := tc.user, tc.approver
			exampleOf := func(who, text string) string {
				t.Helper()
				return exampleIn(t, h.say(who, text))
			}
			typed := func(who, ex string) {
				t.Helper()
				if r := h.say(who, ex); r.Error {
					t.Errorf("the example %q, typed by %s, is refused: %s", ex, who, r.Text)
				}
			}
			bare := []string{"/gpu status", "/gpu extend 2h", "/gpu release", "/gpu keep"}
			for _, cmd := range bare {
				if ex := exampleOf(u, cmd); ex != "/gpu list" {
					t.Errorf("%s with no leases: example %q; want /gpu list", cmd, ex)
				}
			}
			for _, cmd := range []string{"/gpu approve", "/gpu deny"} {
				if ex := exampleOf(a, cmd); ex != "/gpu approvals" {
					t.Errorf("%s with nothing waiting: example %q; want /gpu approvals", cmd, ex)
				}
			}
			typed(u, "/gpu list")
			typed(a, "/gpu approvals")

			first := leaseIn(t, mustOK(t, h.say(u, "/gpu request 1 "+tc.class+" for 1h")).Text).String()
			second := leaseIn(t, mustOK(t, h.say(u, "/gpu request 1 "+tc.class+" for 1h")).Text).String()
			if ex := exampleOf(u, "/gpu keep"); ex != "/gpu list" {
				// keep answers an idle warning, and none of u's leases has one open
				t.Errorf("/gpu keep with no lease warned as idle: example %q; want /gpu list", ex)
			}
			for _, cmd := range []string{"/gpu status", "/gpu extend 2h", "/gpu extend", "/gpu status L-x", "/gpu release"} {
				verb := strings.Fields(cmd)[1]
				ex := exampleOf(u, cmd)
				if strings.Contains(ex, "L-42") || !strings.HasPrefix(ex, "/gpu "+verb+" "+second) {
					t.Errorf("%s with %s the latest live lease: example %q; want /gpu %s %s", cmd, second, ex, verb, second)
				}
				typed(u, ex)
			}
			// The last example typed released the latest; the one before it is now the latest live one.
			for _, cmd := range []string{"/gpu status", "/gpu release"} {
				ex := exampleOf(u, cmd)
				if !strings.HasPrefix(ex, "/gpu "+strings.TrimPrefix(cmd, "/gpu ")+" "+first) {
					t.Errorf("%s with %s the latest live lease: example %q", cmd, first, ex)
				}
				typed(u, ex)
			}
			// Nothing live: status shows the latest lease that was; the others list.
			if ex := exampleOf(u, "/gpu status"); ex != "/gpu status "+second {
				t.Errorf("/gpu status with no live lease: example %q; want /gpu status %s", ex, second)
			}
			typed(u, "/gpu status "+second)
			for _, cmd := range []string{"/gpu extend 2h", "/gpu release", "/gpu keep"} {
				if ex := exampleOf(u, cmd); ex != "/gpu list" {
					t.Errorf("%s with no live lease: example %q; want /gpu list", cmd, ex)
				}
			}

			// A request waiting for the approver's decision.
			lease := leaseIn(t, mustOK(t, h.say(u, "/gpu request 1 "+tc.class+" for 1h")).Text).String()
			r := mustOK(t, h.say(u, "/gpu extend "+lease+" 29d"))
			ext := leaseIn(t, strings.TrimPrefix(r.Text, "Extending "+lease)).String()
			if ex := exampleOf(a, "/gpu approve"); ex != "/gpu approve "+ext {
				t.Errorf("/gpu approve with %s waiting for %s: example %q", ext, a, ex)
			}
			if ex := exampleOf(u, "/gpu approve"); ex != "/gpu approvals" {
				t.Errorf("/gpu approve by %s, who may not decide their own %s: example %q; want /gpu approvals", u, ext, ex)
			}
			ex := exampleOf(a, "/gpu deny")
			if !strings.HasPrefix(ex, "/gpu deny "+ext+" ") {
				t.Errorf("/gpu deny with %s waiting for %s: example %q", ext, a, ex)
			}
			typed(a, ex)
		})
	}
}
