package commands

import (
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/qm"
)

// A multi-node template whose nnodes asks for two nodes runs on a class that has two nodes, not
// on the class of the largest node when that class has only one: on a cluster of one node of 7
// MIG slices and three H200 nodes of 6, /gpu submit jax nnodes=2 runs on 2 nodes of 6 H200s, and
// /gpu template jax previews it there.
func TestAMultiNodeTemplateRunsOnAClassWithEnoughNodes(t *testing.T) {
	h := templatesOn(t, kolkataPolicy) // mig-1g: 1 node of 7; h200-x6: 3 nodes of 6
	r := h.say("ayu@kestrel.example", "/gpu submit jax nnodes=2 for=2h")
	mustOK(t, r)
	if !strings.Contains(r.Text, "(template jax v1)") {
		t.Fatalf("submit: %q", r.Text)
	}
	l, err := h.svc.Get(t.Context(), leaseIn(t, r.Text[strings.Index(r.Text, "lease "):]))
	if err != nil {
		t.Fatal(err)
	}
	if l.Class != "h200-x6" || l.GPUs != 12 {
		t.Errorf("jax on 2 nodes: %d × %s, want 12 × h200-x6 (2 nodes of 6)", l.GPUs, l.Class)
	}
	// The same job again while the first waits would be answered with the first: it is withdrawn.
	mustOK(t, h.say("ayu@kestrel.example", "/gpu cancel "+l.ID.String()))
	r = h.say("ayu@kestrel.example", "/gpu submit jax gpus=12 nnodes=2 for=2h")
	mustOK(t, r)
	if !strings.Contains(r.Text, "(template jax v1)") {
		t.Fatalf("submit gpus=12: %q", r.Text)
	}
	p := mustOK(t, h.say("ayu@kestrel.example", "/gpu template jax"))
	if !strings.Contains(p.Sections[0].Title, "12 × h200-x6") || !strings.Contains(p.Sections[0].Text, "#SBATCH --nodes=2") {
		t.Errorf("preview: %q", p.Sections[0].Title)
	}
	// On one node it goes to the first class that grants it at once, as its nodes hold it: two
	// A6000s (the 7 MIG slices would wait for a budget owner, past mig-1g's 3 without approval).
	r = h.say("ayu@kestrel.example", "/gpu submit jax for=2h")
	mustOK(t, r)
	if l, err := h.svc.Get(t.Context(), leaseIn(t, r.Text[strings.Index(r.Text, "lease "):])); err != nil || l.Class != "a6000-2x" || l.GPUs != 2 || l.State != qm.Active {
		t.Errorf("jax on 1 node: %v %v; want 2 × a6000-2x, granted at once", l, err)
	}
}
