package oidc_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/oidc"
	"github.com/acme/quartermaster/internal/oidc/oidctest"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// outage is the network between the service and the provider: while fail says so for a request,
// the provider does not answer it (the connection is refused), or answers with status.
type outage struct {
	mu     sync.Mutex
	fail   func(*http.Request) bool
	status int // 0: no answer at all
}

func (o *outage) RoundTrip(r *http.Request) (*http.Response, error) {
	o.mu.Lock()
	fail, status := o.fail, o.status
	o.mu.Unlock()
	if fail == nil || !fail(r) {
		return http.DefaultTransport.RoundTrip(r)
	}
	if status == 0 {
		return nil, errors.New("dial tcp 192.0.2.7:443: connect: connection refused")
	}
	return &http.Response{StatusCode: status, Status: fmt.Sprintf("%d %s", status, http.StatusText(status)), Header: http.Header{"Content-Type": {"text/html"}},
		Body: io.NopCloser(strings.NewReader("<html>upstream unavailable</html>")), Request: r}, nil
}

func (o *outage) set(status int, fail func(*http.Request) bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.fail, o.status = fail, status
}

// TestAProviderThatCannotBeReachedOnTheWayBack: when the provider's token endpoint or its keys
// cannot be reached as the browser comes back from it (no answer, or a 5xx from its proxy), the
// page says the identity provider cannot be reached just now and to ask for a new link shortly,
// not that the provider refused the sign-in or that the token is forged, and shows no error of
// the service's HTTP client; nothing is linked. Once the provider answers again, a new link
// signs in.
func TestAProviderThatCannotBeReachedOnTheWayBack(t *testing.T) {
	for _, c := range []struct {
		name, path string
		status     int
	}{
		{"token endpoint, no answer", "/token", 0},
		{"token endpoint, 503", "/token", http.StatusServiceUnavailable},
		{"keys, no answer", "/jwks", 0},
		{"keys, 502", "/jwks", http.StatusBadGateway},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			net := &outage{}
			// A service that has not fetched the provider's keys yet, as after a start.
			e := newEnvWith(t, storetest.SQLite(t), time.Hour, "", func(cfg *oidc.Config) {
				cfg.HTTPClient = &http.Client{Transport: net, Timeout: 5 * time.Second}
			})
			sora := oidctest.NewUser("sub-sora", "sora@globex.example", "ai-language")
			e.idp.SignIn(sora)
			p := oidctest.NewBrowser(t).Steps(e.link(aliceAcct, ""), nil, func(*url.URL) {
				net.set(c.status, func(r *http.Request) bool { return strings.Contains(r.URL.Path, c.path) })
			})
			net.set(0, nil)
			if p.Status != http.StatusBadGateway || !strings.Contains(p.Body, "Reference: provider-unreachable") ||
				!strings.Contains(p.Body, "cannot be reached just now") || !strings.Contains(p.Body, "/gpu login") {
				t.Errorf("page %d:\n%s", p.Status, p.Body)
			}
			for _, not := range []string{"refused to", "not signed with", "dial tcp", "oauth2", "oidc:", "upstream", "<p></p>"} {
				if strings.Contains(p.Body, not) {
					t.Errorf("the page says %q:\n%s", not, p.Body)
				}
			}
			if l := e.linked(aliceAcct); l != nil {
				t.Fatalf("linked: %+v", l)
			}
			// What the page says to do, done once the provider answers again.
			e.idp.SignIn(sora)
			if p := oidctest.NewBrowser(t).Follow(e.link(aliceAcct, "")); p.Status != http.StatusOK || e.linked(aliceAcct) == nil {
				t.Fatalf("a new link once the provider is back: %d %s", p.Status, p.Body)
			}
		})
	}
}

// TestUserinfoThatCannotBeReachedAtSignIn: with a provider that keeps the groups (or the email)
// out of ID tokens, a sign-in reads them from userinfo. When userinfo cannot be reached then, the
// sign-in is not finished as one with no groups, which would take the person's teams away until
// the next re-check and send them to a platform admin, nor refused as a provider that shares no
// email: the page says the provider cannot be reached just now, and the link keeps the groups
// it had. A new link once the provider answers signs in with the groups.
func TestUserinfoThatCannotBeReachedAtSignIn(t *testing.T) {
	for _, c := range []struct {
		name   string
		leave  []string // the claims the ID token leaves to userinfo
		status int
	}{
		{"groups, no answer", []string{"groups"}, 0},
		{"groups, 504", []string{"groups"}, http.StatusGatewayTimeout},
		{"email and groups, no answer", []string{"email", "groups"}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			net := &outage{}
			e := newEnvWith(t, storetest.SQLite(t), time.Hour, "", func(cfg *oidc.Config) {
				cfg.HTTPClient = &http.Client{Transport: net, Timeout: 5 * time.Second}
			})
			e.idp.SetTamper(func(claims map[string]any) *mockoidcKeypair {
				for _, k := range c.leave {
					delete(claims, k)
				}
				return nil
			})
			sora := oidctest.NewUser("sub-sora", "sora@globex.example", "ai-language", "contractors")
			if l := e.login(sora, aliceAcct); l == nil || strings.Join(l.Groups, ",") != "ai-language,contractors" {
				t.Fatalf("first sign-in, groups from userinfo: %+v", l)
			}
			net.set(c.status, func(r *http.Request) bool { return strings.Contains(r.URL.Path, "userinfo") })
			e.idp.SignIn(sora)
			p := oidctest.NewBrowser(t).Follow(e.link(aliceAcct, ""))
			net.set(0, nil)
			if p.Status != http.StatusBadGateway || !strings.Contains(p.Body, "Reference: provider-unreachable") || !strings.Contains(p.Body, "/gpu login") {
				t.Errorf("sign-in while userinfo cannot be reached: %d\n%s", p.Status, p.Body)
			}
			if l := e.linked(aliceAcct); l == nil || strings.Join(l.Groups, ",") != "ai-language,contractors" {
				t.Fatalf("the link after that sign-in: %+v", l)
			}
			e.idp.SignIn(sora)
			if p := oidctest.NewBrowser(t).Follow(e.link(aliceAcct, "")); p.Status != http.StatusOK || !strings.Contains(p.Body, "ai-language, contractors") {
				t.Fatalf("a new link once the provider is back: %d %s", p.Status, p.Body)
			}
		})
	}
}
