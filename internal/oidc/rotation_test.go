package oidc_test

import (
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/oidc/oidctest"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// TestARotatedRefreshTokenIsKeptWhenTheGroupsCannotBeRead: with a provider that rotates refresh
// tokens (each refresh spends the one it used), a re-check that refreshes but then cannot read
// the groups keeps the new refresh token. Dropping it would leave only the spent one, which the
// provider refuses at the next re-check, and the person would be unlinked and told their sign-in
// was revoked, over a hiccup.
func TestARotatedRefreshTokenIsKeptWhenTheGroupsCannotBeRead(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t), time.Minute)
	var seen changes
	e.sso.GroupsChanged = seen.record
	e.idp.RotateRefreshTokens()
	alice := oidctest.NewUser("sub-alice", "alice@acme.example", "ai-vision")
	e.login(alice, aliceAcct)

	// The refresh works, but the groups are left out of the new ID token.
	e.idp.SetTamper(entraOverage)
	e.clock.Advance(2 * time.Minute)
	if rep := e.recheck(); rep.Unchecked != 1 || rep.Revoked != 0 {
		t.Fatalf("first re-check: %+v", rep)
	}

	// Next time the groups come; the refresh token kept is the one the provider gave last.
	e.idp.SetTamper(nil)
	alice.SetGroups("ai-vision", "staff")
	e.clock.Advance(2 * time.Minute)
	if rep := e.recheck(); rep.Checked != 1 || rep.Revoked != 0 {
		t.Fatalf("second re-check: %+v", rep)
	}
	if l := e.linked(aliceAcct); l == nil || strings.Join(l.Groups, ",") != "ai-vision,staff" {
		t.Fatalf("link after the second re-check: %+v", l)
	}
	for _, c := range seen.all() {
		if c[1] == nil {
			t.Fatalf("alice was told her sign-in was revoked")
		}
	}
}
