package commands

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
)

// refusingScheduler is a silentScheduler that, while down, answers that it refuses the
// service's credentials, as a Kubernetes API server answers 401 once the service's token is
// revoked.
type refusingScheduler struct{ *silentScheduler }

const refusedWords = "the scheduler refuses the service's credentials (expired); an operator must renew them"

func (s refusingScheduler) Stop(ctx context.Context, l *qm.Lease) error {
	if err := s.silentScheduler.Stop(ctx, l); err != nil {
		return &qm.Unreachable{Reason: refusedWords, Err: err, Waiting: qm.ReasonCredentialsPrefix + ": " + refusedWords}
	}
	return nil
}

// A release while the scheduler refuses the service's credentials ends the lease and its bill,
// and tells its owner why its job could not be stopped now, in the scheduler's words (who must
// renew the credentials), and that it is stopped once the credentials are accepted again, rather
// than that the scheduler could not be reached.
func TestAReleaseWhileTheSchedulerRefusesTheCredentials(t *testing.T) {
	ctx := context.Background()
	h := newHarnessOn(t, "testdata/harbor.yaml")
	s := refusingScheduler{&silentScheduler{}}
	h.svc.Backend = s
	id := leaseIn(t, h.say("wiremu@harbor.example", "/gpu request 1 bench for 4h").Text)
	l, err := h.svc.Get(ctx, id)
	if err != nil || l.State != qm.Active {
		t.Fatalf("%+v %v; the test needs an active lease", l, err)
	}
	h.clock.Advance(time.Hour)
	s.set(true)
	released := h.say("wiremu@harbor.example", "/gpu release "+id.String()).Text
	for _, want := range []string{"released", refusedWords, "accepts the service's credentials again", "nothing more is billed"} {
		if !strings.Contains(released, want) {
			t.Errorf("a release while the scheduler refuses the credentials reads %q; want it to say %q", released, want)
		}
	}
	if strings.Contains(released, "could not be reached") {
		t.Errorf("a release while the scheduler refuses the credentials reads %q; it was reached", released)
	}
	s.set(false)
	if _, err := h.svc.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if s.running(l.Ref) {
		t.Errorf("the credentials are accepted again, and the job of released %s still runs", id)
	}
}
