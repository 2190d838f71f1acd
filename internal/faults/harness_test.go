package faults_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/store/storetest"
	"github.com/acme/quartermaster/internal/testkit"
)

// binary is the quartermaster binary the tests run: QM_FAULTS_BINARY when set (an older build,
// to show a test fails on it), else one built from this checkout in TestMain.
var binary string

func TestMain(m *testing.M) {
	binary = os.Getenv("QM_FAULTS_BINARY")
	var dir string
	if binary == "" {
		var err error
		dir, err = os.MkdirTemp("", "qm-faults-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		binary = filepath.Join(dir, "quartermaster")
		out, err := exec.Command("go", "build", "-o", binary, "../../cmd/quartermaster").CombinedOutput()
		if err != nil {
			fmt.Fprintf(os.Stderr, "build quartermaster: %v\n%s", err, out)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	code := m.Run()
	if dir != "" {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}

const signingSecret = "fault-secret"

// slackID is the fake Slack user id of a person; emailOf maps it back.
func slackID(email string) string {
	return "U" + strings.ToUpper(hex.EncodeToString([]byte(strings.SplitN(email, "@", 2)[0])))
}

// message is one thing the fake Slack received: a post or an edit to a channel or DM, or an
// answer through a response URL.
type message struct {
	Kind    string // post, update, answer
	Channel string // a user id (DM) or a channel; for answers the response URL's number
	Text    string
	Edits   string // for an edit, the text of the post it edits
	At      time.Time
}

// editedOnceOver reports whether text is an idle or expiry warning, which the service edits once it is
// answered or overtaken, or a lease's grant, which it edits once the lease has ended (its Extend
// and Release buttons would only be refused then).
func editedOnceOver(text string) bool {
	return strings.Contains(text, "has shown no GPU activity") || strings.Contains(text, "extend it with /gpu extend") ||
		strings.Contains(text, " per GPU-hour).")
}

// slackAPI is Slack's Web API as far as the service calls it, recording every message. Posts
// and edits for which block says so hang until the caller gives up (a killed process) or fail.
type slackAPI struct {
	*httptest.Server
	mu       sync.Mutex
	emails   map[string]string // user id -> email
	msgs     []message
	posted   map[string]string // "channel/ts" -> the text first posted there
	inFlight int
	block    func(channel string) string // "hang", "fail" or ""
	seq      int
}

func newSlackAPI(t *testing.T, people []string) *slackAPI {
	f := &slackAPI{emails: map[string]string{}, posted: map[string]string{}}
	for _, p := range people {
		f.emails[slackID(p)] = p
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/users.info", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		id := r.Form.Get("user")
		f.mu.Lock()
		email := f.emails[id]
		f.mu.Unlock()
		writeJSON(w, map[string]any{"ok": true, "user": map[string]any{"id": id, "profile": map[string]any{"email": email}}})
	})
	mux.HandleFunc("/api/users.lookupByEmail", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		writeJSON(w, map[string]any{"ok": true, "user": map[string]any{"id": slackID(r.Form.Get("email")), "profile": map[string]any{"email": r.Form.Get("email")}}})
	})
	post := func(kind string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			_ = r.ParseForm()
			ch := r.Form.Get("channel")
			f.mu.Lock()
			block := ""
			if f.block != nil {
				block = f.block(ch)
			}
			f.mu.Unlock()
			switch block {
			case "hang":
				f.mu.Lock()
				f.inFlight++
				f.mu.Unlock()
				<-r.Context().Done() // until the sender is killed
				f.mu.Lock()
				f.inFlight--
				f.mu.Unlock()
				return
			case "fail":
				writeJSON(w, map[string]any{"ok": false, "error": "internal_error"})
				return
			}
			f.mu.Lock()
			f.seq++
			ts := fmt.Sprintf("%d.%06d", time.Now().Unix(), f.seq)
			m := message{Kind: kind, Channel: ch, Text: r.Form.Get("text"), At: time.Now()}
			if kind == "update" {
				m.Edits = f.posted[ch+"/"+r.Form.Get("ts")]
				ts = r.Form.Get("ts")
			} else {
				f.posted[ch+"/"+ts] = m.Text
			}
			f.msgs = append(f.msgs, m)
			f.mu.Unlock()
			writeJSON(w, map[string]any{"ok": true, "channel": ch, "ts": ts})
		}
	}
	mux.HandleFunc("/api/chat.postMessage", post("post"))
	mux.HandleFunc("/api/chat.update", post("update"))
	mux.HandleFunc("/api/files.getUploadURLExternal", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{"ok": true, "upload_url": f.URL + "/upload", "file_id": "F1"})
	})
	mux.HandleFunc("/upload", func(w http.ResponseWriter, r *http.Request) { _, _ = io.Copy(io.Discard, r.Body) })
	mux.HandleFunc("/response/", func(w http.ResponseWriter, r *http.Request) {
		var m struct{ Text string }
		_ = json.NewDecoder(r.Body).Decode(&m)
		f.mu.Lock()
		f.msgs = append(f.msgs, message{Kind: "answer", Channel: strings.TrimPrefix(r.URL.Path, "/response/"), Text: m.Text, At: time.Now()})
		f.mu.Unlock()
		writeJSON(w, map[string]any{"ok": true})
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{"ok": true, "channel": "D1", "ts": "1.1"})
	})
	f.Server = httptest.NewServer(mux)
	t.Cleanup(f.Close)
	return f
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func (f *slackAPI) setBlock(b func(channel string) string) {
	f.mu.Lock()
	f.block = b
	f.mu.Unlock()
}

