package main

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/oauth2-proxy/mockoidc"

	"github.com/acme/quartermaster/internal/qm"
)

// TestARevokedRequesterIsNotApprovedIntoALease: once the provider revokes someone's sign-in
// (invalid_grant at the re-check), no new lease starts for them until they sign in again, as
// docs/sso.md says: approving their waiting request is refused with who must sign in and how,
// and the request still waits; the notice names it apart from the leases that run on. Signed in
// again, the same approval goes through.
func TestARevokedRequesterIsNotApprovedIntoALease(t *testing.T) {
	t.Parallel()
	w := newSSOWorldWith(t, globexPolicy)
	sora := w.globexPerson("sora", "sora@globex.example", "robotics-lab")
	riku := w.globexPerson("riku", "riku@globex.example", "robotics-lab", "ROBOTICS-LEADS")
	if pg := w.follow(sora, w.say(sora, "/gpu login")); pg.Status != http.StatusOK {
		t.Fatalf("sora's login: %d %s", pg.Status, pg.Body)
	}
	mustHave(t, "running lease", w.say(sora, "/gpu request 1 shared-a100 for 2h"), "L-1 is active")
	mustHave(t, "exception", w.say(sora, "/gpu request 2 h200 for 60h"), "L-2 waits for approval")

	// Sora's sign-in is due for its re-check and the provider refuses it; riku signed in just now.
	w.a.SimClk.Advance(70 * time.Second)
	if pg := w.follow(riku, w.say(riku, "/gpu login")); pg.Status != http.StatusOK {
		t.Fatalf("riku's login: %d %s", pg.Status, pg.Body)
	}
	w.idp.QueueError(&mockoidc.ServerError{Code: http.StatusBadRequest, Error: "invalid_grant", Description: "Token is not active"})
	if rep := w.recheck(); rep.Revoked != 1 {
		t.Fatalf("re-check with sora's sign-in revoked: %+v", rep)
	}
	told := w.notices("riku@globex.example")
	mustHave(t, "the budget owner's notice", told, "no new leases for team robotics until they sign in again",
		"cannot be approved until they sign in again: L-2 (for 2 × h200 for 2d12h)", "runs to its end: L-1 (active")
	if i, j := strings.Index(told, "L-2"), strings.Index(told, "runs to its end"); i < 0 || j < 0 || i > j {
		t.Errorf("the waiting request is listed among the leases that run to their end: %q", told)
	}

	answer := w.say(riku, "/gpu approve L-2")
	mustHave(t, "approval of a revoked requester's request", answer, "sora@globex.example", "sign in again", "/gpu login")
	if strings.Contains(answer, "Approved") {
		t.Errorf("approved: %q", answer)
	}
	if l := w.lease(2); l.State != qm.PendingApproval {
		t.Fatalf("L-2 after the approval: %s; want it still waiting", l.State)
	}

	// Sora signs in again: the approval goes through.
	if pg := w.follow(sora, w.say(sora, "/gpu login")); pg.Status != http.StatusOK {
		t.Fatalf("sora's second login: %d %s", pg.Status, pg.Body)
	}
	mustHave(t, "approval after the sign-in", w.say(riku, "/gpu approve L-2"), "Approved L-2")
}
