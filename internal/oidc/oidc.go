// Package oidc is single sign-on with the organisation's OpenID Connect provider (Keycloak, Entra
// ID, Okta, …): the one-time login links that /gpu login hands out, the /auth/login and
// /auth/callback endpoints (authorization code flow with PKCE S256, state and nonce, the ID token
// checked for signature, issuer, audience, expiry and nonce), the account links that tie a chat
// account to the subject, email and groups it proved, the regular re-check of those groups, and
// the identity port (qm.Directory) those links back. It is the only package that imports
// github.com/coreos/go-oidc.
package oidc

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	gooidc "github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/acme/quartermaster/internal/config"
	"github.com/acme/quartermaster/internal/nfc"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
)

// Defaults.
const (
	// LinkTTL is how long a one-time login link can be opened.
	LinkTTL = 10 * time.Minute
	// LoginTimeout is how long a login may take at the provider once its link was opened.
	LoginTimeout = 10 * time.Minute
	// httpTimeout bounds one request to the provider.
	httpTimeout = 15 * time.Second
	// CallbackPath and LoginPath are where the endpoints are served.
	LoginPath    = "/auth/login"
	CallbackPath = "/auth/callback"
)

// wellKnown is where a provider's discovery document lies under its issuer.
const wellKnown = "/.well-known/openid-configuration"

// Environment variables that turn single sign-on on and configure the client.
const (
	EnvIssuer       = "QM_OIDC_ISSUER"
	EnvClientID     = "QM_OIDC_CLIENT_ID"
	EnvClientSecret = "QM_OIDC_CLIENT_SECRET"
	EnvPublicURL    = "QM_PUBLIC_URL"
)

// Config configures single sign-on.
type Config struct {
	Issuer       string // the provider's issuer URL, exactly as its discovery document says it
	ClientID     string
	ClientSecret string
	// PublicURL is where people's browsers reach this service; the provider redirects them to
	// PublicURL + /auth/callback.
	PublicURL   string
	GroupsClaim string   // default policy.DefaultGroupsClaim
	Scopes      []string // default policy.DefaultScopes
	Recheck     time.Duration
	// Organization names the organisation on the pages ("Acme AI").
	Organization string
	// Location is the time zone the pages write times in, as chat does (the policy's timezone);
	// nil is UTC.
	Location *time.Location
	// HTTPClient talks to the provider; nil is a client with a 15-second timeout.
	HTTPClient *http.Client
}

// FromEnv reads the configuration from the environment (through getenv) and the policy's oidc
// section. on is false when QM_OIDC_ISSUER is unset: single sign-on is off.
func FromEnv(getenv func(string) string, p *policy.Policy) (cfg Config, on bool, err error) {
	cfg = Config{Issuer: strings.TrimSpace(getenv(EnvIssuer)), ClientID: strings.TrimSpace(getenv(EnvClientID)),
		ClientSecret: getenv(EnvClientSecret), PublicURL: strings.TrimSpace(getenv(EnvPublicURL))}
	if cfg.Issuer == "" {
		// QM_PUBLIC_URL serves single sign-on alone (its redirect URI): set without the issuer, it
		// is half a configuration like the client's id or secret.
		var set []string
		// The secret is named as it was set: QM_OIDC_CLIENT_SECRET_FILE, where that names its file.
		secret := config.SetAs(EnvClientSecret, getenv)
		for _, v := range []struct{ name, value string }{{EnvClientID, cfg.ClientID}, {secret, cfg.ClientSecret}, {EnvPublicURL, cfg.PublicURL}} {
			if v.value != "" {
				set = append(set, v.name)
			}
		}
		if len(set) > 0 {
			are := "is"
			if len(set) > 1 {
				are = "are"
			}
			names := strings.Join(set, ", ")
			if n := len(set); n > 1 {
				names = strings.Join(set[:n-1], ", ") + " and " + set[n-1]
			}
			return cfg, false, fmt.Errorf("%s %s set but %s is not; set the issuer URL too, e.g. %s=https://keycloak.acme.example/realms/acme, or unset %s to run without single sign-on", names, are, EnvIssuer, EnvIssuer, names)
		}
		return cfg, false, nil
	}
	if p != nil {
		cfg.GroupsClaim, cfg.Scopes, cfg.Recheck, cfg.Organization = p.OIDC.GroupsClaim, p.OIDC.Scopes, p.OIDC.Recheck.Duration, p.Organization
		cfg.Location = p.Location
	}
	return cfg, true, cfg.check()
}

