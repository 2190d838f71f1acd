//go:build cgo

// Package nvml reads a node's GPUs through NVML (github.com/NVIDIA/go-nvml), the only package that
// imports it. Devices is written against nvml.Interface and holds its own handle, with no
// package-level state: the node agent passes the real library (System), tests and demos pass one of
// go-nvml's mock DGX servers completed by Fake, and both go through the same code.
//
// Not every GPU answers every call: a VM reports no NUMA node, a GPU without NVLink says
// NOT_SUPPORTED for its links, and a consumer card has no ECC. Such answers leave the measurement
// out of the report; they never stop one.
package nvml

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/acme/quartermaster/agent"
	"github.com/acme/quartermaster/agent/report"
)

// maxCPUs is how many CPUs a GPU's CPU affinity may name.
const maxCPUs = 4096

// Devices reads the GPUs of one node through one NVML handle; it implements agent.Devices.
// gpus and devs are by NVML index; the handle of a GPU lost at start is nil until a sample reads
// it again (retryLost).
type Devices struct {
	// GPUTimeout bounds one GPU's reading in a sample; zero means DefaultGPUTimeout.
	GPUTimeout time.Duration
	// Now is the clock of the backoff between initialisations of NVML while the driver is away
	// (reopen); nil is time.Now.
	Now func() time.Time

	lib    nvml.Interface
	log    *slog.Logger
	driver string
	// profiles reads a GPU's GPU instance profiles with their names; nil where the driver gives
	// none, and the MIG devices' profile names are worked out.
	profiles profileInfo
	// memV2 says the library has version 2 of the memory call (R510 and later), which gives the
	// memory the driver reserves apart from the memory in use.
	memV2 bool
	// gpm says the library has GPM (R520 and later), which gives the activity of MIG devices on
	// the GPUs that support it (gpm.go).
	gpm bool

	// gpmMu guards gpmGPUs, the GPM samples kept of each GPU in MIG mode, by UUID.
	gpmMu   sync.Mutex
	gpmGPUs map[string]*gpmGPU

	// gpuMu guards devs and gpus, which a sample changes when a GPU lost at start comes back,
	// and driver, which reopen changes with them.
	gpuMu sync.RWMutex
	devs  []nvml.Device
	gpus  []agent.GPUInfo

	// reopenMu guards the initialisation of NVML again while the driver is away (reopen): away
	// is set from the first reading that found it away until NVML is initialised again and the
	// GPUs read; nextInit is when it is tried next, initWait the wait after that.
	reopenMu sync.Mutex
	away     bool
	nextInit time.Time
	initWait time.Duration
	reread   string // what the GPUs read by the last reopen are, for back's log; "" for none

	mu     sync.Mutex
	events nvml.EventSet // XID events; nil when the driver offers none
	xid    []uint64      // the last XID per GPU
	// failing marks the GPUs the last sample could not read; busy those whose reading was given
	// up after GPUTimeout while NVML still waits on them, not asked again until it returns.
	failing []bool
	busy    []bool
	// lost says why the last sample found a GPU lost (ERROR_GPU_IS_LOST, as after an XID 79) while
	// the agent runs; empty for one it read, or could not read for another reason.
	lost []string
}

// DefaultGPUTimeout is how long a sample waits for one GPU's reading. A healthy GPU answers in
// milliseconds; a wedged one (a GSP timeout, XID 119) holds each NVML call for tens of seconds or
// for good, and would otherwise hold up every other GPU's reading and the node's reports.
const DefaultGPUTimeout = 5 * time.Second

var _ agent.Devices = (*Devices)(nil)

// ErrNoGPU matches (errors.Is) the error Open returns when there is no NVIDIA driver or GPU; its
// message is one sentence saying which.
var ErrNoGPU = errors.New("no GPU")

type noGPU string

func (e noGPU) Error() string        { return string(e) }
func (e noGPU) Is(target error) bool { return target == ErrNoGPU }

func noGPUf(format string, args ...any) error { return noGPU(fmt.Sprintf(format, args...)) }

// System opens the machine's NVML library (libnvidia-ml.so.1, loaded here, not at start).
func System(log *slog.Logger) (*Devices, error) {
	lib := nvml.New()
	return open(lib, log, func() profileInfo { return driverProfiles(lib) })
}

// Open initializes lib and reads what does not change about its GPUs. Without a driver or a GPU it
// returns an error wrapping ErrNoGPU whose message says so in one sentence. MIG profiles' names
// are worked out from their memory (go-nvml's mocks give none); System and OpenFake read them.
func Open(lib nvml.Interface, log *slog.Logger) (*Devices, error) {
	return open(lib, log, nil)
}

