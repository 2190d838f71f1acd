package commands

import (
	"regexp"
	"strings"
	"testing"

	"github.com/acme/quartermaster/bot"
)

// A request whose GPUs are rounded up to whole nodes (6 of a class whose nodes hold 4 each takes
// 2 nodes, 8 GPUs, billed for 8) says so wherever its GPUs or cost are shown, in the words of
// /gpu estimate: the reply to the request, the approval message, /gpu approvals, the message
// that it was approved, /gpu list and /gpu status. Before, only the estimate told the requester
// that 6 became 8.
func TestWholeNodesRoundingIsToldWhereverTheLeaseIsShown(t *testing.T) {
	h := tokyoHarness(t)
	est := mustOK(t, h.say(haru, "/gpu estimate 6 a100-big for 4h")).Text
	takes := regexp.MustCompile(`takes \d+ whole nodes? of \d+ GPUs = \d+ GPUs`).FindString(est)
	if takes == "" || !strings.Contains(est, "6 × a100-big") {
		t.Fatalf("the estimate does not say how 6 GPUs are rounded up: %q", est)
	}
	says := func(where, text string) {
		t.Helper()
		if !strings.Contains(text, "6 × a100-big") || !strings.Contains(text, takes) {
			t.Errorf("%s: %q; want it to say, as the estimate does, 6 × a100-big %s", where, text, takes)
		}
	}
	r := h.say(haru, "/gpu request 6 a100-big for 4h")
	says("the reply to the request", r.Text)
	says("the request's card", texts([]bot.Reply{r}))
	id := leaseIn(t, r.Text).String()
	for _, n := range h.notices(kenji) {
		if strings.Contains(n.Text, id) {
			says("the approval message", n.Text)
		}
	}
	says("/gpu approvals", texts([]bot.Reply{mustOK(t, h.say(kenji, "/gpu approvals"))}))
	says("/gpu approve", mustOK(t, h.say(kenji, "/gpu approve "+id)).Text)
	var granted string
	for _, n := range h.notices(haru) {
		if strings.Contains(n.Text, id) {
			granted = n.Text
		}
	}
	says("the message that it was approved", granted)
	says("/gpu list", texts([]bot.Reply{mustOK(t, h.say(haru, "/gpu list"))}))
	says("/gpu status", texts([]bot.Reply{mustOK(t, h.say(haru, "/gpu status "+id))}))

	// A request that fills its nodes exactly is not said to be rounded.
	r = h.say(haru, "/gpu request 4 a100-big for 1h")
	if strings.Contains(texts([]bot.Reply{r}), "whole nodes of") {
		t.Errorf("4 GPUs on nodes of 4 are said to be rounded: %q", texts([]bot.Reply{r}))
	}
}
