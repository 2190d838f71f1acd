package commands

import (
	"strings"
	"testing"
)

// A quote that is not closed around a name (a class, a team, a lease id) is refused as such: the
// refusal names the word as typed, without the quote doubled up around it, says the quote is
// not closed, and its example, typed back, is accepted.
func TestAQuoteNotClosedIsRefusedAsSuch(t *testing.T) {
	for _, tc := range []struct {
		policy, user, fill, ask, word string
	}{
		{"../docs/quartermaster.example.yaml", "alice@acme.example", "", `/gpu request 1 "interactive 2h`, "interactive"},
		{"../docs/quartermaster.example.yaml", "alice@acme.example", "", `/gpu request 1 “interactive 2h`, "interactive"},
		{"../docs/quartermaster.example.yaml", "alice@acme.example", "", `/gpu request 1 interactive 2h team 'vision`, "vision"},
		{noRulesPolicy, "amy@tiny.example", "", `/gpu request 1 'l4 for 30m`, "l4"},
		{noRulesPolicy, "amy@tiny.example", "", `/gpu estimate 2 "a100-80gb 1h`, "a100-80gb"},
		{noRulesPolicy, "amy@tiny.example", "/gpu request 1 l4 for 30m", `/gpu extend "L-1 1h`, "L-1"},
		{noRulesPolicy, "amy@tiny.example", "/gpu request 1 l4 for 30m", `/gpu release 'L-1`, "L-1"},
	} {
		t.Run(tc.ask, func(t *testing.T) {
			h := templatesOn(t, tc.policy)
			if tc.fill != "" {
				mustOK(t, h.say(tc.user, tc.fill))
			}
			r := h.say(tc.user, tc.ask)
			ex := exampleIn(t, r)
			if !strings.Contains(r.Text, "not closed") || !strings.Contains(r.Text, " "+tc.word+" ") {
				t.Errorf("%s: %q, want it to say the quote before %s is not closed", tc.ask, r.Text, tc.word)
			}
			for _, odd := range []string{`""`, `"'`, `'"`} {
				if strings.Contains(r.Text, odd) {
					t.Errorf("%s: %q quotes the word oddly (%s)", tc.ask, r.Text, odd)
				}
			}
			if got := h.say(tc.user, ex); got.Error {
				t.Errorf("%s: the example %q is refused: %q", tc.ask, ex, got.Text)
			}
		})
	}
}

// A free-text template parameter is text, as a reason is: a quote in it that is not paired
// ('tis, 6") is part of the value, not a quote left open.
func TestAFreeTextParameterKeepsAQuoteNotPaired(t *testing.T) {
	h := heronOn(t)
	const una = "una@heron.example"
	for _, value := range []string{`'tis`, `6"`} {
		r := h.say(una, `/gpu submit note-job gpus=3 msg=`+value)
		if r.Error {
			t.Fatalf("msg=%s: %s", value, r.Text)
		}
		if l := h.lease(leaseIn(t, r.Text)); l.Params["msg"] != value {
			t.Errorf("msg was kept as %q; want %q", l.Params["msg"], value)
		}
	}
}
