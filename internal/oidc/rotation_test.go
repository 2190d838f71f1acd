package oidc_test

import (
	"strings"
	"testing"
	"time"

	"github.com/oauth2-proxy/mockoidc"

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

// TestASignInAfterTheProviderRotatesItsSigningKey: the provider publishes a new signing key and
// signs with it; the service, which fetched the old key at an earlier sign-in, fetches the new
// one and the next sign-in goes through.
func TestASignInAfterTheProviderRotatesItsSigningKey(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t), time.Hour)
	e.login(oidctest.NewUser("sub-ines", "ines@globex.example", "ai-vision"), aliceAcct)
	next, err := mockoidc.RandomKeypair(2048)
	if err != nil {
		t.Fatal(err)
	}
	e.idp.Keypair = next // published at the provider's keys endpoint, and signing from now on
	if l := e.login(oidctest.NewUser("sub-oto", "oto@globex.example", "ai-language"), bobAcct); l == nil || l.Email != "oto@globex.example" {
		t.Fatalf("sign-in after the rotation: %+v", l)
	}
}
