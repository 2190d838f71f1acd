// Package sim is the simulated cluster of the embedded default: nodes and NVLink islands described
// in the policy, a clock that moves only when told, and GPU utilization that a test or the console
// sets per lease. It lets the whole product run with no cluster at all.
package sim

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
)

// Clock is a simulated clock: it stands still until Set or Advance moves it.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock starts a clock at t.
func NewClock(t time.Time) *Clock { return &Clock{now: t.UTC()} }

// Now is the simulated time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Set moves the clock to t; it never moves back.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.now) {
		c.now = t.UTC()
	}
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) { c.Set(c.Now().Add(d)) }

// DefaultUtilization is what a simulated workspace's GPUs report until told otherwise: busy.
const DefaultUtilization = 60

// Cluster is the sim backend and its telemetry.
type Cluster struct {
	clock     qm.Clock
	nodes     []qm.Node
	idleBelow float64        // utilization below this is idle
	loc       *time.Location // usage is rolled up by the hours of the policy's time zone

	mu      sync.Mutex
	cpuJobs int               // CPU-only jobs numbered, on this database (NumberCPUJobsAfter) and since
	running map[string]string // workspace reference -> node
	util    map[string]utilization
	// history is each GPU set's utilization over time (by workspace reference: one lease holds
	// a GPU set at a time), kept until the meter has accounted for it.
	history map[string][]utilPoint
}

// utilPoint says that from at on, a GPU set's utilization was pct.
type utilPoint struct {
	at  time.Time
	pct float64
}

type utilization struct {
	pct        float64
	lastActive time.Time
}

// New builds the simulated cluster the policy describes: for a group {name: h100, count: 2}
// nodes h100-01 and h100-02, each GPU in one of nvlink_islands equal islands.
func New(p *policy.Policy, clock qm.Clock) *Cluster {
	c := &Cluster{clock: clock, idleBelow: p.Idle.UtilizationBelow, loc: p.Location, running: map[string]string{}, util: map[string]utilization{},
		history: map[string][]utilPoint{}}
	for _, g := range p.Sim.Nodes {
		islands := max(g.NVLinkIslands, 1)
		per := (g.GPUs + islands - 1) / islands
		for i := 1; i <= g.Count; i++ {
			n := qm.Node{Name: fmt.Sprintf("%s-%02d", g.Name, i), Class: g.Class, GPUs: g.GPUs, Island: make([]int, g.GPUs)}
			for gpu := range n.Island {
				n.Island[gpu] = gpu / per
			}
			c.nodes = append(c.nodes, n)
		}
	}
	return c
}

// Inventory lists the simulated nodes.
func (c *Cluster) Inventory() []qm.Node { return c.nodes }

// StartsInstantly tells the service that a simulated start is immediate and local.
func (c *Cluster) StartsInstantly() bool { return true }

// Start "starts" a workspace at once on the GPUs the service chose. Its reference names the node
// and GPUs, which no other running lease holds, so it needs no lease id.
func (c *Cluster) Start(_ context.Context, l *qm.Lease) (qm.Started, error) {
	if l.CPUOnly() {
		return c.startCPU(l), nil
	}
	node := strings.Split(l.Node, ",")[0]
	gpus := qm.FormatGPUs(l.GPUIndex)
	ref := "sim:" + l.Node + ":" + gpus
	c.mu.Lock()
	defer c.mu.Unlock()
	c.running[ref] = l.Node
	c.util[ref] = utilization{pct: DefaultUtilization, lastActive: c.clock.Now()}
	c.history[ref] = append(c.history[ref], utilPoint{c.clock.Now(), DefaultUtilization})
	which := "GPUs " + gpus
	if gpus == "" { // whole nodes
		which = "all GPUs of " + strings.ReplaceAll(l.Node, ",", ", ")
	}
	connect := fmt.Sprintf("ssh -p 2222 %s@%s  (%s)", strings.Split(l.User, "@")[0], node, which)
	if strings.Contains(l.Template, "jupyter") || strings.Contains(l.Template, "vscode") {
		slot := "gpu-" + strings.ReplaceAll(gpus, ",", "-")
		if gpus == "" {
			slot = "node"
		}
		connect = fmt.Sprintf("https://%s.sim.local/%s/", node, slot)
	}
	return qm.Started{State: qm.Active, Node: l.Node, Connect: connect, Ref: ref}, nil
}

