package oidc

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	gooidc "github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/acme/quartermaster/internal/nfc"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
)

// cookiePrefix names the cookie that ties a login to the browser that started it; the rest of
// the name comes from the login's state, so logins in several tabs do not disturb each other.
const cookiePrefix = "qm_sso_"

// Register serves GET and POST /auth/login and GET /auth/callback on mux.
func (s *Service) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET "+LoginPath, s.handleLink)
	mux.HandleFunc("POST "+LoginPath, s.handleLogin)
	mux.HandleFunc("GET "+CallbackPath, s.handleCallback)
}

// usableLink reads the link a secret names and checks that it can still start a login; when it
// cannot, it has shown the page that says why and says false.
func (s *Service) usableLink(w http.ResponseWriter, r *http.Request, secret string) (*qm.LoginLink, bool) {
	if secret == "" {
		s.refuse(w, pLinkMissing)
		return nil, false
	}
	l, err := s.store.LoginLink(r.Context(), hashOf(secret))
	switch {
	case errors.Is(err, qm.ErrNotFound):
		s.refuse(w, pLinkUnknown)
	case err != nil:
		s.internal(w, "reading a login link", err)
	case !l.OpenedAt.IsZero() || !l.DoneAt.IsZero():
		s.refuse(w, pLinkUsed, fmt.Sprintf("It was opened at %s.", s.at(l.OpenedAt, l.DoneAt)))
	case !s.clock.Now().Before(l.ExpiresAt):
		s.refuse(w, pLinkExpired, fmt.Sprintf("It expired at %s.", s.at(l.ExpiresAt)))
	default:
		return l, true
	}
	return nil, false
}

// handleLink shows what opening a link does, with a button that starts the sign-in. Showing it
// uses nothing up, so a chat platform's link preview (which fetches every link it sees) cannot
// spend the link before its owner opens it.
func (s *Service) handleLink(w http.ResponseWriter, r *http.Request) {
	secret := r.URL.Query().Get("t")
	l, ok := s.usableLink(w, r, secret)
	if !ok {
		return
	}
	// The page's form-action must allow where the button leads; a provider that cannot be
	// reached yet is told on pressing it.
	dctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	if _, err := s.discover(dctx); err != nil {
		s.log.Warn("discovering the identity provider", "err", err)
	}
	lines := []string{fmt.Sprintf("This links %s to your identity at %s.", linkedAccount(l), s.cfg.Organization)}
	if l.ChatEmail == "" {
		// Nothing ties the link to the person who opens it: they must see whose account it links.
		p := platformName(l.Account.Platform)
		lines = append(lines, fmt.Sprintf("Continue only if you asked for this link yourself, in %s, just now: whoever uses that %s account acts as you in Quartermaster.", p, p))
	}
	if l.Resume != "" {
		lines = append(lines, "Once you are signed in, Quartermaster carries out: "+l.Resume)
	}
	s.render(w, page{OK: true, Title: "Sign in to Quartermaster", Lines: lines,
		Form: &linkForm{Action: s.cfg.PublicURL + LoginPath, Secret: secret, Label: "Continue to sign in"},
		Next: fmt.Sprintf("The link works once, until %s.", s.at(l.ExpiresAt))})
}

