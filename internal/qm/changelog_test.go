package qm_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/qm/qmtest"
	"github.com/acme/quartermaster/internal/sim"
	"github.com/acme/quartermaster/internal/store"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// kolkataPolicy has other names than the example's: one class, one team, a 6-hour approval
// timeout.
const kolkataPolicy = `organization: Kolkata Research
classes:
  - {name: lab, sku: L4, price_per_gpu_hour: 1, max_gpus: 2, max_duration: 4h}
default_quota: {gpus: {lab: 1}, gpu_hours_per_week: 100}
teams:
  - {name: delta, idp_groups: [g-delta], budget_owners: [ria@kolkata.example], quota: {gpus: {lab: 4}, gpu_hours_per_week: 100}, data_classes: [open]}
exceptions:
  - {name: bigger, when: request.gpus > class.max_gpus}
approvals: {timeout: 6h}
directory:
  - {user: anu@kolkata.example, groups: [g-delta]}
  - {user: ria@kolkata.example, groups: [g-delta]}
sim:
  nodes: [{name: l4, count: 1, class: lab, gpus: 4}]
`

// The changes the service makes by itself (a lease reaching its end, a request nobody decided in
// time) are each logged once at info level, with the lease, team, class, both states and the
// reason; a tick that changes nothing logs no such line.
func TestLeaseChangesTheServiceMakesAreLogged(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "qm.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	p, err := policy.Load([]byte(kolkataPolicy), "kolkata.yaml")
	if err != nil {
		t.Fatal(err)
	}
	svc := newService(t, p, st)
	var mu sync.Mutex
	var logs bytes.Buffer
	svc.Logger = slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, &slog.HandlerOptions{Level: slog.LevelInfo}))
	running, err := svc.Request(ctx, qm.LeaseRequest{User: "anu@kolkata.example", GPUs: 1, Class: "lab", Duration: 2 * time.Hour})
	if err != nil || running.Lease.State != qm.Active {
		t.Fatalf("request: %v %+v", err, running)
	}
	waiting, err := svc.Request(ctx, qm.LeaseRequest{User: "anu@kolkata.example", GPUs: 3, Class: "lab", Duration: time.Hour})
	if err != nil || waiting.Lease.State != qm.PendingApproval {
		t.Fatalf("request beyond the class: %v %+v", err, waiting)
	}
	if err := svc.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	quiet := logs.String()
	mu.Unlock()
	if strings.Contains(quiet, "lease state changed") {
		t.Errorf("a tick that changed nothing logged a change:\n%s", quiet)
	}
	svc.Clock.(interface{ Advance(time.Duration) }).Advance(7 * time.Hour)
	for range 2 { // the second tick finds nothing more to do
		if err := svc.Tick(ctx); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	text := logs.String()
	mu.Unlock()
	for _, want := range []string{
		"level=INFO msg=\"lease state changed\" lease=" + running.Lease.ID.String() + " team=delta class=lab from=active to=expired reason=\"the lease reached its end time\"",
		"level=INFO msg=\"lease state changed\" lease=" + waiting.Lease.ID.String() + " team=delta class=lab from=pending_approval to=denied reason=\"no decision within 6h\"",
	} {
		if n := strings.Count(text, want); n != 1 {
			t.Errorf("the log has %d lines %q, want one:\n%s", n, want, text)
		}
	}
}

// A queued lease that starts once GPUs are free is logged at each step the service takes it
// through: queued to provisioning as it is placed, then provisioning to active when the
// scheduler runs its job, or to failed when the scheduler refuses it; each step once.
func TestAQueuedLeaseStartingIsLoggedAtEachStep(t *testing.T) {
	ctx := context.Background()
	p, err := policy.Load([]byte(kolkataPolicy), "kolkata.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		startErr error
		to       string
	}{
		{"runs", nil, `to=active reason="workspace ready"`},
		{"refused", &qm.Refused{Reason: "QOSMaxGRESPerUser", Err: errors.New("sbatch: error: QOSMaxGRESPerUser")}, `to=failed reason="the cluster refused its job: QOSMaxGRESPerUser"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := &fakeScheduler{startAs: qm.Started{State: qm.Active}, nodes: []qm.Node{{Name: "l4-1", Class: "lab", GPUs: 1}}}
			var mu sync.Mutex
			var logs bytes.Buffer
			svc := &qm.Service{Policy: p, Store: storetest.Open(t, storetest.SQLite(t)), Clock: sim.NewClock(time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC)),
				Backend: f, Directory: p, Notifier: &qmtest.NoticeLog{},
				Logger: slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, &slog.HandlerOptions{Level: slog.LevelInfo}))}
			if _, err := svc.Reconcile(ctx); err != nil {
				t.Fatal(err)
			}
			first := mustRequest(t, svc, "anu@kolkata.example", 1, "lab")
			waiting := mustRequest(t, svc, "ria@kolkata.example", 1, "lab")
			if first.State != qm.Active || waiting.State != qm.Queued {
				t.Fatalf("want the first lease active and the second queued; got %s and %s", first.State, waiting.State)
			}
			f.mu.Lock()
			f.startErr = c.startErr
			f.mu.Unlock()
			if _, err := svc.Release(ctx, "anu@kolkata.example", first.ID); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			text := logs.String()
			mu.Unlock()
			line := "level=INFO msg=\"lease state changed\" lease=" + waiting.ID.String() + " team=delta class=lab "
			for _, want := range []string{line + `from=queued to=provisioning reason="GPUs became free"`, line + "from=provisioning " + c.to} {
				if n := strings.Count(text, want); n != 1 {
					t.Errorf("the log has %d lines %q, want one:\n%s", n, want, text)
				}
			}
		})
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
