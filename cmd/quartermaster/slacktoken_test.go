package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/testkit"
)

// slackAuth is a Web API whose auth.test answers body, with the scopes header when it is not
// empty; every other method answers ok.
func slackAuth(t *testing.T, body, scopes string) *httptest.Server {
	return slackAuthSocket(t, body, scopes, `{"ok":true,"url":"wss://example.invalid/link"}`)
}

// slackAuthSocket is slackAuth whose apps.connections.open (Socket Mode) answers socket.
func slackAuthSocket(t *testing.T, body, scopes, socket string) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/apps.connections.open", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, socket)
	})
	mux.HandleFunc("/auth.test", func(w http.ResponseWriter, r *http.Request) {
		if scopes != "" {
			w.Header().Set("X-OAuth-Scopes", scopes)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, body)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"ok":true}`)
	})
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// A bot token Slack refuses (mistyped, from another app, revoked when the app was removed) stops
// serve at start with a sentence naming SLACK_BOT_TOKEN and what Slack said, instead of a service
// whose every user is told to try again in a minute.
func TestServeRefusesABotTokenSlackRefuses(t *testing.T) {
	t.Parallel()
	for _, slackErr := range []string{"invalid_auth", "account_inactive", "token_revoked"} {
		api := slackAuth(t, `{"ok":false,"error":"`+slackErr+`"}`, "")
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		o := serveOptions{listener: ln, slack: slackSettings{BotToken: "xoxb-from-another-app", SigningSecret: "shh", APIURL: api.URL}}
		o.app.flags.db = "sqlite:" + filepath.Join(t.TempDir(), "qm.db")
		started := false
		o.onReady = func(string) { started = true; cancel() }
		err = serve(ctx, o)
		cancel()
		if started || err == nil {
			t.Errorf("%s: serve started (err %v)", slackErr, err)
			continue
		}
		for _, want := range []string{"SLACK_BOT_TOKEN", slackErr, "xoxb-", "OAuth & Permissions"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: the refusal does not say %q: %v", slackErr, want, err)
			}
		}
		if strings.Contains(err.Error(), "xoxb-from-another-app") {
			t.Errorf("the refusal shows the token: %v", err)
		}
	}
}

// A token granted fewer scopes than manifest.yaml asks for (an app made by hand, or a scope
// removed) starts, and the log names each missing scope and what does not work without it.
func TestServeNamesTheScopesTheBotTokenLacks(t *testing.T) {
	t.Parallel()
	api := slackAuth(t, `{"ok":true,"team":"Harbor","team_id":"T9","user":"quartermaster","user_id":"UQM","bot_id":"BQM"}`, "commands,chat:write,users:read")
	o := serveOptions{slack: slackSettings{BotToken: "xoxb-test", SigningSecret: "shh", APIURL: api.URL}}
	got := servedLog(t, o)
	for _, want := range []string{"users:read.email", "chat:write.public", "files:write", "manifest.yaml", "Harbor"} {
		if !strings.Contains(got, want) {
			t.Errorf("the log does not say %q:\n%s", want, got)
		}
	}
	for _, granted := range []string{"commands (", "chat:write (", "users:read ("} {
		if strings.Contains(got, granted) {
			t.Errorf("the log names a granted scope as missing (%s):\n%s", granted, got)
		}
	}
}

// An app-level token Slack refuses stops serve at start naming SLACK_APP_TOKEN, instead of a
// service that answers /healthz while Socket Mode, its only way to hear from Slack, gave up.
func TestServeRefusesAnAppTokenSlackRefuses(t *testing.T) {
	t.Parallel()
	api := slackAuthSocket(t, `{"ok":true,"team":"Harbor","user":"quartermaster"}`, "", `{"ok":false,"error":"invalid_auth"}`)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o := serveOptions{listener: ln, slack: slackSettings{BotToken: "xoxb-test", AppToken: "xapp-1-another-apps", APIURL: api.URL}}
	o.app.flags.db = "sqlite:" + filepath.Join(t.TempDir(), "qm.db")
	started := false
	o.onReady = func(string) { started = true; cancel() }
	err = serve(ctx, o)
	if started || err == nil {
		t.Fatalf("serve started (err %v)", err)
	}
	for _, want := range []string{"SLACK_APP_TOKEN", "invalid_auth", "xapp-", "connections:write"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not say %q: %v", want, err)
		}
	}
	if strings.Contains(err.Error(), "xapp-1-another-apps") {
		t.Errorf("the refusal shows the token: %v", err)
	}
}

// A Slack that cannot be reached at start holds nothing up: serve starts, and the log says it
// could not ask Slack about the token.
func TestServeStartsWhenSlackCannotBeAskedAboutTheToken(t *testing.T) {
	t.Parallel()
	down := nobodyListens(t)
	o := serveOptions{slack: slackSettings{BotToken: "xoxb-test", SigningSecret: "shh", APIURL: down}}
	log := servedLog(t, o)
	if !strings.Contains(log, "cannot ask Slack about the bot token") {
		t.Errorf("the log does not say Slack could not be asked:\n%s", log)
	}
}

// nobodyListens is an http:// address on this machine where nothing listens: a service that
// cannot be reached.
func nobodyListens(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return "http://" + ln.Addr().String()
}

// servedLog is what serve logged from its start with o until it was stopped.
func servedLog(t *testing.T, o serveOptions) string {
	t.Helper()
	var log testkit.SyncBuffer
	o.app.logger = slog.New(slog.NewTextHandler(&log, nil))
	s := startServe(t, o)
	_ = s.stop()
	return log.String()
}