// open is Open, with profiles, when not nil, giving what reads the GPU instance profiles' names
// once lib is initialized.
func open(lib nvml.Interface, log *slog.Logger, profiles func() profileInfo) (*Devices, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	switch r := lib.Init(); r {
	case nvml.SUCCESS:
	case nvml.ERROR_LIBRARY_NOT_FOUND:
		return nil, noGPUf("no NVIDIA driver library here (libnvidia-ml.so.1 was not found), so there are no GPUs to watch; on a GPU node install the NVIDIA driver, " +
			"and in a container run the agent with the NVIDIA container runtime (runtimeClassName: nvidia, as the DaemonSet says), which mounts the library, or try --fake dgxa100 for a demo")
	case nvml.ERROR_DRIVER_NOT_LOADED:
		return nil, noGPUf("the NVIDIA driver is installed but not loaded, so there are no GPUs to watch; load it (modprobe nvidia) or try --fake dgxa100 for a demo")
	case nvml.ERROR_LIB_RM_VERSION_MISMATCH:
		return nil, noGPUf("the NVIDIA driver's library (libnvidia-ml) and its loaded kernel module are of different versions, as after a driver upgrade without a reboot, so NVML cannot start; reboot the node (or unload and load the nvidia kernel modules) and start the agent again")
	case nvml.ERROR_NO_PERMISSION:
		return nil, noGPUf("NVML refused access to the GPUs (no permission on /dev/nvidia*); run the agent in a group that may open them")
	default:
		return nil, noGPUf("NVML did not start (%s), so there are no GPUs to watch", nvml.ErrorString(r))
	}
	d := &Devices{lib: lib, log: log}
	if profiles != nil {
		d.profiles = profiles()
	}
	fail := func(err error) (*Devices, error) {
		_ = lib.Shutdown()
		return nil, err
	}
	// A symbol the library lacks cannot be called (it would crash the agent): look first.
	d.memV2 = lib.Extensions().LookupSymbol("nvmlDeviceGetMemoryInfo_v2") == nil
	d.gpm = !slices.ContainsFunc(gpmSymbols, func(s string) bool { return lib.Extensions().LookupSymbol(s) != nil })
	if v, r := lib.SystemGetDriverVersion(); r == nvml.SUCCESS {
		d.driver = v
	}
	devs, gpus, err := d.readGPUs()
	if err != nil {
		return fail(err)
	}
	d.devs, d.gpus = devs, gpus
	d.xid = make([]uint64, len(devs))
	d.watchXIDs()
	return d, nil
}

// readGPUs counts the GPUs of the initialised library and reads what does not change about each
// (openGPU); one that cannot be read has a nil handle, and is logged. An error, wrapping ErrNoGPU
// and saying why in one sentence, where there is none or none can be read.
func (d *Devices) readGPUs() ([]nvml.Device, []agent.GPUInfo, error) {
	n, r := d.lib.DeviceGetCount()
	if r != nvml.SUCCESS {
		return nil, nil, noGPUf("NVML could not count the GPUs (%s)", nvml.ErrorString(r))
	}
	if n == 0 {
		return nil, nil, noGPUf("the NVIDIA driver is loaded but sees no GPU on this machine")
	}
	var devs []nvml.Device
	var gpus []agent.GPUInfo
	readable := 0
	for i := range n {
		dev, g := d.openGPU(i)
		if g.Lost != "" {
			dev = nil
			d.log.Error("a GPU cannot be read; the agent goes on with the others and tries it again at every sample",
				"gpu", i, "uuid", g.UUID, "bus_id", g.BusID, "err", g.Lost)
		} else {
			readable++
		}
		devs = append(devs, dev)
		gpus = append(gpus, g)
	}
	if readable == 0 {
		return nil, nil, noGPUf("the NVIDIA driver counts %d GPUs but none can be read (GPU 0: %s)", n, gpus[0].Lost)
	}
	return devs, gpus, nil
}

// The waits between two initialisations of NVML while the driver is away (reopen): the first,
// doubled after each that fails, up to the longest.
const (
	firstInitWait   = 5 * time.Second
	longestInitWait = 2 * time.Minute
)

// reopen initialises NVML again after a reading found the driver away (unloaded, or NVML no
// longer initialised: cause), so that a driver unloaded and loaded again while the agent runs,
// which may leave its handles invalid for good, is read again without a restart. It shuts NVML
// down, initialises it and reads the GPUs afresh (their number and UUIDs may differ from
// before), at once on the first reading of an outage and then with a backoff (firstInitWait,
// doubling up to longestInitWait), not at every reading. The log says once that the driver is
// away, and back says once that it is back. It reports whether the GPUs were read again.
func (d *Devices) reopen(cause driverError) bool {
	d.reopenMu.Lock()
	defer d.reopenMu.Unlock()
	now := time.Now()
	if d.Now != nil {
		now = d.Now()
	}
	if !d.away {
		d.away, d.nextInit, d.initWait = true, now, firstInitWait
		d.log.Warn("the NVIDIA driver is away (unloaded or reloaded), so no GPU can be read; the agent initialises NVML again, "+
			"at once and then with a backoff of up to "+longestInitWait.String()+", and reads the GPUs afresh once it is back", "nvml", nvml.ErrorString(cause.r))
	}
	if now.Before(d.nextInit) {
		return false
	}
	d.nextInit = now.Add(d.initWait)
	d.initWait = min(2*d.initWait, longestInitWait)
	d.release()
	_ = d.lib.Shutdown() // UNINITIALIZED where the last try's Init failed
	if r := d.lib.Init(); r != nvml.SUCCESS {
		return false // still away: tried again after the wait
	}
	devs, gpus, err := d.readGPUs()
	if err != nil {
		d.log.Debug("NVML initialised again, but the GPUs cannot be read yet", "err", err)
		return false
	}
	_, before := d.handles()
	same := len(before) == len(gpus)
	for i := 0; same && i < len(gpus); i++ {
		same = before[i].UUID == gpus[i].UUID
	}
	d.gpuMu.Lock()
	d.devs, d.gpus = devs, gpus
	if v, r := d.lib.SystemGetDriverVersion(); r == nvml.SUCCESS {
		d.driver = v // a driver loaded again may be another version
	}
	d.gpuMu.Unlock()
	d.mu.Lock()
	d.xid = make([]uint64, len(devs))
	d.failing, d.busy, d.lost = nil, nil, nil
	d.mu.Unlock()
	d.watchXIDs()
	d.reread = "the same GPUs as before"
	if !same {
		d.reread = fmt.Sprintf("%d GPUs, where there were %d or others before", len(gpus), len(before))
	}
	return true
}

// back ends an outage of the driver (reopen) at a reading that worked, saying so once.
func (d *Devices) back() {
	d.reopenMu.Lock()
	defer d.reopenMu.Unlock()
	if !d.away {
		return
	}
	d.away = false
	how := "NVML's handles work again"
	if d.reread != "" {
		how = "NVML was initialised again and the GPUs read afresh (" + d.reread + ")"
	}
	d.reread = ""
	d.log.Info("the NVIDIA driver is back: " + how + "; readings resume")
}

