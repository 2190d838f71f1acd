package oidc_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/oidc"
	"github.com/acme/quartermaster/internal/oidc/oidctest"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/sim"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// FuzzSignInPages: whatever a browser (or anyone) sends to the sign-in pages (any query on
// GET /auth/login and /auth/callback, any body and content type on POST /auth/login, with a
// link's real secret or a started sign-in's real state put in where {t} and {state} are, the
// browser's cookie or none), the answer is a page, never a panic nor a 500, and no chat account
// is linked: only a code the identity provider issued links one.
func FuzzSignInPages(f *testing.F) {
	idp := oidctest.Start(f)
	db := storetest.Open(f, storetest.SQLite(f))
	clock := sim.NewClock(time.Now())
	srv := httptest.NewServer(nil)
	f.Cleanup(srv.Close)
	sso, err := oidc.New(oidc.Config{Issuer: idp.Issuer(), ClientID: idp.ClientID, ClientSecret: idp.ClientSecret,
		PublicURL: srv.URL, Scopes: oidctest.Scopes, Organization: "Fjord Labs"}, db, clock, slog.New(slog.DiscardHandler)) // a logger of f may not be used inside the fuzz target
	if err != nil {
		f.Fatal(err)
	}
	mux := http.NewServeMux()
	sso.Register(mux)
	acct := qm.Account{Platform: "discord", User: "4242"}
	ctx := context.Background()

	for _, s := range []struct {
		path        uint8
		query, body string
		ctype       string
		cookie      bool
	}{
		{0, "t={t}", "", "", false},
		{0, "t=%ff%00&t={t}", "", "", false},
		{1, "", "t={t}", "application/x-www-form-urlencoded", false},
		{1, "", `{"t":"{t}"}`, "application/json", false},
		{1, "t={t}", "t=" + strings.Repeat("x", 5000), "application/x-www-form-urlencoded", false},
		{1, "", "t=%zz", "application/x-www-form-urlencoded; charset=\x00", false},
		{2, "state={state}&code=abc", "", "", true},
		{2, "state={state}&error=access_denied&error_description=%E2%80%AEdeined%00%ff", "", "", true},
		{2, "state={state}&code=", "", "", false},
		{2, "state=&code=x&state={state}", "", "", true},
		{2, "state=%ff", "", "", false},
	} {
		f.Add(s.path, s.query, s.body, s.ctype, s.cookie)
	}
	f.Fuzz(func(t *testing.T, path uint8, query, body, ctype string, cookie bool) {
		u, _, err := sso.LoginURL(ctx, acct, "", "")
		if err != nil {
			t.Fatal(err)
		}
		pu, err := url.Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		secret := pu.Query().Get("t")
		var jar []*http.Cookie
		state := "none"
		if path%3 == 2 {
			// A sign-in started in a browser, whose state and cookie the callback may be given.
			req := httptest.NewRequest(http.MethodPost, oidc.LoginPath, strings.NewReader(url.Values{"t": {secret}}.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			w := httptest.NewRecorder()
			mux.ServeHTTP(w, req)
			if loc, err := url.Parse(w.Header().Get("Location")); err == nil && w.Code == http.StatusSeeOther {
				state = loc.Query().Get("state")
				jar = w.Result().Cookies()
			}
		}
		fill := func(s string) string {
			return strings.NewReplacer("{t}", url.QueryEscape(secret), "{state}", url.QueryEscape(state)).Replace(s)
		}
		target := []string{oidc.LoginPath, oidc.LoginPath, oidc.CallbackPath}[path%3]
		method := []string{http.MethodGet, http.MethodPost, http.MethodGet}[path%3]
		req := httptest.NewRequest(method, target, strings.NewReader(fill(body)))
		req.URL.RawQuery = fill(query)
		if ctype != "" {
			req.Header["Content-Type"] = []string{ctype}
		}
		if cookie {
			for _, c := range jar {
				req.AddCookie(c)
			}
		}
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, req)
		if w.Code >= 500 && w.Code != http.StatusBadGateway {
			t.Fatalf("%s %s?%q with %q (%q): HTTP %d: %s", method, target, query, body, ctype, w.Code, w.Body.String())
		}
		if w.Code != http.StatusSeeOther && !strings.Contains(w.Body.String(), "<title>") {
			t.Fatalf("%s %s?%q with %q (%q): HTTP %d without a page: %q", method, target, query, body, ctype, w.Code, w.Body.String())
		}
		if _, err := db.AccountLink(ctx, acct); !errors.Is(err, qm.ErrNotFound) {
			t.Fatalf("%s %s?%q with %q: the account was linked (%v)", method, target, query, body, err)
		}
	})
}
