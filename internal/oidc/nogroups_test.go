package oidc_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/oidc"
	"github.com/acme/quartermaster/internal/oidc/oidctest"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// withoutGroups leaves the groups out of userinfo, as providers do that keep them to ID tokens.
func withoutGroups(c map[string]any) { delete(c, "groups") }

// emptyGroups writes the groups claim as an empty list where the provider left it out (mockoidc
// leaves an empty list out), as a provider does that says "in no group".
func emptyGroups(c map[string]any) *mockoidcKeypair {
	if _, ok := c["groups"]; !ok {
		c["groups"] = []any{}
	}
	return nil
}

// canUseVision reports whether alice may start a lease for team vision now.
func (e *env) canUseVision() (bool, error) {
	e.t.Helper()
	out, err := e.svc.Request(context.Background(), qm.LeaseRequest{User: "alice@acme.example", Class: "interactive", Team: "vision", Duration: time.Hour})
	if err != nil {
		if qm.ErrorCode(err) == qm.EFORBIDDEN {
			return false, err
		}
		e.t.Fatal(err)
	}
	if _, err := e.svc.Release(context.Background(), "alice@acme.example", out.Lease.ID); err != nil {
		e.t.Fatal(err)
	}
	return true, nil
}

// TestARecheckWithoutGroupsKeepsThem: a provider that answers a refresh without an ID token, and
// whose userinfo has no groups claim, says nothing about the person's groups. The re-check keeps
// the groups of the last sign-in (they stay in their team, nobody is told they left it), does
// not count them as confirmed (so they are asked to sign in again once the groups are no longer
// current), and the link records when the provider gave no groups. The same holds for a
// configured claim (oidc.groups_claim: roles) that neither carries.
func TestARecheckWithoutGroupsKeepsThem(t *testing.T) {
	for _, claim := range []string{"groups", "roles"} {
		t.Run(claim, func(t *testing.T) {
			e := newEnvWith(t, storetest.SQLite(t), time.Minute, "", func(c *oidc.Config) { c.GroupsClaim = claim })
			var seen changes
			e.sso.GroupsChanged = seen.record
			alice := oidctest.NewUser("sub-alice", "alice@acme.example", "ai-vision")
			if claim == "roles" {
				e.idp.SetTamper(func(c map[string]any) *mockoidcKeypair { c["roles"] = c["groups"]; return nil })
			}
			before := e.login(alice, aliceAcct)
			if strings.Join(before.Groups, ",") != "ai-vision" {
				t.Fatalf("groups at the sign-in: %v", before.Groups)
			}
			e.idp.SetTamper(nil)
			e.idp.WithoutIDTokensOnRefresh()
			e.idp.SetUserinfo(withoutGroups)
			e.clock.Advance(90 * time.Second)
			rep := e.recheck()
			if rep.Changed != 0 || rep.Revoked != 0 || rep.Unchecked != 1 || rep.NoGroups != 1 {
				t.Fatalf("re-check: %+v", rep)
			}
			if ok, err := e.canUseVision(); !ok {
				t.Fatalf("alice lost team vision to a re-check that read no groups: %v", err)
			}
			if got := seen.all(); len(got) != 0 {
				t.Fatalf("told of changes: %+v", got)
			}
			l := e.linked(aliceAcct)
			if strings.Join(l.Groups, ",") != "ai-vision" || !l.CheckedAt.Equal(before.CheckedAt) || !l.NoGroupsAt.Equal(e.clock.Now().Truncate(time.Microsecond)) {
				t.Fatalf("link after the re-check: %+v", l)
			}
			// Unconfirmed for over two periods: alice must sign in again, which reads her groups.
			e.clock.Advance(time.Minute)
			e.recheck()
			if _, current, _ := e.sso.Link(context.Background(), aliceAcct); current {
				t.Fatal("groups the provider never confirmed are current after two periods")
			}
			if claim == "roles" {
				e.idp.SetTamper(func(c map[string]any) *mockoidcKeypair { c["roles"] = c["groups"]; return nil })
			}
			if l := e.login(alice, aliceAcct); !l.NoGroupsAt.IsZero() || strings.Join(l.Groups, ",") != "ai-vision" {
				t.Fatalf("link after a new sign-in: %+v", l)
			}
			if ok, err := e.canUseVision(); !ok {
				t.Fatalf("after a new sign-in: %v", err)
			}
		})
	}
}

