package oidc_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/oidc"
	"github.com/acme/quartermaster/internal/oidc/oidctest"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// TestLoginUnderAPublicURLWithAPath: where browsers reach the service under a path
// (QM_PUBLIC_URL=https://tools.acme.example/quartermaster, behind a proxy that strips it), the
// link's button posts under that path and the browser's cookie comes back to the callback under
// it, so the sign-in completes.
func TestLoginUnderAPublicURLWithAPath(t *testing.T) {
	e := newEnvWith(t, storetest.SQLite(t), 0, "/quartermaster", nil)
	e.idp.SignIn(oidctest.NewUser("sub-alice", "alice@acme.example", "ai-vision"))
	link := e.link(aliceAcct, "alice@acme.example")
	if !strings.HasPrefix(link, e.srv.URL+"/quartermaster/auth/login?t=") {
		t.Fatalf("link %s", link)
	}
	b := oidctest.NewBrowser(t)
	page := b.Get(link)
	if !strings.Contains(page.Body, `action="`+e.srv.URL+`/quartermaster/auth/login"`) {
		t.Errorf("the button does not post under the public URL's path:\n%s", page.Body)
	}
	if p := b.Follow(link); p.Status != http.StatusOK || !strings.Contains(p.Body, "You are signed in as alice@acme.example") {
		t.Fatalf("page %d:\n%s", p.Status, p.Body)
	}
	if l := e.linked(aliceAcct); l == nil || l.Email != "alice@acme.example" {
		t.Fatalf("link: %+v", l)
	}
}

// TestLinkPageAllowsTheProvidersSignInHost: a provider that signs people in on another host than
// its issuer's (Amazon Cognito: issuer cognito-idp.…amazonaws.com, sign-in on
// ….auth.…amazoncognito.com) is named in the link page's form-action, so browsers follow the
// button's redirect to it instead of blocking it.
func TestLinkPageAllowsTheProvidersSignInHost(t *testing.T) {
	var issuer string
	disco := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"issuer": issuer, "authorization_endpoint": "https://acme.auth.eu-west-1.amazoncognito.example/oauth2/authorize",
			"token_endpoint": "https://acme.auth.eu-west-1.amazoncognito.example/oauth2/token", "jwks_uri": issuer + "/.well-known/jwks.json",
			"response_types_supported": []string{"code"}, "subject_types_supported": []string{"public"}, "id_token_signing_alg_values_supported": []string{"RS256"},
		})
	}))
	t.Cleanup(disco.Close)
	issuer = disco.URL + "/eu-west-1_AbCdEf"
	e := newEnvWith(t, storetest.SQLite(t), 0, "", func(c *oidc.Config) { c.Issuer = issuer })
	resp, err := http.Get(e.link(aliceAcct, ""))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	csp := resp.Header.Get("Content-Security-Policy")
	if resp.StatusCode != http.StatusOK || !strings.HasSuffix(csp, "form-action 'self' "+disco.URL+" https://acme.auth.eu-west-1.amazoncognito.example") {
		t.Fatalf("%d, Content-Security-Policy: %s", resp.StatusCode, csp)
	}
}

