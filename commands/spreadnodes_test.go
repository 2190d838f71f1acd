package commands

import (
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/qm"
)

const orbitPolicy = "testdata/orbit.yaml" // duo: 3 nodes of 2; quad: 4 nodes of 4; hex: 1 node of 6

// noLeases fails when a refused command left a lease behind.
func noLeases(t *testing.T, h *harness) {
	t.Helper()
	ls, err := h.svc.List(t.Context(), qm.LeaseFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) > 0 {
		t.Errorf("a refusal left %d leases, the first %s (%d × %s)", len(ls), ls[0].ID, ls[0].GPUs, ls[0].Class)
	}
}

// A multi-node template asked for more GPUs than a node holds, without nnodes, runs on the whole
// nodes of a class that has enough of them (jax gpus=12: three nodes of 4), as it does where all
// nodes are one size, not refused because the largest node (one of 6) is alone in its class.
func TestAMultiNodeTemplateWithManyGPUsSpreadsOverAClassWithEnoughNodes(t *testing.T) {
	h := templatesOn(t, orbitPolicy)
	r := mustOK(t, h.say("kim@orbit.example", "/gpu submit jax gpus=12"))
	id := leaseIn(t, r.Text[strings.Index(r.Text, "lease "):])
	if l := h.lease(id); l.Class != "quad" || l.GPUs != 12 {
		t.Fatalf("jax gpus=12: %d × %s, want 12 × quad (three nodes of 4)", l.GPUs, l.Class)
	}
	mustOK(t, h.say("ria@orbit.example", "/gpu approve "+id.String()))
	if l := h.lease(id); l.State != qm.Active || len(strings.Split(l.Node, ",")) != 3 {
		t.Errorf("approved jax gpus=12: %s on %q, want active on 3 nodes", l.State, l.Node)
	}
}

// Where no class has the nodes, the refusal says how many nodes the GPUs take on this cluster's
// nodes and gives nnodes in an example that is granted when typed; nothing is made.
func TestAMultiNodeTemplateNoClassHoldsSaysHowManyNodes(t *testing.T) {
	h := templatesOn(t, orbitPolicy)
	r := h.say("kim@orbit.example", "/gpu submit jax gpus=20")
	if !r.Error {
		t.Fatalf("jax gpus=20 on 16 GPUs of 4-GPU nodes: %q", r.Text)
	}
	for _, want := range []string{"20 GPUs", "5 nodes", "quad", "4 nodes", "nnodes="} {
		if !strings.Contains(r.Text, want) {
			t.Errorf("refusal %q does not say %q", r.Text, want)
		}
	}
	if strings.Contains(r.Text, "hex") || strings.Contains(r.Text, "duo") {
		t.Errorf("refusal %q speaks of a class the job would not fit", r.Text)
	}
	noLeases(t, h)
	ex := exampleIn(t, r)
	if !strings.Contains(ex, "nnodes=4") {
		t.Errorf("example %q does not spread over quad's 4 nodes", ex)
	}
	mustOK(t, h.say("kim@orbit.example", ex))
}

// A one-node template asked for more GPUs than any node holds is refused saying so, with the GPUs
// asked for and the largest node (class hex, 6), not that the first class of the policy has too
// few GPUs, nor a count of GPUs nobody asked for; its example is granted when typed.
func TestAOneNodeTemplateBeyondEveryNodeSaysTheLargestNode(t *testing.T) {
	for _, gpus := range []string{"7", "9"} {
		h := templatesOn(t, orbitPolicy)
		r := h.say("kim@orbit.example", "/gpu submit cuda-smoke gpus="+gpus+" size=2048")
		if !r.Error {
			t.Fatalf("cuda-smoke gpus=%s with nodes of at most 6: %q", gpus, r.Text)
		}
		for _, want := range []string{"cuda-smoke runs on one node", "6 GPUs", "hex", gpus} {
			if !strings.Contains(r.Text, want) {
				t.Errorf("refusal %q does not say %q", r.Text, want)
			}
		}
		if strings.Contains(r.Text, "duo") || strings.Contains(r.Text, "quad") {
			t.Errorf("refusal %q speaks of a class with smaller nodes", r.Text)
		}
		noLeases(t, h)
		ex := exampleIn(t, r)
		if !strings.Contains(ex, "gpus=6") || !strings.Contains(ex, "size=2048") {
			t.Errorf("example %q: want gpus=6, keeping size=2048", ex)
		}
		mustOK(t, h.say("kim@orbit.example", ex))
	}
}

