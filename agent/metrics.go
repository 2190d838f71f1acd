package agent

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"

	"github.com/acme/quartermaster/agent/report"
)

// LabelStyle chooses the label names of /metrics.
type LabelStyle string

// Label styles. LabelsDCGM keeps dcgm-exporter's names (gpu, UUID, pci_bus_id, device, modelName,
// Hostname) so existing dashboards work; LabelsSnake writes model_name instead of modelName, the one
// name Prometheus' lint (promtool check metrics) objects to.
const (
	LabelsDCGM  LabelStyle = "dcgm"
	LabelsSnake LabelStyle = "snake"
)

// Metrics exposes the latest sample with dcgm-exporter's metric names, plus the agent's own
// health. Scrapes read what the last collection saw; they never call NVML.
type Metrics struct {
	host   string
	outbox *Outbox

	util, fbUsed, fbFree, power, temp, xid, ecc          *prometheus.Desc
	migFBUsed, migFBFree, migActive                      *prometheus.Desc
	collectSeconds, collectErrors, up, unread, recovered *prometheus.Desc
	queued, sent, refused, dropped, clockSkew            *prometheus.Desc

	reg *prometheus.Registry

	mu       sync.Mutex
	gpus     map[int]GPUInfo // by NVML index
	read     int             // GPUs not lost (at start, and not read since)
	recovers uint64          // GPUs lost at start that were read later
	last     *report.Report
	took     time.Duration
	failures uint64
	skew     *float64 // the service's last measure of this node's clock skew, seconds
}

