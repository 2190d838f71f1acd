//go:build cgo

package nvml

import (
	"crypto/sha256"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/acme/quartermaster/agent"
)

// FakeKinds are the fake machines Fake builds.
var FakeKinds = []string{"dgxa100", "dgxh100"}

// Fake is a fake DGX: one of go-nvml's mock servers (8 GPUs with names, UUIDs, memory and PCI
// ids), completed with what the mocks leave unset: utilization, memory in use, power and
// temperature from a script, processes, XID events, the NVSwitch fabric and the PCIe tree, NUMA
// nodes and CPU affinity of the real machine. It is a fake for demos and tests; Open reads it
// like a real driver.
type Fake struct {
	// Server is the nvml.Interface to pass to Open.
	Server *server.Server
	// Cores is the fake machine's CPU layout (for gres.conf's Cores=).
	Cores agent.CoreMap
	// ProfileInfo, when set before OpenFake, is what the fake driver gives for GPU gpu's GPU
	// instance profile (an NVML_GPU_INSTANCE_PROFILE_* index) as nvmlDeviceGetGpuInstanceProfileInfoV
	// does, with the profile's name ("MIG 3g.40gb"); ERROR_NOT_SUPPORTED plays a driver that names
	// none. Unset, the fake gives the mock's profiles, named as NVIDIA names them.
	ProfileInfo func(gpu, profile int) (nvml.GpuInstanceProfileInfo_v3, nvml.Return)

	script agent.ScriptSource
	spec   fakeSpec

	mu      sync.Mutex
	lastXID []uint64
	pending []nvml.EventData
	// samples are the GPM samples allocated and not freed, with what each was taken of.
	samples map[*mock.GpmSample]*fakeSample
}

// fakeSample is what a fake GPM sample was taken of: GPU gpu's GPU instance gi (-1: the whole GPU),
// and its activity then.
type fakeSample struct {
	taken    bool
	gpu, gi  int
	activity float64
}

// fakeSpec is what a fake machine looks like beyond the mock.
type fakeSpec struct {
	busIDs       []string
	numa         []int
	cpus         []string // CPU affinity per GPU
	switches     []int    // NVLinks to each NVSwitch from every GPU
	pairLevel    func(i, j int) nvml.GpuTopologyLevel
	idleW, maxW  float64
	sockets      int
	coresPerSock int
	threads      int
}

var fakeSpecs = map[string]fakeSpec{
	// DGX A100: two 64-core EPYCs in NPS4 (NUMA nodes 0-7), GPUs in pairs behind PCIe switches, six
	// NVSwitches with two links from each GPU (NV12 between every pair).
	"dgxa100": {
		busIDs:   []string{"0000:07:00.0", "0000:0F:00.0", "0000:47:00.0", "0000:4E:00.0", "0000:87:00.0", "0000:90:00.0", "0000:B7:00.0", "0000:BD:00.0"},
		numa:     []int{3, 3, 1, 1, 7, 7, 5, 5},
		cpus:     []string{"48-63,176-191", "48-63,176-191", "16-31,144-159", "16-31,144-159", "112-127,240-255", "112-127,240-255", "80-95,208-223", "80-95,208-223"},
		switches: []int{2, 2, 2, 2, 2, 2},
		pairLevel: func(i, j int) nvml.GpuTopologyLevel {
			if i/2 == j/2 {
				return nvml.TOPOLOGY_MULTIPLE
			}
			return nvml.TOPOLOGY_SYSTEM
		},
		idleW: 55, maxW: 400, sockets: 2, coresPerSock: 64, threads: 2,
	},
	// DGX H100: two 56-core Xeons (NUMA 0 and 1), one PCIe switch per GPU, four NVSwitches with
	// 5+4+4+5 links from each GPU (NV18 between every pair).
	"dgxh100": {
		busIDs:   []string{"0000:1B:00.0", "0000:43:00.0", "0000:52:00.0", "0000:61:00.0", "0000:9D:00.0", "0000:C3:00.0", "0000:D1:00.0", "0000:DF:00.0"},
		numa:     []int{0, 0, 0, 0, 1, 1, 1, 1},
		cpus:     []string{"0-55,112-167", "0-55,112-167", "0-55,112-167", "0-55,112-167", "56-111,168-223", "56-111,168-223", "56-111,168-223", "56-111,168-223"},
		switches: []int{5, 4, 4, 5},
		pairLevel: func(i, j int) nvml.GpuTopologyLevel {
			if i/4 == j/4 {
				return nvml.TOPOLOGY_NODE
			}
			return nvml.TOPOLOGY_SYSTEM
		},
		idleW: 70, maxW: 700, sockets: 2, coresPerSock: 56, threads: 2,
	},
}