// handleLogin opens a one-time link: it checks the link, marks it opened, ties the login to this
// browser with a cookie, and sends the browser to the provider with state, nonce and a PKCE
// challenge.
func (s *Service) handleLogin(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	l, ok := s.usableLink(w, r, r.PostFormValue("t"))
	if !ok {
		return
	}
	now := s.clock.Now()
	p, err := s.discover(ctx)
	var wrong *issuerError
	if errors.As(err, &wrong) {
		s.log.Error("single sign-on is set up for another issuer", "err", err)
		s.refuse(w, pIssuerMismatch, fmt.Sprintf("It is set up for %s, but the identity provider there calls itself %s.", clip(wrong.configured, 200), clip(wrong.provider, 200)))
		return
	}
	if err != nil {
		s.log.Error("the identity provider cannot be reached", "err", err)
		s.render(w, page{Title: "The identity provider cannot be reached just now", Next: "Your link still works for a few minutes: try it again shortly, or type /gpu login in chat for a new one.", Ref: "provider-unreachable", Status: http.StatusBadGateway})
		return
	}
	state, err := randomToken()
	if err != nil {
		s.internal(w, "making a state", err)
		return
	}
	browser, err := randomToken()
	if err != nil {
		s.internal(w, "making a browser secret", err)
		return
	}
	opened, err := s.store.OpenLoginLink(ctx, l.Hash, hashOf(state), now)
	if err != nil {
		s.internal(w, "opening a login link", err)
		return
	}
	if !opened { // another request opened it in the meantime
		s.refuse(w, pLinkUsed)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName(state), Value: browser, Path: s.cookiePath(), MaxAge: int(LoginTimeout / time.Second),
		HttpOnly: true, Secure: strings.HasPrefix(s.cfg.PublicURL, "https://"), SameSite: http.SameSiteLaxMode})
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	url := s.oauth(p).AuthCodeURL(state, gooidc.Nonce(derive(browser, "nonce", state)), oauth2.S256ChallengeOption(derive(browser, "pkce", state)))
	http.Redirect(w, r, url, http.StatusSeeOther)
}

// cookiePath is where the browser sends the login's cookie back: the endpoints' folder under the
// public URL's own path (a proxy may serve the service under https://tools.acme.example/qm).
func (s *Service) cookiePath() string {
	u, err := url.Parse(s.cfg.PublicURL)
	if err != nil {
		return "/auth/"
	}
	return strings.TrimSuffix(u.Path, "/") + "/auth/"
}

// cookieName is the name of the cookie of the login carrying state.
func cookieName(state string) string { return cookiePrefix + hashOf(state)[:16] }

