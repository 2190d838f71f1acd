package commands

import (
	"context"
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/qm"
)

// leaseCount is how many leases the service holds, in any state.
func (h *harness) leaseCount() int {
	h.t.Helper()
	ls, err := h.svc.List(context.Background(), qm.LeaseFilter{})
	if err != nil {
		h.t.Fatal(err)
	}
	return len(ls)
}

// refusedWithAWorkingExample checks that line is refused in one sentence saying want, with an
// example, and that nothing is made; then that the example works.
func refusedWithAWorkingExample(t *testing.T, h *harness, user, line, want string) {
	t.Helper()
	before := h.leaseCount()
	r := h.say(user, line)
	msg, ex, ok := strings.Cut(r.Text, " Example: ")
	if !r.Error || !ok || !strings.Contains(msg, want) || strings.Contains(msg, ". ") || len(r.Text) > 300 {
		t.Errorf("%.80q: %q; want one sentence saying %q and an example", line, r.Text, want)
		return
	}
	if n := h.leaseCount(); n != before {
		t.Errorf("%.80q was refused but made %d lease(s)", line, n-before)
	}
	if r := h.say(user, ex); r.Error {
		t.Errorf("%.80q: its example %q is refused: %s", line, ex, r.Text)
	}
}

// A request that names its team, template or data class twice, or a submit that gives team=,
// for=, class= or gpus= twice, is refused rather than charged, run or sized by whichever came
// last: someone in two teams who writes "team robotics … team speech" is told, not charged to
// speech.
func TestACommandThatNamesSomethingTwiceIsRefused(t *testing.T) {
	h := templatesOn(t, policyVariant(t, otherPolicy,
		"{user: rita@borealis.example, groups: [grp-robotics]}", "{user: rita@borealis.example, groups: [grp-robotics, grp-speech]}"))
	for line, want := range map[string]string{
		"/gpu request 1 dev for 1h team robotics team speech":                     "names its team twice",
		"/gpu request 1 dev for 1h team speech team speech":                       "names its team twice",
		"/gpu request 1 dev for 1h data open data secret":                         "names its data class twice",
		"/gpu request 1 dev for 1h template jupyterlab template ssh-shell":        "names its template twice",
		"/gpu submit cuda-smoke team=robotics team=speech":                        "gives team= twice",
		"/gpu submit cuda-smoke for=1h for=2h":                                    "gives for= twice",
		"/gpu submit cuda-smoke class=dev class=bigiron":                          "gives class= twice",
		"/gpu submit cuda-smoke gpus=1 gpus=2":                                    "gives gpus= twice",
		"/gpu request 1 dev for 1h template cuda-smoke team speech team robotics": "names its team twice",
	} {
		refusedWithAWorkingExample(t, h, "rita@borealis.example", line, want)
	}
}