// NewFake builds a fake machine of a kind in FakeKinds whose GPU UUIDs derive from seed (the node
// name), so they stay the same across restarts. script says what the GPUs do; nil leaves them idle.
func NewFake(kind, seed string, script agent.ScriptSource) (*Fake, error) {
	spec, ok := fakeSpecs[kind]
	if !ok {
		return nil, fmt.Errorf("there is no fake %q; use one of %s, e.g. --fake dgxa100", kind, strings.Join(FakeKinds, ", "))
	}
	if script == nil {
		script = agent.StaticScript{}
	}
	var srv *server.Server
	switch kind {
	case "dgxa100":
		srv = dgxa100.New()
	case "dgxh100":
		srv = dgxh100.New()
	}
	f := &Fake{Server: srv, script: script, spec: spec, lastXID: make([]uint64, len(srv.Devices)),
		Cores: agent.LayoutCores(spec.sockets, spec.coresPerSock, spec.threads)}
	srv.EventSetCreateFunc = func() (nvml.EventSet, nvml.Return) {
		return &mock.EventSet{
			WaitFunc: f.waitEvent,
			FreeFunc: func() nvml.Return { return nvml.SUCCESS },
		}, nvml.SUCCESS
	}
	f.fakeGPM(srv)
	for i, d := range srv.Devices {
		f.complete(i, d.(*server.Device), seed, kind)
	}
	return f, nil
}

// fakeGPM gives the fake library GPM, which the fake H100 supports and the A100 does not (as the
// real ones): a sample of a MIG instance (mig=) holds its activity when it was taken, the GPU's
// UTIL% where a process of the GPU runs on the instance and 0 where none does, and the metrics of
// two samples of one instance are the second's.
func (f *Fake) fakeGPM(srv *server.Server) {
	f.samples = map[*mock.GpmSample]*fakeSample{}
	srv.GpmSampleAllocFunc = func() (nvml.GpmSample, nvml.Return) {
		s := &mock.GpmSample{}
		take := func(dev nvml.Device, gi int) nvml.Return {
			gpu := slices.Index(f.Server.Devices, dev)
			if gpu < 0 {
				return nvml.ERROR_INVALID_ARGUMENT
			}
			g := f.script.Script().For(gpu)
			act := g.Util
			if gi >= 0 {
				if gi < 1 || gi > len(g.MIG) {
					return nvml.ERROR_NOT_FOUND
				}
				if gi > len(g.PIDs) { // the GPU's processes go to its instances in turn
					act = 0
				}
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			if f.samples[s] == nil {
				return nvml.ERROR_INVALID_ARGUMENT // freed
			}
			*f.samples[s] = fakeSample{taken: true, gpu: gpu, gi: gi, activity: act}
			return nvml.SUCCESS
		}
		s.MigGetFunc = take
		s.GetFunc = func(dev nvml.Device) nvml.Return { return take(dev, -1) }
		s.FreeFunc = func() nvml.Return {
			f.mu.Lock()
			defer f.mu.Unlock()
			if f.samples[s] == nil {
				return nvml.ERROR_INVALID_ARGUMENT
			}
			delete(f.samples, s)
			return nvml.SUCCESS
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		f.samples[s] = &fakeSample{}
		return s, nvml.SUCCESS
	}
	srv.GpmSampleFreeFunc = func(s nvml.GpmSample) nvml.Return { return s.Free() }
	srv.GpmMetricsGetFunc = func(m *nvml.GpmMetricsGetType) nvml.Return {
		f.mu.Lock()
		defer f.mu.Unlock()
		s1, _ := m.Sample1.(*mock.GpmSample)
		s2, _ := m.Sample2.(*mock.GpmSample)
		a, b := f.samples[s1], f.samples[s2]
		if a == nil || b == nil || !a.taken || !b.taken || a.gpu != b.gpu || a.gi != b.gi || int(m.NumMetrics) > len(m.Metrics) {
			return nvml.ERROR_INVALID_ARGUMENT
		}
		for k := range m.NumMetrics {
			switch nvml.GpmMetricId(m.Metrics[k].MetricId) {
			case nvml.GPM_METRIC_GRAPHICS_UTIL, nvml.GPM_METRIC_SM_UTIL:
				m.Metrics[k].Value, m.Metrics[k].NvmlReturn = b.activity, uint32(nvml.SUCCESS)
			default:
				m.Metrics[k].NvmlReturn = uint32(nvml.ERROR_NOT_SUPPORTED)
			}
		}
		return nvml.SUCCESS
	}
}

// GPMSamples is how many GPM samples the fake's library holds: allocated and not freed.
func (f *Fake) GPMSamples() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.samples)
}

