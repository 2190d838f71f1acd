//go:build cgo

package nvml

import (
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/acme/quartermaster/agent/report"
)

// NVML gives no utilization for a GPU in MIG mode nor for its MIG devices. On Hopper and later
// GPUs (H100, H200, GH200, B200) its GPM (GPU performance monitoring) gives the activity of each GPU
// instance between two samples of it, as dcgm-exporter's DCGM_FI_PROF_GR_ENGINE_ACTIVE does: the
// agent keeps each GPU instance's last sample and reports, at every reading, the instance's
// graphics engine activity since the one before (the share of the time a kernel ran on it, as
// nvidia-smi's utilization is for a whole GPU; not how many of its SMs were busy). The first
// reading of an instance, after start or after MIG was reconfigured, has nothing to compare with
// and gives none. An A100 has no GPM; nor has a driver before R520.

// gpmSymbols are the library's calls GPM needs; one it lacks cannot be called (it would crash the
// agent), so a library without all of them has no GPM.
var gpmSymbols = []string{"nvmlGpmQueryDeviceSupport", "nvmlGpmSampleAlloc", "nvmlGpmSampleFree", "nvmlGpmMigSampleGet", "nvmlGpmMetricsGet"}

// gpmGPU is what the agent keeps of the GPM readings of one GPU in MIG mode. Only the GPU's own
// reading (sampleGPU, never two at once for one GPU) uses it, under mu.
type gpmGPU struct {
	mu sync.Mutex
	// dev is the handle it was read through: another one (NVML initialised again, a GPU read
	// again) is read afresh, and whether it supports GPM asked again.
	dev       nvml.Device
	asked     bool // whether GPM support was asked of dev
	supported bool
	// prev is each GPU instance's last sample, by GPU instance id, with what the instance was
	// when it was taken.
	prev map[int]gpmSample
	// failing says the last reading of a GPM sample or metric failed (logged once).
	failing bool
}

// gpmSample is a GPU instance's sample and what told the instance apart when it was taken: its
// profile and its MIG devices' UUIDs (a GPU instance destroyed and another created with the same
// id, even of the same profile, has new MIG devices).
type gpmSample struct {
	instance string
	sample   nvml.GpmSample
}

// gpmOf is the GPM state of the GPU with uuid, read through dev.
func (d *Devices) gpmOf(uuid string, dev nvml.Device) *gpmGPU {
	d.gpmMu.Lock()
	defer d.gpmMu.Unlock()
	if d.gpmGPUs == nil {
		d.gpmGPUs = map[string]*gpmGPU{}
	}
	s := d.gpmGPUs[uuid]
	if s == nil {
		s = &gpmGPU{dev: dev, prev: map[int]gpmSample{}}
		d.gpmGPUs[uuid] = s
	}
	return s
}