func (f *slackAPI) hanging() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.inFlight
}

func (f *slackAPI) messages() []message {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]message(nil), f.msgs...)
}

// answer is the answer that reached response URL n, if any.
func (f *slackAPI) answer(n int) (message, bool) {
	for _, m := range f.messages() {
		if m.Kind == "answer" && m.Channel == strconv.Itoa(n) {
			return m, true
		}
	}
	return message{}, false
}

// leaseRef finds the first lease id a message names.
var leaseRef = regexp.MustCompile(`\bL-(\d+)\b`)

// delivered counts the posts and edits that reached each recipient (email or #channel) about each
// lease: key "recipient L-n".
func (f *slackAPI) delivered() map[string]int {
	out := map[string]int{}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, m := range f.msgs {
		if m.Kind == "answer" || m.Kind == "update" && editedOnceOver(m.Edits) {
			// An answer is no notice; nor is an old idle or expiry warning, or a grant, edited to
			// say what became of its lease, which the notice of that is. (An approval card edited
			// at a decision is the decision's notice.)
			continue
		}
		to := m.Channel
		if e, ok := f.emails[to]; ok {
			to = e
		}
		if id := leaseRef.FindString(m.Text); id != "" {
			out[strings.ToLower(to)+" "+id]++
		}
	}
	return out
}

// slack signs and sends Slack deliveries to one or more replicas.
type slack struct {
	api *slackAPI
	n   int
	mu  sync.Mutex
}

// command is one signed /gpu command: its body, ready to be sent (and sent again).
type command struct {
	body string
	n    int // its response URL's number
}

func (s *slack) command(user, text string) command {
	s.mu.Lock()
	s.n++
	n := s.n
	s.mu.Unlock()
	body := url.Values{"command": {"/gpu"}, "text": {text}, "user_id": {slackID(user)}, "team_id": {"T1"}, "channel_id": {"C1"},
		"trigger_id": {fmt.Sprintf("trig-%d-%d", time.Now().UnixNano(), n)}, "response_url": {fmt.Sprintf("%s/response/%d", s.api.URL, n)}}.Encode()
	return command{body: body, n: n}
}

