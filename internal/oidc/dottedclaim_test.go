package oidc_test

import (
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/oidc"
	"github.com/acme/quartermaster/internal/oidc/oidctest"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// TestAClientRolesClaimWithADottedClientID: a client's roles (resource_access.CLIENT.roles) are
// read when the client id has dots of its own (quartermaster.acme.example): at each level of the
// path the longest key there is matched, so the client's key is found whole, at the sign-in and
// at a re-check.
func TestAClientRolesClaimWithADottedClientID(t *testing.T) {
	const claim = "resource_access.quartermaster.acme.example.roles"
	e := newEnvWith(t, storetest.SQLite(t), time.Minute, "", func(c *oidc.Config) { c.GroupsClaim = claim })
	roles := func(c map[string]any) *mockoidcKeypair {
		c["resource_access"] = map[string]any{
			"account":                    map[string]any{"roles": []any{"manage-account"}},
			"quartermaster.acme.example": map[string]any{"roles": c["groups"]},
		}
		delete(c, "groups")
		return nil
	}
	e.idp.SetTamper(roles)
	alice := oidctest.NewUser("sub-alice", "alice@acme.example", "ai-vision")
	if l := e.login(alice, aliceAcct); strings.Join(l.Groups, ",") != "ai-vision" {
		t.Fatalf("groups at the sign-in with %s: %v; want ai-vision", claim, l.Groups)
	}
	alice.SetGroups("ai-vision", "ai-nlp")
	e.clock.Advance(90 * time.Second)
	if rep := e.recheck(); rep.Checked != 1 || rep.NoGroups != 0 {
		t.Fatalf("re-check: %+v", rep)
	}
	if l := e.linked(aliceAcct); strings.Join(l.Groups, ",") != "ai-nlp,ai-vision" && strings.Join(l.Groups, ",") != "ai-vision,ai-nlp" {
		t.Fatalf("groups after the re-check: %v", l.Groups)
	}
}
