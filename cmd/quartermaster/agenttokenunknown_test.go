package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// agent-token create for a node the scheduler does not know (here the policy's simulated
// cluster: a10-01…03, b200-01…02) still makes the token, exit 0, for a node added later, but
// warns at once naming the nearest nodes the scheduler knows, rather than leaving the mistake to
// be found once the agent reports; a node it knows gets no warning.
func TestAgentTokenCreateWarnsOfANodeTheSchedulerDoesNotKnow(t *testing.T) {
	clearEnv(t)
	t.Setenv("QM_DATA_DIR", t.TempDir())
	t.Setenv("QM_POLICY", "../../commands/testdata/fjord.yaml")
	db := "sqlite:" + filepath.Join(t.TempDir(), "tokens.db")
	for _, c := range []struct{ node, meant string }{
		{"b200-1", "b200-01"},
		{"a10-04", "a10-01, a10-02 or a10-03"},
		{"b200-02.gpu.fjord.example", "b200-02"},
	} {
		code, stdout, stderr := runQM("agent-token", "create", c.node, "--db", db)
		if code != 0 || strings.TrimSpace(stdout) == "" {
			t.Errorf("create %s: exit %d, token %q; want the token made all the same (%s)", c.node, code, stdout, stderr)
			continue
		}
		if !strings.Contains(stderr, "does not know") || !strings.Contains(stderr, c.node) || !strings.Contains(stderr, "did you mean "+c.meant) {
			t.Errorf("create %s: stderr %q; want a warning that the scheduler does not know it, naming %s", c.node, stderr, c.meant)
		}
	}
	code, _, stderr := runQM("agent-token", "create", "b200-01", "--db", db)
	if code != 0 || strings.Contains(stderr, "does not know") || strings.Contains(stderr, "did you mean") {
		t.Errorf("create of a known node: exit %d, %q; want no warning", code, stderr)
	}
	if _, out, _ := runQM("agent-token", "list", "--db", db); !strings.Contains(out, "b200-1 ") || !strings.Contains(out, "a10-04") {
		t.Errorf("the tokens of the unknown nodes were not made:\n%s", out)
	}
}

// Where the scheduler's nodes cannot be read here (no policy named, Kubernetes with no kubeconfig
// and no pod's service account, or a policy that cannot be read), agent-token create says nothing
// more than it did.
func TestAgentTokenCreateSaysNothingMoreWithoutAnInventory(t *testing.T) {
	clearEnv(t)
	t.Setenv("QM_DATA_DIR", t.TempDir())
	db := "sqlite:" + filepath.Join(t.TempDir(), "tokens.db")
	if code, _, stderr := runQM("agent-token", "create", "zz-99", "--db", db); code != 0 || strings.Contains(stderr, "does not know") {
		t.Errorf("no policy: exit %d, %q", code, stderr)
	}
	t.Setenv("QM_POLICY", "../../commands/testdata/borealis-kube.yaml")
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "no-kubeconfig"))
	if code, _, stderr := runQM("agent-token", "create", "zz-98", "--db", db); code != 0 || strings.Contains(stderr, "does not know") {
		t.Errorf("kubernetes: exit %d, %q", code, stderr)
	}
	t.Setenv("QM_POLICY", filepath.Join(t.TempDir(), "missing.yaml"))
	if code, _, stderr := runQM("agent-token", "create", "zz-97", "--db", db); code != 0 || strings.Contains(stderr, "does not know") {
		t.Errorf("a policy that cannot be read: exit %d, %q", code, stderr)
	}
}

