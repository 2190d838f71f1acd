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

// An agent started with the node's fully qualified name (--node h100-02.gpu.acme.example, a token
// made for it) where the scheduler knows the node by its short name (h100-02) reports a node the
// scheduler has none of, so none of the leases there would ever be covered by its reports. The
// operator is told which name to use: serve logs it, and `agent-token list` marks the node as
// differing, naming the scheduler's name and the command that makes its token. The same holds the
// other way round, an agent started with a short name the scheduler knows fully qualified.
func TestAnAgentNamedOtherwiseThanTheSchedulersNodeIsToldTheName(t *testing.T) {
	t.Parallel()
	db := "sqlite:" + filepath.Join(t.TempDir(), "qm.db")
	const node = "H100-02.gpu.acme.example"
	code, out, stderr := runQM("agent-token", "create", node, "--db", db)
	if code != 0 {
		t.Fatalf("create %s: %d %s", node, code, stderr)
	}
	token := strings.TrimSpace(out)
	var logs testkit.SyncBuffer
	log, err := newTestLogger(&logs)
	if err != nil {
		t.Fatal(err)
	}
	o := serveOptions{app: appOptions{flags: commonFlags{db: db}}}
	o.app.logger = log
	s := startServe(t, o)
	f, err := nvml.NewFake("dgxh100", node, nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := nvml.OpenFake(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	send := func(node, token string) {
		t.Helper()
		a, err := agent.New(agent.Config{Node: node, Devices: d})
		if err != nil {
			t.Fatal(err)
		}
		r, err := a.Collect(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		body, _ := json.Marshal(r)
		req, _ := http.NewRequest(http.MethodPost, s.url+report.Path, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set(report.SentAtHeader, time.Now().UTC().Format(time.RFC3339Nano))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("the report of %s: %d", node, resp.StatusCode)
		}
	}
	send(node, token)
	if text := logs.String(); !strings.Contains(text, `"level":"WARN"`) || !strings.Contains(text, "--node h100-02") {
		t.Errorf("serve's log does not tell the scheduler's name for the node:\n%s", text)
	}
	_, list, _ := runQM("agent-token", "list", "--db", db)
	if !strings.Contains(list, "DIFFERS") || !strings.Contains(list, "--node h100-02") || !strings.Contains(list, "agent-token create h100-02") {
		t.Errorf("agent-token list does not say which name to use:\n%s", list)
	}
	// What it says, done, mends it: the agent's reports under the scheduler's name are taken and
	// match the inventory.
	_, said, _ := strings.Cut(list, "(quartermaster agent-token ")
	said = "agent-token " + said
	said, _, _ = strings.Cut(said, ")")
	var newToken string
	for _, step := range strings.Split(said, ", then quartermaster ") {
		args := append(strings.Fields(strings.TrimPrefix(step, "agent-token ")), "--db", db)
		code, out, stderr := runQM(append([]string{"agent-token"}, args...)...)
		if code != 0 {
			t.Fatalf("agent-token %v, as the list says: %d %s", args, code, stderr)
		}
		if args[0] == "create" {
			newToken = strings.TrimSpace(out)
		}
	}
	send("h100-02", newToken)
	if _, list, _ = runQM("agent-token", "list", "--db", db); !strings.Contains(list, "matches") {
		t.Errorf("after doing what the list said, the node does not match:\n%s", list)
	}
}