// retryLost opens again every GPU lost at start; one that now reads (a transient NVML error, or a
// GPU reset) takes its place by its index, with its XID events, and the log says so. It runs at
// every sample: opening a GPU costs a few NVML calls, fewer than sampling one, and a GPU that came
// back is in the next report.
func (d *Devices) retryLost() {
	d.gpuMu.RLock()
	var lost []int
	for i, dev := range d.devs {
		if dev == nil {
			lost = append(lost, i)
		}
	}
	d.gpuMu.RUnlock()
	for _, i := range lost {
		var dev nvml.Device
		var g agent.GPUInfo
		if d.within(i, func() { dev, g = d.openGPU(i) }) != nil || g.Lost != "" {
			continue // still lost, or wedged: tried again once NVML returns
		}
		d.gpuMu.Lock()
		was := d.gpus[i].Lost
		d.devs[i], d.gpus[i] = dev, g
		d.gpuMu.Unlock()
		d.mu.Lock()
		if d.events != nil {
			if r := dev.RegisterEvents(nvml.EventTypeXidCriticalError, d.events); r != nvml.SUCCESS {
				d.log.Info("XID errors are not available for a GPU", "gpu", i, "nvml", nvml.ErrorString(r))
			}
		}
		d.mu.Unlock()
		d.log.Info("a GPU that could not be read at start can be read now; it is back in the reports, the metrics and the topology",
			"gpu", i, "uuid", g.UUID, "bus_id", g.BusID, "was", was)
	}
}

// handles is a snapshot of devs and gpus.
func (d *Devices) handles() ([]nvml.Device, []agent.GPUInfo) {
	d.gpuMu.RLock()
	defer d.gpuMu.RUnlock()
	return slices.Clone(d.devs), slices.Clone(d.gpus)
}

// openGPU reads what does not change about GPU i. Lost is set when there is no handle, no UUID
// (the report's name for the GPU) or no minor number (its /dev/nvidiaN), or when any call says the
// GPU is lost; other calls that fail leave their field empty.
func (d *Devices) openGPU(i int) (nvml.Device, agent.GPUInfo) {
	g := agent.GPUInfo{Index: i, Minor: -1}
	dev, r := d.lib.DeviceGetHandleByIndex(i)
	if r != nvml.SUCCESS {
		g.Lost = "no handle: " + nvml.ErrorString(r)
		return nil, g
	}
	lost := func(call string, r nvml.Return) {
		if g.Lost == "" {
			g.Lost = call + ": " + nvml.ErrorString(r)
		}
	}
	if s, r := dev.GetUUID(); r == nvml.SUCCESS {
		g.UUID = s
	} else {
		lost("UUID", r)
	}
	if p, r := dev.GetPciInfo(); r == nvml.SUCCESS {
		g.BusID = busID(p)
	} else if r == nvml.ERROR_GPU_IS_LOST {
		lost("PCI info", r)
	}
	if s, r := dev.GetName(); r == nvml.SUCCESS {
		g.Name = s
	} else if r == nvml.ERROR_GPU_IS_LOST {
		lost("name", r)
	}
	if m, r := dev.GetMinorNumber(); r == nvml.SUCCESS {
		g.Minor = m
	} else {
		lost("minor number", r)
	}
	if m, r := dev.GetMemoryInfo(); r == nvml.SUCCESS {
		g.MemTotal = m.Total
	} else if r == nvml.ERROR_GPU_IS_LOST {
		lost("memory", r)
	}
	if g.Lost == "" {
		// NOT_SUPPORTED: a GPU without MIG.
		if cur, _, r := dev.GetMigMode(); r == nvml.SUCCESS && cur == nvml.DEVICE_MIG_ENABLE {
			g.MIG = true
			g.MIGDevices = d.migDevices(i, dev)
		}
	}
	return dev, g
}

// migDevices lists the MIG devices of GPU i, which is in MIG mode; one NVML cannot read is logged
// and left out.
func (d *Devices) migDevices(i int, dev nvml.Device) []agent.MIGDevice {
	_, out, err := listMIG(dev, d.profiles, func(j int, r nvml.Return) {
		d.log.Warn("a MIG device cannot be read", "gpu", i, "mig", j, "nvml", nvml.ErrorString(r))
	})
	if err != nil {
		d.log.Warn("a GPU is in MIG mode but NVML does not say how many MIG devices it may have", "gpu", i, "err", err)
		return nil
	}
	if len(out) == 0 {
		d.log.Warn("a GPU is in MIG mode but has no MIG device; create its GPU and compute instances or turn MIG off", "gpu", i)
	}
	return out
}

// listMIG lists the MIG devices of a GPU in MIG mode, with their handles, as NVML has them now,
// each with its profile's name where profiles gives it; one it cannot read is left out and passed
// to skipped with its MIG index.
func listMIG(dev nvml.Device, profiles profileInfo, skipped func(j int, r nvml.Return)) ([]nvml.Device, []agent.MIGDevice, error) {
	most, r := dev.GetMaxMigDeviceCount()
	if r != nvml.SUCCESS {
		return nil, nil, fmt.Errorf("nvml: MIG device count: %s", nvml.ErrorString(r))
	}
	var handles []nvml.Device
	var out []agent.MIGDevice
	var gpuMem uint64 // the GPU's memory, for the profiles' names
	if mem, r := dev.GetMemoryInfo(); r == nvml.SUCCESS {
		gpuMem = mem.Total
	}
	var named []nvml.GpuInstanceProfileInfo_v3 // the GPU's profiles, read at the first MIG device
	read := false
	for j := range most {
		mig, r := dev.GetMigDeviceHandleByIndex(j)
		if r == nvml.ERROR_NOT_FOUND {
			continue // no MIG device at this index
		}
		if r != nvml.SUCCESS {
			skipped(j, r)
			continue
		}
		var m agent.MIGDevice
		a, r1 := mig.GetAttributes()
		gi, r2 := mig.GetGpuInstanceId()
		ci, r3 := mig.GetComputeInstanceId()
		if r := firstError(r1, r2, r3); r != nvml.SUCCESS {
			skipped(j, r)
			continue
		}
		m.GI, m.CI, m.Slices, m.MemMiB, m.GPUMemTotal = gi, ci, int(a.GpuInstanceSliceCount), a.MemorySizeMB, gpuMem
		if !read {
			named, read = namedProfiles(dev, profiles), true
		}
		m.Name = profileName(a, named)
		if u, r := mig.GetUUID(); r == nvml.SUCCESS {
			m.UUID = u
		}
		handles = append(handles, mig)
		out = append(out, m)
	}
	return handles, out, nil
}