func (c *Config) check() error {
	var missing, examples []string
	if c.ClientID == "" {
		missing, examples = append(missing, EnvClientID), append(examples, EnvClientID+"=quartermaster")
	}
	if c.PublicURL == "" {
		missing, examples = append(missing, EnvPublicURL), append(examples, EnvPublicURL+"=https://quartermaster.acme.example")
	}
	if len(missing) > 0 {
		return fmt.Errorf("single sign-on needs %s as well as %s, e.g. %s (docs/sso.md)", strings.Join(missing, " and "), EnvIssuer, strings.Join(examples, " "))
	}
	for _, s := range []struct{ name, v, example string }{
		{EnvIssuer, c.Issuer, "https://keycloak.acme.example/realms/acme"},
		{EnvPublicURL, c.PublicURL, "https://quartermaster.acme.example"},
	} {
		u, err := url.Parse(s.v)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return fmt.Errorf("%s=%q is not an http(s) URL; e.g. %s=%s", s.name, s.v, s.name, s.example)
		}
	}
	// The discovery document's own address, pasted for the issuer, would have discovery look for
	// another document under it: every login would then say the provider cannot be reached.
	if i := strings.Index(c.Issuer, wellKnown); i >= 0 && strings.Trim(c.Issuer[i+len(wellKnown):], "/") == "" {
		issuer := strings.TrimSuffix(c.Issuer[:i], "/")
		return fmt.Errorf("%s=%s is the provider's discovery document, not its issuer; set %s=%s (the document's \"issuer\")", EnvIssuer, c.Issuer, EnvIssuer, issuer)
	}
	c.PublicURL = strings.TrimSuffix(c.PublicURL, "/")
	if c.GroupsClaim == "" {
		c.GroupsClaim = policy.DefaultGroupsClaim
	}
	if len(c.Scopes) == 0 {
		c.Scopes = policy.DefaultScopes
	}
	if !policy.Contains(c.Scopes, gooidc.ScopeOpenID) {
		c.Scopes = append([]string{gooidc.ScopeOpenID}, c.Scopes...)
	}
	if c.Recheck <= 0 {
		c.Recheck = policy.DefaultRecheck
	}
	if c.Organization == "" {
		c.Organization = "your organisation"
	}
	if c.Location == nil {
		c.Location = time.UTC
	}
	return nil
}