// derive makes the login's nonce and PKCE verifier from the browser's secret and the state, so
// that only the browser that started the login can finish it and nothing usable is stored: a
// base64url HMAC-SHA256, 43 characters (a valid PKCE verifier).
func derive(browser, purpose, state string) string {
	m := hmac.New(sha256.New, []byte(browser))
	m.Write([]byte(purpose + "\x00" + state))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// handleCallback finishes a login: it finds the login by its state, checks that this browser
// started it, exchanges the code with the PKCE verifier, verifies the ID token (signature,
// issuer, audience, expiry, nonce) and links the chat account. Any refusal links nothing, and a
// login that got as far as the provider cannot be finished again.
func (s *Service) handleCallback(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	q := r.URL.Query()
	state := q.Get("state")
	if state == "" {
		s.refuse(w, pStateMissing)
		return
	}
	l, err := s.store.LoginLinkByState(ctx, hashOf(state))
	switch {
	case errors.Is(err, qm.ErrNotFound):
		s.refuse(w, pStateUnknown)
		return
	case err != nil:
		s.internal(w, "reading a login", err)
		return
	case !l.DoneAt.IsZero():
		s.refuse(w, pLoginDone)
		return
	}
	clear := &http.Cookie{Name: cookieName(state), Value: "", Path: s.cookiePath(), MaxAge: -1, HttpOnly: true,
		Secure: strings.HasPrefix(s.cfg.PublicURL, "https://"), SameSite: http.SameSiteLaxMode}
	http.SetCookie(w, clear)
	// From here on the login ends one way or the other: a refusal finishes its link for good.
	refuse := func(pr problem, detail ...string) {
		if _, err := s.store.FinishLoginLink(context.WithoutCancel(ctx), l.Hash, s.clock.Now()); err != nil {
			s.log.Error("finishing a refused login", "err", err)
		}
		s.log.Info("login refused", "account", l.Account.String(), "reason", pr.Ref)
		s.refuse(w, pr, detail...)
	}
	now := s.clock.Now()
	if now.Sub(l.OpenedAt) > LoginTimeout {
		refuse(pLoginSlow)
		return
	}
	if e := q.Get("error"); e != "" {
		desc := q.Get("error_description")
		if desc == "" {
			desc = e
		}
		refuse(pProviderError, "It said: "+clip(desc, 300)+".")
		return
	}
	c, err := r.Cookie(cookieName(state))
	if err != nil || c.Value == "" {
		refuse(pBrowser)
		return
	}
	code := q.Get("code")
	if code == "" {
		refuse(pProviderError, "It sent no authorization code.")
		return
	}
	p, err := s.discover(ctx)
	if err != nil {
		s.log.Error("the identity provider cannot be reached", "err", err)
		refuse(pProviderGone)
		return
	}
	// The code is exchanged with the verifier only this browser can derive; the provider checks
	// it against the challenge the login started with.
	tok, err := s.oauth(p).Exchange(s.providerCtx(ctx), code, oauth2.VerifierOption(derive(c.Value, "pkce", state)))
	if unanswered(err) {
		s.log.Error("the identity provider cannot be reached to exchange the code", "account", l.Account.String(), "err", err)
		refuse(pProviderGone)
		return
	}
	if err != nil {
		s.log.Warn("code exchange refused", "account", l.Account.String(), "err", err)
		refuse(pExchangeRefused, "It said: "+clip(providerSays(err), 300)+".")
		return
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		refuse(pNoIDToken)
		return
	}
	idt, err := s.verifier(p).Verify(s.providerCtx(ctx), raw)
	if err != nil && keysUnread(err) {
		// The token could not be checked, which says nothing against it.
		s.log.Error("the identity provider's keys cannot be read", "account", l.Account.String(), "err", err)
		refuse(pProviderGone)
		return
	}
	if err != nil {
		pr, detail := s.whyInvalid(raw, err)
		s.log.Warn("ID token refused", "account", l.Account.String(), "reason", pr.Ref, "err", err)
		refuse(pr, detail)
		return
	}
	if azp := s.otherParty(idt); azp != "" {
		s.log.Warn("ID token refused", "account", l.Account.String(), "reason", pTokenAudience.Ref, "azp", azp)
		refuse(pTokenAudience, "It was issued to "+clip(azp, 200)+", not to Quartermaster's client.")
		return
	}
	if subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(derive(c.Value, "nonce", state))) != 1 {
		refuse(pNonce)
		return
	}
	id, err := s.identity(ctx, p, idt, tok)
	if err != nil {
		var pe *problemError
		if errors.As(err, &pe) {
			refuse(pe.p, pe.detail...)
			return
		}
		s.log.Error("reading the identity", "err", err)
		refuse(pInternal)
		return
	}
	if l.ChatEmail != "" && !policy.SameName(nfc.Name(l.ChatEmail), id.Email) {
		refuse(pOtherAccount, fmt.Sprintf("It was made for the %s account of %s, but you signed in as %s. Nothing was linked.", platformName(l.Account.Platform), l.ChatEmail, id.Email))
		return
	}
	prev, err := s.store.AccountLink(ctx, l.Account)
	if err != nil && !errors.Is(err, qm.ErrNotFound) {
		s.internal(w, "reading an account link", err)
		return
	}
	// A link made at an issuer the service no longer trusts (it moved to another provider, or
	// another authorization server of the same one) gives way to a sign-in here as the same
	// email: the old subject means nothing at the new issuer.
	moved := prev != nil && !sameIssuer(prev.Issuer, idt.Issuer) && policy.SameName(prev.Email, id.Email)
	if prev != nil && !moved && (prev.Subject != idt.Subject || !sameIssuer(prev.Issuer, idt.Issuer)) {
		refuse(pOtherPerson, fmt.Sprintf("This %s account is linked to %s; you signed in as %s. Nothing was changed.", platformName(l.Account.Platform), prev.Email, id.Email))
		return
	}
	sealed, err := s.seal.seal(tok)
	if err != nil {
		s.log.Error("sealing tokens", "err", err)
		sealed = nil
	}
	link := qm.AccountLink{Account: l.Account, Issuer: idt.Issuer, Subject: idt.Subject, Email: id.Email, Groups: id.Groups,
		LoginAt: now, CheckedAt: now, Tokens: sealed}
	done, err := s.store.CompleteLogin(ctx, l.Hash, link, now)
	if err != nil {
		s.internal(w, "linking an account", err)
		return
	}
	if !done {
		s.refuse(w, pLoginDone)
		return
	}
	if err := s.RefreshMembers(ctx); err != nil {
		s.log.Warn("reading group members after a login", "err", err)
	}
	before := prev
	if before == nil {
		// A first sign-in from this chat account: the person's groups were those the provider
		// gave last on another chat account of theirs, if any.
		before = s.otherLatest(ctx, &link)
	}
	if before != nil && id.Read && !id.TooMany && !sameGroups(before.Groups, link.Groups) && !s.foundOnAnother(ctx, before, link.Groups, link.Account) {
		// The sign-in read the groups afresh, as a re-check does: a change it finds means
		// what a re-check's would (a team left, approval messages no longer theirs to decide).
		// Groups the provider left out (none given, too many for a token) say nothing, nor
		// does a change a sign-in or re-check of another chat account of theirs found already.
		s.tellAtSignIn(context.WithoutCancel(ctx), before, &link)
	}
	if s.LoggedIn != nil {
		s.LoggedIn(context.WithoutCancel(ctx), id.Email, now)
	}
	if moved {
		s.log.Info("a link made at another issuer moves to this one", "account", l.Account.String(), "email", id.Email, "from", prev.Issuer, "to", idt.Issuer)
	}
	s.log.Info("account linked", "account", l.Account.String(), "email", id.Email, "groups", len(id.Groups))
	lines := []string{fmt.Sprintf("You are signed in as %s, and %s is linked to it.", id.Email, linkedAccount(l))}
	switch {
	case len(id.Groups) > 0:
		sep := ", "
		for _, g := range id.Groups {
			if strings.Contains(g, ",") { // distinguished names: cn=ml,ou=groups,dc=corp
				sep = "; "
			}
		}
		lines = append(lines, "Your groups at the identity provider: "+strings.Join(id.Groups, sep)+".")
		if s.Teams == nil {
			break
		}
		switch teams, ok := s.Teams(context.WithoutCancel(ctx), id.Email); {
		case !ok:
		case len(teams) == 0:
			lines = append(lines, "As none of them places you in a team, you belong to no team yet; ask a platform admin to add one of your groups to a team in Quartermaster's policy.")
		case len(teams) == 1:
			lines = append(lines, "They place you in team "+teams[0]+".")
		default:
			lines = append(lines, "They place you in teams "+strings.Join(teams[:len(teams)-1], ", ")+" and "+teams[len(teams)-1]+".")
		}
	case id.TooMany:
		s.log.Warn("the identity provider left the groups out of a sign-in: too many groups for a token; filter the groups claim to the groups assigned to the application (docs/sso.md)",
			"account", l.Account.String(), "email", id.Email, "claim", s.cfg.GroupsClaim)
		lines = append(lines, "The identity provider left your groups out of the sign-in because you are in too many groups to fit in it, so you belong to no team yet. "+
			"Show this page to a platform admin: they can send only the groups Quartermaster needs (docs/sso.md, Microsoft Entra ID).")
	default:
		lines = append(lines, "The identity provider lists no groups for you, so you belong to no team yet; ask a platform admin.")
	}
	next := "You can close this page and go back to chat."
	if l.Resume != "" && s.Resume != nil {
		// The login link is the command's delivery: it is done once, however often the page
		// is reloaded or whichever replica finishes the login.
		rctx := qm.WithDeliveryKey(context.WithoutCancel(ctx), "login:"+l.Hash)
		said, done := s.Resume(rctx, l.Account, l.Resume)
		lines = append(lines, said)
		next = "You can close this page."
		if done {
			next = "You can close this page; chat shows the same."
		}
	}
	s.render(w, page{OK: true, Title: "You are signed in", Lines: lines, Next: next})
}

