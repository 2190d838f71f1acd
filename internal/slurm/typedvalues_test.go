package slurm_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/commands"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/workload"
)

// A template parameter typed in chat reaches the Slurm job as it was typed: a quoted value's
// spaces as they were (two stay two), quotes inside it (escaped with a backslash, or of the
// other kind), and shell syntax as plain text, never run.
func TestTypedValuesReachTheJobAsTyped(t *testing.T) {
	e := newEnv(t)
	b := &commands.Bot{Svc: e.svc}
	commands.AddTemplates(b, testCatalog(t), workload.Settings{DefaultTemplate: "sleeper"})
	if err := os.MkdirAll(filepath.Join(e.svc.Policy.Teams[0].Storage.Path, "in"), 0o755); err != nil {
		t.Fatal(err)
	}
	for typed, want := range map[string]string{
		`note="it's a \"big\" $(id) test"`: `it's a "big" $(id) test`,
		`note=“dos  espacios”`:             "dos  espacios",
		`note='single "x"  y'`:             `single "x"  y`,
	} {
		rs := b.Handle(context.Background(), bot.Request{User: "alice@acme.example", Text: "/gpu submit probe " + typed + " class=train for=10m"})
		if len(rs) == 0 || rs[0].Error {
			t.Errorf("%s: %+v", typed, rs)
			continue
		}
		var id qm.LeaseID
		for _, w := range strings.Fields(rs[0].Text) {
			if l, err := qm.ParseLeaseID(strings.Trim(w, ".,")); err == nil {
				id = l
				break
			}
		}
		probe := filepath.Join(e.svc.Policy.Teams[0].Storage.Path, ".quartermaster", id.String(), "probe.txt")
		var lines []string
		e.eventually("probe.txt of "+id.String(), func() bool {
			data, err := os.ReadFile(probe)
			lines = strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
			return err == nil
		})
		if got := lines[len(lines)-1]; got != want {
			t.Errorf("%s: the job got note %q, want %q", typed, got, want)
		}
	}
}