// complete sets what the mock device leaves unset.
func (f *Fake) complete(i int, d *server.Device, seed, kind string) {
	spec := f.spec
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s/%s/%d", seed, kind, i)))
	d.UUID = fmt.Sprintf("GPU-%x-%x-%x-%x-%x", sum[0:4], sum[4:6], sum[6:8], sum[8:10], sum[10:16])
	d.PciBusID = spec.busIDs[i]
	// go-nvml names its A100 "Mock NVIDIA …" but its H100 as the real one; every fake says Mock, so
	// a fake never passes for a real GPU in /metrics, gres.conf or a report.
	if !strings.HasPrefix(d.Config.Name, "Mock ") {
		d.Config.Name = "Mock " + d.Config.Name
	}
	total := d.MemoryInfo.Total
	state := func() agent.FakeGPU { return f.script.Script().For(i) }
	used := func(g agent.FakeGPU) uint64 {
		mem := g.MemMiB << 20
		if mem == 0 {
			mem = uint64(len(g.PIDs)) << 30
		}
		return min(mem, total)
	}
	d.GetPciInfoFunc = func() (nvml.PciInfo, nvml.Return) {
		p := nvml.PciInfo{PciDeviceId: d.Config.PciDeviceId}
		for k, c := range []byte(spec.busIDs[i]) {
			p.BusId[k] = int8(c)
		}
		return p, nvml.SUCCESS
	}
	// MIG mode comes from the script (mig=), or from the mock's MigMode set by a test.
	migMode := func(g agent.FakeGPU) bool {
		d.RLock()
		defer d.RUnlock()
		return len(g.MIG) > 0 || d.MigMode == nvml.DEVICE_MIG_ENABLE
	}
	d.GetMigModeFunc = func() (int, int, nvml.Return) {
		m := nvml.DEVICE_MIG_DISABLE
		if migMode(state()) {
			m = nvml.DEVICE_MIG_ENABLE
		}
		return m, m, nvml.SUCCESS
	}
	d.GetMaxMigDeviceCountFunc = func() (int, nvml.Return) { return 7, nvml.SUCCESS }
	d.GetMigDeviceHandleByIndexFunc = func(j int) (nvml.Device, nvml.Return) {
		g := state()
		if j < 0 || j >= len(g.MIG) {
			return nil, nvml.ERROR_NOT_FOUND
		}
		return f.migDevice(d, g, j, used(g)), nvml.SUCCESS
	}
	d.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) {
		g := state()
		if migMode(g) { // NVML has no utilization for a GPU in MIG mode
			return nvml.Utilization{}, nvml.ERROR_NOT_SUPPORTED
		}
		return nvml.Utilization{Gpu: uint32(g.Util), Memory: uint32(g.Util / 2)}, nvml.SUCCESS
	}
	d.GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) {
		u := used(state())
		return nvml.Memory{Total: total, Used: u, Free: total - u}, nvml.SUCCESS
	}
	// The fake's driver reserves nothing: version 2 of the memory call reads as the first does now
	// (a test may change that one).
	d.GetMemoryInfo_v2Func = func() (nvml.Memory_v2, nvml.Return) { return memoryV2(d.GetMemoryInfo()) }
	d.GetPowerUsageFunc = func() (uint32, nvml.Return) {
		g := state()
		w := g.PowerW
		if w == 0 {
			w = spec.idleW + (spec.maxW-spec.idleW)*g.Util/100
		}
		return uint32(w * 1000), nvml.SUCCESS
	}
	d.GetTemperatureFunc = func(nvml.TemperatureSensors) (uint32, nvml.Return) {
		g := state()
		t := g.TempC
		if t == 0 {
			t = 32 + 0.4*g.Util
		}
		return uint32(t), nvml.SUCCESS
	}
	d.GetTotalEccErrorsFunc = func(nvml.MemoryErrorType, nvml.EccCounterType) (uint64, nvml.Return) {
		return 0, nvml.SUCCESS
	}
	d.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) {
		g := state()
		f.noteXID(i, d, g.XID)
		var ps []nvml.ProcessInfo
		for _, pid := range g.PIDs {
			ps = append(ps, nvml.ProcessInfo{Pid: pid, UsedGpuMemory: used(g) / uint64(len(g.PIDs))})
		}
		return ps, nvml.SUCCESS
	}
	// No MPS server and no rendering, unless a test says otherwise.
	d.GetMPSComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return nil, nvml.SUCCESS }
	d.GetGraphicsRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return nil, nvml.SUCCESS }
	d.RegisterEventsFunc = func(uint64, nvml.EventSet) nvml.Return { return nvml.SUCCESS }
	// GPM: Hopper has it, the A100 does not (its driver says so, rather than NOT_SUPPORTED).
	gpm := uint32(0)
	if kind == "dgxh100" {
		gpm = 1
	}
	d.GpmQueryDeviceSupportFunc = func() (nvml.GpmSupport, nvml.Return) {
		return nvml.GpmSupport{Version: nvml.GPM_SUPPORT_VERSION, IsSupportedDevice: gpm}, nvml.SUCCESS
	}
	d.GpmMigSampleGetFunc = func(gi int, s nvml.GpmSample) nvml.Return {
		if gpm == 0 {
			return nvml.ERROR_NOT_SUPPORTED
		}
		return s.MigGet(d, gi)
	}
	d.GpmSampleGetFunc = func(s nvml.GpmSample) nvml.Return {
		if gpm == 0 {
			return nvml.ERROR_NOT_SUPPORTED
		}
		return s.Get(d)
	}
	d.GetNumaNodeIdFunc = func() (int, nvml.Return) { return spec.numa[i], nvml.SUCCESS }
	d.GetCpuAffinityFunc = func(n int) ([]uint, nvml.Return) {
		words := make([]uint, (n-1)/8+1)
		cpus, _ := agent.ParseCPUs(spec.cpus[i])
		for _, c := range cpus {
			if c/64 < len(words) {
				words[c/64] |= 1 << uint(c%64)
			}
		}
		return words, nvml.SUCCESS
	}
	// Link l goes to NVSwitch s for the first switches[0] links, then the next switch, and so on.
	switchOf := func(l int) int {
		for s, n := range spec.switches {
			if l < n {
				return s
			}
			l -= n
		}
		return -1
	}
	d.GetNvLinkStateFunc = func(l int) (nvml.EnableState, nvml.Return) {
		if switchOf(l) < 0 {
			return 0, nvml.ERROR_INVALID_ARGUMENT
		}
		return nvml.FEATURE_ENABLED, nvml.SUCCESS
	}
	d.GetNvLinkRemotePciInfoFunc = func(l int) (nvml.PciInfo, nvml.Return) {
		s := switchOf(l)
		if s < 0 {
			return nvml.PciInfo{}, nvml.ERROR_INVALID_ARGUMENT
		}
		var p nvml.PciInfo
		for k, c := range []byte(fmt.Sprintf("00000000:%02X:00.0", 0xC4+s)) {
			p.BusId[k] = int8(c)
		}
		return p, nvml.SUCCESS
	}
	d.GetNvLinkRemoteDeviceTypeFunc = func(int) (nvml.IntNvLinkDeviceType, nvml.Return) {
		return nvml.NVLINK_DEVICE_TYPE_SWITCH, nvml.SUCCESS
	}
	d.GetTopologyCommonAncestorFunc = func(other nvml.Device) (nvml.GpuTopologyLevel, nvml.Return) {
		o, ok := other.(*server.Device)
		if !ok {
			return 0, nvml.ERROR_INVALID_ARGUMENT
		}
		if o.Index == i {
			return nvml.TOPOLOGY_INTERNAL, nvml.SUCCESS
		}
		return spec.pairLevel(i, o.Index), nvml.SUCCESS
	}
}