// sampleMIG reads the MIG devices of a GPU in MIG mode, each through its own handle: memory, its
// processes, and utilization where NVML gives one (on the A100 and H100 it says NOT_SUPPORTED;
// migActivity then gives it from GPM where the GPU has it). A MIG device without a UUID, or whose processes cannot be read, is left out;
// all says whether none was, and procs is every process read, for the GPU's own list.
func (d *Devices) sampleMIG(dev nvml.Device) (out []report.MIGDevice, procs []nvml.ProcessInfo, all bool) {
	all = true
	handles, infos, err := listMIG(dev, d.profiles, func(int, nvml.Return) { all = false })
	if err != nil {
		return nil, nil, false
	}
	for k, h := range handles {
		info := infos[k]
		ps, r := runningProcesses(h)
		if info.UUID == "" || (r != nvml.SUCCESS && r != nvml.ERROR_NOT_FOUND) {
			all = false
			continue
		}
		m := report.MIGDevice{UUID: info.UUID, GI: info.GI, CI: info.CI, Profile: info.Profile(), MemTotal: info.MemMiB << 20}
		if mem, r := d.memoryInfo(h); r == nvml.SUCCESS {
			used := mem.used
			m.MemUsed, m.MemReserved, m.MemTotal = &used, mem.reserved, mem.total
		}
		if u, r := h.GetUtilizationRates(); r == nvml.SUCCESS {
			v := float64(u.Gpu)
			m.Util = &v
		}
		for _, p := range ps {
			m.Processes = append(m.Processes, report.Process{PID: p.Pid, MemUsed: processMemory(p)})
		}
		procs = append(procs, ps...)
		out = append(out, m)
	}
	return out, procs, all
}

// profileInfo reads a GPU's GPU instance profile (an NVML_GPU_INSTANCE_PROFILE_* index) with its
// name, as NVML's nvmlDeviceGetGpuInstanceProfileInfoV does.
type profileInfo func(dev nvml.Device, profile int) (nvml.GpuInstanceProfileInfo_v3, nvml.Return)

// driverProfiles reads the GPU instance profiles through the driver: version 3 of the profile info,
// else version 2, both with the profile's name. nil where the library lacks the call (drivers before
// R470), which go-nvml cannot call without it.
func driverProfiles(lib nvml.Interface) profileInfo {
	if lib.Extensions().LookupSymbol("nvmlDeviceGetGpuInstanceProfileInfoV") != nil {
		return nil
	}
	return func(dev nvml.Device, profile int) (nvml.GpuInstanceProfileInfo_v3, nvml.Return) {
		h := dev.GetGpuInstanceProfileInfoV(profile)
		v3, r := h.V3()
		if r == nvml.SUCCESS || r == nvml.ERROR_NOT_SUPPORTED {
			return v3, r
		}
		// A driver without version 3 refuses it (ARGUMENT_VERSION_MISMATCH or INVALID_ARGUMENT).
		v2, r := h.V2()
		return nvml.GpuInstanceProfileInfo_v3{Id: v2.Id, SliceCount: v2.SliceCount, InstanceCount: v2.InstanceCount,
			MultiprocessorCount: v2.MultiprocessorCount, CopyEngineCount: v2.CopyEngineCount, DecoderCount: v2.DecoderCount,
			EncoderCount: v2.EncoderCount, JpegCount: v2.JpegCount, OfaCount: v2.OfaCount, MemorySizeMB: v2.MemorySizeMB,
			Name: v2.Name}, r
	}
}

// namedProfiles are the GPU instance profiles of a GPU in MIG mode that the driver names; none
// where it names none (an older driver says NOT_SUPPORTED).
func namedProfiles(dev nvml.Device, profiles profileInfo) []nvml.GpuInstanceProfileInfo_v3 {
	if profiles == nil {
		return nil
	}
	var out []nvml.GpuInstanceProfileInfo_v3
	for p := range nvml.GPU_INSTANCE_PROFILE_COUNT {
		if info, r := profiles(dev, p); r == nvml.SUCCESS && driverName(info) != "" {
			out = append(out, info)
		}
	}
	return out
}

// profileNameRe is a profile's name as NVML gives it after "MIG ": "3g.40gb", "1g.10gb+me".
var profileNameRe = regexp.MustCompile(`^[0-9]+g\.[0-9]+gb[a-z0-9.+-]*$`)

