package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot"
	slackbot "github.com/acme/quartermaster/bot/slack"
	"github.com/acme/quartermaster/internal/store/chatstore"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// flakySlack is a Slack Web API that knows people by email and, while down is set, fails every
// message posted to it (HTTP 503), as Slack does in an outage.
type flakySlack struct {
	down   atomic.Bool
	mu     sync.Mutex
	posted map[string][]string // email -> the texts posted to them
	failed int                 // posts refused while down
}

func startFlakySlack(t *testing.T) (*flakySlack, *httptest.Server) {
	f := &flakySlack{posted: map[string][]string{}}
	people := map[string]string{} // Slack id -> email
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = r.ParseForm()
		switch r.URL.Path {
		case "/users.lookupByEmail":
			email := r.Form.Get("email")
			id := "U" + strings.ToUpper(strings.NewReplacer("@", "", ".", "").Replace(email))
			f.mu.Lock()
			people[id] = email
			f.mu.Unlock()
			fmt.Fprintf(w, `{"ok":true,"user":{"id":%q}}`, id)
		case "/chat.postMessage", "/chat.update":
			if f.down.Load() {
				f.mu.Lock()
				f.failed++
				f.mu.Unlock()
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			ch := r.Form.Get("channel")
			f.mu.Lock()
			to := ch
			if e, ok := people[ch]; ok {
				to = e
			}
			if r.URL.Path == "/chat.postMessage" {
				f.posted[to] = append(f.posted[to], r.Form.Get("text")+" "+r.Form.Get("blocks"))
			}
			n := len(f.posted)
			f.mu.Unlock()
			fmt.Fprintf(w, `{"ok":true,"channel":%q,"ts":"1764500000.%06d"}`, ch, n)
		default:
			_, _ = io.WriteString(w, `{"ok":false,"error":"unknown_method"}`)
		}
	}))
	t.Cleanup(srv.Close)
	return f, srv
}

// count is how many messages posted to email say what.
func (f *flakySlack) count(email, what string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, m := range f.posted[email] {
		if strings.Contains(m, what) {
			n++
		}
	}
	return n
}

