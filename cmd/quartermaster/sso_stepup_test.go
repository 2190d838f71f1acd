package main

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
)

// TestAStaleLoginIsNotAskedToSignInForADecisionItCannotMake: someone signed in (groups current)
// whose login is older than approvals.step_up, and who may not decide a request (a teammate,
// the requester), or clicks a request already decided, is told so at once, as a fresh login
// would be, instead of getting a login link whose decision could only be refused afterwards.
// An approver who may decide still gets the link that carries the decision.
func TestAStaleLoginIsNotAskedToSignInForADecisionItCannotMake(t *testing.T) {
	t.Parallel()
	pol := strings.Replace(globexPolicy, "  recheck: 1m\n", "  recheck: 24h\n", 1)
	w := newSSOWorldWith(t, pol)
	sora := w.globexPerson("sora", "sora@globex.example", "robotics-lab")
	kaito := w.globexPerson("kaito", "Kaito@Globex.example", "Robotics-Lab")
	riku := w.globexPerson("riku", "riku@globex.example", "robotics-lab", "ROBOTICS-LEADS")
	for _, p := range []*person{sora, kaito, riku} {
		if pg := w.follow(p, w.say(p, "/gpu login")); pg.Status != http.StatusOK {
			t.Fatalf("%s's login: %d %s", p.idp.Email, pg.Status, pg.Body)
		}
	}
	mustHave(t, "exception", w.say(sora, "/gpu request 2 h200 for 60h"), "L-1 waits for approval")
	mustHave(t, "exception", w.say(sora, "/gpu request 2 h200 for 50h"), "L-2 waits for approval")
	if a := w.say(riku, "/gpu deny L-2 too long"); !strings.Contains(a, "Denied L-2") {
		t.Fatalf("riku's fresh denial: %q", a)
	}
	w.a.SimClk.Advance(45 * time.Minute) // past step_up (30m), groups still current

	for _, c := range []struct {
		who  *person
		text string
		want string
	}{
		{kaito, "/gpu approve L-1", "can decide L-1"},
		{kaito, "/gpu deny L-1 no", "can decide L-1"},
		{sora, "/gpu approve L-1", "L-1"},
		{riku, "/gpu approve L-2", "already decided"},
	} {
		a := w.say(c.who, c.text)
		if strings.Contains(a, "/auth/login") || !strings.Contains(a, c.want) {
			t.Errorf("%s by %s: want a refusal saying %q and no login link, got %q", c.text, c.who.idp.Email, c.want, a)
		}
	}
	if l := w.lease(1); l.State != qm.PendingApproval {
		t.Fatalf("L-1 was decided: %s", l.State)
	}
	a := w.say(riku, "/gpu approve L-1")
	mustHave(t, "a budget owner's stale approval", a, "needs a sign-in from the last 30m", "/auth/login?t=", "L-1 is approved as soon as you have")
}

// TestUnlinkRefusalShowsWhatTheyCanDo: someone who is not a platform admin and types /gpu unlink
// is shown an example they can run (signing themselves out), not another unlink they would be
// refused.
func TestUnlinkRefusalShowsWhatTheyCanDo(t *testing.T) {
	t.Parallel()
	w := newSSOWorldWith(t, globexPolicy)
	sora := w.globexPerson("sora", "sora@globex.example", "robotics-lab")
	if pg := w.follow(sora, w.say(sora, "/gpu login")); pg.Status != http.StatusOK {
		t.Fatalf("sora's login: %d %s", pg.Status, pg.Body)
	}
	a := w.say(sora, "/gpu unlink kaito@globex.example")
	mustHave(t, "unlink by a non-admin", a, "Only a platform admin", "Example: /gpu logout")
	if strings.Contains(a, "Example: /gpu unlink") {
		t.Errorf("the refusal's example is another unlink: %q", a)
	}
}

// TestANonDecidersRefusalShowsAWorkingExample: a teammate who types /gpu approve or /gpu deny
// for a request they may not decide is told who decides, with an example they can run (the
// request's status), not an approval of some other lease id.
func TestANonDecidersRefusalShowsAWorkingExample(t *testing.T) {
	t.Parallel()
	w := newSSOWorldWith(t, globexPolicy)
	sora := w.globexPerson("sora", "sora@globex.example", "robotics-lab")
	kaito := w.globexPerson("kaito", "kaito@globex.example", "Robotics-Lab")
	for _, p := range []*person{sora, kaito} {
		if pg := w.follow(p, w.say(p, "/gpu login")); pg.Status != http.StatusOK {
			t.Fatalf("%s's login: %d %s", p.idp.Email, pg.Status, pg.Body)
		}
	}
	mustHave(t, "exception", w.say(sora, "/gpu request 2 h200 for 60h"), "L-1 waits for approval")
	for _, text := range []string{"/gpu approve L-1", "/gpu deny L-1 too long"} {
		a := w.say(kaito, text)
		mustHave(t, text, a, "can decide L-1", "Example: /gpu status L-1")
		if strings.Count(a, "Example:") != 1 {
			t.Errorf("%s: %q", text, a)
		}
	}
}

// TestAResumedDecisionThatFailsSaysSoOnlyOnThePage: an approver's decision carried by a login
// link that can no longer be made (the request was withdrawn meanwhile) is explained on the page,
// which does not send them back to chat for the same news: chat shows nothing of it.
func TestAResumedDecisionThatFailsSaysSoOnlyOnThePage(t *testing.T) {
	t.Parallel()
	w := newSSOWorldWith(t, strings.NewReplacer("  recheck: 1m\n", "  recheck: 24h\n", "step_up: 30m", "step_up: 2m").Replace(globexPolicy))
	sora := w.globexPerson("sora", "sora@globex.example", "robotics-lab")
	riku := w.globexPerson("riku", "riku@globex.example", "robotics-lab", "robotics-leads")
	for _, p := range []*person{sora, riku} {
		if pg := w.follow(p, w.say(p, "/gpu login")); pg.Status != http.StatusOK {
			t.Fatalf("%s's login: %d %s", p.idp.Email, pg.Status, pg.Body)
		}
	}
	mustHave(t, "exception", w.say(sora, "/gpu request 2 h200 for 60h"), "L-1 waits for approval")
	w.a.SimClk.Advance(3 * time.Minute) // past step_up; the provider's tokens still valid
	answer := w.say(riku, "/gpu approve L-1")
	mustHave(t, "stale approval", answer, "/auth/login?t=")
	mustHave(t, "withdrawal", w.say(sora, "/gpu release L-1"), "L-1")
	page := w.follow(riku, answer)
	mustHave(t, "the page", page.Body, "did not go through")
	if strings.Contains(page.Body, "chat shows the same") {
		t.Errorf("the page sends riku to chat for news chat does not show: %s", page.Body)
	}
}
