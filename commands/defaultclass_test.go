package commands

import (
	"context"
	"strings"
	"testing"

	"github.com/acme/quartermaster/bot"
)

// A request or a template job that names no class goes to the first class, in the policy's
// order, in which the team has quota and room, not to the first class when that one is full; when
// no class has room, the refusal names the classes and shows a quota request that is accepted.
func TestARequestWithoutAClassGoesWhereTheTeamHasRoom(t *testing.T) {
	h := templatesOn(t, noRulesPolicy)
	ctx := context.Background()
	classOf := func(r bot.Reply) string {
		t.Helper()
		l, err := h.svc.Get(ctx, leaseIn(t, mustOK(t, r).Text))
		if err != nil {
			t.Fatal(err)
		}
		return l.Class
	}
	// amy's team may hold 2 a100-80gb, 16 h100_sxm and 4 l4 GPUs.
	mustOK(t, h.say("amy@tiny.example", "/gpu request 2 a100-80gb for 30m"))
	if c := classOf(h.say("amy@tiny.example", "/gpu request")); c != "h100_sxm" {
		t.Errorf("/gpu request with a100-80gb full went to %s, want h100_sxm, the next class with room", c)
	}
	// ned's team (the default quota) may hold 1 a100-80gb, no h100_sxm and 1 l4 GPU.
	mustOK(t, h.say("ned@tiny.example", "/gpu request 1 a100-80gb for 30m"))
	if c := classOf(h.say("ned@tiny.example", "/gpu submit cuda-smoke")); c != "l4" {
		t.Errorf("/gpu submit cuda-smoke with a100-80gb full went to %s, want l4", c)
	}
	r := h.say("ned@tiny.example", "/gpu request 1 for 1h")
	if !r.Error || !strings.Contains(r.Text, "1 of 1 a100-80gb") || !strings.Contains(r.Text, "1 of 1 l4") || strings.Contains(r.Text, "h100_sxm") {
		t.Errorf("/gpu request with no class having room: %q, want a refusal naming a100-80gb and l4 as full", r.Text)
	}
	ex := exampleIn(t, r)
	if !strings.HasPrefix(ex, "/gpu quota request +1 a100-80gb because ") {
		t.Errorf("the refusal's example is %q, want a quota request", ex)
	}
	if r := h.say("ned@tiny.example", ex); r.Error || !strings.Contains(r.Text, "will decide") {
		t.Errorf("the example %q: %s", ex, r.Text)
	}
}
