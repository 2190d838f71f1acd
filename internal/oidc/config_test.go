package oidc

import (
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/acme/quartermaster/internal/policy"
)

// TestFromEnv: single sign-on is off without an issuer, on with issuer, client id and public
// URL, and a half-set environment says which variable is missing.
func TestFromEnv(t *testing.T) {
	p, err := policy.LoadFile("../../docs/quartermaster.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	if _, on, err := FromEnv(env(nil), p); on || err != nil {
		t.Fatalf("empty environment: on=%v err=%v", on, err)
	}
	cfg, on, err := FromEnv(env(map[string]string{EnvIssuer: "https://idp.acme.example/realms/acme", EnvClientID: "qm", EnvClientSecret: "s3cret", EnvPublicURL: "https://qm.acme.example/"}), p)
	if !on || err != nil || cfg.PublicURL != "https://qm.acme.example" || cfg.GroupsClaim != "groups" || cfg.Recheck != 24*time.Hour || cfg.Scopes[0] != "openid" || cfg.Organization != "Acme AI" {
		t.Fatalf("full environment: %+v %v %v", cfg, on, err)
	}
	for _, c := range []struct {
		kv   map[string]string
		want string
	}{
		{map[string]string{EnvClientID: "qm"}, EnvIssuer + " is not"},
		{map[string]string{EnvPublicURL: "https://qm.orbit.example"}, EnvIssuer + " is not"},
		{map[string]string{EnvIssuer: "https://idp"}, EnvClientID + " and " + EnvPublicURL},
		{map[string]string{EnvIssuer: "https://idp", EnvClientID: "qm", EnvPublicURL: "qm.acme.example"}, "is not an http(s) URL"},
		{map[string]string{EnvIssuer: "idp.acme.example", EnvClientID: "qm", EnvPublicURL: "https://qm"}, "is not an http(s) URL"},
		// The discovery document's address pasted for the issuer: discovery would look for
		// another document under it, and every login would say the provider cannot be reached.
		{map[string]string{EnvIssuer: "https://login.globex.example/tenant-7/v2.0/.well-known/openid-configuration", EnvClientID: "qm", EnvPublicURL: "https://qm"}, EnvIssuer + "=https://login.globex.example/tenant-7/v2.0 "},
		{map[string]string{EnvIssuer: "https://Globex.okta.com/.well-known/openid-configuration/", EnvClientID: "qm", EnvPublicURL: "https://qm"}, EnvIssuer + "=https://Globex.okta.com "},
	} {
		if _, _, err := FromEnv(env(c.kv), p); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.kv, err, c.want)
		}
	}
}

// TestSealing: kept tokens open with the same client secret only, and a changed byte is refused.
func TestSealing(t *testing.T) {
	a, _ := newSealer("secret-one")
	b, _ := newSealer("secret-two")
	tok := &oauth2.Token{RefreshToken: "refresh-me", AccessToken: "access-me", Expiry: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)}
	sealed, err := a.seal(tok)
	if err != nil || strings.Contains(string(sealed), "refresh-me") {
		t.Fatalf("sealed %q %v", sealed, err)
	}
	got, err := a.open(sealed)
	if err != nil || got.RefreshToken != "refresh-me" || got.AccessToken != "access-me" || !got.Expiry.Equal(tok.Expiry) {
		t.Fatalf("opened %+v %v", got, err)
	}
	if _, err := b.open(sealed); err != errUnsealable {
		t.Fatalf("another secret opened it: %v", err)
	}
	sealed[len(sealed)-1] ^= 1
	if _, err := a.open(sealed); err != errUnsealable {
		t.Fatalf("a changed byte opened: %v", err)
	}
	if s, _ := a.seal(&oauth2.Token{}); s != nil {
		t.Fatal("an empty token was sealed")
	}
}

// A setting of single sign-on given without the issuer is refused naming the settings that are
// set (not those that are not), with the issuer written as a variable to set.
func TestHalfASingleSignOnNamesWhatIsSet(t *testing.T) {
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	for _, c := range []struct {
		kv      map[string]string
		want    string
		wantNot []string
	}{
		{map[string]string{EnvPublicURL: "https://qm.marlin.example"}, EnvPublicURL + " is set but " + EnvIssuer + " is not", []string{EnvClientID, EnvClientSecret}},
		{map[string]string{EnvClientID: "qm"}, EnvClientID + " is set but " + EnvIssuer + " is not", []string{EnvPublicURL, EnvClientSecret}},
		{map[string]string{EnvClientID: "qm", EnvPublicURL: "https://qm.marlin.example"}, EnvClientID + " and " + EnvPublicURL + " are set but " + EnvIssuer + " is not", []string{EnvClientSecret}},
	} {
		_, on, err := FromEnv(env(c.kv), nil)
		if on || err == nil {
			t.Errorf("%v: on=%v err=%v, want a refusal", c.kv, on, err)
			continue
		}
		msg := err.Error()
		for _, w := range []string{c.want, "e.g. " + EnvIssuer + "=https://", "or unset " + strings.TrimSuffix(strings.TrimSuffix(c.want, " is set but "+EnvIssuer+" is not"), " are set but "+EnvIssuer+" is not") + " to run without"} {
			if !strings.Contains(msg, w) {
				t.Errorf("%v: %q does not say %q", c.kv, msg, w)
			}
		}
		for _, n := range c.wantNot {
			if strings.Contains(msg, n) {
				t.Errorf("%v: %q names %s, which is not set", c.kv, msg, n)
			}
		}
	}
}
