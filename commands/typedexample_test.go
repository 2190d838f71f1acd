package commands

import (
	"strings"
	"testing"
)

// A refused request's example keeps what the user typed that was fine (the class, the GPUs when
// the class allows them, the team, the data class, exclusive) and changes only what was wrong: a
// duration too long becomes the class's max_duration, a count the cluster cannot grant the most
// it can, a bad data class the team's first. Typed back, the example is accepted.
func TestARefusedRequestsExampleKeepsWhatWasTyped(t *testing.T) {
	h := templatesOn(t, policyVariant(t, otherPolicy, "data_classes: [open]", "data_classes: [lab, open]"))
	const rita = "rita@borealis.example" // robotics: first class with GPUs is dev (6h at most); bigiron is 48h at most, 4 GPUs
	for ask, want := range map[string]string{
		"/gpu request 1 bigiron for 31d":                                "/gpu request 1 bigiron for 2d",
		"/gpu request 3 bigiron for 31d data open exclusive":            "/gpu request 3 bigiron for 2d data open exclusive",
		"/gpu request 2 bigiron 31d team robotics":                      "/gpu request 2 bigiron for 2d team robotics",
		"/gpu request 2 bigiron for soon":                               "/gpu request 2 bigiron for 4h",
		`/gpu request 2 bigiron for 8h data "a b"`:                      "/gpu request 2 bigiron for 8h data lab",
		"/gpu request 99 bigiron for 8h":                                "/gpu request 4 bigiron for 8h",
		"/gpu request 0 bigiron for 8h":                                 "/gpu request 1 bigiron for 8h",
		"/gpu request 2 bigiron for 8h team speech":                     "/gpu request 2 bigiron for 8h",
		"/gpu request 1 bigiron for 8h bogus":                           "/gpu request 1 bigiron for 8h",
		"/gpu estimate 2 bigiron 31d":                                   "/gpu estimate 2 bigiron 2d",
		"/gpu estimate 99 bigiron 8h exclusive":                         "/gpu estimate 4 bigiron 8h exclusive",
		"/gpu quota request +2 bigiron for 8h team nope because a demo": "/gpu quota request +2 bigiron for 8h because a demo",
	} {
		r := h.say(rita, ask)
		if !r.Error {
			t.Errorf("%s was not refused: %s", ask, r.Text)
			continue
		}
		got := exampleIn(t, r)
		if got != want {
			t.Errorf("%s:\n got example %q (%s)\nwant %q", ask, got, r.Text, want)
			continue
		}
		again := h.say(rita, got)
		if again.Error {
			t.Errorf("the example of %s, %s, is refused: %s", ask, got, again.Text)
		}
		if strings.Contains(again.Text, "L-") { // leave the cluster and the quota free for the next
			h.say(rita, "/gpu release "+leaseIn(t, again.Text).String())
		}
	}
	// Someone of another team: the class typed stays, not the team's own first class.
	if got := exampleIn(t, h.say("sam@borealis.example", "/gpu request 1 bigiron for 40d")); !strings.HasPrefix(got, "/gpu request 1 bigiron for 2d") {
		t.Errorf("sam's example %q, want it on bigiron for 2d", got)
	}
}

// A refused template request or job keeps, in its example, the class, GPUs, team, length and data
// class typed, the length within the class's max_duration: not the most GPUs the class holds
// nor the template's own example.
func TestARefusedTemplateRequestsExampleKeepsWhatWasTyped(t *testing.T) {
	h := templatesOn(t, policyVariant(t, otherPolicy, "data_classes: [open]", "data_classes: [lab, open]"))
	const rita = "rita@borealis.example"
	for ask, want := range map[string]string{
		"/gpu request 1 bigiron for 31d template jupyterlab data open": "/gpu request 1 bigiron for 2d template jupyterlab data open",
		"/gpu submit cuda-smoke class=bigiron gpus=2 for=31d":          "/gpu submit cuda-smoke class=bigiron gpus=2 for=2d",
		"/gpu submit cuda-smoke gpus=2 team=speech for=8h data lab":    "/gpu submit cuda-smoke gpus=2 for=8h data lab",
		"/gpu submit cuda-smoke class=bigiron for=31d":                 "/gpu submit cuda-smoke class=bigiron for=2d",
	} {
		r := h.say(rita, ask)
		if !r.Error {
			t.Errorf("%s was not refused: %s", ask, r.Text)
			continue
		}
		got := exampleIn(t, r)
		if got != want {
			t.Errorf("%s:\n got example %q (%s)\nwant %q", ask, got, r.Text, want)
			continue
		}
		again := h.say(rita, got)
		if again.Error {
			t.Errorf("the example of %s, %s, is refused: %s", ask, got, again.Text)
		}
		if strings.Contains(again.Text, "L-") {
			h.say(rita, "/gpu release "+leaseIn(t, again.Text).String())
		}
	}
}
