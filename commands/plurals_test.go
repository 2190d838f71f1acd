package commands

import (
	"regexp"
	"strings"
	"testing"
)

// singularPlural matches a count of one with a plural noun ("1 requests", "1 GPUs").
var singularPlural = regexp.MustCompile(`\b1 (requests|human decisions|leases|GPUs|[a-z-]+ GPUs)\b`)

// /gpu approvals writes each count with the noun that fits it, one request or several, on any
// policy: "1 request waits for your decision. This week in team genomics: 0 human decisions on 1
// request.", then
// "2 requests wait", never "request(s)".
func TestApprovalsCountsAgreeWithTheirNouns(t *testing.T) {
	for _, c := range []struct{ file, user, owner, ask string }{
		{"testdata/sydney.yaml", "ravi@wattle.example", "priya@wattle.example", "/gpu request 3 notebook for 1h"},
		{"testdata/orbit.yaml", "kim@orbit.example", "ria@orbit.example", "/gpu request 3 duo for 1h"},
	} {
		h := newHarnessOn(t, c.file)
		if r := h.say(c.user, c.ask); !strings.Contains(r.Text, "waits for approval") {
			t.Fatalf("%s: %s: %s", c.file, c.ask, r.Text)
		}
		one := h.say(c.owner, "/gpu approvals").Text
		h.say(c.user, strings.Replace(c.ask, "for 1h", "for 2h", 1)) // another request: the same one asked again is not
		two := h.say(c.owner, "/gpu approvals").Text
		for _, s := range []string{one, two} {
			if strings.Contains(s, "(s)") || singularPlural.MatchString(s) {
				t.Errorf("%s: /gpu approvals says %q", c.file, s)
			}
		}
		if !regexp.MustCompile(`^1 request waits for your decision\. This week in (team [a-z-]+|all teams): 0 human decisions on 1 request,`).MatchString(one) {
			t.Errorf("%s: one request waiting: %q", c.file, one)
		}
		if !regexp.MustCompile(`^2 requests wait for your decision\. This week in (team [a-z-]+|all teams): 0 human decisions on 2 requests,`).MatchString(two) {
			t.Errorf("%s: two requests waiting: %q", c.file, two)
		}
	}
}