// driverName is the name NVML gives a profile, without nvidia-smi's "MIG " in front; "" for
// none, or one that is not a profile's name.
func driverName(info nvml.GpuInstanceProfileInfo_v3) string {
	var b []byte
	for _, c := range info.Name {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	n := strings.TrimPrefix(strings.TrimSpace(string(b)), "MIG ")
	if !profileNameRe.MatchString(n) {
		return ""
	}
	return n
}

// profileName is the driver's name for the profile of a MIG device with attributes a: the one
// profile of its slices and memory, or where several have them (1g.10gb and 1g.10gb+me, which
// has the media engines), the one with its engines. "" where none or several are.
func profileName(a nvml.DeviceAttributes, profiles []nvml.GpuInstanceProfileInfo_v3) string {
	var sized, engines []string
	for _, p := range profiles {
		if p.SliceCount != a.GpuInstanceSliceCount || p.MemorySizeMB != a.MemorySizeMB {
			continue
		}
		n := driverName(p)
		if !slices.Contains(sized, n) {
			sized = append(sized, n)
		}
		if p.DecoderCount == a.SharedDecoderCount && p.EncoderCount == a.SharedEncoderCount &&
			p.JpegCount == a.SharedJpegCount && p.OfaCount == a.SharedOfaCount && !slices.Contains(engines, n) {
			engines = append(engines, n)
		}
	}
	switch {
	case len(sized) == 1:
		return sized[0]
	case len(engines) == 1:
		return engines[0]
	}
	return ""
}

func firstError(rs ...nvml.Return) nvml.Return {
	for _, r := range rs {
		if r != nvml.SUCCESS {
			return r
		}
	}
	return nvml.SUCCESS
}

// watchXIDs registers for XID error events where the driver offers them.
func (d *Devices) watchXIDs() {
	set, r := d.lib.EventSetCreate()
	if r != nvml.SUCCESS {
		d.log.Info("XID errors are not available", "nvml", nvml.ErrorString(r))
		return
	}
	devs, gpus := d.handles()
	registered := 0
	for i, dev := range devs {
		if dev == nil {
			continue
		}
		if r := dev.RegisterEvents(nvml.EventTypeXidCriticalError, set); r != nvml.SUCCESS {
			d.log.Info("XID errors are not available for a GPU", "gpu", gpus[i].Index, "nvml", nvml.ErrorString(r))
			continue
		}
		registered++
	}
	if registered == 0 {
		_ = set.Free()
		return
	}
	d.mu.Lock()
	d.events = set
	d.mu.Unlock()
}

// Driver is the driver version.
func (d *Devices) Driver() string {
	d.gpuMu.RLock()
	defer d.gpuMu.RUnlock()
	return d.driver
}

// GPUs lists every GPU the driver counts, by index; those lost at start and not read since are
// marked.
func (d *Devices) GPUs() []agent.GPUInfo {
	_, gpus := d.handles()
	return gpus
}

// Sample reads every GPU now. Processes carry their PIDs; the agent finds their jobs. A GPU that
// is lost (fell off the bus) or whose processes cannot be read is left out of this sample, and the
// log says so when that starts and when it ends: the other GPUs are still reported, and the
// service, missing a GPU of the node, judges none of the node's leases from the sample. A GPU lost
// at start is tried again first, and sampled if it now reads. Where the driver is away (unloaded
// or reloaded), NVML is initialised again (reopen) and, once that works, the GPUs read afresh are
// sampled.
func (d *Devices) Sample(ctx context.Context) ([]report.GPU, error) {
	out, err := d.sample(ctx)
	var down driverError
	if errors.As(err, &down) && down.r != nvml.ERROR_LIB_RM_VERSION_MISMATCH && d.reopen(down) {
		out, err = d.sample(ctx)
	}
	if err == nil {
		d.back()
	}
	return out, err
}

// sample is Sample with the handles NVML gave last.
func (d *Devices) sample(_ context.Context) ([]report.GPU, error) {
	d.retryLost()
	devs, gpus := d.handles()
	out := make([]report.GPU, 0, len(devs))
	errs := make([]error, len(devs))
	var down driverError
	allDown := true // every GPU read answered that the driver is not there
	for i, dev := range devs {
		if dev == nil {
			continue // lost at start
		}
		g, err := d.sampleWithin(i, gpus[i], dev)
		errs[i] = err
		if !errors.As(err, &down) {
			allDown = false
		}
		if err != nil {
			continue
		}
		out = append(out, g)
	}
	if len(out) == 0 && allDown && down.r != 0 {
		// The driver is away (unloaded for an upgrade), not each GPU: said once, by the caller,
		// in one sentence; the GPUs' own state stays as it was.
		return nil, down
	}
	for i, err := range errs {
		if devs[i] != nil {
			d.noteFailure(i, gpus[i], err)
		}
	}
	if len(out) == 0 && len(devs) > 0 {
		return nil, fmt.Errorf("nvml: none of the %d GPUs could be read", len(devs))
	}
	// d.xid is by NVML index, as out's Index is.
	d.drainXIDs()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.events != nil {
		for k := range out {
			v := d.xid[out[k].Index]
			out[k].XID = &v
		}
	}
	return out, nil
}

// sampleWithin is sampleGPU, given up after GPUTimeout (within).
func (d *Devices) sampleWithin(i int, info agent.GPUInfo, dev nvml.Device) (report.GPU, error) {
	var g report.GPU
	var err error
	if werr := d.within(i, func() { g, err = d.sampleGPU(info, dev) }); werr != nil {
		return report.GPU{}, werr
	}
	return g, err
}

// within runs call, NVML calls to GPU i, and waits for it at most GPUTimeout. NVML cannot be
// interrupted: a call not done by then goes on, GPU i is marked busy until it returns (what it
// read is dropped), and neither a sample nor the topology asks GPU i anything meanwhile. The
// error says which: GPU i is still busy, or did not answer in time; nil when call returned.
func (d *Devices) within(i int, call func()) error {
	if d.isBusy(i) {
		return fmt.Errorf("nvml: GPU %d has not answered what it was asked earlier; NVML still waits on it", i)
	}
	timeout := d.GPUTimeout
	if timeout <= 0 {
		timeout = DefaultGPUTimeout
	}
	done := make(chan struct{})
	go func() {
		call()
		close(done)
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-done:
		return nil
	case <-t.C:
	}
	d.setBusy(i, true)
	go func() {
		<-done
		d.setBusy(i, false)
	}()
	return fmt.Errorf("nvml: GPU %d did not answer within %s (a wedged GPU, e.g. XID 119); it is left out until it does", i, timeout)
}

// lostReason is why the last sample found GPU i lost; empty when it did not.
func (d *Devices) lostReason(i int) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if i < len(d.lost) {
		return d.lost[i]
	}
	return ""
}

