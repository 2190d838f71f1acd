package faults_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/store/storetest"
)

// Notices queued at a crash are not lost. Eight over-quota requests while Slack fails every
// message to the budget owners: each requester is told who decides, and the notices to the
// owners wait in the outbox. kill -9, restart: every owner hears of their team's request, once.
// Then four more while the messages to the owners hang, so that the killed process dies in the
// middle of sending them: the restarted process sends each again, at most once more.
func TestNoticesQueuedAtACrashAreNotLost(t *testing.T) {
	storetest.RequirePostgres(t)
	db := storetest.Postgres(t)
	policy, people := teamsPolicy(t, 8, 0, "sim")
	api := newSlackAPI(t, people)
	sl := &slack{api: api}
	env := baseEnv(t, policy, db, api)
	toOwner := func(ch string) bool {
		e := api.emails[ch]
		return strings.HasPrefix(e, "boss")
	}

	api.setBlock(func(ch string) string {
		if toOwner(ch) {
			return "fail"
		}
		return ""
	})
	s := startServe(t, env, true)
	var cmds []command
	for i := 0; i < 8; i++ {
		c := sl.command(fmt.Sprintf("u%02d@fault.example", i), "request 1 interactive for 1h")
		cmds = append(cmds, c)
		if err := send(s.url, c); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range cmds {
		if !waitFor(30*time.Second, func() bool { _, ok := api.answer(c.n); return ok }) {
			t.Fatalf("requester %d was not answered:\n%s", i, tail(s.log.String(), 30))
		}
		if m, _ := api.answer(c.n); !strings.Contains(m.Text, fmt.Sprintf("boss%02d@fault.example", i)) {
			t.Errorf("requester %d was not told who decides: %q", i, m.Text)
		}
	}
	s.kill()
	api.setBlock(nil)
	s = startServe(t, env, true)
	waitFor(30*time.Second, func() bool {
		for i := 0; i < 8; i++ {
			if heardOf(api, fmt.Sprintf("boss%02d@fault.example", i)) == 0 {
				return false
			}
		}
		return true
	})
	for i := 0; i < 8; i++ {
		if n := heardOf(api, fmt.Sprintf("boss%02d@fault.example", i)); n != 1 {
			t.Errorf("boss%02d heard of %d requests after the restart, want 1", i, n)
		}
	}

	// Killed in the middle of sending: four requests (as many as run at once) whose messages to
	// the owners hang until the process dies.
	api.setBlock(func(ch string) string {
		if toOwner(ch) {
			return "hang"
		}
		return ""
	})
	for i := 0; i < 4; i++ {
		if err := send(s.url, sl.command(fmt.Sprintf("u%02d@fault.example", i), "request 1 interactive for 2h")); err != nil {
			t.Fatal(err)
		}
	}
	if !waitFor(30*time.Second, func() bool { return api.hanging() == 4 }) {
		t.Fatalf("%d messages in flight, want 4:\n%s", api.hanging(), tail(s.log.String(), 30))
	}
	s.kill()
	api.setBlock(nil)
	s = startServe(t, env, true)
	waitFor(30*time.Second, func() bool {
		for i := 0; i < 4; i++ {
			if heardOf(api, fmt.Sprintf("boss%02d@fault.example", i)) < 2 {
				return false
			}
		}
		return true
	})
	for i := 0; i < 4; i++ {
		if n := heardOf(api, fmt.Sprintf("boss%02d@fault.example", i)); n != 2 {
			t.Errorf("boss%02d heard of %d requests, want 2: the one whose message was in flight at the crash is missing", i, n)
		}
	}
	// The four were in flight when the process died: the restarted one counts them as repeats.
	if got := metric(s.url, "quartermaster_notices_repeated_total"); got != "4" {
		t.Errorf("quartermaster_notices_repeated_total = %q after four notices in flight at the kill were sent again, want 4", got)
	}
	settle(t, db, api, 10*time.Second)
	notices, repeats := checkNotices(t, db, api)
	t.Logf("%d notices, all sent; %d reached Slack twice", notices, repeats)
	_ = s.term(time.Minute)
}

// heardOf counts the leases a person was told about.
func heardOf(api *slackAPI, who string) int {
	n := 0
	for k := range api.delivered() {
		if strings.HasPrefix(k, who+" ") {
			n++
		}
	}
	return n
}

// A PostgreSQL that accepts connections and never answers hangs neither start nor commands, and
// SIGTERM ends serve within its shutdown grace. Start: serve gives up with a sentence naming the
// database, or ends at once on SIGTERM. Running: when the database stops answering, a command
// gets "the service cannot reach its database; try again in a minute" before its deadline
// (QM_DATABASE_WAIT, set here to 1.5 s; the promise is 3 s, and how long each answer took is logged, not asserted), /readyz says not ready, and SIGTERM
// ends the process within the 20 s grace.
func TestAPostgreSQLThatNeverAnswersHangsNeitherStartNorCommands(t *testing.T) {
	storetest.RequirePostgres(t)
	policy, people := teamsPolicy(t, 1, 2, "sim")
	api := newSlackAPI(t, people)

	mute := storetest.Mute(t)
	env := baseEnv(t, policy, "postgres://qm@"+mute+"/qm?sslmode=disable", api)
	s := startServe(t, env, false)
	select {
	case <-s.done:
		if !strings.Contains(s.log.String(), "postgres") {
			t.Errorf("serve gave up on a mute database without naming it:\n%s", s.log.String())
		}
	case <-time.After(time.Minute):
		t.Fatalf("serve still starting on a database that never answers after a minute:\n%s", s.log.String())
	}
	s = startServe(t, env, false)
	time.Sleep(300 * time.Millisecond) // connecting
	s.term(20 * time.Second)

	// Running, through a proxy that stops forwarding.
	fr := storetest.NewProxy(t)
	db := fr.Via(storetest.Postgres(t))
	env = append(baseEnv(t, policy, db, api), "QM_DATABASE_WAIT=1500ms")
	s = startServe(t, env, true)
	sl := &slack{api: api}
	c := sl.command("u00@fault.example", "request 1 interactive for 1h")
	if err := send(s.url, c); err != nil {
		t.Fatal(err)
	}
	if !waitFor(30*time.Second, func() bool { _, ok := api.answer(c.n); return ok }) {
		t.Fatal("no answer with the database up")
	}
	fr.Freeze(true)
	for i := 0; i < 3; i++ {
		c := sl.command("u00@fault.example", "list")
		sent := time.Now()
		if err := send(s.url, c); err != nil {
			t.Fatal(err)
		}
		if !waitFor(time.Minute, func() bool { _, ok := api.answer(c.n); return ok }) {
			t.Fatalf("a command got no answer within a minute of the database hanging:\n%s", tail(s.log.String(), 20))
		}
		m, _ := api.answer(c.n)
		took := m.At.Sub(sent)
		if !strings.Contains(m.Text, "cannot reach its database; try again in a minute") {
			t.Errorf("while the database hangs a command was answered %q", m.Text)
		}
		t.Logf("answered in %v while the database hangs", took.Round(time.Millisecond))
	}
	if code, body := s.readyz(); code != http.StatusServiceUnavailable || !strings.Contains(body, "database postgres: failed") {
		t.Errorf("/readyz while the database hangs: %d %q", code, body)
	}
	for i := 0; i < 4; i++ { // work in flight at the signal
		_ = send(s.url, sl.command("u00@fault.example", "list"))
	}
	took := s.term(20*time.Second + 10*time.Second)
	t.Logf("SIGTERM ended serve in %v while the database hangs", took.Round(time.Millisecond))
	fr.Freeze(false)
}

// metric reads one unlabelled metric from a replica's /metrics.
func metric(base, name string) string {
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) == 2 && f[0] == name {
			return f[1]
		}
	}
	return ""
}
