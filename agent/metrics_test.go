//go:build cgo

package agent_test

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"sync"
	"testing"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/acme/quartermaster/agent"
	"github.com/acme/quartermaster/agent/nvml"
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

// migSeries is the lines of scrape m for metric name whose GPU instance is gi on GPU gpu.
func migSeries(m, name, gpu, gi string) []string {
	var out []string
	for _, l := range strings.Split(m, "\n") {
		if strings.HasPrefix(l, name+"{") && strings.Contains(l, `GPU_I_ID="`+gi+`"`) && strings.Contains(l, `,gpu="`+gpu+`"`) {
			out = append(out, l)
		}
	}
	return out
}

// A GPU in MIG mode is in /metrics as dcgm-exporter shows it: one series per GPU instance under
// the parent GPU's gpu, UUID, device and model, told apart by GPU_I_PROFILE and GPU_I_ID, with its
// memory used and free and its jobs and pods. Utilization is DCGM_FI_PROF_GR_ENGINE_ACTIVE (a
// ratio), only for a MIG device NVML gives one for, never DCGM_FI_DEV_GPU_UTIL and never a made-up
// 0. The parent keeps its own power and temperature. A GPU instance that goes away (MIG
// reconfigured, or MIG turned off) leaves /metrics at the next reading.
func TestMIGInstancesAreInMetricsAsDCGMExporterShowsThem(t *testing.T) {
	ctx := context.Background()
	a, f, d := newFakeAgent(t, "dgxa100", "* 30", agent.LabelsDCGM)
	parent := f.Server.Devices[1].(*server.Device)
	parent.GetUtilizationRatesFunc = func() (gonvml.Utilization, gonvml.Return) { return gonvml.Utilization{}, gonvml.ERROR_NOT_SUPPORTED }
	migs := migGPU(f, 1, [][3]int{{3, 19968, 1}, {2, 9856, 5}, {1, 4864, 13}})
	migs[0].GetMemoryInfoFunc = func() (gonvml.Memory, gonvml.Return) {
		return gonvml.Memory{Total: 19968 << 20, Used: 4096 << 20, Free: 15872 << 20}, gonvml.SUCCESS
	}
	migs[0].GetComputeRunningProcessesFunc = func() ([]gonvml.ProcessInfo, gonvml.Return) {
		return []gonvml.ProcessInfo{{Pid: 4242, UsedGpuMemory: 4096 << 20}}, gonvml.SUCCESS
	}
	migs[2].GetComputeRunningProcessesFunc = func() ([]gonvml.ProcessInfo, gonvml.Return) {
		return []gonvml.ProcessInfo{{Pid: 4244, UsedGpuMemory: 1 << 30}}, gonvml.SUCCESS
	}
	migs[2].GetUtilizationRatesFunc = func() (gonvml.Utilization, gonvml.Return) { return gonvml.Utilization{Gpu: 37}, gonvml.SUCCESS }
	if _, err := a.Collect(ctx); err != nil {
		t.Fatal(err)
	}
	info := d.GPUs()[1]
	m := scrape(t, a)
	labels := func(gi, profile, job, pod string) string {
		return `{GPU_I_ID="` + gi + `",GPU_I_PROFILE="` + profile + `",Hostname="dgx-01",UUID="` + info.UUID + `",device="nvidia1",gpu="1",hpc_job="` + job +
			`",modelName="` + info.Name + `",pci_bus_id="` + info.BusID + `",pod_uid="` + pod + `"}`
	}
	for _, want := range []string{
		"DCGM_FI_DEV_FB_USED" + labels("1", "3g.20gb", "123", "") + " 4096\n",
		"DCGM_FI_DEV_FB_FREE" + labels("1", "3g.20gb", "123", "") + " 15872\n",
		"DCGM_FI_DEV_FB_USED" + labels("5", "2g.10gb", "", "") + " 0\n",
		"DCGM_FI_DEV_FB_FREE" + labels("5", "2g.10gb", "", "") + " 9856\n",
		"DCGM_FI_DEV_FB_USED" + labels("13", "1g.5gb", "", "5f0b7a2e-1c3d-4e5f-8a9b-0c1d2e3f4a5b") + " 0\n",
		"DCGM_FI_PROF_GR_ENGINE_ACTIVE" + labels("13", "1g.5gb", "", "5f0b7a2e-1c3d-4e5f-8a9b-0c1d2e3f4a5b") + " 0.37\n",
	} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %s\n%s", want, grep(m, "GPU_I_ID"))
		}
	}
	for _, name := range []string{"DCGM_FI_DEV_FB_USED{", "DCGM_FI_DEV_FB_FREE{"} {
		if n := strings.Count(grep(m, name), "GPU_I_ID="); n != 3 {
			t.Errorf("want %s for 3 GPU instances, got %d:\n%s", name, n, grep(m, name))
		}
	}
	if n := strings.Count(m, "DCGM_FI_PROF_GR_ENGINE_ACTIVE{"); n != 1 {
		t.Errorf("want utilization only for the one MIG device NVML gives it for, got %d series:\n%s", n, grep(m, "GR_ENGINE"))
	}
	if strings.Contains(grep(m, "DCGM_FI_DEV_GPU_UTIL{"), "GPU_I_ID=") || strings.Contains(grep(m, "DCGM_FI_DEV_GPU_UTIL{"), `gpu="1"`) {
		t.Errorf("a GPU in MIG mode or a MIG instance has DCGM_FI_DEV_GPU_UTIL, which NVML does not give:\n%s", grep(m, "GPU_UTIL"))
	}
	for _, name := range []string{"DCGM_FI_DEV_POWER_USAGE{", "DCGM_FI_DEV_GPU_TEMP{", "DCGM_FI_DEV_FB_USED{"} {
		var parentSeries int
		for _, l := range strings.Split(grep(m, name), "\n") {
			if strings.Contains(l, `gpu="1"`) && !strings.Contains(l, "GPU_I_ID=") {
				parentSeries++
			}
		}
		if parentSeries != 1 {
			t.Errorf("GPU 1 in MIG mode has %d %s series of its own, want 1:\n%s", parentSeries, name, grep(m, name))
		}
	}

	// MIG reconfigured: GPU instance 5 is gone, 13 is now a 2g.10gb instance.
	migGPU(f, 1, [][3]int{{3, 19968, 1}, {2, 9856, 13}})
	if _, err := a.Collect(ctx); err != nil {
		t.Fatal(err)
	}
	m = scrape(t, a)
	if s := migSeries(m, "DCGM_FI_DEV_FB_USED", "1", "5"); len(s) != 0 {
		t.Errorf("GPU instance 5 was destroyed, yet /metrics still shows it: %v", s)
	}
	if s := migSeries(m, "DCGM_FI_DEV_FB_USED", "1", "13"); len(s) != 1 || !strings.Contains(s[0], `GPU_I_PROFILE="2g.10gb"`) {
		t.Errorf("GPU instance 13 is now 2g.10gb: %v", s)
	}
	if strings.Contains(m, "DCGM_FI_PROF_GR_ENGINE_ACTIVE{") {
		t.Errorf("the MIG device that gave a utilization is gone, yet its utilization is still shown:\n%s", grep(m, "GR_ENGINE"))
	}

	// MIG turned off: no GPU instance series at all, and GPU 1 is a plain GPU again.
	parent.MigMode = gonvml.DEVICE_MIG_DISABLE
	if _, err := a.Collect(ctx); err != nil {
		t.Fatal(err)
	}
	if m = scrape(t, a); strings.Contains(m, "GPU_I_ID=") {
		t.Errorf("MIG is off, yet /metrics shows GPU instances:\n%s", grep(m, "GPU_I_ID"))
	}
}

