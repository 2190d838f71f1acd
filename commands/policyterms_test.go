package commands

import (
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot"
)

// noRulesPolicy has no exception rules: what goes past a quota is refused, not sent to a budget
// owner (testdata/norules.yaml).
const noRulesPolicy = "testdata/norules.yaml"

// exampleIn is the example a refusal shows after "Example: ".
func exampleIn(t *testing.T, r bot.Reply) string {
	t.Helper()
	_, ex, ok := strings.Cut(r.Text, " Example: ")
	if !r.Error || !ok {
		t.Fatalf("want a refusal with an example, got %q", r.Text)
	}
	return ex
}

// A refusal for want of quota shows, as its example, the quota request that would let it through,
// and that request is accepted.
func TestAQuotaRefusalShowsTheQuotaRequestThatHelps(t *testing.T) {
	for _, tc := range []struct {
		name, user, fill, ask, want string
	}{
		{"no GPUs of the class", "ned@tiny.example", "", "/gpu request 1 h100_sxm for 1h", "/gpu quota request +1 h100_sxm because "},
		{"all GPUs of the class held", "amy@tiny.example", "/gpu request 2 a100-80gb for 30m", "/gpu request 1 a100-80gb for 30m", "/gpu quota request +1 a100-80gb because "},
		{"a batch job", "amy@tiny.example", "/gpu request 4 l4 for 2h", "/gpu submit cuda-smoke class=l4", "/gpu quota request +1 l4 because "},
		// The week's GPU-hours used up: no shorter request fits them.
		{"the week's GPU-hours", "ned@tiny.example", "/gpu request 1 l4 for 10h", "/gpu request 1 a100-80gb for 30m", "/gpu quota request +1 a100-80gb because "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := templatesOn(t, noRulesPolicy)
			if tc.fill != "" {
				mustOK(t, h.say(tc.user, tc.fill))
			}
			ex := exampleIn(t, h.say(tc.user, tc.ask))
			if !strings.HasPrefix(ex, tc.want) {
				t.Fatalf("%s: the refusal's example is %q, want one starting %q", tc.ask, ex, tc.want)
			}
			if r := h.say(tc.user, ex); r.Error || !strings.Contains(r.Text, "will decide") {
				t.Errorf("the example %q as given: %s", ex, r.Text)
			}
		})
	}
}

// /gpu policy on a policy without exception rules says there are none, rather than showing an
// empty list of them.
func TestPolicyWithoutExceptionRulesSaysSo(t *testing.T) {
	h := newHarnessOn(t, noRulesPolicy)
	r := mustOK(t, h.say("amy@tiny.example", "/gpu policy"))
	for _, s := range r.Sections {
		if strings.HasPrefix(s.Title, "Exceptions") {
			if !strings.HasPrefix(s.Text, "none") {
				t.Errorf("the %q section of /gpu policy without exception rules is %q, want it to say there are none", s.Title, s.Text)
			}
			return
		}
	}
	t.Errorf("/gpu policy has no Exceptions section:\n%s", r.PlainText())
}

