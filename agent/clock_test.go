//go:build cgo

package agent_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/acme/quartermaster/agent"
	"github.com/acme/quartermaster/agent/nvml"
	"github.com/acme/quartermaster/agent/report"
)

// The service says in its answer how far the node's clock is off its own (clock_skew_s). The
// agent shows it in quartermaster_agent_clock_skew_seconds and logs once when the clock goes
// more than 2 minutes off, ahead or behind, and once when it is back within.
func TestTheAgentSaysWhenTheServiceFindsItsClockOff(t *testing.T) {
	var mu sync.Mutex
	skew := 600.0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		_ = json.NewEncoder(w).Encode(report.Response{Accepted: true, ClockSkew: &skew})
	}))
	defer srv.Close()
	f, err := nvml.NewFake("dgxh100", "gpu-17", nil)
	if err != nil {
		t.Skipf("no fake in this build: %v", err)
	}
	d, err := nvml.OpenFake(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var logs bytes.Buffer
	a, err := agent.New(agent.Config{Node: "gpu-17", Devices: d, Service: srv.URL, Token: "qma_x", Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(scrape(t, a), "quartermaster_agent_clock_skew_seconds") {
		t.Error("a clock skew before the service measured one")
	}
	send := func(s float64) {
		t.Helper()
		mu.Lock()
		skew = s
		mu.Unlock()
		if _, err := a.Send(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := a.Outbox().Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []float64{600, 601.5, 0.25, -400, -399} {
		send(s)
		if want := "quartermaster_agent_clock_skew_seconds " + strconv.FormatFloat(s, 'g', -1, 64); !strings.Contains(scrape(t, a), want+"\n") {
			t.Errorf("after the service measured %v s: no %q in\n%s", s, want, scrape(t, a))
		}
	}
	out := logs.String()
	if n := strings.Count(out, "this node's clock is off"); n != 2 ||
		!strings.Contains(out, "skew=10m0s") || !strings.Contains(out, "clock=ahead") || !strings.Contains(out, "skew=-6m40s") || !strings.Contains(out, "clock=behind") {
		t.Errorf("the log says the clock is off %d times; want twice, once ahead and once behind:\n%s", n, out)
	}
	if n := strings.Count(out, "this node's clock is back"); n != 1 {
		t.Errorf("the log says the clock is back %d times; want once:\n%s", n, out)
	}
}

// A node whose clock reads the year 9999 is about 7972 years ahead of the service's, which says
// so in seconds (clock_skew_s): the agent logs it as ahead, in years, not as a duration that
// overflowed (2562047h47m16s, or the same behind).
func TestAClockCenturiesAheadIsLoggedInYears(t *testing.T) {
	skew := 2.515747356e+11 // 9999-01-01 against 2026-11-30
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(report.Response{Accepted: true, ClockSkew: &skew})
	}))
	defer srv.Close()
	f, err := nvml.NewFake("dgxa100", "gpu-18", nil)
	if err != nil {
		t.Skipf("no fake in this build: %v", err)
	}
	d, err := nvml.OpenFake(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var logs bytes.Buffer
	a, err := agent.New(agent.Config{Node: "gpu-18", Devices: d, Service: srv.URL, Token: "qma_x", Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Send(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := a.Outbox().Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if out := logs.String(); !strings.Contains(out, `skew="7972 years"`) || !strings.Contains(out, "clock=ahead") || strings.Contains(out, "2562047h") {
		t.Errorf("the log does not say the clock is 7972 years ahead:\n%s", out)
	}
}
