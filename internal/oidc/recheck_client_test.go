package oidc_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/oauth2-proxy/mockoidc"

	"github.com/acme/quartermaster/internal/oidc/oidctest"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// TestARefusedClientUnlinksNobody: a provider that refuses Quartermaster itself at a re-check
// (invalid_client: the client secret was rotated at the provider, or the client disabled) says
// nothing about the people signed in. Nobody is unlinked or told their sign-in was revoked; the
// links count as not checked, and keep their groups until they are no longer current.
func TestARefusedClientUnlinksNobody(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t), time.Minute)
	var ch changes
	e.sso.GroupsChanged = ch.record
	bobAcct := qm.Account{Platform: "discord", User: "880000000000000002"}
	e.login(oidctest.NewUser("sub-alice", "alice@acme.example", "ai-vision"), aliceAcct)
	e.login(oidctest.NewUser("sub-bob", "bob@acme.example", "ai-vision"), bobAcct)
	for range 4 {
		e.idp.QueueError(&mockoidc.ServerError{Code: http.StatusUnauthorized, Error: "invalid_client", Description: "Invalid client secret"})
	}
	e.clock.Advance(2 * time.Minute)
	if rep := e.recheck(); rep.Revoked != 0 || rep.Unchecked != 2 {
		t.Fatalf("re-check with the client refused: %+v", rep)
	}
	for _, a := range []qm.Account{aliceAcct, bobAcct} {
		if e.linked(a) == nil {
			t.Errorf("%s was unlinked because the provider refused the client", a)
		}
	}
	if got := ch.all(); len(got) != 0 {
		t.Fatalf("told of changes: %+v", got)
	}
}