// startCPU "starts" a job that holds no GPU on the first node of its class, as a scheduler runs
// one in the class's partition beside the GPU jobs there (the service places no CPU-only lease),
// and says so: the lease names the node. Its reference is its start time and a number, since it
// holds no GPU set of its own (numbered after the jobs of the database, NumberCPUJobsAfter); it
// has no GPU utilization.
func (c *Cluster) startCPU(l *qm.Lease) qm.Started {
	node := l.Node
	for _, n := range c.nodes {
		if node == "" && n.Class == l.Class {
			node = n.Name
			break
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cpuJobs++
	ref := fmt.Sprintf("sim:cpu:%d-%d", c.clock.Now().Unix(), c.cpuJobs)
	c.running[ref] = node
	st := qm.Started{State: qm.Active, Ref: ref, Node: node}
	if node != "" {
		st.Connect = fmt.Sprintf("ssh -p 2222 %s@%s  (CPU only, no GPU)", strings.Split(l.User, "@")[0], node)
	}
	return st
}

// NumberCPUJobsAfter has the cluster number the CPU-only jobs it starts after those of refs, the
// references that jobs started before it on the same database hold: a cluster started again on
// that database (at the same simulated moment, even) names no new job as an old one.
func (c *Cluster) NumberCPUJobsAfter(refs []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ref := range refs {
		rest, ok := strings.CutPrefix(ref, "sim:cpu:")
		if !ok {
			continue
		}
		if n, err := strconv.Atoi(rest[strings.LastIndexByte(rest, '-')+1:]); err == nil && n > c.cpuJobs {
			c.cpuJobs = n
		}
	}
}

// Stop ends a workspace.
func (c *Cluster) Stop(_ context.Context, l *qm.Lease) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.running, l.Ref)
	delete(c.util, l.Ref)
	return nil
}

// Running reports whether the simulated cluster runs a workspace started in this process.
func (c *Cluster) Running(l *qm.Lease) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.running[l.Ref]
	return ok && l.Ref != ""
}

// Setting is the utilization :util last set for a lease: Utilization from At on, the GPUs last
// busy at LastActive while it is below the idle threshold. The caller keeps it (the database), so
// that a cluster started again on the same database goes on with it (Resume).
type Setting struct {
	Lease       qm.LeaseID
	Utilization float64
	At          time.Time
	LastActive  time.Time
}

// SetUtilization sets the GPU utilization a lease reports from now on, and returns the setting to
// keep for a restart.
func (c *Cluster) SetUtilization(l *qm.Lease, pct float64) Setting {
	c.mu.Lock()
	defer c.mu.Unlock()
	u, ok := c.util[l.Ref]
	now := c.clock.Now()
	if !ok {
		u = utilization{pct: DefaultUtilization, lastActive: now}
	}
	if u.pct >= c.idleBelow {
		u.lastActive = now // it was busy up to now
	}
	u.pct = pct
	c.util[l.Ref] = u
	c.history[l.Ref] = append(c.history[l.Ref], utilPoint{now, pct})
	return Setting{Lease: l.ID, Utilization: pct, At: now, LastActive: u.lastActive}
}

// Resume makes the workspaces of a cluster started again known to it, as a real scheduler still
// runs the jobs the service started before it restarted: each running lease (the database's) holds
// its node and GPUs, and reports the utilization last set for it (settings, which may name leases
// that have ended since), else DefaultUtilization and busy now.
func (c *Cluster) Resume(running []*qm.Lease, settings []Setting) {
	byLease := make(map[qm.LeaseID]Setting, len(settings))
	for _, s := range settings {
		byLease[s.Lease] = s
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock.Now()
	for _, l := range running {
		if l.Ref == "" || !l.State.Running() {
			continue
		}
		c.running[l.Ref] = l.Node
		if l.CPUOnly() {
			continue // no GPU, no utilization
		}
		u, at := utilization{pct: DefaultUtilization, lastActive: now}, l.StartedAt
		if s, ok := byLease[l.ID]; ok {
			u, at = utilization{pct: s.Utilization, lastActive: s.LastActive}, s.At
		}
		c.util[l.Ref] = u
		c.history[l.Ref] = []utilPoint{{at, u.pct}}
	}
}

// Activity reports a lease's simulated GPU activity; the simulation always has fresh telemetry.
// A running lease it has not heard of (started before a restart) is busy.
func (c *Cluster) Activity(_ context.Context, l *qm.Lease) (qm.Activity, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock.Now()
	u, ok := c.util[l.Ref]
	if !ok {
		return qm.Activity{LastActive: now, Seen: now, Utilization: DefaultUtilization}, true
	}
	last := u.lastActive
	if u.pct >= c.idleBelow {
		last = now
	}
	return qm.Activity{LastActive: last, Seen: now, Utilization: u.pct}, true
}
