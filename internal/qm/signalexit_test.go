package qm_test

import (
	"context"
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/qm"
)

// A job killed by a signal (its node failed and Slurm sent SIGTERM to its processes) is reported
// as killed by that signal, never as "exit code signal 15", a code it never exited with.
func TestFailedJobKilledBySignalSaysSo(t *testing.T) {
	svc, f, _, notes := schedService(t, qm.Started{State: qm.Active, Node: "gpu01"})
	ctx := context.Background()
	l := mustRequest(t, svc, "alice@acme.example", 1, "train")
	f.mu.Lock()
	for i := range f.jobs {
		if f.jobs[i].Ref == l.Ref {
			f.jobs[i].State, f.jobs[i].Reason, f.jobs[i].ExitCode = qm.JobFailed, "its node failed (Slurm: NODE_FAIL, NodeDown)", "signal 15"
		}
	}
	f.mu.Unlock()
	if _, err := svc.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	got := mustGet(t, svc, l.ID)
	if got.State != qm.Failed || strings.Contains(got.Reason, "exit code signal") || !strings.Contains(got.Reason, "killed by signal 15") {
		t.Errorf("lease %s is %s because %q; want failed, saying it was killed by signal 15", got.ID, got.State, got.Reason)
	}
	if k := notes.Kinds(l.ID); len(k) != 1 || k[0] != qm.NoticeFailed {
		t.Errorf("notices %v, want one that it failed", k)
	}
}
