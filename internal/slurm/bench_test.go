package slurm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/commands"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/sim"
	"github.com/acme/quartermaster/internal/slurm"
	"github.com/acme/quartermaster/internal/store/storetest"
	"github.com/acme/quartermaster/internal/workload"
)

// BenchmarkRequestToRunning is the time from "/gpu request 1 interactive for 1h" in chat to the
// lease's Slurm job RUNNING in squeue, on the real test cluster: the bot, the lease service on
// SQLite, the Slurm backend and slurmctld's scheduling of the new job. Each iteration releases
// its lease (scancel) and waits for the job to end, so the cluster is free at every request.
// Besides ns/op it reports the median, 90th percentile and slowest request-to-RUNNING times, and
// the median time to the chat reply.
func BenchmarkRequestToRunning(b *testing.B) {
	e := newEnv(b)
	e.svc.Clock = realClock{}
	h := &commands.Bot{Svc: e.svc}
	ctx := context.Background()
	var toRunning, toReply []time.Duration
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		rs := h.Handle(ctx, bot.Request{User: "alice@acme.example", Text: "/gpu request 1 interactive for 1h"})
		replied := time.Since(start)
		if len(rs) == 0 || rs[0].Error {
			b.Fatalf("request refused: %+v", rs)
		}
		ls, err := e.svc.List(ctx, qm.LeaseFilter{User: "alice@acme.example", States: qm.LiveStates})
		if err != nil || len(ls) != 1 {
			b.Fatalf("live leases %v, %v", ls, err)
		}
		l := ls[0]
		for {
			if j, err := e.backend.Job(ctx, l.Ref); err == nil && j.State == qm.JobRunning {
				break
			}
			if time.Since(start) > deadline {
				b.Fatalf("job %s of %s not running after %s", l.Ref, l.ID, deadline)
			}
			time.Sleep(20 * time.Millisecond)
		}
		toRunning = append(toRunning, time.Since(start))
		toReply = append(toReply, replied)
		b.StopTimer()
		if _, err := e.svc.Release(ctx, "alice@acme.example", l.ID); err != nil {
			b.Fatal(err)
		}
		e.waitJob(l.Ref, "CANCELLED", "COMPLETED")
		time.Sleep(time.Second) // let slurmctld settle, as on a cluster where requests are apart
		b.StartTimer()
	}
	slices.Sort(toRunning)
	slices.Sort(toReply)
	pct := func(d []time.Duration, p float64) float64 {
		return float64(d[min(len(d)-1, int(p*float64(len(d))))].Milliseconds())
	}
	b.ReportMetric(pct(toRunning, 0.5), "p50-ms-to-RUNNING")
	b.ReportMetric(pct(toRunning, 0.9), "p90-ms-to-RUNNING")
	b.ReportMetric(float64(toRunning[len(toRunning)-1].Milliseconds()), "max-ms-to-RUNNING")
	b.ReportMetric(pct(toReply, 0.5), "p50-ms-to-reply")
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now().UTC() }

