package slurm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/acme/quartermaster/internal/slurm"
)

// gpuBackend is a backend whose sinfo is testdata/sinfo-22.05.json and whose squeue --json is
// the given jobs, refreshed once so that it knows the nodes' GPUs.
func gpuBackend(t testing.TB, jobs *atomic.Value) *slurm.Backend {
	t.Helper()
	sinfo := readFixture(t, "sinfo-22.05.json")
	b := stubBackend(t, &stub{reply: func(name string, args []string) (string, error) {
		switch {
		case name == "sinfo":
			return sinfo, nil
		case name == "squeue" && slices.Contains(args, "--json"):
			return jobs.Load().(string), nil
		}
		return "", nil // squeue of the running jobs: none of this service's
	}})
	if err := b.RefreshInventory(context.Background()); err != nil {
		t.Fatal(err)
	}
	return b
}

// A running job carries the GPUs Slurm gave it on its node, numbered as its class numbers them
// there: Slurm numbers a node's GPUs across their types (gres_detail IDX), the inventory each
// type from 0. Jobs on several nodes, and numbers that do not fit the node, carry none.
func TestRunningJobsCarryTheGPUsSlurmGave(t *testing.T) {
	job := func(lease int, nodes, tres, detail string) string {
		return fmt.Sprintf(`{"job_id": %d, "comment": "qm:L-%d", "job_state": "RUNNING", "nodes": %q, "tres_per_node": %q, "gres_detail": [%s]}`,
			100+lease, lease, nodes, tres, detail)
	}
	jobs := `{"jobs": [` +
		job(1, "gpu5", "gres:gpu:h100:3", `"gpu:h100:3(IDX:0,2-3)"`) + "," + // one type: as Slurm numbers them
		job(2, "gpu10", "gres:gpu:l40s:2", `"gpu:l40s:2(IDX:4-5)"`) + "," + // l40s after gpu10's 4 h100s
		job(3, "vm", "gres:gpu:l40s:1", `"gpu:l40s:1(IDX:8)"`) + "," + // as in testdata/squeue-22.05.json
		job(4, "gpu10", "gres:gpu:2", `"gpu:l40s:2(IDX:4-5)"`) + "," + // an untyped class counts every GPU
		job(5, "gpu[3-4]", "gres:gpu:h100:8", `"gpu:h100:8(IDX:0-7)","gpu:h100:8(IDX:0-7)"`) + "," + // two nodes
		job(6, "gpu10", "gres:gpu:l40s:1", `"gpu:l40s:1(IDX:9)"`) + "," + // gpu10 has l40s at 4-5 only
		job(7, "gpu3", "gres:gpu:h100:1", `"gpu:h100:1(IDX:N/A)"`) +
		`], "errors": []}`
	var doc atomic.Value
	doc.Store(jobs)
	got, err := gpuBackend(t, &doc).Jobs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := map[int][]int{1: {0, 2, 3}, 2: {0, 1}, 3: {0}, 4: {4, 5}}
	if len(got) != 7 {
		t.Fatalf("%d jobs, want 7: %+v", len(got), got)
	}
	for _, j := range got {
		if w := want[int(j.Lease)]; !reflect.DeepEqual(j.GPUIndex, w) {
			t.Errorf("%s on %s: GPUs %v, want %v", j.Lease, j.Node, j.GPUIndex, w)
		}
	}
}

// FuzzJobGPUs: whatever squeue says a job holds, the GPUs a job carries are distinct and within
// its node's GPUs of its class, never a panic.
func FuzzJobGPUs(f *testing.F) {
	f.Add("gpu10", "gres:gpu:l40s:2", "gpu:l40s:2(IDX:4-5)")
	f.Add("gpu5", "gres:gpu:h100:3", "gpu:h100:3(IDX:0,2-3)")
	f.Add("vm", "gres:gpu:2", "gpu:h100:2(IDX:7-9)")
	f.Add("gpu2", "gres/gpu:h100=8", "gpu:h100:8(IDX:0-99999999999)")
	sizes := map[string]int{"vm": 12, "gpu2": 8, "gpu3": 8, "gpu4": 8, "gpu5": 8, "gpu10": 6, "gpu11": 8}
	var doc atomic.Value
	doc.Store(`{"jobs": []}`)
	b := gpuBackend(f, &doc)
	f.Fuzz(func(t *testing.T, node, tres, detail string) {
		data, _ := json.Marshal(map[string]any{"jobs": []map[string]any{{"job_id": 9, "comment": "qm:L-9", "job_state": "RUNNING",
			"nodes": node, "tres_per_node": tres, "gres_detail": []string{detail}}}})
		doc.Store(string(data))
		jobs, err := b.Jobs(context.Background())
		if err != nil || len(jobs) == 0 {
			return
		}
		idx := jobs[0].GPUIndex
		seen := map[int]bool{}
		for _, g := range idx {
			if g < 0 || g >= sizes[node] || seen[g] {
				t.Fatalf("node %q tres %q detail %q: GPUs %v", node, tres, detail, idx)
			}
			seen[g] = true
		}
	})
}
