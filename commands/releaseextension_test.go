package commands

import (
	"context"
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/qm"
)

// /gpu release of an extension already in effect is refused: releasing it would end nothing
// (the lease it extended runs on, extended), so the refusal says so and how to end the
// workspace. An extension that still waits is withdrawn by /gpu release, and an approved quota
// increase released ends early, the reply saying what the team's quota is back to.
func TestReleaseOfAnExtensionInEffectIsRefused(t *testing.T) {
	h := newHarnessOn(t, "testdata/orbit.yaml")
	const kim, ria = "kim@orbit.example", "ria@orbit.example"
	ctx := context.Background()
	extOf := func(run qm.LeaseID) qm.LeaseID {
		t.Helper()
		ask := mustOK(t, h.say(kim, "/gpu extend "+run.String()+" 10h")) // past duo's 12h
		if !strings.Contains(ask.Text, "waits for approval") {
			t.Fatalf("extend past the class's limit: %q", ask.Text)
		}
		return leaseIn(t, ask.Text[strings.Index(ask.Text, " as ")+4:])
	}
	run := leaseIn(t, mustOK(t, h.say(kim, "/gpu request 1 duo for 10h")).Text)

	// Waiting: /gpu release withdraws it, and the lease is not extended.
	waiting := extOf(run)
	if r := h.say(kim, "/gpu release "+waiting.String()); r.Error || !strings.Contains(r.Text, waiting.String()+" is cancelled") {
		t.Fatalf("release of a waiting extension: %q", r.Text)
	}
	if l, _ := h.svc.Get(ctx, waiting); l.State != qm.Cancelled {
		t.Fatalf("the released waiting extension is %s", l.State)
	}

	// In effect: refused, and nothing changes.
	ext := extOf(run)
	mustOK(t, h.say(ria, "/gpu approve "+ext.String()))
	before, _ := h.svc.Get(ctx, run)
	r := h.say(kim, "/gpu release "+ext.String())
	if !r.Error || !strings.Contains(r.Text, ext.String()+" is an extension of "+run.String()+" already in effect") ||
		!strings.Contains(r.Text, "ends nothing") || !strings.Contains(r.Text, "/gpu release "+run.String()) {
		t.Errorf("release of an extension in effect answered %q; want a refusal naming %s and how to end it", r.Text, run)
	}
	if l, _ := h.svc.Get(ctx, ext); l.State != qm.Active {
		t.Errorf("after the refused release %s is %s", ext, l.State)
	}
	after, _ := h.svc.Get(ctx, run)
	if !after.State.Running() || !h.sim.Running(after) || !after.ExpiresAt.Equal(before.ExpiresAt) {
		t.Errorf("after the refused release %s is %s, ends %v (was %v)", run, after.State, after.ExpiresAt, before.ExpiresAt)
	}
	// Once the lease it extended has ended, the refusal says so rather than how to end it.
	mustOK(t, h.say(kim, "/gpu release "+run.String()))
	r = h.say(kim, "/gpu release "+ext.String())
	if !r.Error || !strings.Contains(r.Text, "extension of "+run.String()+", which has already ended") || strings.Contains(r.Text, "/gpu release "+run.String()) {
		t.Errorf("release of an extension of an ended lease answered %q", r.Text)
	}

	// A quota increase in effect: released, it ends early and the reply says the quota is back.
	q := leaseIn(t, mustOK(t, h.say(kim, "/gpu quota request +2 hex for 1d because a deadline")).Text)
	mustOK(t, h.say(ria, "/gpu approve "+q.String()))
	if got := h.svc.QuotaFor(ctx, "robotics").GPUs["hex"]; got != 8 {
		t.Fatalf("hex quota with the increase: %d", got)
	}
	r = mustOK(t, h.say(kim, "/gpu release "+q.String()))
	if !strings.Contains(r.Text, q.String()+" is released") || !strings.Contains(r.Text, "2 extra hex GPUs of team robotics are gone") ||
		!strings.Contains(r.Text, "quota is back to 6") {
		t.Errorf("release of a quota increase in effect: %q", r.Text)
	}
	if got := h.svc.QuotaFor(ctx, "robotics").GPUs["hex"]; got != 6 {
		t.Errorf("hex quota after the increase was released: %d", got)
	}
}
