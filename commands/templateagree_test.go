package commands

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/workload"
)

// A multi-node template given nnodes runs on that many nodes, as --nodes does in Slurm: the
// lease's node list, the GPUs it is billed for and the job the scheduler gets agree on nnodes
// nodes with as many GPUs on each, and where that is more GPUs than gpus= asked, the reply says so.
func TestAnNnodesGivenIsTheNodesOfTheLeaseAndOfItsJob(t *testing.T) {
	for _, tc := range []struct {
		ask   string
		asked int
		nodes int
		class string
	}{
		{"jax gpus=2 nnodes=2", 2, 2, "duo"},
		{"jax class=quad gpus=8 nnodes=4", 8, 4, "quad"},
		{"pytorch-ddp class=quad gpus=12 nnodes=3 script=ddp.py", 12, 3, "quad"},
	} {
		h := templatesOn(t, orbitPolicy)
		r := mustOK(t, h.say("kim@orbit.example", "/gpu submit "+tc.ask))
		id := leaseIn(t, r.Text[strings.Index(r.Text, "lease "):])
		if l := h.lease(id); l.State == qm.PendingApproval {
			mustOK(t, h.say("ria@orbit.example", "/gpu approve "+id.String()))
		}
		l := h.lease(id)
		nodes := strings.Split(l.Node, ",")
		if l.State != qm.Active || l.Class != tc.class || len(nodes) != tc.nodes {
			t.Errorf("%s: %s %d × %s on %q, want active on %d %s nodes", tc.ask, l.State, l.GPUs, l.Class, l.Node, tc.nodes, tc.class)
			continue
		}
		w, err := workload.Render(h.bot.Templates.Catalog, h.svc.Policy, l, workload.Settings{NodeSize: h.svc.NodeSize})
		if err != nil {
			t.Errorf("%s: the placed lease does not render: %v", tc.ask, err)
			continue
		}
		s := w.SlurmScript
		if !strings.Contains(s, "#SBATCH --nodes="+strconv.Itoa(tc.nodes)+"\n") || !strings.Contains(s, "#SBATCH --nodelist="+l.Node+"\n") {
			t.Errorf("%s: the job does not run on the lease's %d nodes %s:\n%s", tc.ask, tc.nodes, l.Node, s)
		}
		m := regexp.MustCompile(`#SBATCH --gres=gpu:[a-z0-9]+:(\d+)\n`).FindStringSubmatch(s)
		if m == nil {
			t.Fatalf("%s: no GPUs per node in the job:\n%s", tc.ask, s)
		}
		if per, _ := strconv.Atoi(m[1]); per*tc.nodes != l.GPUs {
			t.Errorf("%s: the job uses %d GPUs on each of %d nodes, the lease is billed for %d", tc.ask, per, tc.nodes, l.GPUs)
		}
		if l.GPUs > tc.asked && !strings.Contains(r.Text, strconv.Itoa(l.GPUs)+" GPUs") {
			t.Errorf("%s: the lease holds %d GPUs, and the reply does not say so: %s", tc.ask, l.GPUs, r.Text)
		}
	}
}