// Two compute instances of one GPU instance are one series, as dcgm-exporter has one per GPU
// instance (two would be the same series twice and break the scrape): the GPU instance's memory,
// both instances' jobs, and no utilization, since NVML's per compute instance utilizations are not
// the GPU instance's.
func TestMIGComputeInstancesShareTheirGPUInstanceSeries(t *testing.T) {
	a, f, _ := newFakeAgent(t, "dgxh100", "* 10", agent.LabelsDCGM)
	migs := migGPU(f, 2, [][3]int{{3, 40960, 2}, {3, 40960, 2}})
	migs[1].GetComputeInstanceIdFunc = func() (int, gonvml.Return) { return 1, gonvml.SUCCESS }
	for k, pid := range []uint32{4242, 4243} {
		used := gonvml.Memory{Total: 40960 << 20, Used: 6144 << 20, Free: 34816 << 20}
		migs[k].GetMemoryInfoFunc = func() (gonvml.Memory, gonvml.Return) { return used, gonvml.SUCCESS }
		migs[k].GetComputeRunningProcessesFunc = func() ([]gonvml.ProcessInfo, gonvml.Return) {
			return []gonvml.ProcessInfo{{Pid: pid, UsedGpuMemory: 3072 << 20}}, gonvml.SUCCESS
		}
		migs[k].GetUtilizationRatesFunc = func() (gonvml.Utilization, gonvml.Return) { return gonvml.Utilization{Gpu: 50}, gonvml.SUCCESS }
	}
	if _, err := a.Collect(context.Background()); err != nil {
		t.Fatal(err)
	}
	m := scrape(t, a)
	used := migSeries(m, "DCGM_FI_DEV_FB_USED", "2", "2")
	if len(used) != 1 || !strings.HasSuffix(used[0], " 6144") || !strings.Contains(used[0], `hpc_job="123,77"`) || !strings.Contains(used[0], `GPU_I_PROFILE="3g.40gb"`) {
		t.Errorf("want one series for GPU instance 2 with its memory and both jobs: %v", used)
	}
	if s := migSeries(m, "DCGM_FI_DEV_FB_FREE", "2", "2"); len(s) != 1 || !strings.HasSuffix(s[0], " 34816") {
		t.Errorf("want one FB_FREE series for GPU instance 2: %v", s)
	}
	if strings.Contains(m, "DCGM_FI_PROF_GR_ENGINE_ACTIVE{") {
		t.Errorf("a GPU instance with two compute instances has a utilization:\n%s", grep(m, "GR_ENGINE"))
	}
}