// migDevice is MIG device j of GPU d as script line g has it: the j-th profile of mig=, as GPU
// instance j+1 with one compute instance (0), the memory of the mock's GPU instance profile of that
// size, every len(mig)-th process of the GPU from the j-th (each with its share of used, the
// GPU's memory in use), and no utilization from NVML's utilization call, which gives none on an
// A100 or H100 (the H100's instances have GPM's activity: fakeGPM).
func (f *Fake) migDevice(d *server.Device, g agent.FakeGPU, j int, used uint64) nvml.Device {
	profile := g.MIG[j]
	slices, gb, _ := agent.MIGSlices(profile)
	memMiB := uint64(gb) * 1024
	var engines nvml.GpuInstanceProfileInfo
	for _, p := range d.Config.MIGProfiles.GpuInstanceProfiles {
		if int(p.SliceCount) == slices && agent.MIGProfileName(slices, p.MemorySizeMB, d.MemoryInfo.Total) == fmt.Sprintf("%dg.%dgb", slices, gb) &&
			(engines.MemorySizeMB == 0 || p.InstanceCount > engines.InstanceCount) { // not the +me profile, of which there is one
			memMiB, engines = p.MemorySizeMB, p
		}
	}
	gi := j + 1
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s/%d/%s", d.UUID, gi, profile)))
	uuid := fmt.Sprintf("MIG-%x-%x-%x-%x-%x", sum[0:4], sum[4:6], sum[6:8], sum[8:10], sum[10:16])
	var procs []nvml.ProcessInfo
	var inUse uint64
	for k := j; k < len(g.PIDs); k += len(g.MIG) {
		mem := used / uint64(len(g.PIDs))
		procs = append(procs, nvml.ProcessInfo{Pid: g.PIDs[k], UsedGpuMemory: mem})
		inUse += mem
	}
	total := memMiB << 20
	inUse = min(inUse, total)
	attrs := nvml.DeviceAttributes{GpuInstanceSliceCount: uint32(slices), ComputeInstanceSliceCount: uint32(slices), MemorySizeMB: memMiB,
		SharedCopyEngineCount: engines.CopyEngineCount, SharedDecoderCount: engines.DecoderCount, SharedEncoderCount: engines.EncoderCount,
		SharedJpegCount: engines.JpegCount, SharedOfaCount: engines.OfaCount}
	m := &mock.Device{
		GetAttributesFunc:        func() (nvml.DeviceAttributes, nvml.Return) { return attrs, nvml.SUCCESS },
		GetGpuInstanceIdFunc:     func() (int, nvml.Return) { return gi, nvml.SUCCESS },
		GetComputeInstanceIdFunc: func() (int, nvml.Return) { return 0, nvml.SUCCESS },
		GetUUIDFunc:              func() (string, nvml.Return) { return uuid, nvml.SUCCESS },
		GetMemoryInfoFunc: func() (nvml.Memory, nvml.Return) {
			return nvml.Memory{Total: total, Used: inUse, Free: total - inUse}, nvml.SUCCESS
		},
		GetUtilizationRatesFunc: func() (nvml.Utilization, nvml.Return) {
			return nvml.Utilization{}, nvml.ERROR_NOT_SUPPORTED
		},
		GetComputeRunningProcessesFunc:    func() ([]nvml.ProcessInfo, nvml.Return) { return procs, nvml.SUCCESS },
		GetMPSComputeRunningProcessesFunc: func() ([]nvml.ProcessInfo, nvml.Return) { return nil, nvml.SUCCESS },
		GetGraphicsRunningProcessesFunc:   func() ([]nvml.ProcessInfo, nvml.Return) { return nil, nvml.SUCCESS },
	}
	m.GetMemoryInfo_v2Func = func() (nvml.Memory_v2, nvml.Return) { return memoryV2(m.GetMemoryInfo()) }
	return m
}