// sameIssuer reports whether two issuers are one: the same text, or Google's issuer with and
// without its scheme (go-oidc accepts accounts.google.com for https://accounts.google.com). It
// compares the issuers of account links, more loosely than a token's issuer is checked
// (issuerAccepted).
func sameIssuer(a, b string) bool {
	norm := func(s string) string { return strings.TrimSuffix(strings.TrimPrefix(s, "https://"), "/") }
	return a == b || norm(a) == norm(b)
}

// identity is what a verified login says about the person.
type identity struct {
	Email  string
	Groups []string
	// TooMany is a provider that left the groups out because there are too many for a token
	// (Microsoft Entra ID's groups overage): no groups does not mean none.
	TooMany bool
	// Read: the groups claim was there, in the ID token or userinfo (empty or not), so the
	// groups say what the provider holds.
	Read bool
}

// problemError is a refusal found while reading the identity.
type problemError struct {
	p      problem
	detail []string
}

func (e *problemError) Error() string { return e.p.Ref }

// identity reads the email and groups from the ID token, or from userinfo when the token lacks
// them (some providers keep groups out of ID tokens).
func (s *Service) identity(ctx context.Context, p *gooidc.Provider, idt *gooidc.IDToken, tok *oauth2.Token) (identity, error) {
	var claims map[string]any
	if err := idt.Claims(&claims); err != nil {
		return identity{}, fmt.Errorf("oidc: ID token claims: %w", err)
	}
	_, hasGroups := claimOf(claims, s.cfg.GroupsClaim)
	var groupsFrom any // userinfo's groups, where the token has none
	tooMany := !hasGroups && overage(claims, s.cfg.GroupsClaim)
	if _, hasEmail := claims["email"]; !hasEmail || !hasGroups {
		if ui, err := p.UserInfo(s.providerCtx(ctx), oauth2.StaticTokenSource(tok)); err == nil {
			var more map[string]any
			if err := ui.Claims(&more); err == nil && more["sub"] == idt.Subject {
				for k, v := range more {
					if claims[k] == nil { // absent, or null: no claim either way
						claims[k] = v
					}
				}
				if g, ok := claimOf(more, s.cfg.GroupsClaim); ok && !hasGroups {
					// The token's groups are absent along their path (a null inside an object
					// the token has): userinfo's are the groups.
					groupsFrom = g
				}
			}
		} else if unanswered(err) || serverError(err) {
			// What the token leaves to userinfo is unknown, not missing: finishing the sign-in
			// without it would link no groups (or refuse an email it did not share).
			s.log.Error("the identity provider's userinfo cannot be reached", "err", err)
			return identity{}, &problemError{p: pProviderGone}
		} else {
			s.log.Info("userinfo not available", "err", err)
		}
	}
	email, _ := claims["email"].(string)
	// As a chat profile's email is read (nfc.Email): in NFC, then A to Z in lower case only.
	email = nfc.Email(email)
	if email == "" || !strings.Contains(email, "@") {
		return identity{}, &problemError{p: pNoEmail}
	}
	if unverified(claims["email_verified"]) {
		return identity{}, &problemError{p: pEmailUnverified, detail: []string{"The provider says " + email + " is not verified."}}
	}
	g, ok := claimOf(claims, s.cfg.GroupsClaim)
	if !ok {
		g = groupsFrom
	}
	id := identity{Email: email, Groups: groupsOf(g), Read: ok || groupsFrom != nil}
	id.TooMany = tooMany && len(id.Groups) == 0
	return id, nil
}

