package sim_test

import (
	"context"
	"testing"
	"time"

	"github.com/acme/quartermaster/docs"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/sim"
)

// usageLog is a fake qm.UsageStore that keeps what it is given in memory.
type usageLog struct{ got []qm.UsageRollup }

func (u *usageLog) AddUsage(_ context.Context, rs []qm.UsageRollup) error {
	u.got = append(u.got, rs...)
	return nil
}

func (u *usageLog) Usage(context.Context, time.Time, time.Time) ([]qm.UsageRollup, error) {
	return u.got, nil
}

// total adds up the rollups of one lease and hour.
func (u *usageLog) total(id qm.LeaseID, hour time.Time) qm.UsageRollup {
	out := qm.UsageRollup{Lease: id, Hour: hour}
	for _, r := range u.got {
		if r.Lease == id && r.Hour.Equal(hour) {
			out.GPUSeconds += r.GPUSeconds
			out.IdleGPUSeconds += r.IdleGPUSeconds
			out.UtilSum += r.UtilSum
			out.Samples += r.Samples
		}
	}
	return out
}

// The meter records each hour a lease held its GPUs, idle while :util held them below the
// threshold, across several Records and after the lease ended in between.
func TestMeterWritesHourlyRollupsOfWhatLeasesDid(t *testing.T) {
	p, err := policy.Load(docs.ExamplePolicy, docs.ExamplePolicyName)
	if err != nil {
		t.Fatal(err)
	}
	h := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	clock := sim.NewClock(h.Add(30 * time.Minute))
	c := sim.New(p, clock)
	l := &qm.Lease{ID: 7, User: "alice@acme.example", Team: "vision", Class: "train", GPUs: 2, Node: "h100-01", GPUIndex: []int{0, 1}, State: qm.Active, Duration: 4 * time.Hour}
	st, err := c.Start(t.Context(), l)
	if err != nil {
		t.Fatal(err)
	}
	l.Ref, l.StartedAt, l.ExpiresAt = st.Ref, clock.Now(), clock.Now().Add(4*time.Hour)
	log := &usageLog{}
	m := &sim.Meter{Cluster: c, Usage: log, Leases: func(context.Context, time.Time) ([]*qm.Lease, error) { return []*qm.Lease{l}, nil }}
	m.Start(h)

	clock.Set(h.Add(75 * time.Minute)) // 11:15: the GPUs go idle
	if err := m.Record(t.Context(), clock.Now()); err != nil {
		t.Fatal(err)
	}
	c.SetUtilization(l, 0)
	clock.Set(h.Add(2 * time.Hour)) // 12:00: released
	l.State, l.EndedAt = qm.Released, clock.Now()
	if err := c.Stop(t.Context(), l); err != nil {
		t.Fatal(err)
	}
	clock.Set(h.Add(150 * time.Minute))
	if err := m.Record(t.Context(), clock.Now()); err != nil {
		t.Fatal(err)
	}
	ten, eleven, twelve := log.total(7, h), log.total(7, h.Add(time.Hour)), log.total(7, h.Add(2*time.Hour))
	if ten.GPUSeconds != 2*1800 || ten.IdleGPUSeconds != 0 || ten.MeanUtilization() != 60 {
		t.Errorf("10:00 = %+v, want 3600 GPU-seconds (2 GPUs from 10:30), none idle, 60%%", ten)
	}
	if eleven.GPUSeconds != 2*3600 || eleven.IdleGPUSeconds != 2*45*60 || eleven.MeanUtilization() != 15 {
		t.Errorf("11:00 = %+v, want 7200 GPU-seconds, 5400 idle (from 11:15), mean 15%%", eleven)
	}
	if twelve.GPUSeconds != 0 {
		t.Errorf("12:00 = %+v, want nothing: the lease ended at 12:00", twelve)
	}
}

// A lease the cluster did not start itself (one started before the service or console was
// started again on the same database) is metered by the same rule as one it started: the
// utilization :util set for it holds until it ends, however many hours the meter records
// in between.
func TestMeterKeepsUtilizationOfLeaseStartedBeforeRestart(t *testing.T) {
	p, err := policy.Load(docs.ExamplePolicy, docs.ExamplePolicyName)
	if err != nil {
		t.Fatal(err)
	}
	h := time.Date(2026, 12, 1, 1, 0, 0, 0, time.UTC)
	clock := sim.NewClock(h)
	c := sim.New(p, clock) // started again: it never ran L-3
	l := &qm.Lease{ID: 3, User: "alice@acme.example", Team: "vision", Class: "train", GPUs: 8, Node: "h100-01", GPUIndex: []int{0, 1, 2, 3, 4, 5, 6, 7},
		State: qm.Active, Duration: 24 * time.Hour, Ref: "sim:h100-01:0,1,2,3,4,5,6,7", StartedAt: h.Add(-14 * time.Hour), ExpiresAt: h.Add(10 * time.Hour)}
	log := &usageLog{}
	m := &sim.Meter{Cluster: c, Usage: log, Leases: func(context.Context, time.Time) ([]*qm.Lease, error) { return []*qm.Lease{l}, nil }}
	m.Start(h)
	c.SetUtilization(l, 0)
	for _, d := range []time.Duration{time.Hour, 2 * time.Hour} {
		clock.Set(h.Add(d))
		if err := m.Record(t.Context(), clock.Now()); err != nil {
			t.Fatal(err)
		}
	}
	clock.Set(h.Add(150 * time.Minute)) // reclaimed
	l.State, l.EndedAt = qm.Reclaimed, clock.Now()
	if err := c.Stop(t.Context(), l); err != nil {
		t.Fatal(err)
	}
	if err := m.Record(t.Context(), clock.Now()); err != nil {
		t.Fatal(err)
	}
	for i, secs := range []float64{3600, 3600, 1800} {
		hour := h.Add(time.Duration(i) * time.Hour)
		if got := log.total(3, hour); got.GPUSeconds != 8*secs || got.IdleGPUSeconds != 8*secs || got.MeanUtilization() != 0 {
			t.Errorf("%s = %+v, want %v GPU-seconds, all idle at 0%%", hour.Format("15:04"), got, 8*secs)
		}
	}
}

