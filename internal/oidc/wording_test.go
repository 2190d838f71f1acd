package oidc_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/acme/quartermaster/internal/oidc/oidctest"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// TestAProvidersLongWordsAreCutBetweenLetters: an identity provider that refuses a sign-in in
// another language, at length, has its words shown cut between letters, never inside one (a
// broken character on the page).
func TestAProvidersLongWordsAreCutBetweenLetters(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t), 0)
	said := "Fehler: " + strings.Repeat("ログインは管理者によって拒否されました。", 20)
	page := oidctest.NewBrowser(t).Steps(e.link(aliceAcct, ""), nil, func(u *url.URL) {
		q := u.Query()
		q.Del("code")
		q.Set("error", "access_denied")
		q.Set("error_description", said)
		u.RawQuery = q.Encode()
	})
	if page.Status != http.StatusBadRequest || !strings.Contains(page.Body, "provider-error") {
		t.Fatalf("the page: %d %s", page.Status, page.Body)
	}
	if !utf8.ValidString(page.Body) || strings.ContainsRune(page.Body, utf8.RuneError) {
		t.Fatalf("the page has a broken character: %q", page.Body)
	}
	if !strings.Contains(page.Body, "Fehler: ログインは管理者") || !strings.Contains(page.Body, "…") {
		t.Fatalf("the provider's words, cut: %s", page.Body)
	}
}
