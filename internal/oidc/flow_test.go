package oidc_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/oauth2-proxy/mockoidc"

	"github.com/acme/quartermaster/internal/oidc"
	"github.com/acme/quartermaster/internal/oidc/oidctest"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/sim"
	"github.com/acme/quartermaster/internal/store"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// env is single sign-on against a real in-process provider (mockoidc), served over HTTP, with a
// real store and the lease service on the simulated cluster using the account links as its
// directory. The clock starts at the real time, because the provider signs tokens with it.
type env struct {
	t     *testing.T
	idp   *oidctest.Provider
	db    *store.DB
	clock *sim.Clock
	sso   *oidc.Service
	srv   *httptest.Server
	pol   *policy.Policy
	svc   *qm.Service
}

func newEnv(t *testing.T, dbURL string, recheck time.Duration) *env {
	t.Helper()
	return newEnvWith(t, dbURL, recheck, "", nil)
}

// newEnvWith is newEnv where browsers reach the service under prefix (a reverse proxy that
// strips it, as QM_PUBLIC_URL=https://tools.acme.example/quartermaster), and where change, when
// not nil, alters the configuration.
func newEnvWith(t *testing.T, dbURL string, recheck time.Duration, prefix string, change func(*oidc.Config)) *env {
	t.Helper()
	pol, err := policy.LoadFile("../../docs/quartermaster.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, idp: oidctest.Start(t), db: storetest.Open(t, dbURL), clock: sim.NewClock(time.Now()), pol: pol}
	mux := http.NewServeMux()
	var h http.Handler = mux
	if prefix != "" {
		h = http.StripPrefix(prefix, mux)
	}
	e.srv = httptest.NewServer(h)
	t.Cleanup(e.srv.Close)
	cfg := oidc.Config{Issuer: e.idp.Issuer(), ClientID: e.idp.ClientID, ClientSecret: e.idp.ClientSecret,
		PublicURL: e.srv.URL + prefix, Scopes: oidctest.Scopes, Recheck: recheck, Organization: pol.Organization}
	if change != nil {
		change(&cfg)
	}
	e.sso, err = oidc.New(cfg, e.db, e.clock, storetest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	e.sso.Register(mux)
	cluster := sim.New(pol, e.clock)
	e.svc = &qm.Service{Policy: pol, Store: e.db, Backend: cluster, Telemetry: cluster, Clock: e.clock, Directory: e.sso, Logger: storetest.Logger(t)}
	return e
}

// link is a new login link for an account.
func (e *env) link(a qm.Account, chatEmail string) string {
	e.t.Helper()
	u, exp, err := e.sso.LoginURL(context.Background(), a, chatEmail, "")
	if err != nil {
		e.t.Fatal(err)
	}
	if want := e.clock.Now().Add(10 * time.Minute); !exp.Equal(want) {
		e.t.Fatalf("link expires %s, want %s", exp, want)
	}
	return u
}

// linked is the account's link, or nil.
func (e *env) linked(a qm.Account) *qm.AccountLink {
	e.t.Helper()
	l, err := e.db.AccountLink(context.Background(), a)
	if errors.Is(err, qm.ErrNotFound) {
		return nil
	}
	if err != nil {
		e.t.Fatal(err)
	}
	return l
}

type mockoidcKeypair = mockoidc.Keypair

func sha256hex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

var (
	aliceAcct = qm.Account{Platform: "slack", Workspace: "T0ACME", User: "U0ALICE"}
	bobAcct   = qm.Account{Platform: "slack", Workspace: "T0ACME", User: "U0BOB"}
)

// TestLoginLinksAccountAndGrants is the whole flow on both databases: a browser follows a
// one-time link (whose page a link preview may fetch without using it up) to the provider (authorization code with PKCE S256, state and nonce) and back;
// the chat account is linked with the provider's subject, email and groups; the secrets are kept
// only as hashes; and a request by that person is granted for the team their group names, while
// someone in another group is refused that team.
func TestLoginLinksAccountAndGrants(t *testing.T) {
	for name, dbURL := range map[string]func(testing.TB) string{"sqlite": storetest.SQLite, "postgres": storetest.Postgres} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, dbURL(t), 0)
			ctx := context.Background()
			e.idp.SignIn(oidctest.NewUser("sub-alice", "Alice@acme.example", "ai-vision", "staff"))
			link := e.link(aliceAcct, "alice@acme.example")
			if !strings.HasPrefix(link, e.srv.URL+"/auth/login?t=") {
				t.Fatalf("link %s", link)
			}
			// A chat platform's link preview fetches the link: that shows a button and uses nothing up.
			for range 2 {
				if p := oidctest.NewBrowser(t).Get(link); p.Status != http.StatusOK || !p.HasForm() ||
					!strings.Contains(p.Body, "This links the Slack account of alice@acme.example to your identity at Acme AI") {
					t.Fatalf("the link's page: %d %s", p.Status, p.Body)
				}
			}
			browser := oidctest.NewBrowser(t)
			var authz url.Values
			page := browser.Steps(link, func(u *url.URL) { authz = u.Query() }, nil)
			if page.Status != http.StatusOK || !strings.Contains(page.Body, "You are signed in") || !strings.Contains(page.Body, "alice@acme.example") ||
				!strings.Contains(page.Body, "ai-vision, staff") || !strings.Contains(page.Body, "go back to chat") {
				t.Fatalf("page %d:\n%s", page.Status, page.Body)
			}
			if authz.Get("code_challenge_method") != "S256" || len(authz.Get("code_challenge")) != 43 || authz.Get("nonce") == "" || authz.Get("state") == "" ||
				authz.Get("client_id") != e.idp.ClientID || authz.Get("redirect_uri") != e.srv.URL+"/auth/callback" || authz.Get("response_type") != "code" {
				t.Fatalf("authorization request: %v", authz)
			}

			l := e.linked(aliceAcct)
			if l == nil || l.Subject != "sub-alice" || l.Email != "alice@acme.example" || strings.Join(l.Groups, ",") != "ai-vision,staff" ||
				l.Issuer != e.idp.Issuer() || !l.LoginAt.Equal(store.StoredTime(e.clock.Now())) || len(l.Tokens) == 0 {
				t.Fatalf("link: %+v", l)
			}
			if strings.Contains(string(l.Tokens), "eyJ") {
				t.Fatal("the provider's tokens are stored readable")
			}
			// Only hashes of the link's secret and of the state are kept.
			secret := strings.TrimPrefix(link, e.srv.URL+"/auth/login?t=")
			state := authz.Get("state")
			if _, err := e.db.LoginLink(ctx, secret); !errors.Is(err, qm.ErrNotFound) {
				t.Fatalf("the link's secret is a key in the store: %v", err)
			}
			if _, err := e.db.LoginLinkByState(ctx, state); !errors.Is(err, qm.ErrNotFound) {
				t.Fatalf("the state is a key in the store: %v", err)
			}
			kept, err := e.db.LoginLink(ctx, sha256hex(secret))
			if err != nil || kept.StateHash != sha256hex(state) || kept.DoneAt.IsZero() || kept.Account != aliceAcct {
				t.Fatalf("the link is not kept by the hashes of its secret and state: %+v %v", kept, err)
			}

			// Her groups are known to the lease service, so approvers named by group hear of
			// exceptions.
			if m := e.sso.Members("AI-Vision"); len(m) != 1 || m[0] != "alice@acme.example" {
				t.Errorf("members of ai-vision after alice's login: %v", m)
			}

			// Alice's request is granted for vision, the team of her group.
			out, err := e.svc.Request(ctx, qm.LeaseRequest{User: l.Email, GPUs: 1, Class: "interactive", Duration: time.Hour})
			if err != nil || out.Lease.State != qm.Active || out.Lease.Team != "vision" {
				t.Fatalf("alice's request: %+v %v", out, err)
			}
			// Bob, in the language group, is charged to language and refused vision.
			e.idp.SignIn(oidctest.NewUser("sub-bob", "bob@acme.example", "ai-language"))
			if p := oidctest.NewBrowser(t).Follow(e.link(bobAcct, "")); p.Status != http.StatusOK {
				t.Fatalf("bob's login: %d %s", p.Status, p.Body)
			}
			out, err = e.svc.Request(ctx, qm.LeaseRequest{User: "bob@acme.example", Class: "interactive", Duration: time.Hour})
			if err != nil || out.Lease.Team != "language" {
				t.Fatalf("bob's request: %+v %v", out, err)
			}
			if _, err := e.svc.Request(ctx, qm.LeaseRequest{User: "bob@acme.example", Class: "interactive", Team: "vision", Duration: time.Hour}); qm.ErrorCode(err) != qm.EFORBIDDEN {
				t.Fatalf("bob asked for vision: %v", err)
			}
			// Someone who never logged in is unknown to the directory.
			if _, ok := e.sso.Groups(ctx, "carl@acme.example"); ok {
				t.Fatal("a person with no link has groups")
			}
		})
	}
}

