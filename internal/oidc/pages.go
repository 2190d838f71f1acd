package oidc

import (
	"html/template"
	"net/http"
	"net/url"
	"strings"
)

// problem is one way a login can fail: a reference (shown on the page, listed in docs/sso.md),
// the HTTP status, a title and what to do next.
type problem struct {
	Ref    string
	Status int
	Title  string
	Next   string
}

// Every page a refused login can show. docs/sso.md explains each by its reference.
var (
	pLinkMissing    = problem{"link-missing", http.StatusBadRequest, "This sign-in link is incomplete", "Copy the whole link from chat, or type /gpu login there for a new one."}
	pLinkUnknown    = problem{"link-unknown", http.StatusNotFound, "This sign-in link is not one Quartermaster made, or it was changed", "Type /gpu login in chat for a new link."}
	pLinkUsed       = problem{"link-used", http.StatusGone, "This sign-in link was used already", "Each link works once. Type /gpu login in chat for a new one."}
	pLinkExpired    = problem{"link-expired", http.StatusGone, "This sign-in link has expired", "Links last 10 minutes. Type /gpu login in chat for a new one."}
	pIssuerMismatch = problem{"issuer-mismatch", http.StatusBadGateway, "Quartermaster's single sign-on is set up for another identity provider", "Trying again will not help: show this page to a platform admin, who sets QM_OIDC_ISSUER to the issuer the provider names (docs/sso.md)."}
	pStateMissing   = problem{"state-missing", http.StatusBadRequest, "This page was opened without the sign-in it belongs to", "Start again from chat with /gpu login."}
	pStateUnknown   = problem{"state-unknown", http.StatusBadRequest, "This answer from the identity provider does not belong to any sign-in Quartermaster started", "Its state is unknown or was changed. Start again from chat with /gpu login."}
	pLoginDone      = problem{"login-done", http.StatusGone, "This sign-in was finished already", "If you are not signed in yet, type /gpu login in chat for a new link."}
	pLoginSlow      = problem{"login-slow", http.StatusGone, "This sign-in took too long", "A sign-in must be completed within 10 minutes of opening its link. Type /gpu login in chat for a new one."}
	pBrowser        = problem{"browser-mismatch", http.StatusBadRequest, "This sign-in was started in another browser", "Open the link from chat and finish the sign-in in the same browser, with cookies allowed for this site. Type /gpu login for a new link."}
	// pProviderGone is a provider that stopped answering between the button and the way back
	// (its token endpoint or its keys): the login cannot be finished, but a new one may work soon.
	pProviderGone    = problem{"provider-unreachable", http.StatusBadGateway, "The identity provider cannot be reached just now", "This sign-in could not be finished and nothing was linked. Type /gpu login in chat for a new link in a few minutes; if it keeps failing, show this page to a platform admin."}
	pProviderError   = problem{"provider-error", http.StatusBadRequest, "The identity provider did not sign you in", "Type /gpu login in chat to try again; if it keeps failing, show this page to a platform admin."}
	pExchangeRefused = problem{"exchange-refused", http.StatusBadGateway, "The identity provider refused to complete the sign-in", "Type /gpu login in chat for a new link; if it keeps failing, show this page to a platform admin."}
	pNoIDToken       = problem{"no-id-token", http.StatusBadGateway, "The identity provider sent no identity token", "A platform admin must allow the openid scope for Quartermaster's client (docs/sso.md)."}
	pTokenIssuer     = problem{"token-issuer", http.StatusForbidden, "The identity token came from another issuer", "Nothing was linked. Type /gpu login in chat to sign in at your organisation's identity provider."}
	pTokenAudience   = problem{"token-audience", http.StatusForbidden, "The identity token was issued for another application", "Nothing was linked. Type /gpu login in chat for a new link."}
	pTokenExpired    = problem{"token-expired", http.StatusForbidden, "The identity token had expired", "Nothing was linked. Type /gpu login in chat for a new link; if this repeats, the server's clock may be wrong."}
	pTokenSignature  = problem{"token-signature", http.StatusForbidden, "The identity token is not signed with the identity provider's keys", "Nothing was linked. Type /gpu login in chat for a new link."}
	pTokenInvalid    = problem{"token-invalid", http.StatusForbidden, "The identity token could not be verified", "Nothing was linked. Type /gpu login in chat for a new link."}
	pNonce           = problem{"nonce-mismatch", http.StatusForbidden, "The identity token does not answer this sign-in", "Its nonce does not match the one this sign-in sent, so it may be replayed. Nothing was linked. Type /gpu login in chat for a new link."}
	pNoEmail         = problem{"no-email", http.StatusForbidden, "The identity provider did not share your email address", "Quartermaster knows people by their email. A platform admin must let the client read the email claim (docs/sso.md)."}
	pEmailUnverified = problem{"email-unverified", http.StatusForbidden, "Your email address is not verified at the identity provider", "Verify it there, then type /gpu login in chat for a new link."}
	pOtherAccount    = problem{"other-account", http.StatusForbidden, "This link was made for another chat account", "A login link works only for the person whose chat account asked for it. Type /gpu login in your own chat for a link of your own."}
	pOtherPerson     = problem{"other-person", http.StatusForbidden, "This chat account belongs to someone else", "It is linked to another identity. To link it to a different person, its owner types /gpu logout first."}
	pInternal        = problem{"internal", http.StatusInternalServerError, "Something went wrong on our side", "It has been logged. Please type /gpu login in chat to try again in a minute."}
)

