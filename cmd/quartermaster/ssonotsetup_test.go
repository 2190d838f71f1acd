package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// Without single sign-on, an old login link (/auth/login, and the way back from the provider)
// still answers 404, but with a page saying in one sentence what /gpu login says in chat: single
// sign-on is not set up on this install, and who turns it on.
func TestALoginLinkWithoutSingleSignOnSaysItIsNotSetUp(t *testing.T) {
	t.Parallel()
	a, err := NewApp(context.Background(), appOptions{flags: commonFlags{policy: "../../commands/testdata/kolkata.yaml", db: "sqlite:" + t.TempDir() + "/qm.db"},
		simClock: true, start: time.Now().UTC(), logger: storetest.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	mux := http.NewServeMux()
	if sso, err := setupSSO(a, func(string) string { return "" }, mux, storetest.Logger(t)); err != nil || sso != nil {
		t.Fatalf("setupSSO without QM_OIDC_ISSUER: %v, %v", sso, err)
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	rs := a.Bot.Handle(t.Context(), bot.Request{User: "ayu@kestrel.example", Text: "/gpu login"})
	if len(rs) == 0 {
		t.Fatal("/gpu login: no answer")
	}
	_, why, ok := strings.Cut(rs[0].PlainText(), "is not offered here: ")
	why, _, _ = strings.Cut(why, " Example: ")
	why = strings.TrimSuffix(strings.TrimSpace(why), ".")
	if !ok || !strings.Contains(why, "single sign-on is not set up") {
		t.Fatalf("/gpu login answered %q", rs[0].PlainText())
	}
	want := strings.ToUpper(why[:1]) + why[1:] + "."

	for _, c := range []struct{ method, path string }{{"GET", "/auth/login?t=Zm9vYmFy"}, {"POST", "/auth/login"}, {"GET", "/auth/callback?state=x&code=y"}} {
		req, _ := http.NewRequest(c.method, srv.URL+c.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") || !strings.Contains(string(body), want) {
			t.Errorf("%s %s: %d %s\n%s\nwant 404 and a page saying %q", c.method, c.path, resp.StatusCode, resp.Header.Get("Content-Type"), body, want)
		}
	}
}
