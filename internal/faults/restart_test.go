//go:build faults

package faults_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// PostgreSQL restarted under load: a server of the test's own (the shared one is left alone) is
// stopped at once (pg_ctl -m immediate) while commands arrive at 20 a second, kept down for 6 s,
// and started again. While it is down every command is answered "the service cannot reach its
// database; try again in a minute" (the sentence comes from the command's database deadline,
// QM_DATABASE_WAIT=1s, so the 3 s promise is kept by construction; the slowest answer is logged
// and recorded in docs/reliability.md, not asserted, since a test holds no timing threshold) and
// /readyz says not ready; nothing hangs. After it returns the service recovers by itself: /readyz is
// ready, commands succeed, every command was answered, and no lease is doubled, no quota
// breached and no notice lost.
func TestPostgreSQLRestartedUnderLoad(t *testing.T) {
	pg := startPrivatePostgres(t)
	db := pg.URL()
	const quota = 3
	policy, people := teamsPolicy(t, 8, quota, "sim")
	users := requesters(people)
	api := newSlackAPI(t, people)
	sl := &slack{api: api}
	// The command's deadline for the database: a second, so that the 3 s promise holds with room
	// for the rest of the command on a busy machine.
	s := startServe(t, append(baseEnv(t, policy, db, api), "QM_DATABASE_WAIT=1s"), true)
	load := &loadRun{sl: sl, targets: []string{s.url}, users: users}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { load.run(ctx, t, 20); close(done) }()

	time.Sleep(4 * time.Second)
	pg.Stop()
	down := time.Now() // commands sent from now on find the database down
	notReady := false
	waitFor(6*time.Second, func() bool {
		if code, _ := s.readyz(); code == http.StatusServiceUnavailable {
			notReady = true
		}
		return false
	})
	up := time.Now()
	pg.Start()
	var readyAfter time.Duration
	if waitFor(30*time.Second, func() bool { code, _ := s.readyz(); return code == http.StatusOK }) {
		readyAfter = time.Since(up)
	} else {
		t.Errorf("/readyz not ready 30 s after the database came back:\n%s", tail(s.log.String(), 20))
	}
	time.Sleep(4 * time.Second)
	cancel()
	<-done
	if !notReady {
		t.Error("/readyz never said not ready while the database was down")
	}

	if missing := load.unanswered(30 * time.Second); len(missing) > 0 {
		t.Errorf("%d of %d commands never answered, e.g. %q sent at %s", len(missing), len(load.commands()), missing[0].text, missing[0].at.Format(time.TimeOnly))
	}
	var outage, sentence, ok int
	var slowest time.Duration
	var firstOK time.Duration = -1
	for _, c := range load.commands() {
		m, answered := api.answer(c.c.n)
		if !answered {
			continue
		}
		took := m.At.Sub(c.at)
		if strings.Contains(m.Text, "cannot reach its database; try again in a minute") {
			sentence++
			if took > slowest && !c.at.Before(down) {
				slowest = took
			}
		} else {
			ok++
			if c.at.After(up) && (firstOK < 0 || c.at.Sub(up) < firstOK) {
				firstOK = c.at.Sub(up)
			}
		}
		if c.at.After(down) && c.at.Before(up) {
			outage++
			if !strings.Contains(m.Text, "cannot reach its database") {
				t.Errorf("%q sent while the database was down was answered %q", c.text, m.Text)
			}
		}
	}
	if firstOK < 0 {
		t.Error("no command succeeded after the database came back")
	}
	if sentence == 0 {
		t.Error("no command was told that the database cannot be reached")
	}
	if bad := invariants(t, db, "", "", quota); len(bad) > 0 {
		t.Errorf("after the restart:\n%s", strings.Join(bad, "\n"))
	}
	settle(t, db, api, 30*time.Second)
	notices, repeats := checkNotices(t, db, api)
	t.Logf("PostgreSQL down %v under 20 commands/s: %d commands, %d answered normally, %d told the database cannot be reached (of those sent while it was down, the slowest in %v), %d sent while it was down; /readyz ready %v after it came back, the first command after it succeeded; %d notices, all sent, %d repeats",
		up.Sub(down).Round(100*time.Millisecond), len(load.commands()), ok, sentence, slowest.Round(time.Millisecond), outage, readyAfter.Round(100*time.Millisecond), notices, repeats)
	s.term(30 * time.Second)
}