// page is what a login page shows.
type page struct {
	Org    string
	OK     bool
	Title  string
	Lines  []string
	Next   string
	Ref    string
	Status int
	// Form, when set, is a button that posts the link's secret back to start the sign-in.
	Form *linkForm
}

// linkForm is the button on the page a login link opens.
type linkForm struct {
	Action string
	Secret string
	Label  string
}

var pageTmpl = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>{{.Title}} · Quartermaster</title>
<style>
body { font: 16px/1.5 system-ui, sans-serif; max-width: 36rem; margin: 3rem auto; padding: 0 1rem; color: #1d1d1f; }
h1 { font-size: 1.4rem; }
.ok h1 { color: #1a7f37; }
.refused h1 { color: #b42318; }
.next { background: #f5f5f7; padding: .75rem 1rem; border-radius: .5rem; }
.ref { color: #6e6e73; font-size: .85rem; }
button { font: inherit; padding: .6rem 1.2rem; border-radius: .5rem; border: 0; background: #0a66c2; color: #fff; cursor: pointer; }
</style>
</head>
<body class="{{if .OK}}ok{{else}}refused{{end}}">
<p>Quartermaster · {{.Org}} single sign-on</p>
<h1>{{.Title}}</h1>
{{range .Lines}}<p>{{.}}</p>
{{end}}{{with .Form}}<form method="post" action="{{.Action}}"><input type="hidden" name="t" value="{{.Secret}}"><button type="submit">{{.Label}}</button></form>
{{end}}<p class="next">{{.Next}}</p>
{{if .Ref}}<p class="ref">Reference: {{.Ref}}</p>
{{end}}</body>
</html>
`))

func (s *Service) render(w http.ResponseWriter, p page) {
	p.Org = s.cfg.Organization
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", "no-referrer")
	// The form posts here and is sent on to the identity provider, which form-action must allow.
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self' "+s.providerOrigins())
	if p.Status == 0 {
		p.Status = http.StatusOK
	}
	w.WriteHeader(p.Status)
	if err := pageTmpl.Execute(w, p); err != nil {
		s.log.Error("rendering a login page", "err", err)
	}
}

// refuse shows a refusal page: the problem, and what exactly went wrong when there is more to say.
func (s *Service) refuse(w http.ResponseWriter, pr problem, detail ...string) {
	var lines []string
	for _, d := range detail {
		if d != "" {
			lines = append(lines, d)
		}
	}
	s.render(w, page{Title: pr.Title, Lines: lines, Next: pr.Next, Ref: pr.Ref, Status: pr.Status})
}

// providerOrigins are the scheme and host of the issuer and, once the provider is discovered, of
// its authorization endpoint, for the pages' form-action: browsers hold the redirect that follows
// the button to it, and some providers (Amazon Cognito, custom sign-in domains) sign people in on
// another host than the issuer's.
func (s *Service) providerOrigins() string {
	out := []string{origin(s.cfg.Issuer)}
	s.mu.Lock()
	if s.provider != nil {
		if o := origin(s.provider.Endpoint().AuthURL); o != "" && o != out[0] {
			out = append(out, o)
		}
	}
	s.mu.Unlock()
	return strings.Join(out, " ")
}

// origin is the scheme and host of a URL.
func origin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// pNotSetUp is a login page opened where single sign-on is not set up (an old link, from before
// it was turned off): its Next is the sentence RegisterNotSetUp is given.
var pNotSetUp = problem{"sso-not-set-up", http.StatusNotFound, "Single sign-on is not set up", ""}

// RegisterNotSetUp serves GET and POST /auth/login and GET /auth/callback on mux where single
// sign-on is not set up: a 404 page saying why in one sentence (why, as chat words it for /gpu
// login) rather than a bare "404 page not found".
func RegisterNotSetUp(mux *http.ServeMux, why string) {
	show := func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Referrer-Policy", "no-referrer")
		w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
		w.WriteHeader(pNotSetUp.Status)
		_ = pageTmpl.Execute(w, page{Title: pNotSetUp.Title, Next: why, Ref: pNotSetUp.Ref, Status: pNotSetUp.Status})
	}
	mux.HandleFunc("GET "+LoginPath, show)
	mux.HandleFunc("POST "+LoginPath, show)
	mux.HandleFunc("GET "+CallbackPath, show)
}