// BenchmarkReconcile5000 is one reconcile pass with 5,000 active leases in SQLite and 5,000
// running jobs in squeue --json. squeue is stubbed with 5,000 copies of a real job record from
// testdata (starting 5,000 jobs on the two-core test machine is not practical), so the figure is
// the service's side of a pass: reading the leases, parsing squeue's JSON and matching them;
// the real squeue's own time on such a cluster comes on top.
func BenchmarkReconcile5000(b *testing.B) {
	const n = 5000
	p := examplePolicy(b)
	clock := sim.NewClock(time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC))
	st := storetest.Open(b, storetest.SQLite(b))
	ctx := context.Background()
	err := st.Update(ctx, nil, func(tx qm.Tx) error {
		for i := 1; i <= n; i++ {
			now := clock.Now()
			l := &qm.Lease{User: "alice@acme.example", Team: "vision", Class: "train", GPUs: 1, Duration: 72 * time.Hour,
				State: qm.Active, Node: "vm", Ref: fmt.Sprint(1000 + i), CreatedAt: now, StartedAt: now, ExpiresAt: now.Add(72 * time.Hour)}
			if err := tx.CreateLease(ctx, l); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	out := squeueOf(b, n)
	backend, err := slurm.New(slurm.Config{Policy: p, Catalog: testCatalog(b), Workload: workload.Settings{DefaultTemplate: "sleeper"},
		Run: func(_ context.Context, _ []byte, name string, _ ...string) ([]byte, error) {
			if name != "squeue" {
				return nil, fmt.Errorf("unexpected %s", name)
			}
			return out, nil
		}})
	if err != nil {
		b.Fatal(err)
	}
	svc := &qm.Service{Policy: p, Store: st, Backend: backend, Clock: clock, Directory: p}
	for b.Loop() {
		rep, err := svc.Reconcile(ctx)
		if err != nil || rep.Leases != n || rep.Jobs != n || rep.Activated+rep.Vanished+rep.Cancelled+rep.Retimed != 0 {
			b.Fatalf("%v, %v", rep, err)
		}
	}
	b.ReportMetric(float64(len(out))/1e6, "MB-of-squeue-JSON")
}

// squeueOf is squeue --json output with n running jobs of this service: the running job of
// testdata/squeue-22.05.json, copied with job ids 1001… and comments qm:L-1….
func squeueOf(b *testing.B, n int) []byte {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal([]byte(fixture(b)), &doc); err != nil {
		b.Fatal(err)
	}
	var jobs []map[string]any
	if err := json.Unmarshal(doc["jobs"], &jobs); err != nil {
		b.Fatal(err)
	}
	var tmpl map[string]any
	for _, j := range jobs {
		if j["job_state"] == "RUNNING" && strings.HasPrefix(j["comment"].(string), "qm:") {
			tmpl = j
			break
		}
	}
	all := make([]map[string]any, n)
	for i := range all {
		j := make(map[string]any, len(tmpl))
		for k, v := range tmpl {
			j[k] = v
		}
		j["job_id"], j["comment"], j["time_limit"] = 1001+i, fmt.Sprintf("qm:L-%d", i+1), 72*60
		all[i] = j
	}
	raw, err := json.Marshal(all)
	if err != nil {
		b.Fatal(err)
	}
	doc["jobs"] = raw
	out, err := json.Marshal(doc)
	if err != nil {
		b.Fatal(err)
	}
	return out
}

// BenchmarkRefreshInventory1000 is one inventory refresh on a 1,000-node cluster: parsing sinfo
// -N --json and the service's 500 running jobs from squeue, and mapping the nodes to the example
// policy's classes. sinfo is stubbed with 1,000 copies of the real node record of
// testdata/sinfo-22.05.json (gpu0001…gpu1000: 600 h100 nodes in train, 300 l40s nodes in
// interactive, 100 with both, 20 drained), squeue with 500 one-GPU jobs, so the figure is the
// service's side; the real commands' own time on such a cluster comes on top.
func BenchmarkRefreshInventory1000(b *testing.B) {
	const n = 1000
	out := sinfoOf(b, n)
	// The service's own running jobs: one on each of the first 500 nodes.
	var ownJobs strings.Builder
	for i := 1; i <= 500; i++ {
		fmt.Fprintf(&ownJobs, "gpu%04d|gres:gpu:h100:1|qm:L-%d\n", i, i)
	}
	own := []byte(ownJobs.String())
	backend, err := slurm.New(slurm.Config{Policy: examplePolicy(b), Catalog: testCatalog(b), Workload: workload.Settings{DefaultTemplate: "sleeper"},
		Run: func(_ context.Context, _ []byte, name string, _ ...string) ([]byte, error) {
			switch name {
			case "sinfo":
				return out, nil
			case "squeue":
				return own, nil
			}
			return nil, fmt.Errorf("unexpected %s", name)
		}})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for b.Loop() {
		if err := backend.RefreshInventory(ctx); err != nil {
			b.Fatal(err)
		}
	}
	if got := len(backend.Inventory()); got != 1080 { // 980 usable nodes, 100 of them in both classes
		b.Fatalf("inventory of %d entries", got)
	}
	b.ReportMetric(float64(len(out))/1e6, "MB-of-sinfo-JSON")
}

// sinfoOf is sinfo -N --json output with n GPU nodes made from the real node of
// testdata/sinfo-22.05.json.
func sinfoOf(b *testing.B, n int) []byte {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal([]byte(readFixture(b, "sinfo-22.05.json")), &doc); err != nil {
		b.Fatal(err)
	}
	var nodes []map[string]any
	if err := json.Unmarshal(doc["nodes"], &nodes); err != nil {
		b.Fatal(err)
	}
	tmpl := nodes[0] // vm, as Slurm printed it
	all := make([]map[string]any, n)
	for i := range all {
		nd := make(map[string]any, len(tmpl))
		for k, v := range tmpl {
			nd[k] = v
		}
		name := fmt.Sprintf("gpu%04d", i+1)
		nd["name"], nd["hostname"], nd["address"] = name, name, name
		switch {
		case i%10 < 6:
			nd["partitions"], nd["gres"], nd["gres_used"] = []string{"train"}, "gpu:h100:8(S:0-1)", fmt.Sprintf("gpu:h100:%d(IDX:0-%d)", i%8+1, i%8)
		case i%10 < 9:
			nd["partitions"], nd["gres"], nd["gres_used"] = []string{"interactive"}, "gpu:l40s:4", "gpu:l40s:0(IDX:N/A)"
		default:
			nd["partitions"] = []string{"interactive", "train"}
		}
		if i%50 == 10 { // 20 train nodes drained
			nd["state"], nd["state_flags"] = "idle", []string{"DRAIN"}
		}
		all[i] = nd
	}
	raw, err := json.Marshal(all)
	if err != nil {
		b.Fatal(err)
	}
	doc["nodes"] = raw
	out, err := json.Marshal(doc)
	if err != nil {
		b.Fatal(err)
	}
	return out
}

// BenchmarkRefreshInventoryTestCluster is one inventory refresh against the real one-node test
// cluster: mostly the cost of running sinfo -N --json and slurmctld answering it.
func BenchmarkRefreshInventoryTestCluster(b *testing.B) {
	e := newEnv(b)
	ctx := context.Background()
	for b.Loop() {
		if err := e.backend.RefreshInventory(ctx); err != nil {
			b.Fatal(err)
		}
	}
	if len(e.backend.Inventory()) != 2 {
		b.Fatalf("inventory %+v", e.backend.Inventory())
	}
}
