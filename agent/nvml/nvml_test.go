//go:build cgo

package nvml_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/gpus"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/acme/quartermaster/agent"
	"github.com/acme/quartermaster/agent/nvml"
	"github.com/acme/quartermaster/agent/report"
)

// The fake DGX A100 reads like the real machine: eight A100s at the scripted utilization and
// memory, with their processes, all pairs joined by 12 NVLinks through the NVSwitches, GPU pairs
// behind one PCIe switch (PXB) and everything else across sockets (SYS), NUMA node and CPUs per pair.
func TestFakeDGXA100(t *testing.T) {
	ctx := context.Background()
	s, err := agent.ParseScript("0 85 mem=20480 pids=4242; 5 40 pids=4244,4245; * 0")
	if err != nil {
		t.Fatal(err)
	}
	f, err := nvml.NewFake("dgxa100", "dgx-a-01", agent.StaticScript(s))
	if err != nil {
		t.Fatal(err)
	}
	d, err := nvml.OpenFake(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	infos := d.GPUs()
	if len(infos) != 8 || !strings.Contains(infos[0].Name, "A100") || infos[3].BusID != "0000:4E:00.0" || infos[7].Minor != 7 {
		t.Fatalf("GPUs = %+v", infos)
	}
	again, _ := nvml.NewFake("dgxa100", "dgx-a-01", nil)
	if again.Server.Devices[0].(*server.Device).UUID != infos[0].UUID {
		t.Error("the fake's GPU UUIDs change between starts of the same node")
	}
	g, err := d.Sample(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(g) != 8 {
		t.Fatalf("%d GPUs sampled", len(g))
	}
	if *g[0].Util != 85 || g[0].MemUsed != 20480<<20 || len(g[0].Processes) != 1 || g[0].Processes[0].PID != 4242 || g[0].Processes[0].MemUsed != 20480<<20 {
		t.Errorf("GPU 0 = %+v; want 85%%, 20 GiB, process 4242", g[0])
	}
	if *g[5].Util != 40 || g[5].MemUsed != 2<<30 || len(g[5].Processes) != 2 {
		t.Errorf("GPU 5 = %+v; want 40%% and two processes of 1 GiB", g[5])
	}
	if *g[7].Util != 0 || g[7].MemUsed != 0 || len(g[7].Processes) != 0 || g[7].MemTotal != 40960<<20 {
		t.Errorf("GPU 7 = %+v; want idle, empty, 40 GiB", g[7])
	}
	if g[0].PowerW == nil || *g[0].PowerW <= *g[7].PowerW || g[0].TempC == nil || g[0].XID == nil || *g[0].XID != 0 {
		t.Errorf("power, temperature, XID of GPU 0: %v %v %v", g[0].PowerW, g[0].TempC, g[0].XID)
	}
	topo, err := d.Topology(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i, tg := range topo.GPUs {
		for j := range 8 {
			want, level := 12, "SYS"
			switch {
			case i == j:
				want, level = 0, "X"
			case i/2 == j/2:
				level = "PXB"
			}
			if tg.NVLinks[j] != want || tg.PCIe[j] != level {
				t.Errorf("GPU%d-GPU%d: NV%d %s, want NV%d %s", i, j, tg.NVLinks[j], tg.PCIe[j], want, level)
			}
		}
	}
	if *topo.GPUs[0].NUMA != 3 || topo.GPUs[0].CPUs != "48-63,176-191" || *topo.GPUs[6].NUMA != 5 || topo.GPUs[2].UUID != infos[2].UUID {
		t.Errorf("GPU 0 and 6 affinity: %+v %+v", topo.GPUs[0], topo.GPUs[6])
	}
}

// The fake DGX H100: 18 NVLinks between every pair, GPUs 0-3 on NUMA node 0 and 4-7 on node 1,
// NODE within a socket and SYS across; an XID error in the script shows up once as the last XID.
func TestFakeDGXH100(t *testing.T) {
	ctx := context.Background()
	src := &script{s: mustScript(t, "* 30")}
	f, err := nvml.NewFake("dgxh100", "dgx-h-01", src)
	if err != nil {
		t.Fatal(err)
	}
	d, err := nvml.OpenFake(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	topo, err := d.Topology(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if topo.GPUs[1].NVLinks[6] != 18 || topo.GPUs[1].PCIe[2] != "NODE" || topo.GPUs[1].PCIe[6] != "SYS" || *topo.GPUs[5].NUMA != 1 || topo.GPUs[5].CPUs != "56-111,168-223" {
		t.Errorf("topology = %+v", topo.GPUs[1])
	}
	src.s = mustScript(t, "* 30; 2 30 xid=79")
	g, _ := d.Sample(ctx)
	if *g[2].XID != 79 || *g[1].XID != 0 {
		t.Errorf("XIDs after GPU 2 fell off the bus: %d %d", *g[2].XID, *g[1].XID)
	}
	if _, err := nvml.NewFake("dgx1", "x", nil); err == nil || !strings.Contains(err.Error(), "dgxa100") {
		t.Errorf("an unknown fake: %v", err)
	}
}

// Every fake's GPUs are named "Mock NVIDIA …" (the mock A100's own name), so a fake machine never
// passes for a real one in /metrics, gres.conf or a report.
func TestFakeModelNamesSayMock(t *testing.T) {
	for _, kind := range nvml.FakeKinds {
		f, err := nvml.NewFake(kind, "dgx-01", nil)
		if err != nil {
			t.Fatal(err)
		}
		d, err := nvml.OpenFake(f, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range d.GPUs() {
			if !strings.HasPrefix(g.Name, "Mock NVIDIA ") || strings.Count(g.Name, "Mock") != 1 {
				t.Errorf("%s: GPU %d is named %q; want \"Mock NVIDIA …\"", kind, g.Minor, g.Name)
			}
		}
		d.Close()
	}
}

type script struct{ s agent.Script }

func (s *script) Script() agent.Script { return s.s }

func mustScript(t *testing.T, text string) agent.Script {
	t.Helper()
	s, err := agent.ParseScript(text)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// One H200 in a VM, as a probe of a real one saw it: NUMA node, NVLinks and XID events
// Not Supported. Those are normal answers: the sample and the topology come without them.
func TestNotSupportedIsNormal(t *testing.T) {
	ctx := context.Background()
	srv := server.NewServerWithGPUs("580.159.04", "13.580.159.04", 13000, gpus.Multiple(1, gpus.H200_SXM5_141GB)...)
	srv.EventSetCreateFunc = func() (gonvml.EventSet, gonvml.Return) { return nil, gonvml.ERROR_NOT_SUPPORTED }
	dev := srv.Devices[0].(*server.Device)
	dev.GetUtilizationRatesFunc = func() (gonvml.Utilization, gonvml.Return) {
		return gonvml.Utilization{Gpu: 100, Memory: 6}, gonvml.SUCCESS
	}
	dev.GetMemoryInfoFunc = func() (gonvml.Memory, gonvml.Return) {
		return gonvml.Memory{Total: 150754820096, Used: 2107506688, Free: 148647313408}, gonvml.SUCCESS
	}
	dev.GetMemoryInfo_v2Func = func() (gonvml.Memory_v2, gonvml.Return) {
		return gonvml.Memory_v2{Version: 33554472, Total: 150754820096, Reserved: 644939776, Free: 148647313408, Used: 1462566912}, gonvml.SUCCESS
	}
	dev.GetPowerUsageFunc = func() (uint32, gonvml.Return) { return 680676, gonvml.SUCCESS }
	dev.GetTemperatureFunc = func(gonvml.TemperatureSensors) (uint32, gonvml.Return) { return 61, gonvml.SUCCESS }
	dev.GetTotalEccErrorsFunc = func(gonvml.MemoryErrorType, gonvml.EccCounterType) (uint64, gonvml.Return) { return 0, gonvml.SUCCESS }
	dev.GetComputeRunningProcessesFunc = func() ([]gonvml.ProcessInfo, gonvml.Return) {
		return []gonvml.ProcessInfo{{Pid: 531, UsedGpuMemory: 1386 << 20}}, gonvml.SUCCESS
	}
	// No MPS server; and a GPU that does not list graphics processes is as normal as one that has none.
	dev.GetMPSComputeRunningProcessesFunc = func() ([]gonvml.ProcessInfo, gonvml.Return) { return nil, gonvml.SUCCESS }
	dev.GetGraphicsRunningProcessesFunc = func() ([]gonvml.ProcessInfo, gonvml.Return) { return nil, gonvml.ERROR_NOT_SUPPORTED }
	dev.GetCpuAffinityFunc = func(int) ([]uint, gonvml.Return) { return []uint{65535}, gonvml.SUCCESS }
	dev.GetNumaNodeIdFunc = func() (int, gonvml.Return) { return 0, gonvml.ERROR_NOT_SUPPORTED }
	dev.GetNvLinkStateFunc = func(int) (gonvml.EnableState, gonvml.Return) { return 0, gonvml.ERROR_NOT_SUPPORTED }
	dev.GetTopologyCommonAncestorFunc = func(gonvml.Device) (gonvml.GpuTopologyLevel, gonvml.Return) {
		return 0, gonvml.ERROR_NOT_SUPPORTED
	}
	d, err := nvml.Open(srv, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d.Driver() != "580.159.04" {
		t.Errorf("driver %q", d.Driver())
	}
	g, err := d.Sample(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if *g[0].Util != 100 || *g[0].PowerW != 680.676 || g[0].XID != nil || len(g[0].Processes) != 1 || g[0].MemUsed != 1462566912 || g[0].MemReserved != 644939776 {
		t.Errorf("sample = %+v; want 100%%, 680.676 W, no XID (not supported), one process, 1462566912 bytes in use and 644939776 reserved", g[0])
	}
	topo, err := d.Topology(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if tg := topo.GPUs[0]; tg.NUMA != nil || tg.CPUs != "0-15" || tg.NVLinks[0] != 0 || tg.PCIe[0] != "X" {
		t.Errorf("topology = %+v; want no NUMA node, CPUs 0-15, no NVLinks", tg)
	}
}

// Without a driver, or with a driver and no GPU, Open says so in one sentence.
func TestNoDriverNoGPU(t *testing.T) {
	srv := server.NewServerWithGPUs("580", "13", 13000)
	srv.InitFunc = func() gonvml.Return { return gonvml.ERROR_LIBRARY_NOT_FOUND }
	_, err := nvml.Open(srv, nil)
	if !errors.Is(err, nvml.ErrNoGPU) || !strings.Contains(err.Error(), "no NVIDIA driver library") || strings.Contains(err.Error(), ". ") {
		t.Errorf("no driver: %v", err)
	}
	srv.InitFunc = func() gonvml.Return { return gonvml.SUCCESS }
	_, err = nvml.Open(srv, nil)
	if !errors.Is(err, nvml.ErrNoGPU) || !strings.Contains(err.Error(), "sees no GPU") {
		t.Errorf("no GPU: %v", err)
	}
}

// A GPU that fell off the bus (ERROR_GPU_IS_LOST, XID 79) or whose processes cannot be read is
// left out of the sample, which goes on with the other GPUs: one bad GPU does not silence the
// node's telemetry and /metrics. When it answers again it is back in the next sample.
func TestALostGPUIsLeftOutOfTheSample(t *testing.T) {
	ctx := context.Background()
	f, err := nvml.NewFake("dgxh100", "dgx-h-07", agent.StaticScript(mustScript(t, "* 60 pids=100")))
	if err != nil {
		t.Fatal(err)
	}
	d, err := nvml.OpenFake(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	lost := f.Server.Devices[5].(*server.Device)
	procs, util := lost.GetComputeRunningProcessesFunc, lost.GetUtilizationRatesFunc
	lost.GetComputeRunningProcessesFunc = func() ([]gonvml.ProcessInfo, gonvml.Return) { return nil, gonvml.ERROR_GPU_IS_LOST }
	lost.GetUtilizationRatesFunc = func() (gonvml.Utilization, gonvml.Return) { return gonvml.Utilization{}, gonvml.ERROR_GPU_IS_LOST }
	flaky := f.Server.Devices[2].(*server.Device)
	flaky.GetComputeRunningProcessesFunc = func() ([]gonvml.ProcessInfo, gonvml.Return) { return nil, gonvml.ERROR_UNKNOWN }
	g, err := d.Sample(ctx)
	if err != nil {
		t.Fatalf("one lost GPU failed the whole sample: %v", err)
	}
	var idx []int
	for _, x := range g {
		idx = append(idx, x.Index)
		if len(x.Processes) != 1 || x.Util == nil || *x.Util != 60 {
			t.Errorf("GPU %d = %+v; want 60%% and its process", x.Index, x)
		}
	}
	if len(idx) != 6 || idx[2] != 3 || idx[4] != 6 {
		t.Errorf("sampled GPUs %v; want all but 2 and 5", idx)
	}
	lost.GetComputeRunningProcessesFunc, lost.GetUtilizationRatesFunc = procs, util
	if g, err := d.Sample(ctx); err != nil || len(g) != 7 {
		t.Errorf("after GPU 5 answers again: %d GPUs, %v; want 7", len(g), err)
	}
}

// A process whose memory NVML does not give (NVML_VALUE_NOT_AVAILABLE, nvidia-smi's "N/A", as in
// a container or for an unprivileged caller) is reported without memory, not as 16 EiB; the other
// processes keep theirs.
func TestAProcessWithoutMemoryIsNotReportedAs16EiB(t *testing.T) {
	f, err := nvml.NewFake("dgxh100", "dgx-h-08", nil)
	if err != nil {
		t.Fatal(err)
	}
	dev := f.Server.Devices[4].(*server.Device)
	dev.GetComputeRunningProcessesFunc = func() ([]gonvml.ProcessInfo, gonvml.Return) {
		return []gonvml.ProcessInfo{{Pid: 10, UsedGpuMemory: ^uint64(0)}, {Pid: 11, UsedGpuMemory: 3 << 30}}, gonvml.SUCCESS
	}
	d, err := nvml.OpenFake(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	g, err := d.Sample(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if ps := g[4].Processes; len(ps) != 2 || ps[0].PID != 10 || ps[0].MemUsed != 0 || ps[1].MemUsed != 3<<30 {
		t.Errorf("GPU 4's processes = %+v; want process 10 without memory and process 11 with 3 GiB", ps)
	}
}

// After a driver upgrade without a reboot, the new libnvidia-ml does not match the kernel module
// still loaded, and NVML does not start: the agent says what that means and what to do, in one
// sentence, not NVML's bare return code; once the node is rebooted (the service manager starts the
// agent again), it opens the GPUs.
func TestADriverUpgradeWithoutARebootSaysToReboot(t *testing.T) {
	srv := server.NewServerWithGPUs("580.159.04", "13.580.159.04", 13000, gpus.Multiple(2, gpus.H200_SXM5_141GB)...)
	srv.InitFunc = func() gonvml.Return { return gonvml.ERROR_LIB_RM_VERSION_MISMATCH }
	_, err := nvml.Open(srv, nil)
	if !errors.Is(err, nvml.ErrNoGPU) || !strings.Contains(err.Error(), "reboot") || !strings.Contains(err.Error(), "kernel module") ||
		strings.Contains(err.Error(), "ERROR_") || strings.Contains(err.Error(), ". ") {
		t.Errorf("a library and kernel module of different versions: %v", err)
	}
	srv.InitFunc = func() gonvml.Return { return gonvml.SUCCESS }
	srv.EventSetCreateFunc = func() (gonvml.EventSet, gonvml.Return) { return nil, gonvml.ERROR_NOT_SUPPORTED }
	d, err := nvml.Open(srv, nil)
	if err != nil {
		t.Fatalf("after the reboot: %v", err)
	}
	defer d.Close()
	if n := len(d.GPUs()); n != 2 {
		t.Errorf("after the reboot %d GPUs; want 2", n)
	}
}

// A wedged GPU whose NVML calls block (a GSP timeout, XID 119, holds each call for tens of
// seconds, or for good) does not stall the node: its reading is given up after GPUTimeout and the
// GPU is left out of the sample like a lost one, the other GPUs are reported, it is not asked again
// while NVML is still busy with it (nor by the topology), and it is back once it answers.
func TestAWedgedGPUDoesNotStallTheOthers(t *testing.T) {
	ctx := context.Background()
	f, err := nvml.NewFake("dgxh100", "dgx-h-09", agent.StaticScript(mustScript(t, "* 60 pids=100")))
	if err != nil {
		t.Fatal(err)
	}
	d, err := nvml.OpenFake(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	d.GPUTimeout = time.Second // a healthy mock answers in microseconds; the wedged one never
	wedged := f.Server.Devices[3].(*server.Device)
	util := wedged.GetUtilizationRatesFunc
	release := make(chan struct{})
	var calls atomic.Int32
	wedged.GetUtilizationRatesFunc = func() (gonvml.Utilization, gonvml.Return) {
		calls.Add(1)
		<-release
		return util()
	}
	numa := wedged.GetNumaNodeIdFunc
	wedged.GetNumaNodeIdFunc = func() (int, gonvml.Return) {
		calls.Add(1)
		<-release
		return numa()
	}
	for k := range 3 {
		g, err := d.Sample(ctx)
		if err != nil {
			t.Fatalf("sample %d with GPU 3 wedged: %v", k, err)
		}
		if len(g) != 7 || slices.ContainsFunc(g, func(x report.GPU) bool { return x.Index == 3 }) {
			t.Fatalf("sample %d: %d GPUs; want the 7 others, without GPU 3", k, len(g))
		}
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("GPU 3 was asked %d times while NVML was still busy with it; want once", n)
	}
	topo, err := d.Topology(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if g := topo.GPUs[3]; g.UUID == "" || g.Lost != "" || slices.Max(g.NVLinks) != 0 || slices.Max(topo.GPUs[0].NVLinks) == 0 {
		t.Errorf("topology with GPU 3 wedged: GPU 3 = %+v; want it in its place, not lost, without links, the others linked", g)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("the topology asked the wedged GPU 3 (%d calls); want none", n-1)
	}
	close(release)
	for k := 0; ; k++ {
		g, err := d.Sample(ctx)
		if err == nil && len(g) == 8 {
			break
		}
		if k > 10000 {
			t.Fatalf("GPU 3 answered again, but the samples still leave it out: %d GPUs, %v", len(g), err)
		}
		time.Sleep(time.Millisecond)
	}
}

// A GPU lost at start is tried again at every sample; when trying it blocks (the GPU wedged), the
// sample gives it up after GPUTimeout like a reading and goes on with the others, and does not
// try it again until NVML returns.
func TestAGPULostAtStartThatHangsWhenTriedAgainDoesNotStallTheOthers(t *testing.T) {
	f, err := nvml.NewFake("dgxa100", "dgx-a-09", agent.StaticScript(mustScript(t, "* 10")))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	lost, hang := true, false
	release := make(chan struct{})
	var tries atomic.Int32
	handle := f.Server.DeviceGetHandleByIndexFunc
	f.Server.DeviceGetHandleByIndexFunc = func(i int) (gonvml.Device, gonvml.Return) {
		mu.Lock()
		l, h := lost, hang
		mu.Unlock()
		if i == 6 && h {
			tries.Add(1)
			<-release
		}
		if i == 6 && l {
			return nil, gonvml.ERROR_GPU_IS_LOST
		}
		return handle(i)
	}
	d, err := nvml.OpenFake(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	d.GPUTimeout = time.Second
	mu.Lock()
	hang = true
	mu.Unlock()
	for k := range 3 {
		g, err := d.Sample(context.Background())
		if err != nil || len(g) != 7 {
			t.Fatalf("sample %d with the lost GPU 6 hanging when tried again: %d GPUs, %v; want the 7 others", k, len(g), err)
		}
	}
	if n := tries.Load(); n != 1 {
		t.Errorf("GPU 6 was tried %d times while NVML was still busy with it; want once", n)
	}
	mu.Lock()
	lost, hang = false, false
	mu.Unlock()
	close(release)
	for k := 0; ; k++ {
		if g, err := d.Sample(context.Background()); err == nil && len(g) == 8 {
			break
		}
		if k > 10000 {
			t.Fatal("GPU 6 answered and reads again, but the samples still leave it out")
		}
		time.Sleep(time.Millisecond)
	}
}

// A GPU lost while the agent runs (ERROR_GPU_IS_LOST, XID 79) is marked lost in the topology, with
// the reason and no links, as one lost at start is, while the others keep their links; once it
// reads again it is no longer marked.
func TestAGPULostWhileRunningIsMarkedLostInTheTopology(t *testing.T) {
	ctx := context.Background()
	f, err := nvml.NewFake("dgxh100", "dgx-h-09", agent.StaticScript(mustScript(t, "* 60 pids=100")))
	if err != nil {
		t.Fatal(err)
	}
	d, err := nvml.OpenFake(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if topo, err := d.Topology(ctx); err != nil || topo.GPUs[4].Lost != "" || topo.GPUs[4].NVLinks[0] == 0 {
		t.Fatalf("before GPU 4 is lost: %+v, %v", topo.GPUs[4], err)
	}
	dev := f.Server.Devices[4].(*server.Device)
	util := dev.GetUtilizationRatesFunc
	dev.GetUtilizationRatesFunc = func() (gonvml.Utilization, gonvml.Return) { return gonvml.Utilization{}, gonvml.ERROR_GPU_IS_LOST }
	if g, err := d.Sample(ctx); err != nil || len(g) != 7 {
		t.Fatalf("a sample with GPU 4 lost: %d GPUs, %v; want the 7 others", len(g), err)
	}
	topo, err := d.Topology(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if g := topo.GPUs[4]; g.Index != 4 || g.UUID == "" || g.Lost == "" || !strings.Contains(strings.ToLower(g.Lost), "lost") ||
		slices.Max(g.NVLinks) != 0 || topo.GPUs[0].NVLinks[4] != 0 || topo.GPUs[0].NVLinks[1] == 0 {
		t.Errorf("topology with GPU 4 lost while running: GPU 4 = %+v, GPU 0's links %v; want GPU 4 in its place, marked lost, without links, the others linked",
			g, topo.GPUs[0].NVLinks)
	}
	dev.GetUtilizationRatesFunc = util
	if g, err := d.Sample(ctx); err != nil || len(g) != 8 {
		t.Fatalf("after GPU 4 reads again: %d GPUs, %v", len(g), err)
	}
	if topo, err := d.Topology(ctx); err != nil || topo.GPUs[4].Lost != "" || topo.GPUs[4].NVLinks[0] == 0 {
		t.Errorf("GPU 4 reads again, but the topology has it %+v, %v", topo.GPUs[4], err)
	}
}