// memoryV2 is a memory reading of NVML's first version as its version 2 gives it on a driver that
// reserves nothing.
func memoryV2(m nvml.Memory, r nvml.Return) (nvml.Memory_v2, nvml.Return) {
	return nvml.Memory_v2{Version: nvml.STRUCT_VERSION(nvml.Memory_v2{}, 2), Total: m.Total, Used: m.Used, Free: m.Free}, r
}

// noteXID queues an XID event when the script's XID of GPU i changes to a new error.
func (f *Fake) noteXID(i int, d nvml.Device, xid uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if xid != 0 && xid != f.lastXID[i] {
		f.pending = append(f.pending, nvml.EventData{Device: d, EventType: nvml.EventTypeXidCriticalError, EventData: xid})
	}
	f.lastXID[i] = xid
}

func (f *Fake) waitEvent(uint32) (nvml.EventData, nvml.Return) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.pending) == 0 {
		return nvml.EventData{}, nvml.ERROR_TIMEOUT
	}
	e := f.pending[0]
	f.pending = f.pending[1:]
	return e, nvml.SUCCESS
}

// GPUs is how many GPUs the fake machine has.
func (f *Fake) GPUs() int { return len(f.Server.Devices) }

// MIGProfiles are the MIG profiles the fake's GPUs have, as NVIDIA names them, by slices and then
// memory (without the +me profiles, which mig= does not make): what mig= may name.
func (f *Fake) MIGProfiles() []string {
	d := f.Server.Devices[0].(*server.Device)
	type profile struct {
		slices uint32
		mem    uint64
		name   string
	}
	var ps []profile
	for id, p := range d.Config.MIGProfiles.GpuInstanceProfiles {
		if id == nvml.GPU_INSTANCE_PROFILE_1_SLICE_REV1 || id == nvml.GPU_INSTANCE_PROFILE_2_SLICE_REV1 {
			continue
		}
		ps = append(ps, profile{p.SliceCount, p.MemorySizeMB, agent.MIGProfileName(int(p.SliceCount), p.MemorySizeMB, d.MemoryInfo.Total)})
	}
	slices.SortFunc(ps, func(a, b profile) int {
		if a.slices != b.slices {
			return int(a.slices) - int(b.slices)
		}
		return int(a.mem) - int(b.mem)
	})
	names := make([]string, 0, len(ps))
	for _, p := range ps {
		if !slices.Contains(names, p.name) {
			names = append(names, p.name)
		}
	}
	return names
}

