// Package oidctest gives tests a real OpenID provider to sign in at and a browser to do it with:
// github.com/oauth2-proxy/mockoidc running in-process (authorization code flow, PKCE enforced,
// signed ID tokens, refresh and userinfo), people whose groups a test can change while they are
// signed in, a way to tamper with the ID tokens it issues (another audience, issuer, expiry or
// signing key), and a cookie-keeping HTTP client that follows a login link step by step.
package oidctest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"html"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/golang-jwt/jwt/v5"
	"github.com/oauth2-proxy/mockoidc"
)

// Scopes are the scopes the provider knows and a client should ask for (mockoidc puts groups in
// tokens only for the groups scope).
var Scopes = []string{"openid", "email", "profile", "groups"}

// User is a person at the provider. Their groups may change while they are signed in, as when an
// admin removes them from a group; the next refresh or userinfo call sees the change.
type User struct {
	Subject string
	Email   string
	// Unverified marks the email as not verified.
	Unverified bool

	mu     sync.Mutex
	groups []string
}

// NewUser is a person with a verified email and groups.
func NewUser(subject, email string, groups ...string) *User {
	return &User{Subject: subject, Email: email, groups: groups}
}

// SetGroups changes the person's groups at the provider.
func (u *User) SetGroups(groups ...string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.groups = append([]string(nil), groups...)
}

func (u *User) mock() *mockoidc.MockUser {
	u.mu.Lock()
	defer u.mu.Unlock()
	return &mockoidc.MockUser{Subject: u.Subject, Email: u.Email, EmailVerified: !u.Unverified, PreferredUsername: u.Subject,
		Groups: append([]string(nil), u.groups...)}
}

// ID implements mockoidc.User.
func (u *User) ID() string { return u.Subject }

// Userinfo implements mockoidc.User.
func (u *User) Userinfo(scope []string) ([]byte, error) { return u.mock().Userinfo(scope) }

// Claims implements mockoidc.User. An unverified email is said so (email_verified: false), which
// mockoidc itself leaves out.
func (u *User) Claims(scope []string, c *mockoidc.IDTokenClaims) (jwt.Claims, error) {
	claims, err := u.mock().Claims(scope, c)
	if err != nil || !u.Unverified {
		return claims, err
	}
	b, err := json.Marshal(claims)
	if err != nil {
		return nil, err
	}
	m := jwt.MapClaims{}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	m["email_verified"] = false
	return m, nil
}

// Tamper changes an ID token the provider issues: it may change its claims, and return a key to
// sign it with instead of the provider's (nil keeps the provider's).
type Tamper func(claims map[string]any) *mockoidc.Keypair

// Provider is a running mockoidc.
type Provider struct {
	*mockoidc.MockOIDC
	t testing.TB

	mu        sync.Mutex
	tamper    Tamper
	noRefresh bool
	// noRefreshID: refreshes answer without an ID token.
	noRefreshID bool
	// userinfo changes the claims of userinfo answers (nil: as mockoidc gives them).
	userinfo func(claims map[string]any)
	// rotate: each refresh gives a new refresh token and spends the one it was made with.
	rotate  bool
	spent   map[string]bool
	rotated int
}

// Start runs a provider until the test ends.
func Start(t testing.TB) *Provider {
	t.Helper()
	m, err := mockoidc.NewServer(nil)
	if err != nil {
		t.Fatal(err)
	}
	p := &Provider{MockOIDC: m, t: t}
	if err := m.AddMiddleware(p.middleware); err != nil {
		t.Fatal(err)
	}
	ln, err := listen()
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Start(ln, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Shutdown() })
	return p
}

// SignIn queues the person the next authorization signs in as (mockoidc signs in whoever is
// next in line, without a login form).
func (p *Provider) SignIn(u *User) { p.QueueUser(u) }

// SetTamper makes the provider change the ID tokens it issues from now on (nil: stop).
func (p *Provider) SetTamper(f Tamper) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tamper = f
}

// WithoutRefreshTokens makes the provider give out no refresh tokens from now on, as some do
// unless asked for offline access.
func (p *Provider) WithoutRefreshTokens() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.noRefresh = true
}

// WithoutIDTokensOnRefresh makes the provider answer refreshes without an ID token from now on,
// as some do (an ID token is optional there, OpenID Connect Core 12.2); the first sign-in still
// gets one.
func (p *Provider) WithoutIDTokensOnRefresh() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.noRefreshID = true
}

// SetUserinfo makes the provider change the claims of its userinfo answers from now on (nil:
// stop), e.g. leave the groups out as providers do that keep them to ID tokens.
func (p *Provider) SetUserinfo(f func(claims map[string]any)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.userinfo = f
}

