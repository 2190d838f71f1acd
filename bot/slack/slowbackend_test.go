package slack_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	slackbot "github.com/acme/quartermaster/bot/slack"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/sim"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// slowScheduler is the sim cluster behind a scheduler whose submissions hang until the test lets
// them go (an overloaded slurmctld): Start is not instant, so the service calls it after the
// lease is written, as it does with Slurm.
type slowScheduler struct {
	c       *sim.Cluster
	started chan struct{} // a Start is waiting
	gate    chan struct{} // closed: Starts go on
}

func (s *slowScheduler) Inventory() []qm.Node { return s.c.Inventory() }

func (s *slowScheduler) Start(ctx context.Context, l *qm.Lease) (qm.Started, error) {
	s.started <- struct{}{}
	select {
	case <-s.gate:
	case <-ctx.Done():
		return qm.Started{}, ctx.Err()
	}
	return s.c.Start(ctx, l)
}

func (s *slowScheduler) Stop(ctx context.Context, l *qm.Lease) error { return s.c.Stop(ctx, l) }

// TestOtherUsersAreAnsweredWhileTheSchedulerIsSlowToSubmit: requests whose submission hangs on
// the scheduler do not hold the workers that answer commands: with every worker's command
// waiting on a submission, another user's /gpu list is answered at once; the requests are
// answered once the scheduler takes them.
func TestOtherUsersAreAnsweredWhileTheSchedulerIsSlowToSubmit(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	slow := &slowScheduler{c: e.svc.Backend.(*sim.Cluster), started: make(chan struct{}, 4), gate: make(chan struct{})}
	e.svc.Backend = slow
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(slow.gate) }) })
	e.useHTTPAdapter(e.bot, func(c *slackbot.Config) { c.MaxWork = 2 })
	requests := []string{e.command("UBOB", "request 1 interactive for 2h"), e.command("UALICE", "request 1 interactive for 2h")}
	for range requests {
		<-slow.started // both workers' commands wait on the scheduler
	}
	list := e.command("UDANA", "list")
	deadline := time.Now().Add(20 * time.Second)
	for !answered(e, list) {
		if time.Now().After(deadline) {
			t.Fatal("/gpu list was not answered while other users' requests waited on the scheduler")
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, r := range requests {
		if answered(e, r) {
			t.Fatal("a request was answered before the scheduler took it")
		}
	}
	once.Do(func() { close(slow.gate) })
	e.wait()
	for _, r := range requests {
		if got := e.responseTo(r); !strings.Contains(got.Text, "L-") || strings.Contains(strings.ToLower(got.Text), "busy") {
			t.Errorf("request answered %q", got.Text)
		}
	}
	if got := e.responseTo(list); strings.Contains(strings.ToLower(got.Text), "busy") {
		t.Errorf("/gpu list answered %q", got.Text)
	}
}

// answered reports whether the command with this trigger has its answer.
func answered(e *env, trigger string) bool {
	_, _, responses, _ := e.slack.snapshot()
	for _, r := range responses {
		if r.Channel == trigger {
			return true
		}
	}
	return false
}