// MIGExample is a mig= value the fake's GPUs take: a 3-, a 2- and a 1-slice profile.
func (f *Fake) MIGExample() string {
	var ex []string
	for _, n := range []int{3, 2, 1} {
		for _, p := range f.MIGProfiles() {
			if s, _, _ := agent.MIGSlices(p); s == n {
				ex = append(ex, p)
				break
			}
		}
	}
	return strings.Join(ex, ",")
}

// CheckMIG says which MIG profile of s the fake's GPUs do not have, naming those they do; nil
// when they have every one. A profile they lack would be shown with a memory and a name no such
// GPU has.
func (f *Fake) CheckMIG(s agent.Script) error {
	have := f.MIGProfiles()
	check := func(gpu string, g agent.FakeGPU) error {
		for _, p := range g.MIG {
			if !slices.Contains(have, p) {
				model := strings.TrimPrefix(f.Server.Devices[0].(*server.Device).Config.Name, "Mock ")
				return fmt.Errorf("%s names the MIG profile %q, which the fake's %s lacks; it has %s",
					gpu, p, model, strings.Join(have, ", "))
			}
		}
		return nil
	}
	gpus := slices.Sorted(maps.Keys(s.GPUs))
	for _, i := range gpus {
		if err := check(fmt.Sprintf("GPU %d", i), s.GPUs[i]); err != nil {
			return err
		}
	}
	if s.All != nil {
		return check("the line *", *s.All)
	}
	return nil
}

