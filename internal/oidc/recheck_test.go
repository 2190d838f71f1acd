package oidc_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oauth2-proxy/mockoidc"

	"github.com/acme/quartermaster/internal/oidc"
	"github.com/acme/quartermaster/internal/oidc/oidctest"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// changes records what GroupsChanged is told.
type changes struct {
	mu  sync.Mutex
	got [][2]*qm.AccountLink
}

func (c *changes) record(_ context.Context, before, after *qm.AccountLink) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got = append(c.got, [2]*qm.AccountLink{before, after})
}

func (c *changes) all() [][2]*qm.AccountLink {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([][2]*qm.AccountLink(nil), c.got...)
}

func (e *env) login(u *oidctest.User, a qm.Account) *qm.AccountLink {
	e.t.Helper()
	e.idp.SignIn(u)
	if p := oidctest.NewBrowser(e.t).Follow(e.link(a, "")); p.Status != http.StatusOK {
		e.t.Fatalf("login of %s: %d %s", u.Email, p.Status, p.Body)
	}
	return e.linked(a)
}

func (e *env) recheck() oidc.RecheckReport {
	e.t.Helper()
	rep, err := e.sso.Recheck(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	return rep
}

// TestRecheckRemovesTeam: removed from the team's group at the provider, a person keeps their
// running lease but, after the next re-check (with the refresh token), cannot start a new one for
// that team; whoever watches is told of the change. When the provider then refuses the sign-in
// outright, the account is unlinked.
func TestRecheckRemovesTeam(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t), time.Minute)
	ctx := context.Background()
	var ch changes
	e.sso.GroupsChanged = ch.record
	alice := oidctest.NewUser("sub-alice", "alice@acme.example", "ai-vision")
	e.login(alice, aliceAcct)
	out, err := e.svc.Request(ctx, qm.LeaseRequest{User: "alice@acme.example", Class: "interactive", Duration: 4 * time.Hour})
	if err != nil || out.Lease.State != qm.Active || out.Lease.Team != "vision" {
		t.Fatalf("request before: %+v %v", out, err)
	}

	alice.SetGroups("staff") // an admin takes her out of ai-vision
	if rep := e.recheck(); rep.Checked != 0 {
		t.Fatalf("a link checked just now was checked again: %+v", rep)
	}
	e.clock.Advance(2 * time.Minute)
	if rep := e.recheck(); rep.Checked != 1 || rep.Changed != 1 || rep.Revoked+rep.Unchecked != 0 {
		t.Fatalf("re-check: %+v", rep)
	}
	l := e.linked(aliceAcct)
	if strings.Join(l.Groups, ",") != "staff" || !l.CheckedAt.Equal(e.clock.Now().Truncate(time.Microsecond)) {
		t.Fatalf("after the re-check: %+v", l)
	}
	if got := ch.all(); len(got) != 1 || strings.Join(got[0][0].Groups, ",") != "ai-vision" || strings.Join(got[0][1].Groups, ",") != "staff" {
		t.Fatalf("told of changes: %+v", got)
	}
	if _, err := e.svc.Request(ctx, qm.LeaseRequest{User: "alice@acme.example", Class: "interactive", Team: "vision", Duration: time.Hour}); qm.ErrorCode(err) != qm.EFORBIDDEN || !strings.Contains(err.Error(), "not a member of team vision") {
		t.Fatalf("request for vision after removal: %v", err)
	}
	if out, err := e.svc.Request(ctx, qm.LeaseRequest{User: "alice@acme.example", Class: "interactive", Duration: time.Hour}); err == nil && out.Lease.Team == "vision" {
		t.Fatal("a new lease was charged to vision")
	}
	if l, _ := e.svc.Get(ctx, out.Lease.ID); l.State != qm.Active {
		t.Fatalf("the running lease was touched: %s", l.State)
	}

	// The provider no longer honours her refresh token: she is unlinked and unknown.
	e.idp.QueueError(&mockoidc.ServerError{Code: http.StatusBadRequest, Error: "invalid_grant", Description: "Token is not active"})
	e.clock.Advance(2 * time.Minute)
	if rep := e.recheck(); rep.Revoked != 1 {
		t.Fatalf("re-check after revocation: %+v", rep)
	}
	if e.linked(aliceAcct) != nil {
		t.Fatal("a revoked sign-in is still linked")
	}
	if _, ok := e.sso.Groups(ctx, "alice@acme.example"); ok {
		t.Fatal("a revoked sign-in still has groups")
	}
	if got := ch.all(); len(got) != 2 || got[1][1] != nil {
		t.Fatalf("told of the revocation: %+v", got)
	}
}