// send delivers a signed command to a replica and says whether it was acknowledged.
func send(base string, c command) error {
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	m := hmac.New(sha256.New, []byte(signingSecret))
	fmt.Fprintf(m, "v0:%s:%s", ts, c.body)
	req, _ := http.NewRequest(http.MethodPost, base+"/slack/commands", strings.NewReader(c.body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Slack-Request-Timestamp", ts)
	req.Header.Set("X-Slack-Signature", "v0="+hex.EncodeToString(m.Sum(nil)))
	cl := &http.Client{Timeout: 5 * time.Second}
	resp, err := cl.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return nil
}

// server is one quartermaster serve process.
type server struct {
	t    *testing.T
	cmd  *exec.Cmd
	url  string
	log  *testkit.SyncBuffer
	done chan struct{}
	err  error
}

// env is what every serve process of a test is given.
func baseEnv(t *testing.T, policy, db string, api *slackAPI) []string {
	return append(os.Environ(),
		"QM_POLICY="+policy, "QM_DATABASE_URL="+db, "QM_DATA_DIR="+t.TempDir(), "QM_LOG_FORMAT=text",
		"SLACK_BOT_TOKEN=xoxb-fault", "SLACK_SIGNING_SECRET="+signingSecret, "SLACK_API_URL="+api.URL+"/api/",
		"SLACK_APP_TOKEN=", "QM_DATABASE_URL_FILE=", "SLACK_BOT_TOKEN_FILE=", "SLACK_SIGNING_SECRET_FILE=")
}

// startServe starts serve with env on a free loopback port; with wait it returns once /healthz
// answers.
func startServe(t *testing.T, env []string, wait bool) *server {
	t.Helper()
	port := testkit.FreePort(t)
	s := &server{t: t, url: fmt.Sprintf("http://127.0.0.1:%d", port), log: &testkit.SyncBuffer{}, done: make(chan struct{})}
	s.cmd = exec.Command(binary, "serve", "--http", fmt.Sprintf("127.0.0.1:%d", port))
	s.cmd.Env = env
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.err = s.cmd.Wait(); close(s.done) }()
	t.Cleanup(func() { s.kill() })
	if !wait {
		return s
	}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-s.done:
			t.Fatalf("serve ended before it answered: %v\n%s", s.err, s.log.String())
		default:
		}
		if resp, err := http.Get(s.url + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("serve did not answer within a minute:\n%s", s.log.String())
	return nil
}

// kill ends the process with SIGKILL (kill -9) and waits for it.
func (s *server) kill() {
	select {
	case <-s.done:
		return
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.done
}

// term sends SIGTERM and says how long the process took to end, or fails after limit.
func (s *server) term(limit time.Duration) time.Duration {
	s.t.Helper()
	start := time.Now()
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
		return time.Since(start)
	case <-time.After(limit):
		s.t.Fatalf("serve still runs %v after SIGTERM:\n%s", limit, tail(s.log.String(), 20))
		return 0
	}
}

func (s *server) readyz() (int, string) {
	cl := &http.Client{Timeout: 10 * time.Second}
	resp, err := cl.Get(s.url + "/readyz")
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// waitFor polls cond every 50 ms until it holds or d passes.
func waitFor(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return cond()
}

// teamsPolicy is a policy of n teams t00…, each with one member uNN and one budget owner bossNN,
// on backend, whose members may hold perTeam interactive GPUs without approval.
func teamsPolicy(t *testing.T, n, perTeam int, backend string, extra ...string) (path string, people []string) {
	var b strings.Builder
	fmt.Fprintf(&b, `organization: Fault Lab
timezone: UTC
classes:
  - name: interactive
    sku: L40S
    price_per_gpu_hour: 1
    max_gpus: 4
    max_duration: 8h
    idle_timeout: 24h
    slurm: {partition: interactive, gres: "gpu:l40s"}
  - name: train
    sku: H100
    price_per_gpu_hour: 3
    max_gpus: 8
    max_duration: 8h
    idle_timeout: 24h
    slurm: {partition: train, gres: "gpu:h100"}
default_quota: {gpus: {interactive: 0, train: 0}, gpu_hours_per_week: 0}
exceptions:
  - name: over-quota
    when: usage.gpus_in_use + request.gpus > team.quota.gpus[class.name]
    why: The request goes beyond the team's quota
%s
%s
backend: %s
sim:
  nodes: [{name: l40s, count: 4, class: interactive, gpus: 4}, {name: h100, count: 1, class: train, gpus: 8}]
teams:
`, approvals(extra), others(extra), backend)
	var dir strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  - {name: t%02d, idp_groups: [g%02d], budget_owners: [boss%02d@fault.example], quota: {gpus: {interactive: %d, train: %d}, gpu_hours_per_week: 100000}, storage: {path: %s}}\n",
			i, i, i, perTeam, perTeam, filepath.Join(t.TempDir(), fmt.Sprintf("t%02d", i)))
		fmt.Fprintf(&dir, "  - {user: u%02d@fault.example, groups: [g%02d], accounts: [\"discord:%s\"]}\n  - {user: boss%02d@fault.example, groups: [g%02d]}\n", i, i, discordUser(i), i, i)
		people = append(people, fmt.Sprintf("u%02d@fault.example", i), fmt.Sprintf("boss%02d@fault.example", i))
	}
	b.WriteString("directory:\n" + dir.String())
	path = filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, people
}

