package kube_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

// TestNodeNamesAreEveryNodeTheAPIServerLists: the nodes agent-token create checks a node against
// are every node the API server lists, whatever the policy's classes select, a cordoned one
// included (its agent still reports); an API server that refuses the credentials is an error.
func TestNodeNamesAreEveryNodeTheAPIServerLists(t *testing.T) {
	var refuse atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/nodes" {
			http.NotFound(w, r)
			return
		}
		if refuse.Load() {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"kind":"NodeList","apiVersion":"v1","items":[
			{"metadata":{"name":"tundra-a3","labels":{"pool.tundra.example/tier":"mig"}}},
			{"metadata":{"name":"floe-h200-1.tundra.example"},"spec":{"unschedulable":true}},
			{"metadata":{"name":"cpu-only-9"}}]}`)
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	b := backendAt(t, srv.URL, "test")
	names, err := b.NodeNames(ctx)
	slices.Sort(names)
	if want := []string{"cpu-only-9", "floe-h200-1.tundra.example", "tundra-a3"}; err != nil || !slices.Equal(names, want) {
		t.Errorf("node names %q, %v; want %q", names, err, want)
	}
	refuse.Store(true)
	if names, err := b.NodeNames(ctx); err == nil {
		t.Errorf("refused credentials gave node names %q and no error", names)
	}
}