// The fake machine runs a GPU in MIG mode from its script (mig=PROFILE,…), as a demo shows it:
// GPU instances in /metrics with the GPU's processes spread over them, no utilization for the GPU
// or its instances (NVML gives none on an A100, which has no GPM), and a script that changes the
// instances changes the series at the next reading. Both label styles pass promtool.
func TestFakeMIGGPU(t *testing.T) {
	ctx := context.Background()
	for _, style := range []agent.LabelStyle{agent.LabelsDCGM, agent.LabelsSnake} {
		script := &switchScript{}
		script.set(t, "1 60 mig=3g.20gb,2g.10gb,1g.5gb pids=4242,4244; * 10")
		f, err := nvml.NewFake("dgxa100", "dgx-01", script)
		if err != nil {
			t.Fatal(err)
		}
		d, err := nvml.OpenFake(f, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = d.Close() })
		a, err := agent.New(agent.Config{Node: "dgx-01", Devices: d, Cgroups: agent.Cgroups{ProcRoot: "testdata/proc"}, Labels: style})
		if err != nil {
			t.Fatal(err)
		}
		if g := d.GPUs()[1]; !g.MIG || len(g.MIGDevices) != 3 {
			t.Fatalf("GPU 1 of the fake is not in MIG mode with 3 MIG devices: %+v", g)
		}
		r, err := a.Collect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if g := r.GPUs[1]; g.Util != nil || len(g.MIG) != 3 || len(g.Processes) != 2 {
			t.Fatalf("GPU 1 = %+v; want no utilization, 3 MIG devices and both processes", g)
		}
		m := scrape(t, a)
		for k, want := range []struct{ gi, profile, job, pod, used, free string }{
			{"1", "3g.20gb", "123", "", "1024", "18944"},
			{"2", "2g.10gb", "", "5f0b7a2e-1c3d-4e5f-8a9b-0c1d2e3f4a5b", "1024", "8832"},
			{"3", "1g.5gb", "", "", "0", "4864"},
		} {
			used := migSeries(m, "DCGM_FI_DEV_FB_USED", "1", want.gi)
			free := migSeries(m, "DCGM_FI_DEV_FB_FREE", "1", want.gi)
			if len(used) != 1 || len(free) != 1 || !strings.Contains(used[0], `GPU_I_PROFILE="`+want.profile+`"`) ||
				!strings.Contains(used[0], `hpc_job="`+want.job+`"`) || !strings.Contains(used[0], `pod_uid="`+want.pod+`"`) ||
				!strings.HasSuffix(used[0], " "+want.used) || !strings.HasSuffix(free[0], " "+want.free) {
				t.Errorf("MIG instance %d: want GPU instance %s (%s) with %s MiB used, %s free:\n%s", k, want.gi, want.profile, want.used, want.free, grep(m, "GPU_I_ID"))
			}
		}
		if strings.Contains(m, "GR_ENGINE_ACTIVE") || strings.Contains(grep(m, "DCGM_FI_DEV_GPU_UTIL{"), `gpu="1"`) {
			t.Errorf("the fake gives a utilization for a GPU in MIG mode or its instances:\n%s", grep(m, "UTIL"))
		}
		if !strings.Contains(grep(m, "DCGM_FI_DEV_POWER_USAGE{"), `gpu="1"`) {
			t.Errorf("GPU 1 in MIG mode lost its power series:\n%s", grep(m, "POWER"))
		}
		promtoolCheck(t, style, m)

		script.set(t, "1 60 mig=4g.20gb; * 10")
		if _, err := a.Collect(ctx); err != nil {
			t.Fatal(err)
		}
		m = scrape(t, a)
		if n := strings.Count(m, "GPU_I_ID="); n != 2 || len(migSeries(m, "DCGM_FI_DEV_FB_USED", "1", "1")) != 1 || !strings.Contains(m, `GPU_I_PROFILE="4g.20gb"`) {
			t.Errorf("after the script made GPU 1 one 4g.20gb instance, want its 2 series only:\n%s", grep(m, "GPU_I_ID"))
		}
		script.set(t, "* 10")
		if _, err := a.Collect(ctx); err != nil {
			t.Fatal(err)
		}
		if m = scrape(t, a); strings.Contains(m, "GPU_I_ID=") || !strings.Contains(grep(m, "DCGM_FI_DEV_GPU_UTIL{"), `gpu="1"`) {
			t.Errorf("after MIG was turned off, want GPU 1 as a plain GPU:\n%s", grep(m, `gpu="1"`))
		}
	}
}

