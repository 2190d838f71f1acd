package kube_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/kube"
)

// KUBECONFIG may name several files, separated as PATH is (kubectl merges them: the first file
// to set a value wins): the service connects to the cluster they name together, as kubectl does,
// rather than taking the list for one file that does not exist.
func TestKubeconfigMayNameSeveralFiles(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"major":"1","minor":"31","gitVersion":"v1.31.0"}`)
	}))
	defer srv.Close()
	dir := t.TempDir()
	clusters := filepath.Join(dir, "clusters.yaml")
	users := filepath.Join(dir, "users.yaml")
	for path, body := range map[string]string{
		clusters: fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters: [{name: tundra, cluster: {server: %q}}]\ncontexts: [{name: t, context: {cluster: tundra, user: ops}}]\ncurrent-context: t\n", srv.URL),
		users:    "apiVersion: v1\nkind: Config\nusers: [{name: ops, user: {token: tok}}]\n",
	} {
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	list := clusters + string(os.PathListSeparator) + filepath.Join(dir, "absent.yaml") + string(os.PathListSeparator) + users
	cs, err := kube.Connect(list)
	if err != nil {
		t.Fatalf("KUBECONFIG=%s: %v", list, err)
	}
	b, err := kube.New(kube.Config{Policy: examplePolicy(t), Catalog: catalog(t), Client: cs})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := b.Ping(ctx); err != nil {
		t.Errorf("the cluster of KUBECONFIG=%s does not answer: %v", list, err)
	}
	// A list none of whose files is there is refused as one file is, naming the list.
	none := filepath.Join(dir, "a.yaml") + string(os.PathListSeparator) + filepath.Join(dir, "b.yaml")
	if _, err := kube.Connect(none); err == nil || !strings.Contains(err.Error(), "KUBECONFIG names "+none+", which are files none of which exists") {
		t.Errorf("KUBECONFIG=%s, no file of which is there: %v", none, err)
	}
}