// Store keeps login links and account links (internal/store implements it on PostgreSQL and SQLite).
type Store interface {
	CreateLoginLink(ctx context.Context, l qm.LoginLink) error
	LoginLink(ctx context.Context, hash string) (*qm.LoginLink, error)
	LoginLinkByState(ctx context.Context, stateHash string) (*qm.LoginLink, error)
	OpenLoginLink(ctx context.Context, hash, stateHash string, now time.Time) (bool, error)
	FinishLoginLink(ctx context.Context, hash string, now time.Time) (bool, error)
	CompleteLogin(ctx context.Context, hash string, l qm.AccountLink, now time.Time) (bool, error)
	PruneLoginLinks(ctx context.Context, before time.Time) (int64, error)

	AccountLink(ctx context.Context, a qm.Account) (*qm.AccountLink, error)
	AccountLinksByEmail(ctx context.Context, email string) ([]*qm.AccountLink, error)
	AccountLinksCheckedBefore(ctx context.Context, t time.Time, offset, limit int) ([]*qm.AccountLink, error)
	UpdateAccountGroups(ctx context.Context, a qm.Account, loginAt time.Time, groups []string, checkedAt time.Time, tokens []byte) (bool, error)
	KeepAccountGroups(ctx context.Context, a qm.Account, loginAt, noGroupsAt time.Time, tokens []byte) (bool, error)
	DeleteAccountLink(ctx context.Context, a qm.Account) (bool, error)
	DeleteAccountLinksByEmail(ctx context.Context, email string) (int64, error)

	RecordGroupsChange(ctx context.Context, before qm.AccountLink, after *qm.AccountLink, at time.Time, owner string, until time.Time) (int64, bool, error)
	ClaimGroupsChanges(ctx context.Context, owner string, now time.Time, hold time.Duration, limit int) ([]qm.GroupsChange, error)
	GroupsChangeTold(ctx context.Context, id int64, at time.Time, ns []qm.Notice) ([]int64, bool, error)
	RenewGroupsChanges(ctx context.Context, owner string, until time.Time) error
	ReleaseGroupsChanges(ctx context.Context, owners []string) (int64, error)
	PruneGroupsChanges(ctx context.Context, before time.Time) (int64, error)
	ForgetChatAccount(ctx context.Context, a qm.Account) error
	ForgetChatAccountsOf(ctx context.Context, email string) error
}

// Service is single sign-on: login links, the login endpoints, account links and their re-check.
type Service struct {
	cfg    Config
	store  Store
	clock  qm.Clock
	log    *slog.Logger
	client *http.Client
	seal   *sealer // nil: the provider's tokens are not kept (no client secret to seal them with)

	// Resume runs the command a login link carries (an approval that needed a fresh login) for
	// the account once it has logged in, and says what came of it, in a sentence for the page;
	// done is false when the command was refused (chat then shows nothing of it).
	Resume func(ctx context.Context, a qm.Account, command string) (said string, done bool)
	// GroupsChanged is told when a re-check finds that someone's groups changed; after is nil
	// when the provider no longer honours their sign-in (the account was unlinked). It is told
	// once the re-check pass is done and the groups' members are read again, for every change the
	// pass found, so that it sees every group as it stands after the re-check. Each change is kept
	// in the database with the change itself until it is told, so that one a stopped pass did not
	// tell is told by the next pass that ends (of this process or another replica), once.
	GroupsChanged func(ctx context.Context, before, after *qm.AccountLink)
	// GroupsNotices, where set, says what a change is to tell as notices for the outbox (one
	// recipient each), told at the same time as GroupsChanged: they are written in the
	// transaction that marks the change told, so that a chat platform that is down delays them
	// (the outbox tries them again) and a crash neither loses nor repeats them. Queued is then
	// given their rows, to send them at once.
	GroupsNotices func(ctx context.Context, before, after *qm.AccountLink) []qm.Notice
	Queued        func(ctx context.Context, ids []int64)
	// Tell, where set, queues notices in the outbox in a transaction of their own and sends them
	// (qm.Service.Tell): what a change of groups found at a sign-in tells goes that way.
	Tell func(ctx context.Context, ns ...qm.Notice) error
	// Owner names this process in its claims on the changes it has to tell (serve: host/pid@start);
	// New sets one of its own.
	Owner string
	// Teams, where set, says which teams the groups a sign-in gave place the person (known by
	// email) in, for the page it ends on; false when that cannot be told now.
	Teams func(ctx context.Context, email string) ([]string, bool)
	// LoggedIn is told of every completed sign-in: who it proved, and when.
	LoggedIn func(ctx context.Context, email string, at time.Time)

	members members

	// abandon, when set, stops a re-check pass right after its last change, as a process killed
	// there would (tests).
	abandon bool

	mu       sync.Mutex
	provider *gooidc.Provider
	// issuer is the issuer ID tokens must name: QM_OIDC_ISSUER, or the provider's own spelling
	// of it where the two differ only by a trailing slash.
	issuer string
	// oauthCfg is kept with the provider: it remembers which way of sending the client secret
	// the provider took, so later requests do not try the other way first.
	oauthCfg *oauth2.Config
}

