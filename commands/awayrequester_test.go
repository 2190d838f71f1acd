package commands

import (
	"context"
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/qm"
)

// without is a directory that no longer knows one person.
type without struct {
	qm.Directory
	gone string
}

func (d without) Groups(ctx context.Context, user string) ([]string, bool) {
	if qm.SameUser(user, d.gone) {
		return nil, false
	}
	return d.Directory.Groups(ctx, user)
}

// A request whose requester left the directory while it waited starts no lease when approved:
// the approval is refused saying why, and the request still waits.
func TestApprovingARequestOfSomeoneNoLongerInTheDirectory(t *testing.T) {
	h := newHarnessOn(t, "testdata/orbit.yaml")
	id := leaseIn(t, mustOK(t, h.say("kim@orbit.example", "/gpu request 1 duo for 20h")).Text)
	h.svc.Directory = without{Directory: h.svc.Directory, gone: "kim@orbit.example"}
	r := h.say("ria@orbit.example", "/gpu approve "+id.String())
	if !r.Error || !strings.Contains(r.Text, "kim@orbit.example is no longer in the directory") {
		t.Errorf("approval: %q", r.Text)
	}
	if l, _ := h.svc.Get(context.Background(), id); l.State != qm.PendingApproval {
		t.Fatalf("the request is %s", l.State)
	}
	// Denying it still works.
	if r := h.say("ria@orbit.example", "/gpu deny "+id.String()+" gone"); r.Error {
		t.Errorf("denial: %q", r.Text)
	}
}
