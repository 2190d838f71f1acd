package commands

import (
	"os"
	"path/filepath"
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

// A submit the cluster cannot hold is refused with an example of the same template on the class
// named, with as many GPUs as that class holds, which works.
func TestSubmitBeyondTheClusterShowsThatTemplatesExample(t *testing.T) {
	h := templatesOn(t, mixedNodes)
	r := h.say("tuuli@kestrel.example", "/gpu submit pytorch-ddp class=mi-250x-4 gpus=18")
	if !strings.Contains(r.Text, "The cluster has only 16 mi-250x-4 GPUs") {
		t.Fatalf("18 of 16 GPUs: %q", r.Text)
	}
	ex := exampleIn(t, r)
	if !strings.HasPrefix(ex, "/gpu submit pytorch-ddp ") || !strings.Contains(ex, "class=mi-250x-4 gpus=16") {
		t.Errorf("the example %q, want one of pytorch-ddp on the 16 GPUs of class mi-250x-4", ex)
	}
	mustOK(t, h.say("tuuli@kestrel.example", ex))
}

// Without class=, a multi-node template goes where its own default is granted without approval:
// on a class of 4-GPU nodes that gives 8 GPUs to nnodes=2 at once, not to a class of 6-GPU nodes
// listed first where 12 GPUs (sized by the cluster's largest node) need a budget owner. The
// preview of /gpu template shows the same lease.
func TestSubmitWithoutAClassGoesWhereItsNodesAreGrantedAtOnce(t *testing.T) {
	h := templatesOn(t, mixedNodes)
	for _, user := range []string{"tuuli@kestrel.example", "ritva@kestrel.example"} {
		ask := "/gpu submit pytorch-ddp nnodes=2 script=train.py"
		r := h.say(user, ask)
		if r.Error {
			t.Errorf("%s by %s: refused: %s", ask, user, r.Text)
			continue
		}
		l := h.lease(leaseIn(t, r.Text))
		if l.GPUs != 8 || l.Class != "mi-250x-4" {
			t.Errorf("%s by %s: %d × %s, want 8 × mi-250x-4", ask, user, l.GPUs, l.Class)
		}
		if strings.Contains(r.Text, "approval") {
			t.Errorf("%s by %s waits for approval: %s", ask, user, r.Text)
		}
	}
	r := mustOK(t, h.say("tuuli@kestrel.example", "/gpu template pytorch-ddp"))
	if title := r.Sections[0].Title; !strings.Contains(title, ": 8 × mi-250x-4 ") {
		t.Errorf("/gpu template pytorch-ddp previews %q, want 8 × mi-250x-4", title)
	}
	if !strings.Contains(r.Sections[0].Text, "--partition=amd-big") || !strings.Contains(r.Sections[0].Text, "gpu:mi250x:4") {
		t.Errorf("/gpu template pytorch-ddp's Slurm script is not for 4-GPU mi-250x-4 nodes:\n%s", r.Sections[0].Text)
	}
}

// /gpu templates says how many GPUs a node of this cluster gives a multi-node template, for the
// class it would go to, not the template's own default (8) that no node here holds.
func TestTemplateListSaysWhatThisClustersNodesHold(t *testing.T) {
	h := templatesOn(t, mixedNodes)
	r := mustOK(t, h.say("tuuli@kestrel.example", "/gpu templates"))
	seen := false
	for _, s := range r.Sections {
		if !strings.HasPrefix(s.Title, "pytorch-ddp ") {
			continue
		}
		seen = true
		if strings.Contains(s.Text, "8 GPUs per node") || !strings.Contains(s.Text, "4 GPUs per node (a whole mi-250x-4 node)") {
			t.Errorf("/gpu templates on 4- and 6-GPU nodes says of pytorch-ddp: %s", s.Text)
		}
	}
	if !seen {
		t.Fatalf("/gpu templates does not list pytorch-ddp:\n%s", r.PlainText())
	}
	r = mustOK(t, h.say("tuuli@kestrel.example", "/gpu template pytorch-ddp"))
	if strings.Contains(r.Text, "8 GPUs per node") || !strings.Contains(r.Text, "4 GPUs per node") {
		t.Errorf("/gpu template pytorch-ddp on 4- and 6-GPU nodes: %s", r.Text)
	}
}

// A team with no quota in the class that would grant a template at once goes on to the next class
// it has quota in, asking there for what that class's nodes hold: 18 × a40-6 for nnodes=3 on
// 6-GPU nodes (for a budget owner to approve), not the 12 sized for the other class's nodes.
func TestSubmitWithoutAClassAsksEachClassForWhatItsNodesHold(t *testing.T) {
	b, err := os.ReadFile(mixedNodes)
	if err != nil {
		t.Fatal(err)
	}
	src := strings.Replace(string(b), "quota: {gpus: {a40-6: 4, mi-250x-4: 8}", "quota: {gpus: {a40-6: 18, mi-250x-4: 0}", 1)
	file := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	h := templatesOn(t, file)
	r := mustOK(t, h.say("ritva@kestrel.example", "/gpu submit pytorch-ddp nnodes=3 script=train.py"))
	if l := h.lease(leaseIn(t, r.Text)); l.GPUs != 18 || l.Class != "a40-6" {
		t.Errorf("bio-3d (no mi-250x-4 quota): %d × %s, want 18 × a40-6: %s", l.GPUs, l.Class, r.Text)
	}
}
