package oidc_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/oidc/oidctest"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// entraOverage makes ID tokens look like Microsoft Entra ID's for someone in more groups than
// fit in a token: no groups claim, a pointer to Microsoft Graph instead (and Entra's userinfo
// has no groups either).
func entraOverage(c map[string]any) *mockoidcKeypair {
	delete(c, "groups")
	c["_claim_names"] = map[string]any{"groups": "src1"}
	c["_claim_sources"] = map[string]any{"src1": map[string]any{"endpoint": "https://graph.windows.net/tenant/users/00u1/getMemberObjects"}}
	return nil
}

// TestTooManyGroupsForAToken: someone in more groups than the provider puts in a token signs in
// and is told that their groups were left out because there are too many, and what an admin can
// do, not that the provider lists no groups for them; and a re-check that meets the same
// leaves their groups as they were (and tells nobody they left their team) instead of taking
// them out of every team.
func TestTooManyGroupsForAToken(t *testing.T) {
	t.Run("login", func(t *testing.T) {
		e := newEnv(t, storetest.SQLite(t), 0)
		e.idp.SignIn(oidctest.NewUser("sub-alice", "alice@acme.example"))
		e.idp.SetTamper(entraOverage)
		p := oidctest.NewBrowser(t).Follow(e.link(aliceAcct, ""))
		if p.Status != http.StatusOK || !strings.Contains(p.Body, "left your groups out of the sign-in because you are in too many") ||
			!strings.Contains(p.Body, "docs/sso.md") || strings.Contains(p.Body, "lists no groups for you") {
			t.Fatalf("page %d:\n%s", p.Status, p.Body)
		}
	})
	t.Run("recheck", func(t *testing.T) {
		e := newEnv(t, storetest.SQLite(t), time.Minute)
		var seen changes
		e.sso.GroupsChanged = seen.record
		alice := oidctest.NewUser("sub-alice", "alice@acme.example", "ai-vision")
		e.login(alice, aliceAcct)
		alice.SetGroups()
		e.idp.SetTamper(entraOverage)
		e.clock.Advance(2 * time.Minute)
		if rep := e.recheck(); rep.Changed != 0 || rep.Unchecked != 1 || len(seen.all()) != 0 {
			t.Fatalf("re-check: %+v, told %d changes", rep, len(seen.all()))
		}
		if l := e.linked(aliceAcct); l == nil || strings.Join(l.Groups, ",") != "ai-vision" {
			t.Fatalf("link after the re-check: %+v", l)
		}
	})
}
