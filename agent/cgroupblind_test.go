//go:build cgo

package agent_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/acme/quartermaster/agent"
	"github.com/acme/quartermaster/agent/nvml"
)

// script is a fake GPU script a test changes while the agent runs.
type script struct {
	mu sync.Mutex
	s  agent.Script
}

func (s *script) Script() agent.Script {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.s
}

func (s *script) set(t *testing.T, text string) {
	t.Helper()
	v, err := agent.ParseScript(text)
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	s.s = v
	s.mu.Unlock()
}

// An agent that cannot read the cgroup of any process NVML lists (a container without the host's
// PID namespace, a /proc mounted with hidepid, a wrong --proc-root) maps none to its job or pod,
// and nothing else shows it: the log says so once, with what to do, when that has lasted two
// readings (a process that ended between NVML's list and its cgroup is not such a case), and once
// when the processes map again.
func TestTheLogSaysWhenNoProcessCanBeMappedToItsJob(t *testing.T) {
	src := &script{}
	src.set(t, "0 90 pids=31337; 1 40 pids=31338; * 0")
	f, err := nvml.NewFake("dgxa100", "dgx-01", src)
	if err != nil {
		t.Fatal(err)
	}
	d, err := nvml.OpenFake(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	var logs bytes.Buffer
	a, err := agent.New(agent.Config{Node: "dgx-01", Devices: d, Cgroups: agent.Cgroups{ProcRoot: "testdata/proc"},
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	collect := func() {
		t.Helper()
		if _, err := a.Collect(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	const blind = "no process on the GPUs could be mapped"
	collect()
	if strings.Contains(logs.String(), blind) {
		t.Errorf("one reading whose processes could not be mapped (they may have ended) is logged:\n%s", logs.String())
	}
	for range 3 {
		collect()
	}
	if n := strings.Count(logs.String(), blind); n != 1 || !strings.Contains(logs.String(), "level=WARN") ||
		!strings.Contains(logs.String(), "hostPID") || !strings.Contains(logs.String(), "proc_root=testdata/proc") {
		t.Errorf("after 4 readings whose processes could not be mapped, the log says so %d times, want once, with what to do:\n%s", n, logs.String())
	}
	src.set(t, "0 90 pids=4242; * 0")
	collect()
	collect()
	if n := strings.Count(logs.String(), "mapped to their jobs and pods again"); n != 1 {
		t.Errorf("once processes map again, the log says so %d times, want once:\n%s", n, logs.String())
	}
	src.set(t, "* 0")
	collect()
	collect()
	if n := strings.Count(logs.String(), blind); n != 1 {
		t.Errorf("GPUs that run no process are not processes that cannot be mapped; the log says so %d times:\n%s", n, logs.String())
	}
}
