package commands

import (
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
