package metrics

import (
	"bytes"
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/acme/quartermaster/internal/qm"
)

// value reads one series from the registry: name and label pairs; -1 when it is absent.
func value(t *testing.T, m *Metrics, name string, labels ...string) float64 {
	t.Helper()
	fams, err := m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	next:
		for _, s := range f.GetMetric() {
			for i := 0; i+1 < len(labels); i += 2 {
				if !hasLabel(s, labels[i], labels[i+1]) {
					continue next
				}
			}
			switch {
			case s.Counter != nil:
				return s.Counter.GetValue()
			case s.Gauge != nil:
				return s.Gauge.GetValue()
			case s.Histogram != nil:
				return float64(s.Histogram.GetSampleCount())
			}
		}
	}
	return -1
}

func hasLabel(s *dto.Metric, k, v string) bool {
	for _, l := range s.GetLabel() {
		if l.GetName() == k && l.GetValue() == v {
			return true
		}
	}
	return false
}

// fakeBackend is a stand-in scheduler with no optional abilities; the types below add them.
type fakeBackend struct{ fail error }

func (f *fakeBackend) Inventory() []qm.Node { return nil }
func (f *fakeBackend) Start(context.Context, *qm.Lease) (qm.Started, error) {
	return qm.Started{State: qm.Active}, f.fail
}
func (f *fakeBackend) Stop(context.Context, *qm.Lease) error { return f.fail }

type fakeInstant struct{ fakeBackend }

func (fakeInstant) StartsInstantly() bool { return true }

type fakeWatcher struct{ fakeBackend }

func (fakeWatcher) Jobs(context.Context) ([]qm.Job, error) { return nil, nil }
func (fakeWatcher) Cancel(context.Context, qm.Job) error   { return nil }

type fakeRetimer struct{ fakeWatcher }

func (fakeRetimer) SetTimeLimit(context.Context, qm.Job, time.Duration) error { return nil }

type fakeRefreshingRetimer struct{ fakeRetimer }

func (fakeRefreshingRetimer) RefreshInventory(context.Context) error { return nil }

type fakeRefreshingWatcher struct{ fakeWatcher }

func (fakeRefreshingWatcher) RefreshInventory(context.Context) error { return nil }

type fakeRefresher struct{ fakeBackend }

func (fakeRefresher) RefreshInventory(context.Context) error { return nil }

// TestBackendKeepsAbilities: the wrapped backend answers the domain's questions for its ports
// exactly as the backend itself does, and its calls are counted, errors apart.
func TestBackendKeepsAbilities(t *testing.T) {
	for _, b := range []qm.Backend{&fakeBackend{}, &fakeInstant{}, &fakeWatcher{}, &fakeRetimer{}, &fakeRefreshingRetimer{},
		&fakeRefreshingWatcher{}, &fakeRefresher{}} {
		m := New(Build{Version: "test"})
		w := m.Backend("fake", b)
		if w == b {
			t.Errorf("%T was not wrapped", b)
		}
		for name, asks := range ports {
			if asks(w) != asks(b) {
				t.Errorf("%T: wrapped, has %s %v, want %v", b, name, asks(w), asks(b))
			}
		}
		if u, ok := w.(qm.BackendWrapper); !ok || u.Unwrap() != b {
			t.Errorf("%T: Unwrap does not give the backend back", b)
		}
		ctx := context.Background()
		_, _ = w.Start(ctx, &qm.Lease{})
		_ = w.Stop(ctx, &qm.Lease{})
		if got := value(t, m, "quartermaster_backend_calls_total", "backend", "fake", "op", "start"); got != 1 {
			t.Errorf("%T: start calls %v", b, got)
		}
		if wt, ok := qm.BackendAs[qm.Watcher](w); ok {
			_, _ = wt.Jobs(ctx)
			if got := value(t, m, "quartermaster_backend_calls_total", "op", "jobs"); got != 1 {
				t.Errorf("%T: jobs calls %v", b, got)
			}
		}
		if rf, ok := qm.BackendAs[qm.InventoryRefresher](w); ok {
			_ = rf.RefreshInventory(ctx)
			if got := value(t, m, "quartermaster_backend_calls_total", "op", "refresh_inventory"); got != 1 {
				t.Errorf("%T: refresh calls %v", b, got)
			}
		}
	}
	m := New(Build{})
	w := m.Backend("slurm", &fakeBackend{fail: errors.New("sbatch: error: Batch job submission failed")})
	_, _ = w.Start(context.Background(), &qm.Lease{})
	if got := value(t, m, "quartermaster_backend_errors_total", "backend", "slurm", "op", "start"); got != 1 {
		t.Errorf("a failed start counts %v errors", got)
	}
	var none *Metrics
	if b := (&fakeBackend{}); none.Backend("x", b) != b {
		t.Error("a nil Metrics wraps")
	}
}

// fakeWaits is a stand-in predictor that always predicts a 10-minute median and 30-minute bound.
type fakeWaits struct{ started int }