func (d *Devices) isBusy(i int) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return i < len(d.busy) && d.busy[i]
}

func (d *Devices) setBusy(i int, busy bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.busy == nil {
		d.busy = make([]bool, len(d.xid))
	}
	if i < len(d.busy) {
		d.busy[i] = busy
	}
}

// sampleGPU reads the GPU of info; an error when it is lost or its processes cannot be read.
func (d *Devices) sampleGPU(info agent.GPUInfo, dev nvml.Device) (report.GPU, error) {
	i := info.Index
	g := report.GPU{Index: i, UUID: info.UUID, Name: info.Name, MemTotal: info.MemTotal}
	lost := func(r nvml.Return) bool { return r == nvml.ERROR_GPU_IS_LOST }
	u, r := dev.GetUtilizationRates()
	if driverAway(r) {
		return g, driverError{r: r}
	}
	if lost(r) {
		return g, lostError{gpu: i, why: "utilization: " + nvml.ErrorString(r)}
	}
	if r == nvml.SUCCESS {
		v := float64(u.Gpu)
		g.Util = &v
	}
	if m, r := d.memoryInfo(dev); r == nvml.SUCCESS {
		g.MemUsed, g.MemReserved, g.MemTotal = m.used, m.reserved, m.total
	} else if lost(r) {
		return g, lostError{gpu: i, why: "memory: " + nvml.ErrorString(r)}
	} else {
		g.MemUnread = true
	}
	if p, r := dev.GetPowerUsage(); r == nvml.SUCCESS {
		v := float64(p) / 1000
		g.PowerW = &v
	}
	if t, r := dev.GetTemperature(nvml.TEMPERATURE_GPU); r == nvml.SUCCESS {
		v := float64(t)
		g.TempC = &v
	}
	if e, r := dev.GetTotalEccErrors(nvml.MEMORY_ERROR_TYPE_UNCORRECTED, nvml.VOLATILE_ECC); r == nvml.SUCCESS {
		g.ECCUncorrected = &e
	}
	procs, r := runningProcesses(dev)
	// MIG mode is read at every sample, not only at start: it may be turned on or off while the
	// agent runs (an H100 needs no GPU reset for it). When NVML does not say, the last known mode
	// holds.
	mig := info.MIG
	if cur, _, r := dev.GetMigMode(); r == nvml.SUCCESS {
		mig = cur == nvml.DEVICE_MIG_ENABLE
	} else if r == nvml.ERROR_NOT_SUPPORTED {
		mig = false
	}
	if !mig {
		d.gpmForget(info.UUID)
	}
	if mig {
		var migProcs []nvml.ProcessInfo
		var all bool
		g.MIG, migProcs, all = d.sampleMIG(dev)
		d.migActivity(info.UUID, i, dev, g.MIG)
		// In MIG mode NVML lists a whole GPU's processes only to a privileged caller; the MIG
		// devices list their own to anyone, and together they are the GPU's. Where the whole
		// GPU's list is refused (NO_PERMISSION, NOT_SUPPORTED or another answer) and a MIG device
		// did not list its own, the processes on that device are nowhere: the GPU's processes
		// cannot be listed, and its lease would look as if it ran none.
		switch {
		case r == nvml.SUCCESS || r == nvml.ERROR_GPU_IS_LOST:
		case all:
			procs, r = migProcs, nvml.SUCCESS
		default:
			return g, fmt.Errorf("nvml: processes on GPU %d: NVML does not list the GPU's (%s), and not every MIG device of it listed its own", i, nvml.ErrorString(r))
		}
	}
	if driverAway(r) {
		return g, driverError{r: r}
	}
	if lost(r) {
		return g, lostError{gpu: i, why: "processes: " + nvml.ErrorString(r)}
	}
	// NOT_SUPPORTED does not say the GPU runs nothing: its processes cannot be listed, as when
	// the call fails, and a lease's work on it would be nobody's.
	if r != nvml.SUCCESS && r != nvml.ERROR_NOT_FOUND {
		return g, fmt.Errorf("nvml: processes on GPU %d: %s", i, nvml.ErrorString(r))
	}
	for _, p := range procs {
		g.Processes = append(g.Processes, report.Process{PID: p.Pid, MemUsed: processMemory(p)})
	}
	return g, nil
}

// memory is a GPU's or MIG device's framebuffer, in bytes.
type memory struct{ used, reserved, total uint64 }

// memoryInfo reads dev's memory as nvidia-smi (R510 and later) and dcgm-exporter show it: in
// use, apart from what the driver reserves for itself (hundreds of MiB on an idle GPU, which
// no process holds). Where the library or the GPU lacks that version of the call, the first
// version is read, which counts the reserved memory as in use.
func (d *Devices) memoryInfo(dev nvml.Device) (memory, nvml.Return) {
	if d.memV2 {
		m, r := dev.GetMemoryInfo_v2()
		if r == nvml.SUCCESS {
			return memory{used: m.Used, reserved: m.Reserved, total: m.Total}, r
		}
		if r == nvml.ERROR_GPU_IS_LOST {
			return memory{}, r
		}
	}
	m, r := dev.GetMemoryInfo()
	return memory{used: m.Used, total: m.Total}, r
}

