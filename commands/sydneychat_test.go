package commands

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/internal/qm"
)

// actionFor is the command of the button of r whose label starts with label, or "".
func actionFor(r bot.Reply, label string) string {
	for _, a := range r.Actions {
		if strings.HasPrefix(a.Label, label) {
			return a.Command
		}
	}
	return ""
}

// /gpu status of a lease under an idle warning offers Keep, as the warning does, and the button
// works when pressed; a lease that is not warned offers none.
func TestStatusOfAnIdleWarnedLeaseOffersKeep(t *testing.T) {
	for _, tc := range []struct{ policy, user, request string }{
		{sydneyPolicy, "ravi@wattle.example", "/gpu request 1 notebook for 3h"},
		{"../docs/quartermaster.example.yaml", "alice@acme.example", "/gpu request 1 interactive for 4h"},
	} {
		h := newHarnessOn(t, tc.policy)
		id := leaseIn(t, mustOK(t, h.say(tc.user, tc.request)).Text)
		if k := actionFor(h.say(tc.user, "/gpu status "+id.String()), "Keep"); k != "" {
			t.Errorf("%s: status of a lease that is not idle offers Keep (%s)", tc.policy, k)
		}
		h.sim.SetUtilization(h.lease(id), 0)
		for i := 0; i < 48 && h.lease(id).State != qm.IdleWarned; i++ {
			h.advance(5 * time.Minute)
		}
		r := h.say(tc.user, "/gpu status "+id.String())
		keep := actionFor(r, "Keep")
		if keep != "/gpu keep "+id.String() {
			t.Fatalf("%s: status of an idle-warned lease offers %+v; want Keep as /gpu keep %s", tc.policy, r.Actions, id)
		}
		if r := h.say(tc.user, keep); r.Error {
			t.Errorf("%s: %s", keep, r.Text)
		}
	}
}

var oneGPUs = regexp.MustCompile(`(^|[^,]) 1 (\S+ )?GPUs`)

// A count of one GPU is written "1 GPU" wherever a reply counts GPUs: a quota request, its
// approval, its release, a class's limit in /gpu catalog and /gpu policy, the team's quota.
func TestOneGPUIsWrittenInTheSingular(t *testing.T) {
	h := newHarnessOn(t, sydneyPolicy)
	const ravi, bo = "ravi@wattle.example", "bo@wattle.example"
	check := func(what, text string, want ...string) {
		t.Helper()
		// A list of counts ("1 notebook, 1 tiny GPUs") counts more than one.
		if strings.Contains(text, "GPU(s)") || oneGPUs.MatchString(text) {
			t.Errorf("%s: %q; want one GPU in the singular", what, text)
		}
		for _, w := range want {
			if !strings.Contains(text, w) {
				t.Errorf("%s: %q; want %q in it", what, text, w)
			}
		}
	}
	r := mustOK(t, h.say(ravi, "/gpu quota request +1 tiny for 2d because ci"))
	check("a quota request", r.Text, "+1 tiny GPU ")
	q := leaseIn(t, r.Text).String()
	check("the quota request's status", h.say(ravi, "/gpu status "+q).PlainText(), "+1 tiny GPU ")
	check("the approver's list", h.say("priya@wattle.example", "/gpu approvals").PlainText(), "+1 tiny GPU ")
	h.notices(ravi)
	mustOK(t, h.say("priya@wattle.example", "/gpu approve "+q))
	check("its approval", texts(h.notices(ravi)), "1 more tiny GPU ")
	check("releasing it", mustOK(t, h.say(ravi, "/gpu release "+q)).Text, "1 extra tiny GPU of team genomics is gone")
	check("/gpu catalog", h.say(ravi, "/gpu catalog").PlainText(), "up to 1 GPU ")
	check("/gpu policy", h.say(ravi, "/gpu policy").PlainText(), "up to 1 GPU ")
	check("/gpu quota", h.say(bo, "/gpu quota").PlainText(), "0 of 1 GPU in use")
	check("/gpu policy's quotas", h.say(ravi, "/gpu policy").PlainText(), "any other team: 1 notebook GPU at once")
	h = newHarnessOn(t, noRulesPolicy)
	mustOK(t, h.say("ned@tiny.example", "/gpu request 1 l4 for 1h"))
	check("going past the quota", h.say("ned@tiny.example", "/gpu request 1 l4 for 1h").Text, "1 l4 GPU at once")
}