// NewMetrics makes the collector for a node's GPUs and registers it in a registry of its own.
func NewMetrics(host string, style LabelStyle, gpus []GPUInfo) *Metrics {
	model := "modelName"
	if style == LabelsSnake {
		model = "model_name"
	}
	labels := []string{"gpu", "UUID", "pci_bus_id", "device", model, "Hostname", "hpc_job", "pod_uid"}
	d := func(name, help string) *prometheus.Desc { return prometheus.NewDesc(name, help, labels, nil) }
	// A MIG instance's series are the parent GPU's labels and GPU_I_PROFILE and GPU_I_ID, as
	// dcgm-exporter writes them (one series per GPU instance).
	migLabels := append(slices.Clone(labels[:5]), "GPU_I_PROFILE", "GPU_I_ID", "Hostname", "hpc_job", "pod_uid")
	dm := func(name, help string) *prometheus.Desc { return prometheus.NewDesc(name, help, migLabels, nil) }
	const fbUsedHelp, fbFreeHelp = "Framebuffer memory used (in MiB).", "Framebuffer memory free (in MiB)."
	m := &Metrics{host: host,
		util:      d("DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %)."),
		fbUsed:    d("DCGM_FI_DEV_FB_USED", fbUsedHelp),
		fbFree:    d("DCGM_FI_DEV_FB_FREE", fbFreeHelp),
		power:     d("DCGM_FI_DEV_POWER_USAGE", "Power draw (in W)."),
		temp:      d("DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C)."),
		xid:       d("DCGM_FI_DEV_XID_ERRORS", "Value of the last XID error encountered."),
		ecc:       d("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "Total number of double-bit volatile ECC errors."),
		migFBUsed: dm("DCGM_FI_DEV_FB_USED", fbUsedHelp),
		migFBFree: dm("DCGM_FI_DEV_FB_FREE", fbFreeHelp),
		migActive: dm("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "Ratio of time the graphics engine is active."),
		collectSeconds: prometheus.NewDesc("quartermaster_agent_collect_duration_seconds",
			"How long the last reading of the GPUs took.", nil, nil),
		collectErrors: prometheus.NewDesc("quartermaster_agent_collect_errors_total",
			"Readings of the GPUs that failed.", nil, nil),
		up: prometheus.NewDesc("quartermaster_agent_gpus",
			"GPUs the last reading read.", nil, nil),
		unread: prometheus.NewDesc("quartermaster_agent_gpus_unread",
			"GPUs the driver counts that the last reading left out: lost (fallen off the bus) at start, or NVML failed for them.", nil, nil),
		recovered: prometheus.NewDesc("quartermaster_agent_gpus_recovered_total",
			"GPUs that could not be read when the agent started and were read later; each is back in the reports.", nil, nil),
		queued: prometheus.NewDesc("quartermaster_agent_reports_queued",
			"Reports waiting to be sent to the service.", nil, nil),
		sent: prometheus.NewDesc("quartermaster_agent_reports_sent_total",
			"Reports the service took.", nil, nil),
		refused: prometheus.NewDesc("quartermaster_agent_reports_refused_total",
			"Reports refused as bad and dropped (never sent again): by the service (400, 413, 422), or by the agent before sending one over the size the service takes.", nil, nil),
		dropped: prometheus.NewDesc("quartermaster_agent_reports_dropped_total",
			"Reports dropped unsent because the service was unreachable longer than the window.", nil, nil),
		clockSkew: prometheus.NewDesc("quartermaster_agent_clock_skew_seconds",
			"How far this node's clock is ahead of the service's (negative: behind), as the service measured it at the last report it answered.", nil, nil),
	}
	m.setGPUs(gpus)
	m.reg = prometheus.NewRegistry()
	m.reg.MustRegister(m)
	return m
}

// Describe sends nothing: Metrics is an unchecked collector, because a MIG instance's series have
// the same names as a GPU's (DCGM_FI_DEV_FB_USED) with two labels more (GPU_I_PROFILE, GPU_I_ID),
// as dcgm-exporter writes them, which a registry refuses from described metrics.
func (m *Metrics) Describe(chan<- *prometheus.Desc) {}

// Collect sends the latest sample.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	m.mu.Lock()
	last, took, failures, gpus, read, recovers := m.last, m.took, m.failures, m.gpus, m.read, m.recovers
	m.mu.Unlock()
	// Both count the last reading, so that they add up to the GPUs the driver counts whether a GPU
	// was lost at start or while the agent runs; before the first reading, the GPUs lost at start
	// are the unread ones.
	if last != nil {
		read = len(last.GPUs)
	}
	ch <- prometheus.MustNewConstMetric(m.up, prometheus.GaugeValue, float64(read))
	unread := max(0, len(gpus)-read)
	ch <- prometheus.MustNewConstMetric(m.unread, prometheus.GaugeValue, float64(unread))
	ch <- prometheus.MustNewConstMetric(m.recovered, prometheus.CounterValue, float64(recovers))
	ch <- prometheus.MustNewConstMetric(m.collectSeconds, prometheus.GaugeValue, took.Seconds())
	ch <- prometheus.MustNewConstMetric(m.collectErrors, prometheus.CounterValue, float64(failures))
	if m.outbox != nil {
		q, sent, refused, dropped := m.outbox.Stats()
		ch <- prometheus.MustNewConstMetric(m.queued, prometheus.GaugeValue, float64(q))
		ch <- prometheus.MustNewConstMetric(m.sent, prometheus.CounterValue, float64(sent))
		ch <- prometheus.MustNewConstMetric(m.refused, prometheus.CounterValue, float64(refused))
		ch <- prometheus.MustNewConstMetric(m.dropped, prometheus.CounterValue, float64(dropped))
		m.mu.Lock()
		skew := m.skew
		m.mu.Unlock()
		if skew != nil {
			ch <- prometheus.MustNewConstMetric(m.clockSkew, prometheus.GaugeValue, *skew)
		}
	}
	if last == nil {
		return
	}
	const mib = 1 << 20
	for _, g := range last.GPUs {
		info, ok := gpus[g.Index]
		if !ok {
			info = GPUInfo{Index: g.Index, UUID: g.UUID, Name: g.Name, Minor: g.Index}
		}
		jobs, pods := owners(g)
		lv := []string{strconv.Itoa(g.Index), g.UUID, info.BusID, "nvidia" + strconv.Itoa(info.Minor), info.Name, m.host, jobs, pods}
		gauge := func(d *prometheus.Desc, v float64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, lv...)
		}
		if g.Util != nil {
			gauge(m.util, *g.Util)
		}
		if !g.MemUnread { // unread is not 0 MiB used and all of it free
			gauge(m.fbUsed, float64(g.MemUsed/mib))
			if free, ok := freeMemory(g.MemTotal, g.MemReserved, g.MemUsed); ok {
				gauge(m.fbFree, float64(free/mib))
			}
		}
		if g.PowerW != nil {
			gauge(m.power, *g.PowerW)
		}
		if g.TempC != nil {
			gauge(m.temp, *g.TempC)
		}
		if g.XID != nil {
			gauge(m.xid, float64(*g.XID))
		}
		if g.ECCUncorrected != nil {
			gauge(m.ecc, float64(*g.ECCUncorrected))
		}
		for _, gi := range gpuInstances(g.MIG) {
			jobs, pods := owners(report.GPU{Processes: gi.processes})
			lv := []string{lv[0], lv[1], lv[2], lv[3], lv[4], gi.profile, strconv.Itoa(gi.id), m.host, jobs, pods}
			gauge := func(d *prometheus.Desc, v float64) {
				ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, lv...)
			}
			if gi.used != nil { // not read is not 0 MiB used and all of it free
				gauge(m.migFBUsed, float64(*gi.used/mib))
				if free, ok := freeMemory(gi.total, gi.reserved, *gi.used); ok {
					gauge(m.migFBFree, float64(free/mib))
				}
			}
			if gi.util != nil {
				gauge(m.migActive, *gi.util/100)
			}
		}
	}
}