// runningProcesses lists the processes that run on dev (a GPU or a MIG device), each once: its
// compute processes, the clients of an MPS server on it, and its graphics processes. NVML lists
// them apart: on a GPU shared through MPS the compute list holds only the MPS server (a process
// of the MPS daemon, not of the jobs or pods whose work it runs), and rendering (OpenGL, Vulkan,
// EGL) is in no compute list, so that work would otherwise read as a GPU busy with no job's
// process, or as its lease with no process at all. The answer is the compute list's; the other
// two add what they list, and nothing where the GPU or driver does not give them (NOT_SUPPORTED,
// or a driver that predates the call); a GPU that is lost is said lost.
func runningProcesses(dev nvml.Device) ([]nvml.ProcessInfo, nvml.Return) {
	procs, r := dev.GetComputeRunningProcesses()
	if r != nvml.SUCCESS && r != nvml.ERROR_NOT_FOUND {
		return procs, r
	}
	for _, list := range []func() ([]nvml.ProcessInfo, nvml.Return){dev.GetMPSComputeRunningProcesses, dev.GetGraphicsRunningProcesses} {
		more, r2 := list()
		if r2 == nvml.ERROR_GPU_IS_LOST {
			return nil, r2
		}
		if r2 != nvml.SUCCESS {
			continue
		}
		for _, p := range more {
			// A process with a compute and a graphics context is one process; NVML gives each
			// list all of its memory.
			k := slices.IndexFunc(procs, func(q nvml.ProcessInfo) bool { return q.Pid == p.Pid })
			switch {
			case k < 0:
				procs = append(procs, p)
			case processMemory(procs[k]) < processMemory(p):
				procs[k].UsedGpuMemory = p.UsedGpuMemory
			}
		}
	}
	return procs, r
}

// processMemory is a process's GPU memory in bytes; 0 (left out of the report) when NVML does not
// give it: NVML_VALUE_NOT_AVAILABLE, nvidia-smi's "N/A", which read as a number is 16 EiB.
func processMemory(p nvml.ProcessInfo) uint64 {
	if p.UsedGpuMemory == math.MaxUint64 {
		return 0
	}
	return p.UsedGpuMemory
}

// driverAway says whether NVML answered that the driver is not there for it: unloaded (as while
// it is upgraded), or its kernel module no longer of the library's version (an upgrade done while
// the agent runs). It is the node's driver, not the GPU, that answers so.
func driverAway(r nvml.Return) bool {
	return r == nvml.ERROR_DRIVER_NOT_LOADED || r == nvml.ERROR_UNINITIALIZED || r == nvml.ERROR_LIB_RM_VERSION_MISMATCH
}

// driverError is a reading NVML refused because the driver is away (driverAway); its message is
// one sentence saying so and what to do.
type driverError struct{ r nvml.Return }

// Is makes a kernel module of another version than the library (which this process cannot
// unload) an agent.ErrRestart.
func (e driverError) Is(target error) bool {
	return target == agent.ErrRestart && e.r == nvml.ERROR_LIB_RM_VERSION_MISMATCH
}

func (e driverError) Error() string {
	if e.r == nvml.ERROR_LIB_RM_VERSION_MISMATCH {
		return "nvml: the NVIDIA driver's kernel module is no longer of the version of the library the agent loaded, as after a driver upgrade, " +
			"so no GPU can be read until the agent loads the new library; it ends so that its service manager (systemd's Restart=on-failure, the DaemonSet) starts it again, " +
			"and if it then says the two still differ, reboot the node"
	}
	return "nvml: the NVIDIA driver is not loaded (as while it is upgraded or reloaded), so no GPU can be read; the agent reads them again once it is loaded (modprobe nvidia)"
}

// lostError is a GPU a sample found lost (ERROR_GPU_IS_LOST); why is the call and NVML's word,
// as a GPU lost at start has it (agent.GPUInfo.Lost).
type lostError struct {
	gpu int
	why string
}

func (e lostError) Error() string { return fmt.Sprintf("nvml: GPU %d: %s", e.gpu, e.why) }

// noteFailure logs when GPU i (info) starts or stops failing to be read, and keeps why it is lost
// where the sample found it so (for the topology).
func (d *Devices) noteFailure(i int, info agent.GPUInfo, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.failing == nil {
		d.failing = make([]bool, len(d.xid))
	}
	if d.lost == nil {
		d.lost = make([]string, len(d.xid))
	}
	var lost lostError
	if errors.As(err, &lost) {
		d.lost[i] = lost.why
	} else {
		d.lost[i] = ""
	}
	switch {
	case err != nil && !d.failing[i]:
		d.log.Error("a GPU cannot be read; it is left out of the reports until it can", "gpu", info.Index, "uuid", info.UUID, "err", err)
	case err == nil && d.failing[i]:
		d.log.Info("a GPU can be read again", "gpu", info.Index, "uuid", info.UUID)
	}
	d.failing[i] = err != nil
}

// drainXIDs takes every XID event waiting, without blocking.
func (d *Devices) drainXIDs() {
	devs, gpus := d.handles()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.events == nil {
		return
	}
	for range 1000 {
		e, r := d.events.Wait(0)
		if r != nvml.SUCCESS {
			return // ERROR_TIMEOUT: nothing waiting
		}
		for i, dev := range devs {
			if dev != nil && (e.Device == dev || sameUUID(e.Device, gpus[i].UUID)) {
				d.xid[gpus[i].Index] = e.EventData
				d.log.Warn("XID error", "gpu", gpus[i].Index, "uuid", gpus[i].UUID, "xid", e.EventData)
				break
			}
		}
	}
}

func sameUUID(dev nvml.Device, uuid string) bool {
	if dev == nil || uuid == "" {
		return false
	}
	u, r := dev.GetUUID()
	return r == nvml.SUCCESS && u == uuid
}

