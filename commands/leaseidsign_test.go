package commands

import (
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/qm"
)

// A lease id is L-N or N with N digits only: a sign (L-+1, +1) or anything else after L- is
// refused with one sentence and an example that works, while leading zeros still name the lease.
func TestALeaseIDWithASignIsRefused(t *testing.T) {
	h := newHarnessOn(t, egretPolicy)
	const nils = "nils@egret.example"
	id := leaseIn(t, mustOK(t, h.say(nils, "/gpu request 1 kestrel for 2h")).Text).String()
	for _, typed := range []string{"L-+1", "+1", "l-+1", "L-+0001", "L- 1"} {
		for _, verb := range []string{"status", "release", "keep"} {
			cmd := "/gpu " + verb + " " + typed
			r := h.say(nils, cmd)
			if !r.Error {
				t.Errorf("%s answered %q; want it refused", cmd, r.Text)
				continue
			}
			ex := exampleIn(t, r)
			want := "/gpu " + verb + " " + id
			if verb == "keep" {
				want = "/gpu list" // keep answers an idle warning, and the lease has none open
			}
			if ex != want {
				t.Errorf("%s: example %q; want %q", cmd, ex, want)
			}
			if n := strings.Count(strings.TrimSuffix(r.Text, " Example: "+ex), ". "); n > 0 {
				t.Errorf("%s: %q is more than one sentence", cmd, r.Text)
			}
		}
	}
	if r := h.say(nils, "/gpu status L-0001"); r.Error || !strings.Contains(r.Text, id) {
		t.Errorf("/gpu status L-0001 answered %q; want the status of %s", r.Text, id)
	}
	for _, s := range []string{"L-+1", "+1", "L--1", "-1", "L-1_0", "1.0"} {
		if _, err := qm.ParseLeaseID(s); err == nil {
			t.Errorf("ParseLeaseID(%q) read a lease id", s)
		}
	}
	for s, want := range map[string]qm.LeaseID{"L-1": 1, "1": 1, "l-0001": 1, "0042": 42} {
		if got, err := qm.ParseLeaseID(s); err != nil || got != want {
			t.Errorf("ParseLeaseID(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
}