// TestPagesWriteTimesInThePolicysTimeZone: the link's page and its refusals say when it expires
// in the policy's time zone, as the chat message with the link does, not in UTC.
func TestPagesWriteTimesInThePolicysTimeZone(t *testing.T) {
	kolkata, err := time.LoadLocation("Asia/Kolkata")
	if err != nil {
		t.Skip(err)
	}
	pol, err := policy.LoadFile("../../docs/quartermaster.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	pol.Timezone, pol.Location = "Asia/Kolkata", kolkata
	env := map[string]string{oidc.EnvIssuer: "https://idp.acme.example", oidc.EnvClientID: "qm", oidc.EnvPublicURL: "https://qm.acme.example"}
	cfg, _, err := oidc.FromEnv(func(k string) string { return env[k] }, pol)
	if err != nil || cfg.Location != kolkata {
		t.Fatalf("the configuration's time zone: %v %v", cfg.Location, err)
	}
	e := newEnvWith(t, storetest.SQLite(t), 0, "", func(c *oidc.Config) { c.Location = cfg.Location })
	link := e.link(aliceAcct, "")
	exp := e.clock.Now().Add(oidc.LinkTTL).In(kolkata).Format("15:04 MST on Mon 2 Jan")
	if p := oidctest.NewBrowser(t).Get(link); !strings.Contains(p.Body, "until "+exp+".") {
		t.Errorf("the link's page does not say %s:\n%s", exp, p.Body)
	}
	e.clock.Advance(oidc.LinkTTL + time.Second)
	if p := oidctest.NewBrowser(t).Get(link); !strings.Contains(p.Body, "It expired at "+exp+".") {
		t.Errorf("the expired link's page does not say %s:\n%s", exp, p.Body)
	}
}

// TestGroupsInOtherShapes: groups the provider gives nested (Keycloak's realm roles,
// groups_claim: realm_access.roles) or as an object's keys (ZITADEL's project roles) place people
// in their teams at login, and the re-check reads them the same way.
func TestGroupsInOtherShapes(t *testing.T) {
	shapes := []struct {
		name, claim string
		move        func(c map[string]any, groups []any)
	}{
		{"nested", "realm_access.roles", func(c map[string]any, groups []any) {
			c["realm_access"] = map[string]any{"roles": groups}
		}},
		{"object", "urn:zitadel:iam:org:project:roles", func(c map[string]any, groups []any) {
			roles := map[string]any{}
			for _, g := range groups {
				roles[g.(string)] = map[string]any{"2800": "acme.example"}
			}
			c["urn:zitadel:iam:org:project:roles"] = roles
		}},
	}
	for _, sh := range shapes {
		t.Run(sh.name, func(t *testing.T) {
			t.Parallel()
			e := newEnvWith(t, storetest.SQLite(t), time.Minute, "", func(c *oidc.Config) { c.GroupsClaim = sh.claim })
			e.idp.SetTamper(func(c map[string]any) *mockoidcKeypair {
				groups, _ := c["groups"].([]any)
				delete(c, "groups")
				sh.move(c, groups)
				return nil
			})
			erin := oidctest.NewUser("sub-erin", "erin@acme.example", "staff", "ai-vision")
			if l := e.login(erin, aliceAcct); l == nil || strings.Join(l.Groups, ",") != "ai-vision,staff" && strings.Join(l.Groups, ",") != "staff,ai-vision" {
				t.Fatalf("link: %+v", l)
			}
			ctx := context.Background()
			out, err := e.svc.Request(ctx, qm.LeaseRequest{User: "erin@acme.example", Class: "interactive", Duration: time.Hour})
			if err != nil || out.Lease.Team != "vision" {
				t.Fatalf("erin's request: %+v %v", out, err)
			}
			erin.SetGroups("staff")
			e.clock.Advance(2 * time.Minute)
			if rep := e.recheck(); rep.Checked != 1 || rep.Changed != 1 {
				t.Fatalf("re-check: %+v", rep)
			}
			if l := e.linked(aliceAcct); l == nil || strings.Join(l.Groups, ",") != "staff" {
				t.Fatalf("link after the re-check: %+v", l)
			}
		})
	}
}

// TestIssuerWrittenWithATrailingSlash: QM_OIDC_ISSUER written with a trailing slash the provider
// does not use (or without one it uses, as Auth0 does) still signs people in.
func TestIssuerWrittenWithATrailingSlash(t *testing.T) {
	e := newEnvWith(t, storetest.SQLite(t), 0, "", func(c *oidc.Config) { c.Issuer += "/" })
	e.idp.SignIn(oidctest.NewUser("sub-alice", "alice@acme.example", "ai-vision"))
	if p := oidctest.NewBrowser(t).Follow(e.link(aliceAcct, "")); p.Status != http.StatusOK || !strings.Contains(p.Body, "You are signed in as alice@acme.example") {
		t.Fatalf("page %d:\n%s", p.Status, p.Body)
	}
	if l := e.linked(aliceAcct); l == nil || l.Issuer != e.idp.Issuer() {
		t.Fatalf("link: %+v", l)
	}
}

// TestIssuerOfAnotherProvider: a QM_OIDC_ISSUER whose discovery document names another issuer
// is a setup mistake, and the page says so (and that trying again will not help) instead of
// saying the provider cannot be reached just now.
func TestIssuerOfAnotherProvider(t *testing.T) {
	disco := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"issuer": "https://login.acme.example/tenant-7", "authorization_endpoint": "https://login.acme.example/authorize",
			"token_endpoint": "https://login.acme.example/token", "jwks_uri": "https://login.acme.example/keys",
			"id_token_signing_alg_values_supported": []string{"RS256"},
		})
	}))
	t.Cleanup(disco.Close)
	e := newEnvWith(t, storetest.SQLite(t), 0, "", func(c *oidc.Config) { c.Issuer = disco.URL + "/tenant-7" })
	p := oidctest.NewBrowser(t).Open(e.link(aliceAcct, ""))
	if p.Status != http.StatusBadGateway || !strings.Contains(p.Body, "Reference: issuer-mismatch") || !strings.Contains(p.Body, "calls itself https://login.acme.example/tenant-7") ||
		!strings.Contains(p.Body, "Trying again will not help") {
		t.Fatalf("page %d:\n%s", p.Status, p.Body)
	}
}