// Topology reads how the GPUs are connected: NVLinks (direct, or through NVSwitches), the PCIe
// common ancestor of every pair, NUMA node and CPU affinity.
func (d *Devices) Topology(_ context.Context) (report.Topology, error) {
	// Every slice here is by NVML index (devs and gpus are); a GPU lost at start keeps its
	// place, marked, with no links, so no other GPU's number moves.
	devs, gpus := d.handles()
	n := len(devs)
	// A GPU whose reading NVML still waits on (sampleWithin) is asked nothing: it is read as one
	// with no links, as a GPU that fails every call is (not as lost at start). One the last sample
	// found lost while the agent runs is marked lost, as one lost at start is, with no links.
	lostNow := make([]string, n)
	for i := range devs {
		if devs[i] != nil && d.isBusy(i) {
			devs[i] = nil
		}
		if why := d.lostReason(i); devs[i] != nil && why != "" {
			devs[i], lostNow[i] = nil, why
		}
	}
	byBus := map[string]int{}
	for i, g := range gpus {
		if g.BusID != "" && g.Lost == "" && devs[i] != nil {
			byBus[normBus(g.BusID)] = g.Index
		}
	}
	t := report.Topology{GPUs: make([]report.TopologyGPU, n)}
	direct := make([][]int, n)
	switchLinks := make([]int, n)
	for i, dev := range devs {
		g := gpus[i]
		tg := report.TopologyGPU{Index: g.Index, UUID: g.UUID, BusID: g.BusID, Minor: g.Minor, NVLinks: make([]int, n), PCIe: make([]string, n)}
		direct[i] = make([]int, n)
		if dev == nil {
			tg.Lost = g.Lost
			if tg.Lost == "" {
				tg.Lost = lostNow[i]
			}
			tg.PCIe[i] = "X"
			t.GPUs[i] = tg
			continue
		}
		numa, r := dev.GetNumaNodeId()
		if driverAway(r) {
			// Every call would answer so: no links, no NUMA node, which is not the node's
			// topology. The last one read stands.
			return report.Topology{}, driverError{r: r}
		}
		if r == nvml.SUCCESS && numa >= 0 {
			tg.NUMA = &numa
		}
		// go-nvml sizes the CPU set as (numCPUs-1)/8+1 words of 64 bits.
		if words, r := dev.GetCpuAffinity(maxCPUs / 8); r == nvml.SUCCESS {
			tg.CPUs = agent.FormatCPUs(cpusOf(words))
		}
		for l := range nvml.NVLINK_MAX_LINKS {
			st, r := dev.GetNvLinkState(l)
			if r != nvml.SUCCESS {
				break // NOT_SUPPORTED: no (more) links
			}
			if st != nvml.FEATURE_ENABLED {
				continue
			}
			remote, r := dev.GetNvLinkRemotePciInfo(l)
			if r != nvml.SUCCESS {
				continue
			}
			if peer, ok := byBus[normBus(busID(remote))]; ok && peer != i {
				direct[i][peer]++
				continue
			}
			if kind, r := dev.GetNvLinkRemoteDeviceType(l); r == nvml.SUCCESS && kind == nvml.NVLINK_DEVICE_TYPE_GPU {
				continue // a GPU that is not ours (another partition): no path for our jobs
			}
			switchLinks[i]++
		}
		for j := range n {
			if j == i {
				tg.PCIe[j] = "X"
				continue
			}
			if devs[j] == nil {
				continue
			}
			if lvl, r := dev.GetTopologyCommonAncestor(devs[j]); r == nvml.SUCCESS {
				tg.PCIe[j] = pcieLevel(lvl)
			}
		}
		t.GPUs[i] = tg
	}
	for i := range n {
		for j := range n {
			if i == j {
				continue
			}
			links := direct[i][j]
			if links == 0 && switchLinks[i] > 0 && switchLinks[j] > 0 {
				links = min(switchLinks[i], switchLinks[j]) // all GPUs on an NVSwitch fabric reach each other
			}
			t.GPUs[i].NVLinks[j] = links
		}
	}
	return t, nil
}

// release frees what the agent holds of NVML (the event set, the GPM samples) before NVML is shut
// down, at Close or to initialise it again.
func (d *Devices) release() {
	d.mu.Lock()
	if d.events != nil {
		_ = d.events.Free()
		d.events = nil
	}
	d.mu.Unlock()
	d.gpmFreeAll()
}

// Close stops NVML.
func (d *Devices) Close() error {
	d.release()
	// UNINITIALIZED: the driver is away, and the last try to initialise NVML again failed.
	if r := d.lib.Shutdown(); r != nvml.SUCCESS && r != nvml.ERROR_UNINITIALIZED {
		return fmt.Errorf("nvml: shutdown: %s", nvml.ErrorString(r))
	}
	return nil
}

func pcieLevel(l nvml.GpuTopologyLevel) string {
	switch l {
	case nvml.TOPOLOGY_INTERNAL:
		return "X"
	case nvml.TOPOLOGY_SINGLE:
		return "PIX"
	case nvml.TOPOLOGY_MULTIPLE:
		return "PXB"
	case nvml.TOPOLOGY_HOSTBRIDGE:
		return "PHB"
	case nvml.TOPOLOGY_NODE:
		return "NODE"
	case nvml.TOPOLOGY_SYSTEM:
		return "SYS"
	}
	return ""
}

// cpusOf lists the CPUs set in an affinity mask of 64-bit words.
func cpusOf(words []uint) []int {
	var out []int
	for w, bits := range words {
		for b := range 64 {
			if bits&(1<<uint(b)) != 0 {
				out = append(out, w*64+b)
			}
		}
	}
	return out
}

func busID(p nvml.PciInfo) string {
	b := make([]byte, 0, len(p.BusId))
	for _, c := range p.BusId {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	return string(b)
}

// normBus makes "00000000:3B:00.0" and "0000:3b:00.0" compare equal.
func normBus(s string) string {
	s = strings.ToLower(s)
	if i := strings.IndexByte(s, ':'); i >= 0 {
		dom := strings.TrimLeft(s[:i], "0")
		s = dom + s[i:]
	}
	return s
}
