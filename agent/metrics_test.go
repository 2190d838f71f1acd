//go:build cgo

package agent_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/acme/quartermaster/agent"
)

// scrape is one /metrics scrape of a.
func scrape(t *testing.T, a *agent.Agent) string {
	t.Helper()
	var out bytes.Buffer
	if err := a.Metrics().Write(&out); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// A GPU that falls off the bus while the agent runs is neither in the GPU series nor counted as
// read: quartermaster_agent_gpus and quartermaster_agent_gpus_unread add up to the GPUs the driver
// counts, whether the GPU was lost at start or later.
func TestAGPULostWhileRunningIsNotCountedAsRead(t *testing.T) {
	ctx := context.Background()
	a, f, _ := newFakeAgent(t, "dgxh100", "* 50 pids=4242", agent.LabelsDCGM)
	if _, err := a.Collect(ctx); err != nil {
		t.Fatal(err)
	}
	if m := scrape(t, a); !strings.Contains(m, "quartermaster_agent_gpus 8\n") || !strings.Contains(m, "quartermaster_agent_gpus_unread 0\n") {
		t.Fatalf("with every GPU read:\n%s", grep(m, "quartermaster_agent_gpus"))
	}
	dev := f.Server.Devices[5].(*server.Device)
	procs := dev.GetComputeRunningProcessesFunc
	dev.GetComputeRunningProcessesFunc = func() ([]gonvml.ProcessInfo, gonvml.Return) { return nil, gonvml.ERROR_GPU_IS_LOST }
	if _, err := a.Collect(ctx); err != nil {
		t.Fatal(err)
	}
	m := scrape(t, a)
	if !strings.Contains(m, "quartermaster_agent_gpus 7\n") || !strings.Contains(m, "quartermaster_agent_gpus_unread 1\n") {
		t.Errorf("after GPU 5 fell off the bus: want 7 GPUs read and 1 unread:\n%s", grep(m, "quartermaster_agent_gpus"))
	}
	if strings.Contains(m, `gpu="5"`) {
		t.Errorf("GPU 5 is still in the GPU series after it fell off the bus:\n%s", grep(m, "GPU_UTIL"))
	}
	dev.GetComputeRunningProcessesFunc = procs
	if _, err := a.Collect(ctx); err != nil {
		t.Fatal(err)
	}
	if m := scrape(t, a); !strings.Contains(m, "quartermaster_agent_gpus 8\n") || !strings.Contains(m, "quartermaster_agent_gpus_unread 0\n") {
		t.Errorf("after GPU 5 reads again:\n%s", grep(m, "quartermaster_agent_gpus"))
	}
}

// When no GPU can be read at all, /metrics stops showing the last reading as if it were current:
// no GPU series (a dashboard shows a gap, not a GPU busy at its last value), every GPU unread, and
// the failed reading counted.
func TestMetricsDoNotShowAStaleReadingWhenNoGPUReads(t *testing.T) {
	ctx := context.Background()
	a, f, _ := newFakeAgent(t, "dgxa100", "* 90 pids=4242", agent.LabelsDCGM)
	if _, err := a.Collect(ctx); err != nil {
		t.Fatal(err)
	}
	if m := scrape(t, a); strings.Count(m, "DCGM_FI_DEV_GPU_UTIL{") != 8 {
		t.Fatalf("want 8 GPUs at 90%%:\n%s", grep(m, "GPU_UTIL"))
	}
	for _, d := range f.Server.Devices {
		dev := d.(*server.Device)
		dev.GetUtilizationRatesFunc = func() (gonvml.Utilization, gonvml.Return) { return gonvml.Utilization{}, gonvml.ERROR_GPU_IS_LOST }
	}
	if _, err := a.Collect(ctx); err == nil {
		t.Fatal("a collection with no GPU read did not fail")
	}
	m := scrape(t, a)
	for _, name := range []string{"DCGM_FI_DEV_GPU_UTIL{", "DCGM_FI_DEV_FB_USED{", "DCGM_FI_DEV_POWER_USAGE{"} {
		if strings.Contains(m, name) {
			t.Errorf("no GPU can be read, yet /metrics still shows the last reading:\n%s", grep(m, name))
		}
	}
	for _, want := range []string{"quartermaster_agent_gpus 0\n", "quartermaster_agent_gpus_unread 8\n", "quartermaster_agent_collect_errors_total 1\n"} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %q:\n%s", want, grep(m, "quartermaster_agent"))
		}
	}
}

// A GPU whose memory NVML cannot read this time (an error other than GPU_IS_LOST) stays in the
// reading with what did read, but /metrics shows no memory for it rather than 0 MiB used and
// all of it free; the other GPUs keep theirs.
func TestAMemoryReadingThatFailsIsNotShownAsEmpty(t *testing.T) {
	ctx := context.Background()
	a, f, _ := newFakeAgent(t, "dgxh100", "* 70 mem=40960 pids=4242", agent.LabelsDCGM)
	dev := f.Server.Devices[3].(*server.Device)
	dev.GetMemoryInfoFunc = func() (gonvml.Memory, gonvml.Return) { return gonvml.Memory{}, gonvml.ERROR_UNKNOWN }
	r, err := a.Collect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.GPUs) != 8 || r.GPUs[3].Util == nil || *r.GPUs[3].Util != 70 {
		t.Fatalf("GPU 3 with a failed memory reading is not in the report with its utilization: %+v", r.GPUs)
	}
	for _, g := range r.GPUs {
		if g.MemUnread != (g.Index == 3) || (g.Index != 3 && g.MemUsed != 40960<<20) {
			t.Errorf("GPU %d: memory unread %v, used %d; want only GPU 3's unread", g.Index, g.MemUnread, g.MemUsed)
		}
	}
	m := scrape(t, a)
	for _, name := range []string{"DCGM_FI_DEV_FB_USED{", "DCGM_FI_DEV_FB_FREE{"} {
		lines := grep(m, name)
		if strings.Contains(lines, `gpu="3"`) {
			t.Errorf("GPU 3's memory could not be read, yet /metrics shows a value:\n%s", lines)
		}
		if strings.Count(lines, name) != 7 {
			t.Errorf("want %s for the 7 other GPUs:\n%s", name, lines)
		}
	}
	if !strings.Contains(m, `gpu="3"`) {
		t.Errorf("GPU 3 is not in /metrics at all:\n%s", grep(m, "GPU_UTIL"))
	}
}