// New makes the service. It does not reach the provider: discovery happens on first use, so a
// provider that is down at start delays logins, not the service.
func New(cfg Config, st Store, clock qm.Clock, logger *slog.Logger) (*Service, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if st == nil || clock == nil {
		return nil, errors.New("oidc: a store and a clock are required")
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Service{cfg: cfg, store: st, clock: clock, log: logger.With("component", "sso"), client: cfg.HTTPClient}
	if tok, err := randomToken(); err == nil {
		s.Owner = "sso-" + tok[:16]
	}
	if s.client == nil {
		s.client = &http.Client{Timeout: httpTimeout}
	}
	if cfg.ClientSecret != "" {
		var err error
		if s.seal, err = newSealer(cfg.ClientSecret); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Config is the service's configuration, defaults filled.
func (s *Service) Config() Config { return s.cfg }

// providerCtx is a context whose requests to the provider go through the service's client.
func (s *Service) providerCtx(ctx context.Context) context.Context {
	return gooidc.ClientContext(ctx, s.client)
}

// discover fetches the provider's discovery document once; a failure is retried on next use.
func (s *Service) discover(ctx context.Context) (*gooidc.Provider, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.provider != nil {
		return s.provider, nil
	}
	// The provider keeps the client for fetching its keys later, not ctx.
	issuer := s.cfg.Issuer
	p, err := gooidc.NewProvider(s.providerCtx(ctx), issuer)
	var mismatch *gooidc.IssuerMismatchError
	if errors.As(err, &mismatch) && strings.TrimSuffix(mismatch.Discovered, "/") == strings.TrimSuffix(issuer, "/") {
		// https://acme.auth0.com against https://acme.auth0.com/: the same provider.
		s.log.Warn("QM_OIDC_ISSUER differs from the provider's issuer only by a trailing slash; using the provider's", "configured", issuer, "provider", mismatch.Discovered)
		issuer = mismatch.Discovered
		p, err = gooidc.NewProvider(s.providerCtx(ctx), issuer)
	}
	if errors.As(err, &mismatch) {
		return nil, &issuerError{configured: mismatch.Provided, provider: mismatch.Discovered}
	}
	if err != nil {
		return nil, fmt.Errorf("oidc: discovery at %s: %w", s.cfg.Issuer, err)
	}
	s.provider, s.issuer = p, issuer
	s.oauthCfg = &oauth2.Config{ClientID: s.cfg.ClientID, ClientSecret: s.cfg.ClientSecret, Endpoint: p.Endpoint(),
		RedirectURL: s.cfg.PublicURL + CallbackPath, Scopes: s.cfg.Scopes}
	return p, nil
}

// issuerError is a provider whose discovery document names another issuer than QM_OIDC_ISSUER:
// the service is set up wrong, and waiting does not help.
type issuerError struct{ configured, provider string }

func (e *issuerError) Error() string {
	return fmt.Sprintf("%s=%s, but the provider's discovery document names the issuer %s; set %s=%s if that is the provider you mean", EnvIssuer, e.configured, e.provider, EnvIssuer, e.provider)
}

// trustedIssuer is the issuer ID tokens must name (see Service.issuer).
func (s *Service) trustedIssuer() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.issuer != "" {
		return s.issuer
	}
	return s.cfg.Issuer
}

// issuerAccepted reports whether an ID token that names the issuer iss passes the issuer check of
// the verifier (go-oidc's IDTokenVerifier) when trusted is the issuer it trusts: the same text, or
// Google's issuer written without its scheme, which go-oidc takes for Google alone. A trailing
// slash more or less is not forgiven there: QM_OIDC_ISSUER's is, at discovery, which makes trusted
// the provider's own spelling. whyInvalid blames the issuer only when this says no, so a refusal
// never says a token came from another issuer when the check took its issuer
// (TestIssuerAcceptedIsTheVerifiersCheck holds it to go-oidc's).
func issuerAccepted(iss, trusted string) bool {
	return iss == trusted || trusted == "https://accounts.google.com" && iss == "accounts.google.com"
}

// oauth is the OAuth 2 client of the discovered provider.
func (s *Service) oauth(*gooidc.Provider) *oauth2.Config {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.oauthCfg
}

func (s *Service) verifier(p *gooidc.Provider) *gooidc.IDTokenVerifier {
	return p.Verifier(&gooidc.Config{ClientID: s.cfg.ClientID, Now: s.clock.Now})
}

// LoginURL makes a one-time login link for a chat account, valid for LinkTTL. chatEmail is the
// email on the account's chat profile, where the platform shows one: the login must then prove
// that email. resume is a command to run for the account once it has logged in ("" for none).
func (s *Service) LoginURL(ctx context.Context, a qm.Account, chatEmail, resume string) (string, time.Time, error) {
	if a.Platform == "" || a.User == "" {
		return "", time.Time{}, qm.Errorf(qm.EINVALID, "this chat platform did not say which account you are, so no login link can be made for it.")
	}
	secret, err := randomToken()
	if err != nil {
		return "", time.Time{}, err
	}
	now := s.clock.Now()
	l := qm.LoginLink{Hash: hashOf(secret), Account: a, ChatEmail: chatEmail, Resume: resume, CreatedAt: now, ExpiresAt: now.Add(LinkTTL)}
	if err := s.store.CreateLoginLink(ctx, l); err != nil {
		return "", time.Time{}, err
	}
	return s.cfg.PublicURL + LoginPath + "?t=" + url.QueryEscape(secret), l.ExpiresAt, nil
}

// Link is a chat account's link, or qm.ErrNotFound. current is false when its groups have not
// been confirmed by the provider for longer than two re-check periods: it needs a new login.
func (s *Service) Link(ctx context.Context, a qm.Account) (l *qm.AccountLink, current bool, err error) {
	l, err = s.store.AccountLink(ctx, a)
	if err != nil {
		return nil, false, err
	}
	return l, s.current(l), nil
}

func (s *Service) current(l *qm.AccountLink) bool {
	return s.clock.Now().Sub(l.CheckedAt) <= 2*s.cfg.Recheck
}

// Logout unlinks a chat account; false when it was not linked.
func (s *Service) Logout(ctx context.Context, a qm.Account) (bool, error) {
	ok, err := s.store.DeleteAccountLink(ctx, a)
	if ok {
		s.forgetMembers(ctx)
	}
	return ok, err
}

// forgetMembers reads the group index again after links were removed, so that people signed
// out are no longer told of the exceptions their groups may decide.
func (s *Service) forgetMembers(ctx context.Context) {
	if err := s.RefreshMembers(ctx); err != nil {
		s.log.Warn("reading group members after an unlink", "err", err)
	}
}

// Unlink is a platform admin's unlink: who is a chat account (platform:workspace:user) or an
// email, whose every chat account is unlinked. It says how many accounts were unlinked.
func (s *Service) Unlink(ctx context.Context, who string) (int64, error) {
	if strings.Count(who, ":") == 2 {
		a, err := qm.ParseAccount(who)
		if err != nil {
			return 0, err
		}
		// Unlinked by an admin, the account is no longer where anyone's notices go either.
		if err := s.store.ForgetChatAccount(ctx, a); err != nil {
			return 0, err
		}
		ok, err := s.store.DeleteAccountLink(ctx, a)
		if ok {
			s.forgetMembers(ctx)
			return 1, err
		}
		return 0, err
	}
	if !strings.Contains(who, "@") {
		return 0, qm.Errorf(qm.EINVALID, "%q is neither an email nor a chat account; e.g. someone@example.com or slack:T024BE7LD:U024BE7LH.", who)
	}
	if err := s.store.ForgetChatAccountsOf(ctx, who); err != nil {
		return 0, err
	}
	n, err := s.store.DeleteAccountLinksByEmail(ctx, who)
	if n > 0 {
		s.forgetMembers(ctx)
	}
	return n, err
}

// Groups implements qm.Directory over the account links: a person, known by the email their
// login proved, has the groups the provider gave most recently, at a login or a re-check of any
// of their chat accounts, while those are current. Someone with no link, or whose groups are no
// longer confirmed, is not known. The groups are in NFC, however the provider wrote them.
func (s *Service) Groups(ctx context.Context, user string) ([]string, bool) {
	links, err := s.store.AccountLinksByEmail(ctx, user)
	if err != nil {
		s.log.Error("reading account links", "user", user, "err", err)
		return nil, false
	}
	if l := s.latest(links); l != nil {
		return nfc.Names(l.Groups), true
	}
	return nil, false
}

// GroupsAsOf implements qm.GroupsAsOf: Groups, and when the provider gave them (the sign-in or
// the last re-check that read them).
func (s *Service) GroupsAsOf(ctx context.Context, user string) ([]string, time.Time, bool) {
	links, err := s.store.AccountLinksByEmail(ctx, user)
	if err != nil {
		s.log.Error("reading account links", "user", user, "err", err)
		return nil, time.Time{}, false
	}
	if l := s.latest(links); l != nil {
		return nfc.Names(l.Groups), l.CheckedAt, true
	}
	return nil, time.Time{}, false
}

// latest is the current link, of one person's, whose groups the provider confirmed last: a
// removal that the re-check of one chat account found holds for the person's other chat
// accounts, whose sign-ins are not due yet. nil when none is current.
func (s *Service) latest(links []*qm.AccountLink) *qm.AccountLink {
	var best *qm.AccountLink
	for _, l := range links {
		if s.current(l) && (best == nil || l.CheckedAt.After(best.CheckedAt)) {
			best = l
		}
	}
	return best
}

// Unknown implements qm.UnknownExplainer: someone Groups does not know is not signed in, or
// signed in but their groups are no longer confirmed; either way /gpu login is the way back,
// not the policy's directory, which single sign-on does not read.
func (s *Service) Unknown(ctx context.Context, user string) error {
	links, err := s.store.AccountLinksByEmail(ctx, user)
	if err != nil {
		return nil
	}
	var last time.Time
	for _, l := range links {
		if l.CheckedAt.After(last) {
			last = l.CheckedAt
		}
	}
	if last.IsZero() {
		return qm.Errorf(qm.EFORBIDDEN, "%s is not signed in with single sign-on, so Quartermaster does not know their team; /gpu login signs them in.", user).WithExample("/gpu login")
	}
	return qm.Errorf(qm.EFORBIDDEN, "the groups of %s could not be confirmed with the identity provider since %s, so Quartermaster does not know their team now; /gpu login signs them in again.",
		user, last.In(s.cfg.Location).Format("Mon 2 Jan 15:04 MST")).WithExample("/gpu login")
}

var (
	_ qm.Directory        = (*Service)(nil)
	_ qm.UnknownExplainer = (*Service)(nil)
	_ qm.GroupsAsOf       = (*Service)(nil)
)

// randomToken is 32 random bytes, base64url without padding (43 characters).
func randomToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("oidc: random: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// hashOf is what the store keeps of a secret: its SHA-256, in hex.
func hashOf(secret string) string {
	h := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(h[:])
}

// SignedIn implements qm.SignIns: whether any chat account of user is linked, its groups current
// or not. A store that cannot be read says yes: the decision that asks fails on it anyway.
func (s *Service) SignedIn(ctx context.Context, user string) bool {
	links, err := s.store.AccountLinksByEmail(ctx, user)
	if err != nil {
		s.log.Error("reading account links", "user", user, "err", err)
		return true
	}
	return len(links) > 0
}

var _ qm.SignIns = (*Service)(nil)
