package kube

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A kubeconfig that is missing, not YAML, or names no cluster is refused in one sentence that
// names the file and KUBECONFIG and says what to do, not client-go's own advice to set
// KUBERNETES_MASTER, which the service does not read.
func TestConnectRefusesAKubeconfigItCannotUseSayingWhatToDo(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, path := range []string{
		filepath.Join(dir, "nowhere", "config"),
		write("garbled", "clusters: [\n"),
		write("empty", "apiVersion: v1\nkind: Config\nclusters: []\n"),
	} {
		_, err := Connect(path)
		if err == nil {
			t.Errorf("%s: connected", path)
			continue
		}
		msg := err.Error()
		for _, want := range []string{"KUBECONFIG", path} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: %q does not name %s", path, msg, want)
			}
		}
		if strings.Contains(msg, "KUBERNETES_MASTER") || strings.Contains(msg, "\n") {
			t.Errorf("%s: %q is not one sentence in the service's terms", path, msg)
		}
	}
}
