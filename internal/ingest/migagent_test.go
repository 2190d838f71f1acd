//go:build cgo

package ingest_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/acme/quartermaster/agent"
	"github.com/acme/quartermaster/agent/nvml"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// The whole path for a lease on a MIG slice: the node agent on a fake DGX A100 (go-nvml's mock
// devices) whose GPU 0 is in MIG mode, with the lease's Slurm job on its first instance, reports
// to the real ingest handler. NVML gives the slice no utilization, so the job's process on it is
// work: whether its memory in use moves (by 512 MiB from one report to the next) or stays put, as
// a training run's does, the lease is not warned. Once the process has ended, the slice does
// nothing: the owner is warned after the class's idle_timeout, and without an answer the lease is
// reclaimed. The platform channel never hears that the lease has no GPU telemetry.
func TestAMIGSliceReportedByTheAgentIsJudgedByItsProcess(t *testing.T) {
	eachStore(t, func(t *testing.T, url string) {
		e := newLabEnv(t, url)
		l := e.start("nb", 1) // idle_timeout 10m, the default grace
		proc := t.TempDir()
		if err := os.MkdirAll(filepath.Join(proc, "4242"), 0o755); err != nil {
			t.Fatal(err)
		}
		cg := fmt.Sprintf("0::/system.slice/slurmstepd.scope/job_%d/step_0/user/task_0\n", 7000+int(l.ID))
		if err := os.WriteFile(filepath.Join(proc, "4242", "cgroup"), []byte(cg), 0o644); err != nil {
			t.Fatal(err)
		}
		script := &mutableScript{}
		fake, err := nvml.NewFake("dgxa100", l.Node, script)
		if err != nil {
			t.Fatal(err)
		}
		devs, err := nvml.OpenFake(fake, storetest.Logger(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = devs.Close() })
		a, err := agent.New(agent.Config{Node: l.Node, Devices: devs, Cgroups: agent.Cgroups{ProcRoot: proc},
			Interval: time.Minute, Now: e.clock.Now, Service: e.srv.URL, Token: e.tokens[l.Node], Logger: storetest.Logger(t)})
		if err != nil {
			t.Fatal(err)
		}
		step := func(mem int, pids string) {
			t.Helper()
			script.set(t, fmt.Sprintf("0 0 mem=%d mig=3g.20gb,1g.5gb%s; * 0", mem, pids))
			if _, err := a.Send(t.Context()); err != nil {
				t.Fatal(err)
			}
			if err := a.Outbox().Flush(t.Context()); err != nil {
				t.Fatal(err)
			}
			e.tick()
			e.minute()
		}
		for k := range 20 {
			step(4096+512*(k%2), " pids=4242")
		}
		if got := e.lease(l.ID); got.State != qm.Active {
			t.Errorf("a lease whose slice's memory moves at every report is %s after 20 minutes; want active", got.State)
		}
		for range 30 {
			step(4096, " pids=4242")
		}
		if got := e.lease(l.ID); got.State != qm.Active || len(e.notes.Of(qm.NoticeIdleWarning, l.ID)) != 0 {
			t.Errorf("a lease whose job runs on its slice with its memory still for 30 minutes: %s, %d idle warnings; want active, none",
				got.State, len(e.notes.Of(qm.NoticeIdleWarning, l.ID)))
		}
		for range 15 {
			step(0, "")
		}
		if got := e.lease(l.ID); got.State != qm.Reclaimed || len(e.notes.Of(qm.NoticeIdleWarning, l.ID)) != 1 {
			t.Errorf("a lease whose job left its slice 15 minutes ago: %s, %d idle warnings; want reclaimed after one warning",
				got.State, len(e.notes.Of(qm.NoticeIdleWarning, l.ID)))
		}
		if n := e.notes.Of(qm.NoticeTelemetryMissing, l.ID); len(n) != 0 {
			t.Errorf("a lease on a MIG slice the agent reports: %d notices of no GPU telemetry, want none", len(n))
		}
	})
}

// The same path on a GPU with GPM (a fake DGX H100): the agent reports the slice's activity from
// its second reading on, so a lease whose job holds its slice and does nothing (a notebook kernel
// with a model loaded, its memory still) is warned after the class's idle_timeout, as on a whole
// GPU, and one whose job works there is not. On an A100 (no GPM) the same idle job is work, as
// above, and is not warned. The platform channel hears nothing of either.
func TestAMIGSliceOnAGPUWithGPMIsJudgedByItsActivity(t *testing.T) {
	for _, tc := range []struct {
		kind, profiles string
		util           int
		warned         bool
	}{
		{"dgxh100", "3g.40gb,1g.10gb", 0, true},
		{"dgxh100", "3g.40gb,1g.10gb", 70, false},
		{"dgxa100", "3g.20gb,1g.5gb", 0, false},
	} {
		t.Run(fmt.Sprintf("%s at %d%%", tc.kind, tc.util), func(t *testing.T) {
			eachStore(t, func(t *testing.T, url string) {
				e := newLabEnv(t, url)
				l := e.start("nb", 1) // idle_timeout 10m
				proc := t.TempDir()
				if err := os.MkdirAll(filepath.Join(proc, "4242"), 0o755); err != nil {
					t.Fatal(err)
				}
				cg := fmt.Sprintf("0::/system.slice/slurmstepd.scope/job_%d/step_0/user/task_0\n", 7000+int(l.ID))
				if err := os.WriteFile(filepath.Join(proc, "4242", "cgroup"), []byte(cg), 0o644); err != nil {
					t.Fatal(err)
				}
				script := &mutableScript{}
				script.set(t, fmt.Sprintf("0 %d mem=4096 mig=%s pids=4242; * 0", tc.util, tc.profiles))
				fake, err := nvml.NewFake(tc.kind, l.Node, script)
				if err != nil {
					t.Fatal(err)
				}
				devs, err := nvml.OpenFake(fake, storetest.Logger(t))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = devs.Close() })
				a, err := agent.New(agent.Config{Node: l.Node, Devices: devs, Cgroups: agent.Cgroups{ProcRoot: proc},
					Interval: time.Minute, Now: e.clock.Now, Service: e.srv.URL, Token: e.tokens[l.Node], Logger: storetest.Logger(t)})
				if err != nil {
					t.Fatal(err)
				}
				for range 15 {
					if _, err := a.Send(t.Context()); err != nil {
						t.Fatal(err)
					}
					if err := a.Outbox().Flush(t.Context()); err != nil {
						t.Fatal(err)
					}
					e.tick()
					e.minute()
				}
				if warned := len(e.notes.Of(qm.NoticeIdleWarning, l.ID)) > 0; warned != tc.warned {
					t.Errorf("a lease whose job holds its slice of a %s at %d%% for 15 minutes: %s, %d idle warnings; want warned: %v",
						tc.kind, tc.util, e.lease(l.ID).State, len(e.notes.Of(qm.NoticeIdleWarning, l.ID)), tc.warned)
				}
				if n := e.notes.Of(qm.NoticeTelemetryMissing, l.ID); len(n) != 0 {
					t.Errorf("a lease on a MIG slice the agent reports: %d notices to the platform channel, want none", len(n))
				}
			})
		})
	}
}
