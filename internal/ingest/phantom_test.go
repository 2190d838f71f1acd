package ingest_test

import (
	"testing"
	"time"

	"github.com/acme/quartermaster/agent/report"
	"github.com/acme/quartermaster/internal/ingest"
	"github.com/acme/quartermaster/internal/qm"
)

// A report that lists a GPU the node's topology lacks still counts the interval of the leases on
// the node's known GPUs in the showback: only the unknown GPU is skipped (said in the answer).
// The interval of a lease it shows idle is not observed, neither idle nor busy, since the unknown
// GPU may be where its work runs.
func TestAPhantomGPUSkipsOnlyItself(t *testing.T) {
	eachStore(t, func(t *testing.T, url string) {
		leases := []*qm.Lease{
			{ID: 1, State: qm.Active, GPUs: 1, Ref: "4711", Node: "n1"},
			{ID: 2, State: qm.Active, GPUs: 1, Ref: "4712", Node: "n1"},
		}
		e := newEnv(t, url, leases...)
		e.accept(e.tokens["n1"], e.rep(
			report.GPU{Index: 0, UUID: "GPU-0", Util: f(80), Processes: []report.Process{{PID: 1, Job: "4711"}}},
			report.GPU{Index: 1, UUID: "GPU-1", Util: f(0), Processes: []report.Process{{PID: 2, Job: "4712"}}}))
		e.clock.Advance(10 * time.Second)
		r := e.rep(
			report.GPU{Index: 0, UUID: "GPU-0", Util: f(80), Processes: []report.Process{{PID: 1, Job: "4711"}}},
			report.GPU{Index: 1, UUID: "GPU-1", Util: f(0), Processes: []report.Process{{PID: 2, Job: "4712"}}},
			report.GPU{Index: 2, UUID: "GPU-phantom", Util: f(50)})
		r.Seq, r.Topology = 2, nil
		code, out := e.post(e.tokens["n1"], r)
		if skipped, _ := out["skipped"].(map[string]any); code != 200 || skipped[ingest.UnknownGPU] != 1.0 || len(skipped) != 1 {
			t.Fatalf("a report with a phantom GPU: %d %v; want it taken, the phantom skipped", code, out)
		}
		gpuSecs, idle := e.usage()
		if gpuSecs[1] != 20 || idle[1] != 0 {
			t.Errorf("L-1 (busy on GPU 0): %v GPU-s, %v idle; want 20 and 0", gpuSecs[1], idle[1])
		}
		if gpuSecs[2] != 10 || idle[2] != 10 {
			t.Errorf("L-2 (idle on GPU 1): %v GPU-s, %v idle; want 10 observed, idle (the phantom's interval not judged, so not observed)", gpuSecs[2], idle[2])
		}
	})
}