// TestARecheckWithEmptyGroupsRemovesThem: a groups claim that is there and empty says "in no
// group": someone taken out of every group loses their team at the next re-check, whether the
// empty claim comes in the refreshed ID token or, without one, in userinfo.
func TestARecheckWithEmptyGroupsRemovesThem(t *testing.T) {
	for _, where := range []string{"id token", "userinfo"} {
		t.Run(where, func(t *testing.T) {
			e := newEnv(t, storetest.SQLite(t), time.Minute)
			var seen changes
			e.sso.GroupsChanged = seen.record
			alice := oidctest.NewUser("sub-alice", "alice@acme.example", "ai-vision")
			e.login(alice, aliceAcct)
			alice.SetGroups()
			if where == "id token" {
				e.idp.SetTamper(emptyGroups)
			} else {
				e.idp.WithoutIDTokensOnRefresh()
				e.idp.SetUserinfo(func(c map[string]any) { c["groups"] = []any{} })
			}
			e.clock.Advance(90 * time.Second)
			if rep := e.recheck(); rep.Checked != 1 || rep.Changed != 1 || rep.NoGroups != 0 {
				t.Fatalf("re-check: %+v", rep)
			}
			if ok, _ := e.canUseVision(); ok {
				t.Fatal("alice, in no group at the provider, can still start leases for vision")
			}
			if got := seen.all(); len(got) != 1 || got[0][1] == nil || len(got[0][1].Groups) != 0 {
				t.Fatalf("told of changes: %+v", got)
			}
		})
	}
}

// TestARecheckReadsTheRefreshedIDTokenFirst: the refreshed ID token's groups win over
// userinfo's; without an ID token, userinfo's groups are read.
func TestARecheckReadsTheRefreshedIDTokenFirst(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t), time.Minute)
	alice := oidctest.NewUser("sub-alice", "alice@acme.example", "ai-vision")
	e.login(alice, aliceAcct)
	e.idp.SetUserinfo(func(c map[string]any) { c["groups"] = []any{"from-userinfo"} })
	e.clock.Advance(90 * time.Second)
	e.recheck()
	if l := e.linked(aliceAcct); strings.Join(l.Groups, ",") != "ai-vision" {
		t.Fatalf("with an ID token: %v", l.Groups)
	}
	e.idp.WithoutIDTokensOnRefresh()
	e.clock.Advance(90 * time.Second)
	e.recheck()
	if l := e.linked(aliceAcct); strings.Join(l.Groups, ",") != "from-userinfo" {
		t.Fatalf("without an ID token: %v", l.Groups)
	}
}

// TestARecheckWithoutGroupsForSomeoneWithNone: someone who had no groups at sign-in (as with
// Google, whose tokens carry none) and whose provider gives none at the re-check has nothing to
// keep: the check stands, and they are not asked to sign in again over it.
func TestARecheckWithoutGroupsForSomeoneWithNone(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t), time.Minute)
	e.login(oidctest.NewUser("sub-alice", "alice@acme.example"), aliceAcct)
	for range 3 {
		e.clock.Advance(90 * time.Second)
		if rep := e.recheck(); rep.Checked != 1 || rep.Unchecked != 0 {
			t.Fatalf("re-check: %+v", rep)
		}
	}
	if _, current, err := e.sso.Link(context.Background(), aliceAcct); err != nil || !current {
		t.Fatalf("a link with no groups to keep is no longer current: %v %v", current, err)
	}
}

// TestANullGroupsClaimIsAbsentAtSignInAsAtARecheck: a groups claim written as null says nothing
// about the person's groups, at the sign-in as at a re-check: the ID token's null is as if the
// claim were not there, so the groups are read from userinfo, for a plain claim and for one
// nested along a path.
func TestANullGroupsClaimIsAbsentAtSignInAsAtARecheck(t *testing.T) {
	for _, claim := range []string{"groups", "realm_access.roles"} {
		t.Run(claim, func(t *testing.T) {
			e := newEnvWith(t, storetest.SQLite(t), time.Minute, "", func(c *oidc.Config) { c.GroupsClaim = claim })
			alice := oidctest.NewUser("sub-alice", "alice@acme.example", "ai-vision")
			e.idp.SetTamper(func(c map[string]any) *mockoidcKeypair {
				if claim == "groups" {
					c["groups"] = nil
				} else {
					delete(c, "groups")
					c["realm_access"] = map[string]any{"roles": nil}
				}
				return nil
			})
			e.idp.SetUserinfo(func(c map[string]any) {
				if claim == "groups" {
					c["groups"] = []any{"ai-vision"}
				} else {
					delete(c, "groups")
					c["realm_access"] = map[string]any{"roles": []any{"ai-vision"}}
				}
			})
			if l := e.login(alice, aliceAcct); strings.Join(l.Groups, ",") != "ai-vision" {
				t.Fatalf("groups at a sign-in whose ID token says groups: null: %v; want userinfo's ai-vision", l.Groups)
			}
			e.clock.Advance(90 * time.Second)
			if rep := e.recheck(); rep.Checked != 1 || rep.Changed != 0 || rep.NoGroups != 0 {
				t.Fatalf("re-check: %+v", rep)
			}
			if l := e.linked(aliceAcct); strings.Join(l.Groups, ",") != "ai-vision" {
				t.Fatalf("groups after the re-check: %v", l.Groups)
			}
		})
	}
}
