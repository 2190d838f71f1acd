package oidc_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/oidc/oidctest"
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
