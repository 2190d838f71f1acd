package oidc_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/oidc"
	"github.com/acme/quartermaster/internal/oidc/oidctest"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/sim"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// newEnvPolicy is newEnv on another policy than the example.
func newEnvPolicy(t *testing.T, pol *policy.Policy, recheck time.Duration) *env {
	t.Helper()
	e := &env{t: t, idp: oidctest.Start(t), db: storetest.Open(t, storetest.SQLite(t)), clock: sim.NewClock(time.Now()), pol: pol}
	mux := http.NewServeMux()
	e.srv = httptest.NewServer(mux)
	t.Cleanup(e.srv.Close)
	cfg := oidc.Config{Issuer: e.idp.Issuer(), ClientID: e.idp.ClientID, ClientSecret: e.idp.ClientSecret,
		PublicURL: e.srv.URL, Scopes: oidctest.Scopes, Recheck: recheck, Organization: pol.Organization, Location: pol.Location}
	var err error
	if e.sso, err = oidc.New(cfg, e.db, e.clock, storetest.Logger(t)); err != nil {
		t.Fatal(err)
	}
	e.sso.Register(mux)
	cluster := sim.New(pol, e.clock)
	e.svc = &qm.Service{Policy: pol, Store: e.db, Backend: cluster, Telemetry: cluster, Clock: e.clock, Directory: e.sso, Logger: storetest.Logger(t)}
	return e
}