// A duration written in several words, as people type it and as an adapter with typed options
// passes a value with a space in it, reads as one duration wherever a command takes one.
func TestADurationInSeveralWordsIsOneDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"/gpu request 1 l4 for 1h 30m":                 90 * time.Minute,
		"/gpu request 1 l4 for 4 h":                    4 * time.Hour,
		"/gpu request 1 l4 for 2 hours":                2 * time.Hour,
		"/gpu request 1 l4 1h 30m":                     90 * time.Minute,
		"/gpu request 1 l4 for 1h 30m team x":          90 * time.Minute,
		"/gpu estimate 1 l4 1h 30m":                    90 * time.Minute,
		"/gpu estimate 1 l4 for 4 h":                   4 * time.Hour,
		"/gpu extend L-1 1h 30m":                       90 * time.Minute,
		"/gpu extend L-1 by 2 hours":                   2 * time.Hour,
		"/gpu quota request +1 l4 for 1w 3d because x": 10 * 24 * time.Hour,
	} {
		c, err := Parse(in)
		if err != nil {
			t.Errorf("%q is refused: %v", in, err)
			continue
		}
		if c.Duration != want {
			t.Errorf("%q reads as %s, want %s", in, c.Duration, want)
		}
	}
	// Two durations are still two.
	for _, in := range []string{"/gpu request 1 l4 2h 3h", "/gpu request 1 l4 for 30m 2h", "/gpu estimate 1 l4 2h 3h", "/gpu estimate 1 l4 4h soon", "/gpu extend L-1 2h 3h", "/gpu quota request +1 l4 for 1w 1w because x",
		// A bare number and a duration are not one number: "2 4h" is not 24h.
		"/gpu request 1 l4 for 2 4h", "/gpu extend L-1 1 2h", "/gpu estimate 1 l4 3 30m"} {
		if c, err := Parse(in); err == nil {
			t.Errorf("%q = %+v, want it refused", in, c)
		}
	}
	// What follows the duration is still read as itself.
	if c, err := Parse("/gpu request for 2h 2 l4"); err != nil || c.GPUs != 2 || c.Class != "l4" || c.Duration != 2*time.Hour {
		t.Errorf("/gpu request for 2h 2 l4 = %+v, %v", c, err)
	}
	if c, err := Parse("/gpu request for 1h 30m l4 team x"); err != nil || c.Class != "l4" || c.Team != "x" || c.Duration != 90*time.Minute {
		t.Errorf("/gpu request for 1h 30m l4 team x = %+v, %v", c, err)
	}
	s, _ := Lookup("estimate")
	if c, err := Parse(s.Text(map[string]string{"gpus": "1", "class": "l4", "duration": "1h 30m"})); err != nil || c.Duration != 90*time.Minute {
		t.Errorf("estimate with a typed duration of 1h 30m = %+v, %v", c, err)
	}
}

// Someone whose groups make no team is told so in every command that needs one, with an example
// they can run, and not an empty list of their teams or the refused command again.
func TestSomeoneWithoutATeamIsToldSoWithAnExampleThatWorks(t *testing.T) {
	h := templatesOn(t, policyVariant(t, noRulesPolicy, "  - {user: ned@tiny.example, groups: [newbies]}",
		"  - {user: ned@tiny.example, groups: [newbies]}\n  - {user: eve@tiny.example, groups: [\"Équipe Vision\"]}"))
	for _, ask := range []string{"/gpu request 1 l4 for 1h", "/gpu request 1 l4 for 1h team nlp-core", "/gpu request 1 l4 for 1h team nope",
		"/gpu submit cuda-smoke", "/gpu quota request +1 l4 because a deadline"} {
		r := h.say("eve@tiny.example", ask)
		if !r.Error || !strings.Contains(r.Text, "belongs to no team") || strings.Contains(r.Text, "teams: .") {
			t.Errorf("%s: %q, want a refusal that says eve belongs to no team", ask, r.Text)
		}
		ex := exampleIn(t, r)
		if ex == ask {
			t.Errorf("%s: the example is the refused command", ask)
		} else if r := h.say("eve@tiny.example", ex); r.Error {
			t.Errorf("%s: the example %q is refused too: %s", ask, ex, r.Text)
		}
	}
}

// /gpu help explains a command however it is named: with /gpu before it, in upper case.
func TestHelpForACommandWrittenWithGPU(t *testing.T) {
	h := newHarnessOn(t, noRulesPolicy)
	for _, in := range []string{"/gpu help /gpu extend", "/gpu help gpu extend", "/gpu help EXTEND", "/gpu help /GPU Extend"} {
		if r := h.say("amy@tiny.example", in); r.Error || !strings.HasPrefix(r.Text, "`/gpu extend LEASE DURATION`") {
			t.Errorf("%s: %s", in, r.Text)
		}
	}
}
