package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store"
)

// startServe runs serve on a loopback port until the test ends or stop is called; it returns the
// base URL once the service answers.
type served struct {
	url   string
	ticks chan error
	stop  func() error
}

func startServe(t *testing.T, o serveOptions) *served {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o.listener = ln
	if o.app.flags.db == "" {
		o.app.flags.db = "sqlite:" + filepath.Join(t.TempDir(), "qm.db")
	}
	s := &served{ticks: make(chan error, 100)}
	readyc := make(chan string, 1)
	o.onReady = func(addr string) { readyc <- addr }
	o.onTick = func(err error) {
		select {
		case s.ticks <- err:
		default:
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, o) }()
	var once sync.Once
	var result error
	s.stop = func() error {
		once.Do(func() {
			cancel()
			result = <-done
		})
		return result
	}
	t.Cleanup(func() { _ = s.stop() })
	select {
	case addr := <-readyc:
		s.url = "http://" + addr
	case err := <-done:
		t.Fatalf("serve ended before it was ready: %v", err)
	}
	return s
}

func get(t *testing.T, u string) int {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestServeWithoutSlack: with no Slack settings the service still answers its health checks and
// runs the tick loop; the Slack endpoints are absent; it stops cleanly when told to.
func TestServeWithoutSlack(t *testing.T) {
	t.Parallel()
	s := startServe(t, serveOptions{tick: time.Millisecond})
	for _, p := range []string{"/healthz", "/readyz"} {
		if code := get(t, s.url+p); code != http.StatusOK {
			t.Errorf("%s: HTTP %d", p, code)
		}
	}
	resp, err := http.Post(s.url+"/slack/commands", "application/x-www-form-urlencoded", strings.NewReader("text=list"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("/slack/commands without Slack: HTTP %d", resp.StatusCode)
	}
	for range 3 {
		if err := <-s.ticks; err != nil {
			t.Fatalf("tick: %v", err)
		}
	}
	if err := s.stop(); err != nil {
		t.Fatalf("serve: %v", err)
	}
}

// TestServePrunesMessageRefs: where a message was posted more than 30 days ago is forgotten when
// the service starts; a recent one is kept.
func TestServePrunesMessageRefs(t *testing.T) {
	t.Parallel()
	db := "sqlite:" + filepath.Join(t.TempDir(), "qm.db")
	ctx := context.Background()
	st, err := store.Open(ctx, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for i, at := range []time.Time{now.Add(-40 * 24 * time.Hour), now.Add(-time.Hour)} {
		if err := st.SaveMessageRef(ctx, store.MessageRef{Platform: "slack", Ref: "approval:L-1", Channel: "C1",
			MessageID: fmt.Sprint(i), CreatedAt: at}); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	type pruned struct {
		n   int64
		err error
	}
	passes := make(chan pruned, 1)
	startServe(t, serveOptions{app: appOptions{flags: commonFlags{db: db}},
		onPrune: func(n int64, err error) { passes <- pruned{n, err} }})
	if p := <-passes; p.err != nil || p.n != 1 {
		t.Fatalf("first prune: forgot %d, err %v; want 1", p.n, p.err)
	}
	st, err = store.Open(ctx, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	refs, err := st.MessageRefs(ctx, "slack", "approval:L-1")
	if err != nil {
		t.Fatal(err)
	}
	if len(refs) != 1 || refs[0].MessageID != "1" {
		t.Fatalf("message refs after start: %+v; want only the recent one", refs)
	}
}

// TestServeSlackSettings: half a Slack configuration is refused with a sentence saying what to set.
func TestServeSlackSettings(t *testing.T) {
	t.Parallel()
	for _, s := range []slackSettings{{SigningSecret: "s"}, {AppToken: "xapp"}, {BotToken: "xoxb"}} {
		o := serveOptions{slack: s, listener: nil, addr: "127.0.0.1:0"}
		o.app.flags.db = "sqlite:" + filepath.Join(t.TempDir(), "qm.db")
		err := serve(context.Background(), o)
		if err == nil || !strings.Contains(err.Error(), "SLACK_") {
			t.Errorf("%+v: %v", s, err)
		}
	}
	var stderr strings.Builder
	// Its example names the policy serve needs where none is set (TestServesExampleGivesAPolicyOrTheDemo).
	eg := "e.g. quartermaster serve"
	if os.Getenv("QM_POLICY") == "" {
		eg += " --policy " + installedPolicyPath(t)
	}
	if code := run(context.Background(), []string{"serve", "extra"}, nil, io.Discard, &stderr); code != 2 || !strings.Contains(stderr.String(), "takes no more words") || !strings.HasSuffix(strings.TrimSpace(stderr.String()), eg) {
		t.Errorf("serve extra: exit %d, %q", code, stderr.String())
	}
}

// slackAPI is a small fake of Slack's Web API and of response URLs.
type slackAPI struct {
	*httptest.Server
	answers chan string
}

func newSlackAPI(t *testing.T) *slackAPI { return newSlackAPIFor(t, "alice@acme.example") }

// newSlackAPIFor is newSlackAPI whose users.info shows email on every profile.
func newSlackAPIFor(t *testing.T, email string) *slackAPI {
	f := &slackAPI{answers: make(chan string, 10)}
	mux := http.NewServeMux()
	mux.HandleFunc("/users.info", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"ok":true,"user":{"id":%q,"profile":{"email":%q}}}`, r.Form.Get("user"), email)
	})
	mux.HandleFunc("/response/", func(w http.ResponseWriter, r *http.Request) {
		var m struct{ Text string }
		_ = json.NewDecoder(r.Body).Decode(&m)
		f.answers <- m.Text
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"ok":true}`)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"ok":true,"channel":"D1","ts":"1.1"}`)
	})
	f.Server = httptest.NewServer(mux)
	t.Cleanup(f.Close)
	return f
}

func signedCommand(t *testing.T, base, secret, text, trigger, responseURL string) int {
	t.Helper()
	body := url.Values{"command": {"/gpu"}, "text": {text}, "user_id": {"UALICE"}, "channel_id": {"C1"},
		"trigger_id": {trigger}, "response_url": {responseURL}}.Encode()
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	m := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(m, "v0:%s:%s", ts, body)
	req, _ := http.NewRequest(http.MethodPost, base+"/slack/commands", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Slack-Request-Timestamp", ts)
	req.Header.Set("X-Slack-Signature", "v0="+hex.EncodeToString(m.Sum(nil)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestServeSlack: with Slack configured, a signed command reaches the lease service through the
// service's own wiring; stopping right after it lets its answer go out first; the lease is in
// the database.
func TestServeSlack(t *testing.T) {
	t.Parallel()
	api := newSlackAPI(t)
	db := "sqlite:" + filepath.Join(t.TempDir(), "qm.db")
	o := serveOptions{slack: slackSettings{BotToken: "xoxb-test", SigningSecret: "shh", APIURL: api.URL}}
	o.app.flags.db = db
	s := startServe(t, o)
	if code := signedCommand(t, s.url, "wrong", "request 1 interactive for 2h", "T1", api.URL+"/response/1"); code != http.StatusUnauthorized {
		t.Fatalf("a wrongly signed command: HTTP %d", code)
	}
	if code := signedCommand(t, s.url, "shh", "request 1 interactive for 2h", "T2", api.URL+"/response/2"); code != http.StatusOK {
		t.Fatalf("HTTP %d", code)
	}
	if err := s.stop(); err != nil {
		t.Fatalf("serve: %v", err)
	}
	select {
	case a := <-api.answers:
		if !strings.Contains(a, "L-1 is active") {
			t.Errorf("answer %q", a)
		}
	default:
		t.Fatal("the service stopped before answering the command it had acknowledged")
	}
	ls := leasesIn(t, db)
	if len(ls) != 1 || ls[0].User != "alice@acme.example" || ls[0].RequestKey != "slack:T2" {
		t.Fatalf("leases = %+v", ls)
	}
}

// TestASlackEmailIsFoldedAsThePolicyFoldsIt: a Slack profile email with a capital letter other
// than A to Z (Zoë.Ñúñez@acme.example) names the person the policy's directory lists with that
// email: Slack's side lowers A to Z alone, as the policy, single sign-on and Discord do, instead
// of every letter, which made her zoë.ñúñez@acme.example, someone the directory does not know.
func TestASlackEmailIsFoldedAsThePolicyFoldsIt(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("../../docs/quartermaster.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	pol := strings.Replace(string(src), "directory:\n", "directory:\n  - {user: Zoë.Ñúñez@acme.example, groups: [ai-vision]}\n", 1)
	path := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(path, []byte(pol), 0o644); err != nil {
		t.Fatal(err)
	}
	api := newSlackAPIFor(t, "Zoë.Ñúñez@acme.example")
	db := "sqlite:" + filepath.Join(t.TempDir(), "qm.db")
	o := serveOptions{slack: slackSettings{BotToken: "xoxb-test", SigningSecret: "shh", APIURL: api.URL}}
	o.app.flags.db, o.app.flags.policy = db, path
	s := startServe(t, o)
	if code := signedCommand(t, s.url, "shh", "request 1 interactive for 2h", "T1", api.URL+"/response/1"); code != http.StatusOK {
		t.Fatalf("HTTP %d", code)
	}
	if a := <-api.answers; !strings.Contains(a, "L-1 is active") {
		t.Fatalf("Zoë was answered %q", a)
	}
	if err := s.stop(); err != nil {
		t.Fatalf("serve: %v", err)
	}
	ls := leasesIn(t, db)
	if len(ls) != 1 || ls[0].User != "zoë.Ñúñez@acme.example" {
		t.Fatalf("leases %+v (%v); want L-1 held by zoë.Ñúñez@acme.example", ls, err)
	}
}

// leasesIn reads every lease in the database at db.
func leasesIn(t *testing.T, db string) []*qm.Lease {
	t.Helper()
	st, err := store.Open(context.Background(), db, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var ls []*qm.Lease
	if err := st.View(context.Background(), func(tx qm.Tx) error {
		ls, err = tx.ListLeases(context.Background(), qm.LeaseFilter{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return ls
}
