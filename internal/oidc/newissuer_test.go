package oidc_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/oidc"
	"github.com/acme/quartermaster/internal/oidc/oidctest"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// TestMovingToAnotherIssuer: the service is moved to another identity provider (or another
// issuer of the same one: Okta's org server to a custom one, Keycloak under a new host). People
// signed in at the old one keep their groups until those go stale; the re-check does not send
// their old provider's refresh tokens to the new one (which would refuse them and make everyone
// hear that their sign-in was revoked); and signing in again at the new provider, as the same
// email, replaces the old link instead of being refused as someone else's account. Another
// person still cannot take over a linked chat account that way.
func TestMovingToAnotherIssuer(t *testing.T) {
	db := storetest.SQLite(t)
	old := newEnv(t, db, 0)
	before := old.login(oidctest.NewUser("sub-alice", "alice@acme.example", "ai-vision"), aliceAcct)
	if before == nil || before.Issuer != old.idp.Issuer() {
		t.Fatalf("link at the old provider: %+v", before)
	}

	// The client is registered at the new issuer with the same id and secret (as when only the
	// authorization server changes), so the old provider's tokens can still be opened.
	e := newEnvWith(t, db, time.Minute, "", func(c *oidc.Config) { c.ClientID, c.ClientSecret = old.idp.ClientID, old.idp.ClientSecret })
	e.idp.ClientID, e.idp.ClientSecret = old.idp.ClientID, old.idp.ClientSecret
	if e.idp.Issuer() == old.idp.Issuer() {
		t.Fatal("both providers have one issuer")
	}
	var seen changes
	e.sso.GroupsChanged = seen.record
	e.clock.Advance(2 * time.Minute)
	rep := e.recheck()
	if rep.Revoked != 0 || rep.Checked != 0 || rep.Unchecked != 1 || len(seen.all()) != 0 {
		t.Fatalf("re-check of a link from the old provider: %+v, told %d changes", rep, len(seen.all()))
	}
	if l := e.linked(aliceAcct); l == nil || l.Issuer != old.idp.Issuer() || strings.Join(l.Groups, ",") != "ai-vision" {
		t.Fatalf("the link from the old provider after a re-check at the new one: %+v", l)
	}

	// Someone else signing in with Alice's chat account at the new provider is still refused.
	e.idp.SignIn(oidctest.NewUser("sub-bob", "bob@acme.example", "ai-vision", "leads"))
	if p := oidctest.NewBrowser(t).Follow(e.link(aliceAcct, "")); p.Status != http.StatusForbidden || !strings.Contains(p.Body, "Reference: other-person") {
		t.Fatalf("bob signs in with alice's chat account: %d\n%s", p.Status, p.Body)
	}

	// Alice signs in at the new provider (a new subject there): her link moves to it.
	e.idp.SignIn(oidctest.NewUser("00u1alice", "Alice@acme.example", "ai-vision", "staff"))
	p := oidctest.NewBrowser(t).Follow(e.link(aliceAcct, ""))
	if p.Status != http.StatusOK || !strings.Contains(p.Body, "You are signed in as alice@acme.example") {
		t.Fatalf("alice signs in at the new provider: %d\n%s", p.Status, p.Body)
	}
	if l := e.linked(aliceAcct); l == nil || l.Issuer != e.idp.Issuer() || l.Subject != "00u1alice" || strings.Join(l.Groups, ",") != "ai-vision,staff" {
		t.Fatalf("link after signing in at the new provider: %+v", l)
	}
}
