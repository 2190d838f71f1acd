package commands

import (
	"strings"
	"testing"
)

// mixedNodes has a class of 6-GPU nodes (listed first, 2 GPUs without approval) and a class of
// exclusive 4-GPU nodes (12 without approval).
const mixedNodes = "testdata/mixednodes.yaml"

// A multi-node template submitted to a named class, without gpus=, runs its nodes full as that
// class's nodes hold them: nnodes=2 on 4-GPU nodes is 8 GPUs on 2 nodes, not the 12 a pair of the
// cluster's largest (6-GPU) nodes would hold, which would need 3 nodes of the class named.
func TestSubmitToANamedClassFillsThatClassesNodes(t *testing.T) {
	h := templatesOn(t, mixedNodes)
	for _, tc := range []struct {
		ask   string
		gpus  int
		class string
	}{
		{"/gpu submit pytorch-ddp nnodes=2 class=mi-250x-4 for=2h", 8, "mi-250x-4"},
		{"/gpu submit nccl-allreduce nnodes=3 class=mi-250x-4 for=1h", 12, "mi-250x-4"},
	} {
		r := h.say("tuuli@kestrel.example", tc.ask)
		if r.Error {
			t.Errorf("%s: refused: %s", tc.ask, r.Text)
			continue
		}
		l := h.lease(leaseIn(t, r.Text))
		if l.GPUs != tc.gpus || l.Class != tc.class {
			t.Errorf("%s: %d × %s, want %d × %s", tc.ask, l.GPUs, l.Class, tc.gpus, tc.class)
		}
		if strings.Contains(r.Text, "approval") {
			t.Errorf("%s waits for approval: %s", tc.ask, r.Text)
		}
	}
}

// A submit the cluster cannot hold is refused with an example of the same template, which works.
func TestSubmitBeyondTheClusterShowsThatTemplatesExample(t *testing.T) {
	h := templatesOn(t, mixedNodes)
	r := h.say("tuuli@kestrel.example", "/gpu submit pytorch-ddp class=mi-250x-4 gpus=18")
	if !strings.Contains(r.Text, "the cluster has only 16 mi-250x-4 GPUs") {
		t.Fatalf("18 of 16 GPUs: %q", r.Text)
	}
	ex := exampleIn(t, r)
	if !strings.HasPrefix(ex, "/gpu submit pytorch-ddp ") {
		t.Errorf("the example %q, want one of pytorch-ddp", ex)
	}
	mustOK(t, h.say("tuuli@kestrel.example", ex))
}
