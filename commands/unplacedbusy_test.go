package commands

import (
	"context"
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/qm"
)

// The platform channel's notice of a lease with no process on any GPU while a GPU of its node is
// busy with no job's process says what such a process can be now that the node agent lists
// graphics and MPS client processes with their jobs: one it could not map to its job (no host PID
// namespace, /proc mounted with hidepid), one outside any job, or a graphics or MPS client only
// where the driver does not list those.
func TestABusyGPUWithNoJobsProcessIsExplainedAsItIsNow(t *testing.T) {
	h := newLabHarness(t)
	id := leaseIn(t, mustOK(t, h.say("anna@lab.example", "/gpu request 1 notebook for 2h")).Text)
	rs := h.bot.RenderNotice(context.Background(), qm.Notice{Kind: qm.NoticeTelemetryMissing, To: []string{"#gpu-platform"}, Lease: h.lease(id), Reason: qm.UnjudgedUnplacedBusy})
	if len(rs) != 1 {
		t.Fatalf("want one notice, got %q", texts(rs))
	}
	text := rs[0].Text
	if strings.Contains(text, "(a graphics or MPS client") {
		t.Errorf("%q; want graphics and MPS clients blamed only where the driver does not list them", text)
	}
	for _, want := range []string{"PID namespace", "hidepid", "outside any job", "driver that does not list them", "cannot be told whose work"} {
		if !strings.Contains(text, want) {
			t.Errorf("%q; want it to say %q", text, want)
		}
	}
	if strings.Count(text, ". ") > 0 {
		t.Errorf("%q; want one sentence", text)
	}
}
