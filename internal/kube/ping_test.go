package kube_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/kube"
)

// TestPing: the readiness check asks the API server for /version through a real clientset made
// from a kubeconfig. No API server runs here, so an httptest server answers /version as one does
// (a stand-in for the API server, for this one path); when it answers 503, or is gone, Ping fails.
func TestPing(t *testing.T) {
	var down atomic.Bool
	var asked atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/version" {
			http.NotFound(w, r)
			return
		}
		asked.Add(1)
		if down.Load() {
			http.Error(w, "etcd unavailable", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"major":"1","minor":"31","gitVersion":"v1.31.0"}`)
	}))
	defer srv.Close()
	b := backendAt(t, srv.URL, "test")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := b.Ping(ctx); err != nil || asked.Load() != 1 {
		t.Fatalf("ping a healthy API server: %v (asked %d times)", err, asked.Load())
	}
	down.Store(true)
	if err := b.Ping(ctx); err == nil || !strings.Contains(err.Error(), "the API server does not answer") {
		t.Errorf("ping an API server answering 503: %v", err)
	}
	srv.Close()
	if err := b.Ping(ctx); err == nil {
		t.Error("ping a closed API server succeeded")
	}
}

// backendAt is the backend on the example policy, connected through a kubeconfig to the API
// server at url with a bearer token.
func backendAt(t *testing.T, url, token string) *kube.Backend {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "kubeconfig")
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q}}]
users: [{name: u, user: {token: %q}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`, url, token)
	if err := os.WriteFile(cfg, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	cs, err := kube.Connect(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := kube.New(kube.Config{Policy: examplePolicy(t), Catalog: catalog(t), Client: cs})
	if err != nil {
		t.Fatal(err)
	}
	return b
}