// OpenFake opens the fake machine like a real driver.
func OpenFake(f *Fake, log *slog.Logger) (*Devices, error) {
	return open(f.Server, log, func() profileInfo { return f.profileInfo })
}

// profileInfo is the fake driver's nvmlDeviceGetGpuInstanceProfileInfoV: f.ProfileInfo, or the
// mock's profile with NVIDIA's name for it (+me for the profiles with the media engines).
func (f *Fake) profileInfo(dev nvml.Device, profile int) (nvml.GpuInstanceProfileInfo_v3, nvml.Return) {
	gpu := slices.Index(f.Server.Devices, dev)
	if gpu < 0 {
		return nvml.GpuInstanceProfileInfo_v3{}, nvml.ERROR_INVALID_ARGUMENT
	}
	if f.ProfileInfo != nil {
		return f.ProfileInfo(gpu, profile)
	}
	d := f.Server.Devices[gpu].(*server.Device)
	p, ok := d.Config.MIGProfiles.GpuInstanceProfiles[profile]
	if !ok {
		return nvml.GpuInstanceProfileInfo_v3{}, nvml.ERROR_NOT_SUPPORTED
	}
	name := "MIG " + agent.MIGProfileName(int(p.SliceCount), p.MemorySizeMB, d.MemoryInfo.Total)
	if profile == nvml.GPU_INSTANCE_PROFILE_1_SLICE_REV1 || profile == nvml.GPU_INSTANCE_PROFILE_2_SLICE_REV1 {
		name += "+me"
	}
	info := nvml.GpuInstanceProfileInfo_v3{Id: p.Id, SliceCount: p.SliceCount, InstanceCount: p.InstanceCount,
		MultiprocessorCount: p.MultiprocessorCount, CopyEngineCount: p.CopyEngineCount, DecoderCount: p.DecoderCount,
		EncoderCount: p.EncoderCount, JpegCount: p.JpegCount, OfaCount: p.OfaCount, MemorySizeMB: p.MemorySizeMB}
	for k, c := range []byte(name) {
		info.Name[k] = int8(c)
	}
	return info, nvml.SUCCESS
}