// On Slurm the scheduler's nodes are those sinfo lists: a node it does not list gets the warning,
// one it lists none; a controller that does not answer adds nothing.
func TestAgentTokenCreateWarnsOfANodeSlurmDoesNotList(t *testing.T) {
	clearEnv(t)
	t.Setenv("QM_DATA_DIR", t.TempDir())
	t.Setenv("QM_POLICY", "../../commands/testdata/fjord.yaml")
	t.Setenv("QM_BACKEND", "slurm")
	bin := t.TempDir()
	sinfo := filepath.Join(bin, "sinfo")
	write := func(script string) {
		t.Helper()
		if err := os.WriteFile(sinfo, []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(`echo '{"nodes":[{"name":"reef-07","partitions":["pad"]},{"name":"reef-08","partitions":["iron"]}]}'`)
	t.Setenv("PATH", bin+":/usr/bin:/bin")
	db := "sqlite:" + filepath.Join(t.TempDir(), "tokens.db")
	code, stdout, stderr := runQM("agent-token", "create", "reef-8", "--db", db)
	if code != 0 || strings.TrimSpace(stdout) == "" || !strings.Contains(stderr, "does not know node reef-8") || !strings.Contains(stderr, "did you mean reef-08?") {
		t.Errorf("create reef-8: exit %d, %q; want the token and a warning naming reef-08", code, stderr)
	}
	if code, _, stderr := runQM("agent-token", "create", "reef-07", "--db", db); code != 0 || strings.Contains(stderr, "does not know") {
		t.Errorf("create reef-07: exit %d, %q; want no warning", code, stderr)
	}
	write("echo 'slurm_load_partitions: Unable to contact slurm controller' >&2; exit 1")
	// The backend asks scontrol where sinfo fails: it cannot reach the controller either (the
	// scontrol on the PATH would ask the test cluster, where one is up).
	if err := os.WriteFile(filepath.Join(bin, "scontrol"), []byte("#!/bin/sh\necho 'slurm_load_node error: Unable to contact slurm controller' >&2; exit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runQM("agent-token", "create", "reef-9", "--db", db); code != 0 || strings.Contains(stderr, "does not know") {
		t.Errorf("controller down: exit %d, %q; want the token and nothing more", code, stderr)
	}
}

// On Kubernetes the scheduler's nodes are those the API server of KUBECONFIG lists: a node it
// does not list gets the warning, naming the nearest it lists (the node of the same short name
// where the node's full name was meant); one it lists none; an API server that does not answer,
// or refuses the credentials, adds nothing.
func TestAgentTokenCreateWarnsOfANodeKubernetesDoesNotList(t *testing.T) {
	clearEnv(t)
	t.Setenv("QM_DATA_DIR", t.TempDir())
	t.Setenv("QM_POLICY", "../../commands/testdata/borealis-kube.yaml")
	var refuse atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/nodes" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if refuse.Load() {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}`)
			return
		}
		fmt.Fprint(w, `{"kind":"NodeList","apiVersion":"v1","items":[{"metadata":{"name":"tundra-a3"}},
			{"metadata":{"name":"tundra-a4"}},{"metadata":{"name":"floe-h200-1.tundra.example"}}]}`)
	}))
	defer srv.Close()
	kubeconfig := func(url string) string {
		cfg := filepath.Join(t.TempDir(), "kubeconfig")
		if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`, url)), 0o600); err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	t.Setenv("KUBECONFIG", kubeconfig(srv.URL))
	db := "sqlite:" + filepath.Join(t.TempDir(), "tokens.db")
	for _, c := range []struct{ node, meant string }{
		{"tundra-a5", "tundra-a3 or tundra-a4"},
		{"floe-h200-1", "floe-h200-1.tundra.example"},
	} {
		code, stdout, stderr := runQM("agent-token", "create", c.node, "--db", db)
		if code != 0 || strings.TrimSpace(stdout) == "" || !strings.Contains(stderr, "does not know node "+c.node) ||
			!strings.Contains(stderr, "did you mean "+c.meant+"?") {
			t.Errorf("create %s: exit %d, %q; want the token and a warning naming %s", c.node, code, stderr, c.meant)
		}
	}
	if code, _, stderr := runQM("agent-token", "create", "TUNDRA-A4", "--db", db); code != 0 || strings.Contains(stderr, "does not know") {
		t.Errorf("create of a listed node: exit %d, %q; want no warning", code, stderr)
	}
	refuse.Store(true)
	if code, stdout, stderr := runQM("agent-token", "create", "tundra-a9", "--db", db); code != 0 || strings.TrimSpace(stdout) == "" || strings.Contains(stderr, "does not know") {
		t.Errorf("credentials refused: exit %d, %q; want the token and nothing more", code, stderr)
	}
	t.Setenv("KUBECONFIG", kubeconfig("https://127.0.0.1:1"))
	if code, stdout, stderr := runQM("agent-token", "create", "tundra-a8", "--db", db); code != 0 || strings.TrimSpace(stdout) == "" || strings.Contains(stderr, "does not know") {
		t.Errorf("API server not answering: exit %d, %q; want the token and nothing more", code, stderr)
	}
}
