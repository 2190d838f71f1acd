package qm_test

import (
	"context"
	"slices"
	"testing"

	"github.com/acme/quartermaster/internal/qm"
)

// On a scheduler that picks a node's GPUs itself (Slurm), the GPUs the service chose are a guess:
// a lease shows, from its start, the GPUs the scheduler said its job holds, and none where it
// said none (its job waits in the scheduler's queue), never the guess. A scheduler that starts
// the workspace on the service's choice keeps it.
func TestStartRecordsTheSchedulersGPUs(t *testing.T) {
	for _, c := range []struct {
		name    string
		started qm.Started
		want    func(chosen []int) []int
	}{
		{"running, the scheduler says which", qm.Started{State: qm.Active, PicksGPUs: true, GPUIndex: []int{5, 7}},
			func([]int) []int { return []int{5, 7} }},
		{"queued in the scheduler", qm.Started{State: qm.Queued, Reason: "Slurm: Resources", PicksGPUs: true},
			func([]int) []int { return nil }},
		{"running, the scheduler does not say", qm.Started{State: qm.Active, PicksGPUs: true},
			func([]int) []int { return nil }},
		{"started on the service's choice", qm.Started{State: qm.Active},
			func(chosen []int) []int { return chosen }},
	} {
		t.Run(c.name, func(t *testing.T) {
			svc, f, _, _ := schedService(t, c.started)
			f.nodes = exampleNodes()
			if _, err := svc.Reconcile(context.Background()); err != nil {
				t.Fatal(err)
			}
			l := mustRequest(t, svc, "alice@acme.example", 2, "train")
			if len(f.started) != 1 || len(f.started[0].GPUIndex) != 2 {
				t.Fatalf("the service placed %+v; want one lease of 2 GPUs on a node", f.started)
			}
			want := c.want(f.started[0].GPUIndex)
			if !slices.Equal(l.GPUIndex, want) {
				t.Errorf("the reply shows GPUs %v; want %v", l.GPUIndex, want)
			}
			if got := mustGet(t, svc, l.ID); !slices.Equal(got.GPUIndex, want) {
				t.Errorf("the lease records GPUs %v; want %v", got.GPUIndex, want)
			}
		})
	}
}