// directoryGroupsPolicy is commands/testdata/kolkata.yaml with its teams' groups named as LDAP
// directories and Microsoft Entra ID name them: a distinguished name and a group object id.
func directoryGroupsPolicy(t *testing.T) *policy.Policy {
	t.Helper()
	b, err := os.ReadFile("../../commands/testdata/kolkata.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(b), "idp_groups: [grp-geno]", `idp_groups: ["cn=geno-lab,ou=groups,dc=kestrel"]`, 1)
	text = strings.Replace(text, "idp_groups: [grp-nlp]", "idp_groups: [3f1c9a2e-7b4d-4e2a-9c1d-0a1b2c3d4e5f]", 1)
	pol, err := policy.Load([]byte(text), "kolkata-directory.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return pol
}

// TestAddedToAGroupSinceSigningIn: someone added to a team's group at the identity provider after
// signing in is not in that team until their groups are read again. The refusal says so, with
// when the groups were read, and its example, /gpu login, is what gets them the team at once: the
// sign-in reads the groups afresh. So too for someone whose groups named no team at all.
func TestAddedToAGroupSinceSigningIn(t *testing.T) {
	pol := directoryGroupsPolicy(t)
	e := newEnvPolicy(t, pol, 24*time.Hour)
	ctx := context.Background()
	const geno, nlp = "CN=geno-lab,OU=Groups,DC=kestrel", "3F1C9A2E-7B4D-4E2A-9C1D-0A1B2C3D4E5F"
	signedIn := e.clock.Now().In(pol.Location).Format("Mon 2 Jan 15:04 MST")

	// Added to another team's group.
	ravi := oidctest.NewUser("sub-ravi", "ravi@kestrel.example", geno)
	e.login(ravi, aliceAcct)
	ask := qm.LeaseRequest{User: "ravi@kestrel.example", GPUs: 1, Class: "nb-t4", Team: "nlp", Duration: time.Hour}
	ravi.SetGroups(geno, nlp)
	e.clock.Advance(time.Hour)
	e.idp.FastForward(time.Hour) // the provider signs with its own clock
	_, err := e.svc.Request(ctx, ask)
	var qe *qm.Error
	if !errors.As(err, &qe) || qe.Code != qm.EFORBIDDEN || !strings.Contains(qe.Message, "not a member of team nlp") ||
		!strings.Contains(qe.Message, "identity provider gave at "+signedIn) || !strings.Contains(qe.Message, "/gpu login") || qe.Example != "/gpu login" {
		t.Fatalf("request for the team whose group ravi was added to: %v", err)
	}
	// The example, followed: a sign-in, and the team is his.
	e.login(ravi, aliceAcct)
	if out, err := e.svc.Request(ctx, ask); err != nil || out.Lease.Team != "nlp" {
		t.Fatalf("request after signing in again: %+v %v", out, err)
	}

	// In no team's group (only the roles everyone has), then added to one.
	mei := oidctest.NewUser("sub-mei", "mei@kestrel.example", "offline_access", "uma_authorization")
	e.login(mei, bobAcct)
	meiIn := e.clock.Now().In(pol.Location).Format("Mon 2 Jan 15:04 MST")
	mei.SetGroups("offline_access", geno)
	e.clock.Advance(time.Hour)
	e.idp.FastForward(time.Hour) // the provider signs with its own clock
	ask = qm.LeaseRequest{User: "mei@kestrel.example", GPUs: 1, Class: "nb-t4", Duration: time.Hour}
	_, err = e.svc.Request(ctx, ask)
	if !errors.As(err, &qe) || qe.Code != qm.EFORBIDDEN || !strings.Contains(qe.Message, "belongs to no team") ||
		!strings.Contains(qe.Message, "identity provider gave at "+meiIn) || !strings.Contains(qe.Message, "platform admin") || qe.Example != "/gpu login" {
		t.Fatalf("request of someone in no team's group: %v", err)
	}
	e.login(mei, bobAcct)
	if out, err := e.svc.Request(ctx, ask); err != nil || out.Lease.Team != "genomics-2" {
		t.Fatalf("request after signing in again: %+v %v", out, err)
	}

	// In no group at all.
	e.login(oidctest.NewUser("sub-ada", "ada@kestrel.example"), qm.Account{Platform: "discord", User: "880000000000000042"})
	_, err = e.svc.Request(ctx, qm.LeaseRequest{User: "ada@kestrel.example", GPUs: 1, Class: "nb-t4", Duration: time.Hour})
	if !errors.As(err, &qe) || !strings.Contains(qe.Message, "belongs to no team") || !strings.Contains(qe.Message, "gave no groups") ||
		strings.Contains(qe.Message, "the groups the identity provider gave") || qe.Example != "/gpu login" {
		t.Fatalf("request of someone in no group: %v", err)
	}
}

// TestTheTeamOfGroupsNoTeamNamesDoesNotFollowTheirOrder: someone whose groups meet no team of
// the policy is in a team named after one of them, with the default quota. Providers give
// groups in no set order (Keycloak's realm roles, Entra ID's group ids), so the same groups in
// another order, at a re-check or the next sign-in, keep them in the same team: their leases and
// quota stay in one place.
func TestTheTeamOfGroupsNoTeamNamesDoesNotFollowTheirOrder(t *testing.T) {
	pol := directoryGroupsPolicy(t)
	e := newEnvPolicy(t, pol, time.Minute)
	ctx := context.Background()
	teamOf := func() string {
		t.Helper()
		id, err := e.svc.Resolve(ctx, "noa@kestrel.example")
		if err != nil {
			t.Fatal(err)
		}
		team, err := e.svc.TeamFor(id, "")
		if err != nil {
			t.Fatal(err)
		}
		return team
	}
	noa := oidctest.NewUser("sub-noa", "noa@kestrel.example", "sailing-club", "default-roles-kestrel", "marine-lab")
	e.login(noa, aliceAcct)
	first := teamOf()
	if first != "sailing-club" && first != "marine-lab" {
		t.Fatalf("team of someone in no listed team's group: %q", first)
	}
	noa.SetGroups("marine-lab", "offline_access", "sailing-club")
	e.clock.Advance(2 * time.Minute)
	if rep := e.recheck(); rep.Checked != 1 {
		t.Fatalf("re-check: %+v", rep)
	}
	if got := teamOf(); got != first {
		t.Fatalf("after a re-check that gave the same groups in another order: team %q, was %q", got, first)
	}
	noa.SetGroups("sailing-club", "marine-lab")
	e.login(noa, aliceAcct)
	if got := teamOf(); got != first {
		t.Fatalf("after a sign-in that gave them in another order: team %q, was %q", got, first)
	}
}

// TestTheSignInPageSaysWhichTeam: the page a sign-in ends on says, after the groups, which team
// they place the person in, or, where they place them in none, that they belong to no team yet
// and whom to ask; so a researcher knows before their first request.
func TestTheSignInPageSaysWhichTeam(t *testing.T) {
	pol := directoryGroupsPolicy(t)
	e := newEnvPolicy(t, pol, time.Hour)
	e.sso.Teams = func(ctx context.Context, email string) ([]string, bool) {
		id, err := e.svc.Resolve(ctx, email)
		return id.Teams, err == nil
	}
	e.idp.SignIn(oidctest.NewUser("sub-ravi", "ravi@kestrel.example", "CN=geno-lab,OU=Groups,DC=kestrel", "3f1c9a2e-7b4d-4e2a-9c1d-0a1b2c3d4e5f"))
	p := oidctest.NewBrowser(t).Follow(e.link(aliceAcct, ""))
	if p.Status != http.StatusOK || !strings.Contains(p.Body, "They place you in teams genomics-2 and nlp.") {
		t.Fatalf("page of someone in two teams' groups: %d %s", p.Status, p.Body)
	}
	e.idp.SignIn(oidctest.NewUser("sub-mei", "mei@kestrel.example", "cn=all-staff,ou=groups,dc=kestrel", "Kestrel Everyone"))
	p = oidctest.NewBrowser(t).Follow(e.link(bobAcct, ""))
	if p.Status != http.StatusOK || !strings.Contains(p.Body, "none of them places you in a team") || !strings.Contains(p.Body, "ask a platform admin") ||
		!strings.Contains(p.Body, "cn=all-staff,ou=groups,dc=kestrel; Kestrel Everyone.") {
		t.Fatalf("page of someone in no team's group: %d %s", p.Status, p.Body)
	}
}
