package commands

import (
	"os"
	"strings"
	"testing"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/internal/policy"
)

// renamedHarbor is harbor.yaml with team kelp renamed kelp-lab: the same people, groups and
// budget owner under a new name.
func renamedHarbor(t *testing.T) *policy.Policy {
	t.Helper()
	b, err := os.ReadFile("testdata/harbor.yaml")
	if err != nil {
		t.Fatal(err)
	}
	src := strings.Replace(string(b), "  - name: kelp\n", "  - name: kelp-lab\n", 1)
	p, err := policy.Load([]byte(src), "harbor.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p.Team("kelp"); ok {
		t.Fatal("kelp is still a team")
	}
	return p
}

// A request waiting for approval whose team the policy no longer has (renamed or removed while it
// waited, the service restarted on the new policy) is not stuck: the fallback approvers see it in
// /gpu approvals and decide it, and a budget owner who tries is told in one sentence why they
// cannot and who can, instead of being told there is no such request.
func TestARequestOfATeamThePolicyNoLongerHasIsDecidedByTheFallbackApprovers(t *testing.T) {
	h := newHarnessOn(t, "testdata/harbor.yaml")
	const mere, tane, ops = "mere@harbor.example", "tane@harbor.example", "harbor-ops@harbor.example"
	r := mustOK(t, h.say(mere, "/gpu request 3 bench for 2h"))
	if !strings.Contains(r.Text, "waits for approval") {
		t.Fatalf("3 bench GPUs did not wait for approval: %s", r.Text)
	}
	id := leaseIn(t, r.Text).String()

	h.svc.Policy = renamedHarbor(t) // the service restarted on the new policy

	got := h.say(tane, "/gpu approve "+id)
	if !got.Error || strings.Contains(got.Text, "there is no request") ||
		!strings.Contains(got.Text, "team kelp") || !strings.Contains(got.Text, "does not list") || !strings.Contains(got.Text, ops) {
		t.Errorf("tane, budget owner of the renamed team, is told %q; want why they cannot decide %s and that %s can", got.Text, id, ops)
	}
	if st := h.say(tane, "/gpu status "+id); st.Error && strings.Contains(got.Text, "/gpu status") {
		t.Errorf("the refusal's example /gpu status %s is refused too: %s", id, st.Text)
	}
	if !strings.Contains(texts([]bot.Reply{h.say(ops, "/gpu approvals")}), id) {
		t.Errorf("%s is not among the fallback approver's approvals", id)
	}
	if got := mustOK(t, h.say(ops, "/gpu approve "+id)); !strings.Contains(got.Text, "Approved "+id) {
		t.Errorf("the fallback approver's approval answered %q", got.Text)
	}
}
