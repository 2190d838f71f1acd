//go:build cgo

package agent_test

import (
	"context"
	"regexp"
	"testing"

	"github.com/acme/quartermaster/agent"
)

// Each start of the agent is a new run: its reports carry the run's id, which the service needs
// with the sequence number to tell a report sent again from a new one; a restarted agent numbers
// its reports from 1 again under another run.
func TestEachStartOfTheAgentIsANewRun(t *testing.T) {
	first, _, d := newFakeAgent(t, "dgxh100", "* 30", agent.LabelsDCGM)
	r1, err := first.Collect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	r2, err := first.Collect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	id := regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	if !id.MatchString(r1.Run) || r2.Run != r1.Run || r2.Seq != r1.Seq+1 {
		t.Fatalf("one run's reports: run %q seq %d, then run %q seq %d", r1.Run, r1.Seq, r2.Run, r2.Seq)
	}
	again, err := agent.New(agent.Config{Node: "dgx-01", Devices: d, Cgroups: agent.Cgroups{ProcRoot: "testdata/proc"}})
	if err != nil {
		t.Fatal(err)
	}
	r3, err := again.Collect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if r3.Seq != 1 || r3.Run == r1.Run || !id.MatchString(r3.Run) {
		t.Errorf("the restarted agent's first report: run %q seq %d; want a new run (not %q), seq 1", r3.Run, r3.Seq, r1.Run)
	}
}