func (f *fakeWaits) Predict(time.Time, qm.WaitRequest, []*qm.Lease, int) qm.WaitEstimate {
	return qm.WaitEstimate{Median: 10 * time.Minute, P90: 30 * time.Minute}
}
func (f *fakeWaits) Started(*qm.Lease, time.Time) { f.started++ }
func (f *fakeWaits) Ended(*qm.Lease)              {}
func (f *fakeWaits) Left(*qm.Lease, time.Time)    {}

// TestWaitPredictionError: a lease predicted to wait 10 minutes that waited 40 records an error
// of 30 minutes, outside its 30-minute bound; the predictor itself still hears of the start.
func TestWaitPredictionError(t *testing.T) {
	m := New(Build{})
	inner := &fakeWaits{}
	w := m.Waits(inner)
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	w.Predict(t0, qm.WaitRequest{Lease: 7, Class: "bulk"}, nil, 8)
	w.Started(&qm.Lease{ID: 7, Class: "bulk", StartedAt: t0.Add(40 * time.Minute)}, t0)
	if inner.started != 1 {
		t.Fatal("the predictor did not hear of the start")
	}
	if got := value(t, m, "quartermaster_wait_predictions_total", "class", "bulk", "within", "false"); got != 1 {
		t.Errorf("outside the bound: %v", got)
	}
	fams, _ := m.reg.Gather()
	for _, f := range fams {
		if f.GetName() == "quartermaster_wait_prediction_error_seconds" {
			if s := f.GetMetric()[0].GetHistogram().GetSampleSum(); s != 1800 {
				t.Errorf("error sum %v s, want 1800", s)
			}
		}
	}
	// A lease started without a prediction records nothing.
	w.Started(&qm.Lease{ID: 8, Class: "bulk", StartedAt: t0}, t0)
	if got := value(t, m, "quartermaster_wait_prediction_error_seconds", "class", "bulk"); got != 1 {
		t.Errorf("%v observations, want 1", got)
	}
}

// TestExpositionPassesPromtool: everything the service exposes, with every instrument used, is
// accepted by promtool check metrics (the Prometheus project's own linter).
func TestExpositionPassesPromtool(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("promtool is not installed (Debian package prometheus); scripts/test.sh installs it")
		}
		t.Skip("promtool is not installed; apt-get install prometheus")
	}
	m := New(Build{Version: "v1.0.0", Commit: "abc"})
	m.SetClasses([]string{"notebook", "bulk"})
	m.SetState(func(context.Context) (State, error) {
		return State{Queued: map[string]int{"bulk": 3}, RunningGPUs: map[string]int{"notebook": 2}, PendingApprovals: 1,
			OutboxPending: 4, OutboxOldest: 90 * time.Second}, nil
	})
	m.Command("request", OutcomeOK, 30*time.Millisecond)
	m.Command("frobnicate", OutcomeError, time.Millisecond)
	m.Ack("slack", "http", "command", 4*time.Millisecond)
	m.BackendCall("slurm", "start", 80*time.Millisecond, errors.New("x"))
	m.Reconcile(20*time.Millisecond, nil)
	m.transition(qm.Queued, &qm.Lease{Class: "bulk", State: qm.Active})
	m.transition(qm.IdleWarned, &qm.Lease{Class: "notebook", State: qm.Reclaimed, Reclaimed: 1.5})
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	m.transition(qm.PendingApproval, &qm.Lease{Class: "bulk", State: qm.Queued, DecidedBy: "dana@orbit.example", CreatedAt: t0, DecidedAt: t0.Add(time.Hour)})
	w := m.Waits(&fakeWaits{})
	w.Predict(t0, qm.WaitRequest{Lease: 1, Class: "bulk"}, nil, 8)
	w.Started(&qm.Lease{ID: 1, Class: "bulk", StartedAt: t0.Add(time.Minute)}, t0)

	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body := rec.Body.String()
	for _, want := range []string{
		`quartermaster_commands_total{outcome="ok",verb="request"} 1`,
		`quartermaster_queue_depth{class="bulk"} 3`,
		`quartermaster_queue_depth{class="notebook"} 0`,
		`quartermaster_running_gpus{class="notebook"} 2`,
		`quartermaster_approvals_pending 1`,
		`quartermaster_outbox_pending 4`,
		`quartermaster_outbox_oldest_seconds 90`,
		`quartermaster_grants_total{class="bulk"} 1`,
		`quartermaster_reclaims_total{class="notebook"} 1`,
		`quartermaster_reclaimed_gpu_seconds_total{class="notebook"} 5400`,
		`quartermaster_approval_decisions_total{outcome="approved"} 1`,
		`quartermaster_approval_decision_seconds_sum{outcome="approved"} 3600`,
		`quartermaster_backend_errors_total{backend="slurm",op="start"} 1`,
		`quartermaster_build_info{commit="abc",goversion=`,
		`go_goroutines `,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(body)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil || strings.TrimSpace(out.String()) != "" {
		t.Fatalf("promtool check metrics: %v\n%s", err, out.String())
	}
}