// RotateRefreshTokens makes the provider rotate refresh tokens from now on, as Okta and Keycloak
// can: each refresh answers with a new refresh token, and the one it used is refused
// (invalid_grant) if it comes again.
func (p *Provider) RotateRefreshTokens() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rotate, p.spent = true, map[string]bool{}
}

// rotation handles a refresh when refresh tokens rotate: a spent token is refused; any other is
// passed on as mockoidc made it (without the rotation's suffix), and the answer carries a new one.
func (p *Provider) rotation(next http.Handler, w http.ResponseWriter, r *http.Request) bool {
	p.mu.Lock()
	rotate := p.rotate
	p.mu.Unlock()
	if !rotate || r.URL.Path != mockoidc.TokenEndpoint || r.ParseForm() != nil || r.PostForm.Get("grant_type") != "refresh_token" {
		return false
	}
	rt := r.PostForm.Get("refresh_token")
	p.mu.Lock()
	spent := p.spent[rt]
	p.spent[rt] = true
	p.rotated++
	fresh := strings.SplitN(rt, "~", 2)[0] + "~" + strconv.Itoa(p.rotated)
	p.mu.Unlock()
	if spent {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":"invalid_grant","error_description":"refresh token already used"}`))
		return true
	}
	form := r.PostForm
	form.Set("refresh_token", strings.SplitN(rt, "~", 2)[0])
	body := form.Encode()
	r.Body, r.ContentLength = io.NopCloser(strings.NewReader(body)), int64(len(body))
	r.Form, r.PostForm = nil, nil
	rec := httptest.NewRecorder()
	next.ServeHTTP(rec, r)
	out := rec.Body.Bytes()
	if rec.Code == http.StatusOK {
		var resp map[string]any
		if json.Unmarshal(out, &resp) == nil {
			resp["refresh_token"] = fresh
			out, _ = json.Marshal(resp)
		}
	}
	answer(w, rec, out)
	return true
}

// OtherKey is a key the provider does not publish, with the provider's own key id, so a token
// signed with it claims to be the provider's.
func (p *Provider) OtherKey() *mockoidc.Keypair {
	p.t.Helper()
	kp, err := mockoidc.RandomKeypair(2048)
	if err != nil {
		p.t.Fatal(err)
	}
	kp.Kid, err = p.Keypair.KeyID()
	if err != nil {
		p.t.Fatal(err)
	}
	return kp
}

// middleware rewrites the ID token of token responses when a tamper is set.
func (p *Provider) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p.userinfoing(next, w, r) || p.rotation(p.retokening(next), w, r) {
			return
		}
		p.retokening(next).ServeHTTP(w, r)
	})
}

// userinfoing answers a userinfo request with its claims changed as SetUserinfo says; false when
// there is nothing to change.
func (p *Provider) userinfoing(next http.Handler, w http.ResponseWriter, r *http.Request) bool {
	p.mu.Lock()
	change := p.userinfo
	p.mu.Unlock()
	if change == nil || r.URL.Path != mockoidc.UserinfoEndpoint {
		return false
	}
	rec := httptest.NewRecorder()
	next.ServeHTTP(rec, r)
	out := rec.Body.Bytes()
	if rec.Code == http.StatusOK {
		claims := map[string]any{}
		if err := json.Unmarshal(out, &claims); err != nil {
			p.t.Errorf("oidctest: userinfo: %v", err)
		} else {
			change(claims)
			out, _ = json.Marshal(claims)
		}
	}
	answer(w, rec, out)
	return true
}

// retokening is next with its token responses changed as SetTamper and WithoutRefreshTokens say.
func (p *Provider) retokening(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		tamper, noRefresh, noRefreshID := p.tamper, p.noRefresh, p.noRefreshID
		p.mu.Unlock()
		if (tamper == nil && !noRefresh && !noRefreshID) || r.URL.Path != mockoidc.TokenEndpoint {
			next.ServeHTTP(w, r)
			return
		}
		// The token endpoint reads the form parsed here (a rotated refresh comes with a new body).
		refresh := r.ParseForm() == nil && r.PostForm.Get("grant_type") == "refresh_token"
		noID := noRefreshID && refresh
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		if rec.Code == http.StatusOK {
			body = p.retoken(body, tamper, noRefresh, noID)
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.Code)
		_, _ = w.Write(body)
	})
}

func (p *Provider) retoken(body []byte, tamper Tamper, noRefresh, noID bool) []byte {
	var resp map[string]any
	if err := json.Unmarshal(body, &resp); err != nil {
		p.t.Errorf("oidctest: token response: %v", err)
		return body
	}
	if noRefresh {
		delete(resp, "refresh_token")
	}
	if noID {
		delete(resp, "id_token")
	}
	if tamper == nil || noID {
		out, _ := json.Marshal(resp)
		return out
	}
	raw, _ := resp["id_token"].(string)
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		return body
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		p.t.Errorf("oidctest: id token: %v", err)
		return body
	}
	claims := jwt.MapClaims{}
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	if err := dec.Decode(&claims); err != nil {
		p.t.Errorf("oidctest: id token claims: %v", err)
		return body
	}
	key := tamper(claims)
	if key == nil {
		key = p.Keypair
	}
	signed, err := key.SignJWT(claims)
	if err != nil {
		p.t.Errorf("oidctest: sign: %v", err)
		return body
	}
	resp["id_token"] = signed
	out, _ := json.Marshal(resp)
	return out
}