// A sweep (an array template) asked for more GPUs than a node holds runs its trials on whole nodes
// of a class with enough of them, each trial on one node (hparam-sweep gpus=8 gpus_per_trial=4:
// two nodes of 4), as templates/README.md says, not refused for the policy's first class.
func TestASweepWithMoreGPUsThanANodeRunsOnWholeNodes(t *testing.T) {
	h := templatesOn(t, orbitPolicy)
	r := mustOK(t, h.say("kim@orbit.example", "/gpu submit hparam-sweep gpus=8 gpus_per_trial=4"))
	id := leaseIn(t, r.Text[strings.Index(r.Text, "lease "):])
	if l := h.lease(id); l.Class != "quad" || l.GPUs != 8 {
		t.Fatalf("hparam-sweep gpus=8: %d × %s, want 8 × quad (two nodes of 4)", l.GPUs, l.Class)
	}
	mustOK(t, h.say("ria@orbit.example", "/gpu approve "+id.String()))
	if l := h.lease(id); l.State != qm.Active || len(strings.Split(l.Node, ",")) != 2 {
		t.Errorf("approved sweep: %s on %q, want active on 2 nodes", l.State, l.Node)
	}
}

// A sweep no class has the nodes for is refused in the cluster's terms, with an example that fits.
func TestASweepNoClassHoldsSaysHowManyNodes(t *testing.T) {
	h := templatesOn(t, orbitPolicy)
	r := h.say("kim@orbit.example", "/gpu submit hparam-sweep gpus=20 gpus_per_trial=2")
	if !r.Error || !strings.Contains(r.Text, "20 GPUs takes 5 nodes of class quad") {
		t.Fatalf("hparam-sweep gpus=20 on 4 nodes of 4: %q", r.Text)
	}
	noLeases(t, h)
	ex := exampleIn(t, r)
	if !strings.Contains(ex, "gpus=16") || !strings.Contains(ex, "gpus_per_trial=2") {
		t.Errorf("example %q: want gpus=16, keeping gpus_per_trial=2", ex)
	}
	mustOK(t, h.say("kim@orbit.example", ex))
}

// On a class named with class=, an nnodes beyond the class's nodes is refused in nodes, with an
// example on that class that is granted when typed, not as GPUs nobody typed with an example that
// leaves the class out.
func TestANamedClassWithTooFewNodesIsToldInNodes(t *testing.T) {
	for _, tc := range []struct{ ask, want, wantEx string }{
		{"jax class=quad nnodes=5", "Class quad has 4 nodes of 4 GPUs, fewer than the 5", "class=quad nnodes=4"},
		{"pytorch-ddp class=duo nnodes=4 script=ddp.py", "Class duo has 3 nodes", "class=duo nnodes=3 script=ddp.py"},
		{"pytorch-ddp class=duo gpus=8 nnodes=4 epochs=3", "Class duo has 3 nodes", "class=duo gpus=6 nnodes=3 epochs=3"},
	} {
		h := templatesOn(t, orbitPolicy)
		r := h.say("kim@orbit.example", "/gpu submit "+tc.ask)
		if !r.Error || !strings.Contains(r.Text, tc.want) {
			t.Errorf("%s: %q, want a refusal saying %q", tc.ask, r.Text, tc.want)
			continue
		}
		noLeases(t, h)
		ex := exampleIn(t, r)
		if !strings.Contains(ex, tc.wantEx) {
			t.Errorf("%s: example %q, want %q", tc.ask, ex, tc.wantEx)
		}
		mustOK(t, h.say("kim@orbit.example", ex))
	}
}

// An nnodes no class has is told as nodes whatever gpus= says, in words that are true: not that
// 1 GPU over 32 nodes puts 1 GPU on each.
func TestAnNnodesNoClassHasIsToldInNodes(t *testing.T) {
	h := templatesOn(t, orbitPolicy)
	r := h.say("kim@orbit.example", "/gpu submit jax gpus=1 nnodes=32")
	if !r.Error || !strings.Contains(r.Text, "jax nnodes=32 needs 32 nodes, and no class has that many") || strings.Contains(r.Text, "1 GPUs") {
		t.Fatalf("jax gpus=1 nnodes=32: %q", r.Text)
	}
	noLeases(t, h)
	mustOK(t, h.say("kim@orbit.example", exampleIn(t, r)))
}
