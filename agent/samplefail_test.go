//go:build cgo

package agent_test

import (
	"bytes"
	"context"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/acme/quartermaster/agent"
	"github.com/acme/quartermaster/agent/nvml"
)

// lockedBuffer is a log written by the agent's goroutines and read by the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// When no GPU of the node reads (every one off the bus, NVML failing for all), the agent says so
// once and once when they read again, not at every interval: quartermaster_agent_collect_errors_total
// counts each failed reading.
func TestNoGPUReadingIsSaidOnceNotAtEveryInterval(t *testing.T) {
	s, err := agent.ParseScript("* 40 pids=4242")
	if err != nil {
		t.Fatal(err)
	}
	f, err := nvml.NewFake("dgxa100", "dgx-01", agent.StaticScript(s))
	if err != nil {
		t.Fatal(err)
	}
	d, err := nvml.OpenFake(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	var log lockedBuffer
	a, err := agent.New(agent.Config{Node: "dgx-01", Devices: d, Cgroups: agent.Cgroups{ProcRoot: "testdata/proc"},
		Interval: 5 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	fail := false
	for _, dd := range f.Server.Devices {
		dev := dd.(*server.Device)
		util := dev.GetUtilizationRatesFunc
		dev.GetUtilizationRatesFunc = func() (gonvml.Utilization, gonvml.Return) {
			mu.Lock()
			defer mu.Unlock()
			if fail {
				return gonvml.Utilization{}, gonvml.ERROR_GPU_IS_LOST
			}
			return util()
		}
	}
	setFail := func(v bool) { mu.Lock(); fail = v; mu.Unlock() }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = a.Run(ctx); close(done) }()
	waitFor := func(what string, ok func(string) bool) {
		t.Helper()
		for i := 0; !ok(scrape(t, a)); i++ {
			if i > 20000 {
				t.Fatalf("/metrics never showed %s", what)
			}
			time.Sleep(time.Millisecond)
		}
	}
	allRead := func(m string) bool { return strings.Contains(m, "quartermaster_agent_gpus 8\n") }
	waitFor("8 GPUs read", allRead)
	setFail(true)
	waitFor("ten readings in a row without a GPU", func(m string) bool {
		var n int
		for _, l := range strings.Split(m, "\n") {
			if v, ok := strings.CutPrefix(l, "quartermaster_agent_collect_errors_total "); ok {
				n, _ = strconv.Atoi(v)
			}
		}
		return n >= 10
	})
	setFail(false)
	waitFor("8 GPUs read again", allRead)
	cancel()
	<-done
	text := log.String()
	if n := strings.Count(text, "level=ERROR"); n != 1 {
		t.Errorf("ten readings without a GPU logged %d errors; want one:\n%s", n, text)
	}
	if !strings.Contains(text, "level=INFO") || !strings.Contains(strings.ToLower(text), "read again") {
		t.Errorf("the log does not say when the GPUs read again:\n%s", text)
	}
}

// A reading that fails does not use up the topology the next report must carry: the first report
// the service gets from an agent whose first reading failed (the GPUs not ready yet at boot) has
// the topology, so the service knows the node's GPUs from it instead of skipping every one as
// unknown and asking again.
func TestTheTopologyGoesWithTheFirstReportThatIsMade(t *testing.T) {
	a, f, _ := newFakeAgent(t, "dgxh100", "* 30 pids=4242", agent.LabelsDCGM)
	var restore []func()
	for _, dd := range f.Server.Devices {
		dev := dd.(*server.Device)
		util := dev.GetUtilizationRatesFunc
		dev.GetUtilizationRatesFunc = func() (gonvml.Utilization, gonvml.Return) { return gonvml.Utilization{}, gonvml.ERROR_GPU_IS_LOST }
		restore = append(restore, func() { dev.GetUtilizationRatesFunc = util })
	}
	ctx := context.Background()
	if _, err := a.Collect(ctx); err == nil {
		t.Fatal("a reading with no GPU read did not fail")
	}
	for _, r := range restore {
		r()
	}
	r, err := a.Collect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r.Topology == nil || len(r.Topology.GPUs) != 8 || r.TopologyHash != r.Topology.Hash() {
		t.Errorf("the first report made after a failed reading has no topology (hash %q)", r.TopologyHash)
	}
}
