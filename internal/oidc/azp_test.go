package oidc_test

import (
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/oidc/oidctest"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// TestARefreshedTokenIssuedToAnotherClientIsNotRead: at a re-check, a refreshed ID token whose
// authorized party is another client (though its audience names this one too) says nothing of
// the person's groups: they are not read from it, and the sign-in is not taken for revoked.
func TestARefreshedTokenIssuedToAnotherClientIsNotRead(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t), time.Minute)
	kai := oidctest.NewUser("sub-kai", "kai@globex.example", "ai-language")
	e.login(kai, bobAcct)
	e.idp.SetTamper(func(c map[string]any) *mockoidcKeypair {
		c["aud"] = []string{"billing-portal", e.idp.ClientID}
		c["azp"] = "billing-portal"
		return nil
	})
	kai.SetGroups("ai-vision")
	e.clock.Advance(2 * time.Minute)
	if rep := e.recheck(); rep.Unchecked != 1 || rep.Checked != 0 || rep.Revoked != 0 {
		t.Fatalf("re-check: %+v", rep)
	}
	if l := e.linked(bobAcct); l == nil || strings.Join(l.Groups, ",") != "ai-language" {
		t.Fatalf("link after the re-check: %+v", l)
	}
}