// overage reports whether the provider says it left the groups claim out of a token because the
// person is in too many groups: Microsoft Entra ID then names the claim in _claim_names (pointing
// to Microsoft Graph) or, in some flows, sets hasgroups.
func overage(claims map[string]any, groupsClaim string) bool {
	top, _, _ := strings.Cut(groupsClaim, ".")
	if names, ok := claims["_claim_names"].(map[string]any); ok {
		if _, ok := names[top]; ok {
			return true
		}
	}
	has, _ := claims["hasgroups"].(bool)
	return has && top == "groups"
}

// claimOf is the claim name names: the claim of that name, or else, for a name with dots, the
// claim nested along them (realm_access.roles is Keycloak's realm roles). A name that is a claim
// of its own (https://acme.example/groups) wins over a path, and at each level of a path the
// longest key there wins, so a key with dots of its own is found whole: a client's roles
// resource_access.quartermaster.acme.example.roles, whose client id is quartermaster.acme.example
// (a shorter key is tried where the longer one leads nowhere). A claim written as null is no
// claim: it says nothing, wherever it is read (a sign-in, a re-check).
func claimOf(claims map[string]any, name string) (any, bool) {
	return nested(claims, strings.Split(name, "."))
}

// nested is the value along parts in m, each key made of as many parts (joined by dots) as a key
// of m has, the longest first; false where there is none, or it is null.
func nested(m map[string]any, parts []string) (any, bool) {
	for n := len(parts); n >= 1; n-- {
		v, ok := m[strings.Join(parts[:n], ".")]
		if !ok || v == nil {
			continue
		}
		if n == len(parts) {
			return v, true
		}
		if inner, ok := v.(map[string]any); ok {
			if got, ok := nested(inner, parts[n:]); ok {
				return got, true
			}
		}
	}
	return nil, false
}

