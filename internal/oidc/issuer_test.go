package oidc

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	gooidc "github.com/coreos/go-oidc/v3/oidc"
)

// unsignedToken is a compact JWT with claims and a signature no one checks here.
func unsignedToken(t *testing.T, claims map[string]any) string {
	t.Helper()
	b, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"RS256","typ":"JWT"}`)) + "." + enc(b) + "." + enc([]byte("not-a-signature"))
}

// TestIssuerAcceptedIsTheVerifiersCheck: the issuer comparison the refusal page explains with
// takes and refuses exactly the issuers go-oidc's verifier does, for each way an issuer can be
// written slightly differently.
func TestIssuerAcceptedIsTheVerifiersCheck(t *testing.T) {
	cases := []struct{ trusted, iss string }{
		{"https://idp.acme.example/realms/acme", "https://idp.acme.example/realms/acme"},
		{"https://idp.acme.example/realms/acme", "https://idp.acme.example/realms/acme/"},
		{"https://acme.auth0.com/", "https://acme.auth0.com"},
		{"https://acme.auth0.com/", "https://acme.auth0.com/"},
		{"https://idp.acme.example", "idp.acme.example"},
		{"https://idp.acme.example", "HTTPS://idp.acme.example"},
		{"https://accounts.google.com", "accounts.google.com"},
		{"https://accounts.google.com", "https://accounts.google.com"},
		{"https://accounts.google.com", "https://accounts.google.com/"},
		{"accounts.google.com", "https://accounts.google.com"},
		{"https://idp.acme.example", "https://idp.elsewhere.example"},
	}
	for _, c := range cases {
		v := gooidc.NewVerifier(c.trusted, nil, &gooidc.Config{SkipClientIDCheck: true, SkipExpiryCheck: true, InsecureSkipSignatureCheck: true})
		_, err := v.Verify(context.Background(), unsignedToken(t, map[string]any{"iss": c.iss, "sub": "s"}))
		if err != nil && !strings.Contains(err.Error(), "issued by a different provider") {
			t.Fatalf("%q against %q: the verifier failed for another reason: %v", c.iss, c.trusted, err)
		}
		if got, verifier := issuerAccepted(c.iss, c.trusted), err == nil; got != verifier {
			t.Errorf("a token from %q, trusting %q: issuerAccepted says %v, the verifier %v", c.iss, c.trusted, got, verifier)
		}
	}
}

// TestARefusedGoogleTokenIsNotBlamedOnItsIssuer: Google writes its issuer without the scheme at
// times, which the verifier takes; a token from it refused for another reason (here, issued for
// another client) is explained by that reason, not as one from another issuer than Google's.
func TestARefusedGoogleTokenIsNotBlamedOnItsIssuer(t *testing.T) {
	s := &Service{cfg: Config{Issuer: "https://accounts.google.com", ClientID: "qm.apps.googleusercontent.com"}, issuer: "https://accounts.google.com"}
	raw := unsignedToken(t, map[string]any{"iss": "accounts.google.com", "sub": "s", "aud": "another.apps.googleusercontent.com"})
	p, detail := s.whyInvalid(raw, errors.New(`oidc: expected audience "qm.apps.googleusercontent.com" got ["another.apps.googleusercontent.com"]`))
	if p != pTokenAudience || strings.Contains(detail, "trusts only") {
		t.Errorf("refused as %s: %q; want %s, naming the audience", p.Ref, detail, pTokenAudience.Ref)
	}

	raw = unsignedToken(t, map[string]any{"iss": "https://accounts.google.com.evil.example", "sub": "s", "aud": "qm.apps.googleusercontent.com"})
	p, detail = s.whyInvalid(raw, errors.New("oidc: id token issued by a different provider"))
	if p != pTokenIssuer || !strings.Contains(detail, "It came from https://accounts.google.com.evil.example; Quartermaster trusts only https://accounts.google.com.") {
		t.Errorf("a token from another issuer: refused as %s: %q", p.Ref, detail)
	}
}