// discordUser is the Discord user id of u<i>@fault.example in teamsPolicy's directory.
func discordUser(i int) string { return fmt.Sprintf("2000000000000000%02d", i) }

// approvals is the approvals line among extra, else one with a day's timeout.
func approvals(extra []string) string {
	for _, e := range extra {
		if strings.HasPrefix(e, "approvals:") {
			return e
		}
	}
	return "approvals: {timeout: 24h, self_approval: false}"
}

// others are the lines of extra that are not the approvals line.
func others(extra []string) string {
	var out []string
	for _, e := range extra {
		if !strings.HasPrefix(e, "approvals:") {
			out = append(out, e)
		}
	}
	return strings.Join(out, "\n")
}

// outboxRow is one notice in the outbox, as the database holds it.
type outboxRow struct {
	recipient, lease string
	attempts         int
	sent             bool
	kind, reason     string
}

func outbox(t *testing.T, db string) []outboxRow {
	var out []outboxRow
	for _, r := range storetest.Query(t, db, "SELECT recipient, lease_id, attempts, sent_at IS NOT NULL, notice FROM outbox ORDER BY id") {
		n, _ := strconv.Atoi(r[2])
		var nj struct{ Kind, Reason string }
		_ = json.Unmarshal([]byte(r[4]), &nj)
		out = append(out, outboxRow{recipient: strings.ToLower(r[0]), lease: "L-" + r[1], attempts: n, sent: r[3] == "true", kind: nj.Kind, reason: nj.Reason})
	}
	return out
}

// checkNotices checks the outbox against what Slack received: every notice sent, none lost,
// and none delivered more than once except those sent again after their sender was killed
// mid-delivery (rows claimed more than once), each at most twice. It returns the number of
// notices and of counted repeats.
func checkNotices(t *testing.T, db string, api *slackAPI) (notices, repeats int) {
	t.Helper()
	rows := outbox(t, db)
	want := map[string]int{}
	again := map[string]int{}
	kinds := map[string][]string{}
	for _, r := range rows {
		if r.kind == "queued" && r.reason == "" {
			continue // rendered as nothing: the request's own answer says it waits
		}
		if !r.sent {
			t.Errorf("lost notice: the notice to %s about %s was never sent", r.recipient, r.lease)
		}
		want[r.recipient+" "+r.lease]++
		kinds[r.recipient+" "+r.lease] = append(kinds[r.recipient+" "+r.lease], r.kind)
		if r.attempts > 1 {
			again[r.recipient+" "+r.lease]++
		}
	}
	got := api.delivered()
	for k, n := range want {
		switch {
		case got[k] < n:
			t.Errorf("lost notice: %s: %d of %d notices (%v) reached Slack; Slack got: %q", k, got[k], n, kinds[k], api.textsTo(k))
		case got[k] > n+again[k]:
			t.Errorf("duplicate notice: %s: %d deliveries of %d notices (%v), %d of them retried; Slack got: %q", k, got[k], n, kinds[k], again[k], api.textsTo(k))
		}
		if got[k] > n {
			repeats += got[k] - n
		}
	}
	return len(rows), repeats
}

// settle waits until every notice in the outbox is marked sent and has reached Slack.
func settle(t *testing.T, db string, api *slackAPI, d time.Duration) {
	t.Helper()
	waitFor(d, func() bool {
		got := api.delivered()
		for _, r := range outbox(t, db) {
			if !r.sent || got[r.recipient+" "+r.lease] == 0 {
				return false
			}
		}
		return true
	})
}

// textsTo lists the texts of the messages to a recipient ("email L-n" key's email).
func (f *slackAPI) textsTo(key string) []string {
	who := strings.Fields(key)[0]
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, m := range f.msgs {
		to := m.Channel
		if e, ok := f.emails[to]; ok {
			to = e
		}
		if strings.EqualFold(to, who) {
			out = append(out, m.Kind+": "+m.Text)
		}
	}
	return out
}
