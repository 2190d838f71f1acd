package commands

import (
	"context"
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
	if !got.Error || strings.Contains(got.Text, "There is no request") ||
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

// The fallback approvers, who decide a waiting request whose team the policy no longer lists,
// are sent its approval card when the service starts on the new policy, once: a later start
// sends it again to nobody. Approving it says that the team is not in the policy, not quota
// numbers of the old name under the default quota.
func TestTheFallbackApproversAreToldOnceOfARequestOfATeamThePolicyNoLongerHas(t *testing.T) {
	h := newHarnessOn(t, "testdata/harbor.yaml")
	const mere, ops = "mere@harbor.example", "harbor-ops@harbor.example"
	r := mustOK(t, h.say(mere, "/gpu request 3 bench for 2h"))
	id := leaseIn(t, r.Text).String()
	h.notices(ops)
	h.notices("tane@harbor.example")

	h.svc.Policy = renamedHarbor(t) // the service restarted on the new policy
	ctx := context.Background()
	if _, err := h.svc.HandOverUnlistedWaiting(ctx); err != nil {
		t.Fatal(err)
	}
	var card *bot.Reply
	for _, n := range h.notices(ops) {
		if strings.Contains(n.Text, id) {
			card = &n
		}
	}
	if card == nil {
		t.Fatalf("%s was not sent %s's approval card", ops, id)
	}
	if !strings.Contains(card.Text, "Approval needed") || !strings.Contains(card.Text, "team kelp") || !strings.Contains(card.Text, "does not list") {
		t.Errorf("the card sent to %s: %q; want the approval card saying the policy no longer lists team kelp", ops, card.Text)
	}
	approve := false
	for _, a := range card.Actions {
		approve = approve || a.Command == "/gpu approve "+id
	}
	if !approve {
		t.Errorf("the card has no Approve button: %+v", card.Actions)
	}
	if got := h.notices("tane@harbor.example"); len(got) != 0 {
		t.Errorf("tane, who cannot decide it, was told %q", texts(got))
	}

	// Started again: nobody is told again.
	if _, err := h.svc.HandOverUnlistedWaiting(ctx); err != nil {
		t.Fatal(err)
	}
	if again := h.notices(ops); len(again) != 0 {
		t.Errorf("a second start sent %s %q again", ops, texts(again))
	}

	got := mustOK(t, h.say(ops, "/gpu approve "+id))
	if strings.Contains(got.Text, "past its quota") || strings.Contains(got.Text, "of its 1 bench") {
		t.Errorf("approving it answered %q: quota numbers of a team the policy does not list", got.Text)
	}
	if !strings.Contains(strings.ToLower(got.Text), "team kelp is not in the policy") {
		t.Errorf("approving it answered %q; want that team kelp is not in the policy", got.Text)
	}
}