// The utilization :util set for a lease survives a restart: a cluster built again on the same
// database and given the running leases and the settings kept for them reports the lease idle
// since it was set to 0 (so idle reclaim counts from then), meters it idle, and meters a running
// lease with no setting at the default.
func TestResumedClusterKeepsUtilizationSetBeforeRestart(t *testing.T) {
	p, err := policy.Load(docs.ExamplePolicy, docs.ExamplePolicyName)
	if err != nil {
		t.Fatal(err)
	}
	h := time.Date(2026, 11, 30, 11, 0, 0, 0, time.UTC)
	clock := sim.NewClock(h)
	before := sim.New(p, clock)
	idle := &qm.Lease{ID: 3, User: "alice@acme.example", Team: "vision", Class: "train", GPUs: 8, Node: "h100-01", GPUIndex: []int{0, 1, 2, 3, 4, 5, 6, 7}, State: qm.Active, Duration: 24 * time.Hour}
	busy := &qm.Lease{ID: 4, User: "lee@acme.example", Team: "language", Class: "train", GPUs: 2, Node: "h100-02", GPUIndex: []int{0, 1}, State: qm.Active, Duration: 24 * time.Hour}
	for _, l := range []*qm.Lease{idle, busy} {
		st, err := before.Start(t.Context(), l)
		if err != nil {
			t.Fatal(err)
		}
		l.Ref, l.Node, l.StartedAt, l.ExpiresAt = st.Ref, st.Node, clock.Now(), clock.Now().Add(24*time.Hour)
	}
	clock.Set(h.Add(time.Hour))
	kept := before.SetUtilization(idle, 0)
	if kept.Lease != idle.ID || kept.Utilization != 0 || !kept.At.Equal(h.Add(time.Hour)) {
		t.Fatalf("the setting to keep = %+v, want L-3 at 0%% from 12:00", kept)
	}

	clock.Set(h.Add(14 * time.Hour)) // the console is started again later
	after := sim.New(p, clock)
	after.Resume([]*qm.Lease{idle, busy}, []sim.Setting{kept})
	if a, ok := after.Activity(t.Context(), idle); !ok || !a.LastActive.Equal(h.Add(time.Hour)) || a.Utilization != 0 {
		t.Errorf("L-3 after the restart: %+v, want idle since 12:00 at 0%%", a)
	}
	if a, ok := after.Activity(t.Context(), busy); !ok || !a.LastActive.Equal(clock.Now()) || a.Utilization != sim.DefaultUtilization {
		t.Errorf("L-4 after the restart: %+v, want busy now at %d%%", a, sim.DefaultUtilization)
	}
	if !after.Running(idle) || !after.Running(busy) {
		t.Errorf("the leases running in the database are not running on the cluster started again")
	}
	log := &usageLog{}
	m := &sim.Meter{Cluster: after, Usage: log, Leases: func(context.Context, time.Time) ([]*qm.Lease, error) { return []*qm.Lease{idle, busy}, nil }}
	m.Start(clock.Now())
	start := clock.Now()
	for i := 1; i <= 3; i++ {
		clock.Set(start.Add(time.Duration(i) * time.Hour))
		if err := m.Record(t.Context(), clock.Now()); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		hour := start.Add(time.Duration(i) * time.Hour)
		if got := log.total(3, hour); got.GPUSeconds != 8*3600 || got.IdleGPUSeconds != 8*3600 {
			t.Errorf("L-3 at %s = %+v, want 28800 GPU-seconds, all idle", hour.Format("15:04"), got)
		}
		if got := log.total(4, hour); got.GPUSeconds != 2*3600 || got.IdleGPUSeconds != 0 || got.MeanUtilization() != sim.DefaultUtilization {
			t.Errorf("L-4 at %s = %+v, want 7200 GPU-seconds, none idle", hour.Format("15:04"), got)
		}
	}
}
