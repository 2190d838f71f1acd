package commands

import (
	"strings"
	"testing"
	"time"
)

// /gpu keep answers an idle warning. On a running workspace with none open it is refused in one
// sentence that says so and what keep is for, with an example that works (the lease's status),
// and it changes nothing: the lease's idle clock runs on as before, so it is warned when it
// would have been.
func TestKeepingALeaseWithNoIdleWarningIsRefusedAndChangesNothing(t *testing.T) {
	h := newHarnessOn(t, baobabPolicy) // cuivre: idle_timeout 45m
	awa := "awa@baobab.example"
	id := leaseIn(t, mustOK(t, h.say(awa, "/gpu request 1 cuivre for 5h")).Text).String()
	h.sim.SetUtilization(h.lease(leaseIn(t, id)), 0)
	h.advance(30 * time.Minute)
	before := *h.lease(leaseIn(t, id))
	r := h.say(awa, "/gpu keep "+id)
	want := id + " has had no idle warning to answer; /gpu keep answers one, so that a workspace whose GPUs sat idle is not reclaimed. Example: /gpu status " + id
	if !r.Error || r.Text != want {
		t.Fatalf("keeping %s, never warned, got %q (error %v)\nwant %q", id, r.Text, r.Error, want)
	}
	if strings.Contains(r.Text, "Kept") {
		t.Errorf("the refusal says Kept: %s", r.Text)
	}
	mustOK(t, h.say(awa, "/gpu status "+id))
	after := h.lease(leaseIn(t, id))
	if after.State != before.State || !after.KeptAt.Equal(before.KeptAt) {
		t.Fatalf("a refused keep changed %s: %s kept %v, was %s kept %v", id, after.State, after.KeptAt, before.State, before.KeptAt)
	}
	h.advance(16 * time.Minute) // idle 46m: warned, as if no keep had been typed
	if got := h.notices(awa); len(got) != 1 || !strings.Contains(got[0].Text, "no GPU activity") {
		t.Fatalf("after a refused keep, idle 46m, awa got %q; want the idle warning", texts(got))
	}
	if ex := exampleIn(t, h.say(awa, "/gpu keep")); ex != "/gpu keep "+id {
		t.Errorf("/gpu keep with %s warned as idle: example %q; want /gpu keep %s", id, ex, id)
	}
	mustOK(t, h.say(awa, "/gpu keep "+id))
	if ex := exampleIn(t, h.say(awa, "/gpu keep")); ex != "/gpu list" {
		t.Errorf("/gpu keep with no lease warned as idle: example %q; want /gpu list", ex)
	}
	r = h.say(awa, "/gpu keep "+id)
	if !r.Error || !strings.HasPrefix(r.Text, id+" has no idle warning open to answer") || !strings.HasSuffix(r.Text, "Example: /gpu status "+id) {
		t.Fatalf("keeping %s again after its warning was answered got %q", id, r.Text)
	}
}