// gpuInstance is one GPU instance of a GPU in MIG mode, as dcgm-exporter shows it: the MIG devices
// (compute instances) the agent reads, taken together.
type gpuInstance struct {
	id       int
	profile  string
	used     *uint64 // the GPU instance's memory, which each of its compute instances reads
	total    uint64
	reserved uint64
	// util is the GPU instance's activity: GPM's, which its compute instances share, or with one
	// compute instance NVML's for it; NVML's for one of several is not its GPU instance's.
	util      *float64
	shared    bool // util is GPM's, of the whole GPU instance
	processes []report.Process
}

// gpuInstances groups a GPU's MIG devices by GPU instance, in the order they come.
func gpuInstances(migs []report.MIGDevice) []gpuInstance {
	var out []gpuInstance
	at := map[int]int{}
	for _, d := range migs {
		k, ok := at[d.GI]
		if !ok {
			at[d.GI], k = len(out), len(out)
			out = append(out, gpuInstance{id: d.GI, profile: d.Profile, total: d.MemTotal, util: d.Util, shared: d.InstanceUtil})
		} else if !out[k].shared || !d.InstanceUtil {
			out[k].util = nil
		}
		gi := &out[k]
		if gi.used == nil && d.MemUsed != nil {
			gi.used, gi.total, gi.reserved = d.MemUsed, d.MemTotal, d.MemReserved
		}
		gi.processes = append(gi.processes, d.Processes...)
	}
	return out
}

// freeMemory is the memory a process can still take, as dcgm-exporter's DCGM_FI_DEV_FB_FREE has
// it: neither in use nor reserved by the driver; false when the figures do not add up.
func freeMemory(total, reserved, used uint64) (uint64, bool) {
	if reserved > total || used > total-reserved {
		return 0, false
	}
	return total - reserved - used, true
}

// owners lists the jobs and pods of a GPU's processes, each once, comma separated.
func owners(g report.GPU) (jobs, pods string) {
	var js, ps []string
	for _, p := range g.Processes {
		if p.Job != "" && !contains(js, p.Job) {
			js = append(js, p.Job)
		}
		if p.Pod != "" && !contains(ps, p.Pod) {
			ps = append(ps, p.Pod)
		}
	}
	sort.Strings(js)
	sort.Strings(ps)
	return strings.Join(js, ","), strings.Join(ps, ",")
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

// update keeps the latest report, and the GPUs as the devices list them now: a GPU lost at start
// that reads again is counted as recovered.
func (m *Metrics) update(r report.Report, gpus []GPUInfo) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, g := range gpus {
		if was, ok := m.gpus[g.Index]; ok && was.Lost != "" && g.Lost == "" {
			m.recovers++
		}
	}
	m.setGPUs(gpus)
	m.last = &r
}

// setGPUs replaces the GPUs' descriptions; m.mu is held, or m is not shared yet.
func (m *Metrics) setClockSkew(secs float64) {
	m.mu.Lock()
	m.skew = &secs
	m.mu.Unlock()
}

func (m *Metrics) setGPUs(gpus []GPUInfo) {
	byIndex := make(map[int]GPUInfo, len(gpus))
	for _, g := range gpus {
		byIndex[g.Index] = g
	}
	m.gpus, m.read = byIndex, len(Readable(gpus))
}

func (m *Metrics) collected(took time.Duration, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.took = took
	if err != nil {
		m.failures++
	}
}

// Handler serves /metrics.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// Write writes one scrape in Prometheus' text format.
func (m *Metrics) Write(w io.Writer) error {
	mfs, err := m.reg.Gather()
	if err != nil {
		return fmt.Errorf("gather metrics: %w", err)
	}
	enc := expfmt.NewEncoder(w, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			return fmt.Errorf("write metrics: %w", err)
		}
	}
	return nil
}
