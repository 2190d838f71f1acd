//go:build cgo

package agent_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/acme/quartermaster/agent"
	"github.com/acme/quartermaster/agent/nvml"
	"github.com/acme/quartermaster/agent/report"
	"github.com/acme/quartermaster/internal/testkit"
)

// gpmLab plays NVML's GPM (GPU performance monitoring, Hopper and later) on a fake machine: the
// activity of each GPU instance of a GPU in MIG mode, which the test sets, and every GPM sample
// the agent allocates, so that a sample never freed, or two samples of different GPU instances
// taken as one instance's two readings, are seen.
type gpmLab struct {
	mu sync.Mutex
	// activity is each GPU instance's graphics engine activity (percent) by its id; its SMs are
	// a quarter as busy, so that the test sees which metric is reported.
	activity map[int]float64
	// made counts how many times each GPU instance id was created: one created again is another
	// instance, whose samples must not be paired with the old one's.
	made map[int]int
	// fail is what taking a MIG sample answers; SUCCESS by default.
	fail   gonvml.Return
	live   map[*mock.GpmSample]*gpmTag
	allocs int
	// mixed lists the pairs of samples of two different GPU instances the agent asked metrics of.
	mixed []string
	// whole counts samples of whole GPUs (not in MIG mode, which keep their utilization).
	whole int
}

type gpmTag struct {
	gi, made int
	activity float64
	taken    bool
}

// installGPM makes GPM answer on f: GPU gpu supports it where supported says so (an H100, not an
// A100); every GPU may be asked.
func installGPM(f *nvml.Fake, gpu int, supported bool) *gpmLab {
	l := &gpmLab{activity: map[int]float64{}, made: map[int]int{}, fail: gonvml.SUCCESS, live: map[*mock.GpmSample]*gpmTag{}}
	srv := f.Server
	srv.GpmSampleAllocFunc = func() (gonvml.GpmSample, gonvml.Return) {
		l.mu.Lock()
		defer l.mu.Unlock()
		s := &mock.GpmSample{}
		s.FreeFunc = func() gonvml.Return {
			l.mu.Lock()
			defer l.mu.Unlock()
			if _, ok := l.live[s]; !ok {
				return gonvml.ERROR_INVALID_ARGUMENT
			}
			delete(l.live, s)
			return gonvml.SUCCESS
		}
		s.MigGetFunc = func(_ gonvml.Device, gi int) gonvml.Return {
			l.mu.Lock()
			defer l.mu.Unlock()
			if l.fail != gonvml.SUCCESS {
				return l.fail
			}
			l.live[s] = &gpmTag{gi: gi, made: l.made[gi], activity: l.activity[gi], taken: true}
			return gonvml.SUCCESS
		}
		s.GetFunc = func(gonvml.Device) gonvml.Return {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.whole++
			l.live[s] = &gpmTag{gi: -1, taken: true}
			return gonvml.SUCCESS
		}
		l.live[s] = &gpmTag{}
		l.allocs++
		return s, gonvml.SUCCESS
	}
	srv.GpmSampleFreeFunc = func(s gonvml.GpmSample) gonvml.Return { return s.Free() }
	srv.GpmMetricsGetFunc = func(m *gonvml.GpmMetricsGetType) gonvml.Return {
		l.mu.Lock()
		defer l.mu.Unlock()
		s1, _ := m.Sample1.(*mock.GpmSample)
		s2, _ := m.Sample2.(*mock.GpmSample)
		t1, t2 := l.live[s1], l.live[s2]
		if t1 == nil || t2 == nil || !t1.taken || !t2.taken || m.NumMetrics == 0 {
			return gonvml.ERROR_INVALID_ARGUMENT
		}
		if t1.gi != t2.gi || t1.made != t2.made {
			l.mixed = append(l.mixed, fmt.Sprintf("GPU instance %d (created %d times) with GPU instance %d (created %d times)", t1.gi, t1.made, t2.gi, t2.made))
		}
		for k := range m.NumMetrics {
			switch gonvml.GpmMetricId(m.Metrics[k].MetricId) {
			case gonvml.GPM_METRIC_GRAPHICS_UTIL:
				m.Metrics[k].Value = t2.activity
			case gonvml.GPM_METRIC_SM_UTIL:
				m.Metrics[k].Value = t2.activity / 4
			default:
				m.Metrics[k].NvmlReturn = uint32(gonvml.ERROR_NOT_SUPPORTED)
			}
		}
		return gonvml.SUCCESS
	}
	for i, d := range srv.Devices {
		dev := d.(*server.Device)
		ok := uint32(0)
		if i == gpu && supported {
			ok = 1
		}
		dev.GpmQueryDeviceSupportFunc = func() (gonvml.GpmSupport, gonvml.Return) {
			return gonvml.GpmSupport{Version: gonvml.GPM_SUPPORT_VERSION, IsSupportedDevice: ok}, gonvml.SUCCESS
		}
		dev.GpmMigSampleGetFunc = func(gi int, s gonvml.GpmSample) gonvml.Return { return s.MigGet(dev, gi) }
		dev.GpmSampleGetFunc = func(s gonvml.GpmSample) gonvml.Return { return s.Get(dev) }
	}
	return l
}