// unverified reports whether an email_verified claim says no: false, or "false" as some
// providers (Amazon Cognito) write it. A provider that says nothing vouches for the email.
func unverified(v any) bool {
	switch v := v.(type) {
	case bool:
		return !v
	case string:
		return strings.EqualFold(strings.TrimSpace(v), "false")
	}
	return false
}

// groupsOf reads a groups claim: a list of strings, one string, or an object whose keys are the
// groups (ZITADEL's project roles), in order, each in NFC (composed).
func groupsOf(v any) []string {
	var out []string
	switch g := v.(type) {
	case string:
		if g != "" {
			out = []string{nfc.Name(g)}
		}
	case []any:
		for _, x := range g {
			if s, ok := x.(string); ok && s != "" {
				if s = nfc.Name(s); !policy.Contains(out, s) {
					out = append(out, s)
				}
			}
		}
	case map[string]any:
		var keys []string
		for k := range maps.Keys(g) {
			if k != "" {
				keys = append(keys, nfc.Name(k))
			}
		}
		for _, k := range slices.Sorted(slices.Values(keys)) {
			if !policy.Contains(out, k) {
				out = append(out, k)
			}
		}
	}
	return out
}

// whyInvalid names why an ID token failed verification, in words. go-oidc's errors are read
// only for expiry; the rest is told from the token's own (unverified) claims.
func (s *Service) whyInvalid(raw string, err error) (problem, string) {
	var exp *gooidc.TokenExpiredError
	if errors.As(err, &exp) {
		return pTokenExpired, fmt.Sprintf("It expired at %s.", s.at(exp.Expiry))
	}
	var c struct {
		Issuer   string          `json:"iss"`
		Audience json.RawMessage `json:"aud"`
	}
	parts := strings.Split(raw, ".")
	if len(parts) == 3 {
		if b, derr := base64.RawURLEncoding.DecodeString(parts[1]); derr == nil {
			_ = json.Unmarshal(b, &c)
		}
	}
	if trusted := s.trustedIssuer(); c.Issuer != "" && !issuerAccepted(c.Issuer, trusted) {
		return pTokenIssuer, fmt.Sprintf("It came from %s; Quartermaster trusts only %s.", clip(c.Issuer, 200), trusted)
	}
	var aud []string
	if err := json.Unmarshal(c.Audience, &aud); err != nil {
		var one string
		if json.Unmarshal(c.Audience, &one) == nil {
			aud = []string{one}
		}
	}
	if len(c.Audience) > 0 && !contains(aud, s.cfg.ClientID) {
		return pTokenAudience, "It names " + clip(strings.Join(aud, ", "), 200) + ", not Quartermaster's client."
	}
	if strings.Contains(err.Error(), "signature") {
		return pTokenSignature, ""
	}
	return pTokenInvalid, ""
}

