package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/internal/oidc"
	"github.com/acme/quartermaster/internal/oidc/oidctest"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store/storetest"
	"github.com/acme/quartermaster/reports/showback"
)

// ssoWorld is the wired product with single sign-on at a real in-process provider: the example
// policy (step_up 5m, groups re-checked every minute), SQLite, the simulated cluster on a clock
// that starts at the real time (the provider signs tokens with it), the login endpoints over
// HTTP, and every notice kept.
type ssoWorld struct {
	t    *testing.T
	a    *App
	sso  *oidc.Service
	idp  *oidctest.Provider
	mu   sync.Mutex
	sent []bot.Reply
}

func newSSOWorld(t *testing.T) *ssoWorld {
	t.Helper()
	src, err := os.ReadFile("../../docs/quartermaster.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	pol := strings.NewReplacer("step_up: 12h", "step_up: 5m", "  recheck: 24h\n", "  recheck: 1m\n  scopes: [openid, email, profile, groups]\n").Replace(string(src))
	return newSSOWorldWith(t, pol)
}

// newSSOWorldWith is newSSOWorld on the policy pol (its text).
func newSSOWorldWith(t *testing.T, pol string) *ssoWorld {
	t.Helper()
	return newSSOWorldOn(t, pol, "")
}

// newSSOWorldOn is newSSOWorldWith on the database db (a SQLite file of its own when empty).
func newSSOWorldOn(t *testing.T, pol, db string) *ssoWorld {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(path, []byte(pol), 0o644); err != nil {
		t.Fatal(err)
	}
	if db == "" {
		db = "sqlite:" + filepath.Join(dir, "qm.db")
	}
	a, err := NewApp(context.Background(), appOptions{flags: commonFlags{policy: path, db: db},
		simClock: true, start: time.Now().UTC(), logger: storetest.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	w := &ssoWorld{t: t, a: a, idp: oidctest.Start(t)}
	a.Sender = bot.SenderFunc(func(_ context.Context, r bot.Reply) error {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.sent = append(w.sent, r)
		return nil
	})
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	env := map[string]string{oidc.EnvIssuer: w.idp.Issuer(), oidc.EnvClientID: w.idp.ClientID, oidc.EnvClientSecret: w.idp.ClientSecret, oidc.EnvPublicURL: srv.URL}
	w.sso, err = setupSSO(a, func(k string) string { return env[k] }, mux, storetest.Logger(t))
	if err != nil || w.sso == nil {
		t.Fatalf("single sign-on did not start: %v", err)
	}
	return w
}

// person is someone at the provider with a Slack account whose profile shows their email.
type person struct {
	idp  *oidctest.User
	acct bot.Account
}

func (w *ssoWorld) person(name string, groups ...string) *person {
	email := name + "@acme.example"
	return &person{idp: oidctest.NewUser("sub-"+name, email, groups...), acct: bot.Account{Platform: "slack", Workspace: "T0ACME", User: "U0" + strings.ToUpper(name)}}
}

// say is the person typing a command in Slack; it returns the answer's text.
func (w *ssoWorld) say(p *person, text string) string {
	w.t.Helper()
	rs := w.a.Bot.Handle(context.Background(), bot.Request{User: p.idp.Email, Account: p.acct, Text: text})
	if len(rs) == 0 {
		w.t.Fatalf("%s: no answer", text)
	}
	return rs[0].PlainText()
}

var loginURL = regexp.MustCompile(`https?://\S+/auth/login\?t=[A-Za-z0-9_-]+`)

// follow opens the login link in an answer, signed in at the provider as p, and returns the page.
func (w *ssoWorld) follow(p *person, answer string) oidctest.Response {
	w.t.Helper()
	u := loginURL.FindString(answer)
	if u == "" {
		w.t.Fatalf("no login link in %q", answer)
	}
	w.idp.SignIn(p.idp)
	return oidctest.NewBrowser(w.t).Follow(u)
}

func (w *ssoWorld) lease(id qm.LeaseID) *qm.Lease {
	w.t.Helper()
	l, err := w.a.Service.Get(context.Background(), id)
	if err != nil {
		w.t.Fatal(err)
	}
	return l
}

func (w *ssoWorld) notices(to string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, r := range w.sent {
		if r.To == to {
			out = append(out, r.Text)
		}
	}
	return strings.Join(out, "\n")
}

func (w *ssoWorld) recheck() oidc.RecheckReport {
	w.t.Helper()
	rep, err := w.sso.Recheck(context.Background())
	if err != nil {
		w.t.Fatal(err)
	}
	// What it told goes out through the outbox, in the background: wait for it.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := w.a.Service.WaitNotices(ctx); err != nil {
		w.t.Fatalf("the re-check's notices are still being sent: %v", err)
	}
	return rep
}

func mustHave(t *testing.T, what, got string, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(got, s) {
			t.Errorf("%s: no %q in %q", what, s, got)
		}
	}
}

// TestSSOEndToEnd drives the product as people in Slack with single sign-on on:
//   - an unlinked account's request gets a login link and nothing else happens; after following
//     it through the provider, the same request is granted for the team of their group;
//   - a budget owner whose login is older than approvals.step_up gets a re-login link in place of
//     the decision, and the approval happens when that login completes (the click is not lost);
//   - taken out of the team's group at the provider, the requester's groups are re-checked: they
//     are refused new leases for the team, their running leases are left alone, and they and the
//     budget owner are told which;
//   - /gpu logout and a platform admin's /gpu unlink end a link.
func TestSSOEndToEnd(t *testing.T) {
	t.Parallel()
	w := newSSOWorld(t)
	ctx := context.Background()
	alice := w.person("alice", "ai-vision")
	dana := w.person("dana", "ai-vision", "leads")

	// Unlinked: a login link, and no lease.
	answer := w.say(alice, "/gpu request 1 interactive for 1h")
	mustHave(t, "unlinked request", answer, "does not know who you are", "nothing was done", "/auth/login?t=", "type your command again")
	if ls, _ := w.a.Service.List(ctx, qm.LeaseFilter{Kind: qm.AnyKind}); len(ls) != 0 {
		t.Fatalf("an unlinked request made leases: %v", ls)
	}
	page := w.follow(alice, answer)
	if page.Status != http.StatusOK || !strings.Contains(page.Body, "You are signed in as alice@acme.example") || !strings.Contains(page.Body, "They place you in team vision.") {
		t.Fatalf("alice's login page: %d %s", page.Status, page.Body)
	}
	answer = w.say(alice, "/gpu request 1 interactive for 1h")
	mustHave(t, "linked request", answer, "L-1 is active")
	if l := w.lease(1); l.Team != "vision" || l.User != "alice@acme.example" || l.State != qm.Active {
		t.Fatalf("L-1: %+v", l)
	}

	// A fresh login approves at once.
	mustHave(t, "dana's /gpu login", w.say(dana, "/gpu login"), "/auth/login?t=")
	if p := w.follow(dana, w.say(dana, "/gpu login")); p.Status != http.StatusOK {
		t.Fatalf("dana's login: %d %s", p.Status, p.Body)
	}
	mustHave(t, "exception", w.say(alice, "/gpu request 2 train for 100h"), "L-2", "dana@acme.example")
	mustHave(t, "fresh approval", w.say(dana, "/gpu approve L-2"), "Approved L-2")

	// Six minutes later (step_up is 5m) the next approval asks for a new login first.
	mustHave(t, "second exception", w.say(alice, "/gpu request 2 train for 100h"), "L-3")
	w.a.SimClk.Advance(6 * time.Minute)
	if rep := w.recheck(); rep.Checked != 2 || rep.Changed != 0 {
		t.Fatalf("re-check before the approval: %+v", rep)
	}
	answer = w.say(dana, "/gpu approve L-3")
	mustHave(t, "stale approval", answer, "needs a sign-in from the last 5m", "yours was 6m ago", "/auth/login?t=", "L-3 is approved as soon as you have")
	if l := w.lease(3); l.State != qm.PendingApproval {
		t.Fatalf("L-3 was decided without a fresh login: %s", l.State)
	}
	page = w.follow(dana, answer)
	if page.Status != http.StatusOK || !strings.Contains(page.Body, "Approved L-3") {
		t.Fatalf("the re-login page does not say L-3 was approved: %d %s", page.Status, page.Body)
	}
	if l := w.lease(3); l.State == qm.PendingApproval || l.DecidedBy != "dana@acme.example" {
		t.Fatalf("L-3 after the re-login: %s decided by %q", l.State, l.DecidedBy)
	}

	// Alice leaves ai-vision at the provider; the next re-check stops new vision leases.
	alice.idp.SetGroups("staff")
	w.a.SimClk.Advance(2 * time.Minute)
	if rep := w.recheck(); rep.Changed != 1 {
		t.Fatalf("re-check after the removal: %+v", rep)
	}
	answer = w.say(alice, "/gpu request 1 interactive for 1h team vision")
	mustHave(t, "request after removal", answer, "not a member of team vision")
	if l := w.lease(1); l.State != qm.Active {
		t.Fatalf("alice's running lease was touched: %s", l.State)
	}
	mustHave(t, "told dana@acme.example", w.notices("dana@acme.example"), "alice@acme.example is no longer in team vision", "so they can start no new leases for it", "left alone and run to their end", "L-1 (active", "L-3")
	mustHave(t, "told alice@acme.example", w.notices("alice@acme.example"), "You are no longer in team vision", "so you can start no new leases for it", "left alone and run to their end", "L-1 (active", "L-3")

	// A platform admin unlinks Dana; Alice signs herself out; neither may act until they log in.
	olga := w.person("olga", "platform")
	if p := w.follow(olga, w.say(olga, "/gpu login")); p.Status != http.StatusOK {
		t.Fatalf("olga's login: %d", p.Status)
	}
	mustHave(t, "unlink by a non-admin", w.say(alice, "/gpu unlink dana@acme.example"), "Only a platform admin")
	mustHave(t, "unlink", w.say(olga, "/gpu unlink dana@acme.example"), "Unlinked 1 chat account of dana@acme.example")
	mustHave(t, "after unlink", w.say(dana, "/gpu approvals"), "does not know who you are", "/auth/login?t=")
	mustHave(t, "logout", w.say(alice, "/gpu logout"), "no longer linked to alice@acme.example")
	mustHave(t, "after logout", w.say(alice, "/gpu list"), "does not know who you are")
	if l := w.lease(1); l.State != qm.Active {
		t.Fatalf("signing out ended a lease: %s", l.State)
	}
	// Help stays open to everyone.
	mustHave(t, "help", w.say(alice, "/gpu help"), "/gpu login", "/gpu logout")
}

// TestServeWithSSO: serve turns single sign-on on from the environment and serves the login
// endpoints; a half-set environment stops it with a sentence naming what is missing.
func TestServeWithSSO(t *testing.T) {
	t.Parallel()
	idp := oidctest.Start(t)
	env := map[string]string{oidc.EnvIssuer: idp.Issuer(), oidc.EnvClientID: idp.ClientID, oidc.EnvClientSecret: idp.ClientSecret, oidc.EnvPublicURL: "https://qm.acme.example"}
	s := startServe(t, serveOptions{getenv: func(k string) string { return env[k] }})
	resp, err := http.Get(s.url + "/auth/login")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET /auth/login without a link: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	delete(env, oidc.EnvPublicURL)
	err = serve(context.Background(), serveOptions{getenv: func(k string) string { return env[k] },
		app: appOptions{flags: commonFlags{db: "sqlite:" + filepath.Join(t.TempDir(), "qm.db")}}})
	if err == nil || !strings.Contains(err.Error(), "QM_PUBLIC_URL") {
		t.Fatalf("serve without QM_PUBLIC_URL: %v", err)
	}
}

// TestSSOFirstLoginStartsTimeToFirstGPU: a team's time to first GPU in the showback runs from the
// first time anyone of it signed in, when that came before its first request; a later sign-in
// does not move it.
func TestSSOFirstLoginStartsTimeToFirstGPU(t *testing.T) {
	t.Parallel()
	w := newSSOWorld(t)
	ctx := context.Background()
	maya := w.person("maya", "ai-language")
	loggedIn := w.a.Clock.Now()
	if p := w.follow(maya, w.say(maya, "/gpu login")); p.Status != http.StatusOK {
		t.Fatalf("maya's login: %d %s", p.Status, p.Body)
	}
	w.a.SimClk.Advance(2 * time.Minute)
	w.recheck()
	if p := w.follow(maya, w.say(maya, "/gpu login")); p.Status != http.StatusOK {
		t.Fatalf("maya's second login: %d %s", p.Status, p.Body)
	}
	mustHave(t, "request", w.say(maya, "/gpu request 1 interactive for 1h"), "L-1 is active")
	r, err := w.a.reports().Report(ctx, showback.WeekOf(w.a.Clock.Now(), w.a.Policy.Location), showback.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tm := range r.Teams {
		if tm.Name != "language" {
			continue
		}
		if tm.FirstLogin == nil || tm.FirstLogin.Sub(loggedIn).Abs() > time.Second || tm.TimeToFirstGPU == nil || tm.TimeToFirstGPU.Duration().Round(time.Minute) != 2*time.Minute {
			t.Fatalf("team language: first login %v (signed in at %v), time to first GPU %v; want 2m from the first sign-in", tm.FirstLogin, loggedIn, tm.TimeToFirstGPU)
		}
		mustHave(t, "the showback", r.Text(), "New team: language asked for GPUs for the first time", "(first signed in on ", "time to first GPU 2m")
		return
	}
	t.Fatalf("no team language in the showback: %+v", r.Teams)
}