// switchScript is a fake's script that a test changes.
type switchScript struct {
	mu sync.Mutex
	s  agent.Script
}

func (s *switchScript) set(t *testing.T, text string) {
	t.Helper()
	parsed, err := agent.ParseScript(text)
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.s = parsed
}

func (s *switchScript) Script() agent.Script {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.s
}

// promtoolCheck runs `promtool check metrics` on scrape m: no finding with snake labels, and only
// the camelCase modelName (dashboards' name) with dcgm-exporter's.
func promtoolCheck(t *testing.T, style agent.LabelStyle, m string) {
	t.Helper()
	cmd := exec.Command(promtool(t), "check", "metrics")
	cmd.Stdin = strings.NewReader(m)
	out, err := cmd.CombinedOutput()
	if style == agent.LabelsSnake {
		if err != nil {
			t.Errorf("promtool check metrics (snake labels): %v\n%s", err, out)
		}
		return
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line != "" && !strings.HasSuffix(line, "label names should be written in 'snake_case' not 'camelCase'") {
			t.Errorf("promtool check metrics (dcgm labels): %s", line)
		}
	}
	if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() != 3) {
		t.Errorf("promtool check metrics (dcgm labels) failed beyond lint: %v\n%s", err, out)
	}
}

// The fake H100 has GPM, as the real one: a demo of MIG on it (mig=) shows each GPU instance's
// activity from the second reading on, UTIL% on the instances a process of the GPU runs on and 0
// on the others, and a GPU instance that the script makes anew starts without one. It holds one
// GPM sample per GPU instance, and none once MIG is off. The A100's instances show none
// (TestFakeMIGGPU).
func TestFakeH100MIGInstancesShowTheirActivity(t *testing.T) {
	ctx := context.Background()
	script := &switchScript{}
	script.set(t, "1 60 mig=3g.40gb,2g.20gb,1g.10gb pids=4242,4244; * 10")
	f, err := nvml.NewFake("dgxh100", "dgx-01", script)
	if err != nil {
		t.Fatal(err)
	}
	d, err := nvml.OpenFake(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	a, err := agent.New(agent.Config{Node: "dgx-01", Devices: d, Cgroups: agent.Cgroups{ProcRoot: "testdata/proc"}, Labels: agent.LabelsSnake})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Collect(ctx); err != nil {
		t.Fatal(err)
	}
	if m := scrape(t, a); strings.Contains(m, "GR_ENGINE_ACTIVE{") {
		t.Errorf("the first reading shows MIG activity, with no earlier sample to compare with:\n%s", grep(m, "GR_ENGINE"))
	}
	if _, err := a.Collect(ctx); err != nil {
		t.Fatal(err)
	}
	m := scrape(t, a)
	for _, w := range []struct{ gi, profile, value string }{{"1", "3g.40gb", "0.6"}, {"2", "2g.20gb", "0.6"}, {"3", "1g.10gb", "0"}} {
		s := migSeries(m, "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "1", w.gi)
		if len(s) != 1 || !strings.Contains(s[0], `GPU_I_PROFILE="`+w.profile+`"`) || !strings.HasSuffix(s[0], " "+w.value) {
			t.Errorf("GPU instance %s (%s): want its activity %s:\n%s", w.gi, w.profile, w.value, grep(m, "GR_ENGINE"))
		}
	}
	if strings.Contains(grep(m, "DCGM_FI_DEV_GPU_UTIL{"), `gpu="1"`) {
		t.Errorf("GPU 1 in MIG mode has a utilization of its own:\n%s", grep(m, "DCGM_FI_DEV_GPU_UTIL"))
	}
	promtoolCheck(t, agent.LabelsSnake, m)
	if n := f.GPMSamples(); n != 3 {
		t.Errorf("the agent holds %d GPM samples; want one per GPU instance, 3", n)
	}

	script.set(t, "1 60 mig=3g.40gb,4g.40gb pids=4242,4244; * 10")
	if _, err := a.Collect(ctx); err != nil {
		t.Fatal(err)
	}
	m = scrape(t, a)
	if s := migSeries(m, "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "1", "1"); len(s) != 1 || !strings.HasSuffix(s[0], " 0.6") {
		t.Errorf("GPU instance 1, unchanged, lost its activity:\n%s", grep(m, "GR_ENGINE"))
	}
	if s := migSeries(m, "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "1", "2"); len(s) != 0 {
		t.Errorf("GPU instance 2, made anew as a 4g.40gb, has an activity at its first reading: %v", s)
	}
	if n := f.GPMSamples(); n != 2 {
		t.Errorf("the agent holds %d GPM samples; want one per GPU instance, 2", n)
	}
	script.set(t, "* 10")
	if _, err := a.Collect(ctx); err != nil {
		t.Fatal(err)
	}
	if n := f.GPMSamples(); n != 0 {
		t.Errorf("MIG is off, yet the agent holds %d GPM samples", n)
	}
}
