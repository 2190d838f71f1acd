package commands

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
)

// silentScheduler is a scheduler that places jobs itself and runs each at once, and that stops
// answering while down is set: a stop, a cancel and a listing of its jobs then fail as scancel
// and squeue do while slurmctld is down.
type silentScheduler struct {
	mu      sync.Mutex
	down    bool
	next    int
	jobs    []qm.Job
	cancels []string
}

var errSilent = errors.New("scancel: error: Unable to contact slurm controller (connect failure)")

func (s *silentScheduler) set(down bool) { s.mu.Lock(); s.down = down; s.mu.Unlock() }

func (s *silentScheduler) Inventory() []qm.Node { return nil }

func (s *silentScheduler) Start(_ context.Context, l *qm.Lease) (qm.Started, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next++
	ref := fmt.Sprint(500 + s.next)
	s.jobs = append(s.jobs, qm.Job{Lease: l.ID, Ref: ref, State: qm.JobRunning, Node: "n01"})
	return qm.Started{State: qm.Active, Ref: ref, Node: "n01"}, nil
}

func (s *silentScheduler) end(ref string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down {
		return errSilent
	}
	for i := range s.jobs {
		if s.jobs[i].Ref == ref && s.jobs[i].State == qm.JobRunning {
			s.jobs[i].State = qm.JobCancelled
			s.cancels = append(s.cancels, ref)
		}
	}
	return nil
}

func (s *silentScheduler) Stop(_ context.Context, l *qm.Lease) error { return s.end(l.Ref) }

func (s *silentScheduler) Cancel(_ context.Context, j qm.Job) error { return s.end(j.Ref) }

func (s *silentScheduler) Jobs(context.Context) ([]qm.Job, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down {
		return nil, errors.New("squeue: error: Unable to contact slurm controller (connect failure)")
	}
	return append([]qm.Job(nil), s.jobs...), nil
}

func (s *silentScheduler) running(ref string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, j := range s.jobs {
		if j.Ref == ref {
			return j.State == qm.JobRunning
		}
	}
	return false
}

// A release while the scheduler does not answer ends the lease and its bill at once, and tells
// its owner so and that the job, which the scheduler could not be told to stop, is cancelled
// as soon as it answers; it is then, and the bill stays what it was at the release.
func TestAReleaseWhileTheSchedulerDoesNotAnswer(t *testing.T) {
	for _, c := range []struct{ policy, user, ask string }{
		{"testdata/tokyo.yaml", "haru@sakura.example", "/gpu request 1 jupyter for 4h"},
		{"testdata/harbor.yaml", "wiremu@harbor.example", "/gpu request 1 bench for 4h"},
	} {
		t.Run(c.policy, func(t *testing.T) {
			ctx := context.Background()
			h := newHarnessOn(t, c.policy)
			s := &silentScheduler{}
			h.svc.Backend = s
			id := leaseIn(t, h.say(c.user, c.ask).Text)
			l, err := h.svc.Get(ctx, id)
			if err != nil || l.State != qm.Active {
				t.Fatalf("%s: %+v %v; the test needs an active lease", c.ask, l, err)
			}
			h.clock.Advance(time.Hour)
			s.set(true)
			released := h.say(c.user, "/gpu release "+id.String()).Text
			for _, want := range []string{"released", "cancelled", "scheduler answers"} {
				if !strings.Contains(released, want) {
					t.Errorf("a release while the scheduler does not answer reads %q; want it to say %q", released, want)
				}
			}
			bill := func() float64 {
				cur, _ := h.svc.Get(ctx, id)
				return qm.BillUpTo(h.svc.Policy, cur, qm.BilledUntil(cur, h.clock.Now()))
			}
			atRelease := bill()
			if atRelease != qm.Bill(h.svc.Policy, l, time.Hour) {
				t.Errorf("released after an hour, %s is billed %v; want an hour's %v", id, atRelease, qm.Bill(h.svc.Policy, l, time.Hour))
			}

			h.clock.Advance(2 * time.Hour)
			_, _ = h.svc.Reconcile(ctx) // it does not answer
			if !s.running(l.Ref) {
				t.Fatal("the job stopped while the scheduler did not answer")
			}
			s.set(false)
			if _, err := h.svc.Reconcile(ctx); err != nil {
				t.Fatal(err)
			}
			if s.running(l.Ref) {
				t.Errorf("the scheduler answers again, and the job of released %s still runs", id)
			}
			after, _ := h.svc.Get(ctx, id)
			if after.State != qm.Released || bill() != atRelease {
				t.Errorf("after the scheduler answered, %s is %s billed %v; at the release it was billed %v", id, after.State, bill(), atRelease)
			}
		})
	}
}