// otherParty is the client an ID token says it was issued to (its authorized party, azp) where
// that is not Quartermaster's: a token naming several audiences may name this client among them
// and still be another's (OpenID Connect Core 3.1.3.7). "" when it is Quartermaster's, or says
// nothing.
func (s *Service) otherParty(idt *gooidc.IDToken) string {
	var c struct {
		AZP string `json:"azp"`
	}
	if err := idt.Claims(&c); err != nil || c.AZP == "" || c.AZP == s.cfg.ClientID {
		return ""
	}
	return c.AZP
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// unanswered reports whether a request to the provider got no answer of its own: the network
// failed, it timed out, or a proxy in front of the provider answered with a server error (5xx).
// An answer with an OAuth error (invalid_grant, invalid_client …) is a refusal, not this.
func unanswered(err error) bool {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		return re.Response != nil && re.Response.StatusCode >= http.StatusInternalServerError
	}
	var ue *url.Error
	return errors.As(err, &ue) || errors.Is(err, context.DeadlineExceeded)
}

// serverError reports whether go-oidc's userinfo request got a server error (5xx) for an answer:
// go-oidc gives only the status line and body in words ("503 Service Unavailable: …").
func serverError(err error) bool {
	m := err.Error()
	return len(m) > 4 && m[0] == '5' && m[1] >= '0' && m[1] <= '9' && m[2] >= '0' && m[2] <= '9' && m[3] == ' '
}

// keysUnread reports whether an ID token failed verification because the provider's published
// keys could not be fetched (go-oidc does not wrap that error, so its words are read): the token
// was never checked, so it is not blamed.
func keysUnread(err error) bool {
	return strings.Contains(err.Error(), "fetching keys")
}

// providerSays is the provider's own words from a refused token request.
func providerSays(err error) string {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		if re.ErrorDescription != "" {
			return re.ErrorDescription
		}
		if re.ErrorCode != "" {
			return re.ErrorCode
		}
	}
	return err.Error()
}

func (s *Service) internal(w http.ResponseWriter, what string, err error) {
	s.log.Error(what, "err", err)
	s.refuse(w, pInternal)
}

// at writes the first non-zero instant in the organisation's time zone, as chat does.
func (s *Service) at(ts ...time.Time) string {
	for _, t := range ts {
		if !t.IsZero() {
			return t.In(s.cfg.Location).Format("15:04 MST on Mon 2 Jan")
		}
	}
	return "some time ago"
}

// linkedAccount names the chat account a login link links, in a sentence: by the email its chat
// profile shows, or else by its id on the platform, since the link cannot vouch that it is the
// reader's.
func linkedAccount(l *qm.LoginLink) string {
	p := platformName(l.Account.Platform)
	switch {
	case l.ChatEmail != "":
		return fmt.Sprintf("the %s account of %s", p, l.ChatEmail)
	case l.Account.Workspace != "":
		return fmt.Sprintf("the %s account with user id %s (workspace %s)", p, clip(l.Account.User, 100), clip(l.Account.Workspace, 100))
	}
	return fmt.Sprintf("the %s account with user id %s", p, clip(l.Account.User, 100))
}

func platformName(p string) string {
	switch p {
	case "slack":
		return "Slack"
	case "discord":
		return "Discord"
	case "console":
		return "console"
	}
	return p
}

// clip shortens s to at most n characters, ending it with "…" when it was cut; it cuts between
// characters, so a provider's words in any language are never left with half a letter.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}