func (l *gpmLab) set(gi int, activity float64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.activity[gi] = activity
}

// held is how many samples the agent holds (allocated and not freed).
func (l *gpmLab) held() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.live)
}

// gpmAgent is an agent on a fake machine of kind whose GPU 2 is in MIG mode with the given GPU
// instances (migGPU), GPM answering as installGPM says; setup, when not nil, runs before the
// GPUs are opened. Its log is returned.
func gpmAgent(t *testing.T, kind string, supported bool, profiles [][3]int, setup func(*nvml.Fake)) (*agent.Agent, *gpmLab, []*mock.Device, agent.Devices, *testkit.SyncBuffer) {
	t.Helper()
	s, err := agent.ParseScript("* 30")
	if err != nil {
		t.Fatal(err)
	}
	f, err := nvml.NewFake(kind, "dgx-01", agent.StaticScript(s))
	if err != nil {
		t.Fatal(err)
	}
	migs := migGPU(f, 2, profiles)
	lab := installGPM(f, 2, supported)
	if setup != nil {
		setup(f)
	}
	var logs testkit.SyncBuffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	d, err := nvml.OpenFake(f, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	a, err := agent.New(agent.Config{Node: "dgx-01", Devices: d, Cgroups: agent.Cgroups{ProcRoot: "testdata/proc"}, Labels: agent.LabelsDCGM, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	return a, lab, migs, d, &logs
}

// migUtils is the utilization of each MIG device of GPU 2 in r, by GPU and compute instance
// ("1/0": 60); a device without one is absent.
func migUtils(t *testing.T, r report.Report) map[string]float64 {
	t.Helper()
	for _, g := range r.GPUs {
		if g.Index != 2 {
			continue
		}
		out := map[string]float64{}
		for _, m := range g.MIG {
			if m.Util != nil {
				out[fmt.Sprintf("%d/%d", m.GI, m.CI)] = *m.Util
			}
		}
		return out
	}
	t.Fatalf("the report lacks GPU 2: %+v", r.GPUs)
	return nil
}

func collect(t *testing.T, a *agent.Agent) report.Report {
	t.Helper()
	r, err := a.Collect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// On a GPU that supports GPM (an H100 and later), each MIG device is reported with its GPU
// instance's graphics engine activity since the last reading (nvidia-smi's and dcgm-exporter's
// sense of utilization, not how many SMs were busy), in the report and in /metrics as
// DCGM_FI_PROF_GR_ENGINE_ACTIVE with the instance's GPU_I_PROFILE and GPU_I_ID. The first reading
// has no earlier sample to compare with, and gives none. The compute instances of one GPU instance
// share its activity and its one series. The GPUs not in MIG mode keep NVML's utilization. Each
// reading frees the sample it no longer needs: the agent holds one per GPU instance, and none once
// the GPU leaves MIG mode.
func TestMIGUtilizationComesFromGPMWhereTheGPUHasIt(t *testing.T) {
	a, lab, migs, _, _ := gpmAgent(t, "dgxh100", true, [][3]int{{3, 40960, 1}, {2, 20480, 5}, {2, 20480, 5}, {1, 10240, 13}}, nil)
	migs[2].GetComputeInstanceIdFunc = func() (int, gonvml.Return) { return 1, gonvml.SUCCESS }
	migs[0].GetComputeRunningProcessesFunc = func() ([]gonvml.ProcessInfo, gonvml.Return) {
		return []gonvml.ProcessInfo{{Pid: 4242, UsedGpuMemory: 4 << 30, GpuInstanceId: 1}}, gonvml.SUCCESS
	}
	lab.set(1, 60)
	lab.set(5, 40)
	lab.set(13, 0)

	if u := migUtils(t, collect(t, a)); len(u) != 0 {
		t.Errorf("the first reading has no earlier sample to compare with, yet gives utilizations %v", u)
	}
	r := collect(t, a)
	want := map[string]float64{"1/0": 60, "5/0": 40, "5/1": 40, "13/0": 0}
	if u := migUtils(t, r); fmt.Sprint(u) != fmt.Sprint(want) {
		t.Errorf("MIG utilizations = %v; want each GPU instance's graphics engine activity %v", u, want)
	}
	for _, g := range r.GPUs {
		if g.Index != 2 && (g.Util == nil || *g.Util != 30) {
			t.Errorf("GPU %d (not in MIG mode) has utilization %v; want NVML's 30", g.Index, g.Util)
		}
		if g.Index == 2 && g.Util != nil {
			t.Errorf("GPU 2 in MIG mode has a utilization of its own: %v", *g.Util)
		}
	}
	if lab.whole != 0 {
		t.Errorf("%d GPM samples of whole GPUs were taken; a GPU not in MIG mode keeps NVML's utilization", lab.whole)
	}
	if n := lab.held(); n != 3 {
		t.Errorf("the agent holds %d GPM samples after two readings; want one per GPU instance, 3", n)
	}

	lab.set(1, 10)
	collect(t, a)
	m := scrape(t, a)
	for _, w := range []struct{ gi, profile, value string }{{"1", "3g.40gb", "0.1"}, {"5", "2g.20gb", "0.4"}, {"13", "1g.10gb", "0"}} {
		s := migSeries(m, "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "2", w.gi)
		if len(s) != 1 || !strings.Contains(s[0], `GPU_I_PROFILE="`+w.profile+`"`) || !strings.HasSuffix(s[0], " "+w.value) {
			t.Errorf("GPU instance %s: want one DCGM_FI_PROF_GR_ENGINE_ACTIVE series of %s at %s:\n%s", w.gi, w.profile, w.value, grep(m, "GR_ENGINE"))
		}
	}
	if s := migSeries(m, "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "2", "1"); len(s) == 1 && !strings.Contains(s[0], `hpc_job="123"`) {
		t.Errorf("GPU instance 1's activity lacks its job: %s", s[0])
	}
	promtoolCheck(t, agent.LabelsDCGM, m)
	if n := lab.held(); n != 3 {
		t.Errorf("the agent holds %d GPM samples after three readings; want 3: each reading frees the sample it is done with", n)
	}
}

// A GPU that leaves MIG mode, and an agent that stops, free the GPM samples kept for it.
func TestGPMSamplesAreFreedWhenMIGEndsAndAtClose(t *testing.T) {
	var srv *nvml.Fake
	a, lab, _, d, _ := gpmAgent(t, "dgxh100", true, [][3]int{{3, 40960, 1}, {4, 40960, 2}}, func(f *nvml.Fake) { srv = f })
	collect(t, a)
	collect(t, a)
	if n := lab.held(); n != 2 {
		t.Fatalf("the agent holds %d GPM samples; want one per GPU instance, 2", n)
	}
	srv.Server.Devices[2].(*server.Device).MigMode = gonvml.DEVICE_MIG_DISABLE
	if r := collect(t, a); r.GPUs[2].MIG != nil {
		t.Fatalf("GPU 2 is still in MIG mode: %+v", r.GPUs[2])
	}
	if n := lab.held(); n != 0 {
		t.Errorf("GPU 2 left MIG mode, yet the agent still holds %d GPM samples of its instances", n)
	}
	srv.Server.Devices[2].(*server.Device).MigMode = gonvml.DEVICE_MIG_ENABLE
	collect(t, a)
	if n := lab.held(); n != 2 {
		t.Fatalf("back in MIG mode, the agent holds %d GPM samples; want 2", n)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if n := lab.held(); n != 0 {
		t.Errorf("the agent closed NVML holding %d GPM samples", n)
	}
}

// An A100 has no GPM: its MIG devices have no utilization, as NVML gives none, and no GPM sample
// is taken. Nor on a driver whose library lacks GPM (before R520), which the agent must not call.
func TestNoMIGUtilizationWithoutGPM(t *testing.T) {
	for _, tc := range []struct {
		name, kind string
		supported  bool
		setup      func(*nvml.Fake)
	}{
		{"A100", "dgxa100", false, nil},
		{"H100 on a driver without GPM", "dgxh100", true, func(f *nvml.Fake) {
			f.Server.LookupSymbolFunc = func(symbol string) error {
				if strings.HasPrefix(symbol, "nvmlGpm") {
					return fmt.Errorf("%s: undefined symbol", symbol)
				}
				return nil
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, lab, _, _, _ := gpmAgent(t, tc.kind, tc.supported, [][3]int{{3, 19968, 1}, {2, 9856, 5}}, tc.setup)
			lab.set(1, 60)
			lab.set(5, 60)
			for range 3 {
				if u := migUtils(t, collect(t, a)); len(u) != 0 {
					t.Errorf("MIG utilizations %v without GPM; want none", u)
				}
			}
			if lab.allocs != 0 {
				t.Errorf("%d GPM samples allocated on a GPU without GPM", lab.allocs)
			}
			if m := scrape(t, a); strings.Contains(m, "DCGM_FI_PROF_GR_ENGINE_ACTIVE{") {
				t.Errorf("MIG activity in /metrics without GPM:\n%s", grep(m, "GR_ENGINE"))
			}
		})
	}
}

// A GPM reading that fails leaves the MIG devices without utilization (never 0) and is logged once
// while it lasts, not at every reading; its samples are freed. Once it works again, the readings
// give utilization again from the second one on.
func TestAFailingGPMReadingGivesNoMIGUtilizationAndIsLoggedOnce(t *testing.T) {
	a, lab, _, _, logs := gpmAgent(t, "dgxh100", true, [][3]int{{3, 40960, 1}, {4, 40960, 2}}, nil)
	lab.set(1, 60)
	lab.set(2, 20)
	lab.fail = gonvml.ERROR_UNKNOWN
	for k := range 4 {
		if u := migUtils(t, collect(t, a)); len(u) != 0 {
			t.Errorf("reading %d: MIG utilizations %v while GPM fails; want none", k+1, u)
		}
		if n := lab.held(); n != 0 {
			t.Errorf("reading %d: the agent holds %d GPM samples that failed", k+1, n)
		}
	}
	warned := func() int {
		n := 0
		for _, l := range strings.Split(logs.String(), "\n") {
			if strings.Contains(l, "level=WARN") && strings.Contains(l, "GPM") {
				n++
			}
		}
		return n
	}
	if n := warned(); n != 1 {
		t.Errorf("4 failing readings logged %d warnings about GPM; want 1:\n%s", n, logs.String())
	}
	lab.mu.Lock()
	lab.fail = gonvml.SUCCESS
	lab.mu.Unlock()
	collect(t, a)
	if u := migUtils(t, collect(t, a)); fmt.Sprint(u) != fmt.Sprint(map[string]float64{"1/0": 60, "2/0": 20}) {
		t.Errorf("GPM works again, yet the MIG utilizations are %v", u)
	}
	if n := warned(); n != 1 {
		t.Errorf("%d warnings about GPM after it works again; want still 1:\n%s", n, logs.String())
	}
}

// MIG reconfigured between two readings (a GPU instance destroyed and another created with the
// same id, as `nvidia-smi mig` does) is a new instance: its first reading gives no utilization,
// rather than its activity computed against the old instance's sample. The instances left as they
// were keep theirs.
func TestMIGReconfiguredBetweenReadingsPairsNoSamplesOfTwoInstances(t *testing.T) {
	var fake *nvml.Fake
	a, lab, _, _, _ := gpmAgent(t, "dgxh100", true, [][3]int{{3, 40960, 1}, {3, 40960, 2}}, func(f *nvml.Fake) { fake = f })
	lab.set(1, 60)
	lab.set(2, 20)
	collect(t, a)
	if u := migUtils(t, collect(t, a)); len(u) != 2 {
		t.Fatalf("before the change: MIG utilizations %v; want both instances'", u)
	}
	for _, tc := range []struct {
		name     string
		profiles [][3]int
		uuid     func(k int) string
		made     int // the GPU instance id created again
		want     map[string]float64
	}{
		// Same id, same profile, new MIG device: only its UUID tells it is another.
		{"instance 1 created again", [][3]int{{3, 40960, 1}, {3, 40960, 2}}, func(k int) string {
			if k == 0 {
				return "MIG-new-1"
			}
			return ""
		}, 1, map[string]float64{"2/0": 20}},
		// Instance 1 gone, its slices taken by a smaller instance with the same id.
		{"instance 1 made smaller", [][3]int{{1, 10240, 1}, {3, 40960, 2}}, func(k int) string {
			if k == 0 {
				return "MIG-new-2"
			}
			return ""
		}, 1, map[string]float64{"2/0": 20}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The instance that stays keeps its MIG device's UUID; migGPU names them by position.
			migs := migGPU(fake, 2, tc.profiles)
			for k, m := range migs {
				if u := tc.uuid(k); u != "" {
					m.GetUUIDFunc = func() (string, gonvml.Return) { return u, gonvml.SUCCESS }
				}
			}
			lab.mu.Lock()
			lab.made[tc.made]++
			lab.activity[tc.made] = 90
			lab.mu.Unlock()
			if u := migUtils(t, collect(t, a)); fmt.Sprint(u) != fmt.Sprint(tc.want) {
				t.Errorf("the reading after the change gives MIG utilizations %v; want %v (none for the new instance)", u, tc.want)
			}
			if u := migUtils(t, collect(t, a)); u["1/0"] != 90 || u["2/0"] != 20 {
				t.Errorf("the second reading after the change gives %v; want the new instance 1 at 90 and instance 2 at 20", u)
			}
			if len(lab.mixed) != 0 {
				t.Errorf("samples of two different GPU instances were compared: %v", lab.mixed)
			}
			if n := lab.held(); n != 2 {
				t.Errorf("the agent holds %d GPM samples; want one per GPU instance, 2", n)
			}
		})
	}
}

// A GPU whose driver fails to say whether it has GPM (once) is asked again at the next reading,
// not taken for a GPU without it until the agent restarts.
func TestGPMSupportIsAskedAgainAfterAFailedAnswer(t *testing.T) {
	var parent *server.Device
	a, lab, _, _, _ := gpmAgent(t, "dgxh100", true, [][3]int{{7, 81920, 0}}, func(f *nvml.Fake) { parent = f.Server.Devices[2].(*server.Device) })
	lab.set(0, 55)
	answer := parent.GpmQueryDeviceSupportFunc
	asked := 0
	parent.GpmQueryDeviceSupportFunc = func() (gonvml.GpmSupport, gonvml.Return) {
		asked++
		if asked == 1 {
			return gonvml.GpmSupport{}, gonvml.ERROR_UNKNOWN
		}
		return answer()
	}
	for range 3 {
		collect(t, a)
	}
	if u := migUtils(t, collect(t, a)); u["0/0"] != 55 {
		t.Errorf("after GPM support failed to read once, MIG utilizations are %v; want GPU instance 0 at 55", u)
	}
}