// TestStateErrorsAreCounted: when the database cannot be read the gauges are left out of the
// scrape (no stale numbers) and the failure is counted.
func TestStateErrorsAreCounted(t *testing.T) {
	m := New(Build{})
	m.SetState(func(context.Context) (State, error) { return State{}, errors.New("database down") })
	scrape := func() string {
		rec := httptest.NewRecorder()
		m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		return rec.Body.String()
	}
	if strings.Contains(scrape(), "quartermaster_queue_depth{") {
		t.Error("queue depth shown while the database is down")
	}
	// The counter is gathered alongside the failing read, so the second scrape shows at least the first's failure.
	if !regexp.MustCompile(`(?m)^quartermaster_state_read_errors_total [12]$`).MatchString(scrape()) {
		t.Error("the failed read is not counted")
	}
}

// BenchmarkScrape: one /metrics scrape with every instrument in use and the database gauges read
// from a function that answers at once (the database read is measured apart in the store).
func BenchmarkScrape(b *testing.B) {
	m := New(Build{Version: "bench"})
	m.SetClasses([]string{"interactive", "train"})
	m.SetState(func(context.Context) (State, error) {
		return State{Queued: map[string]int{"train": 3}, RunningGPUs: map[string]int{"interactive": 4}, PendingApprovals: 2}, nil
	})
	for _, v := range []string{"request", "list", "status", "release", "approve"} {
		m.Command(v, OutcomeOK, time.Millisecond)
	}
	m.BackendCall("slurm", "start", time.Millisecond, nil)
	h := m.Handler()
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	}
}

// TestEveryCounterByClassStartsAtZero: once the policy's classes are known, every counter by
// class is on /metrics at 0 (leases ended, by each way a lease ends, too), so that an alert on
// increase(quartermaster_leases_ended_total{state="failed"}[1h]) sees the first failed lease
// rather than a series that appears at 1.
func TestEveryCounterByClassStartsAtZero(t *testing.T) {
	m := New(Build{})
	m.SetClasses([]string{"tidepool", "deepwater"})
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body := rec.Body.String()
	for _, class := range []string{"tidepool", "deepwater"} {
		want := []string{
			`quartermaster_grants_total{class="` + class + `"} 0`,
			`quartermaster_reclaims_total{class="` + class + `"} 0`,
			`quartermaster_reclaimed_gpu_seconds_total{class="` + class + `"} 0`,
		}
		for _, state := range []string{"released", "expired", "reclaimed", "denied", "cancelled", "failed"} {
			want = append(want, `quartermaster_leases_ended_total{class="`+class+`",state="`+state+`"} 0`)
		}
		for _, w := range want {
			if !strings.Contains(body, w+"\n") {
				t.Errorf("/metrics lacks %s", w)
			}
		}
	}
	if strings.Contains(body, `state="active"`) || strings.Contains(body, `state="queued"`) {
		t.Errorf("/metrics counts leases ended in a state that is no end:\n%s", body)
	}
}

// TestWaitPredictionsCountTheLeasesThatWaited: the prediction metrics, as the showback's
// predicted against actual, count the leases that waited in the queue. A lease that started at
// once was told no wait, so it is no hit of a bound (which would hide the misses of those that
// waited from an alert on the share of misses); a queued lease that left unstarted after waiting
// past its bound is a miss, as the predictor and the showback count it; one that left within its
// bound tells nothing.
func TestWaitPredictionsCountTheLeasesThatWaited(t *testing.T) {
	m := New(Build{})
	w := m.Waits(&fakeWaits{})
	t0 := time.Date(2026, 10, 3, 12, 30, 0, 0, time.UTC)
	for id := qm.LeaseID(1); id <= 4; id++ {
		w.Predict(t0, qm.WaitRequest{Lease: id, Class: "l40s"}, nil, 2)
	}
	w.Started(&qm.Lease{ID: 1, Class: "l40s", StartedAt: t0}, t0)                       // at once
	w.Started(&qm.Lease{ID: 2, Class: "l40s", StartedAt: t0.Add(20 * time.Minute)}, t0) // within 30m
	w.Left(&qm.Lease{ID: 3, Class: "l40s", EndedAt: t0.Add(45 * time.Minute)}, t0)      // left past 30m
	w.Left(&qm.Lease{ID: 4, Class: "l40s", EndedAt: t0.Add(5 * time.Minute)}, t0)       // left within it
	if got := value(t, m, "quartermaster_wait_predictions_total", "class", "l40s", "within", "true"); got != 1 {
		t.Errorf("within the bound: %v, want 1 (the lease that waited 20m, not the one that started at once)", got)
	}
	if got := value(t, m, "quartermaster_wait_predictions_total", "class", "l40s", "within", "false"); got != 1 {
		t.Errorf("outside the bound: %v, want 1 (the lease that left after 45m)", got)
	}
	if got := value(t, m, "quartermaster_wait_prediction_error_seconds", "class", "l40s"); got != 1 {
		t.Errorf("%v errors observed, want 1 (of the lease that started after waiting)", got)
	}
}