// migActivity puts in migs, the MIG devices of GPU info (in MIG mode, read through dev) just read,
// each one's GPU instance activity since the last reading where the GPU has GPM; a MIG device NVML
// gave a utilization keeps it. Each GPU instance's sample is kept for the next reading, and the
// one before freed.
func (d *Devices) migActivity(uuid string, index int, dev nvml.Device, migs []report.MIGDevice) {
	if !d.gpm || uuid == "" || len(migs) == 0 {
		return
	}
	s := d.gpmOf(uuid, dev)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dev != dev {
		s.freeAll(d.lib)
		s.dev, s.asked, s.supported = dev, false, false
	}
	if !s.asked {
		// Asked again at the next reading where NVML did not answer (a failure this once).
		sup, r := dev.GpmQueryDeviceSupport()
		s.asked = r == nvml.SUCCESS || r == nvml.ERROR_NOT_SUPPORTED
		s.supported = r == nvml.SUCCESS && sup.IsSupportedDevice != 0
	}
	if !s.supported {
		return
	}
	// The GPU instances, in the order their MIG devices come, each with what tells it apart.
	var ids []int
	profile := map[int]string{}
	uuids := map[int][]string{}
	for _, m := range migs {
		if _, ok := profile[m.GI]; !ok {
			ids = append(ids, m.GI)
			profile[m.GI] = m.Profile
		}
		uuids[m.GI] = append(uuids[m.GI], m.UUID)
	}
	activity := map[int]float64{}
	failed := ""
	for _, gi := range ids {
		slices.Sort(uuids[gi])
		instance := profile[gi] + " " + strings.Join(uuids[gi], ",")
		last, had := s.prev[gi]
		delete(s.prev, gi)
		cur, r := d.lib.GpmSampleAlloc()
		if r == nvml.SUCCESS {
			if r = dev.GpmMigSampleGet(gi, cur); r != nvml.SUCCESS {
				_ = d.lib.GpmSampleFree(cur)
			}
		}
		if r != nvml.SUCCESS {
			failed = "sample: " + nvml.ErrorString(r)
			if had {
				_ = d.lib.GpmSampleFree(last.sample)
			}
			continue
		}
		s.prev[gi] = gpmSample{instance: instance, sample: cur}
		if !had {
			continue
		}
		if last.instance == instance {
			if v, r := d.graphicsActivity(last.sample, cur); r == nvml.SUCCESS {
				activity[gi] = v
			} else {
				failed = "metrics: " + nvml.ErrorString(r)
			}
		}
		_ = d.lib.GpmSampleFree(last.sample)
	}
	// A GPU instance no longer there leaves no sample behind.
	for gi, last := range s.prev {
		if _, ok := profile[gi]; !ok {
			_ = d.lib.GpmSampleFree(last.sample)
			delete(s.prev, gi)
		}
	}
	switch {
	case failed != "" && !s.failing:
		d.log.Warn("GPM cannot read the activity of a GPU's MIG devices; they are reported without utilization until it can",
			"gpu", index, "uuid", uuid, "nvml", failed)
	case failed == "" && s.failing:
		d.log.Info("GPM reads the activity of a GPU's MIG devices again", "gpu", index, "uuid", uuid)
	}
	s.failing = failed != ""
	for k := range migs {
		m := &migs[k]
		if v, ok := activity[m.GI]; ok && m.Util == nil {
			m.Util, m.InstanceUtil = &v, true
		}
	}
}

// graphicsActivity is the graphics engine activity, percent, between samples s1 and s2 of one GPU
// instance.
func (d *Devices) graphicsActivity(s1, s2 nvml.GpmSample) (float64, nvml.Return) {
	m := &nvml.GpmMetricsGetType{Version: nvml.GPM_METRICS_GET_VERSION, NumMetrics: 1, Sample1: s1, Sample2: s2}
	m.Metrics[0].MetricId = uint32(nvml.GPM_METRIC_GRAPHICS_UTIL)
	if r := d.lib.GpmMetricsGet(m); r != nvml.SUCCESS {
		return 0, r
	}
	if r := nvml.Return(m.Metrics[0].NvmlReturn); r != nvml.SUCCESS {
		return 0, r
	}
	v := m.Metrics[0].Value
	if math.IsNaN(v) || v < 0 {
		return 0, nvml.ERROR_UNKNOWN
	}
	return min(v, 100), nvml.SUCCESS
}

// gpmForget frees the samples kept of the GPU with uuid, which is not in MIG mode now.
func (d *Devices) gpmForget(uuid string) {
	d.gpmMu.Lock()
	s := d.gpmGPUs[uuid]
	d.gpmMu.Unlock()
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.freeAll(d.lib)
}

// gpmFreeAll frees every sample kept, before NVML is shut down.
func (d *Devices) gpmFreeAll() {
	d.gpmMu.Lock()
	all := d.gpmGPUs
	d.gpmGPUs = nil
	d.gpmMu.Unlock()
	for _, s := range all {
		// A GPU whose reading NVML still waits on holds its lock; its samples are left to it.
		if s.mu.TryLock() {
			s.freeAll(d.lib)
			s.mu.Unlock()
		}
	}
}

func (s *gpmGPU) freeAll(lib nvml.Interface) {
	for gi, last := range s.prev {
		_ = lib.GpmSampleFree(last.sample)
		delete(s.prev, gi)
	}
}
