// Package agent is the node agent's core: every interval it reads the node's GPUs (through
// Devices: NVML, or a fake DGX), finds the Slurm job or Kubernetes pod of every process on them
// from its cgroup, keeps the latest sample for Prometheus (/metrics, with DCGM-exporter names and
// labels), and sends it to the service as a report (agent/report) through an outbox that keeps a
// bounded window while the service is unreachable. It also writes Slurm's gres.conf and an
// `nvidia-smi topo -m` matrix from the real topology. It never imports the store.
package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acme/quartermaster/agent/report"
)

// Defaults for Config fields left empty.
const (
	DefaultInterval = 10 * time.Second
	// DefaultWindow is how many reports the outbox keeps while the service is unreachable: an
	// hour at the default interval.
	DefaultWindow = 360
	// DefaultTopologyEvery is how often the topology is read again to notice a change.
	DefaultTopologyEvery = 5 * time.Minute
)

// Config configures an agent.
type Config struct {
	// Node is the node's name as the scheduler knows it (Slurm's NodeName, the Kubernetes node).
	Node    string
	Devices Devices
	Cgroups Cgroups
	// Interval is the sampling period; zero means DefaultInterval.
	Interval time.Duration
	// Now tells the time; nil means time.Now.
	Now func() time.Time
	// Service is the service's base URL (https://qm.example.com); empty: no reports, metrics only.
	Service string
	// Token is the node's bearer token (quartermaster agent-token create NODE).
	Token string
	// TokenFile is the file Token came from, if any: read again when the service refuses the token.
	TokenFile string
	// Client sends the reports; nil means a client with a 10 s timeout.
	Client *http.Client
	// Window bounds the reports kept while the service is unreachable; zero means DefaultWindow.
	Window int
	// TopologyEvery: see DefaultTopologyEvery.
	TopologyEvery time.Duration
	// Labels chooses the /metrics label names: LabelsDCGM (default) or LabelsSnake.
	Labels LabelStyle
	Logger *slog.Logger
}

// CheckService says, in one sentence with an example, why service is not a URL the agent can
// report to; nil when it is one: http:// or https://, a host, and no query or fragment (the
// report's path is appended to it).
func CheckService(service string) error {
	u, err := url.Parse(service)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--service %q is not an http:// or https:// URL; e.g. --service %s", service, serviceMeant(service))
	}
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		base := *u
		base.RawQuery, base.ForceQuery, base.Fragment, base.RawFragment = "", false, "", ""
		return fmt.Errorf("--service %q has a query or fragment; give the service's base URL; e.g. --service %s", service, base.String())
	}
	return nil
}

// serviceMeant is the URL that service, refused as no http(s) URL, was likely meant as: a host
// (and port) written without a scheme is given one, http:// where a port other than 443 is
// named, https:// otherwise; else the documentation's example.
func serviceMeant(service string) string {
	const fallback = "https://qm.example.com"
	s := strings.TrimSpace(service)
	if s == "" || strings.Contains(s, "://") {
		return fallback
	}
	scheme := "https://"
	host := s
	if i := strings.IndexAny(host, "/?#"); i >= 0 {
		host = host[:i]
	}
	if _, port, err := net.SplitHostPort(host); err == nil && port != "443" {
		scheme = "http://"
	}
	u, err := url.Parse(scheme + s)
	if err != nil || u.Host == "" || u.Hostname() == "" {
		return fallback
	}
	u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = "", false, "", ""
	return u.String()
}

// Agent samples one node's GPUs and reports them.
type Agent struct {
	cfg     Config
	log     *slog.Logger
	metrics *Metrics
	out     *Outbox

	// run identifies this start of the agent; with seq, each report (report.Report.Run).
	run      string
	mu       sync.Mutex
	seq      uint64
	topo     *report.Topology
	topoHash string
	topoAt   time.Time
	// topoFailing: the last topology read failed, and the log said so.
	topoFailing bool
	sendTopo    atomic.Bool
	clockOff    atomic.Bool // the service last found this node's clock more than report.MaxClockSkew off

	// blindReadings counts the readings in a row with processes on the GPUs none of whose cgroups
	// could be read; blind is whether the log said so (cgroupsRead).
	blindMu       sync.Mutex
	blindReadings int
	blind         bool
}

