package commands

import (
	"strings"
	"testing"
)

// A misspelled command is refused with the command meant and its help as the example, which
// works; a word near no command is refused as before.
func TestAMisspelledCommandNamesTheCommandMeant(t *testing.T) {
	h := newHarnessOn(t, kolkataPolicy)
	for line, want := range map[string]string{
		"/gpu requst 1 nb-t4 2h":  `"requst" is not a /gpu command; the nearest is /gpu request.`,
		"/gpu relase L-1":         `"relase" is not a /gpu command; the nearest is /gpu release.`,
		"/gpu estmate 1 nb-t4 2h": `"estmate" is not a /gpu command; the nearest is /gpu estimate.`,
		"/gpu Catalgo":            `"Catalgo" is not a /gpu command; the nearest is /gpu catalog.`,
		"/gpu lst":                `"lst" is not a /gpu command; the nearest is /gpu list.`,
		"/gpu frobnicate 2 nb-t4": `"frobnicate" is not a /gpu command; /gpu help lists them`,
		"/gpu done L-1":           `"done" is not a /gpu command; /gpu help lists them`,
	} {
		refusedWithAWorkingExample(t, h, "ayu@kestrel.example", line, want)
	}
	if ex := exampleIn(t, h.say("ayu@kestrel.example", "/gpu requst 1 nb-t4 2h")); ex != "/gpu help request" {
		t.Errorf("example %q, want /gpu help request", ex)
	}
	r := h.say("ayu@kestrel.example", "/gpu help request")
	all := r.Text
	for _, s := range r.Sections {
		all += " " + s.Text
	}
	if r.Error || !strings.Contains(all, "/gpu request 1 nb-t4") {
		t.Errorf("the help it points to: %q", all)
	}
}

// Someone the directory does not know is refused with an example they can run: not the command
// they typed, which is refused again, but help.
func TestSomeoneNotInTheDirectoryGetsAnExampleThatWorksForThem(t *testing.T) {
	h := newHarnessOn(t, kolkataPolicy)
	for _, line := range []string{"/gpu request 1 nb-t4 2h", "/gpu quota", "/gpu list", "/gpu estimate 1 nb-t4 1h", "/gpu catalog"} {
		refusedWithAWorkingExample(t, h, "nobody@kestrel.example", line, "nobody@kestrel.example is not in the directory")
	}
}