// orbitWithTeam is the orbit policy with a second team, vision, that kim is not in.
func orbitWithTeam(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(orbitPolicy)
	if err != nil {
		t.Fatal(err)
	}
	src := strings.Replace(string(b), "\nexceptions:", `
  - name: vision
    idp_groups: [g-vision]
    budget_owners: [ops@orbit.example]
    quota: {gpus: {duo: 2}, gpu_hours_per_week: 100}
exceptions:`, 1)
	file := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// A /gpu submit refused for its own words (a duration of no time, a word given twice, a team the
// asker is not in) gives an example of the template typed, which is granted when typed, not one
// of another template.
func TestASubmitRefusedForItsWordsGivesAnExampleOfThatTemplate(t *testing.T) {
	for _, ask := range []string{
		"jax for=0", "jax gpus=2 gpus=3", "jax team=vision nnodes=2", "pytorch-ddp for=0m script=a.py",
		"hparam-sweep class=duo class=quad", "jax team=robotics team=robotics",
	} {
		h := templatesOn(t, orbitWithTeam(t))
		r := h.say("kim@orbit.example", "/gpu submit "+ask)
		if !r.Error {
			t.Errorf("%s: granted: %s", ask, r.Text)
			continue
		}
		noLeases(t, h)
		ex := exampleIn(t, r)
		name := strings.Fields(ask)[0]
		if !strings.HasPrefix(ex, "/gpu submit "+name+" ") && ex != "/gpu submit "+name {
			t.Errorf("%s: %q, want an example of %s", ask, r.Text, name)
			continue
		}
		mustOK(t, h.say("kim@orbit.example", ex))
	}
}

// A template that uses no GPU, given gpus=, is told that gpus= does not apply to it, with an
// example without it that is granted, not that the cluster has too few GPUs.
func TestACPUOnlyTemplateGivenGPUsIsToldItUsesNone(t *testing.T) {
	for _, ask := range []string{"data-prep gpus=8", "data-prep gpus=1 input=raw/a output=ds/a", "data-prep workers=4 gpus=2"} {
		h := templatesOn(t, orbitPolicy)
		r := h.say("kim@orbit.example", "/gpu submit "+ask)
		if !r.Error || !strings.Contains(r.Text, "data-prep uses no GPU") || !strings.Contains(r.Text, "gpus=") || strings.Contains(r.Text, "cluster has only") {
			t.Errorf("%s: %q, want a refusal saying data-prep uses no GPU", ask, r.Text)
			continue
		}
		noLeases(t, h)
		ex := exampleIn(t, r)
		if strings.Contains(ex, "gpus=") || !strings.HasPrefix(ex, "/gpu submit data-prep ") {
			t.Errorf("%s: example %q, want data-prep without gpus=", ask, ex)
		}
		for _, w := range strings.Fields(ask)[1:] {
			if !strings.HasPrefix(w, "gpus=") && !strings.Contains(ex, w) {
				t.Errorf("%s: example %q drops %s", ask, ex, w)
			}
		}
		mustOK(t, h.say("kim@orbit.example", ex))
	}
}

// On a class named with class=, more GPUs than the class has are refused with an example on
// that class, with a count of GPUs it holds, which is granted when typed.
func TestTooManyGPUsOnANamedClassKeepsTheClassInTheExample(t *testing.T) {
	for _, tc := range []struct{ ask, class string }{
		{"jax class=duo gpus=8", "duo"},
		{"cuda-smoke class=duo gpus=7 size=2048", "duo"},
		{"pytorch-ddp class=quad gpus=20 script=ddp.py", "quad"},
		{"hparam-sweep class=hex gpus=12 gpus_per_trial=2", "hex"},
		{"jax class=quad gpus=20 nnodes=4", "quad"},
	} {
		h := templatesOn(t, orbitPolicy)
		r := h.say("kim@orbit.example", "/gpu submit "+tc.ask)
		if !r.Error {
			t.Errorf("%s: granted: %s", tc.ask, r.Text)
			continue
		}
		noLeases(t, h)
		ex := exampleIn(t, r)
		if !strings.Contains(ex, "class="+tc.class) || !strings.Contains(ex, "gpus=") {
			t.Errorf("%s: example %q, want class=%s with gpus=", tc.ask, ex, tc.class)
		}
		for _, w := range strings.Fields(tc.ask)[1:] {
			if !strings.HasPrefix(w, "gpus=") && !strings.HasPrefix(w, "nnodes=") && !strings.Contains(ex, w) {
				t.Errorf("%s: example %q drops %s", tc.ask, ex, w)
			}
		}
		r = mustOK(t, h.say("kim@orbit.example", ex))
		if l := h.lease(leaseIn(t, r.Text[strings.Index(r.Text, "lease "):])); l.Class != tc.class {
			t.Errorf("%s: the example %q runs on %s", tc.ask, ex, l.Class)
		}
	}
}

// A refusal whose example changes one parameter keeps the user's other words: jax gpus=12
// nnodes=2 (6 GPUs a node, on nodes of at most 4 where there are two) is shown nnodes=3 with
// gpus=12, and that is granted.
func TestAnExampleThatChangesOneWordKeepsTheOthers(t *testing.T) {
	for _, tc := range []struct{ ask, want string }{
		{"jax gpus=12 nnodes=2 mem_percent=80", "gpus=12"},
		{"hparam-sweep gpus=2 gpus_per_trial=4 trials=8", "gpus=2"},
		{"jax gpus=40 nnodes=2 mem_percent=80", "mem_percent=80"},
	} {
		h := templatesOn(t, orbitPolicy)
		r := h.say("kim@orbit.example", "/gpu submit "+tc.ask)
		if !r.Error {
			t.Errorf("%s: granted: %s", tc.ask, r.Text)
			continue
		}
		noLeases(t, h)
		ex := exampleIn(t, r)
		if !strings.Contains(ex, tc.want) {
			t.Errorf("%s: example %q drops %s", tc.ask, ex, tc.want)
		}
		for _, w := range strings.Fields(tc.ask)[1:] {
			k, _, _ := strings.Cut(w, "=")
			if !strings.Contains(ex, k+"=") {
				t.Errorf("%s: example %q drops %s", tc.ask, ex, w)
			}
		}
		mustOK(t, h.say("kim@orbit.example", ex))
	}
}

// A sweep whose trials each take more GPUs than any node holds is refused naming the largest
// node (class hex, 6), not the policy's first class; its example is granted when typed.
func TestASweepTrialLargerThanAnyNodeSaysTheLargestNode(t *testing.T) {
	for _, ask := range []string{"hparam-sweep gpus_per_trial=8", "hparam-sweep gpus=8 gpus_per_trial=8 trials=4", "hparam-sweep gpus=16 gpus_per_trial=7"} {
		h := templatesOn(t, orbitPolicy)
		r := h.say("kim@orbit.example", "/gpu submit "+ask)
		if !r.Error {
			t.Errorf("%s: granted: %s", ask, r.Text)
			continue
		}
		for _, want := range []string{"gpus_per_trial", "6 GPUs", "hex"} {
			if !strings.Contains(r.Text, want) {
				t.Errorf("%s: refusal %q does not say %q", ask, r.Text, want)
			}
		}
		if strings.Contains(r.Text, "duo") || strings.Contains(r.Text, "quad") {
			t.Errorf("%s: refusal %q names a class of smaller nodes", ask, r.Text)
		}
		noLeases(t, h)
		ex := exampleIn(t, r)
		if !strings.Contains(ex, "gpus_per_trial=6") {
			t.Errorf("%s: example %q, want gpus_per_trial=6", ask, ex)
		}
		mustOK(t, h.say("kim@orbit.example", ex))
	}
}

// More refusals of a template's words whose example keeps the user's other words and the class
// named, and is granted when typed: a one-node template given more GPUs than a node of the class
// named holds, gpus= that do not split evenly over nnodes, and gpus= that is no number of GPUs.
func TestRefusalsOfGPUsKeepTheOtherWords(t *testing.T) {
	for _, tc := range []struct {
		ask, says string
		keep      []string
	}{
		{"cuda-smoke class=quad gpus=5 size=2048", "a node of class quad holds 4 GPUs, fewer than the 5 asked for", []string{"class=quad", "gpus=4", "size=2048"}},
		{"jupyterlab class=duo gpus=4", "a node of class duo holds 2 GPUs, fewer than the 4 asked for", []string{"class=duo", "gpus=2"}},
		{"jax gpus=3 nnodes=2 mem_percent=50", "3 GPUs do not split evenly over 2 nodes", []string{"gpus=4", "nnodes=2", "mem_percent=50"}},
		{"jax class=duo gpus=5 nnodes=3", "5 GPUs do not split evenly over 3 nodes", []string{"class=duo", "gpus=6", "nnodes=3"}},
		{"jax nnodes=2 gpus=0 mem_percent=50", "gpus=0 is not a number of GPUs", []string{"nnodes=2", "mem_percent=50"}},
	} {
		h := templatesOn(t, orbitPolicy)
		r := h.say("kim@orbit.example", "/gpu submit "+tc.ask)
		if !r.Error || !strings.Contains(r.Text, tc.says) {
			t.Errorf("%s: %q, want a refusal saying %q", tc.ask, r.Text, tc.says)
			continue
		}
		noLeases(t, h)
		ex := exampleIn(t, r)
		for _, w := range tc.keep {
			if !strings.Contains(ex+" ", " "+w+" ") {
				t.Errorf("%s: example %q, want %s in it", tc.ask, ex, w)
			}
		}
		mustOK(t, h.say("kim@orbit.example", ex))
	}
}
