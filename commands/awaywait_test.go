package commands

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/sim"
)

// awayCluster is the sim cluster behind a scheduler that stops answering while down is set:
// a start never reaches it (qm.Unreachable, as sbatch's "Unable to contact slurm controller")
// and its nodes cannot be read.
type awayCluster struct {
	*sim.Cluster
	mu   sync.Mutex
	down bool
}

func (a *awayCluster) isDown() bool { a.mu.Lock(); defer a.mu.Unlock(); return a.down }

func (a *awayCluster) set(down bool) { a.mu.Lock(); a.down = down; a.mu.Unlock() }

func (a *awayCluster) StartsInstantly() bool { return false }

func (a *awayCluster) Start(ctx context.Context, l *qm.Lease) (qm.Started, error) {
	if a.isDown() {
		return qm.Started{}, &qm.Unreachable{Reason: "Unable to contact slurm controller (connect failure)", Err: errors.New("sbatch: error: Batch job submission failed: Unable to contact slurm controller (connect failure)")}
	}
	return a.Cluster.Start(ctx, l)
}

func (a *awayCluster) RefreshInventory(context.Context) error {
	if a.isDown() {
		return errors.New("scontrol: error: Unable to contact slurm controller (connect failure)")
	}
	return nil
}

// awayHarness is the whole bot on policyFile, on an awayCluster.
func awayHarness(t *testing.T, policyFile string) (*harness, *awayCluster) {
	t.Helper()
	h := newHarnessOn(t, policyFile)
	a := &awayCluster{Cluster: h.sim}
	h.svc.Backend = a
	if _, err := h.svc.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	return h, a
}

// While the scheduler does not answer, a lease that waits for it, the catalog and an estimate
// say that the wait is unknown until it answers, not that none is expected: the GPUs look free
// only in what the scheduler said before it stopped answering.
func TestTheWaitIsUnknownWhileTheSchedulerDoesNotAnswer(t *testing.T) {
	h, a := awayHarness(t, "testdata/orbit.yaml")
	const kim = "kim@orbit.example"
	a.set(true)
	id := leaseIn(t, h.say(kim, "/gpu request 1 duo 2h").Text)
	l, err := h.svc.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if l.State != qm.Queued || !strings.Contains(l.Reason, "scheduler answers") {
		t.Fatalf("%s is %s (%q); the test needs a lease waiting for the scheduler to answer", id, l.State, l.Reason)
	}
	h.clock.Advance(time.Minute) // past the reconcile pass that failed
	for what, text := range map[string]string{
		"status":   h.say(kim, "/gpu status "+id.String()).PlainText(),
		"catalog":  h.say(kim, "/gpu catalog").PlainText(),
		"estimate": h.say(kim, "/gpu estimate 1 duo 2h").PlainText(),
	} {
		if strings.Contains(text, "none expected") || strings.Contains(text, "GPUs are free now") || !strings.Contains(text, "unknown while the scheduler does not answer") {
			t.Errorf("/gpu %s while the scheduler does not answer:\n%s\nwant it to say the wait is unknown while the scheduler does not answer", what, text)
		}
	}

	// Once it answers again, the lease starts and the catalog gives its estimate again.
	a.set(false)
	if _, err := h.svc.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	if text := h.say(kim, "/gpu catalog").PlainText(); strings.Contains(text, "does not answer") {
		t.Errorf("/gpu catalog once the scheduler answers again:\n%s", text)
	}
}