// blindAfter is how many readings in a row must list processes whose cgroups cannot be read
// before the log says so: in one, they may all have ended since NVML listed them.
const blindAfter = 2

// New checks the configuration and makes an agent; it reads nothing yet.
func New(cfg Config) (*Agent, error) {
	if p := report.NodeNameProblem(cfg.Node); p != "" {
		return nil, fmt.Errorf("%s; use the name the scheduler knows the node by, e.g. --node gpu-01", p)
	}
	if cfg.Devices == nil {
		return nil, errors.New("agent: no devices")
	}
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Window <= 0 {
		cfg.Window = DefaultWindow
	}
	if cfg.TopologyEvery <= 0 {
		cfg.TopologyEvery = DefaultTopologyEvery
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	run := make([]byte, 8)
	if _, err := rand.Read(run); err != nil {
		return nil, fmt.Errorf("agent: pick a run id: %w", err)
	}
	a := &Agent{cfg: cfg, log: cfg.Logger, run: hex.EncodeToString(run)}
	a.metrics = NewMetrics(cfg.Node, cfg.Labels, cfg.Devices.GPUs())
	if cfg.Service != "" {
		if err := CheckService(cfg.Service); err != nil {
			return nil, err
		}
		if cfg.Token == "" {
			return nil, errors.New("a service URL is set but no token; create one with `quartermaster agent-token create " + cfg.Node + "` and pass it with --token-file")
		}
		a.out = NewOutbox(OutboxConfig{URL: cfg.Service, Token: cfg.Token, TokenFile: cfg.TokenFile, Client: cfg.Client, Window: cfg.Window,
			Logger: a.log, Now: cfg.Now, OnResponse: a.onResponse})
		a.metrics.outbox = a.out
	}
	a.sendTopo.Store(true)
	return a, nil
}

// Metrics is the agent's Prometheus collector of the latest sample.
func (a *Agent) Metrics() *Metrics { return a.metrics }

// Outbox is where reports wait to be sent; nil when the agent has no service.
func (a *Agent) Outbox() *Outbox { return a.out }

func (a *Agent) onResponse(r report.Response) {
	if r.TopologyWanted {
		a.sendTopo.Store(true)
	}
	if r.ClockSkew != nil {
		a.clockSkew(*r.ClockSkew)
	}
}

// clockSkew takes the service's measure of how far this node's clock is ahead of its own
// (seconds; negative: behind): the metrics show it, and the log says once when it goes more
// than report.MaxClockSkew off and once when it is back within.
func (a *Agent) clockSkew(secs float64) {
	a.metrics.setClockSkew(secs)
	// In seconds: a clock set to the year 9999 is further off than a time.Duration holds.
	off := math.Abs(secs) > report.MaxClockSkew.Seconds()
	if off == a.clockOff.Swap(off) {
		return
	}
	if !off {
		a.log.Info("this node's clock is back within the service's", "skew", report.Skew(secs, time.Millisecond))
		return
	}
	how := "ahead"
	if secs < 0 {
		how = "behind"
	}
	a.log.Warn("this node's clock is off the service's: the service places the reports on its own clock by the difference, but check the node's NTP (chronyc tracking, timedatectl)",
		"skew", report.Skew(secs, time.Second), "clock", how)
}

// Topology reads the node's topology (again, if it is older than TopologyEvery) and says whether
// it changed.
func (a *Agent) Topology(ctx context.Context) (report.Topology, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	_, err := a.refreshTopology(ctx, a.cfg.Now())
	if a.topo == nil {
		return report.Topology{}, err
	}
	return *a.topo, err
}

func (a *Agent) refreshTopology(ctx context.Context, now time.Time) (changed bool, err error) {
	if a.topo != nil && now.Sub(a.topoAt) < a.cfg.TopologyEvery {
		return false, nil
	}
	t, err := a.cfg.Devices.Topology(ctx)
	if err != nil {
		// Tried again at the next reading; the log says so once, not at every reading (while
		// the driver is away for an upgrade, every one fails), and once when it reads again.
		if !a.topoFailing {
			a.topoFailing = true
			kept := "there is none yet, so the reports carry none until it reads"
			if a.topo != nil {
				kept = "the last one read stands"
			}
			a.log.Warn("the GPU topology could not be read; "+kept+", and the agent tries again at every reading and says when it reads", "err", err)
		}
		return false, fmt.Errorf("read the topology: %w", err)
	}
	if a.topoFailing {
		a.topoFailing = false
		a.log.Info("the GPU topology reads again")
	}
	a.topoAt = now
	h := t.Hash()
	if h == a.topoHash {
		return false, nil
	}
	if a.topo != nil {
		a.log.Info("the GPU topology changed", "node", a.cfg.Node)
	}
	a.topo, a.topoHash = &t, h
	return true, nil
}

// Collect reads the GPUs now, maps their processes to jobs and pods, updates the metrics and
// returns the report. The topology rides along when it is new, changed, or the service asked.
func (a *Agent) Collect(ctx context.Context) (report.Report, error) {
	start := time.Now()
	now := a.cfg.Now()
	a.mu.Lock()
	changed, _ := a.refreshTopology(ctx, now) // an error is logged there, and the last topology stands
	if changed {
		a.sendTopo.Store(true)
	}
	a.seq++
	r := report.Report{Version: report.Version, Node: a.cfg.Node, At: now.UTC(), Run: a.run, Seq: a.seq,
		Interval: a.cfg.Interval.Seconds(), Driver: a.cfg.Devices.Driver(), TopologyHash: a.topoHash}
	if a.topo != nil && a.sendTopo.Swap(false) {
		r.Topology = a.topo
	}
	a.mu.Unlock()
	gpus, err := a.cfg.Devices.Sample(ctx)
	if err != nil {
		if r.Topology != nil {
			a.sendTopo.Store(true) // no report is made: the next one carries the topology
		}
		// No GPU read: /metrics shows none rather than the last reading as if it were current.
		a.metrics.update(report.Report{Version: r.Version, Node: r.Node, At: r.At, Seq: r.Seq}, a.cfg.Devices.GPUs())
		a.metrics.collected(time.Since(start), err)
		return report.Report{}, fmt.Errorf("read the GPUs: %w", err)
	}
	listed, unread := 0, 0
	var why error
	owner := func(p *report.Process) {
		var err error
		p.Job, p.Pod, err = a.cfg.Cgroups.Read(p.PID)
		listed++
		if err != nil {
			unread++
			why = err
		}
	}
	for i := range gpus {
		for j := range gpus[i].Processes {
			owner(&gpus[i].Processes[j])
		}
		for k := range gpus[i].MIG {
			for j := range gpus[i].MIG[k].Processes {
				owner(&gpus[i].MIG[k].Processes[j])
			}
		}
	}
	a.cgroupsRead(listed, unread, why)
	r.GPUs = gpus
	if a.readsLost(gpus) || a.topologyOfOtherGPUs() {
		// A GPU lost at start reads again: the topology the service has marks it lost, so it is
		// read now and sent with this report, not at the next TopologyEvery. So it is when the
		// driver counts other GPUs than the topology has (NVML initialised again after the driver
		// was reloaded, with a GPU fewer or more).
		a.mu.Lock()
		a.topoAt = time.Time{}
		changed, _ := a.refreshTopology(ctx, now) // an error is logged there
		if changed {
			r.Topology, r.TopologyHash = a.topo, a.topoHash
			a.sendTopo.Store(false)
		}
		a.mu.Unlock()
	}
	a.metrics.update(r, a.cfg.Devices.GPUs())
	a.metrics.collected(time.Since(start), nil)
	return r, nil
}

// cgroupsRead notes how many of the listed processes on the GPUs had a cgroup that could not be
// read (why: the last such error). When none could, for blindAfter readings in a row, no process
// is mapped to its job or pod: their work is no lease's, and the service cannot judge the leases
// of the node's busy GPUs. The log says so once, and once when processes map again.
func (a *Agent) cgroupsRead(listed, unread int, why error) {
	if listed == 0 {
		return // no process: nothing to say either way
	}
	a.blindMu.Lock()
	defer a.blindMu.Unlock()
	if unread < listed {
		a.blindReadings = 0
		if a.blind {
			a.blind = false
			a.log.Info("the processes on the GPUs are mapped to their jobs and pods again", "proc_root", a.cfg.Cgroups.root())
		}
		return
	}
	a.blindReadings++
	if a.blindReadings < blindAfter || a.blind {
		return
	}
	a.blind = true
	a.log.Warn("no process on the GPUs could be mapped to its Slurm job or Kubernetes pod: the agent cannot read their cgroups (PID/cgroup under its /proc), so their work is no lease's and the leases on busy GPUs are not judged; run the agent in the host's PID namespace (the DaemonSet's hostPID: true) with the host's /proc readable (not mounted with hidepid), or point --proc-root at it",
		"proc_root", a.cfg.Cgroups.root(), "processes", listed, "err", why)
}

// topologyOfOtherGPUs says whether the last topology read is of other GPUs than the driver counts
// now: another number of them, or another UUID at an index.
func (a *Agent) topologyOfOtherGPUs() bool {
	gpus := a.cfg.Devices.GPUs()
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.topo == nil {
		return false
	}
	if len(a.topo.GPUs) != len(gpus) {
		return true
	}
	for i, g := range gpus {
		if t := a.topo.GPUs[i]; t.Index == g.Index && t.UUID != "" && g.UUID != "" && t.UUID != g.UUID {
			return true
		}
	}
	return false
}

// readsLost says whether gpus has a GPU the last topology read marks lost.
func (a *Agent) readsLost(gpus []report.GPU) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.topo == nil {
		return false
	}
	for _, g := range gpus {
		if g.Index >= 0 && g.Index < len(a.topo.GPUs) && a.topo.GPUs[g.Index].Lost != "" {
			return true
		}
	}
	return false
}