// Browser is a person's browser: it keeps cookies and follows redirects one step at a time, so
// a test can look at (or change) each step.
type Browser struct {
	t      testing.TB
	Client *http.Client
}

// NewBrowser is a browser with an empty cookie jar.
func NewBrowser(t testing.TB) *Browser {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &Browser{t: t, Client: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// Response is one answer the browser got.
type Response struct {
	URL      string // what was fetched
	Status   int
	Location string // where a redirect points
	Body     string
}

// Get fetches one URL without following a redirect.
func (b *Browser) Get(u string) Response {
	b.t.Helper()
	resp, err := b.Client.Get(u)
	if err != nil {
		b.t.Fatalf("GET %s: %v", u, err)
	}
	return b.read(u, resp)
}

func (b *Browser) read(u string, resp *http.Response) Response {
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return Response{URL: u, Status: resp.StatusCode, Location: resp.Header.Get("Location"), Body: string(body)}
}

var (
	formRE   = regexp.MustCompile(`<form method="post" action="([^"]+)">`)
	hiddenRE = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`)
)

// HasForm reports whether the page has a form to submit (the button a login link shows).
func (r Response) HasForm() bool { return formRE.MatchString(r.Body) }

// Submit presses the button of the page's form: it posts the form's hidden fields.
func (b *Browser) Submit(r Response) Response {
	b.t.Helper()
	m := formRE.FindStringSubmatch(r.Body)
	if m == nil {
		b.t.Fatalf("no form on %s: %s", r.URL, r.Body)
	}
	action, err := url.Parse(html.UnescapeString(m[1]))
	if err != nil {
		b.t.Fatal(err)
	}
	target := b.parse(r.URL).ResolveReference(action).String()
	form := url.Values{}
	for _, h := range hiddenRE.FindAllStringSubmatch(r.Body, -1) {
		form.Set(html.UnescapeString(h[1]), html.UnescapeString(h[2]))
	}
	resp, err := b.Client.PostForm(target, form)
	if err != nil {
		b.t.Fatalf("POST %s: %v", target, err)
	}
	return b.read(target, resp)
}

// Follow fetches u and follows redirects and the login link's button until a page, and returns it.
func (b *Browser) Follow(u string) Response {
	b.t.Helper()
	r := b.Get(u)
	for range 10 {
		switch {
		case r.Location != "":
			r = b.Get(b.parse(r.URL).ResolveReference(b.parse(r.Location)).String())
		case r.HasForm():
			r = b.Submit(r)
		default:
			return r
		}
	}
	b.t.Fatalf("more than 10 steps from %s", u)
	return Response{}
}

// Open opens a login link and presses its button: the answer is the redirect to the provider,
// or a refusal.
func (b *Browser) Open(link string) Response {
	b.t.Helper()
	r := b.Get(link)
	if !r.HasForm() {
		return r // refused before the button
	}
	return b.Submit(r)
}

// Steps opens a login link and presses its button, lets change alter the provider's
// authorization URL, then the callback URL, and returns the final page. A nil change keeps the URL.
func (b *Browser) Steps(link string, toProvider, toCallback func(*url.URL)) Response {
	b.t.Helper()
	r := b.Open(link)
	if r.Location == "" {
		return r // refused before the provider
	}
	auth := b.parse(r.Location)
	if toProvider != nil {
		toProvider(auth)
	}
	r = b.Get(auth.String())
	if r.Location == "" {
		b.t.Fatalf("the provider did not redirect back: %d %s", r.Status, r.Body)
	}
	cb := b.parse(r.Location)
	if toCallback != nil {
		toCallback(cb)
	}
	return b.Follow(cb.String())
}

func (b *Browser) parse(s string) *url.URL {
	b.t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		b.t.Fatal(err)
	}
	return u
}

// SetQuery sets a query parameter of u.
func SetQuery(u *url.URL, key, value string) {
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
}

func listen() (net.Listener, error) { return net.Listen("tcp", "127.0.0.1:0") }

// answer writes a recorded response with its body changed to out.
func answer(w http.ResponseWriter, rec *httptest.ResponseRecorder, out []byte) {
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.Header().Del("Content-Length")
	w.WriteHeader(rec.Code)
	_, _ = w.Write(out)
}