// TestRecheckByUserinfo: a provider that gives no refresh token is asked through userinfo while
// the access token lasts.
func TestRecheckByUserinfo(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t), time.Minute)
	e.idp.WithoutRefreshTokens()
	alice := oidctest.NewUser("sub-alice", "alice@acme.example", "ai-vision")
	e.login(alice, aliceAcct)
	alice.SetGroups("ai-language")
	e.clock.Advance(2 * time.Minute)
	if rep := e.recheck(); rep.Checked != 1 || rep.Changed != 1 {
		t.Fatalf("re-check: %+v", rep)
	}
	if l := e.linked(aliceAcct); strings.Join(l.Groups, ",") != "ai-language" {
		t.Fatalf("groups after the re-check: %v", l.Groups)
	}
}

// TestUncheckableLinkGoesStale: a link whose groups cannot be read again keeps them for two
// re-check periods; then its owner is no longer known and must log in again.
func TestUncheckableLinkGoesStale(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t), time.Minute)
	ctx := context.Background()
	l := e.login(oidctest.NewUser("sub-alice", "alice@acme.example", "ai-vision"), aliceAcct)
	// No tokens kept, as for a provider that gives none.
	if ok, err := e.db.UpdateAccountGroups(ctx, aliceAcct, l.LoginAt, l.Groups, l.CheckedAt, nil); err != nil || !ok {
		t.Fatal(ok, err)
	}
	e.clock.Advance(90 * time.Second)
	if rep := e.recheck(); rep.Unchecked != 1 || rep.Checked != 0 {
		t.Fatalf("re-check: %+v", rep)
	}
	if _, current, err := e.sso.Link(ctx, aliceAcct); err != nil || !current {
		t.Fatalf("within two periods the link is current: %v %v", current, err)
	}
	e.clock.Advance(time.Minute)
	if _, current, _ := e.sso.Link(ctx, aliceAcct); current {
		t.Fatal("a link unchecked for over two periods is current")
	}
	if _, ok := e.sso.Groups(ctx, "alice@acme.example"); ok {
		t.Fatal("a stale link still gives groups")
	}
}

// TestRecheckPastUncheckable: links that cannot be checked (here 150 with no tokens, more than one
// batch) do not keep the re-check from reaching the links after them.
func TestRecheckPastUncheckable(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t), time.Minute)
	ctx := context.Background()
	old := e.clock.Now().Add(-10 * time.Minute)
	for i := range 150 {
		a := qm.Account{Platform: "slack", Workspace: "T0ACME", User: fmt.Sprintf("U%04d", i)}
		if err := e.db.SaveAccountLink(ctx, qm.AccountLink{Account: a, Issuer: e.idp.Issuer(), Subject: fmt.Sprint(i), Email: fmt.Sprintf("p%d@acme.example", i), LoginAt: old}); err != nil {
			t.Fatal(err)
		}
	}
	alice := oidctest.NewUser("sub-alice", "alice@acme.example", "ai-vision")
	e.login(alice, aliceAcct)
	alice.SetGroups("ai-language")
	e.clock.Advance(2 * time.Minute)
	if rep := e.recheck(); rep.Unchecked != 150 || rep.Checked != 1 || rep.Changed != 1 {
		t.Fatalf("re-check: %+v", rep)
	}
	if l := e.linked(aliceAcct); strings.Join(l.Groups, ",") != "ai-language" {
		t.Fatalf("alice was not re-checked: %v", l.Groups)
	}
}