// TestRefusals: each way a login can go wrong ends on a page that says what happened and what to
// do, with the status and reference docs/sso.md lists, and links nothing.
func TestRefusals(t *testing.T) {
	alice := func() *oidctest.User { return oidctest.NewUser("sub-alice", "alice@acme.example", "ai-vision") }
	cases := []struct {
		name   string
		status int
		ref    string
		says   string
		run    func(e *env) oidctest.Response
	}{
		{"reused link", http.StatusGone, "link-used", "was used already", func(e *env) oidctest.Response {
			e.idp.SignIn(alice())
			link := e.link(aliceAcct, "")
			if p := oidctest.NewBrowser(e.t).Follow(link); p.Status != http.StatusOK {
				e.t.Fatalf("first use: %d %s", p.Status, p.Body)
			}
			if _, err := e.sso.Logout(context.Background(), aliceAcct); err != nil {
				e.t.Fatal(err)
			}
			return oidctest.NewBrowser(e.t).Follow(link)
		}},
		{"link opened twice before its login ends", http.StatusGone, "link-used", "Each link works once", func(e *env) oidctest.Response {
			link := e.link(aliceAcct, "")
			b := oidctest.NewBrowser(e.t)
			page := b.Get(link)
			if r := b.Submit(page); r.Status != http.StatusSeeOther {
				e.t.Fatalf("first open: %d", r.Status)
			}
			if r := b.Submit(page); r.Status != http.StatusGone {
				e.t.Fatalf("the button pressed again: %d", r.Status)
			}
			return b.Get(link)
		}},
		{"expired link", http.StatusGone, "link-expired", "Links last 10 minutes", func(e *env) oidctest.Response {
			link := e.link(aliceAcct, "")
			e.clock.Advance(10*time.Minute + time.Second)
			return oidctest.NewBrowser(e.t).Follow(link)
		}},
		{"link made up", http.StatusNotFound, "link-unknown", "not one Quartermaster made", func(e *env) oidctest.Response {
			link := e.link(aliceAcct, "")
			return oidctest.NewBrowser(e.t).Follow(link[:len(link)-1] + "x")
		}},
		{"link opened for another chat account", http.StatusForbidden, "other-account", "made for the Slack account of mallory@acme.example, but you signed in as alice@acme.example", func(e *env) oidctest.Response {
			// Mallory asks for a link and gets Alice, who is signed in at the provider, to open it.
			e.idp.SignIn(alice())
			return oidctest.NewBrowser(e.t).Follow(e.link(aliceAcct, "mallory@acme.example"))
		}},
		{"tampered state", http.StatusBadRequest, "state-unknown", "does not belong to any sign-in", func(e *env) oidctest.Response {
			e.idp.SignIn(alice())
			return oidctest.NewBrowser(e.t).Steps(e.link(aliceAcct, ""), nil, func(u *url.URL) {
				oidctest.SetQuery(u, "state", u.Query().Get("state")+"A")
			})
		}},
		{"wrong nonce", http.StatusForbidden, "nonce-mismatch", "nonce does not match", func(e *env) oidctest.Response {
			e.idp.SignIn(alice())
			return oidctest.NewBrowser(e.t).Steps(e.link(aliceAcct, ""), func(u *url.URL) {
				oidctest.SetQuery(u, "nonce", "a-nonce-from-another-sign-in")
			}, nil)
		}},
		{"token for another audience", http.StatusForbidden, "token-audience", "issued for another application", func(e *env) oidctest.Response {
			e.idp.SignIn(alice())
			e.idp.SetTamper(func(c map[string]any) *mockoidcKeypair { c["aud"] = []string{"another-client"}; return nil })
			return oidctest.NewBrowser(e.t).Follow(e.link(aliceAcct, ""))
		}},
		{"token issued to another client that names this one too", http.StatusForbidden, "token-audience", "It was issued to another-client", func(e *env) oidctest.Response {
			// OpenID Connect Core 3.1.3.7: where the token names several audiences, the
			// authorized party (azp) is the client it was issued to.
			e.idp.SignIn(alice())
			e.idp.SetTamper(func(c map[string]any) *mockoidcKeypair {
				c["aud"] = []string{"another-client", e.idp.ClientID}
				c["azp"] = "another-client"
				return nil
			})
			return oidctest.NewBrowser(e.t).Follow(e.link(aliceAcct, ""))
		}},
		{"expired token", http.StatusForbidden, "token-expired", "The identity token had expired", func(e *env) oidctest.Response {
			e.idp.SignIn(alice())
			e.idp.SetTamper(func(c map[string]any) *mockoidcKeypair {
				c["exp"] = time.Now().Add(-time.Minute).Unix()
				return nil
			})
			return oidctest.NewBrowser(e.t).Follow(e.link(aliceAcct, ""))
		}},
		{"token from another issuer", http.StatusForbidden, "token-issuer", "It came from https://idp.elsewhere.example", func(e *env) oidctest.Response {
			e.idp.SignIn(alice())
			e.idp.SetTamper(func(c map[string]any) *mockoidcKeypair { c["iss"] = "https://idp.elsewhere.example"; return nil })
			return oidctest.NewBrowser(e.t).Follow(e.link(aliceAcct, ""))
		}},
		{"token signed with another key", http.StatusForbidden, "token-signature", "not signed with the identity provider", func(e *env) oidctest.Response {
			e.idp.SignIn(alice())
			other := e.idp.OtherKey()
			e.idp.SetTamper(func(map[string]any) *mockoidcKeypair { return other })
			return oidctest.NewBrowser(e.t).Follow(e.link(aliceAcct, ""))
		}},
		{"callback without the PKCE verifier", http.StatusBadRequest, "browser-mismatch", "started in another browser", func(e *env) oidctest.Response {
			// The code reaches a browser that did not start the login: it has no verifier to give.
			e.idp.SignIn(alice())
			var callback string
			oidctest.NewBrowser(e.t).Steps(e.link(aliceAcct, ""), nil, func(u *url.URL) {
				callback = u.String()
				u.RawQuery = "" // the starting browser goes nowhere
			})
			return oidctest.NewBrowser(e.t).Follow(callback)
		}},
		{"callback with another verifier", http.StatusBadGateway, "exchange-refused", "Code challenge did not match", func(e *env) oidctest.Response {
			// The browser's secret is replaced: the verifier derived from it does not match the
			// challenge, and the provider refuses the code.
			e.idp.SignIn(alice())
			b := oidctest.NewBrowser(e.t)
			return b.Steps(e.link(aliceAcct, ""), nil, func(u *url.URL) {
				srv, _ := url.Parse(e.srv.URL + "/auth/")
				cs := b.Client.Jar.Cookies(srv)
				if len(cs) != 1 {
					e.t.Fatalf("cookies: %v", cs)
				}
				cs[0].Value = "not-the-browser-secret"
				cs[0].Path = "/auth/"
				b.Client.Jar.SetCookies(srv, cs)
			})
		}},
		{"provider refuses", http.StatusBadRequest, "provider-error", "access_denied_by_policy", func(e *env) oidctest.Response {
			return oidctest.NewBrowser(e.t).Steps(e.link(aliceAcct, ""), nil, func(u *url.URL) {
				q := u.Query()
				q.Del("code")
				q.Set("error", "access_denied")
				q.Set("error_description", "access_denied_by_policy")
				u.RawQuery = q.Encode()
			})
		}},
		{"unverified email", http.StatusForbidden, "email-unverified", "not verified", func(e *env) oidctest.Response {
			u := alice()
			u.Unverified = true
			e.idp.SignIn(u)
			return oidctest.NewBrowser(e.t).Follow(e.link(aliceAcct, ""))
		}},
		{"email unverified, said as a string", http.StatusForbidden, "email-unverified", "not verified", func(e *env) oidctest.Response {
			// Amazon Cognito, among others, writes email_verified as "false".
			e.idp.SignIn(alice())
			e.idp.SetTamper(func(c map[string]any) *mockoidcKeypair { c["email_verified"] = "false"; return nil })
			return oidctest.NewBrowser(e.t).Follow(e.link(aliceAcct, ""))
		}},
		{"a linked account signs in as someone else", http.StatusForbidden, "other-person", "linked to alice@acme.example; you signed in as bob@acme.example", func(e *env) oidctest.Response {
			e.idp.SignIn(alice())
			if p := oidctest.NewBrowser(e.t).Follow(e.link(aliceAcct, "")); p.Status != http.StatusOK {
				e.t.Fatalf("first login: %d", p.Status)
			}
			e.idp.SignIn(oidctest.NewUser("sub-bob", "bob@acme.example", "ai-vision", "leads"))
			return oidctest.NewBrowser(e.t).Follow(e.link(aliceAcct, ""))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, storetest.SQLite(t), 0)
			p := c.run(e)
			if p.Status != c.status || !strings.Contains(p.Body, "Reference: "+c.ref) || !strings.Contains(p.Body, c.says) || !strings.Contains(p.Body, "/gpu") {
				t.Errorf("page %d, want %d with %s and %q:\n%s", p.Status, c.status, c.ref, c.says, p.Body)
			}
			if strings.Contains(p.Body, "<p></p>") {
				t.Errorf("the page has an empty paragraph:\n%s", p.Body)
			}
			after := e.linked(aliceAcct)
			if c.ref == "other-person" {
				if after == nil || after.Email != "alice@acme.example" || after.Subject != "sub-alice" {
					t.Errorf("the refused login changed the link: %+v", after)
				}
				return
			}
			if after != nil {
				t.Errorf("a refused login linked the account: %+v", after)
			}
		})
	}
}
