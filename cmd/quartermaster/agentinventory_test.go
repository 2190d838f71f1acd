//go:build cgo

package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/agent"
	"github.com/acme/quartermaster/agent/nvml"
	"github.com/acme/quartermaster/agent/report"
	"github.com/acme/quartermaster/internal/testkit"
)

// An agent started as l40s-01 on a DGX A100, where the policy's simulated cluster has 4 × L40S of
// class interactive, is shown where an operator looks: serve logs it, `agent-token list` marks
// the node and says what differs and what to check, and /metrics has
// quartermaster_agent_inventory_mismatch{node="l40s-01"} 1, while h100-01's agent on a DGX H100
// (8 × H100, class train's sku H100-SXM5) matches: 0. Its reports are taken all the same.
func TestAnAgentOnAnotherMachineThanItsNodeIsShownToOperators(t *testing.T) {
	t.Parallel()
	db := "sqlite:" + filepath.Join(t.TempDir(), "qm.db")
	tokens := map[string]string{}
	for _, node := range []string{"l40s-01", "h100-01", "l40s-02"} {
		code, token, stderr := runQM("agent-token", "create", node, "--db", db)
		if code != 0 {
			t.Fatalf("create %s: %d %s", node, code, stderr)
		}
		tokens[node] = strings.TrimSpace(token)
	}
	var logs testkit.SyncBuffer
	log, err := newTestLogger(&logs)
	if err != nil {
		t.Fatal(err)
	}
	o := serveOptions{app: appOptions{flags: commonFlags{db: db}}}
	o.app.logger = log
	s := startServe(t, o)
	send := func(node, kind string) {
		t.Helper()
		f, err := nvml.NewFake(kind, node, nil)
		if err != nil {
			t.Fatal(err)
		}
		d, err := nvml.OpenFake(f, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		a, err := agent.New(agent.Config{Node: node, Devices: d})
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			r, err := a.Collect(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			body, _ := json.Marshal(r)
			req, _ := http.NewRequest(http.MethodPost, s.url+report.Path, bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+tokens[node])
			req.Header.Set(report.SentAtHeader, time.Now().UTC().Format(time.RFC3339Nano))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%s's report: %d", node, resp.StatusCode)
			}
		}
	}
	send("l40s-01", "dgxa100")
	send("h100-01", "dgxh100")

	if n := strings.Count(logs.String(), "does not report the GPUs the scheduler's inventory holds"); n != 1 {
		t.Errorf("%d warnings in serve's log; want 1:\n%s", n, logs.String())
	}
	_, list, _ := runQM("agent-token", "list", "--db", db)
	row := func(node string) string {
		for _, l := range strings.Split(list, "\n") {
			if strings.HasPrefix(l, node+" ") {
				return l
			}
		}
		t.Fatalf("no row for %s:\n%s", node, list)
		return ""
	}
	if !strings.Contains(row("l40s-01"), "DIFFERS") || !strings.Contains(row("h100-01"), "matches") || !strings.Contains(row("l40s-02"), "not checked") {
		t.Errorf("list's INVENTORY column:\n%s", list)
	}
	for _, want := range []string{"l40s-01: its agent reports 8 GPUs (Mock NVIDIA A100-SXM4-40GB)", "4 GPUs (class interactive: 4 × L40S)", "--node (QM_NODE)", "sku of class interactive"} {
		if !strings.Contains(list, want) {
			t.Errorf("list does not say %q:\n%s", want, list)
		}
	}

	code, body := getBody(t, s.url+"/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics: HTTP %d", code)
	}
	for _, want := range []string{
		`quartermaster_agent_inventory_mismatch{node="l40s-01"} 1`,
		`quartermaster_agent_inventory_mismatch{node="h100-01"} 0`,
		`quartermaster_agent_inventory_mismatch{node="l40s-02"} 0`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	promtoolCheck(t, body)
}
