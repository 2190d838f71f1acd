package commands

import (
	"regexp"
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/qm"
)

// /gpu policy writes each team's GPUs at once so that every count agrees with its noun, whatever
// the counts: "robotics: 1 notebook GPU and 1 tiny GPU at once", "4 dev GPUs and 8 big GPUs at
// once", never "1 notebook, 1 tiny GPUs".
func TestPolicyQuotaCountsAgreeWithTheirNouns(t *testing.T) {
	for _, file := range []string{"testdata/sydney.yaml", "testdata/orbit.yaml", "../docs/quartermaster.example.yaml"} {
		h := newHarnessOn(t, file)
		p := h.svc.Policy
		who := p.Directory[0].User
		text := mustOK(t, h.say(who, "/gpu policy")).PlainText()
		for _, tm := range p.Teams {
			q := p.QuotaFor(tm.Name)
			line := ""
			for _, l := range strings.Split(text, "\n") {
				if strings.HasPrefix(l, tm.Name+": ") || strings.Contains(l, "Quotas — "+tm.Name+": ") {
					line = l[strings.Index(l, tm.Name+": "):]
				}
			}
			if line == "" {
				t.Fatalf("%s: /gpu policy has no line for team %s:\n%s", file, tm.Name, text)
			}
			for _, c := range p.Classes {
				if n := q.GPUs[c.Name]; n > 0 && !regexp.MustCompile(`(: |, | and )`+regexp.QuoteMeta(qm.GPUCount(n, c.Name))+`\b`).MatchString(line) {
					t.Errorf("%s: the line of team %s does not say %q: %s", file, tm.Name, qm.GPUCount(n, c.Name), line)
				}
			}
			if m := regexp.MustCompile(`\b1 [a-z0-9-]+ GPUs\b|\b\d+ [a-z0-9-]+, `).FindString(line); m != "" {
				t.Errorf("%s: the line of team %s says %q: %s", file, tm.Name, m, line)
			}
		}
	}
}

// A request that names no class and finds no room in any class of the team's quota is refused
// with what the team holds of each, every count with its own noun: "it holds 1 of 1 a100-80gb GPU
// and 1 of 1 l4 GPU at once", not "1 of 1 a100-80gb, 1 of 1 l4 GPUs".
func TestNoRoomCountsAgreeWithTheirNouns(t *testing.T) {
	h := newHarnessOn(t, "testdata/norules.yaml")
	for range 2 {
		mustOK(t, h.say("ned@tiny.example", "/gpu request 1 for 1h"))
	}
	r := h.say("ned@tiny.example", "/gpu request 1 for 1h")
	if !r.Error || !strings.Contains(r.Text, "it holds 1 of 1 a100-80gb GPU and 1 of 1 l4 GPU at once") {
		t.Errorf("a request with no room says %q, want it holds 1 of 1 a100-80gb GPU and 1 of 1 l4 GPU at once", r.Text)
	}
}
