package ingest_test

import (
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/agent/report"
	"github.com/acme/quartermaster/internal/ingest"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// A node's report cannot keep busy a lease that runs on another node: n2 listing a process of
// the job of a lease on n1, on n2's own GPU at 90 %, neither makes that lease active nor gives it
// telemetry or usage; the process is skipped and counted as other_node. The same holds for a
// pod's process, and for a lease over several nodes that n2 is not one of.
func TestANodeCannotKeepAnotherNodesLeaseBusy(t *testing.T) {
	eachStore(t, func(t *testing.T, url string) {
		leases := []*qm.Lease{
			{ID: 1, State: qm.Active, GPUs: 1, Ref: "5101", Node: "n1"},
			{ID: 2, State: qm.IdleWarned, GPUs: 1, Ref: "pod/qm-vision/ws", Node: "n1"},
			{ID: 3, State: qm.Active, GPUs: 2, Ref: "5103", Node: "n1,n3"},
		}
		e := newEnv(t, url, leases...)
		r := e.rep(
			report.GPU{Index: 0, UUID: "GPU-0", Util: f(90), Processes: []report.Process{{PID: 1, Job: "5101"}, {PID: 2, Job: "5103"}}},
			report.GPU{Index: 1, UUID: "GPU-1", Util: f(90), Processes: []report.Process{{PID: 3, Pod: "5f0b7a2e-1c3d-4e5f-8a9b-0c1d2e3f4a5b"}}})
		ownGPUs(&r, "n2")
		code, out := e.post(e.tokens["n2"], r)
		if code != 200 || out["accepted"] != true {
			t.Fatalf("n2's report: %d %v", code, out)
		}
		if skipped, _ := out["skipped"].(map[string]any); skipped[ingest.OtherNode] != 3.0 {
			t.Errorf("skipped = %v; want the 3 processes of other nodes' leases counted as %s", skipped, ingest.OtherNode)
		}
		tel := ingest.Telemetry{Store: e.db}
		for _, l := range leases {
			if a, ok := tel.Activity(t.Context(), l); ok {
				t.Errorf("%s on %s has telemetry from n2's report: %+v", l.ID, l.Node, a)
			}
		}
		if secs, _ := e.usage(); len(secs) != 0 {
			t.Errorf("usage from n2's report: %v", secs)
		}
		if c := e.ing.Counts(); c[ingest.OtherNode] != 3 {
			t.Errorf("counts = %v; want 3 %s", c, ingest.OtherNode)
		}

		// n1's own report, idle, still judges the lease idle: n2's word did not make it active.
		e.clock.Advance(10 * time.Second)
		e.accept(e.tokens["n1"], e.rep(report.GPU{Index: 0, UUID: "GPU-0", Util: f(0)}, report.GPU{Index: 1, UUID: "GPU-1", Util: f(0)}))
		if a, ok := tel.Activity(t.Context(), leases[0]); !ok || !a.LastActive.IsZero() {
			t.Errorf("L-1 after n1's idle report: %+v %v; want seen and never active", a, ok)
		}
	})
}

// The service takes a process of a lease's job or pod from a node the lease's node list lacks
// where the list may not say where the job runs: the scheduler has not said yet (the node list is
// empty until the service's next pass sees the job run), or the job went back to the
// scheduler's queue and may start again on another node before the service sees where. Such a
// report makes the lease active and counts its GPUs there.
func TestALeaseWhoseNodeIsNotKnownYetIsSeenWhereItsJobRuns(t *testing.T) {
	for _, c := range []struct {
		name  string
		lease qm.Lease
	}{
		{"no node yet", qm.Lease{State: qm.Provisioning, Node: ""}},
		{"no node yet, active", qm.Lease{State: qm.Active, Node: ""}},
		{"requeued from n1", qm.Lease{State: qm.Active, Node: "n1", Pauses: []qm.Pause{{Kind: qm.PauseRequeued, From: t0.Add(-time.Minute)}}}},
		{"node list in capitals", qm.Lease{State: qm.Active, Node: "N2"}},
		{"node list compressed", qm.Lease{State: qm.Active, Node: "n[1-2]"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			for _, ref := range []string{"6201", "pod/qm-vision/ws"} {
				l := c.lease
				l.ID, l.GPUs, l.Ref = 1, 2, ref
				e := newEnv(t, storetest.SQLite(t), &l)
				r := e.rep(
					report.GPU{Index: 0, UUID: "GPU-0", Util: f(90), Processes: []report.Process{{PID: 1, Job: "6201"}}},
					report.GPU{Index: 1, UUID: "GPU-1", Util: f(0)})
				if ref != "6201" {
					r.GPUs[0].Processes[0] = report.Process{PID: 1, Pod: "5f0b7a2e-1c3d-4e5f-8a9b-0c1d2e3f4a5b"}
				}
				ownGPUs(&r, "n2")
				code, out := e.post(e.tokens["n2"], r)
				if code != 200 || out["skipped"] != nil {
					t.Errorf("%s: n2's report: %d %v", ref, code, out)
				}
				if a, ok := (ingest.Telemetry{Store: e.db}).Activity(t.Context(), &l); !ok || !a.LastActive.Equal(t0) {
					t.Errorf("%s on %q: %+v %v; want active from n2's report", ref, l.Node, a, ok)
				}
				if secs, _ := e.usage(); secs[1] == 0 {
					t.Errorf("%s on %q: no usage from n2's report", ref, l.Node)
				}
			}
		})
	}
}

// A node's clock off by any amount, a day or more behind or ahead, changes neither check that a
// node reports only its own GPUs nor that it keeps busy only the leases on it: n1 reports its GPUs
// and n2 then lists one of them, whichever of the two clocks is off; n2 is refused with 403
// (wrong_node), and a process of n1's lease in n2's report is skipped (other_node). Each report is
// still placed by its node's measured skew.
func TestTheOtherNodeChecksHoldWhateverTheNodesClocks(t *testing.T) {
	for _, c := range []struct {
		name   string
		n1, n2 time.Duration // each node's clock minus the service's
	}{
		{"n1 two days behind", -48 * time.Hour, 0},
		{"n1 25 hours behind", -25 * time.Hour, 0},
		{"n2 two days behind", 0, -48 * time.Hour},
		{"both two days behind", -48 * time.Hour, -48 * time.Hour},
		{"n1 a day ahead, n2 two days behind", 24 * time.Hour, -48 * time.Hour},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			l := &qm.Lease{ID: 1, State: qm.Active, GPUs: 1, Ref: "5101", Node: "n1"}
			e := newEnv(t, storetest.SQLite(t), l)
			e.clock.Advance(time.Hour)
			mine := e.rep(report.GPU{Index: 0, UUID: "GPU-0", Util: f(0), Processes: []report.Process{{PID: 1, Job: "5101"}}},
				report.GPU{Index: 1, UUID: "GPU-1", Util: f(0)})
			mine.At = e.clock.Now().Add(c.n1)
			if code, out := e.postSent(e.tokens["n1"], mine, mine.At); code != 200 || out["accepted"] != true {
				t.Fatalf("n1's report: %d %v", code, out)
			}
			e.clock.Advance(10 * time.Second)
			theirs := e.rep(report.GPU{Index: 0, UUID: "GPU-0", Util: f(95), Processes: []report.Process{{PID: 1, Job: "5101"}}},
				report.GPU{Index: 1, UUID: "GPU-1", Util: f(95)})
			theirs.Node, theirs.At = "n2", e.clock.Now().Add(c.n2)
			code, out := e.postSent(e.tokens["n2"], theirs, theirs.At)
			if msg, _ := out["error"].(string); code != 403 || !strings.Contains(msg, "GPU-0") {
				t.Errorf("n2 listing n1's GPU: %d %v; want 403 naming it", code, out)
			}
			// n2's own GPUs, with a process of n1's lease on one of them.
			ownGPUs(&theirs, "n2")
			e.clock.Advance(10 * time.Second)
			theirs.At = e.clock.Now().Add(c.n2)
			code, out = e.postSent(e.tokens["n2"], theirs, theirs.At)
			if skipped, _ := out["skipped"].(map[string]any); code != 200 || skipped[ingest.OtherNode] != 1.0 {
				t.Errorf("n2's report with a process of n1's lease: %d %v; want it taken and the process skipped as %s", code, out, ingest.OtherNode)
			}
			if a, ok := (ingest.Telemetry{Store: e.db}).Activity(t.Context(), l); !ok || !a.LastActive.IsZero() {
				t.Errorf("n1's lease: %+v %v; want seen (n1's report) and never active", a, ok)
			}
		})
	}
}