// Send collects once and queues the report; Flush or Run sends it.
func (a *Agent) Send(ctx context.Context) (report.Report, error) {
	r, err := a.Collect(ctx)
	if err != nil {
		return r, err
	}
	if a.out != nil {
		body, err := json.Marshal(r)
		if err != nil {
			return r, fmt.Errorf("encode the report: %w", err)
		}
		a.out.Push(body)
	}
	return r, nil
}

// Run samples every interval until ctx ends, sending reports in order in the background. A failed
// sample is logged once, when samples start failing, and the next one tried; the log says once
// when a sample works again (quartermaster_agent_collect_errors_total counts each failure). A
// sample that fails with ErrRestart ends Run with its error: none can work again in this process.
func (a *Agent) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	if a.out != nil {
		wg.Go(func() { a.out.Run(ctx) })
	}
	t := time.NewTicker(a.cfg.Interval)
	defer t.Stop()
	var failingSince time.Time // when samples started failing; zero while they work
	failed := 0
	for {
		_, err := a.Send(ctx)
		if errors.Is(err, ErrRestart) && ctx.Err() == nil {
			// No reading can work again in this process: end, to be started again.
			stop()
			wg.Wait()
			return err
		}
		switch {
		case err != nil && ctx.Err() == nil:
			if failed == 0 {
				failingSince = a.cfg.Now()
				a.log.Error("the GPUs could not be read, so this node sends no report and /metrics shows no GPU until they read again; the agent tries at every interval and says when they do",
					"err", err)
			}
			failed++
		case err == nil && failed > 0:
			a.log.Info("the GPUs read again; reports resume", "after", a.cfg.Now().Sub(failingSince).Round(time.Second).String(), "failed_samples", failed)
			failed = 0
		}
		select {
		case <-ctx.Done():
			wg.Wait()
			return nil
		case <-t.C:
		}
	}
}
