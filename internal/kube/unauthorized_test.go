package kube_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/acme/quartermaster/internal/kube"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/testkit"
)

// TestALeaseWhoseCredentialsTheAPIRefusesWaits: the API server answers 401 Unauthorized to every
// call of the service (its token revoked or expired). That is the installation's fault, not the
// request's: the lease waits in the service's queue, unbilled, saying that the service's
// Kubernetes credentials are refused and a platform admin must renew them; the log says so once,
// however many passes run meanwhile; once the credentials are renewed the lease starts.
func TestALeaseWhoseCredentialsTheAPIRefusesWaits(t *testing.T) {
	ctx := context.Background()
	k, logs := loggedKaskade(t)
	k.reconcile()
	revoked := refuseCredentials(k)
	out, err := k.svc.Request(ctx, qm.LeaseRequest{User: "astrid@kaskade.example", GPUs: 2, Class: "tung",
		Duration: 3 * time.Hour, Template: "jupyterlab"})
	if err != nil {
		t.Fatalf("the reply to a request whose start the API refused the service's credentials for: %v", err)
	}
	id := out.Lease.ID
	got := k.lease(id)
	if got.State != qm.Queued || !strings.Contains(got.Reason, "Kubernetes") || !strings.Contains(got.Reason, "credentials") ||
		!strings.Contains(got.Reason, "platform admin must renew them") {
		t.Fatalf("lease %s %q, want queued saying the service's Kubernetes credentials are refused and a platform admin must renew them", got.State, got.Reason)
	}
	if !got.StartedAt.IsZero() {
		t.Errorf("billed from %s", got.StartedAt)
	}
	lines := func() int { return strings.Count(logs.String(), "\n") }
	var after1 int
	for i := range 4 {
		if i == 1 {
			after1 = lines()
		}
		k.clock.Advance(time.Minute)
		_, _ = k.svc.Reconcile(ctx) // fails: the API refuses every call
		if err := k.svc.Tick(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if got := k.lease(id); got.State != qm.Queued {
		t.Errorf("lease %s %q while the credentials are still refused", got.State, got.Reason)
	}
	if n := strings.Count(logs.String(), "no lease starts until then"); n != 1 {
		t.Errorf("the log says %d times that the credentials are refused, want once:\n%s", n, logs.String())
	}
	if n := lines(); n != after1 {
		t.Errorf("the log grew by %d lines over 3 more passes of the same refusal, want none:\n%s", n-after1, logs.String())
	}
	// Renewed: the next pass starts the lease.
	*revoked = false
	k.clock.Advance(time.Minute)
	k.pass()
	got = k.lease(id)
	if got.Ref == "" || got.State.Ended() || got.State == qm.Queued {
		t.Fatalf("lease %s %q %q once the credentials are renewed", got.State, got.Reason, got.Ref)
	}
	if !strings.Contains(logs.String(), "accepts the service's credentials again") {
		t.Errorf("the log does not say the credentials are accepted again:\n%s", logs.String())
	}
}

// TestPingSaysCredentialsAreRefused: /readyz's check of the backend fails while the API server
// answers 401, saying that the service's credentials are refused and who must renew them, not that
// the API server does not answer; it passes again once they are accepted.
func TestPingSaysCredentialsAreRefused(t *testing.T) {
	var revoked syncFlag
	revoked.set(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if revoked.get() {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}`)
			return
		}
		if r.URL.Path == "/version" {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"major":"1","minor":"31","gitVersion":"v1.31.0"}`)
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	b := backendAt(t, srv.URL, "expired")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := b.Ping(ctx)
	if err == nil || !strings.Contains(err.Error(), "refuses the service's credentials") || !strings.Contains(err.Error(), "platform admin") {
		t.Fatalf("ping an API server answering 401: %v", err)
	}
	revoked.set(false)
	if err := b.Ping(ctx); err != nil {
		t.Errorf("ping once the credentials are accepted: %v", err)
	}
}

type syncFlag struct {
	mu sync.Mutex
	v  bool
}

func (f *syncFlag) set(v bool) { f.mu.Lock(); f.v = v; f.mu.Unlock() }
func (f *syncFlag) get() bool  { f.mu.Lock(); defer f.mu.Unlock(); return f.v }

// loggedKaskade is newKaskade with its backend and service logging to the buffer it returns.
func loggedKaskade(t *testing.T) (*kaskade, *testkit.SyncBuffer) {
	t.Helper()
	k := newKaskade(t)
	logs := &testkit.SyncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	b, err := kube.New(kube.Config{Policy: k.p, Catalog: catalog(t), Client: k.cs, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	k.svc = &qm.Service{Policy: k.p, Store: k.store, Backend: b, Clock: k.clock, Directory: k.p,
		Notifier: k.notes, Telemetry: k.tel, Logger: log}
	return k, logs
}

// refuseCredentials makes k's API server answer 401 Unauthorized to every call (the service's
// token revoked or expired) until the flag it returns is set false (the credentials renewed).
func refuseCredentials(k *kaskade) *bool {
	revoked := true
	k.cs.PrependReactor("*", "*", func(k8stesting.Action) (bool, runtime.Object, error) {
		if revoked {
			return true, nil, apierrors.NewUnauthorized("Unauthorized")
		}
		return false, nil, nil
	})
	return &revoked
}
