package ingest

import (
	"testing"

	"github.com/acme/quartermaster/internal/qm"
)

// A lease's node list is read as Slurm writes it: its GPUs are shared among every node the list
// names, a list with several bracket groups included, and a name the list does not read as a
// number (a sign is not one) is no node of it.
func TestNodeShareOfSlurmHostLists(t *testing.T) {
	for _, c := range []struct {
		nodes, node string
		gpus, want  int
	}{
		{"rack[1-2]-n[01-02]", "rack2-n02", 4, 1},
		{"rack[1-2]-n[01-02]", "rack1-n01", 5, 2},
		{"gpu[1-2]-ib", "gpu2-ib", 4, 2},
		{"n[08-11]", "n09", 8, 2},
		{"n[08-11]", "n9", 8, 1}, // not in the list: what its processes show, 1
		{"n[+1],n2", "n01", 4, 1},
		{"n[+1],n2", "n1", 4, 1},
	} {
		l := &qm.Lease{ID: 1, State: qm.Active, GPUs: c.gpus, Ref: "4801", Node: c.nodes}
		if got := nodeShare(l, c.node, 1); got != c.want {
			t.Errorf("%d GPUs on %s: %s holds %d, want %d", c.gpus, c.nodes, c.node, got, c.want)
		}
	}
}
