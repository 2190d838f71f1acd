package oidc

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// FuzzProviderClaims: whatever an identity provider puts in an ID token (its claims, the groups
// claim's path, a token that does not verify), reading it never panics; the groups read are
// distinct and not empty, and the words that say why a token was refused are short and whole
// (clipped between letters).
func FuzzProviderClaims(f *testing.F) {
	for _, s := range [][2]string{
		{`{"sub":"1","email":"a@acme.example","email_verified":true,"groups":["vision","nlp","vision",""]}`, "groups"},
		{`{"sub":"1","email":"a@acme.example","email_verified":"false","realm_access":{"roles":["r1"]}}`, "realm_access.roles"},
		{`{"sub":"1","resource_access":{"quartermaster.acme.example":{"roles":["x"]},"quartermaster":null}}`, "resource_access.quartermaster.acme.example.roles"},
		{`{"_claim_names":{"groups":"src1"},"hasgroups":true}`, "groups"},
		{`{"urn:zitadel:iam:org:project:roles":{"admin":{"1":"acme"},"":{}}}`, "urn:zitadel:iam:org:project:roles"},
		{`{"https://acme.example/groups":"solo"}`, "https://acme.example/groups"},
		{`{"iss":"https://other.example","aud":["x","y"]}`, "groups"},
		{`{"iss":"accounts.google.com","aud":"qm"}`, "a..b."},
		{`{"aud":7,"groups":{"a":null}}`, "."},
		{`[1]`, ""},
	} {
		f.Add(s[0], s[1], "failed to verify signature")
	}
	f.Add(`{"iss":"`+strings.Repeat("é", 300)+`"}`, "groups", "malformed")
	s := &Service{cfg: Config{Issuer: "https://accounts.google.com", ClientID: "qm", Location: time.UTC}}
	f.Fuzz(func(t *testing.T, claimsJSON, groupsClaim, why string) {
		var claims map[string]any
		if json.Unmarshal([]byte(claimsJSON), &claims) == nil {
			_ = overage(claims, groupsClaim)
			_ = unverified(claims["email_verified"])
			g, _ := claimOf(claims, groupsClaim)
			seen := map[string]bool{}
			for _, name := range groupsOf(g) {
				if name == "" || seen[name] {
					t.Fatalf("claims %s, groups claim %q: groups %q", claimsJSON, groupsClaim, groupsOf(g))
				}
				seen[name] = true
			}
		}
		// The same claims as the payload of a token that failed verification.
		raw := "e30." + base64.RawURLEncoding.EncodeToString([]byte(claimsJSON)) + ".sig"
		for _, tok := range []string{raw, claimsJSON} {
			p, detail := s.whyInvalid(tok, errors.New(why))
			if p.Ref == "" || !utf8.ValidString(detail) || utf8.RuneCountInString(detail) > 500 {
				t.Fatalf("token %q refused as %q: %q", tok, p.Ref, detail)
			}
		}
	})
}
