package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/agent"
	"github.com/acme/quartermaster/agent/report"
	"github.com/acme/quartermaster/internal/httpserve"
	"github.com/acme/quartermaster/internal/testkit"
)

// A node's report too large for the service is refused alike whatever its size: one just over the
// report's limit and one over the limit on every request body (with or without a Content-Length)
// are each answered 413 with the same sentence and counted as too_large in
// quartermaster_agent_reports_total; the agent sends none of them, and says so once in its log.
func TestAgentReportsTooLargeAreCountedWhateverTheirSize(t *testing.T) {
	t.Parallel()
	db := "sqlite:" + filepath.Join(t.TempDir(), "qm.db")
	code, token, stderr := runQM("agent-token", "create", "gpu-01", "--db", db)
	token = strings.TrimSpace(token)
	if code != 0 {
		t.Fatalf("create: exit %d, %s", code, stderr)
	}
	s := startServe(t, serveOptions{app: appOptions{flags: commonFlags{db: db}}})
	body := func(size int64) []byte {
		head := fmt.Sprintf(`{"version":1,"node":"gpu-01","at":%q,"driver":"`, time.Now().UTC().Format(time.RFC3339))
		return []byte(head + strings.Repeat("x", int(size)-len(head)-2) + `"}`)
	}
	counted := func() string {
		t.Helper()
		_, m := getBody(t, s.url+"/metrics")
		for line := range strings.SplitSeq(m, "\n") {
			if strings.HasPrefix(line, `quartermaster_agent_reports_total{outcome="too_large"} `) {
				return strings.TrimPrefix(line, `quartermaster_agent_reports_total{outcome="too_large"} `)
			}
		}
		t.Fatalf("/metrics has no too_large count:\n%s", m)
		return ""
	}
	want := fmt.Sprintf("the report is larger than %d bytes", report.MaxBytes)
	sizes := []struct {
		name string
		size int64
	}{
		{"just over the report's limit", report.MaxBytes + 100},
		{"over every request's limit", httpserve.DefaultMaxBody + 100},
		{"far over every request's limit", 3 * httpserve.DefaultMaxBody},
	}
	for i, c := range sizes {
		req, _ := http.NewRequest(http.MethodPost, s.url+report.Path, bytes.NewReader(body(c.size)))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var e report.Error
		if resp.StatusCode != http.StatusRequestEntityTooLarge || json.Unmarshal(b, &e) != nil || e.Error != want {
			t.Errorf("%s (%d bytes): HTTP %d %q, want 413 {\"error\":%q}", c.name, c.size, resp.StatusCode, b, want)
		}
		if got := counted(); got != fmt.Sprint(i+1) {
			t.Errorf("after a report %s, too_large is %s, want %d", c.name, got, i+1)
		}
	}
	// Without a Content-Length, the body is found too large as it arrives.
	req, _ := http.NewRequest(http.MethodPost, s.url+report.Path, io.MultiReader(bytes.NewReader(body(httpserve.DefaultMaxBody+100))))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(b), want) {
		t.Errorf("a chunked report over every request's limit: HTTP %d %q", resp.StatusCode, b)
	}
	if got := counted(); got != fmt.Sprint(len(sizes)+1) {
		t.Errorf("after a chunked report over every request's limit, too_large is %s, want %d", got, len(sizes)+1)
	}
	// Without the node's token, a report of any size is refused for its token, as a small one.
	req, _ = http.NewRequest(http.MethodPost, s.url+report.Path, bytes.NewReader(body(httpserve.DefaultMaxBody+100)))
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a report over every request's limit without a token: HTTP %d, want 401", resp.StatusCode)
	}

	// The agent sends none of them: it drops each unsent as one the service would refuse, and says
	// so once, with the service's limit.
	var logs testkit.SyncBuffer
	log, err := newTestLogger(&logs)
	if err != nil {
		t.Fatal(err)
	}
	before := counted()
	o := agent.NewOutbox(agent.OutboxConfig{URL: s.url, Token: token, Logger: log})
	for _, c := range sizes {
		o.Push(body(c.size))
	}
	if err := o.Flush(t.Context()); err != nil {
		t.Fatalf("the agent kept reports too large for the service: %v", err)
	}
	if got := counted(); got != before {
		t.Errorf("the agent sent reports too large for the service: too_large went from %s to %s", before, got)
	}
	if _, _, refused, _ := o.Stats(); refused != uint64(len(sizes)) {
		t.Errorf("the agent counted %d reports as refused, want %d", refused, len(sizes))
	}
	if n := strings.Count(logs.String(), "the service takes, so the agent dropped it unsent"); n != 1 {
		t.Errorf("the agent said %d times that a report is too large, want once:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), fmt.Sprintf("the %d bytes", report.MaxBytes)) {
		t.Errorf("the agent's log does not name the limit:\n%s", logs.String())
	}
}