// A duration of no time is quoted as it was typed, over however many words, not as the words
// run together.
func TestANoLengthDurationIsQuotedAsTyped(t *testing.T) {
	h := newHarnessOn(t, sydneyPolicy)
	for in, typed := range map[string]string{
		"/gpu request 1 notebook 0 hours":               "0 hours",
		"/gpu request 1 notebook for 0 hours":           "0 hours",
		"/gpu request 1 notebook 0 h":                   "0 h",
		"/gpu request 1 notebook for 0hours":            "0hours",
		"/gpu request 1 notebook 0h 0m":                 "0h 0m",
		"/gpu request 1 notebook for 0h 0m":             "0h 0m",
		"/gpu request 1 notebook for 0 hours 0 minutes": "0 hours 0 minutes",
		"/gpu request 0 hours notebook":                 "0 hours",
	} {
		r := h.say("ravi@wattle.example", in)
		if want := `"` + typed + `" is no length of time`; !r.Error || !strings.Contains(r.Text, want) {
			t.Errorf("%s: %q; want it refused with %s", in, r.Text, want)
		}
	}
	if n := h.leaseCount(); n != 0 {
		t.Errorf("the refused requests made %d lease(s)", n)
	}
}

// /gpu help writes a quota request's default length as the reply to one that leaves it out
// does.
func TestHelpWritesTheDefaultQuotaRequestLengthAsTheReplyDoes(t *testing.T) {
	h := newHarnessOn(t, sydneyPolicy)
	const ravi = "ravi@wattle.example"
	m := regexp.MustCompile(`for how long \(default (\S+)\)`).FindStringSubmatch(h.say(ravi, "/gpu help quota request").PlainText())
	if m == nil {
		t.Fatalf("/gpu help quota request names no default length")
	}
	r := mustOK(t, h.say(ravi, "/gpu quota request +1 tiny because ci"))
	if !strings.Contains(r.Text, " for "+m[1]+";") {
		t.Errorf("/gpu help quota request says the default is %s, but a quota request without one says %q", m[1], r.Text)
	}
}

// /gpu help COMMAND names the commands that begin with COMMAND's words (/gpu help quota names
// /gpu quota request), so that one is found from the other.
func TestHelpOfACommandNamesTheCommandsThatBeginWithIt(t *testing.T) {
	h := newHarnessOn(t, sydneyPolicy)
	found := 0
	for _, s := range h.bot.Offered() {
		help := h.say("ravi@wattle.example", "/gpu help "+strings.Join(s.Words, " ")).PlainText()
		for _, o := range h.bot.Offered() {
			if len(o.Words) > len(s.Words) && slices.Equal(o.Words[:len(s.Words)], s.Words) {
				found++
				if want := "/gpu help " + strings.Join(o.Words, " "); !strings.Contains(help, o.Usage) || !strings.Contains(help, want) {
					t.Errorf("/gpu help %s: %q; want it to name %s and %s", strings.Join(s.Words, " "), help, o.Usage, want)
				}
			}
		}
	}
	if found == 0 {
		t.Fatal("no command begins with another's words")
	}
}

