package commands

import (
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/templates"
)

// A lease not running yet tells its owner what message will come: for a workspace, how to
// connect; for a batch job, which has nothing to connect to, a message when it starts and one
// when it ends, and where its output goes. It holds for every template of the catalog, by kind.
func TestNotRunningYetSaysWhatMessageComesPerTemplateKind(t *testing.T) {
	h := templateHarness(t)
	for _, tp := range h.bot.Templates.Catalog.List() {
		for _, st := range []qm.State{qm.Provisioning, qm.Queued} {
			l := &qm.Lease{ID: 7, User: "alice@acme.example", Team: "vision", Class: "train", GPUs: 1, Duration: 3600e9, Template: tp.Name, State: st, Reason: "waiting in the scheduler's queue: Resources"}
			s := h.bot.grantedText(l)
			connect := strings.Contains(s, "how to connect")
			switch tp.Kind {
			case templates.KindBatch:
				if connect || !strings.Contains(s, "a message when it starts and another when it ends") || !strings.Contains(s, ".quartermaster/L-7") {
					t.Errorf("batch template %s, %s: %q; want a message when it starts and when it ends, and where its output goes", tp.Name, st, s)
				}
			default:
				if !connect {
					t.Errorf("workspace template %s, %s: %q; want how to connect", tp.Name, st, s)
				}
			}
		}
	}
}