// TestChangesOfGroupsToldWhileSlackIsDownReachThemOnceItIsBack runs on SQLite and PostgreSQL, with
// Slack down when a re-check finds that someone left their team at the identity provider: what
// that means (to them, "You are no longer in team vision", and to the team's budget owner) waits
// in the outbox and reaches each of them once Slack is back, through the sender loop, as other
// notices do, without the change being told again. Before, it was posted straight to Slack, lost
// there, and the change was marked told all the same.
func TestChangesOfGroupsToldWhileSlackIsDownReachThemOnceItIsBack(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("../../docs/quartermaster.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	pol := strings.NewReplacer("  recheck: 24h\n", "  recheck: 1m\n  scopes: [openid, email, profile, groups]\n").Replace(string(src))
	for name, db := range map[string]func(testing.TB) string{"sqlite": func(testing.TB) string { return "" }, "postgres": storetest.Postgres} {
		t.Run(name, func(t *testing.T) {
			w := newSSOWorldOn(t, pol, db(t))
			ctx := context.Background()
			slack, api := startFlakySlack(t)
			ad, err := slackbot.New(slackbot.Config{BotToken: "xoxb-sso", SigningSecret: "sso-secret", APIURL: api.URL + "/",
				Handler: w.a.Bot, Refs: chatstore.Refs{DB: w.a.Store, Platform: slackbot.Platform}, Logger: storetest.Logger(t), ChannelInterval: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				_ = ad.Close(ctx)
			})
			w.a.Sender = ad
			w.a.Service.Outbox, w.a.Service.SenderName = w.a.Store, senderName() // as serve has it

			alice := w.person("alice", "ai-vision")
			if page := w.follow(alice, w.say(alice, "/gpu login")); page.Status != http.StatusOK {
				t.Fatalf("alice's login: %d %s", page.Status, page.Body)
			}
			alice.idp.SetGroups("staff")
			w.a.SimClk.Advance(2 * time.Minute)

			slack.down.Store(true)
			if rep := w.recheck(); rep.Changed != 1 || rep.Told != 1 {
				t.Fatalf("the re-check while Slack is down: %+v", rep)
			}
			if n := slack.count("alice@acme.example", "no longer in team vision"); n != 0 {
				t.Fatalf("alice heard while Slack was down: %d", n)
			}
			if pending, _, err := w.a.Store.OutboxLag(ctx, w.a.Clock.Now()); err != nil || pending < 2 {
				t.Fatalf("the outbox holds %d notices (%v) while Slack is down, want alice's and dana's", pending, err)
			}
			// Still down at the sender loop's next try: they wait on.
			w.a.SimClk.Advance(5 * time.Second)
			if _, err := w.a.Service.DeliverNotices(ctx); err != nil {
				t.Fatal(err)
			}
			if rep := w.recheck(); rep.Told != 0 {
				t.Fatalf("the change was told again: %+v", rep)
			}

			slack.down.Store(false)
			w.a.SimClk.Advance(10 * time.Second)
			if _, err := w.a.Service.DeliverNotices(ctx); err != nil {
				t.Fatal(err)
			}
			if n := slack.count("alice@acme.example", "You are no longer in team vision"); n != 1 {
				t.Errorf("alice heard %d times that she left team vision once Slack was back, want once: %v", n, slack.posted["alice@acme.example"])
			}
			if n := slack.count("dana@acme.example", "alice@acme.example is no longer in team vision"); n != 1 {
				t.Errorf("dana, vision's budget owner, heard %d times, want once: %v", n, slack.posted["dana@acme.example"])
			}
			if slack.failed == 0 {
				t.Error("nothing was tried while Slack was down")
			}
			// Nothing more goes later.
			w.a.SimClk.Advance(time.Hour)
			if n, err := w.a.Service.DeliverNotices(ctx); err != nil || n != 0 {
				t.Fatalf("sent %d more (%v)", n, err)
			}
		})
	}
}

// TestRepliesOfAResumedCommandMadeWhileSlackIsDownReachThemOnceItIsBack runs on SQLite and
// PostgreSQL: what a command carried by a login link (an approval that needed a fresh login)
// answers to others than who ran it is queued in the outbox, not posted straight to Slack, so
// that Slack being down at that moment delays it instead of losing it: it reaches them once
// Slack is back, once.
func TestRepliesOfAResumedCommandMadeWhileSlackIsDownReachThemOnceItIsBack(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("../../docs/quartermaster.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for name, db := range map[string]func(testing.TB) string{"sqlite": func(testing.TB) string { return "" }, "postgres": storetest.Postgres} {
		t.Run(name, func(t *testing.T) {
			w := newSSOWorldOn(t, string(src), db(t))
			ctx := context.Background()
			slack, api := startFlakySlack(t)
			ad, err := slackbot.New(slackbot.Config{BotToken: "xoxb-sso", SigningSecret: "sso-secret", APIURL: api.URL + "/",
				Handler: w.a.Bot, Refs: chatstore.Refs{DB: w.a.Store, Platform: slackbot.Platform}, Logger: storetest.Logger(t), ChannelInterval: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				_ = ad.Close(ctx)
			})
			w.a.Sender = ad
			w.a.Service.Outbox, w.a.Service.SenderName = w.a.Store, senderName() // as serve has it

			slack.down.Store(true)
			const said = "L-4 was approved by lee@acme.example after a fresh sign-in."
			tellResumed(ctx, w.a, []bot.Reply{{To: "dana@acme.example", Text: said}, {Text: "not addressed: the page shows it"}}, storetest.Logger(t))
			if n := slack.count("dana@acme.example", said); n != 0 {
				t.Fatalf("dana heard while Slack was down: %d", n)
			}
			if pending, _, err := w.a.Store.OutboxLag(ctx, w.a.Clock.Now()); err != nil || pending != 1 {
				t.Fatalf("the outbox holds %d notices (%v) while Slack is down, want dana's", pending, err)
			}
			slack.down.Store(false)
			w.a.SimClk.Advance(10 * time.Second)
			if _, err := w.a.Service.DeliverNotices(ctx); err != nil {
				t.Fatal(err)
			}
			if n := slack.count("dana@acme.example", said); n != 1 {
				t.Errorf("dana heard %d times once Slack was back, want once: %v", n, slack.posted["dana@acme.example"])
			}
			w.a.SimClk.Advance(time.Hour)
			if n, err := w.a.Service.DeliverNotices(ctx); err != nil || n != 0 {
				t.Fatalf("sent %d more (%v)", n, err)
			}
		})
	}
}
