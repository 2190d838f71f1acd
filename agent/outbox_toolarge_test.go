package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/acme/quartermaster/agent"
	"github.com/acme/quartermaster/agent/report"
)

// bigReport is a report of a node whose GPUs run so many processes that its body is over the
// service's limit.
func bigReport(seq int) []byte {
	r := report.Report{Version: report.Version, Node: "n1", Seq: uint64(seq)}
	for g := range 8 {
		gpu := report.GPU{Index: g, UUID: fmt.Sprintf("GPU-%d", g)}
		for p := range report.MaxBytes / 8 / 40 {
			gpu.Processes = append(gpu.Processes, report.Process{PID: uint32(100000 + p), MemUsed: 1 << 30, Job: fmt.Sprint(4000 + p)})
		}
		r.GPUs = append(r.GPUs, gpu)
	}
	b, _ := json.Marshal(r)
	return b
}

// A report over the size the service takes is never sent: the service would answer it 413, or,
// past the limit on every request, without reading it, which the agent would take for a
// connection reset and retry forever, holding back every report after it. The agent drops it
// before sending, counts it with the reports refused as bad, says once in one sentence what is too
// large, the limit and what makes reports fit, and sends the reports after it as before.
func TestOutboxNeverSendsAReportOverTheServiceLimit(t *testing.T) {
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		_ = json.NewEncoder(w).Encode(report.Response{Accepted: true})
	}))
	defer srv.Close()
	var logs bytes.Buffer
	o := agent.NewOutbox(agent.OutboxConfig{URL: srv.URL, Token: "qma_x", Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	ctx := context.Background()

	big := bigReport(1)
	if len(big) <= report.MaxBytes {
		t.Fatalf("the test's report is %d bytes, not over the limit %d", len(big), report.MaxBytes)
	}
	o.Push(big)
	if err := o.Flush(ctx); err != nil {
		t.Fatalf("flush after a report over the limit: %v", err)
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("the agent sent a report over the service's limit (%d requests)", n)
	}
	if q, sent, refused, _ := o.Stats(); q != 0 || sent != 0 || refused != 1 {
		t.Errorf("after a report over the limit: queued %d, sent %d, refused %d; want 0, 0, 1", q, sent, refused)
	}
	line := logs.String()
	for _, want := range []string{
		fmt.Sprintf("is %d bytes", len(big)),                            // what is too large
		fmt.Sprintf("the %d bytes", report.MaxBytes),                    // the limit
		fmt.Sprintf("%d processes on 8 GPUs", 8*(report.MaxBytes/8/40)), // what made it so
		"fewer processes", // what to do
		"quartermaster_agent_reports_refused_total", // where it is counted
	} {
		if !strings.Contains(line, want) {
			t.Errorf("the log does not say %q:\n%s", want, line)
		}
	}

	// Another one too large is counted, not said again; the reports after them go through, and
	// the log says once that reports fit again, with how many were dropped.
	o.Push(bigReport(2))
	o.Push(body(3))
	o.Push(body(4))
	if err := o.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if n := requests.Load(); n != 2 {
		t.Errorf("the service got %d requests, want the 2 reports within the limit", n)
	}
	if _, sent, refused, _ := o.Stats(); sent != 2 || refused != 2 {
		t.Errorf("sent %d, refused %d; want 2, 2", sent, refused)
	}
	if n := strings.Count(logs.String(), "over the"); n != 1 {
		t.Errorf("the log says %d times that a report is too large, want once while it lasts:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), "reports fit again") || !strings.Contains(logs.String(), "dropped=2") {
		t.Errorf("the log does not say once that reports fit again after 2 were dropped:\n%s", logs.String())
	}
}
