package sim

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/acme/quartermaster/internal/qm"
)

// Meter is the simulated cluster's telemetry as the showback reads it: as the simulated clock
// moves, it writes hourly usage rollups of every lease that held GPUs, at the utilization the
// cluster reported for them (DefaultUtilization unless :util set another), idle while that was
// below the policy's idle threshold. It samples each GPU once a simulated second, so a mean
// utilization weighs every GPU alike.
type Meter struct {
	Cluster *Cluster
	Usage   qm.UsageStore
	// Leases lists the workspace leases that held GPUs at some time at or after since.
	Leases func(ctx context.Context, since time.Time) ([]*qm.Lease, error)

	mu   sync.Mutex
	last time.Time
}

// Start sets where metering begins; nothing before it is recorded.
func (m *Meter) Start(t time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.last = t
}

// Record writes the rollups of [last Record, now).
func (m *Meter) Record(ctx context.Context, now time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.last.IsZero() || !now.After(m.last) {
		if m.last.IsZero() {
			m.last = now
		}
		return nil
	}
	leases, err := m.Leases(ctx, m.last)
	if err != nil {
		return fmt.Errorf("sim: meter: %w", err)
	}
	var out []qm.UsageRollup
	held := map[string]bool{} // the GPU sets leases still hold at now
	for _, l := range leases {
		if l.CPUOnly() {
			continue // it holds no GPU to meter
		}
		if l.Ref != "" && l.State.Running() && (l.EndedAt.IsZero() || l.EndedAt.After(now)) {
			held[l.Ref] = true
		}
		from, to, ok := heldSpan(l, m.last, now)
		if !ok {
			continue
		}
		out = append(out, m.Cluster.rollups(l, from, to)...)
	}
	if err := m.Usage.AddUsage(ctx, out); err != nil {
		return fmt.Errorf("sim: meter: %w", err)
	}
	m.Cluster.forget(now, held)
	m.last = now
	return nil
}

// heldSpan is the part of [from, to) in which a workspace lease held its GPUs: from its start to
// its end, or while it runs, never past its expiry.
func heldSpan(l *qm.Lease, from, to time.Time) (time.Time, time.Time, bool) {
	if l.Kind != qm.KindWorkspace || l.StartedAt.IsZero() {
		return time.Time{}, time.Time{}, false
	}
	end := l.EndedAt
	if end.IsZero() {
		end = l.ExpiresAt
	}
	if !end.IsZero() && end.Before(to) {
		to = end
	}
	if l.StartedAt.After(from) {
		from = l.StartedAt
	}
	return from, to, to.After(from)
}

// rollups splits a lease's [from, to) at hour boundaries and at each change of its utilization.
func (c *Cluster) rollups(l *qm.Lease, from, to time.Time) []qm.UsageRollup {
	c.mu.Lock()
	points := append([]utilPoint(nil), c.history[l.Ref]...)
	c.mu.Unlock()
	pct := func(t time.Time) float64 {
		p := float64(DefaultUtilization)
		for _, pt := range points {
			if pt.at.After(t) {
				break
			}
			p = pt.pct
		}
		return p
	}
	byHour := map[time.Time]*qm.UsageRollup{}
	var order []time.Time
	at := from
	for at.Before(to) {
		next := qm.HourStart(at, c.loc).Add(time.Hour)
		for _, pt := range points {
			if pt.at.After(at) && pt.at.Before(next) {
				next = pt.at
				break
			}
		}
		if next.After(to) {
			next = to
		}
		secs := math.Round(next.Sub(at).Seconds())
		u := pct(at)
		h := qm.HourStart(at, c.loc)
		r := byHour[h]
		if r == nil {
			r = &qm.UsageRollup{Lease: l.ID, Hour: h}
			byHour[h] = r
			order = append(order, h)
		}
		r.GPUSeconds += secs * float64(l.GPUs)
		if u < c.idleBelow {
			r.IdleGPUSeconds += secs * float64(l.GPUs)
		}
		r.UtilSum += u * secs * float64(l.GPUs)
		r.Samples += int64(secs) * int64(l.GPUs)
		at = next
	}
	out := make([]qm.UsageRollup, 0, len(order))
	for _, h := range order {
		out = append(out, *byHour[h])
	}
	return out
}

// forget drops utilization history the meter no longer needs: what was superseded before t, and
// the GPU sets no workspace holds any more whose last change came before t. A GPU set is held
// while this cluster runs a workspace on it or a lease the meter read holds it (held): a lease
// started before a restart is metered at its last setting until it ends, not only for the hour
// after it was set.
func (c *Cluster) forget(t time.Time, held map[string]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for ref, pts := range c.history {
		if _, running := c.running[ref]; !running && !held[ref] && len(pts) > 0 && pts[len(pts)-1].at.Before(t) {
			delete(c.history, ref)
			continue
		}
		i := 0
		for i+1 < len(pts) && !pts[i+1].at.After(t) {
			i++
		}
		c.history[ref] = pts[i:]
	}
}
