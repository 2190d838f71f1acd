package slurm_test

import (
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
)

// TestQueuedOnADrainedNodeSaysSo: with the only node drained by an administrator (scontrol
// update state=drain), a request waits in Slurm's queue. squeue --json gives such a job the
// reason Resources and says in its description that the nodes are down or drained: the owner
// reads that, not that the GPUs it asks for are in use, which would have them wait for other
// people's jobs to end.
func TestQueuedOnADrainedNodeSaysSo(t *testing.T) {
	e := newEnv(t)
	node := e.nodeName()
	e.slurmCmd("scontrol", "update", "nodename="+node, "state=drain", "reason=qm-test")
	t.Cleanup(func() { e.slurmCmd("scontrol", "update", "nodename="+node, "state=resume") })

	out := e.request("bob@acme.example", 1, "interactive", time.Hour, "", nil)
	var l *qm.Lease
	e.eventually(out.Lease.ID.String()+" to wait with Slurm's reason for the drained node", func() bool {
		l = e.pass(out.Lease.ID)
		return l.State == qm.Queued && l.Ref != "" && strings.Contains(e.job(l.Ref).Reason, "Resources")
	})
	l = e.pass(l.ID)
	if strings.Contains(l.Reason, "in use") || !strings.Contains(l.Reason, "drained") {
		t.Errorf("%s waits on a drained node with the reason %q; want one that says its nodes are drained", l.ID, l.Reason)
	}
}
