package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/agent/report"
)

func runQM(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// agent-token creates, lists and revokes node tokens; serve takes reports under a valid token only.
func TestAgentTokensAndServeIngest(t *testing.T) {
	t.Parallel()
	db := "sqlite:" + filepath.Join(t.TempDir(), "qm.db")
	code, token, stderr := runQM("agent-token", "create", "gpu-01", "--db", db)
	token = strings.TrimSpace(token)
	if code != 0 || !strings.HasPrefix(token, "qma_") || !strings.Contains(stderr, "shown once") {
		t.Fatalf("create: exit %d, token %q, stderr %q", code, token, stderr)
	}
	if code, _, stderr := runQM("agent-token", "--db", db, "create", "gpu-01"); code != 1 || !strings.Contains(stderr, "revoke it first") {
		t.Errorf("a second token: exit %d, %q", code, stderr)
	}
	if code, _, stderr := runQM("agent-token", "create", "gpu 01", "--db", db); code != 2 || !strings.Contains(stderr, "not a node name") {
		t.Errorf("a bad node name: exit %d, %q", code, stderr)
	}
	if code, _, stderr := runQM("agent-token", "frob", "--db", db); code != 2 || !strings.Contains(stderr, `"frob" is not an agent-token command; agent-token takes create, list or revoke, e.g. quartermaster agent-token list --db `+db) {
		t.Errorf("a bad verb: exit %d, %q", code, stderr)
	}

	s := startServe(t, serveOptions{app: appOptions{flags: commonFlags{db: db}}})
	post := func(tok string, at time.Time) int {
		util := 40.0
		body, _ := json.Marshal(report.Report{Version: report.Version, Node: "gpu-01", At: at, Seq: 1, Interval: 10,
			GPUs: []report.GPU{{Index: 0, UUID: "GPU-0", Util: &util}}})
		req, _ := http.NewRequest(http.MethodPost, s.url+report.Path, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	now := time.Now().UTC()
	if got := post(token, now); got != http.StatusOK {
		t.Fatalf("a report under the node's token: %d", got)
	}
	if got := post("qma_wrong", now.Add(time.Second)); got != http.StatusUnauthorized {
		t.Errorf("a wrong token: %d", got)
	}
	_, list, _ := runQM("agent-token", "list", "--db", db)
	if !strings.Contains(list, "gpu-01") || !strings.Contains(list, "valid") || strings.Contains(list, "never") {
		t.Errorf("list after a report:\n%s", list)
	}
	if code, out, _ := runQM("agent-token", "revoke", "gpu-01", "--db", db); code != 0 || !strings.Contains(out, "revoked") {
		t.Fatalf("revoke: %d %q", code, out)
	}
	// The service trusts a checked token for 30 s, but checks it again as it writes.
	if got := post(token, now.Add(2*time.Second)); got != http.StatusUnauthorized {
		t.Errorf("a revoked token: %d", got)
	}
	if _, list, _ := runQM("agent-token", "list", "--db", db); !strings.Contains(list, "revoked") {
		t.Errorf("list after revoking:\n%s", list)
	}
}

// agent-token takes a Kubernetes node's name (a DNS subdomain) of up to 253 characters, and
// refuses a longer one in one sentence that says why, with an example.
func TestAgentTokenForALongKubernetesNodeName(t *testing.T) {
	t.Parallel()
	db := "sqlite:" + filepath.Join(t.TempDir(), "qm.db")
	name := strings.Join([]string{"gke-research-gpu-pool-a100-8bc1d2e3-x7k2", strings.Repeat("a", 63), strings.Repeat("b", 63), strings.Repeat("c", 63)}, ".")
	name += "." + strings.Repeat("z", 253-len(name)-1)
	if code, token, stderr := runQM("agent-token", "create", name, "--db", db); code != 0 || !strings.HasPrefix(token, "qma_") {
		t.Fatalf("create for a node of %d characters: exit %d, %q", len(name), code, stderr)
	}
	if _, list, _ := runQM("agent-token", "list", "--db", db); !strings.Contains(list, name) {
		t.Errorf("list does not show the node:\n%s", list)
	}
	if code, out, stderr := runQM("agent-token", "revoke", name, "--db", db); code != 0 || !strings.Contains(out, "revoked") {
		t.Errorf("revoke: exit %d, %q %q", code, out, stderr)
	}
	code, _, stderr := runQM("agent-token", "create", name+"z", "--db", db)
	first, _, _ := strings.Cut(stderr, "\n")
	if code != 2 || !strings.Contains(first, "254 characters") || !strings.Contains(first, "at most 253") || !strings.Contains(first, "e.g. quartermaster agent-token create gpu-01") {
		t.Errorf("a node of 254 characters: exit %d, %q", code, stderr)
	}
}

// agent-token list gives each node's last report on the service's clock, the one the service's
// logs and the idle path go by, however far off the node's clock is, and says how far off that
// was when it came in, as the agent's quartermaster_agent_clock_skew_seconds does.
func TestAgentTokenListShowsTheLastReportOnTheServicesClock(t *testing.T) {
	t.Parallel()
	db := "sqlite:" + filepath.Join(t.TempDir(), "qm.db")
	tokens := map[string]string{}
	for _, node := range []string{"gpu-01", "gpu-02", "gpu-03"} {
		code, token, stderr := runQM("agent-token", "create", node, "--db", db)
		if code != 0 {
			t.Fatalf("create %s: %d %s", node, code, stderr)
		}
		tokens[node] = strings.TrimSpace(token)
	}
	s := startServe(t, serveOptions{app: appOptions{flags: commonFlags{db: db}}})
	postAt := func(node string, nodeNow time.Time) {
		util := 40.0
		body, _ := json.Marshal(report.Report{Version: report.Version, Node: node, At: nodeNow, Run: "r1", Seq: 1, Interval: 10,
			GPUs: []report.GPU{{Index: 0, UUID: node + "-GPU-0", Util: &util}}})
		req, _ := http.NewRequest(http.MethodPost, s.url+report.Path, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tokens[node])
		req.Header.Set(report.SentAtHeader, nodeNow.Format(time.RFC3339Nano))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s's report: %d", node, resp.StatusCode)
		}
	}
	post := func(node string, skew time.Duration) {
		postAt(node, time.Now().UTC().Add(skew))
	}
	post("gpu-01", -48*time.Hour)
	post("gpu-02", 10*time.Minute)
	// A clock far ahead is shown in years, not as a duration that overflowed (2562047h47m16s).
	postAt("gpu-03", time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC))
	today := time.Now().UTC()
	_, list, _ := runQM("agent-token", "list", "--db", db)
	lines := strings.Split(strings.TrimSpace(list), "\n")
	if len(lines) < 3 || !strings.Contains(lines[0], "service's clock") {
		t.Fatalf("list does not say which clock its times are on:\n%s", list)
	}
	// Its whole years, by the service's clock now: 7972 from 2026-11-30.
	years := 9999 - today.Year() - 1
	if !strings.Contains(list, fmt.Sprintf(" %d years ahead", years)) && !strings.Contains(list, fmt.Sprintf(" %d years ahead", years+1)) ||
		strings.Contains(list, "2562047h") {
		t.Errorf("gpu-03's clock, set to 9999-01-01, is not shown as %d years ahead:\n%s", years, list)
	}
	for node, want := range map[string]string{"gpu-01": "48h0m0s behind", "gpu-02": "10m0s ahead"} {
		var row string
		for _, l := range lines {
			if strings.HasPrefix(l, node+" ") {
				row = l
			}
		}
		fields := strings.Fields(row)
		if len(fields) < 4 {
			t.Fatalf("no row for %s:\n%s", node, list)
		}
		last, err := time.Parse(time.RFC3339, fields[3])
		if err != nil || last.Sub(today).Abs() > time.Minute {
			t.Errorf("%s's last report is %q; want about %s, the service's clock:\n%s", node, fields[3], today.Format(time.RFC3339), list)
		}
		if !strings.Contains(row, want) {
			t.Errorf("%s's row does not say its clock was %s:\n%s", node, want, list)
		}
	}
}