// /gpu help with a topic that is no command suggests the nearest topic only when it is near (a
// misspelling); else it lists the topics there are. Either way its example works.
func TestAnUnknownHelpTopicSuggestsOnlyANearOne(t *testing.T) {
	h := newHarnessOn(t, sydneyPolicy)
	const ravi = "ravi@wattle.example"
	for topic, near := range map[string]string{"requst": "request", "qouta": "quota", "quota requst": "quota request", "approvls": "approvals"} {
		r := h.say(ravi, "/gpu help "+topic)
		_, ex, _ := strings.Cut(r.Text, " Example: ")
		if !r.Error || ex != "/gpu help "+near {
			t.Errorf("/gpu help %s: %q; want /gpu help %s as its example", topic, r.Text, near)
		}
	}
	for _, topic := range []string{"frob", "billing", "xyzzy plugh"} {
		r := h.say(ravi, "/gpu help "+topic)
		msg, ex, _ := strings.Cut(r.Text, " Example: ")
		if !r.Error || ex != "/gpu help" || strings.Contains(msg, ". ") {
			t.Errorf("/gpu help %s: %q; want one sentence with /gpu help as its example", topic, r.Text)
		}
		for _, s := range h.bot.Offered() {
			if w := strings.Join(s.Words, " "); !strings.Contains(msg, w) {
				t.Errorf("/gpu help %s: %q; want it to list the topic %s", topic, msg, w)
			}
		}
		if r := h.say(ravi, ex); r.Error {
			t.Errorf("%s: %q", ex, r.Text)
		}
	}
}

// Cancelling a workspace request that never started says nothing was billed, not that it used
// 0.00 GPU-hours; one that ran still says what it used.
func TestCancellingAWorkspaceThatNeverStartedSaysNothingWasBilled(t *testing.T) {
	h := newHarnessOn(t, sydneyPolicy)
	const ravi = "ravi@wattle.example"
	waits := mustOK(t, h.say(ravi, "/gpu request 2 notebook for 7h")) // past max_duration: a budget owner decides
	if !strings.Contains(waits.Text, "waits for approval") {
		t.Fatalf("/gpu request 2 notebook for 7h: %q; want it waiting for approval", waits.Text)
	}
	id := leaseIn(t, waits.Text).String()
	r := mustOK(t, h.say(ravi, "/gpu release "+id))
	if strings.Contains(r.Text, "GPU-hours") || !strings.Contains(r.Text, "nothing was billed") {
		t.Errorf("cancelling %s, which waits for approval: %q; want it to say nothing was billed", id, r.Text)
	}
	id = leaseIn(t, mustOK(t, h.say(ravi, "/gpu request 1 tiny for 1h")).Text).String()
	h.advance(30 * time.Minute)
	if r := mustOK(t, h.say(ravi, "/gpu release "+id)); !strings.Contains(r.Text, "It used 0.50 GPU-hours") {
		t.Errorf("releasing %s after 30m: %q; want it to say it used 0.50 GPU-hours", id, r.Text)
	}
}

// Extending a lease that has ended is refused with a new request as the example: for the length
// asked for (5h), not the one the approved extension made (7h, past the class's 6h), so that
// typed it starts at once.
func TestExtendingAnEndedLeaseOffersARequestWithinTheClassLimit(t *testing.T) {
	h := newHarnessOn(t, sydneyPolicy)
	const ravi = "ravi@wattle.example"
	id := leaseIn(t, mustOK(t, h.say(ravi, "/gpu request 1 notebook for 5h")).Text).String()
	r := mustOK(t, h.say(ravi, "/gpu extend "+id+" 2h"))
	ext := leaseIn(t, strings.TrimPrefix(r.Text, "Extending "+id)).String()
	mustOK(t, h.say("priya@wattle.example", "/gpu approve "+ext))
	mustOK(t, h.say(ravi, "/gpu release "+id))
	r = h.say(ravi, "/gpu extend "+id+" 1h")
	_, ex, _ := strings.Cut(r.Text, " Example: ")
	if !r.Error || ex != "/gpu request 1 notebook for 5h" {
		t.Fatalf("extending %s, released after 7h in all: %q; want /gpu request 1 notebook for 5h as the example", id, r.Text)
	}
	if r := mustOK(t, h.say(ravi, ex)); strings.Contains(r.Text, "waits for approval") {
		t.Errorf("%s: %q; want it granted at once", ex, r.Text)
	}
}
