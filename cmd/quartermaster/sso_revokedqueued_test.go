package main

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/oauth2-proxy/mockoidc"

	"github.com/acme/quartermaster/internal/qm"
)

// TestARevokedRequestersQueuedLeaseWaitsForTheirSignIn: a lease granted and queued for GPUs
// (the cluster full) whose requester's sign-in the provider then revokes does not start when
// GPUs free, as an approval of their waiting request is held: it stays queued, and they and the
// budget owners are told it waits until they sign in again, not that it runs to its end. Signed
// in again, the next tick starts it.
func TestARevokedRequestersQueuedLeaseWaitsForTheirSignIn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pol := strings.Replace(globexPolicy, "{name: h200, count: 2, class: h200, gpus: 8,", "{name: h200, count: 1, class: h200, gpus: 2,", 1)
	w := newSSOWorldWith(t, pol)
	sora := w.globexPerson("sora", "sora@globex.example", "robotics-lab")
	riku := w.globexPerson("riku", "riku@globex.example", "robotics-lab", "ROBOTICS-LEADS")
	if pg := w.follow(sora, w.say(sora, "/gpu login")); pg.Status != http.StatusOK {
		t.Fatalf("sora's login: %d %s", pg.Status, pg.Body)
	}
	if pg := w.follow(riku, w.say(riku, "/gpu login")); pg.Status != http.StatusOK {
		t.Fatalf("riku's login: %d %s", pg.Status, pg.Body)
	}
	mustHave(t, "riku's lease", w.say(riku, "/gpu request 2 h200 for 2h"), "L-1 is active")
	mustHave(t, "sora's queued lease", w.say(sora, "/gpu request 1 h200 for 2h"), "L-2 is queued")

	// Sora's sign-in is due for its re-check and the provider refuses it; riku signed in just now.
	w.a.SimClk.Advance(70 * time.Second)
	if pg := w.follow(riku, w.say(riku, "/gpu login")); pg.Status != http.StatusOK {
		t.Fatalf("riku's second login: %d %s", pg.Status, pg.Body)
	}
	w.idp.QueueError(&mockoidc.ServerError{Code: http.StatusBadRequest, Error: "invalid_grant", Description: "Token is not active"})
	if rep := w.recheck(); rep.Revoked != 1 {
		t.Fatalf("re-check with sora's sign-in revoked: %+v", rep)
	}
	for who, they := range map[string]string{"sora@globex.example": "you", "riku@globex.example": "they"} {
		told := w.notices(who)
		mustHave(t, who+"'s notice", told, "does not start until "+they+" sign in again: L-2 (")
		if strings.Contains(told, "run to its end: L-2") || strings.Contains(told, "runs to its end: L-2") {
			t.Errorf("%s is told the queued lease runs to its end: %q", who, told)
		}
	}

	// GPUs free: the queued lease of the revoked requester does not start.
	mustHave(t, "riku's release", w.say(riku, "/gpu release L-1"), "L-1")
	if err := w.a.Advance(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	if l := w.lease(2); l.State != qm.Queued {
		t.Fatalf("L-2 of a revoked requester, GPUs free: %s; want it still queued", l.State)
	}

	// Sora signs in again: the next tick starts it.
	if pg := w.follow(sora, w.say(sora, "/gpu login")); pg.Status != http.StatusOK {
		t.Fatalf("sora's second login: %d %s", pg.Status, pg.Body)
	}
	if err := w.a.Advance(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	if l := w.lease(2); l.State != qm.Active {
		t.Fatalf("L-2 after sora signed in again: %s; want active", l.State)
	}
}
