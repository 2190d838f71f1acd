package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/kube"
	"github.com/acme/quartermaster/internal/slurm"
)

// TestSchedulerBackends: backend slurm and kubernetes wire a real backend and the template verbs
// without talking to a cluster (the kubeconfig names a server nobody is asked).
func TestSchedulerBackends(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", kubeconfig)
	for name, want := range map[string]string{"slurm": "*slurm.Backend", "kubernetes": "*kube.Backend"} {
		a, err := NewApp(context.Background(), appOptions{flags: commonFlags{backend: name, db: "sqlite:" + filepath.Join(t.TempDir(), "qm.db")}})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		switch a.Service.Backend.(type) {
		case *slurm.Backend, *kube.Backend:
		default:
			t.Errorf("%s: backend %T, want %s", name, a.Service.Backend, want)
		}
		offered := map[string]bool{}
		for _, s := range a.Bot.Offered() {
			offered[s.Name] = true
		}
		for _, verb := range []string{"templates", "template", "submit"} {
			if !offered[verb] {
				t.Errorf("%s: /gpu %s is not offered", name, verb)
			}
		}
		a.Close()
	}
}

// TestReconcileLoopRunsAtStart: serve's reconcile loop makes a pass as soon as it starts, so a
// crash heals without waiting an interval.
func TestReconcileLoopRunsAtStart(t *testing.T) {
	a, err := NewApp(context.Background(), appOptions{flags: commonFlags{db: "sqlite:" + filepath.Join(t.TempDir(), "qm.db")}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	cat, err := templateCatalog()
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var cancelled []string
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	b, err := slurm.New(slurm.Config{Policy: a.Policy, Catalog: cat, Run: func(_ context.Context, _ []byte, name string, args ...string) ([]byte, error) {
		switch name {
		case "squeue":
			return []byte(`{"jobs": [{"job_id": 77, "comment": "qm:L-4242", "job_state": "RUNNING", "nodes": "gpu01"}], "errors": []}`), nil
		case "scancel":
			mu.Lock()
			cancelled = append(cancelled, strings.Join(args, " "))
			mu.Unlock()
			stop()
		}
		return nil, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	a.Service.Backend = b
	t.Setenv("QM_RECONCILE_INTERVAL", "1h")
	done := make(chan struct{})
	go func() { reconcileLoop(ctx, a.Service, a.Logger, nil); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("the loop did not cancel the orphan job")
	}
	if len(cancelled) != 1 || cancelled[0] != "77" {
		t.Errorf("cancelled %v", cancelled)
	}
}
